//! `erode simulate droplet`: droplets eroding a heightmap (Beyer 2015).

use std::path::PathBuf;

use anyhow::{Context, bail};
use erode::contract::{DropletRun, Model};
use erode::models::droplet;

use super::Backend;
use erode_io::run::{DropletFront, Job, Until};

use super::heightmap::{Input, MapArgs, MapFiles, name_the_map_file};

/// Droplets eroding a heightmap one after another (Beyer 2015).
#[derive(clap::Args)]
#[command(after_help = "Outputs in OUTDIR: height, erosion, deposition, flow (each in every --format), preview.png and
report.json; checkpoints in OUTDIR/checkpoints.

Examples:
  erode simulate droplet t.tif -o out                       (one droplet per cell)
  erode simulate droplet t.tif -o out --droplets-per-cell 2 --seed 3 --set radius=6
  erode simulate droplet t.tif -o out --preset gentle
  erode simulate droplet t.tif -o out --rain-map rain.png --hardness-map rock.png")]
pub struct Args {
    #[command(flatten)]
    maps: MapArgs,
    /// Start from a named parameter set: default, gentle, beyer (see `erode params droplet
    /// --preset NAME`). --params and --set apply on top.
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,
    /// Droplets in total (with --resume, including those already done). Default: one per cell
    /// (see --droplets-per-cell).
    #[arg(long)]
    droplets: Option<u64>,
    /// Droplets per cell of the map, in total: each droplet is the rain of one cell, so the same
    /// figure gives the same rain per m² at any cell size. Default 1.
    #[arg(long, value_name = "D", conflicts_with = "droplets", allow_negative_numbers = true)]
    droplets_per_cell: Option<f64>,
    /// Hardness map (0..1, 1 erodes least): scales each cell's erosion (kept in the checkpoint,
    /// so --resume needs it not again).
    #[arg(long)]
    hardness_map: Option<PathBuf>,
    /// Rain map (>= 0): where droplets start, in proportion.
    #[arg(long)]
    rain_map: Option<PathBuf>,
    #[command(flatten)]
    pub(super) run: super::RunArgs,
}

/// Fewest droplets per GPU batch for `auto` to pick the GPU: fewer cannot fill one (a GPU keeps
/// thousands of invocations in flight).
const MIN_GPU_DROPLET_BATCH: u64 = 1024;

/// Most droplets one run takes (about 30 hours at a million a second).
const MAX_DROPLETS: f64 = 1e11;

/// Validates `a` into a job: parameters, input, maps, checkpoint and backend.
pub fn job(a: Args, quiet: bool) -> anyhow::Result<Job<DropletRun, DropletFront>> {
    let formats = crate::output::formats(&a.maps.format)?;
    let wanted = a.maps.wanted(&droplet::INFO)?;
    let preset = a.preset.as_deref().unwrap_or(droplet::PRESETS[0].0);
    let base = droplet::preset(preset).context("--preset")?;
    let mut params: droplet::Params = erode_io::params::load_onto(&base, a.run.params.as_deref(), &a.run.sets)?;
    if let Some(seed) = a.maps.seed {
        params.seed = seed;
    }
    let files = MapFiles { hardness: a.hardness_map.as_deref(), rain: a.rain_map.as_deref(), sediment_depth: None };
    let input = Input::read(&a.maps, files, &a.run, "droplet", crate::memory::Work::Droplet)?;
    let params = params.with_floor_at(f64::from(input.loaded.map.stats().min));
    params.validate()?;
    let terrain = input.terrain();
    params.step_rule(terrain.cell_size()).with_context(|| format!("{}: on this map", input.name))?;
    let total = droplet_count(a.droplets, a.droplets_per_cell, terrain.len())?;
    let maps = droplet::StartMaps {
        hardness: input.hardness.as_ref(),
        rain: input.rain.as_ref(),
        nodata: input.loaded.map.nodata_mask(),
    };
    let checkpoint = a.run.checkpoint(DropletRun::NAME)?;
    let mut model = match &checkpoint {
        Some(c) => {
            let resume = |b: &[u8]| DropletRun::resume(params.clone(), b, a.run.input.max_cells);
            input.resume(c, resume, |m| (m.state().width, m.state().height, m.state().cell_size))?
        }
        None => {
            let st = droplet::State::with_maps(terrain, maps).map_err(|e| name_the_map_file(e, files))?;
            DropletRun::new(params.clone(), st)?
        }
    };
    // a new state hashed its inputs; a resumed one holds the hash of those it began from
    let hash = if checkpoint.is_some() { maps.input_hash(terrain) } else { model.input_hash() };
    let stamp = input.stamp(hash, files.named());
    // a GPU batch holds the droplets that rarely cross paths: on a small map with long-lived
    // droplets that is a handful (3 on van der Veen's 100² at lifetime 300), which no GPU runs fast
    let gpu_batch = model.gpu_batch();
    let few = format!(
        "a GPU batch holds {gpu_batch} droplet{} on this map (those whose paths rarely cross; a GPU needs about \
         {MIN_GPU_DROPLET_BATCH})",
        if gpu_batch == 1 { "" } else { "s" }
    );
    let backend = match a.maps.backend {
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
    backend.place(&mut model, quiet, DropletRun::use_gpu)?;
    super::say_scale(params.scale_note(input.terrain().cell_size()));
    let front = DropletFront::new(input.loaded, formats, wanted, preset);
    let files = [a.maps.input_file.as_deref(), a.hardness_map.as_deref(), a.rain_map.as_deref()];
    a.run.job(model, front, Until::Count(total), checkpoint, stamp, &files)
}

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
        bail!(
            "--droplets-per-cell {}: {n:e} droplets on {cells} cells, more than {MAX_DROPLETS:e}",
            erode::error::short_number(d)
        );
    }
    Ok(n as u64)
}
