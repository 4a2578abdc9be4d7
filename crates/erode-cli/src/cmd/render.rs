use std::path::PathBuf;

use anyhow::bail;
use erode::preview::{PreviewStyle, render};

use crate::input::InputArgs;

/// Render a hillshaded colour preview of a heightmap as an 8-bit RGB PNG.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  erode render t.tif -o t.png
  erode render out/height.tif --overlay out/erosion.tif --water out/water.tif -o shot.png
  erode render out/height.tif --crop 320,320,384,384 -o detail.png     (a 1:1 crop)")]
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
    /// Only this window of the map, `COLUMN,ROW,WIDTH,HEIGHT` in cells (shaded as in the whole
    /// map: the colours span the whole map's heights).
    #[arg(long, value_name = "C,R,W,H")]
    crop: Option<String>,
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
    erode_io::check_not_input(&a.output, &a.heightmap)?;
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
    let crop = a.crop.as_deref().map(|t| parse_crop(t, map.heights.width(), map.heights.height())).transpose()?;
    let mut image = render(&map, overlay.as_ref(), water.as_ref(), &style);
    if let Some((c, r, w, h)) = crop {
        let mut pixels = Vec::with_capacity(w * h * 3);
        for row in r..r + h {
            let start = (row * image.width + c) * 3;
            pixels.extend_from_slice(&image.pixels[start..start + w * 3]);
        }
        image = erode::preview::Rgb8Image { width: w, height: h, pixels };
    }
    erode_io::write_rgb_png(&a.output, &image)?;
    Ok(())
}

/// `COLUMN,ROW,WIDTH,HEIGHT` inside a `width x height` map.
fn parse_crop(text: &str, width: usize, height: usize) -> anyhow::Result<(usize, usize, usize, usize)> {
    let parts: Vec<usize> = text
        .split(',')
        .map(|p| p.trim().parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| anyhow::anyhow!("--crop {text}: expected COLUMN,ROW,WIDTH,HEIGHT in whole cells"))?;
    let [c, r, w, h] = parts[..] else { bail!("--crop {text}: expected COLUMN,ROW,WIDTH,HEIGHT in whole cells") };
    if w == 0 || h == 0 || c + w > width || r + h > height {
        bail!("--crop {text}: the window must lie inside the {width} x {height} map");
    }
    Ok((c, r, w, h))
}
