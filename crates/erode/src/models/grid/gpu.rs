//! The grid model on the GPU (feature `gpu`): WGSL compute shaders, one file per stage
//! (`shaders/<stage>.wgsl`), each with its CPU twin's name for file, entry point and pipeline
//! label. Parameters reach a shader one way: `Params::derived()` -> a `#[repr(C)]` uniform
//! struct here -> the WGSL struct of the same name (`tests/gpu_layout.rs` checks that sizes and
//! offsets agree).
//!
//! Ported so far: `water_increment` (uniform rain, rain map, sources; not buckets) and
//! `water_flux` (one-way pipes, 4 or 8, both cross-sections, every border). The other stages
//! follow; asking for one that is not ported is a typed error, never a silent CPU fallback.

use std::sync::Arc;

use super::Stage;
use super::cpu::source_rates;
use super::derived::Derived;
use super::params::{Border, FluxForm, Params, RainMode};
use super::state::State;
use crate::error::SimError;
use crate::gpu::{GpuContext, GpuError};

/// `water_increment`'s shader.
pub const WATER_INCREMENT_WGSL: &str = include_str!("shaders/water_increment.wgsl");
/// `water_flux`'s shader.
pub const WATER_FLUX_WGSL: &str = include_str!("shaders/water_flux.wgsl");

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
    /// Padding to the next 16 bytes.
    pub pad: [u32; 3],
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
            pad: [0; 3],
            gain: pack(dv.pipe_gain),
            pipe_width: pack(dv.pipe_width),
            friction: dv.friction,
            volume_per_dt: (dv.area / dv.dt) as f32,
            dt: dv.dt as f32,
            area: dv.area as f32,
        }
    }
}

impl IncrementUniforms {
    /// From the parameters (buckets are not ported).
    pub fn new(p: &Params, dv: &Derived, width: usize, height: usize, has_sources: bool) -> Self {
        let rain = match p.rain_mode {
            RainMode::Uniform | RainMode::Map => (p.rain_rate * dv.dt) as f32,
            RainMode::Off | RainMode::Buckets => 0.0,
        };
        Self {
            width: width as u32,
            height: height as u32,
            has_map: u32::from(p.rain_mode == RainMode::Map),
            has_sources: u32::from(has_sources),
            rain,
            dt: dv.dt as f32,
            pad: [0.0; 2],
        }
    }
}

/// One stage on the GPU: its pipeline and the bind group of the simulator's buffers.
struct Kernel {
    pipeline: wgpu::ComputePipeline,
    bindings: wgpu::BindGroup,
}

/// The grid model's GPU simulator: buffers, pipelines and bind groups built once; running a
/// stage only encodes a dispatch; reading back is an explicit call.
pub struct GpuSim {
    ctx: Arc<GpuContext>,
    width: usize,
    height: usize,
    water: wgpu::Buffer,
    flux: wgpu::Buffer,
    share: wgpu::Buffer,
    increment: Kernel,
    water_flux: Kernel,
}

fn bind(
    ctx: &GpuContext,
    stage: &'static str,
    pipeline: &wgpu::ComputePipeline,
    buffers: &[&wgpu::Buffer],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
        .iter()
        .enumerate()
        .map(|(k, b)| wgpu::BindGroupEntry { binding: k as u32, resource: b.as_entire_binding() })
        .collect();
    ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(stage),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    })
}

impl GpuSim {
    /// Uploads `state` and builds every ported stage for `params` on `ctx`'s device.
    pub fn new(ctx: Arc<GpuContext>, params: &Params, state: &State) -> Result<Self, SimError> {
        params.validate()?;
        if params.flux_form == FluxForm::Signed {
            return Err(SimError::NotOnGpu("flux_form = \"signed\""));
        }
        if params.rain_mode == RainMode::Buckets {
            return Err(SimError::NotOnGpu("rain_mode = \"buckets\""));
        }
        let (w, h) = (state.width, state.height);
        let pipes = state.flux.len();
        let n = state.len();
        let max_depth = state.water.iter().fold(0.0f32, |a, &b| a.max(b));
        let dv = params.derived(state.cell_size, f64::from(max_depth));
        ctx.check_binding("flux buffer", (n * pipes * 4) as u64)?;
        let terrain = ctx.storage("terrain", &state.terrain);
        let water = ctx.storage("water", &state.water);
        let flat: Vec<f32> = state.flux.iter().flatten().copied().collect();
        let flux = ctx.storage("flux", &flat);
        let share = ctx.storage("share", &vec![0.0; n]);
        let rates = source_rates(params, state)?;
        let rain_map = ctx.storage("rain_map", state.rain_map.as_deref().unwrap_or(&[0.0]));
        let source_rate = ctx.storage("source_rate", if rates.is_empty() { &[0.0] } else { &rates });

        let increment_uniforms =
            ctx.uniform("water_increment", &IncrementUniforms::new(params, &dv, w, h, !rates.is_empty()));
        let pipeline = ctx.pipeline("water_increment", WATER_INCREMENT_WGSL)?;
        let bindings =
            bind(&ctx, "water_increment", &pipeline, &[&increment_uniforms, &water, &rain_map, &source_rate]);
        let increment = Kernel { pipeline, bindings };

        let flux_uniforms = ctx.uniform("water_flux", &FluxUniforms::new(params, &dv, w, h, pipes));
        let pipeline = ctx.pipeline("water_flux", WATER_FLUX_WGSL)?;
        let bindings = bind(&ctx, "water_flux", &pipeline, &[&flux_uniforms, &terrain, &water, &flux, &share]);
        let water_flux = Kernel { pipeline, bindings };

        Ok(Self { ctx, width: w, height: h, water, flux, share, increment, water_flux })
    }

    /// Encodes one stage's dispatch and submits it.
    pub fn run_stage(&mut self, stage: Stage) -> Result<(), SimError> {
        let kernel = match stage {
            Stage::WaterIncrement => &self.increment,
            Stage::WaterFlux => &self.water_flux,
            other => return Err(SimError::NotOnGpu(other.name())),
        };
        let mut encoder =
            self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(stage.name()) });
        {
            let mut pass = encoder
                .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(stage.name()), timestamp_writes: None });
            pass.set_pipeline(&kernel.pipeline);
            pass.set_bind_group(0, &kernel.bindings, &[]);
            pass.dispatch_workgroups(self.width.div_ceil(16) as u32, self.height.div_ceil(16) as u32, 1);
        }
        self.ctx.queue.submit([encoder.finish()]);
        Ok(())
    }

    /// Copies the GPU's depth and fluxes into `state`.
    pub fn read_into(&self, state: &mut State) -> Result<(), SimError> {
        let n = self.width * self.height;
        state.water = self.ctx.read(&self.water)?;
        let flat = self.ctx.read(&self.flux)?;
        for (e, f) in state.flux.iter_mut().enumerate() {
            f.copy_from_slice(&flat[e * n..(e + 1) * n]);
        }
        Ok(())
    }

    /// The sediment shares `water_flux` wrote (for comparison with the CPU's).
    pub fn read_share(&self) -> Result<Vec<f32>, SimError> {
        Ok(self.ctx.read(&self.share)?)
    }
}

impl From<GpuError> for SimError {
    fn from(e: GpuError) -> Self {
        SimError::Gpu(e.to_string())
    }
}
