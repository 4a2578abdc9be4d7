//! Frame time without a window: the grid model on the GPU backend stepped and drawn offscreen,
//! frame after frame, as the window's GPU runner does (a tick, the terrain drawn from the
//! simulator's buffers, the CPU copy read back every tenth frame), timed apart and together.
//! The window's own cost (egui's panels and one textured quad) is left out.

use std::sync::Arc;
use std::time::Instant;

use erode::gpu::GpuContext;

use crate::app::{frame_camera, range};
use crate::camera::Placement;
use crate::render::{FrameSettings, Look, TerrainRenderer};
use crate::runner::Snapshot;
use crate::world::{Overlay, World};

/// How long frames took, ms: each piece alone as the median of its frames, whole frames as their
/// mean (one in ten reads the state back).
#[derive(Clone, Debug)]
pub struct FrameTimes {
    /// The adapter that drew them.
    pub adapter: String,
    /// Grid size, cells.
    pub cells: (usize, usize),
    /// The image drawn, pixels.
    pub pixels: (u32, u32),
    /// Grid iterations per frame (the world's `iterations_per_tick`).
    pub iterations_per_frame: u32,
    /// Frames timed in each phase.
    pub frames: u64,
    /// A whole frame: the tick, the drawing and, every tenth frame, the read-back.
    pub frame_ms: f64,
    /// The longest whole frame (one that reads back, as a rule).
    pub longest_frame_ms: f64,
    /// The model's tick alone.
    pub model_ms: f64,
    /// The drawing alone, the light as it was (a camera move).
    pub render_ms: f64,
    /// The shading pass (the sun's shadows and the sky's occlusion) on top of the drawing; in a
    /// whole frame it runs every fourth frame while the model plays.
    pub shade_ms: f64,
    /// Reading the state back to the CPU (every tenth frame in the window).
    pub read_back_ms: f64,
}

impl FrameTimes {
    /// Frames per second of a whole frame.
    pub fn fps(&self) -> f64 {
        1e3 / self.frame_ms.max(1e-9)
    }

    /// The drawing's share of a whole frame.
    pub fn render_share(&self) -> f64 {
        self.render_ms / self.frame_ms.max(1e-9)
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Times `frames` frames of `world` on a headless GPU context, drawn at `pixels` with `look`:
/// the tick alone, the drawing alone, the read-back alone, then whole frames. Each timed piece
/// waits for the device to finish.
pub fn frame_times(mut world: World, frames: u64, pixels: (u32, u32), look: Look) -> Result<FrameTimes, String> {
    let ctx = Arc::new(GpuContext::headless().map_err(|e| e.to_string())?);
    world.set_backend(Some(ctx.clone())).map_err(|e| e.to_string())?;
    let (width, height) = (world.state().width, world.state().height);
    let mut renderer = TerrainRenderer::new(&ctx.device, width, height);
    renderer.ensure_target(&ctx.device, pixels);
    let snapshot = Snapshot::of(&world, Overlay::None, true, 0.0);
    let camera = frame_camera(&snapshot, 1.0);
    let placement = Placement { width, height, cell: snapshot.cell, exaggeration: 1.0 };
    let mut terrain = snapshot.terrain.clone();
    let wait = |ctx: &GpuContext| {
        let _ = ctx.device.poll(wgpu::PollType::wait_indefinitely());
    };
    let tick = |world: &mut World| world.tick().map(|_| ()).map_err(|e| e.to_string());
    let draw = |renderer: &mut TerrainRenderer, world: &World, terrain: &[f32], look: Look| {
        renderer.bind_fields(&ctx.device, world.gpu_sim().map(|sim| sim.field_buffers()));
        let settings = FrameSettings {
            camera,
            placement,
            height_range: range(terrain),
            overlay_range: None,
            brush: None,
            water: true,
            look,
            water_clock: 0.0,
        };
        renderer.draw(&ctx.device, &ctx.queue, &settings);
    };
    let read_back = |world: &mut World| -> Result<Arc<Vec<f32>>, String> {
        world.sync_view_from_gpu(Overlay::None).map_err(|e| e.to_string())?;
        Ok(Snapshot::of(world, Overlay::None, true, 0.0).terrain)
    };
    // warm up: pipelines, buffers, the first submissions
    for _ in 0..5 {
        tick(&mut world)?;
        renderer.fields_changed();
        draw(&mut renderer, &world, &terrain, look);
        wait(&ctx);
    }
    let timed = |f: &mut dyn FnMut() -> Result<(), String>| -> Result<Vec<f64>, String> {
        let mut times = Vec::new();
        for _ in 0..frames {
            let t = Instant::now();
            f()?;
            wait(&ctx);
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        Ok(times)
    };
    let model = timed(&mut || tick(&mut world))?;
    let render = timed(&mut || {
        draw(&mut renderer, &world, &terrain, look);
        Ok(())
    })?;
    // the sun moving a little each frame: the shading pass runs every time
    let mut sun = look;
    let shaded = timed(&mut || {
        sun.sun_azimuth_deg += 0.01;
        draw(&mut renderer, &world, &terrain, sun);
        Ok(())
    })?;
    // each read after a tick (a read with nothing new reads nothing)
    let mut reads = Vec::new();
    for _ in 0..frames.div_ceil(10) {
        tick(&mut world)?;
        wait(&ctx);
        let t = Instant::now();
        read_back(&mut world)?;
        reads.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let mut k = 0u64;
    let whole = timed(&mut || {
        tick(&mut world)?;
        k += 1;
        if k.is_multiple_of(10) {
            terrain = read_back(&mut world)?;
        }
        renderer.fields_changed();
        draw(&mut renderer, &world, &terrain, look);
        Ok(())
    })?;
    let render_ms = median(render);
    Ok(FrameTimes {
        adapter: ctx.adapter.name.clone(),
        cells: (width, height),
        pixels,
        iterations_per_frame: world.iterations_per_tick,
        frames,
        frame_ms: whole.iter().sum::<f64>() / whole.len().max(1) as f64,
        longest_frame_ms: whole.iter().copied().fold(0.0, f64::max),
        model_ms: median(model),
        render_ms,
        shade_ms: (median(shaded) - render_ms).max(0.0),
        read_back_ms: median(reads),
    })
}
