use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use erode::models::grid::{self, CpuSim, StartMaps, State};
use erode::preview::{PreviewStyle, render};
use erode_io::Format;
use serde_json::json;

use crate::input::InputArgs;
use crate::progress;

/// Erode a heightmap with a model and write the results into a folder.
#[derive(clap::Args)]
#[command(after_help = "Outputs in OUTDIR: height, water, sediment, hardness, erosion, deposition, flow, velocity
(each in every --format), preview.png and report.json; checkpoints in OUTDIR/checkpoints.

Examples:
  erode simulate grid t.tif -o out --iterations 1000
  erode simulate grid dem.tif --params grid.toml --set rain_rate=0.01 --set pipes=8 -o out
  erode simulate grid t.tif -o out --iterations 300 --checkpoint-every 100
  erode simulate grid t.tif -o out --iterations 600 --resume
  erode simulate grid t.tif -o out --backend gpu            (see erode gpu-info)
  erode simulate droplet t.tif -o out --droplets-per-cell 2 --seed 3 --set radius=6
  erode simulate droplet t.tif -o out --preset gentle
  erode simulate droplet t.tif -o out --rain-map rain.png --hardness-map rock.png
  erode simulate sph --scene tunnel --iterations 2000 -o out
  erode simulate sph --scene lake --particles 12528 --faces 9068 --iterations 500 -o out
  erode simulate sph cave.obj --scene cave.toml --iterations 5000 -o out
  erode simulate sph --scene lake --iterations 4000 --checkpoint-every 1000 -o out   (then --resume)
SPH outputs: mesh.obj, mesh.ply, mesh.glb (eroded, per-vertex erosion/deposition), start.ply,
particles.ply, snapshots/particles-N.ply (--snapshot-every), report.json; checkpoints in
OUTDIR/checkpoints.")]
pub struct Args {
    /// The model.
    model: Model,
    /// Input heightmap (sph: a mesh .obj/.ply/.stl or a heightmap; optional with --scene).
    input_file: Option<PathBuf>,
    /// Output folder (created if missing).
    #[arg(short, long)]
    output: PathBuf,
    /// Start from a named parameter set: grid rivers, gentle, badlands, alpine, classic (default
    /// rivers); droplet default, gentle, beyer (see `erode params MODEL --preset NAME`).
    /// --params and --set apply on top.
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,
    /// Parameter file (TOML; see `erode params grid`).
    #[arg(long)]
    params: Option<PathBuf>,
    /// Override a parameter, `key=value` (repeatable), applied after --params.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Iterations in total (grid, sph; with --resume, including those already done).
    #[arg(long, default_value_t = 1000)]
    iterations: u64,
    /// Grid: run until this much storm has been simulated, in seconds (or with a unit: 90s,
    /// 30min, 2h), instead of a number of iterations; the terrain changes as in
    /// `morphological_factor` times as long. With --resume, in total.
    #[arg(long, value_name = "TIME", conflicts_with = "iterations")]
    duration: Option<String>,
    /// Droplets in total (droplet; with --resume, including those already done). Default: one
    /// per cell (see --droplets-per-cell).
    #[arg(long)]
    droplets: Option<u64>,
    /// Droplets per cell of the map, in total (droplet): each droplet is the rain of one cell,
    /// so the same figure gives the same rain per m² at any cell size. Default 1.
    #[arg(long, value_name = "D", conflicts_with = "droplets", allow_negative_numbers = true)]
    droplets_per_cell: Option<f64>,
    /// Seed of the random parts (overrides the parameter `seed`).
    #[arg(long)]
    seed: Option<u64>,
    /// Worker threads (default: one per core). Results are identical for any count.
    #[arg(long)]
    threads: Option<usize>,
    /// Backend.
    #[arg(long, value_enum, default_value_t = Backend::Cpu)]
    backend: Backend,
    /// Output formats, comma-separated: tif, png, exr, pgm, npy, r16, r32.
    #[arg(long, value_delimiter = ',', default_value = "tif")]
    format: Vec<String>,
    /// Write a checkpoint every N iterations (0: only at the end).
    #[arg(long, default_value_t = 0)]
    checkpoint_every: u64,
    /// Continue from the newest checkpoint in OUTDIR up to --iterations in total.
    #[arg(long)]
    resume: bool,
    /// Hardness map (0..1, 1 erodes least): grid, sets hardness_mode = "map" (give it again with
    /// --resume: the mode is a parameter); droplet, scales each cell's erosion (kept in the
    /// checkpoint, so --resume needs it not again).
    #[arg(long)]
    hardness_map: Option<PathBuf>,
    /// Rain map (>= 0): grid, for rain_mode = "map"; droplet, where droplets start (in proportion).
    #[arg(long)]
    rain_map: Option<PathBuf>,
    /// SPH: lake, tunnel, tank, or a scene file (TOML: mesh, fluid blocks, parameters).
    #[arg(long)]
    scene: Option<String>,
    /// SPH: particles (0: the scene's; lake and tunnel default to Skorkovská et al.'s 12,528).
    #[arg(long, default_value_t = 0)]
    particles: usize,
    /// SPH: about this many faces for a built-in scene or a heightmap (0: the scene's).
    #[arg(long, default_value_t = 0)]
    faces: usize,
    /// SPH: write particles and the mesh every N iterations (0: only at the end).
    #[arg(long, default_value_t = 0)]
    snapshot_every: u64,
    #[command(flatten)]
    input: InputArgs,
}

#[derive(clap::ValueEnum, Clone, Copy, PartialEq)]
enum Model {
    Grid,
    Droplet,
    Sph,
}

#[derive(clap::ValueEnum, Clone, Copy, PartialEq)]
enum Backend {
    /// Rayon on the CPU (every option).
    Cpu,
    /// wgpu compute shaders (see `erode gpu-info`; the grid model without semi-Lagrangian
    /// transport, buckets or smoothing).
    Gpu,
    /// The GPU when there is one and it runs these options, else the CPU (and the CPU for
    /// droplets on maps too small for many to run at once).
    Auto,
}

/// Fewest droplets per GPU batch for `auto` to pick the GPU: fewer cannot fill one (a GPU keeps
/// thousands of invocations in flight).
const MIN_GPU_DROPLET_BATCH: u64 = 1024;

/// The GPU simulator `start` builds when the backend asks for one: `None` on the CPU; with
/// `auto`, `None` (and a note) when it cannot be built.
fn on_backend<T>(
    backend: Backend,
    quiet: bool,
    start: impl FnOnce() -> anyhow::Result<T>,
) -> anyhow::Result<Option<T>> {
    match backend {
        Backend::Cpu => Ok(None),
        Backend::Gpu => start().map(Some),
        Backend::Auto => match start() {
            Ok(g) => Ok(Some(g)),
            Err(e) => {
                if !quiet {
                    eprintln!("erode: running on the CPU: {e}");
                }
                Ok(None)
            }
        },
    }
}

/// The grid model on the GPU, or why not.
fn start_gpu(params: &grid::Params, st: &State) -> anyhow::Result<(grid::gpu::GpuSim, String)> {
    let ctx = erode::gpu::GpuContext::headless()?;
    let adapter = ctx.adapter.name.clone();
    let sim = grid::gpu::GpuSim::new(std::sync::Arc::new(ctx), params, st)?;
    Ok((sim, adapter))
}

/// Checkpoint files named `<prefix><count>.ckpt` in `dir`, oldest first.
fn checkpoints_of(dir: &Path, prefix: &str) -> Vec<(u64, PathBuf)> {
    let mut v: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            let name = p.file_name()?.to_str()?;
            let it = name.strip_prefix(prefix)?.strip_suffix(".ckpt")?.parse().ok()?;
            Some((it, p))
        })
        .collect();
    v.sort();
    v
}

/// Writes `bytes` as checkpoint `<prefix><count>.ckpt` in `dir`, atomically, keeping the two
/// newest (the new one and the one before, in case the new one is damaged later).
pub(crate) fn write_checkpoint(dir: &Path, prefix: &str, count: u64, bytes: &[u8]) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let path = dir.join(format!("{prefix}{count:012}.ckpt"));
    erode_io::write_atomic(&path, bytes)?;
    let all = checkpoints_of(dir, prefix);
    for (_, old) in all.iter().take(all.len().saturating_sub(2)) {
        let _ = std::fs::remove_file(old);
    }
    Ok(path)
}

/// The bytes of the newest checkpoint `<prefix>*.ckpt` in `dir`, and its path.
pub(crate) fn newest_checkpoint(dir: &Path, prefix: &str) -> anyhow::Result<(Vec<u8>, PathBuf)> {
    let Some((_, path)) = checkpoints_of(dir, prefix).pop() else {
        bail!("{}: no checkpoint to resume from", dir.display());
    };
    let bytes = std::fs::read(&path).with_context(|| format!("{}: cannot read", path.display()))?;
    Ok((bytes, path))
}

/// The context of a checkpoint that cannot be read: its path, and the older one to fall back on
/// if there is one.
pub(crate) fn unreadable_checkpoint(dir: &Path, prefix: &str, path: &Path) -> String {
    let all = checkpoints_of(dir, prefix);
    match all.iter().rev().find(|(_, p)| p != path) {
        Some((_, older)) => format!(
            "{} (an older checkpoint, {}, may be intact: remove this one to resume from it)",
            path.display(),
            older.display()
        ),
        None => path.display().to_string(),
    }
}

/// A checkpoint must fit the input it resumes.
fn check_same_size(path: &Path, got: (usize, usize), terrain: &erode::Grid<f32>) -> anyhow::Result<()> {
    if got != (terrain.width(), terrain.height()) {
        bail!(
            "{}: checkpoint is {} x {}, the input {} x {}",
            path.display(),
            got.0,
            got.1,
            terrain.width(),
            terrain.height()
        );
    }
    Ok(())
}

/// Says, unless quiet, how the input's nodata cells take part: outside the domain, with their
/// edges open or closed (`nodata_border`).
fn note_nodata(map: &erode::Heightmap, open: bool, quiet: bool) {
    let n = map.nodata_count();
    if n > 0 && !quiet {
        let edges = if open { "open: what flows into them leaves, booked as outflow" } else { "closed" };
        eprintln!("erode: note: {n} nodata cells are outside the domain; their edges are {edges} (nodata_border)");
    }
}

/// Most iterations a `--duration` may stand for (more means a time step far below the usual:
/// gravity or cells out of scale).
const MAX_DURATION_ITERATIONS: f64 = 1e8;

/// Makes the output folder (once every check has passed, so a refused run leaves none) and
/// checks that files can be made in it.
pub(crate) fn create_output_folder(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create the output folder", dir.display()))?;
    erode_io::check_output(&dir.join("report.json"))?;
    crate::output::remove_stale_temporaries(dir);
    Ok(())
}

/// The worker threads of a run (`--threads`, default one per core).
pub(crate) fn thread_pool(threads: Option<usize>) -> anyhow::Result<rayon::ThreadPool> {
    let mut b = rayon::ThreadPoolBuilder::new();
    if let Some(n) = threads {
        if n == 0 {
            bail!("--threads must be at least 1");
        }
        // results are the same for any count: threads beyond the cores only cost memory
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        let most = (4 * cores).max(16);
        if n > most {
            bail!("--threads {n}: at most {most} on this machine ({cores} cores; results are the same for any count)");
        }
        b = b.num_threads(n);
    }
    b.build().context("starting worker threads")
}

/// Writes each `(name, field)` as `<name>.<ext>` in every format (nodata and georeference of the
/// input kept) and `preview.png`: the first field hillshaded with `overlay` drawn in blue.
fn write_outputs(
    out: &Path,
    loaded: &erode_io::Loaded,
    formats: &[Format],
    maps: Vec<(&str, Vec<f32>)>,
    overlay: &[f32],
) -> anyhow::Result<()> {
    // each map is compressed and written on its own thread
    use rayon::prelude::*;
    let written: Vec<erode::Heightmap> = maps
        .into_par_iter()
        .map(|(name, field)| crate::output::write_map(out, name, formats, loaded, field))
        .collect::<anyhow::Result<_>>()?;
    if let Some(terrain) = written.first() {
        let g = &terrain.heights;
        let overlay = erode::Grid::from_vec(g.width(), g.height(), g.cell_size(), overlay.to_vec())?;
        let image = render(terrain, None, Some(&overlay), &PreviewStyle::default());
        erode_io::write_rgb_png(&out.join("preview.png"), &image)?;
    }
    Ok(())
}

/// A model's error about a map given on the command line, prefixed with that map's file.
fn name_the_map_file(e: erode::SimError, a: &Args) -> anyhow::Error {
    let file = match &e {
        erode::SimError::NoRain => a.rain_map.as_ref(),
        erode::SimError::MapValue { what: "hardness", .. } => a.hardness_map.as_ref(),
        erode::SimError::MapValue { what: "rain", .. } => a.rain_map.as_ref(),
        _ => None,
    };
    match file {
        Some(p) => anyhow::anyhow!("{}: {e}", p.display()),
        None => e.into(),
    }
}

fn read_map(
    path: &Option<PathBuf>,
    what: &str,
    terrain: &erode::Grid<f32>,
) -> anyhow::Result<Option<erode::Grid<f32>>> {
    let Some(p) = path else { return Ok(None) };
    let opts = erode_io::ReadOptions {
        mapping: Some(erode_io::IntMapping::Range { min: 0.0, max: 1.0 }),
        ..Default::default()
    };
    let m = erode_io::read(p, &opts)?.map.heights;
    if !m.same_shape(terrain) {
        bail!(
            "{}: the {what} map is {} x {}, the terrain {} x {}",
            p.display(),
            m.width(),
            m.height(),
            terrain.width(),
            terrain.height()
        );
    }
    Ok(Some(m))
}

pub fn run(a: Args, quiet: bool) -> anyhow::Result<()> {
    if a.model == Model::Sph && a.preset.is_some() {
        bail!("--preset is for the grid and droplet models");
    }
    if a.model != Model::Grid && a.duration.is_some() {
        bail!("--duration is for the grid model");
    }
    if a.model == Model::Sph {
        if a.backend != Backend::Cpu {
            bail!("--backend: the SPH model runs on the CPU only");
        }
        let job = crate::cmd::sph::SphJob {
            input: a.input_file.as_deref(),
            scene: a.scene.as_deref(),
            particles: a.particles,
            faces: a.faces,
            iterations: a.iterations,
            snapshot_every: a.snapshot_every,
            checkpoint_every: a.checkpoint_every,
            resume: a.resume,
            output: &a.output,
            params_file: a.params.as_deref(),
            sets: &a.sets,
            threads: a.threads,
            input_args: &a.input,
        };
        return crate::cmd::sph::run(job, quiet);
    }
    if a.scene.is_some() || a.particles > 0 || a.faces > 0 || a.snapshot_every > 0 {
        bail!("--scene, --particles, --faces and --snapshot-every are for the sph model");
    }
    let Some(input_file) = a.input_file.clone() else {
        bail!("simulate {}: needs an input heightmap", if a.model == Model::Grid { "grid" } else { "droplet" });
    };
    if a.model == Model::Droplet {
        return run_droplet(a, input_file, quiet);
    }
    // 1. validate everything before any long work
    let formats = crate::output::formats(&a.format)?;
    let preset = a.preset.as_deref().unwrap_or("rivers");
    let base = grid::preset(preset).context("--preset")?;
    let duration = a.duration.as_deref().map(parse_duration).transpose()?;
    let mut params: grid::Params = erode_io::params::load_onto(&base, a.params.as_deref(), &a.sets)?;
    if let Some(seed) = a.seed {
        params.seed = seed;
    }
    if a.hardness_map.is_some() {
        // a hardness map given is a hardness map used (it was silently ignored under the default
        // uniform hardness); noise hardness and a map do not mix
        match params.hardness_mode {
            grid::HardnessMode::Uniform => params.hardness_mode = grid::HardnessMode::Map,
            grid::HardnessMode::Map => {}
            grid::HardnessMode::Noise => bail!("--hardness-map: hardness_mode = \"noise\" makes its own hardness"),
        }
    }
    params.validate()?;
    let read_opts = a.input.options()?;
    let loaded = erode_io::read(&input_file, &read_opts)?;
    let terrain = &loaded.map.heights;
    crate::memory::check(terrain.width(), terrain.height(), crate::memory::Work::Grid, a.input.max_memory)?;
    let input_stamp = crate::stamp::of_heightmap(&loaded.map);
    let hardness = read_map(&a.hardness_map, "hardness", terrain)?;
    let rain = read_map(&a.rain_map, "rain", terrain)?;
    let ckpt_dir = a.output.join("checkpoints");
    let fingerprint = grid::params_fingerprint(&params);
    let pool = thread_pool(a.threads)?;
    let threads = pool.current_num_threads();

    // 2. the state: fresh or from the newest checkpoint
    let mut st = if a.resume {
        let (bytes, path) = newest_checkpoint(&ckpt_dir, "grid-")?;
        let st = State::from_bytes(&bytes, fingerprint, read_opts.max_cells)
            .with_context(|| unreadable_checkpoint(&ckpt_dir, "grid-", &path))?;
        check_same_size(&path, (st.width, st.height), terrain)?;
        crate::stamp::check(&ckpt_dir, input_stamp, &input_file.display().to_string())?;
        if duration.is_none() && st.iteration > a.iterations {
            bail!(
                "{}: the checkpoint is at iteration {}, past --iterations {}; ask for at least that many, or start \
                 afresh without --resume",
                path.display(),
                st.iteration,
                a.iterations
            );
        }
        st
    } else {
        let maps = StartMaps {
            hardness: hardness.as_ref(),
            rain: rain.as_ref(),
            water: None,
            nodata: loaded.map.nodata_mask(),
        };
        State::new(terrain, &params, maps).map_err(|e| name_the_map_file(e, &a))?
    };
    let mut sim = CpuSim::new(params.clone(), &st)?;
    let mut gpu = on_backend(a.backend, quiet, || start_gpu(&params, &st))?;
    let derived = sim.derived().clone();
    if derived.substeps > 1 && !quiet {
        eprintln!(
            "erode: dt = {} s exceeds the stable step ({:.4} s for these pipes and cells); running {} sub-steps per iteration",
            params.dt, derived.stable_dt, derived.substeps
        );
    }

    if let Some(total) = duration {
        let step = derived.dt * f64::from(derived.substeps);
        let iterations = (total - st.time) / step;
        if iterations.is_nan() || iterations > MAX_DURATION_ITERATIONS {
            bail!(
                "--duration {}: about {iterations:.2e} iterations of {step:.3e} s each (more than {MAX_DURATION_ITERATIONS:.0e}); \
                 check gravity and the cell size, or give --iterations",
                a.duration.as_deref().unwrap_or_default()
            );
        }
    }
    // everything is checked: only now is the output folder made
    create_output_folder(&a.output)?;
    note_nodata(&loaded.map, params.nodata_border == grid::NodataBorder::Open, quiet);
    if !a.resume {
        crate::stamp::write(&ckpt_dir, input_stamp)?;
    }

    // 3. run, with progress and checkpoints: to --iterations in total, or until --duration of
    // simulated time
    let start_iteration = st.iteration;
    let bar = match duration {
        Some(total) => {
            let bar = progress::bar(total.ceil() as u64, "s", quiet);
            bar.set_position(st.time as u64);
            bar
        }
        None => {
            let bar = progress::bar(a.iterations, "it", quiet);
            bar.set_position(st.iteration);
            bar
        }
    };
    bar.set_message("grid");
    let t0 = Instant::now();
    pool.install(|| -> anyhow::Result<()> {
        // iterations run in batches (the CPU simulator writes the velocity output on a batch's
        // last iteration only), sized for a few progress updates a second, never past a
        // checkpoint
        let mut batch = 1u64;
        let mut most_substeps = 0u32;
        loop {
            let (iteration, time) = gpu.as_ref().map_or((st.iteration, st.time), |(g, _)| (g.iteration, g.time));
            // iterations left: counted, or estimated from the last step's length
            let left = match duration {
                Some(total) if time >= total => break,
                Some(total) => {
                    let step = gpu.as_ref().map_or(sim.derived().dt * f64::from(sim.derived().substeps), |(g, _)| {
                        g.derived().dt * f64::from(g.derived().substeps)
                    });
                    ((total - time) / step.max(1e-9)).ceil().max(1.0) as u64
                }
                None if iteration >= a.iterations => break,
                None => a.iterations - iteration,
            };
            let mut n = batch.min(left);
            if a.checkpoint_every > 0 {
                n = n.min(a.checkpoint_every - iteration % a.checkpoint_every);
            }
            let started = Instant::now();
            match &mut gpu {
                Some((g, _)) => {
                    for _ in 0..n {
                        g.step()?;
                    }
                }
                None => sim.run(&mut st, n),
            }
            match duration {
                Some(_) => bar.set_position(gpu.as_ref().map_or(st.time, |(g, _)| g.time) as u64),
                None => bar.inc(n),
            }
            let tally = *gpu.as_ref().map_or(sim.substep_tally(), |(g, _)| g.substep_tally());
            if tally.max > most_substeps {
                if !quiet && most_substeps > 0 {
                    bar.suspend(|| {
                        eprintln!(
                            "erode: deeper water: {} sub-steps per iteration now (was {most_substeps}); the run slows",
                            tally.max
                        )
                    });
                }
                most_substeps = tally.max;
            }
            let per_iteration = started.elapsed().as_secs_f64() / n as f64;
            batch = ((0.25 / per_iteration.max(1e-9)) as u64).clamp(1, 256);
            let iteration = gpu.as_ref().map_or(st.iteration, |(g, _)| g.iteration);
            if a.checkpoint_every > 0 && iteration.is_multiple_of(a.checkpoint_every) {
                if let Some((g, _)) = &gpu {
                    g.read_into(&mut st)?;
                }
                write_checkpoint(&ckpt_dir, "grid-", st.iteration, &st.to_bytes(fingerprint))?;
            }
            if crate::interrupt::requested() {
                if let Some((g, _)) = &gpu {
                    g.read_into(&mut st)?;
                }
                bar.finish_and_clear();
                let checkpoint = write_checkpoint(&ckpt_dir, "grid-", st.iteration, &st.to_bytes(fingerprint))?;
                return Err(
                    crate::interrupt::Interrupted { at: format!("iteration {}", st.iteration), checkpoint }.into()
                );
            }
        }
        if let Some((g, _)) = &gpu {
            g.read_into(&mut st)?;
        }
        Ok(())
    })?;
    let seconds = t0.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let tally = *gpu.as_ref().map_or(sim.substep_tally(), |(g, _)| g.substep_tally());
    if a.checkpoint_every == 0 || !st.iteration.is_multiple_of(a.checkpoint_every) {
        write_checkpoint(&ckpt_dir, "grid-", st.iteration, &st.to_bytes(fingerprint))?;
    }
    let staging = crate::output::Staging::new(&a.output)?;

    // 4. outputs
    let finite = [&st.terrain, &st.water, &st.sediment, &st.hardness, &st.velocity_x, &st.velocity_y]
        .iter()
        .all(|f| f.iter().all(|v| v.is_finite()));
    if !finite {
        bail!("the run produced non-finite values; the checkpoint holds the state for inspection");
    }
    let maps = st.output_maps();
    write_outputs(staging.path(), &loaded, &formats, maps, &st.water)?;
    let balance = st.balance();
    let stage_seconds: serde_json::Map<String, serde_json::Value> = grid::Stage::ALL
        .iter()
        .zip(sim.stage_times().0.iter())
        .map(|(s, t)| (s.name().to_string(), json!(t.as_secs_f64())))
        .collect();
    let done = st.iteration - start_iteration;
    let report = json!({
        "model": "grid",
        "backend": if gpu.is_some() { "gpu" } else { "cpu" },
        "adapter": gpu.as_ref().map(|(_, name)| name.clone()),
        "threads": threads,
        "width": st.width,
        "height": st.height,
        "cell_size": { "x": st.cell_size.x, "y": st.cell_size.y },
        "iterations": st.iteration,
        "iterations_this_run": done,
        "resumed_from": if a.resume { Some(start_iteration) } else { None },
        "droplets": null,
        "seconds": seconds,
        "iterations_per_second": if seconds > 0.0 { done as f64 / seconds } else { 0.0 },
        "preset": preset,
        "simulated_seconds": st.time,
        "terrain_seconds": st.terrain_time,
        "dt": params.dt,
        "substeps": {
            "first": derived.substeps,
            "max": tally.max,
            "mean": tally.mean(),
        },
        "stable_dt": derived.stable_dt,
        "mass_balance": {
            "relative_error": balance.relative_error,
            "water_relative_error": balance.water_relative_error,
            "soil_relative_error": balance.soil_relative_error,
            "soil_imbalance_per_moved": balance.soil_imbalance_per_moved,
            "transport_drift_relative": balance.transport_drift_relative,
            "water_volume": balance.water_volume,
            "soil_volume": balance.soil_volume,
            "start_water": st.start_water,
            "start_soil": st.start_soil,
            "books": st.books,
        },
        "finite": finite,
        "stage_seconds": stage_seconds,
        "params": params,
    });
    erode_io::write_atomic(&staging.path().join("report.json"), serde_json::to_string_pretty(&report)?.as_bytes())?;
    staging.commit()
}

fn run_droplet(a: Args, input_file: PathBuf, quiet: bool) -> anyhow::Result<()> {
    use erode::models::droplet::{DropletMaps, DropletParams, DropletSim, DropletState, droplet_params_fingerprint};
    let formats = crate::output::formats(&a.format)?;
    let preset = a.preset.as_deref().unwrap_or("default");
    let base = erode::models::droplet::droplet_preset(preset).context("--preset")?;
    let mut params: DropletParams = erode_io::params::load_onto(&base, a.params.as_deref(), &a.sets)?;
    if let Some(seed) = a.seed {
        params.seed = seed;
    }
    let read_opts = a.input.options()?;
    let loaded = erode_io::read(&input_file, &read_opts)?;
    let terrain = &loaded.map.heights;
    crate::memory::check(terrain.width(), terrain.height(), crate::memory::Work::Droplet, a.input.max_memory)?;
    let input_stamp = crate::stamp::of_heightmap(&loaded.map);
    let params = params.with_floor_at(f64::from(loaded.map.stats().min));
    params.validate()?;
    params.step_rule(terrain.cell_size()).with_context(|| format!("{}: on this map", input_file.display()))?;
    let total = droplet_count(a.droplets, a.droplets_per_cell, terrain.len())?;
    let ckpt_dir = a.output.join("checkpoints");
    let fingerprint = droplet_params_fingerprint(&params);
    let pool = thread_pool(a.threads)?;
    let threads = pool.current_num_threads();
    let mut st = if a.resume {
        let (bytes, path) = newest_checkpoint(&ckpt_dir, "droplet-")?;
        let st = DropletState::from_bytes(&bytes, fingerprint, read_opts.max_cells)
            .with_context(|| unreadable_checkpoint(&ckpt_dir, "droplet-", &path))?;
        check_same_size(&path, (st.width, st.height), terrain)?;
        crate::stamp::check(&ckpt_dir, input_stamp, &input_file.display().to_string())?;
        if st.droplets > total {
            bail!(
                "{}: the checkpoint is at droplet {}, past the {total} asked for; ask for at least that many, or \
                 start afresh without --resume",
                path.display(),
                st.droplets
            );
        }
        st
    } else {
        let hardness = read_map(&a.hardness_map, "hardness", terrain)?;
        let rain = read_map(&a.rain_map, "rain", terrain)?;
        DropletState::with_maps(
            terrain,
            DropletMaps { hardness: hardness.as_ref(), rain: rain.as_ref(), nodata: loaded.map.nodata_mask() },
        )
        .map_err(|e| name_the_map_file(e, &a))?
    };
    let mut sim = DropletSim::new(params.clone(), &st)?;
    let start_gpu = || -> anyhow::Result<(erode::models::droplet::gpu::DropletGpuSim, String)> {
        let ctx = erode::gpu::GpuContext::headless()?;
        let adapter = ctx.adapter.name.clone();
        Ok((erode::models::droplet::gpu::DropletGpuSim::new(std::sync::Arc::new(ctx), &params, &st)?, adapter))
    };
    // a GPU batch holds the droplets that rarely cross paths: on a small map with long-lived
    // droplets that is a handful (3 on van der Veen's 100² at lifetime 300), which no GPU runs fast
    let gpu_batch = erode::models::droplet::gpu::gpu_batch(sim.rule(), params.batch_size, st.width * st.height);
    let few = format!(
        "a GPU batch holds {gpu_batch} droplet{} on this map (those whose paths rarely cross; a GPU needs about \
         {MIN_GPU_DROPLET_BATCH})",
        if gpu_batch == 1 { "" } else { "s" }
    );
    let backend = match a.backend {
        Backend::Auto if gpu_batch < MIN_GPU_DROPLET_BATCH => {
            if !quiet {
                eprintln!("erode: running on the CPU: {few}");
            }
            Backend::Cpu
        }
        Backend::Gpu if gpu_batch < MIN_GPU_DROPLET_BATCH && !quiet => {
            eprintln!("erode: note: {few}; --backend cpu is likely faster");
            Backend::Gpu
        }
        backend => backend,
    };
    let mut gpu = on_backend(backend, quiet, start_gpu)?;
    // everything is checked: only now is the output folder made
    create_output_folder(&a.output)?;
    note_nodata(&loaded.map, params.nodata_border == erode::models::droplet::NodataBorder::Open, quiet);
    if !a.resume {
        crate::stamp::write(&ckpt_dir, input_stamp)?;
    }
    let start = st.droplets;
    let todo = total.saturating_sub(st.droplets);
    let bar = progress::bar(total, "droplets", quiet);
    bar.set_position(st.droplets);
    bar.set_message("droplet");
    let write_ckpt =
        |st: &DropletState| write_checkpoint(&ckpt_dir, "droplet-", st.droplets, &st.to_bytes(fingerprint));
    let t0 = Instant::now();
    // checkpoints fall on whole batches, so a resumed run equals a straight one
    let batch = gpu.as_ref().map_or(u64::from(params.batch_size), |(g, _)| g.batch_size());
    let every = a.checkpoint_every.div_ceil(batch) * batch;
    if every != a.checkpoint_every && !quiet {
        eprintln!("checkpoints every {every} droplets: a multiple of batch_size ({batch})");
    }
    pool.install(|| -> anyhow::Result<()> {
        // run in whole batches so progress and checkpoints happen between them
        let chunk = if every > 0 { every } else { batch * (1000 / batch).max(1) };
        let end = st.droplets + todo;
        while st.droplets < end {
            let next = ((st.droplets / chunk + 1) * chunk).min(end);
            let count = next - st.droplets;
            match &mut gpu {
                Some((g, _)) => {
                    g.run(count)?;
                    st.droplets = g.droplets();
                    bar.set_position(st.droplets);
                    if every > 0 && st.droplets.is_multiple_of(every) {
                        g.read_into(&mut st)?;
                        write_ckpt(&st)?;
                    }
                }
                None => {
                    sim.run(&mut st, count, &mut |n| bar.set_position(n));
                    if every > 0 && st.droplets.is_multiple_of(every) {
                        write_ckpt(&st)?;
                    }
                }
            }
            if crate::interrupt::requested() && st.droplets < end {
                if let Some((g, _)) = &gpu {
                    g.read_into(&mut st)?;
                }
                bar.finish_and_clear();
                let checkpoint = write_ckpt(&st)?;
                return Err(crate::interrupt::Interrupted { at: format!("droplet {}", st.droplets), checkpoint }.into());
            }
        }
        if let Some((g, _)) = &gpu {
            g.read_into(&mut st)?;
        }
        Ok(())
    })?;
    let seconds = t0.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let last_checkpoint = every == 0 || !st.droplets.is_multiple_of(every);
    let finite = [&st.terrain, &st.eroded, &st.deposited, &st.flow].iter().all(|f| f.iter().all(|v| v.is_finite()));
    if !finite {
        if last_checkpoint {
            write_ckpt(&st)?;
        }
        bail!("the run produced non-finite values; the checkpoint holds the state for inspection");
    }
    let maps = vec![
        ("height", st.terrain.clone()),
        ("erosion", st.eroded.clone()),
        ("deposition", st.deposited.clone()),
        ("flow", st.flow.clone()),
    ];
    // the final checkpoint is written beside the maps
    let staging = crate::output::Staging::new(&a.output)?;
    let (checkpoint, outputs) = rayon::join(
        || if last_checkpoint { write_ckpt(&st).map(drop) } else { Ok(()) },
        || write_outputs(staging.path(), &loaded, &formats, maps, &st.flow),
    );
    checkpoint?;
    outputs?;
    let (books_error, field_error) = st.balance();
    let done = st.droplets - start;
    let report = json!({
        "model": "droplet",
        "preset": preset,
        "backend": if gpu.is_some() { "gpu" } else { "cpu" },
        "adapter": gpu.as_ref().map(|(_, name)| name.clone()),
        "threads": threads,
        "width": st.width,
        "height": st.height,
        "iterations": null,
        "droplets": st.droplets,
        "droplets_this_run": done,
        "resumed_from": if a.resume { Some(start) } else { None },
        "seconds": seconds,
        "droplets_per_second": if seconds > 0.0 { done as f64 / seconds } else { 0.0 },
        "parallel_bands": sim.parallel_bands(st.height),
        "mass_balance": {
            "relative_error": books_error.max(field_error),
            "books_relative_error": books_error,
            "terrain_relative_error": field_error,
            "eroded_m3": st.cubic_metres(st.books.eroded),
            "deposited_m3": st.cubic_metres(st.books.deposited),
            "outflow_m3": st.cubic_metres(st.books.outflow),
            "books_quanta": st.books,
        },
        "finite": finite,
        "params": params,
    });
    erode_io::write_atomic(&staging.path().join("report.json"), serde_json::to_string_pretty(&report)?.as_bytes())?;
    staging.commit()
}

/// Most droplets one run takes (about 30 hours at a million a second).
const MAX_DROPLETS: f64 = 1e11;

/// The droplets a run goes to: `--droplets`, or `--droplets-per-cell` (default 1) times the cells.
fn droplet_count(droplets: Option<u64>, per_cell: Option<f64>, cells: usize) -> anyhow::Result<u64> {
    if let Some(n) = droplets {
        if n as f64 > MAX_DROPLETS {
            bail!("--droplets {n}: more than {MAX_DROPLETS:e}, which would run for days");
        }
        return Ok(n);
    }
    let d = per_cell.unwrap_or(1.0);
    if !(d.is_finite() && d >= 0.0) {
        bail!("--droplets-per-cell {d}: must be a number >= 0");
    }
    let n = (d * cells as f64).round();
    if n > MAX_DROPLETS {
        bail!("--droplets-per-cell {d}: {n:e} droplets on {cells} cells, more than {MAX_DROPLETS:e}");
    }
    Ok(n as u64)
}

/// Seconds from `90`, `90s`, `30min` or `2h`.
fn parse_duration(text: &str) -> anyhow::Result<f64> {
    let t = text.trim();
    let (number, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(k) => (&t[..k], &t[k..]),
        None => (t, "s"),
    };
    let scale = match unit {
        "s" => 1.0,
        "min" | "m" => 60.0,
        "h" => 3600.0,
        _ => bail!("--duration {text}: unknown unit `{unit}`; use s, min or h"),
    };
    let value: f64 = number.trim().parse().map_err(|_| anyhow::anyhow!("--duration {text}: not a number of {unit}"))?;
    if !(value.is_finite() && value > 0.0) {
        bail!("--duration {text}: must be a positive time");
    }
    Ok(value * scale)
}
