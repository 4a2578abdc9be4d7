//! The one place rayon appears: per-row parallel loops whose results never depend on the number
//! of threads. Each row is computed from inputs that no row writes, and per-row sums are reduced
//! in row order, so 1, 2 or 16 threads give the same bits.

use rayon::prelude::*;

/// Sums a stage reports (e.g. volumes for the books), per row then reduced in row order.
pub(crate) type Sums = [f64; 4];

/// Rows per rayon task: enough work per task to amortise scheduling on small grids.
fn min_rows(width: usize) -> usize {
    (2048 / width.max(1)).max(1)
}

fn add(a: Sums, b: &Sums) -> Sums {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]]
}

/// Calls `f(row, rows_of_outs)` for every row, handing row `r` of each output slice to the task
/// for row `r`, and returns the per-row sums reduced in row order.
pub(crate) fn rows<F>(outs: &mut [&mut [f32]], width: usize, f: F) -> Sums
where
    F: Fn(usize, &mut [&mut [f32]]) -> Sums + Sync + Send,
{
    let height = outs.first().map_or(0, |o| o.len() / width.max(1));
    let mut per_row: Vec<Vec<&mut [f32]>> = (0..height).map(|_| Vec::with_capacity(outs.len())).collect();
    for out in outs.iter_mut() {
        for (r, chunk) in out.chunks_mut(width).enumerate() {
            per_row[r].push(chunk);
        }
    }
    let parts: Vec<Sums> =
        per_row.par_iter_mut().with_min_len(min_rows(width)).enumerate().map(|(r, slices)| f(r, slices)).collect();
    parts.iter().fold([0.0; 4], add)
}

/// Sum of a row's values in a fixed order that vectorises: 8 lanes, then the lanes in order.
pub(crate) fn lane_sum(x: &[f32]) -> f64 {
    let mut lanes = [0.0f32; 8];
    let chunks = x.chunks_exact(8);
    let rest = chunks.remainder();
    for chunk in chunks {
        for l in 0..8 {
            lanes[l] += chunk[l];
        }
    }
    let mut total: f64 = lanes.iter().map(|&v| f64::from(v)).sum();
    for &v in rest {
        total += f64::from(v);
    }
    total
}
