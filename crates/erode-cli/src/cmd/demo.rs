use std::path::PathBuf;
use std::time::Instant;

use erode::contract::{GridRun, Model};
use erode::models::grid::{Params, StartMaps, State};
use erode::preview::{PreviewStyle, render};
use erode::terrain::{TerrainKind, TerrainSpec, generate};
use erode::{CellSize, Grid, Heightmap};
use serde_json::json;

use crate::progress;

/// Generate a terrain, erode it with the grid model's default preset (rivers) and render it
/// before and after: the README's first command.
#[derive(clap::Args)]
#[command(after_help = "Writes into OUTDIR: height-before.tif, height.tif, erosion.tif, deposition.tif,
before.png, after.png (hillshaded), report.json. The terrain is the artist bench (fBm, 2 m cells; 512²
is 1 km across); the model is the grid model's default, the rivers preset. Measure the result with
`erode analyze demo-out/height.tif`.

Examples:
  erode demo
  erode demo -o /tmp/demo --size 1024 --seed 3 --iterations 1500")]
pub struct Args {
    /// Output folder (created if missing).
    #[arg(short, long, default_value = "demo-out")]
    output: PathBuf,
    /// Terrain size in cells (2 m cells: the bench terrain an artist erodes).
    #[arg(long, default_value_t = 512)]
    size: usize,
    /// Seed of the terrain.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Iterations of the grid model (the rivers preset: each moves the terrain as 60,000 s of
    /// storm would).
    #[arg(long, default_value_t = 800)]
    iterations: u64,
}

pub fn run(a: Args, quiet: bool) -> anyhow::Result<()> {
    if a.output.exists() && !a.output.is_dir() {
        anyhow::bail!("{}: the output is a folder, and this is a file", a.output.display());
    }
    // the folder may not exist yet: then its parent must take it (it is made at the end, with
    // the whole set: a stopped demo leaves nothing)
    let probe = if a.output.is_dir() { a.output.join("report.json") } else { a.output.clone() };
    erode_io::check_output(&probe)?;
    if a.size < 16 {
        anyhow::bail!("--size {}: at least 16 cells", a.size);
    }
    let mut before = erode::terrain::bench::bench(erode::terrain::bench::Bench::Artist, a.size)?;
    if a.seed != 1 {
        let spec = TerrainSpec {
            kind: TerrainKind::Fbm,
            width: a.size,
            height: a.size,
            cell_size: CellSize::square(2.0),
            seed: a.seed,
            relief: before.stats().max as f64 - before.stats().min as f64,
            feature_size: 256.0,
            octaves: 8,
            ..Default::default()
        };
        before = generate(&spec)?;
    }
    let params = Params::default();
    let st = State::new(&before.heights, &params, StartMaps::default())?;
    let mut run = GridRun::new(params, st)?;
    let bar = progress::bar(a.iterations, "it", quiet);
    bar.set_message("erode");
    let t0 = Instant::now();
    // batches of 10: the simulator writes the velocity output on a batch's last iteration only
    let mut done = 0;
    while done < a.iterations {
        let n = (a.iterations - done).min(10);
        run.advance(n, &mut |_| {})?;
        done += n;
        bar.inc(n);
    }
    let seconds = t0.elapsed().as_secs_f64();
    bar.finish_and_clear();

    // the set, written as a whole
    let _lock = erode_io::run::create_output_folder(&a.output)?;
    let staging = erode_io::run::Staging::new(&a.output)?;
    let out = |name: &str| staging.path().join(name);
    let placed = |e: erode_io::Error| staging.as_placed(e);
    let st = run.state();
    let grid = |v: &[f32]| Grid::from_vec(st.width, st.height, st.cell_size, v.to_vec());
    let after = Heightmap::new(grid(&st.heights())?)?;
    let erosion = grid(&st.eroded)?;
    erode_io::write(&out("height-before.tif"), &before, &Default::default()).map_err(placed)?;
    erode_io::write_rgb_png(&out("before.png"), &render(&before, None, None, &PreviewStyle::default()))
        .map_err(placed)?;
    erode_io::write(&out("height.tif"), &after, &Default::default()).map_err(placed)?;
    erode_io::write(&out("erosion.tif"), &Heightmap::new(erosion.clone())?, &Default::default()).map_err(placed)?;
    erode_io::write(&out("deposition.tif"), &Heightmap::new(grid(&st.deposited)?)?, &Default::default())
        .map_err(placed)?;
    erode_io::write_rgb_png(&out("after.png"), &render(&after, None, None, &PreviewStyle::default()))
        .map_err(placed)?;
    let balance = st.balance();
    let report = json!({
        "model": "grid", "backend": "cpu", "width": st.width, "height": st.height,
        "preset": "rivers", "iterations": st.iteration, "seconds": seconds,
        "simulated_seconds": st.time, "terrain_seconds": st.terrain_time,
        "iterations_per_second": st.iteration as f64 / seconds.max(1e-9),
        "mass_balance": { "relative_error": balance.relative_error, "books": st.books },
        "files": staging.names()?,
    });
    erode_io::write_atomic(&out("report.json"), serde_json::to_string_pretty(&report)?.as_bytes()).map_err(placed)?;
    staging.commit(&[])?;
    if !quiet {
        eprintln!(
            "eroded {} x {} cells for {} iterations in {:.1} s; wrote {}",
            st.width,
            st.height,
            st.iteration,
            seconds,
            a.output.display()
        );
    }
    Ok(())
}
