//! How alike two runs on the same land at two cell sizes are: the fine run's height change,
//! averaged over the blocks of fine cells that make one coarse cell, against the coarse run's.

use crate::Heightmap;
use crate::error::AnalysisError;

/// The likeness of two runs' height changes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Alike {
    /// Pearson correlation of the coarse change and the block-averaged fine change.
    pub correlation: f64,
    /// Mean |Δh| of the coarse run, m.
    pub mean_abs_coarse: f64,
    /// Mean |Δh| of the fine run (on its own cells), m.
    pub mean_abs_fine: f64,
}

/// Compares `coarse_after − coarse_before` with `fine_after − fine_before`, where the fine map
/// covers the same land with `k` x `k` cells per coarse cell (`k` a whole number; nodata is not
/// allowed).
pub fn downsampled_change(
    coarse_before: &Heightmap,
    coarse_after: &Heightmap,
    fine_before: &Heightmap,
    fine_after: &Heightmap,
) -> Result<Alike, AnalysisError> {
    let (cw, ch) = (coarse_before.heights.width(), coarse_before.heights.height());
    let (fw, fh) = (fine_before.heights.width(), fine_before.heights.height());
    let k = fw / cw.max(1);
    let same = |a: &Heightmap, b: &Heightmap| {
        a.heights.width() == b.heights.width() && a.heights.height() == b.heights.height()
    };
    if k == 0 || fw != k * cw || fh != k * ch || !same(coarse_before, coarse_after) || !same(fine_before, fine_after) {
        return Err(AnalysisError::Mismatch { coarse: (cw, ch), fine: (fw, fh) });
    }
    let change = |before: &Heightmap, after: &Heightmap| -> Vec<f64> {
        after
            .heights
            .as_slice()
            .iter()
            .zip(before.heights.as_slice())
            .map(|(&a, &b)| f64::from(a) - f64::from(b))
            .collect()
    };
    let (dc, df) = (change(coarse_before, coarse_after), change(fine_before, fine_after));
    let blocks = (k * k) as f64;
    let down: Vec<f64> = (0..cw * ch)
        .map(|i| {
            let (r, c) = (i / cw, i % cw);
            let mut sum = 0.0;
            for rr in 0..k {
                for cc in 0..k {
                    sum += df[(k * r + rr) * fw + k * c + cc];
                }
            }
            sum / blocks
        })
        .collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (mc, md) = (mean(&dc), mean(&down));
    let cov: f64 = dc.iter().zip(&down).map(|(x, y)| (x - mc) * (y - md)).sum();
    let var = |v: &[f64], m: f64| v.iter().map(|x| (x - m).powi(2)).sum::<f64>();
    let spread = (var(&dc, mc) * var(&down, md)).sqrt();
    let mean_abs = |v: &[f64]| v.iter().map(|x| x.abs()).sum::<f64>() / v.len() as f64;
    Ok(Alike {
        correlation: if spread > 0.0 { cov / spread } else { 0.0 },
        mean_abs_coarse: mean_abs(&dc),
        mean_abs_fine: mean_abs(&df),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{CellSize, Grid};

    fn map(w: usize, cell: f64, f: impl Fn(usize, usize) -> f32) -> Heightmap {
        let v = (0..w * w).map(|i| f(i % w, i / w)).collect();
        Heightmap::new(Grid::from_vec(w, w, CellSize::square(cell), v).unwrap()).unwrap()
    }

    #[test]
    fn the_same_change_at_two_cell_sizes_correlates_1_and_an_unrelated_one_does_not() {
        let flat_c = map(8, 2.0, |_, _| 0.0);
        let flat_f = map(16, 1.0, |_, _| 0.0);
        let ramp_c = map(8, 2.0, |x, _| x as f32);
        // each 2 x 2 block averages to the coarse cell's value
        let ramp_f = map(16, 1.0, |x, _| (x / 2) as f32 + if x % 2 == 0 { -0.1 } else { 0.1 });
        let a = downsampled_change(&flat_c, &ramp_c, &flat_f, &ramp_f).unwrap();
        assert!((a.correlation - 1.0).abs() < 1e-9, "{a:?}");
        let other = map(16, 1.0, |_, y| (y / 2) as f32);
        let b = downsampled_change(&flat_c, &ramp_c, &flat_f, &other).unwrap();
        assert!(b.correlation.abs() < 1e-9, "{b:?}");
        assert!(downsampled_change(&flat_c, &ramp_c, &map(15, 1.0, |_, _| 0.0), &map(15, 1.0, |_, _| 0.0)).is_err());
    }
}
