//! `erode amplify`: multi-scale erosion, a coarse range refined level by level.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, bail};
use erode::amplify::{Params, amplify};

use crate::input::{InputArgs, parse_cell_size_as};
use crate::memory::{Work, check};

/// Grow a mountain range and refine it: stream power on a coarse grid, then at each level the
/// cells halved (cubic resample) and eroded again for a shorter time (after Schott et al. 2024).
#[derive(clap::Args)]
#[command(after_help = "Outputs in OUTDIR: height.tif (the finest level), level-K.tif (each level, 0 the coarsest),
preview.png (at most 2048 px on its longer side) and report.json.

Without an input, the coarse level is a noisy plain (1 m of relief) of SIZE / 2^LEVELS cells of
RESOLUTION x 2^LEVELS m that uplift and stream power grow into a range over --coarse-years. With an
input, the input is the coarse level: kept as it is (--coarse-years 0, no uplift) unless asked,
and the finer levels erode it briefly (--fine-years 2e4, --roughness 0).

Examples:
  erode amplify -o range                                  (2048² cells of 25 m from noise)
  erode amplify -o big --size 4096 --levels 4 --seed 3
  erode amplify coarse.tif -o fine --levels 2              (a DEM's cells halved twice)
  erode amplify -o range --set flow=d8 --set uplift=5e-4")]
pub struct Args {
    /// The coarse level's terrain (optional: without it, a noisy plain grows a range).
    input_file: Option<PathBuf>,
    /// Output folder (created if missing).
    #[arg(short, long)]
    output: PathBuf,
    /// Cells along each side of the result, without an input (a multiple of 2^LEVELS).
    #[arg(long, default_value_t = 2048)]
    size: usize,
    /// Cell size of the result, metres (`S` or `XxY`), without an input.
    #[arg(long, value_name = "METRES", default_value = "25", allow_negative_numbers = true)]
    resolution: String,
    /// Refinements: the result has 2^LEVELS times the coarse cells along each axis.
    #[arg(long, default_value_t = 3)]
    levels: u32,
    /// Seed of the noisy plain, without an input.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Years of uplift and erosion at the coarse level (default 1e7 from noise, 0 with an input).
    #[arg(long, value_name = "YEARS", allow_negative_numbers = true)]
    coarse_years: Option<f64>,
    /// Years at the first finer level (default 1e6 from noise, 2e4 with an input: enough to cut
    /// the finer valleys, not to wear a real terrain down).
    #[arg(long, value_name = "YEARS", allow_negative_numbers = true)]
    fine_years: Option<f64>,
    /// Each later level runs this fraction of the years of the one before.
    #[arg(long, default_value_t = 0.2, allow_negative_numbers = true)]
    time_ratio: f64,
    /// Noise added to each refined level before it erodes, as a fraction of its cell size
    /// (default 0.5 from noise, 0 with an input): it seeds the gullies of the finer levels.
    #[arg(long, value_name = "F", allow_negative_numbers = true)]
    roughness: Option<f64>,
    /// Override a stream-power parameter, `key=value` (repeatable; see `erode params
    /// stream-power`). Default flow here: mfd.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Worker threads (default: one per core). Results are identical for any count.
    #[arg(long)]
    threads: Option<usize>,
    /// Reading the input: height mapping, cell size, nodata, memory.
    #[command(flatten)]
    input: InputArgs,
}

/// Years at the first finer level of an input terrain, by default: on the Luxembourg DEM
/// (`testdata/terra-elev.tif`, cells of ~600 x 930 m halved twice) 2e4 years lower the mean
/// height by 7 m against a plain resample, 1e5 by 37 m, 1e6 by 195 m.
const INPUT_FINE_YEARS: f64 = 2e4;

pub fn run(a: Args, quiet: bool) -> anyhow::Result<()> {
    let mut params = Params { levels: a.levels, time_ratio: a.time_ratio, ..Params::default() };
    if a.input_file.is_some() {
        params.coarse_years = 0.0;
        params.fine_years = INPUT_FINE_YEARS;
        params.stream_power.uplift = 0.0;
        // brief erosion would leave the noise as it is: a real terrain gets none unless asked
        params.roughness = 0.0;
    }
    if let Some(y) = a.fine_years {
        params.fine_years = y;
    }
    if let Some(r) = a.roughness {
        params.roughness = r;
    }
    params.seed = a.seed;
    if let Some(y) = a.coarse_years {
        params.coarse_years = y;
    }
    params.stream_power = erode_io::params::load_onto(&params.stream_power, None, &a.sets)?;
    params.validate().map_err(|e| anyhow::anyhow!(e.to_string().replace("parameter `levels`", "--levels")))?;
    let scale = 1usize << a.levels;
    let refuse_cells = |w: usize, h: usize| -> anyhow::Result<()> {
        if (w as u64).saturating_mul(h as u64) > a.input.max_cells {
            bail!(
                "the result would be {w} x {h} cells, more than --max-cells {}: use fewer --levels",
                a.input.max_cells
            );
        }
        Ok(())
    };
    let levels_out = a.levels;
    erode_io::run::check_inputs_kept(&a.output, a.input_file.as_slice(), || {
        let mut names: Vec<String> = (0..=levels_out).map(|k| format!("level-{k}.tif")).collect();
        names.extend(["height.tif", "preview.png", "report.json"].map(String::from));
        names
    })?;
    let start = match &a.input_file {
        Some(path) => a.input.read(path)?.map,
        None => {
            let cell = parse_cell_size_as(&a.resolution, "--resolution")?;
            if a.size == 0 || !a.size.is_multiple_of(scale) || a.size / scale < 4 {
                bail!("--size {}: must be a multiple of 2^levels = {scale}, at least {}", a.size, 4 * scale);
            }
            refuse_cells(a.size, a.size)?;
            check(a.size, a.size, Work::StreamPower(true), a.input.max_memory)?;
            let coarse = erode::CellSize { x: cell.x * scale as f64, y: cell.y * scale as f64 };
            let mut plain = erode::terrain::bench::noisy_plain(a.size / scale, coarse.x, a.seed)?;
            plain.set_cell_size(coarse)?;
            erode::Heightmap::new(plain)?
        }
    };
    let (w, h) = (start.heights.width() * scale, start.heights.height() * scale);
    refuse_cells(w, h)?;
    let mfd = params.stream_power.flow_kind()? == erode::models::stream_power::Flow::Multiple;
    check(w, h, Work::StreamPower(mfd), a.input.max_memory)?;
    if a.output.exists() && !a.output.is_dir() {
        bail!("{}: the output is a folder, and this is a file", a.output.display());
    }
    // the folder may not exist yet: then its parent must take it
    let probe = if a.output.is_dir() { a.output.join("report.json") } else { a.output.clone() };
    erode_io::check_output(&probe)?;
    let pool = crate::cmd::simulate::thread_pool(a.threads)?;

    let t0 = Instant::now();
    let mut last = u32::MAX;
    let levels = pool.install(|| {
        amplify(&start, &params, &mut |k, _done, steps| {
            if k != last {
                last = k;
                if !quiet {
                    let size = start.heights.width() << k;
                    eprintln!(
                        "erode: level {k} of {}: {size}² cells, {:.4e} years in {steps} steps",
                        params.levels,
                        params.years(k)
                    );
                }
            }
            !crate::interrupt::requested()
        })
    })?;
    let Some(levels) = levels else {
        eprintln!("erode: stopped: nothing written");
        std::process::exit(130);
    };
    let model_seconds = t0.elapsed().as_secs_f64();

    // the output set, written as a whole
    let _lock = erode_io::run::create_output_folder(&a.output)?;
    let staging = erode_io::run::Staging::new(&a.output)?;
    let dir = staging.path();
    let write = erode_io::WriteOptions::default();
    let mut report_levels = Vec::new();
    for (k, level) in levels.iter().enumerate() {
        erode_io::write(&dir.join(format!("level-{k}.tif")), &level.map, &write).map_err(|e| staging.as_placed(e))?;
        let g = &level.map.heights;
        let stats = level.map.stats();
        report_levels.push(serde_json::json!({
            "level": k,
            "width": g.width(),
            "height": g.height(),
            "cell_size": g.cell_size(),
            "years": level.years,
            "steps": level.steps,
            "min": stats.min,
            "max": stats.max,
            "seconds": level.seconds,
        }));
    }
    let result = &levels.last().context("no level")?.map;
    erode_io::write(&dir.join("height.tif"), result, &write).map_err(|e| staging.as_placed(e))?;
    let (preview_map, _) = erode::preview::fit(result, None, erode::preview::PREVIEW_MAX_SIDE)?;
    let image = erode::preview::render(&preview_map, None, None, &Default::default());
    erode_io::write_rgb_png(&dir.join("preview.png"), &image).map_err(|e| staging.as_placed(e))?;
    let report = serde_json::json!({
        "command": "amplify",
        "input": a.input_file.as_ref().map(|p| p.display().to_string()),
        "seed": if a.input_file.is_none() { Some(a.seed) } else { None },
        "params": params,
        "levels": report_levels,
        "model_seconds": model_seconds,
        "threads": pool.current_num_threads(),
        "files": staging.names()?,
    });
    let text = serde_json::to_string_pretty(&report)?;
    erode_io::write_atomic(&dir.join("report.json"), text.as_bytes()).map_err(|e| staging.as_placed(e))?;
    staging.commit(a.input_file.as_slice())?;
    Ok(())
}
