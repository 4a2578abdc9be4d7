//! The droplet model on the GPU (feature `gpu`): one invocation per droplet (`shaders/life.wgsl`,
//! the CPU's `life`), deterministic for a seed.
//!
//! Droplets run in batches. Every droplet of a batch reads the terrain as it was at the batch's
//! start and adds what it erodes and deposits as integer quanta (2⁻²⁰ m) with atomic adds;
//! integer adds commute, so the GPU's scheduling cannot change a bit. `apply_deltas` then adds
//! the batch's changes to the terrain. The books are integer sums of the same quanta (eroded =
//! deposited + outflow exactly). Batches hold about one droplet per area a droplet's path can
//! touch ([`gpu_batch`]), so droplets of one batch rarely meet; unlike the CPU model they
//! do not see each other's changes. A droplet sees its own recent ones (a ring of its last 32
//! erosions and deposits, erosions within half a cell of a remembered one merged into it, added
//! to the heights it samples). Random streams are 32-bit per droplet, not
//! the CPU's: the same seed gives the same result on the GPU every time, but not the CPU's
//! droplets (`tests/gpu_droplet.rs` compares the volumes moved).

use std::sync::Arc;

use super::params::{Border, Params, StepRule};
use super::state::State;
use crate::error::SimError;
use crate::gpu::{GpuContext, GpuError, Kernel, kernel};

/// `life`'s shader.
pub const LIFE_WGSL: &str = include_str!("shaders/life.wgsl");
/// `apply_deltas`' shader.
pub const APPLY_DELTAS_WGSL: &str = include_str!("shaders/apply_deltas.wgsl");
/// `smooth_change`'s shader.
pub const SMOOTH_CHANGE_WGSL: &str = include_str!("shaders/smooth_change.wgsl");

/// Metres per quantum on the GPU: 2⁻²⁰ m, so a cell's change in one batch may reach ±2048 m in
/// an `i32`. One GPU quantum is 2¹² of the CPU's (2⁻³² m), so the books stay exact integers.
pub const GPU_QUANTUM: f64 = 1.0 / 1_048_576.0;
const CPU_QUANTA_PER_GPU_QUANTUM: i64 = 1 << 12;

/// Droplets per GPU batch on a map of `cells`: about one per area a droplet's path can touch
/// (`steps · (2⌈radius⌉ + 1)` cells), so droplets of one batch rarely meet, and at most
/// `batch_size`. Small maps with long-lived droplets get small batches: their droplets would all
/// cross each other's paths.
pub fn gpu_batch(rule: &StepRule, batch_size: u32, cells: usize) -> u64 {
    let path = u64::from(rule.steps.max(1)) * (2 * rule.radius.ceil() as u64 + 1);
    (cells as u64 / path).clamp(1, u64::from(batch_size.max(1)))
}

/// `life`'s parameters (WGSL `LifeUniforms`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct LifeUniforms {
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// 0 open, 1 closed, 2 wrap.
    pub border: u32,
    /// Index of the batch's first droplet (low 32 bits).
    pub first: u32,
    /// Droplets in the batch.
    pub count: u32,
    /// Seed, low 32 bits.
    pub seed_lo: u32,
    /// Seed, high 32 bits.
    pub seed_hi: u32,
    /// Most steps a droplet lives.
    pub max_lifetime: u32,
    /// 1: hardness map bound.
    pub has_hardness: u32,
    /// 1: droplets start in proportion to the rain map.
    pub has_spawn: u32,
    /// Own changes a droplet remembers (at most 32).
    pub events: u32,
    /// Padding.
    pub pad: u32,
    /// Share of its heading a droplet keeps against the gradient per step.
    pub inertia: f32,
    /// Capacity per metre of drop over a step, per unit speed and water.
    pub capacity: f32,
    /// Smallest drop over a step used in the capacity, m.
    pub min_drop: f32,
    /// Share of the excess deposited per step.
    pub deposition: f32,
    /// Share of the free capacity eroded per step.
    pub erosion: f32,
    /// `speed² ← speed² − gravity·Δh` (twice g).
    pub gravity: f32,
    /// Share of water lost per step.
    pub evaporation: f32,
    /// Brush radius, cells.
    pub radius: f32,
    /// Share of speed² kept against friction per step.
    pub speed_kept: f32,
    /// Speed a droplet starts with, m/s.
    pub initial_speed: f32,
    /// Erosion never digs below this height, m.
    pub floor: f32,
    /// Metres per quantum.
    pub quantum: f32,
    /// Drainage area per visit after one droplet, over `discharge_area` (divided by the
    /// droplet's index, at least a quarter of the cells; 0: off).
    pub visit_area: f32,
    /// Capacity × (1 + area)^this.
    pub discharge_exponent: f32,
    /// Padding.
    pub pad1: u32,
    /// Padding.
    pub pad2: u32,
}

/// `apply_deltas`' parameters (WGSL `ApplyUniforms`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ApplyUniforms {
    /// Cells.
    pub cells: u32,
    /// Padding.
    pub pad: [u32; 2],
    /// Metres per quantum.
    pub quantum: f32,
}

/// `smooth_change`'s parameters (WGSL `SmoothUniforms`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct SmoothUniforms {
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// 1: the map wraps.
    pub wrap: u32,
    /// Share of the batch's change spread over the 3 x 3 cells.
    pub share: f32,
    /// Metres per quantum.
    pub quantum: f32,
    /// Padding.
    pub pad: [u32; 3],
}

/// The droplet model's GPU simulator: buffers and pipelines built once; `run` encodes batches;
/// reading back is an explicit call.
pub struct GpuSim {
    ctx: Arc<GpuContext>,
    params: Params,
    width: usize,
    height: usize,
    batch: u64,
    terrain: wgpu::Buffer,
    eroded: wgpu::Buffer,
    deposited: wgpu::Buffer,
    books: wgpu::Buffer,
    flow: wgpu::Buffer,
    visits_before: wgpu::Buffer,
    life_uniforms: wgpu::Buffer,
    uniforms: LifeUniforms,
    life: Kernel,
    smooth: Kernel,
    apply: Kernel,
    /// The state as uploaded: its maps and books are the base the GPU's sums add to.
    base: State,
    droplets: u64,
}

impl GpuSim {
    /// Uploads `state` and builds both pipelines for `params` on `ctx`'s device.
    pub fn new(ctx: Arc<GpuContext>, params: &Params, state: &State) -> Result<Self, SimError> {
        let rule = params.step_rule(state.cell_size)?;
        if state.nodata.is_some() {
            return Err(SimError::NotOnGpu("nodata cells (the shaders have no holes in their domain)"));
        }
        let (w, h) = (state.width, state.height);
        let n = state.width * state.height;
        ctx.check_binding("droplet books buffer", (n * 6 * 4) as u64)?;
        let zeros = vec![0.0f32; n];
        let terrain = ctx.storage("droplet terrain", &state.terrain);
        // the shader reads each cell's share of its erosion (cpu.rs `erodibility`)
        let erodibility = state.hardness.as_deref().map(|h| super::cpu::erodibility(h, params.rock_erodibility));
        let hardness = ctx.storage("droplet erodibility", erodibility.as_deref().unwrap_or(&[1.0]));
        let spawn: Vec<f32> = match &state.rain {
            Some(rain) => {
                let mut total = 0.0f64;
                rain.iter()
                    .map(|&r| {
                        total += f64::from(r.max(0.0));
                        total as f32
                    })
                    .collect()
            }
            None => vec![0.0],
        };
        if state.rain.is_some() && spawn.last().is_none_or(|&t| t <= 0.0) {
            return Err(SimError::NoRain);
        }
        let spawn_buf = ctx.storage("droplet spawn", &spawn);
        let eroded_delta = ctx.storage("droplet eroded delta", &zeros);
        let deposited_delta = ctx.storage("droplet deposited delta", &zeros);
        let eroded = ctx.storage("droplet eroded", &state.eroded);
        let deposited = ctx.storage("droplet deposited", &state.deposited);
        let outflow_delta = ctx.storage("droplet outflow delta", &zeros);
        let books = ctx.storage("droplet books", &vec![0.0f32; 6 * n]);
        // visits so far, as whole counts (the discharge the droplets read; the buffer holds u32s)
        let visits: Vec<f32> = state.flow.iter().map(|&v| f32::from_bits(v.max(0.0) as u32)).collect();
        let flow = ctx.storage("droplet flow", &visits);
        // the visits as the batch starts: what the droplets read, so the GPU's scheduling (which
        // droplet of the batch counted its visit first) cannot change a bit
        let visits_before = ctx.storage("droplet visits at batch start", &visits);
        let change = ctx.storage("droplet batch change", &zeros);
        let beyond = ctx.storage("droplet ground beyond the edge", &state.ground_beyond());
        let p = params;
        let uniforms = LifeUniforms {
            width: w as u32,
            height: h as u32,
            border: match p.border {
                Border::Open => 0,
                Border::Closed => 1,
                Border::Wrap => 2,
            },
            first: 0,
            count: 0,
            seed_lo: p.seed as u32,
            seed_hi: (p.seed >> 32) as u32,
            max_lifetime: rule.steps,
            has_hardness: u32::from(state.hardness.is_some()),
            has_spawn: u32::from(state.rain.is_some()),
            events: 32,
            pad: 0,
            inertia: rule.inertia as f32,
            capacity: rule.capacity as f32,
            min_drop: rule.min_drop as f32,
            deposition: rule.deposition as f32,
            erosion: rule.erosion as f32,
            gravity: rule.gravity as f32,
            evaporation: rule.evaporation as f32,
            radius: rule.radius as f32,
            speed_kept: rule.speed_kept as f32,
            initial_speed: rule.initial_speed as f32,
            // finite: WGSL leaves infinities to the implementation
            floor: p.min_height.max(-1e30) as f32,
            quantum: GPU_QUANTUM as f32,
            // as the CPU's `CpuSim::visit_area`
            visit_area: if p.discharge_exponent > 0.0 {
                (n as f64 * state.cell_size.area() / p.discharge_area) as f32
            } else {
                0.0
            },
            discharge_exponent: p.discharge_exponent as f32,
            pad1: 0,
            pad2: 0,
        };
        let life_uniforms = ctx.uniform("life", &uniforms);
        let apply_uniforms =
            ctx.uniform("apply_deltas", &ApplyUniforms { cells: n as u32, pad: [0; 2], quantum: GPU_QUANTUM as f32 });
        let life = kernel(
            &ctx,
            "life",
            LIFE_WGSL,
            &[
                &life_uniforms,
                &terrain,
                &hardness,
                &spawn_buf,
                &eroded_delta,
                &outflow_delta,
                &flow,
                &deposited_delta,
                &visits_before,
                &beyond,
            ],
        )?;
        let smooth_uniforms = ctx.uniform(
            "smooth_change",
            &SmoothUniforms {
                width: w as u32,
                height: h as u32,
                wrap: u32::from(p.border == Border::Wrap),
                share: p.smoothing as f32,
                quantum: GPU_QUANTUM as f32,
                pad: [0; 3],
            },
        );
        let smooth = kernel(
            &ctx,
            "smooth_change",
            SMOOTH_CHANGE_WGSL,
            &[&smooth_uniforms, &eroded_delta, &deposited_delta, &change],
        )?;
        let apply = kernel(
            &ctx,
            "apply_deltas",
            APPLY_DELTAS_WGSL,
            &[
                &apply_uniforms,
                &terrain,
                &eroded_delta,
                &deposited_delta,
                &eroded,
                &deposited,
                &outflow_delta,
                &books,
                &change,
            ],
        )?;
        let batch = gpu_batch(&rule, p.batch_size, n);
        Ok(Self {
            ctx,
            params: p.clone(),
            width: w,
            height: h,
            batch,
            terrain,
            eroded,
            deposited,
            books,
            flow,
            visits_before,
            life_uniforms,
            uniforms,
            life,
            smooth,
            apply,
            base: state.clone(),
            droplets: state.droplets,
        })
    }

    /// Droplets per batch.
    pub fn batch_size(&self) -> u64 {
        self.batch
    }

    /// Droplets run so far (the state's at upload included).
    pub fn droplets(&self) -> u64 {
        self.droplets
    }

    /// Waits until the GPU has finished everything submitted (for timing).
    pub fn finish(&self) -> Result<(), SimError> {
        self.ctx.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| GpuError::Readback(e.to_string()))?;
        Ok(())
    }

    /// Runs `count` more droplets. Batches are aligned to multiples of the batch size counted
    /// from the first droplet, so stopping at a multiple and resuming gives a straight run.
    pub fn run(&mut self, count: u64) -> Result<(), SimError> {
        let end = self.droplets + count;
        let cells = (self.width * self.height) as u32;
        let groups = cells.div_ceil(256);
        let (gx, gy) = (groups.min(65_535), groups.div_ceil(65_535));
        while self.droplets < end {
            let batch_end = ((self.droplets / self.batch + 1) * self.batch).min(end);
            let mut u = self.uniforms;
            u.first = self.droplets as u32;
            u.count = (batch_end - self.droplets) as u32;
            self.ctx.queue.write_buffer(&self.life_uniforms, 0, bytemuck::bytes_of(&u));
            let mut encoder =
                self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("droplets") });
            if self.uniforms.visit_area > 0.0 {
                encoder.copy_buffer_to_buffer(&self.flow, 0, &self.visits_before, 0, self.flow.size());
            }
            {
                let mut pass = encoder
                    .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("life"), timestamp_writes: None });
                pass.set_pipeline(&self.life.pipeline);
                pass.set_bind_group(0, &self.life.bindings, &[]);
                pass.dispatch_workgroups(u.count.div_ceil(64), 1, 1);
            }
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("smooth_change"),
                    timestamp_writes: None,
                });
                pass.set_pipeline(&self.smooth.pipeline);
                pass.set_bind_group(0, &self.smooth.bindings, &[]);
                pass.dispatch_workgroups(gx, gy, 1);
            }
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("apply_deltas"),
                    timestamp_writes: None,
                });
                pass.set_pipeline(&self.apply.pipeline);
                pass.set_bind_group(0, &self.apply.bindings, &[]);
                pass.dispatch_workgroups(gx, gy, 1);
            }
            self.ctx.queue.submit([encoder.finish()]);
            self.droplets = batch_end;
        }
        Ok(())
    }

    /// Copies the terrain, maps and books into `state`.
    pub fn read_into(&self, state: &mut State) -> Result<(), SimError> {
        let n = self.width * self.height;
        let terrain = self.ctx.read(&self.terrain)?;
        let words: Vec<u32> = self.ctx.read(&self.books)?.iter().map(|v| v.to_bits()).collect();
        let flow: Vec<u32> = self.ctx.read(&self.flow)?.iter().map(|v| v.to_bits()).collect();
        let base = &self.base;
        // 64-bit books per cell as (low, high) words
        let sum = |k: usize| -> i64 {
            words[2 * k * n..2 * (k + 1) * n].chunks_exact(2).map(|w| (i64::from(w[1]) << 32) | i64::from(w[0])).sum()
        };
        state.terrain = terrain;
        state.eroded = self.ctx.read(&self.eroded)?;
        state.deposited = self.ctx.read(&self.deposited)?;
        state.flow = flow.iter().map(|&v| v as f32).collect();
        state.books.eroded = base.books.eroded + sum(0) * CPU_QUANTA_PER_GPU_QUANTUM;
        state.books.deposited = base.books.deposited + sum(1) * CPU_QUANTA_PER_GPU_QUANTUM;
        state.books.outflow = base.books.outflow + sum(2) * CPU_QUANTA_PER_GPU_QUANTUM;
        state.books.steps = base.books.steps;
        state.droplets = self.droplets;
        Ok(())
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }
}
