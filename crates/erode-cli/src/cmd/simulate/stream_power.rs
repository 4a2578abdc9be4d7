//! `erode simulate stream-power`: uplift and river incision over geological time.

use std::path::PathBuf;

use anyhow::{Context, bail};
use erode::contract::{Model, StreamPowerRun};
use erode::models::stream_power::{self, StartMaps, State};

use erode_io::run::{Job, StreamPowerFront, Until};

use super::heightmap::{Input, MapArgs, MapFiles, read_map};

/// Uplift and stream-power erosion over millions of years (Braun & Willett 2013).
#[derive(clap::Args)]
#[command(after_help = "dz/dt = U - K*A^m*S^n + D*laplacian(z), heights in metres, time in years. The map edges
are base level (open_edges), and so are nodata holes and the sea (sea_level).

Outputs in OUTDIR: height, drainage_area (m^2), erosion_rate (m/yr), uplift (m/yr) (each in every
--format), preview.png (hillshade with the river network) and report.json; checkpoints in
OUTDIR/checkpoints.

Examples:
  erode generate plain.tif --kind noise --size 512 --relief 1 --cell-size 100
  erode simulate stream-power plain.tif -o range --years 2e6
  erode simulate stream-power dem.tif -o out --years 1e5 --dt-years 1000 --set uplift=0
  erode simulate stream-power plain.tif -o out --uplift-map uplift.png --set open_edges=s
  erode simulate stream-power plain.tif -o out --years 4e6 --resume")]
pub struct Args {
    #[command(flatten)]
    maps: MapArgs,
    /// Start from a named parameter set: default, slow, nonlinear (see `erode params
    /// stream-power --preset NAME`). --params and --set apply on top.
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,
    /// Years to simulate in total (with --resume, including those already done).
    #[arg(long, default_value = "1e6", allow_negative_numbers = true)]
    years: f64,
    /// Time step, years (the parameter dt_years; default 10,000).
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    dt_years: Option<f64>,
    /// Uplift map: multiplies the uplift rate cell by cell (integer formats read as 0..1).
    #[arg(long, value_name = "MAP")]
    uplift_map: Option<PathBuf>,
    /// Erodibility map: multiplies K cell by cell (>= 0; integer formats read as 0..1).
    #[arg(long, value_name = "MAP")]
    erodibility_map: Option<PathBuf>,
    /// Hardness map (0..1, 1 erodes least): K times 1 - H*(1 - rock_erodibility).
    #[arg(long, value_name = "MAP")]
    hardness_map: Option<PathBuf>,
    #[command(flatten)]
    pub(super) run: super::RunArgs,
}

/// Most steps one run takes.
const MAX_STEPS: f64 = 1e7;

/// Validates `a` into a job: parameters, input, maps and checkpoint.
pub fn job(a: Args) -> anyhow::Result<Job<StreamPowerRun, StreamPowerFront>> {
    let formats = crate::output::formats(&a.maps.format)?;
    let wanted = a.maps.wanted(&stream_power::INFO)?;
    if a.maps.backend == super::Backend::Gpu {
        bail!("--backend gpu: the stream-power model runs on the CPU only");
    }
    if let Some(seed) = a.maps.seed {
        bail!(
            "--seed {seed}: the stream-power model takes no seed (its one random part, Rho8's diagonal slopes, is \
             fixed by step and cell)"
        );
    }
    let preset = a.preset.as_deref().unwrap_or(stream_power::PRESETS[0].0);
    let base = stream_power::preset(preset).context("--preset")?;
    let mut params: stream_power::Params = erode_io::params::load_onto(&base, a.run.params.as_deref(), &a.run.sets)?;
    if let Some(dt) = a.dt_years {
        params.dt_years = dt;
    }
    params.validate()?;
    if !(a.years.is_finite() && a.years >= 0.0) {
        bail!("--years {}: must be a number of years >= 0", a.years);
    }
    let dt = params.dt_years;
    if a.years > 0.0 && dt > a.years {
        bail!("dt_years {dt:e}: a step longer than the run (--years {:e}); give --dt-years at most that", a.years);
    }
    let steps = (a.years / dt).ceil();
    if steps > MAX_STEPS {
        bail!("--years {:e} at dt_years {dt:e}: {steps:e} steps, more than {MAX_STEPS:e}", a.years);
    }
    if steps * dt != a.years {
        // the model takes whole steps: the run ends past the time asked for, and says so
        eprintln!(
            "erode: note: --years {} is {:.3} steps of {dt} years: running {steps} steps, {} years (give --dt-years \
             dividing --years to end there)",
            a.years,
            a.years / dt,
            steps * dt
        );
    }
    let files = MapFiles { hardness: a.hardness_map.as_deref(), rain: None, sediment_depth: None };
    let input = Input::read(
        &a.maps,
        files,
        &a.run,
        "stream-power",
        crate::memory::Work::StreamPower(params.flow_kind()? == stream_power::Flow::Multiple),
    )?;
    let terrain = input.terrain();
    let uplift = read_map(a.uplift_map.as_deref(), "uplift", terrain)?;
    let erodibility = read_map(a.erodibility_map.as_deref(), "erodibility", terrain)?;
    let maps = StartMaps {
        uplift: uplift.as_ref(),
        erodibility: erodibility.as_ref(),
        hardness: input.hardness.as_ref(),
        nodata: input.loaded.map.nodata_mask(),
    };
    let named = [
        ("--uplift-map", a.uplift_map.as_deref()),
        ("--erodibility-map", a.erodibility_map.as_deref()),
        ("--hardness-map", a.hardness_map.as_deref()),
    ];
    let checkpoint = a.run.checkpoint(StreamPowerRun::NAME)?;
    let model = match &checkpoint {
        Some(c) => {
            let resume = |b: &[u8]| StreamPowerRun::resume(params.clone(), b, a.run.input.max_cells);
            input.resume(c, resume, |m| (m.state().width, m.state().height, m.state().cell_size))?
        }
        None => {
            let name = |e: erode::SimError| {
                let file = match &e {
                    erode::SimError::MapValue { what: "uplift", .. } => a.uplift_map.as_deref(),
                    erode::SimError::MapValue { what: "erodibility", .. } => a.erodibility_map.as_deref(),
                    erode::SimError::MapValue { what: "hardness", .. } => a.hardness_map.as_deref(),
                    _ => None,
                };
                match file {
                    Some(p) => anyhow::anyhow!("{}: {e}", p.display()),
                    None => anyhow::anyhow!("{}: {e}", input.name),
                }
            };
            let st = State::with_maps(terrain, maps, params.rock_erodibility).map_err(name)?;
            StreamPowerRun::new(params.clone(), st).map_err(|e| anyhow::anyhow!("{}: {e}", input.name))?
        }
    };
    // a new state hashed its inputs; a resumed one holds the hash of those it began from
    let hash = if checkpoint.is_some() { maps.input_hash(terrain) } else { model.input_hash() };
    let stamp = input.stamp(hash, named);
    super::say_scale(params.scale_note(model.state().cell_size));
    let front = StreamPowerFront::new(input.loaded, formats, wanted, preset);
    let files = [
        a.maps.input_file.as_deref(),
        a.uplift_map.as_deref(),
        a.erodibility_map.as_deref(),
        a.hardness_map.as_deref(),
    ];
    a.run.job(model, front, Until::Count(steps as u64), checkpoint, stamp, &files)
}
