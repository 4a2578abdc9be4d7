//! The erode viewer: watch a model erode a terrain in 3D, paint terrain, water, hardness and rain,
//! place river sources, tune every parameter live, save maps and sessions.
//!
//! Layers, each testable without a window:
//! - [`world`]: the document and the [`world::Action`]s that change it (brushes, sources,
//!   undo/redo, parameters, model and backend), and the model ticks;
//! - [`brush`], [`history`], [`session`], [`files`]: what edits, undo and files do;
//! - [`runner`]: where the world lives (a worker thread for the CPU model, the UI thread for the
//!   GPU one) so the window never waits for the model;
//! - [`camera`] and [`render`]: the orbit camera, picking, and the wgpu terrain/water renderer
//!   that reads the GPU simulator's buffers directly;
//! - [`app`]: the eframe window that maps pointer and keys to actions;
//! - [`sph_view`]: the SPH model's window (a mesh and particles instead of a heightmap).

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod app;
pub mod bench;
pub mod brush;
pub mod camera;
pub mod files;
pub mod history;
mod params_ui;
pub mod render;
pub mod runner;
pub mod session;
pub mod shade;
pub mod sph_view;
pub mod world;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pub use app::{Headless, ViewReport};
pub use world::{Action, BackendKind, ModelKind, Overlay, World};

/// How to start the viewer.
#[derive(Clone, Debug)]
pub struct ViewOptions {
    /// The world to open.
    pub world_from: WorldSource,
    /// Frames to run with the model playing before a screenshot and exit (0: interactive).
    pub frames: u64,
    /// Screenshot path for a headless run.
    pub screenshot: Option<PathBuf>,
    /// Backend for the grid model.
    pub backend: BackendKind,
    /// Window size, logical pixels.
    pub window: (f32, f32),
    /// The overlay shown first.
    pub overlay: Overlay,
    /// The sun and the ground's look, first.
    pub look: render::Look,
    /// Keep the model paused through a headless run's frames.
    pub paused: bool,
    /// The camera this many times closer to the terrain's centre (1: the whole terrain).
    pub zoom: f32,
    /// The heightmap model to run (`None`: the grid model, or the session's).
    pub model: Option<ModelKind>,
    /// Ticks (grid iterations, droplet batches, steps; SPH iterations) run on the CPU before the
    /// window opens: the same picture on every run, for screenshots.
    pub steps: u64,
}

/// Where the first world comes from.
#[derive(Clone, Debug)]
pub enum WorldSource {
    /// A heightmap or session file.
    File(PathBuf),
    /// A generated terrain of this size.
    Generated(usize),
    /// An SPH scene.
    Sph(sph_view::SphScene),
}

/// Why the viewer could not run.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// The input could not be opened.
    #[error("{0}")]
    Open(String),
    /// The window or its GPU could not start.
    #[error("cannot open the window: {0}")]
    Window(String),
    /// The screenshot could not be saved.
    #[error("screenshot: {0}")]
    Screenshot(String),
}

/// A world on a generated ridged terrain of `size` x `size` cells (1 m cells).
pub fn generated_world(size: usize) -> Result<World, String> {
    use erode::terrain::{TerrainKind, TerrainSpec, generate};
    let spec = TerrainSpec {
        kind: TerrainKind::Ridged,
        width: size,
        height: size,
        seed: 7,
        relief: size as f64 * 0.2,
        feature_size: size as f64 / 2.0,
        ..Default::default()
    };
    let map = generate(&spec).map_err(|e| e.to_string())?;
    World::new(&map.heights, Default::default(), Default::default()).map_err(|e| e.to_string())
}

/// Opens the window and runs until it closes (or, headless, until the screenshot is saved).
pub fn run(options: ViewOptions) -> Result<ViewReport, ViewError> {
    enum Opened {
        Terrain(Box<World>),
        Sph(Box<erode::contract::SphRun>, sph_view::SphScene, String),
    }
    let opened = match &options.world_from {
        WorldSource::File(p) => files::open(p).map(|w| Opened::Terrain(Box::new(w))),
        WorldSource::Generated(n) => generated_world(*n).map(|w| Opened::Terrain(Box::new(w))),
        WorldSource::Sph(scene) => scene.start().map(|(r, name)| Opened::Sph(Box::new(r), scene.clone(), name)),
    }
    .map_err(ViewError::Open)?;
    let opened = match opened {
        Opened::Terrain(mut world) => {
            if let Some(m) = options.model {
                world.apply(Action::SetModel(m)).map_err(|e| ViewError::Open(e.to_string()))?;
            }
            for _ in 0..options.steps {
                world.tick().map_err(|e| ViewError::Open(e.to_string()))?;
            }
            Opened::Terrain(world)
        }
        Opened::Sph(mut run, scene, name) => {
            if options.steps > 0 {
                use erode::contract::Model;
                run.advance(options.steps, &mut |_| {}).map_err(|e| ViewError::Open(e.to_string()))?;
            }
            Opened::Sph(run, scene, name)
        }
    };
    if let Some(p) = &options.screenshot {
        erode_io::check_output(p).map_err(|e| ViewError::Screenshot(e.to_string()))?;
    }
    let report = Arc::new(Mutex::new(ViewReport::default()));
    let headless = Headless {
        frames: options.frames,
        screenshot: options.screenshot.clone(),
        overlay: options.overlay,
        look: options.look,
        paused: options.paused,
        zoom: options.zoom,
    };
    let mut wgpu_options = eframe::egui_wgpu::WgpuConfiguration::default();
    if let eframe::egui_wgpu::WgpuSetup::CreateNew(c) = &mut wgpu_options.wgpu_setup {
        // the adapter's own limits: large grids need large storage buffers
        c.device_descriptor = Arc::new(|adapter| wgpu::DeviceDescriptor {
            label: Some("erode viewer"),
            required_limits: adapter.limits(),
            ..Default::default()
        });
    }
    let native = eframe::NativeOptions {
        viewport: eframe::egui::ViewportBuilder::default()
            .with_title("erode")
            .with_inner_size([options.window.0, options.window.1]),
        renderer: eframe::Renderer::Wgpu,
        wgpu_options,
        ..Default::default()
    };
    let r = report.clone();
    let backend = options.backend;
    eframe::run_native(
        "erode",
        native,
        Box::new(move |_cc| -> Result<Box<dyn eframe::App>, _> {
            Ok(match opened {
                Opened::Terrain(world) => Box::new(app::ViewerApp::new(*world, headless, r, backend)),
                Opened::Sph(run, scene, name) => Box::new(sph_view::SphApp::new(*run, scene, name, headless, r)),
            })
        }),
    )
    .map_err(|e| ViewError::Window(e.to_string()))?;
    let out = report.lock().map(|r| r.clone()).unwrap_or_default();
    if let Some(Err(e)) = &out.screenshot {
        return Err(ViewError::Screenshot(e.clone()));
    }
    if options.screenshot.is_some() && out.screenshot.is_none() {
        return Err(ViewError::Screenshot("the window closed before the screenshot was taken".into()));
    }
    Ok(out)
}
