//! The curvature mask: the Laplacian of the heights at a scale, negative on ridges and edges,
//! positive in valleys and hollows, through a tanh so a scale sets the contrast and no value
//! clips abruptly. At the scale of one cell a DEM's Laplacian is mostly its finest noise; so it
//! is measured as a Gaussian blur of σ cells less the height: for a smooth surface
//! `blur − z ≈ (σ²/2)·∇²z`, so `∇²z ≈ 2·(blur − z)/σ²` (σ in metres), the Laplacian of the
//! surface seen at that scale. Times σ it is the change of slope across the radius, a pure
//! number that reads alike at any cell size (the 90th percentile of its magnitude is 0.36 on a
//! 2 m fBm terrain eroded by the grid model and 0.77 on a 25 m mountain range, where the
//! Laplacian itself differs 6x). Cells without data take no part in a blur (normalised
//! convolution).

use rayon::prelude::*;

use crate::flow::Domain;

/// A Gaussian's weights from −3σ to 3σ, summing to 1.
fn kernel(sigma: f64) -> Vec<f64> {
    let r = (3.0 * sigma).ceil() as isize;
    let k: Vec<f64> = (-r..=r).map(|x| (-(x * x) as f64 / (2.0 * sigma * sigma)).exp()).collect();
    let sum: f64 = k.iter().sum();
    k.into_iter().map(|v| v / sum).collect()
}

/// One pass of a separable blur of `(value·weight, weight)` pairs along rows (`step` 1) or
/// columns (`step` the width), the map's edge clamped.
fn pass(src: &[(f64, f64)], width: usize, height: usize, k: &[f64], along_rows: bool) -> Vec<(f64, f64)> {
    let r = (k.len() / 2) as isize;
    let mut out = vec![(0.0, 0.0); src.len()];
    out.par_chunks_mut(width).enumerate().for_each(|(row, line)| {
        for (col, o) in line.iter_mut().enumerate() {
            let mut acc = (0.0, 0.0);
            for (t, &w) in k.iter().enumerate() {
                let off = t as isize - r;
                let j = if along_rows {
                    row * width + (col as isize + off).clamp(0, width as isize - 1) as usize
                } else {
                    (row as isize + off).clamp(0, height as isize - 1) as usize * width + col
                };
                acc.0 += w * src[j].0;
                acc.1 += w * src[j].1;
            }
            *o = acc;
        }
    });
    out
}

/// `0.5 − 0.5·tanh(σ·∇²z / scale)` of every cell, the Laplacian at σ = `radius` cells (`scale`
/// a change of slope, m/m).
pub(super) fn mask(d: &Domain<'_>, z: &[f32], radius: f64, scale: f64) -> Vec<f32> {
    let k = kernel(radius);
    let weighted: Vec<(f64, f64)> =
        (0..d.len()).map(|i| if d.inside(i) { (f64::from(z[i]), 1.0) } else { (0.0, 0.0) }).collect();
    let rows = pass(&weighted, d.width, d.height, &k, true);
    let blurred = pass(&rows, d.width, d.height, &k, false);
    let sigma = radius * (d.cell.x * d.cell.y).sqrt();
    blurred
        .par_iter()
        .enumerate()
        .map(|(i, &(sum, weight))| {
            if !d.inside(i) || weight <= 0.0 {
                return 0.0;
            }
            let laplacian = 2.0 * (sum / weight - f64::from(z[i])) / (sigma * sigma);
            (0.5 - 0.5 * (sigma * laplacian / scale).tanh()) as f32
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::CellSize;

    /// On a paraboloid z = c·(x² + y²) the Laplacian is 4c everywhere: the blur sees it exactly
    /// (a Gaussian's second moment is σ²), so the mask is 0.5 − 0.5·tanh(σ·4c / scale) away
    /// from the edges.
    #[test]
    fn a_bowl_has_its_laplacian() {
        let (n, cell, c) = (41, 2.0, 0.01);
        let z: Vec<f32> = (0..n * n)
            .map(|i| {
                let (x, y) = ((i % n) as f64 * cell - 40.0, (i / n) as f64 * cell - 40.0);
                (c * (x * x + y * y)) as f32
            })
            .collect();
        let d = Domain { width: n, height: n, cell: CellSize::square(cell), nodata: None };
        let m = mask(&d, &z, 2.0, 0.5);
        let centre = m[20 * n + 20];
        // the Laplacian back from the mask: within 3 % (the kernel, cut at 3σ and sampled at
        // whole cells, has a second moment a little under σ²)
        let laplacian = (1.0 - 2.0 * f64::from(centre)).atanh() * 0.5 / 4.0;
        assert!((laplacian / (4.0 * c) - 1.0).abs() < 0.03, "{laplacian} against {}", 4.0 * c);
        assert!(centre < 0.5, "a bowl is concave: dark");
    }
}
