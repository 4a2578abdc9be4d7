//! Without a GPU: every shader parses and validates with naga, each entry point carries its
//! stage's name, and each uniform struct's size and member offsets in WGSL match the
//! `#[repr(C)]` Rust type that fills it; the shaders' pipe steps are the CPU's.

use erode::gpu::FieldSplit;
use erode::models::droplet::gpu::{
    APPLY_DELTAS_WGSL, ApplyUniforms, LIFE_WGSL, LifeUniforms, SMOOTH_CHANGE_WGSL, SmoothUniforms,
};
use erode::models::grid::gpu::{
    DepthUniforms, FLUSH_BOOKS_WGSL, FlushUniforms, FluxUniforms, IncrementUniforms, MAX_DEPTH_WGSL,
    SCALE_BY_DONOR_WGSL, SEDIMENT_TRANSPORT_WGSL, StepUniforms, THERMAL_APPLY_WGSL, THERMAL_FLUX_WGSL, TIME_STEP_WGSL,
    ThermalUniforms, TransportUniforms, UPDATE_AND_ERODE_WGSL, UpdateUniforms, WATER_FLUX_WGSL, WATER_INCREMENT_WGSL,
};

fn module(name: &str, source: &str) -> naga::Module {
    let module =
        naga::front::wgsl::parse_str(source).unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: {e:?}"));
    assert!(module.entry_points.iter().any(|e| e.name == name), "{name}: no entry point of that name");
    module
}

/// A grid stage's module with its field groups in one binding each; split one field a binding
/// (as on a 16384² grid), the shader must validate too.
fn grid_module(name: &str, template: &str) -> naga::Module {
    let split = module(
        name,
        &erode::models::grid::gpu::shader(template, &FieldSplit { cells: 4096, fields_per_buffer: 1 }, 8).unwrap(),
    );
    let one = module(
        name,
        &erode::models::grid::gpu::shader(template, &FieldSplit { cells: 4096, fields_per_buffer: 9 }, 8).unwrap(),
    );
    assert!(split.global_variables.len() >= one.global_variables.len(), "{name}");
    one
}

/// (size, [(member, offset)]) of the WGSL struct `name`.
fn layout(module: &naga::Module, name: &str) -> (u32, Vec<(String, u32)>) {
    for (_, ty) in module.types.iter() {
        if ty.name.as_deref() == Some(name)
            && let naga::TypeInner::Struct { members, span } = &ty.inner
        {
            return (*span, members.iter().map(|m| (m.name.clone().unwrap_or_default(), m.offset)).collect());
        }
    }
    panic!("no struct {name}");
}

/// Checks that the WGSL struct `$wgsl` in `$module` has the size of `$ty` and each listed
/// field at the Rust offset.
macro_rules! same_layout {
    ($module:expr, $ty:ident, [$($field:ident),*]) => {{
        let (size, members) = layout(&$module, stringify!($ty));
        assert_eq!(size as usize, std::mem::size_of::<$ty>(), "{} size", stringify!($ty));
        $(
            let name = stringify!($field);
            let wgsl = members.iter().find(|(m, _)| m == name).unwrap_or_else(|| panic!("WGSL lacks {name}")).1;
            assert_eq!(wgsl as usize, std::mem::offset_of!($ty, $field), "{}.{name}", stringify!($ty));
        )*
    }};
}

#[test]
fn shaders_validate_and_uniforms_match_the_rust_types() {
    let increment = grid_module("water_increment", WATER_INCREMENT_WGSL);
    same_layout!(increment, IncrementUniforms, [width, height, has_map, has_sources, rain, dt, zero]);
    let flux = grid_module("water_flux", WATER_FLUX_WGSL);
    same_layout!(
        flux,
        FluxUniforms,
        [
            width,
            height,
            pipes,
            border,
            depth_scaled,
            signed,
            gain,
            pipe_width,
            friction,
            volume_per_dt,
            dt,
            area,
            depth_cap
        ]
    );
    let update = grid_module("update_and_erode", UPDATE_AND_ERODE_WGSL);
    same_layout!(
        update,
        UpdateUniforms,
        [
            width,
            height,
            pipes,
            border,
            capacity_model,
            signed,
            unit_x,
            unit_y,
            dt,
            inv_area,
            inv_lx,
            inv_ly,
            velocity_epsilon,
            inv2x,
            inv2y,
            evaporate,
            dissolve,
            deposit,
            softening,
            capacity,
            min_tilt,
            per_max_depth,
            erodibility_loss,
            floor_height,
            cf_over_g,
            critical_shear,
            water_per_soil,
            bed_step,
            bed_unlimited,
            depth_cap,
            zero
        ]
    );
    let thermal_flux = grid_module("thermal_flux", THERMAL_FLUX_WGSL);
    same_layout!(
        thermal_flux,
        ThermalUniforms,
        [width, height, border, distance, rate, talus_scale, talus_bias, erodibility_loss]
    );
    let thermal_apply = grid_module("thermal_apply", THERMAL_APPLY_WGSL);
    same_layout!(
        thermal_apply,
        ThermalUniforms,
        [width, height, border, distance, rate, talus_scale, talus_bias, erodibility_loss]
    );
    let transport = grid_module("sediment_transport", SEDIMENT_TRANSPORT_WGSL);
    same_layout!(transport, TransportUniforms, [width, height, pipes, border]);
    let scale = grid_module("scale_by_donor", SCALE_BY_DONOR_WGSL);
    same_layout!(
        scale,
        FluxUniforms,
        [
            width,
            height,
            pipes,
            border,
            depth_scaled,
            signed,
            gain,
            pipe_width,
            friction,
            volume_per_dt,
            dt,
            area,
            depth_cap
        ]
    );
    let life = module("life", LIFE_WGSL);
    same_layout!(
        life,
        LifeUniforms,
        [
            width,
            height,
            border,
            first,
            count,
            seed_lo,
            seed_hi,
            max_lifetime,
            has_hardness,
            has_spawn,
            events,
            inertia,
            capacity,
            min_drop,
            deposition,
            erosion,
            gravity,
            evaporation,
            radius,
            speed_kept,
            initial_speed,
            floor,
            quantum,
            visit_area,
            discharge_exponent
        ]
    );
    let apply = module("apply_deltas", APPLY_DELTAS_WGSL);
    same_layout!(apply, ApplyUniforms, [cells, quantum]);
    let smooth = module("smooth_change", SMOOTH_CHANGE_WGSL);
    same_layout!(smooth, SmoothUniforms, [width, height, wrap, share, quantum]);
    let depth = grid_module("max_depth", MAX_DEPTH_WGSL);
    same_layout!(depth, DepthUniforms, [cells]);
    let step = module("time_step", TIME_STEP_WGSL);
    let flush = grid_module("flush_books", FLUSH_BOOKS_WGSL);
    same_layout!(flush, FlushUniforms, [cells, totals, zero]);
    same_layout!(step, StepUniforms, [lowest, highest, shift, row, increment, flux, update, thermal]);
}

/// The integers of the WGSL constant `name`, an `array<i32, 8>(...)`, in `source`.
fn wgsl_array(source: &str, name: &str) -> Vec<isize> {
    let start = source.find(&format!("const {name} = array<i32, 8>(")).unwrap_or_else(|| panic!("no const {name}"));
    let rest = &source[start..];
    let (open, close) = (rest.find('(').unwrap(), rest.find(')').unwrap());
    rest[open + 1..close].split(',').map(|v| v.trim().parse().unwrap()).collect()
}

#[test]
fn the_shaders_pipes_step_as_the_cpus() {
    use erode::models::grid::topology::DIRS;
    let (dr, dc) = (wgsl_array(UPDATE_AND_ERODE_WGSL, "DR"), wgsl_array(UPDATE_AND_ERODE_WGSL, "DC"));
    let wgsl: Vec<(isize, isize)> = dr.into_iter().zip(dc).collect();
    assert_eq!(wgsl, DIRS.to_vec());
}
