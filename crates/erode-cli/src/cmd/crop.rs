use std::path::PathBuf;

use anyhow::bail;
use erode::transform::{Window, crop};

use crate::input::InputArgs;

/// Cut a window out of a heightmap, cell for cell (heights, cell size, nodata and the
/// georeference kept; the georeference moved to the window's corner).
#[derive(clap::Args)]
#[command(after_help = "Examples:
  erode crop range.tif --cells 1024,1024,512,512 -o detail.tif
  erode crop dem.tif --projwin 431000,4871000,436000,4866000 -o valley.tif   (map coordinates)")]
pub struct Args {
    /// Input heightmap.
    input_file: PathBuf,
    /// Output heightmap; the format follows the extension.
    #[arg(short, long)]
    output: PathBuf,
    /// The window in cells: `COLUMN,ROW,WIDTH,HEIGHT` (row 0 is the top).
    #[arg(long, value_name = "C,R,W,H", group = "window", allow_hyphen_values = true)]
    cells: Option<String>,
    /// The window in the map's coordinates (its CRS units, as gdal_translate's -projwin):
    /// `ULX,ULY,LRX,LRY`, the upper-left and lower-right corners; rounded to the nearest cell edges.
    #[arg(long, value_name = "ULX,ULY,LRX,LRY", group = "window", allow_hyphen_values = true)]
    projwin: Option<String>,
    #[command(flatten)]
    input: InputArgs,
}

/// Four comma-separated numbers.
fn four(text: &str, flag: &str, what: &str) -> anyhow::Result<[f64; 4]> {
    let parts: Vec<f64> = text
        .split(',')
        .map(|p| p.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| anyhow::anyhow!("{flag} {text}: expected {what}"))?;
    match parts[..] {
        [a, b, c, d] if parts.iter().all(|v| v.is_finite()) => Ok([a, b, c, d]),
        _ => bail!("{flag} {text}: expected {what}"),
    }
}

/// The window `--cells` names.
fn cells_window(text: &str) -> anyhow::Result<Window> {
    let what = "COLUMN,ROW,WIDTH,HEIGHT in whole cells";
    let v = four(text, "--cells", what)?;
    if v.iter().any(|x| *x < 0.0 || x.fract() != 0.0 || *x > u32::MAX as f64) {
        bail!("--cells {text}: expected {what}");
    }
    Ok(Window { col: v[0] as usize, row: v[1] as usize, width: v[2] as usize, height: v[3] as usize })
}

/// The window `--projwin` names, in cells of a map with this georeference.
fn map_window(text: &str, geo: Option<&erode_io::GeoRef>, width: usize, height: usize) -> anyhow::Result<Window> {
    let [ulx, uly, lrx, lry] = four(text, "--projwin", "ULX,ULY,LRX,LRY in the map's coordinates")?;
    let (Some((ox, oy)), Some((sx, sy))) = (geo.and_then(|g| g.origin()), geo.and_then(|g| g.pixel_size())) else {
        bail!("--projwin: the input has no georeference to place map coordinates; crop by --cells");
    };
    let (left, right) = ((ulx - ox) / sx, (lrx - ox) / sx);
    let (top, bottom) = ((oy - uly) / sy, (oy - lry) / sy);
    let bounds = format!(
        "the map spans x {} to {}, y {} to {}",
        ox.min(ox + sx * width as f64),
        ox.max(ox + sx * width as f64),
        oy.min(oy - sy * height as f64),
        oy.max(oy - sy * height as f64)
    );
    let (c0, c1, r0, r1) = (left.round(), right.round(), top.round(), bottom.round());
    if c1 <= c0 || r1 <= r0 {
        bail!(
            "--projwin {text}: holds no whole cell (the upper-left corner must lie up and left of the lower-right); {bounds}"
        );
    }
    if c0 < 0.0 || r0 < 0.0 || c1 > width as f64 || r1 > height as f64 {
        bail!("--projwin {text}: reaches outside the map; {bounds}");
    }
    Ok(Window { col: c0 as usize, row: r0 as usize, width: (c1 - c0) as usize, height: (r1 - r0) as usize })
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let cells = a.cells.as_deref().map(cells_window).transpose()?;
    if cells.is_none() && a.projwin.is_none() {
        bail!("say the window: --cells C,R,W,H or --projwin ULX,ULY,LRX,LRY");
    }
    erode_io::Format::from_path(&a.output)?;
    erode_io::check_output(&a.output)?;
    erode_io::check_not_input(&a.output, &a.input_file)?;
    let loaded = a.input.read(&a.input_file)?;
    let (width, height) = (loaded.map.heights.width(), loaded.map.heights.height());
    let window = match (cells, &a.projwin) {
        (Some(w), _) => w,
        (None, Some(text)) => map_window(text, loaded.info.georef.as_ref(), width, height)?,
        (None, None) => unreachable!("checked above"),
    };
    let out = crop(&loaded.map, window)?;
    let georef = loaded.info.georef.as_ref().map(|g| g.window(window.col as f64, window.row as f64, (1.0, 1.0)));
    crate::output::write_like_input(&a.output, out, &loaded.info, georef, a.input.cell_size.is_some())
}
