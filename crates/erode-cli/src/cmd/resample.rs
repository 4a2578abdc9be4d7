use std::path::PathBuf;

use anyhow::bail;
use erode::transform::{Filter, resample};

use crate::input::{InputArgs, MAX_CELL_SIZE, MIN_CELL_SIZE, parse_cell_size_as};
use crate::memory::{Work, check};

/// Resample a heightmap to another size or cell size over the same extent (heights in metres
/// unchanged; cells grow or shrink; the georeference scaled to match).
#[derive(clap::Args)]
#[command(after_help = "Examples:
  erode resample range.tif --factor 4 -o range-x4.tif        (4x the cells, a quarter the cell size)
  erode resample dem.tif --resolution 30 -o dem-30m.tif       (cells of 30 m)
  erode resample big.tif --size 1024 -o small.png --filter box
Growing interpolates (cubic by default); shrinking averages the covered cells with the filter
stretched over them, so it never aliases. Nodata stays nodata.")]
pub struct Args {
    /// Input heightmap.
    input_file: PathBuf,
    /// Output heightmap; the format follows the extension.
    #[arg(short, long)]
    output: PathBuf,
    /// New size in cells, `N` (the longer side; the other keeps the aspect ratio) or `WxH`.
    #[arg(long, value_name = "N|WxH", group = "target")]
    size: Option<String>,
    /// Multiply the cell counts by this (2 doubles the resolution, 0.5 halves it).
    #[arg(long, value_name = "F", group = "target")]
    factor: Option<f64>,
    /// New cell size in metres, `S` or `XxY` (the counts are rounded, so the extent stays and
    /// the cell size may differ slightly; the result is printed when it does).
    #[arg(long, value_name = "METRES", group = "target", allow_negative_numbers = true)]
    resolution: Option<String>,
    /// Kernel: box, bilinear, cubic (Catmull–Rom) or lanczos3.
    #[arg(long, default_value = "cubic", value_parser = parse_filter)]
    filter: Filter,
    #[command(flatten)]
    input: InputArgs,
}

fn parse_filter(text: &str) -> Result<Filter, String> {
    Filter::from_name(&text.to_ascii_lowercase()).ok_or_else(|| {
        let names: Vec<_> = Filter::ALL.iter().map(|f| f.name()).collect();
        format!("unknown filter `{text}`: use {}", names.join(", "))
    })
}

/// A count scaled by `f`, at least one cell; `None` when it is no count.
fn scaled(n: usize, f: f64) -> Option<usize> {
    let v = (n as f64 * f).round();
    (v.is_finite() && v >= 1.0 && v <= u32::MAX as f64).then_some(v as usize)
}

/// The new size from whichever of --size, --factor or --resolution was given.
fn target(a: &Args, width: usize, height: usize, cell: erode::CellSize) -> anyhow::Result<(usize, usize)> {
    if let Some(text) = &a.size {
        let whole = |s: &str| -> anyhow::Result<usize> {
            match s.trim().parse::<usize>() {
                Ok(v) if v > 0 => Ok(v),
                _ => bail!("--size `{text}`: expected N or WIDTHxHEIGHT in whole cells above 0"),
            }
        };
        return match text.split_once(['x', 'X']) {
            Some((w, h)) => Ok((whole(w)?, whole(h)?)),
            None => {
                let n = whole(text)?;
                let long = width.max(height) as f64;
                let keep = |side: usize| scaled(side, n as f64 / long).unwrap_or(1);
                Ok((keep(width), keep(height)))
            }
        };
    }
    if let Some(f) = a.factor {
        if !(f.is_finite() && f > 0.0) {
            bail!("--factor {f}: expected a positive number (2 doubles the cells, 0.5 halves them)");
        }
        return match (scaled(width, f), scaled(height, f)) {
            (Some(w), Some(h)) => Ok((w, h)),
            _ => bail!(
                "--factor {f}: {width} x {height} cells would become {:.3e} x {:.3e}",
                width as f64 * f,
                height as f64 * f
            ),
        };
    }
    if let Some(text) = &a.resolution {
        let r = parse_cell_size_as(text, "--resolution")?;
        let (w, h) = (scaled(width, cell.x / r.x), scaled(height, cell.y / r.y));
        let (Some(w), Some(h)) = (w, h) else {
            bail!(
                "--resolution {text}: the map is {:.4e} x {:.4e} m, so that gives no whole cell",
                width as f64 * cell.x,
                height as f64 * cell.y
            )
        };
        return Ok((w, h));
    }
    bail!("say the new size: --size, --factor or --resolution")
}

pub fn run(a: Args) -> anyhow::Result<()> {
    if a.size.is_none() && a.factor.is_none() && a.resolution.is_none() {
        bail!("say the new size: --size N (or WxH), --factor F or --resolution METRES");
    }
    erode_io::Format::from_path(&a.output)?;
    erode_io::check_output(&a.output)?;
    erode_io::check_not_input(&a.output, &a.input_file)?;
    let loaded = a.input.read(&a.input_file)?;
    let g = &loaded.map.heights;
    let cell = g.cell_size();
    let (width, height) = target(&a, g.width(), g.height(), cell)?;
    let cells = (width as u64).saturating_mul(height as u64);
    if cells > a.input.max_cells {
        bail!(
            "the resampled map would be {width} x {height} = {cells} cells, more than --max-cells {}; \
             ask for fewer cells or raise --max-cells",
            a.input.max_cells
        );
    }
    let new_cell =
        erode::CellSize { x: cell.x * g.width() as f64 / width as f64, y: cell.y * g.height() as f64 / height as f64 };
    for v in [new_cell.x, new_cell.y] {
        if !(MIN_CELL_SIZE..=MAX_CELL_SIZE).contains(&v) {
            bail!(
                "{width} x {height} cells would be {v:e} m each: cells must be {MIN_CELL_SIZE:e} to {MAX_CELL_SIZE:e} m"
            );
        }
    }
    // the rows filtered one way are `width` x the input's rows: more than the output when it
    // has fewer rows
    check(width, height.max(g.height()), Work::Resample, a.input.max_memory)?;
    if let Some(text) = &a.resolution {
        let asked = parse_cell_size_as(text, "--resolution")?;
        let off = |got: f64, want: f64| ((got - want) / want).abs() > 1e-6;
        if off(new_cell.x, asked.x) || off(new_cell.y, asked.y) {
            eprintln!(
                "erode: note: {width} x {height} cells of {:.6} x {:.6} m cover the map's {:.1} x {:.1} m (asked {} m)",
                new_cell.x,
                new_cell.y,
                g.width() as f64 * cell.x,
                g.height() as f64 * cell.y,
                text
            );
        }
    }
    let out = resample(&loaded.map, width, height, a.filter)?;
    let scale = (g.width() as f64 / width as f64, g.height() as f64 / height as f64);
    let georef = loaded.info.georef.as_ref().map(|geo| geo.window(0.0, 0.0, scale));
    crate::output::write_like_input(&a.output, out, &loaded.info, georef, a.input.cell_size.is_some())
}
