//! Local shape of the surface from each cell's 3 x 3 window: slope (Horn 1981) and profile and
//! plan curvature (Zevenbergen & Thorne 1987). A neighbour off the map or without data is read
//! as the centre cell's height, so nodata never shows as a cliff.

use rayon::prelude::*;

use crate::flow::Domain;

/// Slope and curvature maps.
#[derive(Clone, Debug, PartialEq)]
pub struct Surface {
    /// Gradient magnitude, m/m (Horn 1981).
    pub slope: Vec<f32>,
    /// Curvature along the steepest descent, 1/m (Zevenbergen & Thorne 1987): negative where the
    /// slope steepens downhill (convex), positive where it eases (concave).
    pub profile_curvature: Vec<f32>,
    /// Curvature across the slope, 1/m (Zevenbergen & Thorne 1987): positive where the contours
    /// spread (ridges, divergent), negative where they gather (valleys, convergent).
    pub plan_curvature: Vec<f32>,
}

/// The 3 x 3 window around cell `i`, row-major from the north-west corner, in f64.
#[inline]
pub(crate) fn window(domain: &Domain<'_>, z: &[f32], i: usize) -> [f64; 9] {
    let (r, c) = ((i / domain.width) as isize, (i % domain.width) as isize);
    let centre = f64::from(z[i]);
    std::array::from_fn(|k| {
        let (nr, nc) = (r + k as isize / 3 - 1, c + k as isize % 3 - 1);
        if nr < 0 || nc < 0 || nr >= domain.height as isize || nc >= domain.width as isize {
            return centre;
        }
        let j = nr as usize * domain.width + nc as usize;
        if domain.inside(j) { f64::from(z[j]) } else { centre }
    })
}

/// The gradient at one window by Horn's (1981) weighted differences, (east, south) in m/m: rows
/// grow southwards, so its second part is the rise towards the south.
#[inline]
pub(crate) fn horn(w: &[f64; 9], dx: f64, dy: f64) -> (f64, f64) {
    let gx = ((w[2] + 2.0 * w[5] + w[8]) - (w[0] + 2.0 * w[3] + w[6])) / (8.0 * dx);
    let gy = ((w[6] + 2.0 * w[7] + w[8]) - (w[0] + 2.0 * w[1] + w[2])) / (8.0 * dy);
    (gx, gy)
}

/// (slope, profile curvature, plan curvature) at one window.
fn local(w: &[f64; 9], dx: f64, dy: f64) -> (f64, f64, f64) {
    let (gx, gy) = horn(w, dx, dy);
    let slope = (gx * gx + gy * gy).sqrt();
    // Zevenbergen & Thorne's quadratic surface through the window
    let d = ((w[3] + w[5]) / 2.0 - w[4]) / (dx * dx);
    let e = ((w[1] + w[7]) / 2.0 - w[4]) / (dy * dy);
    let f = (-w[0] + w[2] + w[6] - w[8]) / (4.0 * dx * dy);
    let g = (w[5] - w[3]) / (2.0 * dx);
    let h = (w[7] - w[1]) / (2.0 * dy);
    let g2h2 = g * g + h * h;
    if g2h2 <= 0.0 {
        return (slope, 0.0, 0.0);
    }
    // `f` is the twist d²z/dxdy with +y north in Zevenbergen & Thorne; our +y is south
    let f = -f;
    let profile = 2.0 * (d * g * g + e * h * h + f * g * h) / g2h2;
    let plan = -2.0 * (d * h * h + e * g * g - f * g * h) / g2h2;
    (slope, profile, plan)
}

/// Slope and curvatures of every cell of `domain` (0 outside it).
pub fn surface(domain: &Domain<'_>, z: &[f32]) -> Surface {
    let (dx, dy) = (domain.cell.x, domain.cell.y);
    let cells: Vec<(f32, f32, f32)> = (0..domain.len())
        .into_par_iter()
        .with_min_len(4096)
        .map(|i| {
            if !domain.inside(i) {
                return (0.0, 0.0, 0.0);
            }
            let (s, p, c) = local(&window(domain, z, i), dx, dy);
            (s as f32, p as f32, c as f32)
        })
        .collect();
    Surface {
        slope: cells.iter().map(|c| c.0).collect(),
        profile_curvature: cells.iter().map(|c| c.1).collect(),
        plan_curvature: cells.iter().map(|c| c.2).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::CellSize;

    fn grid(w: usize, h: usize, cell: f64, f: impl Fn(f64, f64) -> f64) -> Vec<f32> {
        (0..w * h).map(|i| f((i % w) as f64 * cell, (i / w) as f64 * cell) as f32).collect()
    }

    #[test]
    fn a_plane_has_its_slope_and_no_curvature() {
        let d = Domain { width: 9, height: 9, cell: CellSize::square(2.0), nodata: None };
        let z = grid(9, 9, 2.0, |x, y| 0.3 * x - 0.4 * y + 10.0);
        let s = surface(&d, &z);
        let i = 4 * 9 + 4;
        assert!((s.slope[i] - 0.5).abs() < 1e-6, "{}", s.slope[i]);
        assert!(s.profile_curvature[i].abs() < 1e-6 && s.plan_curvature[i].abs() < 1e-6);
    }

    #[test]
    fn valleys_gather_ridges_spread_and_a_concave_profile_eases() {
        let d = Domain { width: 21, height: 21, cell: CellSize::square(1.0), nodata: None };
        let i = 10 * 21 + 13;
        // a valley along x descending east: z = y'^2 - x (y' from the axis)
        let valley = grid(21, 21, 1.0, |x, y| 0.05 * (y - 10.0).powi(2) - 0.5 * x + 40.0);
        let ridge = grid(21, 21, 1.0, |x, y| -0.05 * (y - 10.0).powi(2) - 0.5 * x + 40.0);
        // a profile descending east and easing: z = (20 - x)^2 / 20
        let concave = grid(21, 21, 1.0, |x, _| (20.0 - x).powi(2) / 20.0);
        let convex = grid(21, 21, 1.0, |x, _| 40.0 - x * x / 20.0);
        let (v, r) = (surface(&d, &valley), surface(&d, &ridge));
        // the valley's cell is on the axis: offset it one row so the contours bend
        let j = 11 * 21 + 13;
        assert!(v.plan_curvature[j] < 0.0, "valley plan {}", v.plan_curvature[j]);
        assert!(r.plan_curvature[j] > 0.0, "ridge plan {}", r.plan_curvature[j]);
        assert!(surface(&d, &concave).profile_curvature[i] > 0.0);
        assert!(surface(&d, &convex).profile_curvature[i] < 0.0);
    }
}
