//! Hillshaded colour previews: what `erode render`, `preview.png` and the README pictures show.

use crate::error::TransformError;
use crate::grid::{Grid, Heightmap};
use crate::transform::{Filter, resample};
use rayon::prelude::*;

/// The longest side of the preview a run writes, pixels: a larger map is shrunk to it first (each
/// pixel the mean of the cells it covers), so a 16384² run writes a 2048² picture, not a
/// 268-megapixel one.
pub const PREVIEW_MAX_SIDE: usize = 2048;

/// `map` and `overlay` (of its shape) shrunk so that the longer side is at most `most` cells,
/// the extent kept; as they are when they fit.
pub fn fit(
    map: &Heightmap,
    overlay: Option<&Grid<f32>>,
    most: usize,
) -> Result<(Heightmap, Option<Grid<f32>>), TransformError> {
    let g = &map.heights;
    let Some((w, h)) = fit_size(g.width(), g.height(), most) else {
        return Ok((map.clone(), overlay.cloned()));
    };
    let small = resample(map, w, h, Filter::Box)?;
    let overlay = match overlay {
        Some(o) => Some(resample(&Heightmap::new(o.clone())?, w, h, Filter::Box)?.heights),
        None => None,
    };
    Ok((small, overlay))
}

/// The size [`fit`] shrinks a map of `width` x `height` cells to, its longer side `most` cells;
/// `None` when it fits as it is.
pub fn fit_size(width: usize, height: usize, most: usize) -> Option<(usize, usize)> {
    let longest = width.max(height);
    if longest <= most {
        return None;
    }
    let f = most as f64 / longest as f64;
    Some((((width as f64 * f).round() as usize).max(1), ((height as f64 * f).round() as usize).max(1)))
}

/// How to draw a preview.
#[derive(Clone, Debug, PartialEq)]
pub struct PreviewStyle {
    /// Sun azimuth, degrees clockwise from north. Default 315 (north-west, the cartographic
    /// convention).
    pub sun_azimuth_deg: f64,
    /// Sun altitude above the horizon, degrees. Default 45.
    pub sun_altitude_deg: f64,
    /// Vertical exaggeration of the shading (1 = true relief). Default 1.
    pub z_factor: f64,
}

impl Default for PreviewStyle {
    fn default() -> Self {
        Self { sun_azimuth_deg: 315.0, sun_altitude_deg: 45.0, z_factor: 1.0 }
    }
}

/// An 8-bit RGB image, row-major, 3 bytes a pixel.
#[derive(Clone, Debug, PartialEq)]
pub struct Rgb8Image {
    /// Pixels across.
    pub width: usize,
    /// Pixels down.
    pub height: usize,
    /// `width * height * 3` bytes.
    pub pixels: Vec<u8>,
}

/// Height colour ramp, from low to high: (position in [0, 1], RGB).
const RAMP: [(f64, [f64; 3]); 5] = [
    (0.0, [46.0, 94.0, 56.0]),
    (0.3, [104.0, 140.0, 72.0]),
    (0.55, [176.0, 160.0, 104.0]),
    (0.8, [140.0, 120.0, 104.0]),
    (1.0, [244.0, 244.0, 248.0]),
];

fn ramp(t: f64) -> [f64; 3] {
    let t = t.clamp(0.0, 1.0);
    for w in RAMP.windows(2) {
        let ((t0, c0), (t1, c1)) = (w[0], w[1]);
        if t <= t1 {
            let f = (t - t0) / (t1 - t0);
            return std::array::from_fn(|i| c0[i] + (c1[i] - c0[i]) * f);
        }
    }
    RAMP[RAMP.len() - 1].1
}

/// Horn's (1981) hillshade in `[0, 1]` at one cell, using metres for both heights and
/// distances, so the shading shows true slopes.
fn shade(map: &Grid<f32>, row: usize, col: usize, style: &PreviewStyle) -> f64 {
    let (w, h) = (map.width(), map.height());
    let z = |r: isize, c: isize| -> f64 {
        let r = r.clamp(0, h as isize - 1) as usize;
        let c = c.clamp(0, w as isize - 1) as usize;
        f64::from(map.as_slice()[r * w + c])
    };
    let (r, c) = (row as isize, col as isize);
    let cs = map.cell_size();
    let dzdx = ((z(r - 1, c + 1) + 2.0 * z(r, c + 1) + z(r + 1, c + 1))
        - (z(r - 1, c - 1) + 2.0 * z(r, c - 1) + z(r + 1, c - 1)))
        / (8.0 * cs.x);
    // rows grow southwards: north is r - 1
    let dzdy = ((z(r - 1, c - 1) + 2.0 * z(r - 1, c) + z(r - 1, c + 1))
        - (z(r + 1, c - 1) + 2.0 * z(r + 1, c) + z(r + 1, c + 1)))
        / (8.0 * cs.y);
    let (dzdx, dzdy) = (dzdx * style.z_factor, dzdy * style.z_factor);
    // surface normal (east, north, up), light direction towards the sun
    let n = [-dzdx, -dzdy, 1.0];
    let norm = (n[0] * n[0] + n[1] * n[1] + 1.0).sqrt();
    let az = style.sun_azimuth_deg.to_radians();
    let alt = style.sun_altitude_deg.to_radians();
    let l = [az.sin() * alt.cos(), az.cos() * alt.cos(), alt.sin()];
    ((n[0] * l[0] + n[1] * l[1] + n[2] * l[2]) / norm).max(0.0)
}

fn max_of(g: &Grid<f32>) -> f32 {
    g.as_slice().iter().copied().filter(|v| v.is_finite()).fold(0.0, f32::max)
}

/// Draws `map` hillshaded with a height colour ramp. `overlay` (any non-negative map of the same
/// shape, e.g. erosion) is blended in red, scaled to its maximum; `water` (depth, metres) in blue.
/// Nodata cells are drawn black.
pub fn render(
    map: &Heightmap,
    overlay: Option<&Grid<f32>>,
    water: Option<&Grid<f32>>,
    style: &PreviewStyle,
) -> Rgb8Image {
    let g = &map.heights;
    let stats = map.stats();
    let span = f64::from(stats.max - stats.min).max(1e-9);
    let overlay_max = overlay.map(max_of).unwrap_or(0.0).max(1e-30);
    let water_max = water.map(max_of).unwrap_or(0.0).max(1e-30);
    // a row of pixels a task, as it would be drawn alone
    let mut pixels = vec![0u8; g.len() * 3];
    pixels.par_chunks_mut(g.width() * 3).enumerate().for_each(|(row, out)| {
        for (col, px) in out.chunks_exact_mut(3).enumerate() {
            let i = g.index(row, col);
            if map.is_nodata(i) {
                continue;
            }
            let t = f64::from(g.as_slice()[i] - stats.min) / span;
            let light = 0.3 + 0.7 * shade(g, row, col, style);
            let mut rgb = ramp(t).map(|c| c * light);
            if let Some(o) = overlay.filter(|o| o.same_shape(g)) {
                let a = f64::from((o.as_slice()[i] / overlay_max).clamp(0.0, 1.0)).sqrt() * 0.85;
                rgb = std::array::from_fn(|k| rgb[k] * (1.0 - a) + [230.0, 40.0, 40.0][k] * a);
            }
            if let Some(wm) = water.filter(|w| w.same_shape(g)) {
                let a = f64::from((wm.as_slice()[i] / water_max).clamp(0.0, 1.0)).sqrt() * 0.8;
                rgb = std::array::from_fn(|k| rgb[k] * (1.0 - a) + [30.0, 90.0, 200.0][k] * a * light);
            }
            px.copy_from_slice(&rgb.map(|c| c.round().clamp(0.0, 255.0) as u8));
        }
    });
    Rgb8Image { width: g.width(), height: g.height(), pixels }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::{TerrainKind, TerrainSpec, generate};

    #[test]
    fn north_west_slopes_are_lit_south_east_slopes_are_dark() {
        let map = generate(&TerrainSpec {
            kind: TerrainKind::Cone,
            width: 65,
            height: 65,
            relief: 30.0,
            ..Default::default()
        })
        .unwrap();
        let img = render(&map, None, None, &PreviewStyle::default());
        let lum = |r: usize, c: usize| {
            let i = (r * 65 + c) * 3;
            u32::from(img.pixels[i]) + u32::from(img.pixels[i + 1]) + u32::from(img.pixels[i + 2])
        };
        // same height on both flanks, so only the shading differs
        assert!(lum(20, 20) > lum(44, 44) + 30, "{} vs {}", lum(20, 20), lum(44, 44));
        assert_eq!(img.pixels.len(), 65 * 65 * 3);
    }
}
