use std::path::PathBuf;

use anyhow::bail;
use erode::preview::{PreviewStyle, render};

use crate::input::InputArgs;

/// Render a hillshaded colour preview of a heightmap as an 8-bit RGB PNG.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  erode render t.tif -o t.png
  erode render out/height.tif --overlay out/erosion.tif --water out/water.tif -o shot.png")]
pub struct Args {
    /// The heightmap.
    heightmap: PathBuf,
    /// Output PNG.
    #[arg(short, long)]
    output: PathBuf,
    /// A map of the same size drawn in red over the terrain (e.g. erosion), scaled to its maximum.
    #[arg(long)]
    overlay: Option<PathBuf>,
    /// Water depth map of the same size, drawn in blue.
    #[arg(long)]
    water: Option<PathBuf>,
    /// Vertical exaggeration of the shading.
    #[arg(long, default_value_t = 1.0)]
    z_factor: f64,
    #[command(flatten)]
    input: InputArgs,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    if a.output.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() != Some("png") {
        bail!("{}: the preview is a PNG; name the output *.png", a.output.display());
    }
    if !(a.z_factor.is_finite() && a.z_factor > 0.0) {
        bail!("--z-factor {} must be positive", a.z_factor);
    }
    erode_io::check_output(&a.output)?;
    let map = a.input.read(&a.heightmap)?.map;
    let extra = |p: &Option<PathBuf>| -> anyhow::Result<Option<erode::Grid<f32>>> {
        let Some(p) = p else { return Ok(None) };
        let m = erode_io::read(p, &Default::default())?.map.heights;
        if !m.same_shape(&map.heights) {
            bail!(
                "{}: {} x {} cells, the heightmap is {} x {}",
                p.display(),
                m.width(),
                m.height(),
                map.heights.width(),
                map.heights.height()
            );
        }
        Ok(Some(m))
    };
    let overlay = extra(&a.overlay)?;
    let water = extra(&a.water)?;
    let style = PreviewStyle { z_factor: a.z_factor, ..Default::default() };
    let image = render(&map, overlay.as_ref(), water.as_ref(), &style);
    erode_io::write_rgb_png(&a.output, &image)?;
    Ok(())
}
