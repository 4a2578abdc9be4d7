use std::path::PathBuf;

use anyhow::Context;
use erode::analysis::{self, Figures, Options};
use erode::preview::{PreviewStyle, render};

use crate::input::InputArgs;
use crate::output;

/// Measure a terrain: slope–area fit, drainage density, depressions, hypsometry, fine relief.
#[derive(clap::Args)]
#[command(
    after_help = "Figures (see docs/analysis.md): the slope–area fit S = ks·A^-θ over channel cells (θ ≈ 0.35–0.6
in fluvial landscapes, ≈ 0.1 in noise), drainage density, closed depressions per km², the
hypsometric integral, and fine relief (RMS of the terrain minus its blur; axis/diagonal power
~1 unless the relief lines up with the grid). Nodata cells are outside the domain: flow leaves
the map through them as across its edge.

With -o DIR: drainage_area (D8, m²), drainage_area_mfd (Freeman 1991, m²), slope (m/m),
profile_curvature and plan_curvature (1/m), depression_depth (m), fine_relief (m) in every
--format; channels.png (hillshade with the channel network), slope-area.png, analysis.json.

Examples:
  erode analyze dem.tif
  erode analyze out/height.tif --json
  erode analyze dem.tif -o dem-analysis --format tif,png"
)]
pub struct Args {
    /// The heightmap.
    heightmap: PathBuf,
    /// Print the figures as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Write maps and plots into this folder (created if missing).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Map formats, comma-separated: tif, png, exr, pgm, npy, r16, r32.
    #[arg(long, value_delimiter = ',', default_value = "tif")]
    format: Vec<String>,
    /// Smallest drainage area of the slope–area fit, cells.
    #[arg(long, default_value_t = 100.0)]
    min_area: f64,
    /// Drainage area from which a cell counts as a channel, cells.
    #[arg(long, default_value_t = 100.0)]
    channel_area: f64,
    /// Depth a closed depression needs to be counted, m.
    #[arg(long, default_value_t = 0.01)]
    depression_depth: f64,
    #[command(flatten)]
    input: InputArgs,
}

/// The figures as a few lines of text.
fn summary(name: &str, f: &Figures) -> String {
    let mut s = format!(
        "{name}: {} x {} cells of {:.4} x {:.4} m ({:.4} km², {} with data)\n",
        f.width, f.height, f.cell_size_x, f.cell_size_y, f.area_km2, f.valid_cells
    );
    s += &match &f.slope_area {
        Some(fit) => format!(
            "  slope–area    θ {:.3}, R² {:.3}, ks {:.4}, ksn {:.4} over {:.3e}–{:.3e} m² ({} bins, {} cells)\n",
            fit.theta,
            fit.r_squared,
            fit.steepness,
            fit.normalized_steepness,
            fit.min_area_m2,
            fit.max_area_m2,
            fit.bins,
            fit.cells
        ),
        None => "  slope–area    no fit: fewer than 3 area bins with enough channel cells\n".into(),
    };
    s += &format!(
        "  drainage      {:.3} km/km² of channels (from {} cells), largest area {:.4e} m²\n",
        f.drainage.density_per_km, f.drainage.channel_area_cells, f.drainage.max_area_m2
    );
    s += &format!(
        "  depressions   {} ({:.3} per km², deeper than {} m), {:.4e} m³\n",
        f.depressions.count, f.depressions.per_km2, f.depressions.min_depth_m, f.depressions.volume_m3
    );
    let opt = |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |v| format!("{v:.digits$}"));
    s += &format!(
        "  relief        {:.3}–{:.3} m (p1–p99 {:.3}–{:.3}), hypsometric integral {}, mean slope {:.4}, steepest 1 % from {:.4}\n",
        f.relief.min,
        f.relief.max,
        f.relief.p1,
        f.relief.p99,
        opt(f.hypsometric_integral, 3),
        f.mean_slope,
        f.steep_slope
    );
    s += &format!(
        "  fine relief   {:.4} m (hillslopes {} m), axis/diagonal power {}",
        f.fine_relief.all_m,
        opt(f.fine_relief.hillslopes_m, 4),
        opt(f.fine_relief.axis_to_diagonal, 3)
    );
    s
}

/// The names of the maps `--output` holds.
const MAP_NAMES: [&str; 7] = [
    "drainage_area",
    "drainage_area_mfd",
    "slope",
    "profile_curvature",
    "plan_curvature",
    "depression_depth",
    "fine_relief",
];

pub fn run(a: Args) -> anyhow::Result<()> {
    let options = Options {
        min_area_cells: a.min_area,
        channel_area_cells: a.channel_area,
        depression_depth: a.depression_depth,
        maps: a.output.is_some(),
    };
    options.validate()?;
    let formats = output::formats(&a.format)?;
    if let Some(out) = &a.output {
        erode_io::run::check_inputs_kept(out, std::slice::from_ref(&a.heightmap), || {
            let maps = MAP_NAMES.iter().flat_map(|n| formats.iter().map(move |f| format!("{n}.{}", f.extension())));
            maps.chain(["channels.png", "slope-area.png", "analysis.json"].map(String::from)).collect()
        })?;
    }
    let loaded = a.input.read(&a.heightmap)?;
    let g = &loaded.map.heights;
    crate::memory::check(g.width(), g.height(), crate::memory::Work::Analyze(options.maps), a.input.max_memory)?;
    let result = analysis::analyze(&loaded.map, &options).with_context(|| a.heightmap.display().to_string())?;
    let figures = &result.figures;
    if let (Some(out), Some(maps)) = (&a.output, &result.maps) {
        // written as one set, as a run's: a stop or failure midway leaves the folder as it was
        let _lock = erode_io::run::create_output_folder(out)?;
        let staging = erode_io::run::Staging::new(out)?;
        let dir = staging.path();
        let placed = |e: erode_io::Error| staging.as_placed(e);
        let fields = [
            &maps.drainage_area,
            &maps.drainage_area_mfd,
            &maps.slope,
            &maps.profile_curvature,
            &maps.plan_curvature,
            &maps.depression_depth,
            &maps.fine_relief,
        ];
        let footprint = erode_io::Footprint::of(&loaded.map, loaded.info.clone());
        for (name, field) in MAP_NAMES.into_iter().zip(fields) {
            erode_io::outputs::write_map(dir, name, &formats, &footprint, field.to_vec()).map_err(placed)?;
        }
        // the channel network in blue over the hillshade, stronger with log drainage area
        let threshold = a.channel_area * loaded.map.heights.cell_size().area();
        let channels: Vec<f32> = maps
            .drainage_area
            .iter()
            .map(|&v| if f64::from(v) >= threshold { (f64::from(v) / threshold).log10() as f32 + 0.5 } else { 0.0 })
            .collect();
        let channels = erode::Grid::from_vec(figures.width, figures.height, loaded.map.heights.cell_size(), channels)?;
        let image = render(&loaded.map, None, Some(&channels), &PreviewStyle::default());
        erode_io::write_rgb_png(&dir.join("channels.png"), &image).map_err(placed)?;
        // a thinned sample is enough for the cloud of points
        let step = (maps.slope_area_samples.len() / 20_000).max(1);
        let sample: Vec<(f64, f64)> = maps.slope_area_samples.iter().step_by(step).copied().collect();
        let name = a.heightmap.file_name().map_or_else(|| "terrain".into(), |n| n.to_string_lossy().into_owned());
        erode_io::write_rgb_png(&dir.join("slope-area.png"), &crate::plot::slope_area(figures, &sample, &name)?)
            .map_err(placed)?;
        erode_io::write_atomic(&dir.join("analysis.json"), serde_json::to_string_pretty(figures)?.as_bytes())
            .map_err(placed)?;
        staging.commit(std::slice::from_ref(&a.heightmap))?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(figures)?);
    } else {
        println!("{}", summary(&a.heightmap.display().to_string(), figures));
    }
    Ok(())
}
