use std::path::PathBuf;

use crate::input::InputArgs;

/// Convert a heightmap to another format (chosen by the output's extension), keeping heights in
/// metres, the georeference and nodata.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  erode convert dem.tif -o dem.exr
  erode convert painted.png --min-height 0 --max-height 250 -o terrain.tif
  erode convert terrain.r16 --raw-size 1025x1025 -o terrain.png")]
pub struct Args {
    /// Input heightmap.
    input_file: PathBuf,
    /// Output heightmap.
    #[arg(short, long)]
    output: PathBuf,
    #[command(flatten)]
    input: InputArgs,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let options = a.input.options()?;
    erode_io::Format::from_path(&a.output)?;
    erode_io::check_output(&a.output)?;
    erode_io::check_not_input(&a.output, &a.input_file)?;
    let erode_io::Loaded { map, info } = erode_io::read(&a.input_file, &options)?;
    crate::output::write_like_input(&a.output, map, &info, info.georef.clone(), a.input.cell_size.is_some())
}
