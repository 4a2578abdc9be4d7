//! `erode view`: the interactive viewer, or a headless run that saves a screenshot.

use std::path::PathBuf;

use anyhow::{Context, bail};
use erode_viewer::{BackendKind, ViewOptions, WorldSource};

/// Open the interactive viewer: watch the model erode, paint terrain and water, place river
/// sources, tune parameters live, save maps and sessions; or watch an SPH scene erode its mesh.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  erode view dem.tif
  erode view session.erode
  erode view                                   (a generated 256 x 256 terrain)
  xvfb-run -a erode view dem.tif --frames 60 --screenshot shot.png
  erode view dem.tif --overlay flow --sun 300,15            (flow over the ground, a low evening sun)
  erode view --size 1024 --bench 200           (frame time of the GPU backend, no window)
  xvfb-run -a erode view dem.tif --model droplet --steps 20 --paused --frames 3 --overlay erosion --screenshot d.png
  erode view --scene lake                      (the SPH model: mesh and particles)
  erode view --scene tunnel --particles 3000 --faces 4000
  erode view cave.obj                          (a mesh, water over its middle)
  erode view cave.obj --scene cave.toml        (a scene file: fluid blocks, parameters)
  erode view sph-snapshot                      (an SPH session saved from the viewer)
  erode view out                               (the output folder of `erode simulate sph`)

Mouse: left-drag paints with the brush (or orbits with the camera tool), right-drag orbits,
middle-drag pans, wheel zooms. Keys: space play/pause, Ctrl+Z undo, Ctrl+Y redo.")]
pub struct Args {
    /// Heightmap (any format `erode info` reads), session (.erode), a mesh (.obj, .ply, .stl: the
    /// SPH model), a folder holding a saved SPH session, or the output folder of `erode simulate
    /// sph` (its newest checkpoint). Default: a generated terrain.
    input: Option<PathBuf>,
    /// An SPH scene: lake, tunnel, tank or a scene file (.toml; with INPUT as its surface).
    #[arg(long)]
    scene: Option<String>,
    /// SPH: particles (0: the scene's).
    #[arg(long, default_value_t = 0)]
    particles: usize,
    /// SPH: about this many faces (0: the scene's).
    #[arg(long, default_value_t = 0)]
    faces: usize,
    /// Run this many frames with the model playing, save --screenshot and exit.
    #[arg(long, default_value_t = 0)]
    frames: u64,
    /// Where a headless run saves its screenshot (PNG). Needs --frames.
    #[arg(long)]
    screenshot: Option<PathBuf>,
    /// Backend of the grid model: cpu or gpu (the window's device).
    #[arg(long, default_value = "cpu")]
    backend: String,
    /// Size of the generated terrain when no input is given, cells.
    #[arg(long, default_value_t = 256)]
    size: usize,
    /// Window size, WIDTHxHEIGHT logical pixels.
    #[arg(long, default_value = "1280x800")]
    window: String,
    /// The overlay shown first: erosion, deposition, flow, velocity, hardness, sediment,
    /// rain-map, uplift-map (a colour bar in the panel gives its range and unit).
    #[arg(long, value_name = "NAME")]
    overlay: Option<String>,
    /// The ground: materials (rock, scree, soil, grass, sand, snow with sun shadows and sky
    /// light) or height-colours (a colour ramp by height).
    #[arg(long, default_value = "materials", value_parser = ["materials", "height-colours"])]
    ground: String,
    /// The sun: `AZIMUTH,HEIGHT` in degrees (azimuth clockwise from north, height above the
    /// horizon).
    #[arg(long, value_name = "AZ,HEIGHT", default_value = "225,35", allow_negative_numbers = true)]
    sun: String,
    /// Keep the model paused through --frames (a screenshot of the terrain as it is).
    #[arg(long)]
    paused: bool,
    /// Start with the camera this many times closer to the terrain's centre (1: all of it).
    #[arg(long, default_value_t = 1.0, value_name = "FACTOR")]
    zoom: f32,
    /// The heightmap model to run first: grid, droplet, stream-power, thermal (the panel
    /// switches it later).
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// Run this many ticks (grid iterations, droplet batches, steps; SPH iterations) before the
    /// window opens: the same picture on every run, for screenshots with --paused.
    #[arg(long, default_value_t = 0, value_name = "N")]
    steps: u64,
    /// Time this many frames of the grid model on the GPU without a window (drawn offscreen at
    /// --window's size) and print the frame time: the model's tick, the drawing, the read-back.
    #[arg(long, value_name = "FRAMES", conflicts_with_all = ["frames", "screenshot", "scene", "steps"])]
    bench: Option<u64>,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    if a.screenshot.is_some() && a.frames == 0 {
        bail!("--screenshot needs --frames N (the frames to run before the shot)");
    }
    if !(8..=8192).contains(&a.size) {
        bail!("--size {}: expected 8..=8192 cells", a.size);
    }
    let backend = match a.backend.as_str() {
        "cpu" => BackendKind::Cpu,
        "gpu" => BackendKind::Gpu,
        other => bail!("--backend {other}: expected cpu or gpu"),
    };
    let (w, h) = a
        .window
        .split_once('x')
        .and_then(|(w, h)| Some((w.trim().parse::<f32>().ok()?, h.trim().parse::<f32>().ok()?)))
        .filter(|(w, h)| *w >= 200.0 && *h >= 150.0)
        .with_context(|| format!("--window {}: expected WIDTHxHEIGHT, at least 200x150", a.window))?;
    if let Some(p) = &a.input
        && !p.exists()
    {
        bail!("{}: no such file", p.display());
    }
    let overlay = match &a.overlay {
        None => erode_viewer::Overlay::None,
        Some(name) => erode_viewer::Overlay::from_name(name).with_context(|| {
            let names: Vec<String> =
                erode_viewer::Overlay::ALL.iter().skip(1).map(|o| o.label().replace(' ', "-")).collect();
            format!("--overlay {name}: one of {}", names.join(", "))
        })?,
    };
    let sun = a
        .sun
        .split_once(',')
        .and_then(|(az, alt)| Some((az.trim().parse::<f32>().ok()?, alt.trim().parse::<f32>().ok()?)))
        .filter(|&(az, alt)| az.is_finite() && (0.0..=90.0).contains(&alt))
        .with_context(|| format!("--sun {}: expected AZIMUTH,HEIGHT in degrees, the height 0 to 90", a.sun))?;
    let look = erode_viewer::render::Look {
        sun_azimuth_deg: sun.0.rem_euclid(360.0),
        sun_altitude_deg: sun.1,
        materials: a.ground == "materials",
    };
    if !(a.zoom.is_finite() && (1.0..=1000.0).contains(&a.zoom)) {
        bail!("--zoom {}: expected 1 to 1000", a.zoom);
    }
    let model = match &a.model {
        None => None,
        Some(name) => Some(erode_viewer::ModelKind::named(name).with_context(|| {
            let names: Vec<&str> = erode_viewer::ModelKind::all().iter().map(|m| m.info().name).collect();
            format!("--model {name}: one of {}", names.join(", "))
        })?),
    };
    if let Some(frames) = a.bench {
        return bench(a.input.as_deref(), a.size, frames, (w, h), look);
    }
    let options = ViewOptions {
        world_from: match (a.input, a.scene) {
            (Some(dir), None) if erode_viewer::sph_view::is_session(&dir) => {
                WorldSource::Sph(erode_viewer::sph_view::open_session(&dir).map_err(anyhow::Error::msg)?)
            }
            (Some(dir), None) if erode_viewer::sph_view::is_sph_output(&dir) => {
                WorldSource::Sph(erode_viewer::sph_view::open_output(&dir).map_err(anyhow::Error::msg)?)
            }
            (input, scene) if scene.is_some() || input.as_deref().is_some_and(erode_io::scene::is_mesh) => {
                let scene = erode_viewer::sph_view::SphScene {
                    input,
                    scene,
                    particles: a.particles,
                    faces: a.faces,
                    ..Default::default()
                };
                WorldSource::Sph(scene)
            }
            (Some(p), _) => WorldSource::File(p),
            (None, _) => WorldSource::Generated(a.size),
        },
        frames: a.frames,
        screenshot: a.screenshot.clone(),
        backend,
        window: (w, h),
        overlay,
        look,
        paused: a.paused,
        zoom: a.zoom,
        model,
        steps: a.steps,
    };
    if let (WorldSource::Sph(_), Some(name)) = (&options.world_from, &a.model) {
        bail!("--model {name}: a mesh or SPH scene runs the SPH model");
    }
    let report = erode_viewer::run(options)?;
    if a.frames > 0 {
        eprintln!(
            "{} frames, {:.1} ms per frame, {} iterations or droplets{}",
            report.frames,
            report.mean_frame_ms,
            report.progress,
            a.screenshot.map(|p| format!(", screenshot {}", p.display())).unwrap_or_default()
        );
    }
    Ok(())
}

/// `--bench`: frame times of the grid model on the GPU, drawn offscreen.
fn bench(
    input: Option<&std::path::Path>,
    size: usize,
    frames: u64,
    window: (f32, f32),
    look: erode_viewer::render::Look,
) -> anyhow::Result<()> {
    if frames == 0 {
        bail!("--bench 0: expected at least one frame");
    }
    let world = match input {
        Some(p) => erode_viewer::files::open(p),
        None => erode_viewer::generated_world(size),
    }
    .map_err(anyhow::Error::msg)?;
    let pixels = (window.0 as u32, window.1 as u32);
    let t = erode_viewer::bench::frame_times(world, frames, pixels, look).map_err(anyhow::Error::msg)?;
    println!(
        "{} x {} cells drawn at {} x {} px on {}, {} grid iterations a frame, {} frames:\n  \
         frame {:.2} ms ({:.0} fps, the longest {:.1} ms): model {:.2} ms, drawing {:.2} ms ({:.0} % of a frame), \
         shading pass {:.2} ms (every fourth frame while playing), read-back {:.2} ms every tenth frame",
        t.cells.0,
        t.cells.1,
        t.pixels.0,
        t.pixels.1,
        t.adapter,
        t.iterations_per_frame,
        t.frames,
        t.frame_ms,
        t.fps(),
        t.longest_frame_ms,
        t.model_ms,
        t.render_ms,
        t.render_share() * 100.0,
        t.shade_ms,
        t.read_back_ms,
    );
    Ok(())
}
