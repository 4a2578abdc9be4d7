//! Options shared by every command that reads a heightmap.

use std::path::Path;

use anyhow::{Context, bail};
use erode_io::{CellSize, IntMapping, Loaded, ReadOptions};

/// How to read an input heightmap.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct InputArgs {
    /// Height in metres of integer sample 0 (with --max-height). Default: the file's, else 0 for
    /// image formats (PNG, PGM, RAW).
    #[arg(long, value_name = "METRES", allow_negative_numbers = true)]
    pub min_height: Option<f64>,
    /// Height in metres of the largest integer sample (with --min-height). Default: the file's,
    /// else 100 for image formats.
    #[arg(long, value_name = "METRES", allow_negative_numbers = true)]
    pub max_height: Option<f64>,
    /// Metres per integer sample unit instead of a range (heights = min-height + sample * scale).
    #[arg(long, value_name = "METRES", conflicts_with = "max_height", allow_negative_numbers = true)]
    pub height_scale: Option<f64>,
    /// Cell size in metres, `S` or `XxY`. Default: from GeoTIFF tags or erode's metadata, else 1.
    #[arg(long, value_name = "METRES", allow_negative_numbers = true)]
    pub cell_size: Option<String>,
    /// Size of a RAW file, `WIDTHxHEIGHT`. Default: a square from the file length.
    #[arg(long, value_name = "WxH")]
    pub raw_size: Option<String>,
    /// Sample value marking missing data (`nan` allowed). Default: the file's.
    #[arg(long, value_name = "VALUE", allow_negative_numbers = true)]
    pub nodata: Option<f64>,
    /// Most memory the command may use, e.g. `6G` or `512M` (it refuses maps whose estimate is
    /// larger; over MPI ranks, rank 0's machine's for the ranks on it). Default: the memory
    /// available.
    #[arg(long, value_name = "SIZE", value_parser = crate::memory::parse_size)]
    pub max_memory: Option<u64>,
    /// Refuse inputs with more cells than this.
    #[arg(long, value_name = "CELLS", default_value_t = erode_io::DEFAULT_MAX_CELLS)]
    pub max_cells: u64,
}

fn pair(text: &str, what: &str) -> anyhow::Result<(f64, f64)> {
    let parse = |s: &str| s.trim().parse::<f64>().with_context(|| format!("{what} `{text}`: `{s}` is not a number"));
    match text.split_once(['x', 'X']) {
        Some((a, b)) => Ok((parse(a)?, parse(b)?)),
        None => {
            let v = parse(text)?;
            Ok((v, v))
        }
    }
}

/// Smallest cell size accepted, m (the library's bound).
pub const MIN_CELL_SIZE: f64 = CellSize::MIN;
/// Largest cell size accepted, m.
pub const MAX_CELL_SIZE: f64 = CellSize::MAX;

/// Parses `S` or `XxY` metres given as `--cell-size`.
pub fn parse_cell_size(text: &str) -> anyhow::Result<CellSize> {
    parse_cell_size_as(text, "--cell-size")
}

/// Parses `S` or `XxY` metres of a cell size given by `flag` (named in the errors).
pub fn parse_cell_size_as(text: &str, flag: &str) -> anyhow::Result<CellSize> {
    let (x, y) = pair(text, flag)?;
    if !(x > 0.0 && y > 0.0 && x.is_finite() && y.is_finite()) {
        bail!("{flag} `{text}`: must be positive metres");
    }
    let cell = CellSize { x, y };
    if cell.check().is_err() {
        bail!("{flag} `{text}`: must be {MIN_CELL_SIZE:e} to {MAX_CELL_SIZE:e} m");
    }
    Ok(cell)
}

impl InputArgs {
    /// Validates the flags into reader options.
    pub fn options(&self) -> anyhow::Result<ReadOptions> {
        let mapping = match (self.min_height, self.max_height, self.height_scale) {
            (_, _, Some(scale)) => Some(IntMapping::Scale { scale, offset: self.min_height.unwrap_or(0.0) }),
            (Some(min), Some(max), None) => {
                if max.partial_cmp(&min) != Some(std::cmp::Ordering::Greater) {
                    bail!("--max-height {max} must be above --min-height {min}");
                }
                Some(IntMapping::Range { min, max })
            }
            (None, None, None) => None,
            _ => bail!("give both --min-height and --max-height (or --height-scale)"),
        };
        let raw_size = match &self.raw_size {
            Some(t) => {
                let (w, h) = pair(t, "--raw-size")?;
                if w < 1.0 || h < 1.0 || w.fract() != 0.0 || h.fract() != 0.0 {
                    bail!("--raw-size `{t}`: expected WIDTHxHEIGHT in whole cells");
                }
                Some((w as usize, h as usize))
            }
            None => None,
        };
        Ok(ReadOptions {
            max_cells: self.max_cells,
            mapping,
            raw_size,
            cell_size: self.cell_size.as_deref().map(parse_cell_size).transpose()?,
            nodata: self.nodata,
        })
    }

    /// Reads `path` with these options; what the reading assumed for want of metadata is a
    /// note on stderr.
    pub fn read(&self, path: &Path) -> anyhow::Result<Loaded> {
        let loaded = erode_io::read(path, &self.options()?)?;
        if let Some(assumed) = &loaded.info.assumed {
            eprintln!("erode: note: {}: {assumed}", path.display());
        }
        Ok(loaded)
    }
}
