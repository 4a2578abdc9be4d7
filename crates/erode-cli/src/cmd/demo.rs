use std::path::{Path, PathBuf};

use erode::contract::GridRun;
use erode::models::grid::{Params, StartMaps, State};
use erode::preview::{PreviewStyle, render};
use erode::terrain::{TerrainKind, TerrainSpec, generate};
use erode::{CellSize, Grid, Heightmap};
use erode_io::run::{Front, GridFront, Job, RunError, Stamp, Until, Watch};
use serde_json::{Map, Value};

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
    let run = GridRun::new(params, st)?;
    // every model's presets come default first
    let preset = erode::models::grid::PRESETS[0].name;
    let stamp = Stamp::of_heightmap(&before, format!("the artist bench, {0}x{0}, seed {1}", a.size, a.seed));
    let input = erode_io::Loaded {
        map: before.clone(),
        info: erode_io::SourceInfo {
            format: erode_io::Format::Tiff,
            sample_type: "float32",
            mapping: None,
            nodata_value: None,
            georef: None,
            assumed: None,
        },
    };
    let front = DemoFront {
        grid: GridFront::new(&run, input, Vec::new(), erode_io::outputs::Wanted::Named(Vec::new()), preset),
        before,
    };
    let job = Job {
        model: run,
        front,
        output: a.output.clone(),
        until: Until::Count(a.iterations),
        checkpoint_every: 0,
        resumed: None,
        stamp,
        inputs: Vec::new(),
        force: false,
        pool: rayon::ThreadPoolBuilder::new().build()?,
        command: std::env::args().collect(),
    };
    erode_io::run::run(job, &crate::progress::RunWatch::at_once(quiet))?;
    if !quiet {
        eprintln!("eroded {0} x {0} cells for {1} iterations; wrote {2}", a.size, a.iterations, a.output.display());
    }
    Ok(())
}

/// The demo's set: the terrain before and after (heights and hillshades), erosion and
/// deposition; the report as the grid model's run gives it.
struct DemoFront {
    grid: GridFront,
    before: Heightmap,
}

/// The files of the demo's set, `report.json` aside.
const DEMO_FILES: [&str; 6] =
    ["height-before.tif", "before.png", "height.tif", "erosion.tif", "deposition.tif", "after.png"];

impl Front<GridRun> for DemoFront {
    fn after_advance(&mut self, model: &GridRun, watch: &dyn Watch) {
        self.grid.after_advance(model, watch);
    }
    fn write_outputs(&self, model: &GridRun, dir: &Path) -> Result<(), RunError> {
        let st = model.state();
        let map = |v: Vec<f32>| -> Result<Heightmap, RunError> {
            let grid =
                Grid::from_vec(st.width, st.height, st.cell_size, v).map_err(|e| RunError::Other(e.to_string()))?;
            Heightmap::new(grid).map_err(|e| RunError::Other(e.to_string()))
        };
        let after = map(st.heights())?;
        let style = PreviewStyle::default();
        let options = Default::default();
        erode_io::write(&dir.join("height-before.tif"), &self.before, &options)?;
        erode_io::write_rgb_png(&dir.join("before.png"), &render(&self.before, None, None, &style))?;
        erode_io::write(&dir.join("height.tif"), &after, &options)?;
        erode_io::write(&dir.join("erosion.tif"), &map(st.eroded.clone())?, &options)?;
        erode_io::write(&dir.join("deposition.tif"), &map(st.deposited.clone())?, &options)?;
        erode_io::write_rgb_png(&dir.join("after.png"), &render(&after, None, None, &style))?;
        Ok(())
    }
    fn file_names(&self, _model: &GridRun) -> Vec<String> {
        DEMO_FILES.map(String::from).to_vec()
    }
    fn preset(&self) -> Option<&str> {
        self.grid.preset()
    }
    fn footprint(&self) -> Option<&erode_io::Footprint> {
        self.grid.footprint()
    }
    fn params(&self, model: &GridRun) -> Value {
        self.grid.params(model)
    }
    fn details(&self, model: &GridRun) -> Map<String, Value> {
        self.grid.details(model)
    }
}
