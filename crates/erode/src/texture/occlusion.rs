//! The occlusion mask: the sky-view factor (Zakšek, Oštir & Kokalj 2011), the share of the sky
//! a cell sees. Along each of 16 directions the horizon is the steepest rise to any cell within
//! the radius; the factor is `1 − mean(sin horizon)` (a horizon below the cell's own level
//! counts as level). Open ground and peaks see all the sky (1); valley floors and gully beds
//! see less. Samples lie every cell out to 4 cells, then ever further apart (× 1.25), at the
//! nearest cell: ~14 a direction for a radius of 32. A ray ends at the map's edge; cells without
//! data hide nothing.

use rayon::prelude::*;

use crate::flow::Domain;

/// Directions around the compass.
pub(super) const DIRECTIONS: usize = 16;

/// The cells a ray samples, (row offset, column offset, distance in m), nearest first.
fn rays(radius: usize, dx: f64, dy: f64) -> Vec<Vec<(isize, isize, f64)>> {
    let mut steps = Vec::new();
    let mut r = 1.0f64;
    while r <= radius as f64 {
        steps.push(r);
        r = if r < 4.0 { r + 1.0 } else { (r * 1.25).round() };
    }
    (0..DIRECTIONS)
        .map(|k| {
            let angle = k as f64 * std::f64::consts::TAU / DIRECTIONS as f64;
            let mut ray: Vec<(isize, isize, f64)> = Vec::new();
            for &r in &steps {
                let (dr, dc) = ((-(r * angle.cos())).round() as isize, (r * angle.sin()).round() as isize);
                if (dr, dc) != (0, 0) && ray.last().is_none_or(|&(a, b, _)| (a, b) != (dr, dc)) {
                    ray.push((dr, dc, ((dc as f64 * dx).powi(2) + (dr as f64 * dy).powi(2)).sqrt()));
                }
            }
            ray
        })
        .collect()
}

/// The sky-view factor of every cell, looking `radius` cells out.
pub(super) fn mask(d: &Domain<'_>, z: &[f32], radius: usize) -> Vec<f32> {
    let rays = rays(radius, d.cell.x, d.cell.y);
    let (w, h) = (d.width as isize, d.height as isize);
    // each sample as an index offset and 1 / distance, for cells whose rays stay on the map
    // (the same products as the checked path's, so a cell's value does not depend on the path)
    let reach = rays.iter().flatten().map(|s| s.0.unsigned_abs().max(s.1.unsigned_abs())).max().unwrap_or(0) as isize;
    let flat: Vec<Vec<(isize, f64)>> =
        rays.iter().map(|ray| ray.iter().map(|&(dr, dc, dist)| (dr * w + dc, 1.0 / dist)).collect()).collect();
    let mut out = vec![0.0f32; d.len()];
    out.par_chunks_mut(d.width).enumerate().for_each(|(row, line)| {
        for (col, v) in line.iter_mut().enumerate() {
            let i = row * d.width + col;
            if !d.inside(i) {
                continue;
            }
            let here = f64::from(z[i]);
            let (r0, c0) = (row as isize, col as isize);
            let clear = d.nodata.is_none() && r0 >= reach && c0 >= reach && r0 < h - reach && c0 < w - reach;
            let mut sum = 0.0;
            for (ray, fast) in rays.iter().zip(&flat) {
                let mut steepest = 0.0f64;
                if clear {
                    for &(offset, inverse) in fast {
                        let j = (i as isize + offset) as usize;
                        steepest = steepest.max((f64::from(z[j]) - here) * inverse);
                    }
                } else {
                    for &(dr, dc, dist) in ray {
                        let (r, c) = (r0 + dr, c0 + dc);
                        if r < 0 || c < 0 || r >= h || c >= w {
                            break;
                        }
                        let j = (r * w + c) as usize;
                        if d.inside(j) {
                            steepest = steepest.max((f64::from(z[j]) - here) * (1.0 / dist));
                        }
                    }
                }
                // sin(atan(t)) of the horizon's tangent t
                sum += steepest / (1.0 + steepest * steepest).sqrt();
            }
            *v = (1.0 - sum / DIRECTIONS as f64) as f32;
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rays_reach_the_radius_without_repeats() {
        let rays = rays(32, 1.0, 1.0);
        assert_eq!(rays.len(), DIRECTIONS);
        for ray in &rays {
            let far = ray.iter().map(|s| s.2).fold(0.0, f64::max);
            assert!((28.0..=33.0).contains(&far), "{far}");
            assert!(ray.windows(2).all(|p| p[0].2 < p[1].2), "{ray:?}");
        }
    }
}
