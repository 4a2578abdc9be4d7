//! The slope mask: the angle of the steepest descent (Horn 1981) over a right angle.

use crate::analysis::surface::{horn, window};
use crate::flow::Domain;
use rayon::prelude::*;

/// Slope (Horn 1981) of every cell, m/m (0 outside the domain; a neighbour without data read as
/// the cell's own height, as `erode analyze` reads it).
pub(super) fn slope(d: &Domain<'_>, z: &[f32]) -> Vec<f32> {
    (0..d.len())
        .into_par_iter()
        .with_min_len(4096)
        .map(|i| {
            if !d.inside(i) {
                return 0.0;
            }
            let (gx, gy) = horn(&window(d, z, i), d.cell.x, d.cell.y);
            (gx * gx + gy * gy).sqrt() as f32
        })
        .collect()
}

/// atan(slope) / 90°.
pub(super) fn mask(slope: &[f32]) -> Vec<f32> {
    slope.par_iter().map(|&s| (f64::from(s).atan() / std::f64::consts::FRAC_PI_2) as f32).collect()
}
