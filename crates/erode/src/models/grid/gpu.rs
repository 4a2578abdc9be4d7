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
//! the GPU (`max_depth`). With `dt = 0` (one sub-step, the presets) the GPU also picks the step:
//! `time_step` copies the uniforms the CPU derived for the deepest water's rung of the depth
//! ladder from a table, so iterations are submitted without a wait and the simulated time is
//! counted from how many iterations took each rung; with a fixed `dt` the sub-steps follow the
//! depth and 4 bytes come back every iteration.
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
/// `time_step`'s shader: the iteration's uniforms from the deepest water's rung.
pub const TIME_STEP_WGSL: &str = include_str!("shaders/time_step.wgsl");
/// `flush_books`' shader: the per-cell books into compensated totals.
pub const FLUSH_BOOKS_WGSL: &str = include_str!("shaders/flush_books.wgsl");
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

/// Cells of a per-cell stage's workgroup, columns x rows (WGSL `TILE_X`, `TILE_Y`): a warp of 32
/// reads one row's 128 contiguous bytes of a field. On an H200 32 x 8 ran 4096² at 302 it/s
/// where 16 x 16 ran 248 (`BENCHMARKS.md`).
pub const TILE: [u32; 2] = [32, 8];

/// A stage's shader for `split`, with `pipes` flux fields: the templates above with their
/// `#fields` groups (flux, velocity, ground, books) declared, and the workgroup's [`TILE`].
pub fn shader(template: &str, split: &FieldSplit, pipes: usize) -> Result<String, GpuError> {
    let tile = format!("const TILE_X: u32 = {}u;\nconst TILE_Y: u32 = {}u;\n", TILE[0], TILE[1]);
    split.expand(&(tile + template), &[("flux", pipes), ("velocity", 3), ("ground", 2), ("books", BOOKS)])
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
    /// 0, which a shader XORs with the bits of a value it must keep as rounded (`rounded`).
    pub zero: u32,
    /// Padding to 16 bytes.
    pub pad: f32,
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
    /// Evaporation takes `Ke·Δt` of the depth.
    pub evaporate: f32,
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
    /// 0, which a shader XORs with the bits of a value it must keep as rounded (`rounded`).
    pub zero: u32,
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

/// `time_step`'s parameters (WGSL `StepUniforms`): the table's rungs and the words of its rows.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct StepUniforms {
    /// First rung of the table.
    pub lowest: u32,
    /// Last rung.
    pub highest: u32,
    /// Low mantissa bits a rung drops.
    pub shift: u32,
    /// Words of a row.
    pub row: u32,
    /// Words of `IncrementUniforms`.
    pub increment: u32,
    /// Words of `FluxUniforms`.
    pub flux: u32,
    /// Words of `UpdateUniforms`.
    pub update: u32,
    /// Words of `ThermalUniforms`.
    pub thermal: u32,
}

/// `flush_books`' parameters (WGSL `FlushUniforms`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct FlushUniforms {
    /// Cells.
    pub cells: u32,
    /// Bit `b` for each book [`Book`] `b` that is a total (not a map).
    pub totals: u32,
    /// 0, which a shader XORs with the bits of a value it must keep as rounded (`rounded`).
    pub zero: u32,
    /// Padding to 16 bytes.
    pub pad: u32,
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
            evaporate: k.evaporate,
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
            zero: 0,
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
            volume_per_dt: dv.volume_per_dt(),
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
            zero: 0,
            pad: 0.0,
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
    /// The time steps the GPU picks itself (`dt = 0`), or none (read back every iteration).
    ladder: Option<Ladder>,
}

/// The time steps of the depth ladder's rungs, which the GPU picks from without a wait.
struct Ladder {
    /// What each rung of the table derives, first rung first.
    rungs: Vec<Derived>,
    /// The last row taken, then iterations per row.
    tally: wgpu::Buffer,
    time_step: Kernel,
    /// The simulated and terrain time when the state was uploaded, s.
    start: (f64, f64),
}

/// Iterations encoded into one command buffer when the GPU picks the time steps.
const ITERATIONS_PER_SUBMIT: u64 = 16;

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
    /// The books' totals: per `flush_books` workgroup, per book, a compensated pair (hi, lo).
    book_sums: wgpu::Buffer,
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
    flush_books: Kernel,
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

/// The books that are totals, not maps: every one but the eroded and deposited maps.
const TOTALS: u32 = ((1 << BOOKS) - 1) & !(1 << Book::Eroded as u32) & !(1 << Book::Deposited as u32);

/// Iterations the per-cell books gather in f32 before `flush_books` adds them to the totals: a
/// per-cell f32 adding the same amount every iteration would drift by ~iterations x 6e-8.
const FLUSH_EVERY: u64 = 32;

/// `flush_books`' workgroups for `cells` (a dispatch has at most 65,535 along x).
fn flush_groups(cells: usize) -> u32 {
    cells.div_ceil(256).clamp(1, 65_535) as u32
}

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
            book_sums: ctx.storage("book_sums", &vec![0.0; flush_groups(n) as usize * BOOKS * 2]),
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
        let ladder = if dv.depth_scaled {
            Ladder::new(&ctx, params, state, !rates.is_empty(), pipes, &uniforms, &buffers.deepest)?
        } else {
            None
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
            flush_books: kernel(
                "flush_books",
                FLUSH_BOOKS_WGSL,
                &[
                    one(&ctx.uniform("flush_books", &FlushUniforms { cells: n as u32, totals: TOTALS, zero: 0, pad: 0 })),
                    &b.books,
                    one(&b.book_sums),
                ],
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
            ladder,
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

    /// One stage, a workgroup per [`TILE`] of cells (wgpu orders the dispatches of a pass by the
    /// buffers they share).
    fn dispatch(&self, pass: &mut wgpu::ComputePass<'_>, stage: Stage) -> Result<(), SimError> {
        let groups = [(self.width as u32).div_ceil(TILE[0]), (self.height as u32).div_ceil(TILE[1])];
        dispatch_kernel(pass, self.kernel(stage)?, groups);
        if let (Stage::WaterFlux, Some(scale)) = (stage, &self.kernels.scale_by_donor) {
            // a second dispatch: each flux needs its donor's limit, known once every cell has one
            dispatch_kernel(pass, scale, groups);
        }
        Ok(())
    }

    /// Runs one stage alone (for the per-stage comparisons with the CPU). `ErosionDeposition`
    /// is the fused `update_and_erode`; terrain and sediment land in the next-terrain and
    /// next-sediment buffers until [`GpuSim::commit_terrain`].
    pub fn run_stage(&mut self, stage: Stage) -> Result<(), SimError> {
        let mut encoder =
            self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(stage.name()) });
        self.dispatch(&mut compute_pass(&mut encoder, stage.name()), stage)?;
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
        self.encode_max_depth(&mut encoder);
        self.ctx.queue.submit([encoder.finish()]);
        let bits = self.ctx.read(&self.buffers.deepest)?;
        Ok(bits.first().map_or(0.0, |&d| f64::from(d)))
    }

    /// The deepest water's f32 bits into `deepest`.
    fn encode_max_depth(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.clear_buffer(&self.buffers.deepest, 0, None);
        self.dispatch_max_depth(&mut compute_pass(encoder, "max_depth"));
    }

    /// `max_depth` into a cleared `deepest`.
    fn dispatch_max_depth(&self, pass: &mut wgpu::ComputePass<'_>) {
        let groups = (self.width * self.height).div_ceil(256).clamp(1, 256) as u32;
        dispatch_kernel(pass, &self.kernels.max_depth, [groups, 1]);
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
    /// When the GPU picks the time step, the simulated time is counted at [`GpuSim::run`]'s end
    /// ([`GpuSim::settle`]) or on read-back.
    pub fn step(&mut self) -> Result<(), SimError> {
        if self.ladder.is_none() && self.derived.depth_scaled {
            self.rederive()?;
        }
        let mut encoder =
            self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("step") });
        self.encode_iteration(&mut encoder)?;
        self.ctx.queue.submit([encoder.finish()]);
        self.count_iteration();
        Ok(())
    }

    /// One iteration's commands, a compute pass per sub-step: with the ladder, the deepest
    /// water and the step first; every [`FLUSH_EVERY`] iterations the books' flush last.
    fn encode_iteration(&self, encoder: &mut wgpu::CommandEncoder) -> Result<(), SimError> {
        if self.ladder.is_some() {
            encoder.clear_buffer(&self.buffers.deepest, 0, None);
        }
        let thermal = self.params.thermal_rate > 0.0;
        let substeps = self.derived.substeps;
        for k in 0..substeps {
            let mut pass = compute_pass(encoder, "iteration");
            if let (Some(ladder), 0) = (&self.ladder, k) {
                self.dispatch_max_depth(&mut pass);
                dispatch_kernel(&mut pass, &ladder.time_step, [1, 1]);
            }
            self.dispatch(&mut pass, Stage::WaterIncrement)?;
            self.dispatch(&mut pass, Stage::WaterFlux)?;
            if thermal {
                self.dispatch(&mut pass, Stage::ThermalFlux)?;
            }
            self.dispatch(&mut pass, Stage::ErosionDeposition)?;
            self.dispatch(&mut pass, Stage::SedimentTransport)?;
            if thermal {
                self.dispatch(&mut pass, Stage::ThermalApply)?;
            }
            if k + 1 == substeps && (self.iteration + 1).is_multiple_of(FLUSH_EVERY) {
                // the per-cell books into their totals
                dispatch_kernel(&mut pass, &self.kernels.flush_books, [flush_groups(self.width * self.height), 1]);
            }
            drop(pass);
            self.commit(encoder);
        }
        Ok(())
    }

    fn count_iteration(&mut self) {
        self.iteration += 1;
        self.substeps.record(self.derived.substeps);
        if self.ladder.is_none() {
            let dt = self.derived.dt * f64::from(self.derived.substeps);
            self.time += dt;
            self.terrain_time += dt * self.derived.morphological_factor;
        }
    }

    /// Waits until the GPU has finished everything submitted (for timing).
    pub fn finish(&self) -> Result<(), SimError> {
        self.ctx.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| GpuError::Readback(e.to_string()))?;
        Ok(())
    }

    /// `n` iterations; when the GPU picks the time steps, submitted without a wait between
    /// them, then waited for and the simulated time counted ([`GpuSim::settle`]).
    pub fn run(&mut self, n: u64) -> Result<(), SimError> {
        if self.ladder.is_none() {
            for _ in 0..n {
                self.step()?;
            }
            return Ok(());
        }
        let mut left = n;
        while left > 0 {
            let batch = left.min(ITERATIONS_PER_SUBMIT);
            let mut encoder =
                self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("iterations") });
            for _ in 0..batch {
                self.encode_iteration(&mut encoder)?;
                self.count_iteration();
            }
            self.ctx.queue.submit([encoder.finish()]);
            left -= batch;
        }
        self.settle()
    }

    /// The ladder's tally read back (a wait for the GPU): the simulated and terrain time, s,
    /// and what the last iteration derived; none without the ladder.
    fn tally(&self) -> Result<Option<(f64, f64, &Derived)>, SimError> {
        let Some(ladder) = &self.ladder else { return Ok(None) };
        let words: Vec<u32> = self.ctx.read(&ladder.tally)?.iter().map(|w| w.to_bits()).collect();
        let (mut time, mut terrain) = ladder.start;
        for (dv, &count) in ladder.rungs.iter().zip(&words[1..]) {
            let dt = dv.dt * f64::from(dv.substeps);
            time += f64::from(count) * dt;
            terrain += f64::from(count) * dt * dv.morphological_factor;
        }
        let last = if self.iteration > 0 { ladder.rungs.get(words[0] as usize) } else { None };
        Ok(Some((time, terrain, last.unwrap_or(&self.derived))))
    }

    /// Brings the simulated time (`time`, `terrain_time`) and [`GpuSim::derived`] up to date
    /// when the GPU picks the time steps (a wait for the GPU).
    pub fn settle(&mut self) -> Result<(), SimError> {
        if let Some((time, terrain, last)) = self.tally()? {
            let last = last.clone();
            (self.time, self.terrain_time, self.derived) = (time, terrain, last);
        }
        Ok(())
    }

    /// Copies every field the GPU holds into `state`, and the books (thermal moves, which are
    /// for information only, are not counted on the GPU), in one read-back.
    pub fn read_into(&self, state: &mut State) -> Result<(), SimError> {
        let n = self.width * self.height;
        let b = &self.buffers;
        let groups = [&b.flux, &b.velocity, &b.ground, &b.books];
        let mut parts: Vec<(&wgpu::Buffer, u64, u64)> = self.surface_ranges().to_vec();
        parts.extend(groups.iter().flat_map(|g| g.iter().map(|buffer| (buffer, 0, buffer.size()))));
        let mut read = self.ctx.read_ranges(&parts)?.into_iter();
        let surface: [Vec<f32>; 4] = std::array::from_fn(|_| read.next().unwrap_or_default());
        let mut field_major = |g: &[wgpu::Buffer]| -> Vec<f32> { read.by_ref().take(g.len()).flatten().collect() };
        let flat = field_major(&b.flux);
        for (e, f) in state.flux.iter_mut().enumerate() {
            f.copy_from_slice(&flat[e * n..(e + 1) * n]);
        }
        let velocity = field_major(&b.velocity);
        state.velocity_x.copy_from_slice(&velocity[..n]);
        state.velocity_y.copy_from_slice(&velocity[n..2 * n]);
        state.discharge_integral.copy_from_slice(&velocity[2 * n..]);
        let ground = field_major(&b.ground);
        state.hardness.copy_from_slice(&ground[..n]);
        state.sediment_depth.copy_from_slice(&ground[n..]);
        let books = field_major(&b.books);
        let book = |k: Book| &books[k as usize * n..(k as usize + 1) * n];
        self.read_outputs_with(state, surface, |k| Ok(book(k).to_vec()))
    }

    /// The byte ranges of terrain, water, sediment and the books' running sums.
    fn surface_ranges(&self) -> [(&wgpu::Buffer, u64, u64); 4] {
        let b = &self.buffers;
        [&b.terrain, &b.water, &b.sediment, &b.book_sums].map(|buffer| (buffer, 0, buffer.size()))
    }

    /// Copies what a run's usual outputs and books need into `state`: terrain, water, sediment,
    /// the eroded and deposited maps, the books, the time (5 of the ~24 fields [`GpuSim::read_into`]
    /// reads, in one read-back; the per-cell water books are flushed into their totals first).
    /// The fluxes, velocities, discharge, hardness and sediment depth in `state` stay as they
    /// were.
    pub fn read_outputs(&self, state: &mut State) -> Result<(), SimError> {
        let mut encoder =
            self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("flush_books") });
        {
            let mut pass = compute_pass(&mut encoder, "flush_books");
            dispatch_kernel(&mut pass, &self.kernels.flush_books, [flush_groups(self.width * self.height), 1]);
        }
        self.ctx.queue.submit([encoder.finish()]);
        let b = &self.buffers;
        let mut parts = self.surface_ranges().to_vec();
        parts.push(b.split.field_range(&b.books, Book::Eroded as usize)?);
        parts.push(b.split.field_range(&b.books, Book::Deposited as usize)?);
        let mut read = self.ctx.read_ranges(&parts)?.into_iter();
        let surface: [Vec<f32>; 4] = std::array::from_fn(|_| read.next().unwrap_or_default());
        let (eroded, deposited) = (read.next().unwrap_or_default(), read.next().unwrap_or_default());
        self.read_outputs_with(state, surface, |k| match k {
            Book::Eroded => Ok(eroded.clone()),
            Book::Deposited => Ok(deposited.clone()),
            // flushed: every cell's is 0
            _ => Ok(Vec::new()),
        })
    }

    /// Terrain, water, sediment and the books' running sums (`surface`, as read back), the
    /// eroded and deposited maps, the books and the time into `state`, each book's per-cell
    /// values from `book`.
    fn read_outputs_with(
        &self,
        state: &mut State,
        surface: [Vec<f32>; 4],
        book: impl Fn(Book) -> Result<Vec<f32>, SimError>,
    ) -> Result<(), SimError> {
        let [terrain, water, sediment, pairs] = surface;
        (state.terrain, state.water, state.sediment) = (terrain, water, sediment);
        // what the cells hold since the last flush, and the totals before
        let total = |k: Book| -> Result<f64, SimError> {
            let pair = |p: &[f32]| f64::from(p[0]) + f64::from(p[1]);
            Ok(sum(&book(k)?) + pairs.chunks_exact(2).skip(k as usize).step_by(BOOKS).map(pair).sum::<f64>())
        };
        state.eroded = book(Book::Eroded)?;
        state.deposited = book(Book::Deposited)?;
        let (a, base) = (self.area, &self.base_books);
        let eroded = (sum(&state.eroded) - self.base_eroded) * a;
        let deposited = (sum(&state.deposited) - self.base_deposited) * a;
        state.books = Books {
            rain: base.rain + total(Book::Rain)? * a,
            sources: base.sources + total(Book::Sources)? * a,
            evaporated: base.evaporated + total(Book::Evaporated)? * a,
            water_outflow: base.water_outflow + total(Book::WaterOutflow)?,
            water_from_dissolving: base.water_from_dissolving + total(Book::WaterFromDissolving)? * a,
            water_to_deposition: base.water_to_deposition + total(Book::WaterToDeposition)? * a,
            eroded: base.eroded + eroded,
            deposited: base.deposited + deposited,
            sediment_outflow: base.sediment_outflow + total(Book::SedimentOutflow)? * a,
            ..base.clone()
        };
        (state.time, state.terrain_time) = match self.tally()? {
            Some((time, terrain, _)) => (time, terrain),
            None => (self.time, self.terrain_time),
        };
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

/// A compute pass of `encoder`.
fn compute_pass<'e>(encoder: &'e mut wgpu::CommandEncoder, label: &str) -> wgpu::ComputePass<'e> {
    encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(label), timestamp_writes: None })
}

/// `kernel` over `groups` workgroups (x, y) in `pass`.
fn dispatch_kernel(pass: &mut wgpu::ComputePass<'_>, kernel: &Kernel, groups: [u32; 2]) {
    pass.set_pipeline(&kernel.pipeline);
    pass.set_bind_group(0, &kernel.bindings, &[]);
    pass.dispatch_workgroups(groups[0], groups[1], 1);
}

impl Ladder {
    /// The table of every rung's uniforms for `params` on `state`'s grid, and the kernel that
    /// copies a row into `uniforms`; none when some rung takes more than one sub-step (a fixed
    /// `dt`: the CPU encodes the sub-steps, so it must know the depth).
    fn new(
        ctx: &GpuContext,
        params: &Params,
        state: &State,
        has_sources: bool,
        pipes: usize,
        uniforms: &Uniforms,
        deepest: &wgpu::Buffer,
    ) -> Result<Option<Self>, SimError> {
        let (w, h, cell) = (state.width, state.height, state.cell_size);
        let span = params.depth_rungs();
        let rungs: Vec<Derived> = span.clone().map(|r| params.derived(cell, super::derived::rung_depth(r))).collect();
        if rungs.iter().any(|dv| dv.substeps != 1) {
            return Ok(None);
        }
        fn words<T: bytemuck::Pod>(table: &mut Vec<u32>, value: &T) -> u32 {
            let w: &[u32] = bytemuck::cast_slice(bytemuck::bytes_of(value));
            table.extend_from_slice(w);
            w.len() as u32
        }
        let mut table = Vec::new();
        let mut sizes = [0; 4];
        for dv in &rungs {
            let update = UpdateErodeConsts::new(cell, state.floor, params, dv);
            sizes = [
                words(&mut table, &IncrementUniforms::new(params, dv, w, h, has_sources)),
                words(&mut table, &FluxUniforms::new(params, dv, w, h, pipes)),
                words(&mut table, &UpdateUniforms::new(&update, params, w, h, pipes)),
                words(&mut table, &ThermalUniforms::new(&ThermalConsts::new(params, dv), params, w, h)),
            ];
        }
        let step = StepUniforms {
            lowest: *span.start(),
            highest: *span.end(),
            shift: super::derived::RUNG_SHIFT,
            row: sizes.iter().sum(),
            increment: sizes[0],
            flux: sizes[1],
            update: sizes[2],
            thermal: sizes[3],
        };
        let table = ctx.storage("time_step table", bytemuck::cast_slice(&table));
        let tally = ctx.storage("time_step tally", &vec![0.0; 1 + rungs.len()]);
        let time_step = crate::gpu::kernel(
            ctx,
            "time_step",
            TIME_STEP_WGSL,
            &[
                &ctx.uniform("time_step", &step),
                deepest,
                &table,
                &uniforms.increment,
                &uniforms.flux,
                &uniforms.update,
                &uniforms.thermal,
                &tally,
            ],
        )?;
        Ok(Some(Self { rungs, tally, time_step, start: (state.time, state.terrain_time) }))
    }
}

impl From<GpuError> for SimError {
    fn from(e: GpuError) -> Self {
        SimError::Gpu(e.to_string())
    }
}
