//! Hillslope diffusion, `dz/dt = D·∇²z`, implicit and split by direction: a backward-Euler
//! solve along every row, then along every column (tridiagonal systems, the Thomas algorithm),
//! so any time step is stable. Base-level cells keep their height (what diffuses into them
//! leaves, booked as `diffused_out`); a closed edge passes nothing. Rows run in parallel, and
//! so do blocks of columns; each cell's result does not depend on the thread count.

use rayon::prelude::*;

use super::routing::Cells;

/// Columns per task of the column sweep.
const COLUMN_BLOCK: usize = 64;

/// Scratch of the column sweep, kept between steps.
#[derive(Clone, Debug, Default)]
pub struct DiffusionScratch {
    fixed: Vec<bool>,
    blocks: Vec<Vec<f64>>,
}

/// One step of `D·Δt` (m²) on `z`; returns the volume that left into base-level cells, in m of
/// height summed over cells (multiply by the cell area).
pub fn diffuse(cells: &Cells, d_dt: f64, cell: (f64, f64), z: &mut [f64], scratch: &mut DiffusionScratch) -> f64 {
    let (w, h) = (cells.width, cells.height);
    scratch.fixed.resize(w * h, false);
    let zr: &[f64] = z;
    scratch.fixed.par_chunks_mut(w).enumerate().for_each(|(r, row)| {
        for (c, f) in row.iter_mut().enumerate() {
            let i = r * w + c;
            *f = cells.kind[i] != super::routing::ACTIVE || cells.is_base(i, zr[i]);
        }
    });
    let fixed = &scratch.fixed;
    let ax = d_dt / (cell.0 * cell.0);
    let ay = d_dt / (cell.1 * cell.1);
    // rows
    let out_x: f64 = z
        .par_chunks_mut(w)
        .enumerate()
        .map_init(
            || (vec![0.0; w], vec![0.0; w]),
            |(cp, dp), (r, row)| solve_line(row, &fixed[r * w..(r + 1) * w], ax, cp, dp),
        )
        .collect::<Vec<f64>>()
        .iter()
        .sum();
    // columns, in blocks: each block solved into its own buffer, then copied back
    let blocks = w.div_ceil(COLUMN_BLOCK);
    scratch.blocks.resize_with(blocks, Vec::new);
    let zr: &[f64] = z;
    let out_y: f64 = scratch
        .blocks
        .par_iter_mut()
        .enumerate()
        .map(|(b, buf)| {
            let (c0, c1) = (b * COLUMN_BLOCK, ((b + 1) * COLUMN_BLOCK).min(w));
            let bw = c1 - c0;
            buf.resize(bw * h, 0.0);
            // transpose the block so each column is contiguous
            for r in 0..h {
                for c in 0..bw {
                    buf[c * h + r] = zr[r * w + c0 + c];
                }
            }
            let mut cp = vec![0.0; h];
            let mut dp = vec![0.0; h];
            let mut col_fixed = vec![false; h];
            let mut out = 0.0;
            for c in 0..bw {
                for (r, f) in col_fixed.iter_mut().enumerate() {
                    *f = fixed[r * w + c0 + c];
                }
                out += solve_line(&mut buf[c * h..(c + 1) * h], &col_fixed, ay, &mut cp, &mut dp);
            }
            out
        })
        .collect::<Vec<f64>>()
        .iter()
        .sum();
    let bufs = &scratch.blocks;
    z.par_chunks_mut(w).enumerate().for_each(|(r, row)| {
        for (b, buf) in bufs.iter().enumerate() {
            let c0 = b * COLUMN_BLOCK;
            let bw = buf.len() / h;
            for c in 0..bw {
                row[c0 + c] = buf[c * h + r];
            }
        }
    });
    out_x + out_y
}

/// Solves `(1 − α·δ²) z_new = z` along one line in place, fixed cells held (identity rows), a
/// line end closed; returns what flowed from free cells into fixed ones, m (summed heights).
fn solve_line(z: &mut [f64], fixed: &[bool], alpha: f64, cp: &mut [f64], dp: &mut [f64]) -> f64 {
    let n = z.len();
    if n == 1 {
        return 0.0;
    }
    // coefficients of row i: a (left), b (diagonal), c (right)
    let coef = |i: usize| -> (f64, f64, f64) {
        if fixed[i] {
            return (0.0, 1.0, 0.0);
        }
        let a = if i > 0 { -alpha } else { 0.0 };
        let c = if i + 1 < n { -alpha } else { 0.0 };
        (a, 1.0 - a - c, c)
    };
    let (_, b0, c0) = coef(0);
    cp[0] = c0 / b0;
    dp[0] = z[0] / b0;
    for i in 1..n {
        let (a, b, c) = coef(i);
        let m = b - a * cp[i - 1];
        cp[i] = c / m;
        dp[i] = (z[i] - a * dp[i - 1]) / m;
    }
    z[n - 1] = dp[n - 1];
    for i in (0..n - 1).rev() {
        z[i] = dp[i] - cp[i] * z[i + 1];
    }
    // the flux across each free–fixed face, from the new heights
    let mut out = 0.0;
    for i in 0..n - 1 {
        match (fixed[i], fixed[i + 1]) {
            (false, true) => out += alpha * (z[i] - z[i + 1]),
            (true, false) => out += alpha * (z[i + 1] - z[i]),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_conserves_its_volume_less_what_leaves() {
        let mut z: Vec<f64> = (0..20).map(|i| ((i * 7) % 5) as f64).collect();
        let fixed: Vec<bool> = (0..20).map(|i| i == 0 || i == 13).collect();
        let before: f64 = (0..20).filter(|&i| !fixed[i]).map(|i| z[i]).sum();
        let (mut cp, mut dp) = (vec![0.0; 20], vec![0.0; 20]);
        let out = solve_line(&mut z, &fixed, 3.0, &mut cp, &mut dp);
        let after: f64 = (0..20).filter(|&i| !fixed[i]).map(|i| z[i]).sum();
        assert!((before - after - out).abs() < 1e-12, "{before} {after} {out}");
        assert_eq!(z[0], 0.0);
        assert_eq!(z[13], ((13 * 7) % 5) as f64);
    }
}
