//! `erode bench`: a model's speed on a generated terrain, nothing read or written, so a release
//! binary alone measures a machine (`scripts/gpu-bench.sh` runs it at every size).

use std::time::Instant;

use anyhow::Context;
use erode::contract::{DropletRun, GridRun, Model};
use erode::terrain::{TerrainSpec, generate};

/// Time a model on a generated terrain (fBm, seed 7, 300 m of relief, 4 m cells): the start
/// (steady water, upload), the run, and the books after it.
#[derive(clap::Args)]
#[command(after_help = "Prints one line (JSON with --json): seconds to start, to run and to read back, units per
second of the run alone, and the books' relative error.

Examples:
  erode bench grid --size 1024 --iterations 3000 --backend gpu
  erode bench grid --size 4096 --iterations 2 --threads 1 --json
  erode bench droplet --size 4096 --iterations 16777216 --backend gpu")]
pub struct Args {
    /// The model.
    #[arg(value_enum)]
    model: BenchModel,
    /// Width and height in cells.
    #[arg(long, default_value_t = 1024)]
    size: usize,
    /// Iterations (grid) or droplets to run.
    #[arg(long, default_value_t = 100)]
    iterations: u64,
    /// Where it runs.
    #[arg(long, value_enum, default_value_t = BenchBackend::Cpu)]
    backend: BenchBackend,
    /// Worker threads (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Start from a named parameter set (default: the model's first).
    #[arg(long)]
    preset: Option<String>,
    /// Override a parameter, `key=value` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, PartialEq)]
enum BenchModel {
    Grid,
    Droplet,
}

#[derive(clap::ValueEnum, Clone, Copy, PartialEq)]
enum BenchBackend {
    Cpu,
    Gpu,
}

/// What one bench measured.
#[derive(serde::Serialize)]
struct Measured {
    model: &'static str,
    backend: String,
    size: usize,
    threads: usize,
    units: u64,
    unit: &'static str,
    start_seconds: f64,
    run_seconds: f64,
    read_back_seconds: f64,
    per_second: f64,
    relative_error: f64,
    finite: bool,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let pool = super::simulate::thread_pool(a.threads)?;
    let threads = pool.current_num_threads();
    crate::memory::check(a.size, a.size, crate::memory::Work::Grid, None)?;
    let spec = TerrainSpec {
        width: a.size,
        height: a.size,
        seed: 7,
        relief: 300.0,
        cell_size: erode::CellSize::square(4.0),
        ..Default::default()
    };
    let terrain = pool.install(|| generate(&spec))?.heights;
    let start = Instant::now();
    let mut model: Box<dyn Model> = pool.install(|| -> anyhow::Result<Box<dyn Model>> {
        Ok(match a.model {
            BenchModel::Grid => {
                use erode::models::grid;
                let base = grid::preset(a.preset.as_deref().unwrap_or(grid::PRESETS[0].name)).context("--preset")?;
                let params: grid::Params = erode_io::params::load_onto(&base, None, &a.sets)?;
                let state = grid::State::new(&terrain, &params, grid::StartMaps::default())?;
                let mut run = GridRun::new(params, state)?;
                if a.backend == BenchBackend::Gpu {
                    run.use_gpu(std::sync::Arc::new(erode::gpu::GpuContext::headless()?))?;
                }
                Box::new(run)
            }
            BenchModel::Droplet => {
                use erode::models::droplet;
                let name = a.preset.as_deref().unwrap_or(droplet::PRESETS[0].0);
                let base = droplet::preset(name).context("--preset")?;
                let params: droplet::Params = erode_io::params::load_onto(&base, None, &a.sets)?;
                let mut run = DropletRun::new(params, droplet::State::new(&terrain)?)?;
                if a.backend == BenchBackend::Gpu {
                    run.use_gpu(std::sync::Arc::new(erode::gpu::GpuContext::headless()?))?;
                }
                Box::new(run)
            }
        })
    })?;
    model.wait()?;
    let start_seconds = start.elapsed().as_secs_f64();
    let t = Instant::now();
    pool.install(|| model.advance(a.iterations, &mut |_| {}))?;
    model.wait()?;
    let run_seconds = t.elapsed().as_secs_f64();
    let t = Instant::now();
    model.sync()?;
    let read_back_seconds = t.elapsed().as_secs_f64();
    let m = Measured {
        model: model.name(),
        backend: match model.backend() {
            erode::contract::Backend::Cpu => "cpu".into(),
            erode::contract::Backend::Gpu { adapter } => format!("gpu ({adapter})"),
        },
        size: a.size,
        threads,
        units: a.iterations,
        unit: model.unit().name(),
        start_seconds,
        run_seconds,
        read_back_seconds,
        per_second: a.iterations as f64 / run_seconds.max(1e-9),
        relative_error: model.balance().relative_error,
        finite: model.is_finite(),
    };
    if a.json {
        println!("{}", serde_json::to_string(&m)?);
    } else {
        println!(
            "{} on {}, {}², {} threads: {} {}s in {:.3} s = {:.1}/s (start {:.2} s, read back {:.2} s); books' relative error {:.1e}{}",
            m.model,
            m.backend,
            m.size,
            m.threads,
            m.units,
            m.unit,
            m.run_seconds,
            m.per_second,
            m.start_seconds,
            m.read_back_seconds,
            m.relative_error,
            if m.finite { "" } else { "; NOT FINITE" }
        );
    }
    Ok(())
}
