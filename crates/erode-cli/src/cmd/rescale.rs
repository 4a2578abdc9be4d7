use std::path::PathBuf;

use anyhow::bail;
use erode::transform::{Rescale, rescale};

use crate::input::InputArgs;

/// Rescale a heightmap's heights: a new relief, a vertical factor, a new base (cells, nodata and
/// georeference unchanged).
#[derive(clap::Args)]
#[command(after_help = "Examples:
  erode rescale range.tif --relief 2500 -o alpine.tif           (2,500 m from lowest to highest)
  erode rescale range.tif --relief 800 --base 0 -o hills.tif    (0 to 800 m)
  erode rescale dem.tif --factor 1.5 -o steeper.tif             (heights x 1.5 about sea level)
  erode rescale dem.tif --base 0 -o from-zero.tif               (shifted: the lowest cell at 0 m)")]
pub struct Args {
    /// Input heightmap.
    input_file: PathBuf,
    /// Output heightmap; the format follows the extension.
    #[arg(short, long)]
    output: PathBuf,
    /// New relief (highest minus lowest cell), metres, stretched about the lowest cell.
    #[arg(long, value_name = "METRES", conflicts_with = "factor", allow_negative_numbers = true)]
    relief: Option<f64>,
    /// Vertical factor: heights times this about 0 m (or about the lowest cell with --base).
    #[arg(long, value_name = "F", allow_negative_numbers = true)]
    factor: Option<f64>,
    /// Height of the lowest cell afterwards, metres.
    #[arg(long, value_name = "METRES", allow_negative_numbers = true)]
    base: Option<f64>,
    #[command(flatten)]
    input: InputArgs,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let how = match (a.relief, a.factor, a.base) {
        (Some(relief), _, base) => Rescale::Relief { relief, base },
        (None, Some(factor), base) => Rescale::Factor { factor, base },
        (None, None, Some(base)) => Rescale::Factor { factor: 1.0, base: Some(base) },
        (None, None, None) => bail!("say how: --relief METRES, --factor F and/or --base METRES"),
    };
    erode_io::Format::from_path(&a.output)?;
    erode_io::check_output(&a.output)?;
    erode_io::check_not_input(&a.output, &a.input_file)?;
    let erode_io::Loaded { map, info } = a.input.read(&a.input_file)?;
    let out = rescale(map, how).map_err(|e| anyhow::anyhow!("{}: {e}", a.input_file.display()))?;
    crate::output::write_like_input(&a.output, out, &info, info.georef.clone(), a.input.cell_size.is_some())
}
