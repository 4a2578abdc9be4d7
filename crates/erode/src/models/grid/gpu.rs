//! The grid model on the GPU (feature `gpu`): WGSL compute shaders, one file per stage
//! (`shaders/<stage>.wgsl`), each with its CPU twin's name for file, entry point and pipeline
//! label; stages that read neighbours get `shaders/topology.wgsl` prepended (and the thermal
//! ones `thermal_common.wgsl`), so border rules live in one place. The per-cell field groups
//! (pipe fluxes, velocities, ground, books) are declared by `#fields` lines that
//! [`FieldSplit`] fills for the device at hand ([`shader`]): one binding each while a group fits
//! the device's largest binding, whole fields per binding beyond (8192² and 16384² grids).
//! Parameters reach a shader one way: `Params::derived()` -> a `#[repr(C)]` uniform
//! struct here -> the WGSL struct of the same name (`tests/gpu_layout.rs` checks that sizes and
//! offsets agree).
//!
//! Ported: `water_increment` (uniform rain, rain map, sources; not buckets), `water_flux`
//! (one-way pipes or the signed form with `scale_by_donor`, 4 or 8, both cross-sections, every
//! border), `thermal_flux`,
//! `update_and_erode` (water_update + erosion_deposition + evaporation, both capacities,
//! hardness and softening), `sediment_transport` (conservative) and `thermal_apply`. The
//! books are kept per cell in f32 and summed in f64 on read-back ([`Book`]). The depth
//! cross-section re-derives its time step every iteration from the deepest water, reduced on
//! the GPU (`max_depth`: 4 bytes come back, which still waits for the GPU once an iteration).
//! Not yet: semi-Lagrangian transport, buckets, smoothing. Asking for what
//! is not ported is a typed error, never a silent CPU fallback.

use std::sync::Arc;

use super::Stage;
use super::cpu::source_rates;
use super::derived::Derived;
use super::fused::UpdateErodeConsts;
use super::params::{Border, CapacityModel, FluxForm, Params, RainMode, Transport};
use super::state::{Books, State};
use super::thermal::ThermalConsts;
use super::water::Increment;
use crate::error::SimError;
use crate::gpu::{FieldSplit, GpuContext, GpuError, Kernel, kernel_with_groups};

/// `max_depth`'s shader (the depth cross-section's time step).
pub const MAX_DEPTH_WGSL: &str = include_str!("shaders/max_depth.wgsl");
/// `update_and_erode`'s shader.
pub const UPDATE_AND_ERODE_WGSL: &str =
    concat!(include_str!("shaders/topology.wgsl"), include_str!("shaders/update_and_erode.wgsl"));
/// `thermal_flux`'s shader.
pub const THERMAL_FLUX_WGSL: &str = concat!(
    include_str!("shaders/topology.wgsl"),
    include_str!("shaders/thermal_common.wgsl"),
    include_str!("shaders/thermal_flux.wgsl")
);
/// `thermal_apply`'s shader.
pub const THERMAL_APPLY_WGSL: &str = concat!(
    include_str!("shaders/topology.wgsl"),
    include_str!("shaders/thermal_common.wgsl"),
    include_str!("shaders/thermal_apply.wgsl")
);
/// `sediment_transport`'s shader.
pub const SEDIMENT_TRANSPORT_WGSL: &str =
    concat!(include_str!("shaders/topology.wgsl"), include_str!("shaders/sediment_transport.wgsl"));
/// `water_increment`'s shader.
pub const WATER_INCREMENT_WGSL: &str = include_str!("shaders/water_increment.wgsl");
/// `water_flux`'s shader.
pub const WATER_FLUX_WGSL: &str = concat!(
    include_str!("shaders/topology.wgsl"),
    include_str!("shaders/flux_uniforms.wgsl"),
    include_str!("shaders/water_flux.wgsl")
);
/// `scale_by_donor`'s shader (the signed form's second half of `water_flux`).
pub const SCALE_BY_DONOR_WGSL: &str = concat!(
    include_str!("shaders/topology.wgsl"),
    include_str!("shaders/flux_uniforms.wgsl"),
    include_str!("shaders/scale_by_donor.wgsl")
);

/// A stage's shader for `split`, with `pipes` flux fields: the templates above with their
/// `#fields` groups (flux, velocity, ground, books) declared.
pub fn shader(template: &str, split: &FieldSplit, pipes: usize) -> Result<String, GpuError> {
    split.expand(template, &[("flux", pipes), ("velocity", 3), ("ground", 2), ("books", BOOKS)])
}

/// `water_flux`'s parameters (WGSL `FluxUniforms`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct FluxUniforms {
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Pipes per cell, 4 or 8.
    pub pipes: u32,
    /// 0 closed, 1 open, 2 wrap.
    pub border: u32,
    /// 1 when the pipe's gain scales with the flow depth.
    pub depth_scaled: u32,
    /// 1 for the signed net-flux form.
    pub signed: u32,
    /// Padding to the next 16 bytes.
    pub pad: [u32; 2],
    /// Pipe gain `g·A/l` per direction (per metre of flow depth when depth-scaled), m²/s.
    pub gain: [[f32; 4]; 2],
    /// Pipe width per direction (friction), m.
    pub pipe_width: [[f32; 4]; 2],
    /// Friction coefficient.
    pub friction: f32,
    /// Cell area / Δt, m²/s.
    pub volume_per_dt: f32,
    /// Sub-step, s.
    pub dt: f32,
    /// Cell area, m².
    pub area: f32,
    /// Largest flow depth a pipe counts, m (`f32::MAX`: none).
    pub depth_cap: f32,
    /// Padding to 16 bytes.
    pub pad2: [f32; 3],
}

/// `water_increment`'s parameters (WGSL `IncrementUniforms`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct IncrementUniforms {
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// 1: the rain is scaled by the rain map.
    pub has_map: u32,
    /// 1: sources add `source_rate·dt`.
    pub has_sources: u32,
    /// Rain depth per sub-step, m.
    pub rain: f32,
    /// Sub-step, s.
    pub dt: f32,
    /// Padding to 16 bytes.
    pub pad: [f32; 2],
}

/// `update_and_erode`'s parameters (WGSL `UpdateUniforms`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct UpdateUniforms {
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Pipes per cell.
    pub pipes: u32,
    /// 0 closed, 1 open, 2 wrap.
    pub border: u32,
    /// 0 mei, 1 sine, 2 shear.
    pub capacity_model: u32,
    /// 1 for the signed net-flux form.
    pub signed: u32,
    /// Padding.
    pub pad: [u32; 2],
    /// Unit vector x per pipe.
    pub unit_x: [[f32; 4]; 2],
    /// Unit vector y per pipe.
    pub unit_y: [[f32; 4]; 2],
    /// Sub-step, s.
    pub dt: f32,
    /// 1 / cell area, 1/m².
    pub inv_area: f32,
    /// 1 / cell width, 1/m.
    pub inv_lx: f32,
    /// 1 / cell height, 1/m.
    pub inv_ly: f32,
    /// Mean depth below which velocity is 0, m.
    pub velocity_epsilon: f32,
    /// 1 / (2·cell width), for gradients.
    pub inv2x: f32,
    /// 1 / (2·cell height).
    pub inv2y: f32,
    /// Evaporation keeps `1 − Ke·Δt` of the depth.
    pub keep: f32,
    /// Ks.
    pub dissolve: f32,
    /// Kd.
    pub deposit: f32,
    /// Kh.
    pub softening: f32,
    /// Kc times the morphological factor.
    pub capacity: f32,
    /// Minimum tilt.
    pub min_tilt: f32,
    /// 1 / max_erosion_depth.
    pub per_max_depth: f32,
    /// `1 − rock_erodibility`: erodibility lost per unit of hardness.
    pub erodibility_loss: f32,
    /// Lowest height erosion may reach, m.
    pub floor_height: f32,
    /// `Cf / g` (shear capacity), s²/m.
    pub cf_over_g: f32,
    /// Critical shear over ρ·g, m.
    pub critical_shear: f32,
    /// Water displaced per soil dissolved or deposited (1 / morphological factor).
    pub water_per_soil: f32,
    /// `bed_change_limit`: the most the bed moves per sub-step per metre of depth.
    pub bed_step: f32,
    /// `f32::MAX` without a bed change limit, else 0.
    pub bed_unlimited: f32,
    /// Deepest water the bed change limit counts, m (`max_flow_depth`; `f32::MAX`: none).
    pub depth_cap: f32,
    /// 1 with a sediment layer (deposits join it), 0 without.
    pub layer: f32,
    /// Padding to 16 bytes.
    pub pad3: f32,
}

/// `thermal_flux`'s and `thermal_apply`'s parameters (WGSL `ThermalUniforms`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ThermalUniforms {
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// 0 closed, 1 open, 2 wrap.
    pub border: u32,
    /// Padding.
    pub pad0: u32,
    /// Distance between cell centres per direction, m.
    pub distance: [[f32; 4]; 2],
    /// Δt·Kt.
    pub rate: f32,
    /// Talus from hardness: scale.
    pub talus_scale: f32,
    /// Talus from hardness: bias.
    pub talus_bias: f32,
    /// `1 − rock_erodibility`: erodibility lost per unit of hardness.
    pub erodibility_loss: f32,
    /// Talus of loose material (`repose_slope`).
    pub repose: f32,
    /// 1 with a sediment layer, 0 without.
    pub layer: u32,
    /// Padding to 16 bytes.
    pub pad1: [u32; 2],
}

/// `max_depth`'s parameters (WGSL `DepthUniforms`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct DepthUniforms {
    /// Cells.
    pub cells: u32,
    /// Padding to 16 bytes.
    pub pad: [u32; 3],
}

/// `sediment_transport`'s parameters (WGSL `TransportUniforms`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct TransportUniforms {
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Pipes per cell.
    pub pipes: u32,
    /// 0 closed, 1 open, 2 wrap.
    pub border: u32,
}

fn border_code(b: Border) -> u32 {
    match b {
        Border::Closed => 0,
        Border::Open => 1,
        Border::Wrap => 2,
    }
}

impl UpdateUniforms {
    /// The CPU's constants of the same stages (`water_update` and `erosion_deposition`, which
    /// the GPU fuses as `update_and_erode`), as the shader reads them: each value is derived
    /// once, on the CPU's side.
    fn new(k: &UpdateErodeConsts, p: &Params, width: usize, height: usize, pipes: usize) -> Self {
        let (ku, ke) = (&k.ku, &k.ke);
        Self {
            width: width as u32,
            height: height as u32,
            pipes: pipes as u32,
            border: border_code(p.border),
            capacity_model: match p.capacity_model {
                CapacityModel::Mei => 0,
                CapacityModel::Sine => 1,
                CapacityModel::Shear => 2,
            },
            signed: u32::from(k.signed),
            pad: [0; 2],
            unit_x: pack(ku.ux),
            unit_y: pack(ku.uy),
            dt: k.dt,
            inv_area: ku.inv_area,
            inv_lx: ku.inv_lx,
            inv_ly: ku.inv_ly,
            velocity_epsilon: ku.eps,
            inv2x: k.inv2x,
            inv2y: k.inv2y,
            keep: k.keep,
            dissolve: ke.ks,
            deposit: ke.kd,
            softening: ke.kh,
            capacity: ke.kc,
            min_tilt: ke.min_tilt,
            per_max_depth: ke.per_max_depth,
            erodibility_loss: ke.loss,
            floor_height: ke.floor,
            cf_over_g: ke.cf_over_g,
            critical_shear: ke.critical_shear,
            water_per_soil: ke.water_per_soil,
            bed_step: ke.bed_step,
            bed_unlimited: ke.bed_unlimited,
            depth_cap: ke.depth_cap,
            layer: ke.layer,
            pad3: 0.0,
        }
    }
}

impl ThermalUniforms {
    /// The CPU's constants of `thermal_flux` and `thermal_apply`, as the shaders read them.
    fn new(k: &ThermalConsts, p: &Params, width: usize, height: usize) -> Self {
        Self {
            width: width as u32,
            height: height as u32,
            border: border_code(p.border),
            pad0: 0,
            distance: pack(k.dist),
            rate: k.rate,
            talus_scale: k.scale,
            talus_bias: k.bias,
            erodibility_loss: k.loss,
            repose: k.repose,
            layer: u32::from(k.layer),
            pad1: [0; 2],
        }
    }
}

fn pack(v: [f32; 8]) -> [[f32; 4]; 2] {
    [[v[0], v[1], v[2], v[3]], [v[4], v[5], v[6], v[7]]]
}

impl FluxUniforms {
    /// From the parameters and what they derive for this grid.
    pub fn new(p: &Params, dv: &Derived, width: usize, height: usize, pipes: usize) -> Self {
        Self {
            width: width as u32,
            height: height as u32,
            pipes: pipes as u32,
            border: match p.border {
                Border::Closed => 0,
                Border::Open => 1,
                Border::Wrap => 2,
            },
            depth_scaled: u32::from(dv.depth_scaled),
            signed: u32::from(p.flux_form == FluxForm::Signed),
            pad: [0; 2],
            gain: pack(dv.pipe_gain),
            pipe_width: pack(dv.pipe_width),
            friction: dv.friction,
            volume_per_dt: (dv.area / dv.dt) as f32,
            dt: dv.dt as f32,
            area: dv.area as f32,
            depth_cap: dv.depth_cap.min(f32::MAX),
            pad2: [0.0; 3],
        }
    }
}

impl IncrementUniforms {
    /// From the parameters (buckets are not ported).
    pub fn new(p: &Params, dv: &Derived, width: usize, height: usize, has_sources: bool) -> Self {
        Self {
            width: width as u32,
            height: height as u32,
            has_map: u32::from(p.rain_mode == RainMode::Map),
            has_sources: u32::from(has_sources),
            rain: Increment::rain_depth(p, dv),
            dt: dv.dt as f32,
            pad: [0.0; 2],
        }
    }
}

/// The grid model's GPU simulator: buffers, pipelines and bind groups built once; a step only
/// encodes dispatches; reading back is an explicit call.
pub struct GpuSim {
    ctx: Arc<GpuContext>,
    params: Params,
    derived: Derived,
    width: usize,
    height: usize,
    cell_size: crate::grid::CellSize,
    pipes: usize,
    buffers: Buffers,
    uniforms: Uniforms,
    kernels: Kernels,
    /// The lowest height erosion may reach (`State::floor`), m.
    floor: f32,
    /// The books when the state was uploaded, and its eroded and deposited maps summed (m).
    base_books: Books,
    base_eroded: f64,
    base_deposited: f64,
    area: f64,
    /// Iterations run.
    pub iteration: u64,
    /// Simulated time, s.
    pub time: f64,
    /// Terrain time, s (see `State::terrain_time`).
    pub terrain_time: f64,
    substeps: super::derived::SubstepTally,
}

/// The state on the GPU: one buffer per field, and field groups split as [`FieldSplit`] says.
struct Buffers {
    split: FieldSplit,
    terrain: wgpu::Buffer,
    terrain_next: wgpu::Buffer,
    water: wgpu::Buffer,
    /// One field per pipe.
    flux: Vec<wgpu::Buffer>,
    share: wgpu::Buffer,
    /// Velocity x, velocity y, discharge integral.
    velocity: Vec<wgpu::Buffer>,
    sediment: wgpu::Buffer,
    sediment_next: wgpu::Buffer,
    /// Hardness, then the sediment layer's depth.
    ground: Vec<wgpu::Buffer>,
    /// Per-cell books, [`Book`] by [`Book`].
    books: Vec<wgpu::Buffer>,
    thermal_share: wgpu::Buffer,
    talus: wgpu::Buffer,
    /// The deepest water's f32 bits (one u32).
    deepest: wgpu::Buffer,
    /// The signed form's per-cell limit (one element with one-way pipes).
    limit: wgpu::Buffer,
}

struct Uniforms {
    increment: wgpu::Buffer,
    flux: wgpu::Buffer,
    update: wgpu::Buffer,
    thermal: wgpu::Buffer,
}

struct Kernels {
    increment: Kernel,
    water_flux: Kernel,
    /// The signed form only.
    scale_by_donor: Option<Kernel>,
    thermal_flux: Kernel,
    update_and_erode: Kernel,
    sediment_transport: Kernel,
    thermal_apply: Kernel,
    max_depth: Kernel,
}

/// The books kept per cell on the GPU, in this order in one buffer (each `cells` long; the
/// shaders use these indices). Water and soil amounts are metres of height, the outflow of water
/// m³; each cell adds in f32 and the read-back sums the cells in f64.
#[derive(Clone, Copy, Debug)]
pub enum Book {
    /// Rain added (m).
    Rain,
    /// Source water added (m).
    Sources,
    /// The eroded map (m, cumulative like the state's).
    Eroded,
    /// The deposited map (m, cumulative).
    Deposited,
    /// Water evaporated (m).
    Evaporated,
    /// Water removed with deposited soil (m).
    WaterToDeposition,
    /// Water that left across open edges (m³).
    WaterOutflow,
    /// Sediment that left across open edges (m).
    SedimentOutflow,
    /// Water added with dissolved soil (m; eq. 9c, ÷ the morphological factor).
    WaterFromDissolving,
}

/// How many books [`Book`] lists.
const BOOKS: usize = 9;

fn sum(v: &[f32]) -> f64 {
    v.iter().map(|&x| f64::from(x)).sum()
}

fn max_depth(water: &[f32]) -> f64 {
    f64::from(water.iter().fold(0.0f32, |a, &b| a.max(b)))
}

/// Bytes per cell the grid keeps on the GPU with `pipes` pipes (one-way form; the signed form
/// adds 4): every buffer [`GpuSim::new`] makes.
pub fn bytes_per_cell(pipes: usize) -> u64 {
    // terrain ×2, water, share, sediment ×2, thermal share, talus; flux, velocity, ground, books
    4 * (8 + pipes + 3 + 2 + BOOKS) as u64
}

/// Checks that a `width` x `height` grid with `params` fits `ctx`'s device (its largest binding
/// and its bindings per stage), before any map is read or uploaded.
pub fn check_fits(ctx: &GpuContext, params: &Params, width: usize, height: usize) -> Result<FieldSplit, SimError> {
    let split = FieldSplit::for_device(ctx, width * height)?;
    let b = |fields| split.buffers(fields) as u32;
    // update_and_erode binds the most: terrain, terrain_next, water, sediment and the groups
    ctx.check_bindings("update_and_erode", 4 + b(params.pipes as usize) + b(3) + b(2) + b(BOOKS))?;
    Ok(split)
}

impl GpuSim {
    /// Uploads `state` and builds every ported stage for `params` on `ctx`'s device.
    pub fn new(ctx: Arc<GpuContext>, params: &Params, state: &State) -> Result<Self, SimError> {
        let split = check_fits(&ctx, params, state.width, state.height)?;
        Self::with_split(ctx, params, state, split)
    }

    /// [`GpuSim::new`] with the field groups split as `split` says (a test splits a small grid
    /// as a device with small bindings would).
    pub fn with_split(
        ctx: Arc<GpuContext>,
        params: &Params,
        state: &State,
        split: FieldSplit,
    ) -> Result<Self, SimError> {
        params.validate()?;
        if params.rain_mode == RainMode::Buckets {
            return Err(SimError::NotOnGpu("rain_mode = \"buckets\""));
        }
        if params.transport == Transport::SemiLagrangian {
            return Err(SimError::NotOnGpu("transport = \"semi-lagrangian\""));
        }
        if params.smoothing_strength > 0.0 {
            return Err(SimError::NotOnGpu("smoothing"));
        }
        if state.nodata.is_some() {
            return Err(SimError::NotOnGpu("nodata cells (the shaders have no holes in their domain)"));
        }
        let (w, h) = (state.width, state.height);
        let pipes = state.flux.len();
        let n = state.len();
        params.check_work(state.cell_size, w, h, max_depth(&state.water))?;
        let dv = params.derived(state.cell_size, max_depth(&state.water));
        if split.cells != n {
            return Err(SimError::Gpu(format!("a field split for {} cells on a grid of {n}", split.cells)));
        }
        let flat: Vec<f32> = state.flux.iter().flatten().copied().collect();
        let velocity: Vec<f32> =
            state.velocity_x.iter().chain(&state.velocity_y).chain(&state.discharge_integral).copied().collect();
        // the eroded and deposited maps are books too: they start from the state's
        let mut books = vec![0.0f32; n * BOOKS];
        books[Book::Eroded as usize * n..][..n].copy_from_slice(&state.eroded);
        books[Book::Deposited as usize * n..][..n].copy_from_slice(&state.deposited);
        let signed = params.flux_form == FluxForm::Signed;
        let bytes = (bytes_per_cell(pipes) + if signed { 4 } else { 0 }) * n as u64;
        let buffers = ctx.allocating("grid's state", bytes, || Buffers {
            split,
            terrain: ctx.storage("terrain", &state.terrain),
            terrain_next: ctx.storage("terrain_next", &state.terrain),
            water: ctx.storage("water", &state.water),
            flux: split.upload(&ctx, "flux", &flat),
            share: ctx.storage("share", &vec![0.0; n]),
            velocity: split.upload(&ctx, "velocity", &velocity),
            sediment: ctx.storage("sediment", &state.sediment),
            sediment_next: ctx.storage("sediment_next", &state.sediment),
            ground: split.upload(&ctx, "ground", &[&state.hardness[..], &state.sediment_depth[..]].concat()),
            books: split.upload(&ctx, "books", &books),
            thermal_share: ctx.storage("thermal_share", &vec![0.0; n]),
            talus: ctx.storage("talus", &vec![0.0; n]),
            deepest: ctx.storage("deepest", &[0.0]),
            limit: ctx.storage("limit", &vec![0.0; if signed { n } else { 1 }]),
        })?;
        drop((flat, velocity, books));
        let rates = source_rates(params, state)?;
        let rain_map = ctx.storage("rain_map", state.rain_map.as_deref().unwrap_or(&[0.0]));
        let source_rate = ctx.storage("source_rate", if rates.is_empty() { &[0.0] } else { &rates });
        let floor = state.floor;
        let update_uniforms =
            UpdateUniforms::new(&UpdateErodeConsts::new(state.cell_size, floor, params, &dv), params, w, h, pipes);
        let thermal_uniforms = ThermalUniforms::new(&ThermalConsts::new(params, &dv), params, w, h);
        let uniforms = Uniforms {
            increment: ctx.uniform("water_increment", &IncrementUniforms::new(params, &dv, w, h, !rates.is_empty())),
            flux: ctx.uniform("water_flux", &FluxUniforms::new(params, &dv, w, h, pipes)),
            update: ctx.uniform("update_and_erode", &update_uniforms),
            thermal: ctx.uniform("thermal", &thermal_uniforms),
        };
        let transport = ctx.uniform(
            "sediment_transport",
            &TransportUniforms {
                width: w as u32,
                height: h as u32,
                pipes: pipes as u32,
                border: border_code(params.border),
            },
        );
        let b = &buffers;
        let one = std::slice::from_ref::<wgpu::Buffer>;
        let kernel = |stage: &'static str, template: &str, groups: &[&[wgpu::Buffer]]| {
            kernel_with_groups(&ctx, stage, &shader(template, &split, pipes)?, groups)
        };
        let kernels = Kernels {
            increment: kernel(
                "water_increment",
                WATER_INCREMENT_WGSL,
                &[one(&uniforms.increment), one(&b.water), one(&rain_map), one(&source_rate), &b.books],
            )?,
            water_flux: kernel(
                "water_flux",
                WATER_FLUX_WGSL,
                &[one(&uniforms.flux), one(&b.terrain), one(&b.water), &b.flux, one(&b.share), one(&b.limit)],
            )?,
            scale_by_donor: match params.flux_form {
                FluxForm::Signed => Some(kernel(
                    "scale_by_donor",
                    SCALE_BY_DONOR_WGSL,
                    &[one(&uniforms.flux), one(&b.water), &b.flux, one(&b.limit), one(&b.share)],
                )?),
                FluxForm::OneWay => None,
            },
            thermal_flux: kernel(
                "thermal_flux",
                THERMAL_FLUX_WGSL,
                &[one(&uniforms.thermal), one(&b.terrain), &b.ground, one(&b.thermal_share), one(&b.talus)],
            )?,
            update_and_erode: kernel(
                "update_and_erode",
                UPDATE_AND_ERODE_WGSL,
                &[
                    one(&uniforms.update),
                    one(&b.terrain),
                    &b.flux,
                    one(&b.terrain_next),
                    one(&b.water),
                    &b.velocity,
                    one(&b.sediment),
                    &b.ground,
                    &b.books,
                ],
            )?,
            sediment_transport: kernel(
                "sediment_transport",
                SEDIMENT_TRANSPORT_WGSL,
                &[one(&transport), &b.flux, one(&b.sediment), one(&b.share), one(&b.sediment_next), &b.books],
            )?,
            thermal_apply: kernel(
                "thermal_apply",
                THERMAL_APPLY_WGSL,
                &[
                    one(&uniforms.thermal),
                    one(&b.terrain),
                    one(&b.thermal_share),
                    one(&b.talus),
                    one(&b.terrain_next),
                    &b.ground,
                ],
            )?,
            max_depth: crate::gpu::kernel(
                &ctx,
                "max_depth",
                MAX_DEPTH_WGSL,
                &[&ctx.uniform("max_depth", &DepthUniforms { cells: n as u32, pad: [0; 3] }), &b.water, &b.deepest],
            )?,
        };
        Ok(Self {
            ctx,
            params: params.clone(),
            derived: dv,
            width: w,
            height: h,
            cell_size: state.cell_size,
            pipes,
            buffers,
            uniforms,
            kernels,
            floor,
            base_books: state.books.clone(),
            base_eroded: sum(&state.eroded),
            base_deposited: sum(&state.deposited),
            area: state.cell_size.area(),
            iteration: state.iteration,
            time: state.time,
            terrain_time: state.terrain_time,
            substeps: Default::default(),
        })
    }
}

impl GpuSim {
    /// What the parameters derive (sub-steps, time step) as of the last step.
    pub fn derived(&self) -> &Derived {
        &self.derived
    }

    fn kernel(&self, stage: Stage) -> Result<&Kernel, SimError> {
        let k = &self.kernels;
        Ok(match stage {
            Stage::WaterIncrement => &k.increment,
            Stage::WaterFlux => &k.water_flux,
            Stage::ThermalFlux => &k.thermal_flux,
            Stage::ErosionDeposition => &k.update_and_erode,
            Stage::SedimentTransport => &k.sediment_transport,
            Stage::ThermalApply => &k.thermal_apply,
            other => return Err(SimError::NotOnGpu(other.name())),
        })
    }

    fn dispatch(&self, encoder: &mut wgpu::CommandEncoder, stage: Stage) -> Result<(), SimError> {
        self.dispatch_kernel(encoder, stage.name(), self.kernel(stage)?);
        if let (Stage::WaterFlux, Some(scale)) = (stage, &self.kernels.scale_by_donor) {
            // a second pass: each flux needs its donor's limit, known once every cell has one
            self.dispatch_kernel(encoder, "scale_by_donor", scale);
        }
        Ok(())
    }

    fn dispatch_kernel(&self, encoder: &mut wgpu::CommandEncoder, label: &str, kernel: &Kernel) {
        let mut pass =
            encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(label), timestamp_writes: None });
        pass.set_pipeline(&kernel.pipeline);
        pass.set_bind_group(0, &kernel.bindings, &[]);
        pass.dispatch_workgroups(self.width.div_ceil(16) as u32, self.height.div_ceil(16) as u32, 1);
    }

    /// Runs one stage alone (for the per-stage comparisons with the CPU). `ErosionDeposition`
    /// is the fused `update_and_erode`; terrain and sediment land in the next-terrain and
    /// next-sediment buffers until [`GpuSim::commit_terrain`].
    pub fn run_stage(&mut self, stage: Stage) -> Result<(), SimError> {
        let mut encoder =
            self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(stage.name()) });
        self.dispatch(&mut encoder, stage)?;
        self.ctx.queue.submit([encoder.finish()]);
        Ok(())
    }

    /// Copies the next terrain and sediment over the current ones (what a step does after
    /// `thermal_apply`).
    pub fn commit_terrain(&mut self) {
        let mut encoder =
            self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("commit") });
        self.commit(&mut encoder);
        self.ctx.queue.submit([encoder.finish()]);
    }

    fn commit(&self, encoder: &mut wgpu::CommandEncoder) {
        let b = &self.buffers;
        encoder.copy_buffer_to_buffer(&b.terrain_next, 0, &b.terrain, 0, b.terrain.size());
        encoder.copy_buffer_to_buffer(&b.sediment_next, 0, &b.sediment, 0, b.sediment.size());
    }

    /// The deepest water, m, reduced on the GPU (4 bytes come back).
    pub fn max_depth(&self) -> Result<f64, SimError> {
        let mut encoder =
            self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("max_depth") });
        encoder.clear_buffer(&self.buffers.deepest, 0, None);
        {
            let k = &self.kernels.max_depth;
            let mut pass = encoder
                .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("max_depth"), timestamp_writes: None });
            pass.set_pipeline(&k.pipeline);
            pass.set_bind_group(0, &k.bindings, &[]);
            let groups = (self.width * self.height).div_ceil(256).clamp(1, 256) as u32;
            pass.dispatch_workgroups(groups, 1, 1);
        }
        self.ctx.queue.submit([encoder.finish()]);
        let bits = self.ctx.read(&self.buffers.deepest)?;
        Ok(bits.first().map_or(0.0, |&d| f64::from(d)))
    }

    /// Re-derives the time step from the deepest water (depth cross-section) and rewrites the
    /// uniforms that depend on it.
    fn rederive(&mut self) -> Result<(), SimError> {
        let dv = self.params.derived(self.cell_size, self.max_depth()?);
        if dv == self.derived {
            return Ok(());
        }
        let has_sources = !self.params.sources.is_empty();
        let (q, u, p) = (&self.ctx.queue, &self.uniforms, &self.params);
        let inc = IncrementUniforms::new(p, &dv, self.width, self.height, has_sources);
        q.write_buffer(&u.increment, 0, bytemuck::bytes_of(&inc));
        let flux = FluxUniforms::new(p, &dv, self.width, self.height, self.pipes);
        q.write_buffer(&u.flux, 0, bytemuck::bytes_of(&flux));
        let update = UpdateUniforms::new(
            &UpdateErodeConsts::new(self.cell_size, self.floor, p, &dv),
            p,
            self.width,
            self.height,
            self.pipes,
        );
        q.write_buffer(&u.update, 0, bytemuck::bytes_of(&update));
        let thermal = ThermalUniforms::new(&ThermalConsts::new(p, &dv), p, self.width, self.height);
        q.write_buffer(&u.thermal, 0, bytemuck::bytes_of(&thermal));
        self.derived = dv;
        Ok(())
    }

    /// The sub-steps the iterations so far took (most, mean).
    pub fn substep_tally(&self) -> &super::derived::SubstepTally {
        &self.substeps
    }

    /// One iteration: `derived().substeps` sub-steps of every stage, encoded and submitted.
    pub fn step(&mut self) -> Result<(), SimError> {
        if self.derived.depth_scaled {
            self.rederive()?;
        }
        let thermal = self.params.thermal_rate > 0.0;
        let mut encoder =
            self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("step") });
        for _ in 0..self.derived.substeps {
            self.dispatch(&mut encoder, Stage::WaterIncrement)?;
            self.dispatch(&mut encoder, Stage::WaterFlux)?;
            if thermal {
                self.dispatch(&mut encoder, Stage::ThermalFlux)?;
            }
            self.dispatch(&mut encoder, Stage::ErosionDeposition)?;
            self.dispatch(&mut encoder, Stage::SedimentTransport)?;
            if thermal {
                self.dispatch(&mut encoder, Stage::ThermalApply)?;
            }
            self.commit(&mut encoder);
        }
        self.ctx.queue.submit([encoder.finish()]);
        self.iteration += 1;
        self.substeps.record(self.derived.substeps);
        let dt = self.derived.dt * f64::from(self.derived.substeps);
        self.time += dt;
        self.terrain_time += dt * self.derived.morphological_factor;
        Ok(())
    }

    /// Waits until the GPU has finished everything submitted (for timing).
    pub fn finish(&self) -> Result<(), SimError> {
        self.ctx.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| GpuError::Readback(e.to_string()))?;
        Ok(())
    }

    /// `n` iterations.
    pub fn run(&mut self, n: u64) -> Result<(), SimError> {
        for _ in 0..n {
            self.step()?;
        }
        Ok(())
    }

    /// Copies every field the GPU holds into `state`, and the books (thermal moves, which are
    /// for information only, are not counted on the GPU).
    pub fn read_into(&self, state: &mut State) -> Result<(), SimError> {
        let n = self.width * self.height;
        let b = &self.buffers;
        let read = |buf: &wgpu::Buffer| self.ctx.read(buf);
        state.terrain = read(&b.terrain)?;
        state.water = read(&b.water)?;
        let fields = |group: &[wgpu::Buffer]| b.split.read(&self.ctx, group);
        let flat = fields(&b.flux)?;
        for (e, f) in state.flux.iter_mut().enumerate() {
            f.copy_from_slice(&flat[e * n..(e + 1) * n]);
        }
        let velocity = fields(&b.velocity)?;
        state.velocity_x.copy_from_slice(&velocity[..n]);
        state.velocity_y.copy_from_slice(&velocity[n..2 * n]);
        state.discharge_integral.copy_from_slice(&velocity[2 * n..]);
        state.sediment = read(&b.sediment)?;
        let ground = fields(&b.ground)?;
        state.hardness.copy_from_slice(&ground[..n]);
        state.sediment_depth.copy_from_slice(&ground[n..]);
        let books = fields(&b.books)?;
        let book = |k: Book| &books[k as usize * n..(k as usize + 1) * n];
        state.eroded.copy_from_slice(book(Book::Eroded));
        state.deposited.copy_from_slice(book(Book::Deposited));
        let (a, base) = (self.area, &self.base_books);
        let eroded = (sum(book(Book::Eroded)) - self.base_eroded) * a;
        let deposited = (sum(book(Book::Deposited)) - self.base_deposited) * a;
        state.books = Books {
            rain: base.rain + sum(book(Book::Rain)) * a,
            sources: base.sources + sum(book(Book::Sources)) * a,
            evaporated: base.evaporated + sum(book(Book::Evaporated)) * a,
            water_outflow: base.water_outflow + sum(book(Book::WaterOutflow)),
            water_from_dissolving: base.water_from_dissolving + sum(book(Book::WaterFromDissolving)) * a,
            water_to_deposition: base.water_to_deposition + sum(book(Book::WaterToDeposition)) * a,
            eroded: base.eroded + eroded,
            deposited: base.deposited + deposited,
            sediment_outflow: base.sediment_outflow + sum(book(Book::SedimentOutflow)) * a,
            ..base.clone()
        };
        state.time = self.time;
        state.terrain_time = self.terrain_time;
        state.iteration = self.iteration;
        Ok(())
    }

    /// The buffers a renderer binds to draw the state where it lives, without a copy back:
    /// terrain (m), water depth (m) and suspended sediment (m), one `f32` per cell, row-major.
    pub fn field_buffers(&self) -> [&wgpu::Buffer; 3] {
        [&self.buffers.terrain, &self.buffers.water, &self.buffers.sediment]
    }

    /// The device it runs on.
    pub fn context(&self) -> Arc<GpuContext> {
        self.ctx.clone()
    }

    /// Writes the fields an editor changes by hand (terrain, water depth, hardness, sediment
    /// depth) from `state`,
    /// which must have this simulator's size. Fluxes, velocities, sediment and books stay as they
    /// are on the GPU. Rain maps and sources are parameters of the build: make a new `GpuSim`.
    pub fn write_edited(&mut self, state: &State) -> Result<(), SimError> {
        let n = self.width * self.height;
        if state.width != self.width || state.height != self.height {
            return Err(SimError::MapShape {
                what: "edited state",
                got_w: state.width,
                got_h: state.height,
                want_w: self.width,
                want_h: self.height,
            });
        }
        let q = &self.ctx.queue;
        let b = &self.buffers;
        q.write_buffer(&b.terrain, 0, bytemuck::cast_slice(&state.terrain[..n]));
        q.write_buffer(&b.water, 0, bytemuck::cast_slice(&state.water[..n]));
        b.split.write(&self.ctx, &b.ground, &[&state.hardness[..n], &state.sediment_depth[..n]].concat());
        Ok(())
    }

    /// The sediment shares `water_flux` wrote (for comparison with the CPU's).
    pub fn read_share(&self) -> Result<Vec<f32>, SimError> {
        Ok(self.ctx.read(&self.buffers.share)?)
    }

    /// The terrain after `update_and_erode` (and `thermal_apply`), before it is committed.
    pub fn read_next_terrain(&self) -> Result<Vec<f32>, SimError> {
        Ok(self.ctx.read(&self.buffers.terrain_next)?)
    }

    /// The sediment after transport, before it is committed.
    pub fn read_next_sediment(&self) -> Result<Vec<f32>, SimError> {
        Ok(self.ctx.read(&self.buffers.sediment_next)?)
    }

    /// The thermal shares and taluses `thermal_flux` wrote.
    pub fn read_thermal(&self) -> Result<(Vec<f32>, Vec<f32>), SimError> {
        Ok((self.ctx.read(&self.buffers.thermal_share)?, self.ctx.read(&self.buffers.talus)?))
    }
}

impl From<GpuError> for SimError {
    fn from(e: GpuError) -> Self {
        SimError::Gpu(e.to_string())
    }
}
