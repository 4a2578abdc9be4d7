//! Without a GPU: every shader parses and validates with naga, and each uniform struct's size
//! and member offsets in WGSL match the `#[repr(C)]` Rust type that fills it.

use erode::models::grid::gpu::{FluxUniforms, IncrementUniforms, WATER_FLUX_WGSL, WATER_INCREMENT_WGSL};

fn module(name: &str, source: &str) -> naga::Module {
    let module =
        naga::front::wgsl::parse_str(source).unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{name}: {e:?}"));
    module
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

#[test]
fn shaders_validate_and_uniforms_match_the_rust_types() {
    let flux = module("water_flux", WATER_FLUX_WGSL);
    let (size, members) = layout(&flux, "FluxUniforms");
    assert_eq!(size as usize, std::mem::size_of::<FluxUniforms>());
    let offsets = [
        ("width", std::mem::offset_of!(FluxUniforms, width)),
        ("height", std::mem::offset_of!(FluxUniforms, height)),
        ("pipes", std::mem::offset_of!(FluxUniforms, pipes)),
        ("border", std::mem::offset_of!(FluxUniforms, border)),
        ("depth_scaled", std::mem::offset_of!(FluxUniforms, depth_scaled)),
        ("gain", std::mem::offset_of!(FluxUniforms, gain)),
        ("pipe_width", std::mem::offset_of!(FluxUniforms, pipe_width)),
        ("friction", std::mem::offset_of!(FluxUniforms, friction)),
        ("volume_per_dt", std::mem::offset_of!(FluxUniforms, volume_per_dt)),
        ("dt", std::mem::offset_of!(FluxUniforms, dt)),
        ("area", std::mem::offset_of!(FluxUniforms, area)),
    ];
    for (name, offset) in offsets {
        let wgsl = members.iter().find(|(m, _)| m == name).unwrap_or_else(|| panic!("WGSL lacks {name}")).1;
        assert_eq!(wgsl as usize, offset, "FluxUniforms.{name}");
    }

    let increment = module("water_increment", WATER_INCREMENT_WGSL);
    let (size, members) = layout(&increment, "IncrementUniforms");
    assert_eq!(size as usize, std::mem::size_of::<IncrementUniforms>());
    let offsets = [
        ("width", std::mem::offset_of!(IncrementUniforms, width)),
        ("height", std::mem::offset_of!(IncrementUniforms, height)),
        ("has_map", std::mem::offset_of!(IncrementUniforms, has_map)),
        ("has_sources", std::mem::offset_of!(IncrementUniforms, has_sources)),
        ("rain", std::mem::offset_of!(IncrementUniforms, rain)),
        ("dt", std::mem::offset_of!(IncrementUniforms, dt)),
    ];
    for (name, offset) in offsets {
        let wgsl = members.iter().find(|(m, _)| m == name).unwrap_or_else(|| panic!("WGSL lacks {name}")).1;
        assert_eq!(wgsl as usize, offset, "IncrementUniforms.{name}");
    }
    // each shader's entry point carries its stage's name
    assert!(flux.entry_points.iter().any(|e| e.name == "water_flux"));
    assert!(increment.entry_points.iter().any(|e| e.name == "water_increment"));
}
