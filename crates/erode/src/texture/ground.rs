//! The masks of a run's ground maps (erosion, deposition, the loose layer): a depth in metres
//! through `1 − exp(−d / D)`, which is linear for shallow depths (d / D) and saturates gently,
//! so a scale D sets where the mask turns white and no depth is clipped.

use rayon::prelude::*;

/// `1 − exp(−max(d, 0) / scale)` of each depth (m; `scale` in m).
pub(super) fn mask(depth: &[f32], scale: f64) -> Vec<f32> {
    depth.par_iter().map(|&d| (1.0 - (-f64::from(d).max(0.0) / scale).exp()) as f32).collect()
}
