//! Hillslope diffusion, `dz/dt = D·∇²z`, implicit and split by direction: a backward-Euler
//! solve along every row, then along every column (tridiagonal systems, the Thomas algorithm),
//! so any time step is stable. Base-level cells keep their height (what diffuses into them
//! leaves, booked as `diffused_out`); a closed edge passes nothing. Rows run in parallel, and
//! so do blocks of columns; each cell's result does not depend on the thread count.

use rayon::prelude::*;

use crate::flow::routing::Cells;

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
            *f = cells.kind[i] != crate::flow::routing::ACTIVE || cells.is_base(i, zr[i]);
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
    // columns, in blocks of adjacent columns: each block runs the Thomas algorithm down the
    // rows for all its columns at once (rows of the block are contiguous), into its own buffer
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
            // buf holds c' then d' (then the solution) for each row of the block
            buf.resize(2 * bw * h, 0.0);
            let (cp, dp) = buf.split_at_mut(bw * h);
            let coef = |r: usize, c: usize| -> (f64, f64, f64) {
                if fixed[r * w + c0 + c] {
                    return (0.0, 1.0, 0.0);
                }
                let a = if r > 0 { -ay } else { 0.0 };
                let cc = if r + 1 < h { -ay } else { 0.0 };
                (a, 1.0 - a - cc, cc)
            };
            for r in 0..h {
                let zrow = &zr[r * w + c0..r * w + c1];
                for c in 0..bw {
                    let (a, bb, cc) = coef(r, c);
                    let (pc, pd) = if r > 0 { (cp[(r - 1) * bw + c], dp[(r - 1) * bw + c]) } else { (0.0, 0.0) };
                    let m = bb - a * pc;
                    cp[r * bw + c] = cc / m;
                    dp[r * bw + c] = (zrow[c] - a * pd) / m;
                }
            }
            // back substitution in place: dp becomes the solution
            for r in (0..h.saturating_sub(1)).rev() {
                for c in 0..bw {
                    dp[r * bw + c] -= cp[r * bw + c] * dp[(r + 1) * bw + c];
                }
            }
            // flux across free–fixed faces between rows
            let mut out = 0.0;
            for r in 0..h.saturating_sub(1) {
                for c in 0..bw {
                    let (f0, f1) = (fixed[r * w + c0 + c], fixed[(r + 1) * w + c0 + c]);
                    let (z0, z1) = (dp[r * bw + c], dp[(r + 1) * bw + c]);
                    match (f0, f1) {
                        (false, true) => out += ay * (z0 - z1),
                        (true, false) => out += ay * (z1 - z0),
                        _ => {}
                    }
                }
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
            let bw = buf.len() / (2 * h);
            let solution = &buf[bw * h..];
            row[c0..c0 + bw].copy_from_slice(&solution[r * bw..(r + 1) * bw]);
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
