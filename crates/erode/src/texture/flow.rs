//! The flow and wetness masks, on the flow graph `erode analyze` and the models share: the
//! depressions filled (Priority-Flood + ε), then the drainage area over multiple flow directions
//! (Freeman 1991), which spreads over hillslopes and gathers into valleys without D8's
//! single-cell lines.

use rayon::prelude::*;

use crate::analysis::flow::mfd_area;
use crate::flow::Domain;
use crate::flow::fill::priority_flood;

/// The decades of cells the flow mask spans: 10⁶ cells map to 1.
pub(super) const FLOW_DECADES: f64 = 6.0;
/// The wetness index that maps to 0.
pub(super) const WETNESS_LOW: f64 = 2.0;
/// The wetness index that maps to 1.
pub(super) const WETNESS_HIGH: f64 = 18.0;
/// The least slope the wetness index divides by, m/m (flats and lakes stay finite).
pub(super) const WETNESS_MIN_SLOPE: f64 = 0.001;

/// Cells draining through each cell, itself included (0 outside the domain).
pub(super) fn cells(d: &Domain<'_>, z: &[f32]) -> Vec<f64> {
    let filled = priority_flood(d, z);
    let a = d.cell.area();
    let mut area = mfd_area(d, &filled.routed);
    area.par_iter_mut().for_each(|v| *v /= a);
    area
}

/// `log10(cells) / 6`, clamped to 0..1.
pub(super) fn flow_mask(cells: &[f64]) -> Vec<f32> {
    cells.par_iter().map(|&c| (c.max(1.0).log10() / FLOW_DECADES).clamp(0.0, 1.0) as f32).collect()
}

/// The topographic wetness index `ln(a / tan β)` (Beven & Kirkby 1979) mapped from
/// [`WETNESS_LOW`]..[`WETNESS_HIGH`] to 0..1: `a` the drainage area per metre of contour (the
/// cells' area over the cell's width), `tan β` the slope.
pub(super) fn wetness_mask(d: &Domain<'_>, cells: &[f64], slope: &[f32]) -> Vec<f32> {
    let per_width = d.cell.area() / (d.cell.x * d.cell.y).sqrt();
    cells
        .par_iter()
        .zip(slope)
        .map(|(&c, &s)| {
            let twi = (c.max(1.0) * per_width / f64::from(s).max(WETNESS_MIN_SLOPE)).ln();
            ((twi - WETNESS_LOW) / (WETNESS_HIGH - WETNESS_LOW)).clamp(0.0, 1.0) as f32
        })
        .collect()
}
