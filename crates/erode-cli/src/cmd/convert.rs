use std::path::PathBuf;

use anyhow::bail;
use erode::transform::{Filter, Tiles, resample};
use erode_io::engine::Engine;

use crate::input::InputArgs;

/// Convert a heightmap to another format (chosen by the output's extension), keeping heights in
/// metres, the georeference and nodata.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  erode convert dem.tif -o dem.exr
  erode convert painted.png --min-height 0 --max-height 250 -o terrain.tif
  erode convert terrain.r16 --raw-size 1025x1025 -o terrain.png
  erode convert out/height.tif -o unity.r16 --engine unity     (2^n+1 square, the import settings printed)
  erode convert out/height.tif -o landscape.png --engine unreal (a landscape size; X/Y/Z scale printed)
  erode convert big.tif -o tiles/terrain.r16 --engine unity --tile 1025
                                          (tiles/terrain_R_C.r16 of 1025² samples sharing their edges,
                                           one height range for all, and tiles/terrain.tiles.json)

A raw output (.r16, .r32) gets a sidecar beside it (FILE.r16.json: size, cell size, height range,
nodata), which erode reads back.")]
pub struct Args {
    /// Input heightmap.
    input_file: PathBuf,
    /// Output heightmap.
    #[arg(short, long)]
    output: PathBuf,
    /// Write for a game engine's terrain: unity (.r16, 2^n+1 a side), unreal (.png or .r16, a
    /// landscape size), godot (.exr in metres, Terrain3D). Resampled (cubic) over the same
    /// extent to the engine's size; the numbers for its import dialog printed.
    #[arg(long, value_name = "ENGINE", value_parser = ["unity", "unreal", "godot"])]
    engine: Option<String>,
    /// Cut the map into square tiles of SAMPLES a side whose neighbours share their border row
    /// and column (seams identical), all over one height range: OUTPUT_R_C.EXT and
    /// OUTPUT.tiles.json. The map is resampled (cubic, same extent) to whole tiles; with
    /// --engine, SAMPLES is one of the engine's terrain sizes (unity: 2^n+1).
    #[arg(long, value_name = "SAMPLES")]
    tile: Option<usize>,
    #[command(flatten)]
    input: InputArgs,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let options = a.input.options()?;
    let format = erode_io::Format::from_path(&a.output)?;
    let engine = a.engine.as_deref().and_then(Engine::from_name);
    if let Some(e) = engine
        && !e.formats().contains(&format)
    {
        let names: Vec<String> = e.formats().iter().map(|f| format!("*.{}", f.extension())).collect();
        bail!("--engine {}: it imports {}; name the output so", e.name(), names.join(" or "));
    }
    if let (Some(e), Some(t)) = (engine, a.tile) {
        let sizes = e.tile_sizes();
        if !sizes.is_empty() && !sizes.contains(&t) {
            let names: Vec<String> = sizes.iter().map(usize::to_string).collect();
            bail!("--tile {t}: {} terrains are {} samples a side", e.name(), names.join(", "));
        }
    }
    if let Some(t) = a.tile {
        Tiles::fit(1, 1, t).map_err(|e| anyhow::anyhow!("--tile {t}: {e}"))?;
    }
    erode_io::check_output(&a.output)?;
    erode_io::check_not_input(&a.output, &a.input_file)?;
    let erode_io::Loaded { mut map, info } = erode_io::read(&a.input_file, &options)?;
    let mut georef = info.georef.clone();
    let target = match (a.tile, engine) {
        (Some(t), _) => Some(Tiles::fit(map.heights.width(), map.heights.height(), t)?),
        (None, Some(e)) => Some(e.size(map.heights.width(), map.heights.height())),
        (None, None) => None,
    };
    if let Some((width, height)) = target {
        let (w, h) = (map.heights.width(), map.heights.height());
        if (width, height) != (w, h) {
            map = resample(&map, width, height, Filter::Cubic)?;
            let c = map.heights.cell_size();
            let what = match (a.tile, engine) {
                (Some(t), _) => format!("whole tiles of {t}"),
                (None, e) => e.map_or("", |e| e.name()).to_string(),
            };
            eprintln!(
                "erode: note: resampled from {w} x {h} to {width} x {height} cells for {what} (cells now {:.4} x {:.4} m)",
                c.x, c.y
            );
            georef = georef.map(|g| g.window(0.0, 0.0, (w as f64 / width as f64, h as f64 / height as f64)));
        }
    }
    if let Some(t) = a.tile {
        let tiles = Tiles::new(map.heights.width(), map.heights.height(), t)?;
        let job = crate::tiles::TileJob {
            output: &a.output,
            input: &a.input_file,
            info: &info,
            georef,
            cell_given: a.input.cell_size.is_some(),
        };
        let (range, first) = crate::tiles::write_tiles(&job, &map, &tiles)?;
        println!(
            "{} x {} tiles of {t} x {t} samples, heights {:.2} to {:.2} m",
            tiles.across, tiles.down, range.0, range.1
        );
        if let Some(e) = engine {
            print_settings(e, "each tile", e.import_settings(&first, range));
            println!("  tile R_C lies at {} (x east, z south) from tile 0_0", tile_offset(&first));
        }
        return Ok(());
    }
    let nodata = map.nodata_count();
    let range = erode_io::sample_range(&map, &erode_io::WriteOptions::default());
    let settings = engine.map(|e| e.import_settings(&map, range));
    crate::output::write_like_input(&a.output, map, &info, georef, a.input.cell_size.is_some())?;
    if format == erode_io::Format::R16 && nodata > 0 {
        eprintln!(
            "erode: note: {nodata} cells without data written as sample 0 (said in {})",
            erode_io::raw_sidecar(&a.output).display()
        );
    }
    if let (Some(e), Some(settings)) = (engine, settings) {
        print_settings(e, &a.output.display().to_string(), settings);
    }
    Ok(())
}

/// Prints an engine's import settings for `what`.
fn print_settings(e: Engine, what: &str, settings: Vec<(String, String)>) {
    println!("{} import settings for {what}:", e.name());
    let width = settings.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0);
    for (k, v) in settings {
        println!("  {k:width$}  {v}");
    }
}

/// Where tile `R_C` of tiles like `tile` lies from the first, metres, in words.
fn tile_offset(tile: &erode::Heightmap) -> String {
    let g = &tile.heights;
    let c = g.cell_size();
    let m = |v: f64| (v * 1000.0).round() / 1000.0;
    format!("x = C·{} m, z = R·{} m", m(c.x * (g.width() - 1) as f64), m(c.y * (g.height() - 1) as f64))
}
