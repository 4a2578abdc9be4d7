use std::path::PathBuf;

use erode_io::{CrsKind, Loaded};
use serde_json::json;

use crate::input::InputArgs;

/// Describe a heightmap: size, cell size, heights, nodata, georeference.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  erode info dem.tif
  erode info --json height.png
  erode info --raw-size 1025x513 terrain.r16 --min-height 0 --max-height 800")]
pub struct Args {
    /// The heightmap.
    file: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    input: InputArgs,
}

/// The description `info` prints, as JSON.
pub fn describe(path: &std::path::Path, loaded: &Loaded) -> serde_json::Value {
    let map = &loaded.map;
    let g = &map.heights;
    let stats = map.stats();
    let cell = g.cell_size();
    let georef = loaded.info.georef.as_ref().map(|geo| {
        json!({
            "crs": geo.crs_kind().map(|k| match k {
                CrsKind::Projected => "projected",
                CrsKind::Geographic => "geographic",
                CrsKind::Local => "local",
            }),
            "epsg": geo.epsg(),
            "origin": geo.origin().map(|(x, y)| [x, y]),
            "pixel_size": geo.pixel_size().map(|(x, y)| [x, y]),
        })
    });
    json!({
        "path": path.display().to_string(),
        "format": loaded.info.format,
        "sample_type": loaded.info.sample_type,
        "width": g.width(),
        "height": g.height(),
        "cell_size": { "x": cell.x, "y": cell.y },
        "min": stats.min,
        "max": stats.max,
        "mean": stats.mean,
        "nodata_count": map.nodata_count(),
        "nodata_value": loaded.info.nodata_value.map(|v| if v.is_nan() { json!("nan") } else { json!(v) }),
        "mapping": loaded.info.mapping,
        "georeference": georef,
    })
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let loaded = a.input.read(&a.file)?;
    let d = describe(&a.file, &loaded);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&d)?);
        return Ok(());
    }
    let map = &loaded.map;
    let stats = map.stats();
    let cell = map.heights.cell_size();
    println!("{}", a.file.display());
    println!("  format      {:?}, {}", loaded.info.format, loaded.info.sample_type);
    println!("  size        {} x {} cells", map.heights.width(), map.heights.height());
    println!("  cell size   {:.4} x {:.4} m", cell.x, cell.y);
    println!("  heights     min {:.3} m, max {:.3} m, mean {:.3} m", stats.min, stats.max, stats.mean);
    println!("  nodata      {} cells", map.nodata_count());
    if let Some(m) = &loaded.info.mapping {
        match m {
            erode_io::IntMapping::Range { min, max } => {
                println!("  mapping     samples 0 to full scale span {min} to {max} m")
            }
            erode_io::IntMapping::Scale { scale, offset } => {
                println!("  mapping     {offset} m + {scale} m per sample")
            }
        }
    }
    if let Some(geo) = d.get("georeference").filter(|g| !g.is_null()) {
        println!("  georef      {geo}");
    }
    Ok(())
}
