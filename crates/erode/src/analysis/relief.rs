//! Fine relief: what is left of a terrain after a Gaussian blur of σ = [`SIGMA_CELLS`] cells is
//! subtracted (wavelengths shorter than ~10 cells). Erosion that blurs a terrain lowers it;
//! erosion that cuts gullies raises it in the channels. Its power spectrum also tells whether
//! the fine relief lines up with the grid: grooves along the axes put their power on the
//! spectrum's axes.

use std::sync::Arc;

use rayon::prelude::*;
use rustfft::num_complex::Complex32;
use rustfft::{Fft, FftPlanner};

use crate::flow::Domain;

/// σ of the Gaussian blur, cells.
pub const SIGMA_CELLS: f64 = 2.0;
/// The blur's kernel reaches this many σ.
const REACH: f64 = 3.0;

/// The terrain minus its Gaussian blur, m (0 outside the domain). Where the map's edge or nodata
/// cut the kernel, the blur is the weighted plane fit through the valid cells, so edges and holes
/// add no relief and a plane has none anywhere.
pub fn fine_relief(domain: &Domain<'_>, z: &[f32]) -> Vec<f32> {
    let (w, h) = (domain.width, domain.height);
    let radius = (SIGMA_CELLS * REACH).ceil() as isize;
    let kernel: Vec<f64> =
        (-radius..=radius).map(|k| (-(k * k) as f64 / (2.0 * SIGMA_CELLS * SIGMA_CELLS)).exp()).collect();
    let inside: Vec<f64> = (0..w * h).map(|i| if domain.inside(i) { 1.0 } else { 0.0 }).collect();
    let weighted: Vec<f64> = (0..w * h).map(|i| f64::from(z[i]) * inside[i]).collect();
    // separable: along rows, then along columns, for the weighted heights and the weights
    let along_rows = |v: &[f64]| -> Vec<f64> {
        let mut out = vec![0.0; w * h];
        out.par_chunks_mut(w).enumerate().for_each(|(r, row)| {
            for (c, o) in row.iter_mut().enumerate() {
                let mut s = 0.0;
                for (k, &kw) in kernel.iter().enumerate() {
                    let cc = c as isize + k as isize - radius;
                    if cc >= 0 && (cc as usize) < w {
                        s += kw * v[r * w + cc as usize];
                    }
                }
                *o = s;
            }
        });
        out
    };
    let along_cols = |v: &[f64]| -> Vec<f64> {
        let mut out = vec![0.0; w * h];
        out.par_chunks_mut(w).enumerate().for_each(|(r, row)| {
            for (k, &kw) in kernel.iter().enumerate() {
                let rr = r as isize + k as isize - radius;
                if rr < 0 || rr as usize >= h {
                    continue;
                }
                let src = &v[rr as usize * w..(rr as usize + 1) * w];
                for (o, &s) in row.iter_mut().zip(src) {
                    *o += kw * s;
                }
            }
        });
        out
    };
    let num = along_cols(&along_rows(&weighted));
    let den = along_cols(&along_rows(&inside));
    let full: f64 = kernel.iter().sum::<f64>().powi(2);
    (0..w * h)
        .into_par_iter()
        .with_min_len(4096)
        .map(|i| {
            if inside[i] == 0.0 || den[i] <= 0.0 {
                return 0.0;
            }
            // where the edge or nodata cut the kernel, a weighted mean of a slope is off its
            // centre: fit a plane instead (what the blur gives a plane in the interior)
            let blur =
                if den[i] < full * (1.0 - 1e-9) { plane_blur(domain, z, i, radius, &kernel) } else { num[i] / den[i] };
            (f64::from(z[i]) - blur) as f32
        })
        .collect()
}

/// The blur at cell `i` where the kernel is cut: the height at the centre of the plane that fits
/// the window's valid cells best with the kernel's weights (their weighted mean when no plane is
/// determined, e.g. on a single row).
fn plane_blur(domain: &Domain<'_>, z: &[f32], i: usize, radius: isize, kernel: &[f64]) -> f64 {
    let (w, h) = (domain.width as isize, domain.height as isize);
    let (r0, c0) = ((i / domain.width) as isize, (i % domain.width) as isize);
    // weighted sums of 1, x, y, x², y², xy, z, xz, yz
    let mut m = [0.0f64; 9];
    for dr in -radius..=radius {
        let r = r0 + dr;
        if r < 0 || r >= h {
            continue;
        }
        for dc in -radius..=radius {
            let c = c0 + dc;
            if c < 0 || c >= w {
                continue;
            }
            let j = (r * w + c) as usize;
            if !domain.inside(j) {
                continue;
            }
            let wt = kernel[(dr + radius) as usize] * kernel[(dc + radius) as usize];
            let (x, y, v) = (dc as f64, dr as f64, f64::from(z[j]) - f64::from(z[i]));
            let terms = [1.0, x, y, x * x, y * y, x * y, v, x * v, y * v];
            for (acc, t) in m.iter_mut().zip(terms) {
                *acc += wt * t;
            }
        }
    }
    let [s, sx, sy, sxx, syy, sxy, sz, sxz, syz] = m;
    // normal equations of z = a + b·x + c·y, solved by Cramer's rule
    let det = s * (sxx * syy - sxy * sxy) - sx * (sx * syy - sxy * sy) + sy * (sx * sxy - sxx * sy);
    let scale = s * sxx * syy;
    let a = if det.abs() > 1e-9 * scale.abs().max(f64::MIN_POSITIVE) {
        (sz * (sxx * syy - sxy * sxy) - sx * (sxz * syy - sxy * syz) + sy * (sxz * sxy - sxx * syz)) / det
    } else {
        sz / s
    };
    f64::from(z[i]) + a
}

/// Root mean square of `v` over the cells `keep` accepts, m; `None` when there are none. Sums
/// per chunk of cells, then the chunks in order: the same bits on any thread count.
pub fn rms(v: &[f32], keep: impl Fn(usize) -> bool + Sync) -> Option<f64> {
    const CHUNK: usize = 4096;
    let parts: Vec<(f64, usize)> = v
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(k, chunk)| {
            let mut part = (0.0f64, 0usize);
            for (j, &x) in chunk.iter().enumerate() {
                if keep(k * CHUNK + j) {
                    part.0 += f64::from(x) * f64::from(x);
                    part.1 += 1;
                }
            }
            part
        })
        .collect();
    let (sum, n) = parts.iter().fold((0.0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    (n > 0).then(|| (sum / n as f64).sqrt())
}

/// Power of `relief` (e.g. [`fine_relief`]) at wavelengths of 2 to 10 cells within 22.5° of the
/// grid's axes, over the power within 22.5° of the diagonals: ~1 for relief with no preferred
/// direction, above 1 when it lines up with the axes. `None` below 8 x 8 cells or without
/// power. A Hann window keeps the map's edges out of the spectrum.
pub fn axis_to_diagonal_power(domain: &Domain<'_>, relief: &[f32]) -> Option<f64> {
    let (w, h) = (domain.width, domain.height);
    if w < 8 || h < 8 {
        return None;
    }
    let hann = |k: usize, n: usize| 0.5 - 0.5 * (2.0 * std::f64::consts::PI * (k as f64 + 0.5) / n as f64).cos();
    let mut data: Vec<Complex32> = (0..w * h)
        .map(|i| Complex32::new((f64::from(relief[i]) * hann(i % w, w) * hann(i / w, h)) as f32, 0.0))
        .collect();
    let mut planner = FftPlanner::<f32>::new();
    let fft_rows: Arc<dyn Fft<f32>> = planner.plan_fft_forward(w);
    let fft_cols: Arc<dyn Fft<f32>> = planner.plan_fft_forward(h);
    data.par_chunks_mut(w).for_each(|row| fft_rows.process(row));
    // columns: transpose, transform rows, and read the spectrum transposed
    let mut t = vec![Complex32::new(0.0, 0.0); w * h];
    t.par_chunks_mut(h).enumerate().for_each(|(c, col)| {
        for (r, v) in col.iter_mut().enumerate() {
            *v = data[r * w + c];
        }
    });
    t.par_chunks_mut(h).for_each(|col| fft_cols.process(col));
    let freq = |k: usize, n: usize| if k <= n / 2 { k as f64 / n as f64 } else { k as f64 / n as f64 - 1.0 };
    let (axis, diagonal) = t
        .par_chunks(h)
        .enumerate()
        .map(|(c, col)| {
            let fx = freq(c, w);
            let (mut a, mut d) = (0.0f64, 0.0f64);
            for (r, v) in col.iter().enumerate() {
                let fy = freq(r, h);
                let f2 = fx * fx + fy * fy;
                if !(0.01..=0.25).contains(&f2) {
                    continue;
                }
                let p = f64::from(v.norm_sqr());
                // angle to the nearest axis, 0..45 degrees
                let (ax, ay) = (fx.abs(), fy.abs());
                if ax.min(ay) < ax.max(ay) * (std::f64::consts::PI / 8.0).tan() {
                    a += p;
                } else {
                    d += p;
                }
            }
            (a, d)
        })
        .collect::<Vec<_>>()
        .into_iter()
        .fold((0.0, 0.0), |x, y| (x.0 + y.0, x.1 + y.1));
    (diagonal > 0.0).then(|| axis / diagonal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::CellSize;

    #[test]
    fn a_smooth_plane_has_no_fine_relief_and_grooves_line_up_with_the_axes() {
        let (w, h) = (64, 64);
        let d = Domain { width: w, height: h, cell: CellSize::square(1.0), nodata: None };
        let plane: Vec<f32> = (0..w * h).map(|i| (i % w) as f32 * 0.5 + (i / w) as f32 * 0.25).collect();
        let r = fine_relief(&d, &plane);
        assert!(rms(&r, |_| true).unwrap() < 1e-3);
        // grooves along x every 4 rows
        let grooves: Vec<f32> = (0..w * h).map(|i| if (i / w) % 4 == 0 { -1.0 } else { 0.0 }).collect();
        let g = fine_relief(&d, &grooves);
        assert!(axis_to_diagonal_power(&d, &g).unwrap() > 10.0);
        // the same grooves along a diagonal
        let diag: Vec<f32> = (0..w * h).map(|i| if (i / w + i % w) % 4 == 0 { -1.0 } else { 0.0 }).collect();
        let g = fine_relief(&d, &diag);
        assert!(axis_to_diagonal_power(&d, &g).unwrap() < 0.1);
    }

    #[test]
    fn white_noise_has_no_preferred_direction() {
        let mut rng = crate::rng::SplitMix64::new(3);
        let (w, h) = (128, 128);
        let d = Domain { width: w, height: h, cell: CellSize::square(1.0), nodata: None };
        let z: Vec<f32> = (0..w * h).map(|_| rng.next_f64() as f32).collect();
        let ratio = axis_to_diagonal_power(&d, &z).unwrap();
        assert!((ratio - 1.0).abs() < 0.1, "{ratio}");
    }
}
