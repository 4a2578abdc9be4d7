use std::path::PathBuf;

use anyhow::bail;
use erode::transform::{Filter, resample};
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
    erode_io::check_output(&a.output)?;
    erode_io::check_not_input(&a.output, &a.input_file)?;
    let erode_io::Loaded { mut map, info } = erode_io::read(&a.input_file, &options)?;
    let mut georef = info.georef.clone();
    if let Some(e) = engine {
        let (w, h) = (map.heights.width(), map.heights.height());
        let (width, height) = e.size(w, h);
        if (width, height) != (w, h) {
            map = resample(&map, width, height, Filter::Cubic)?;
            let c = map.heights.cell_size();
            eprintln!(
                "erode: note: resampled from {w} x {h} to {width} x {height} cells for {} (cells now {:.4} x {:.4} m)",
                e.name(),
                c.x,
                c.y
            );
            georef = georef.map(|g| g.window(0.0, 0.0, (w as f64 / width as f64, h as f64 / height as f64)));
        }
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
        println!("{} import settings for {}:", e.name(), a.output.display());
        let width = settings.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0);
        for (k, v) in settings {
            println!("  {k:width$}  {v}");
        }
    }
    Ok(())
}
