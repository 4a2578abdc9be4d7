//! The one place rayon appears: per-row parallel loops whose results never depend on the number
//! of threads. Each row is computed from inputs that no row writes, and per-row sums are reduced
//! in row order, so 1, 2 or 16 threads give the same bits.

use rayon::prelude::*;

/// Sums a stage reports (e.g. volumes for the books), per row then reduced in row order.
pub(crate) type Sums<const K: usize = 4> = [f64; K];

/// Rows per rayon task: enough work per task to amortise scheduling on small grids.
fn min_rows(width: usize) -> usize {
    (2048 / width.max(1)).max(1)
}

/// Element-wise `a + b`.
pub(crate) fn add<const K: usize>(a: Sums<K>, b: &Sums<K>) -> Sums<K> {
    std::array::from_fn(|k| a[k] + b[k])
}

/// Calls `f(row, rows_of_outs)` for every row, handing row `r` of each output slice to the task
/// for row `r`, and returns each row's sums, in row order.
pub(crate) fn row_sums<const K: usize, T: Send, F>(outs: &mut [&mut [T]], width: usize, f: F) -> Vec<Sums<K>>
where
    F: Fn(usize, &mut [&mut [T]]) -> Sums<K> + Sync + Send,
{
    row_sums_with(outs, width, f)
}

/// [`row_sums`] for any result a row gives.
pub(crate) fn row_sums_with<R: Send, T: Send, F>(outs: &mut [&mut [T]], width: usize, f: F) -> Vec<R>
where
    F: Fn(usize, &mut [&mut [T]]) -> R + Sync + Send,
{
    let height = outs.first().map_or(0, |o| o.len() / width.max(1));
    let mut per_row: Vec<Vec<&mut [T]>> = (0..height).map(|_| Vec::with_capacity(outs.len())).collect();
    for out in outs.iter_mut() {
        for (r, chunk) in out.chunks_mut(width).enumerate() {
            per_row[r].push(chunk);
        }
    }
    per_row.par_iter_mut().with_min_len(min_rows(width)).enumerate().map(|(r, slices)| f(r, slices)).collect()
}

/// [`row_sums`] reduced in row order.
pub(crate) fn rows<const K: usize, T: Send, F>(outs: &mut [&mut [T]], width: usize, f: F) -> Sums<K>
where
    F: Fn(usize, &mut [&mut [T]]) -> Sums<K> + Sync + Send,
{
    fold(&row_sums(outs, width, f))
}

/// Per-row sums reduced in row order.
pub(crate) fn fold<const K: usize>(rows: &[Sums<K>]) -> Sums<K> {
    rows.iter().fold([0.0; K], add)
}

/// Sum of a row's values in a fixed order that vectorises: 8 lanes, then the lanes in order.
#[inline]
pub(crate) fn lane_sum(x: &[f32]) -> f64 {
    let mut lanes = [0.0f32; 8];
    let (chunks, rest) = x.as_chunks::<8>();
    for chunk in chunks {
        // whole arrays, so this is one vector add per chunk
        lanes = std::array::from_fn(|l| lanes[l] + chunk[l]);
    }
    let mut total: f64 = lanes.iter().map(|&v| f64::from(v)).sum();
    for &v in rest {
        total += f64::from(v);
    }
    total
}

/// Calls `f(band, first_row, band_slices)` for every band of rows `bounds[k]..bounds[k + 1]`, in
/// parallel, handing each band its rows of every output; returns the results in band order.
pub(crate) fn bands<T, F>(outs: &mut [&mut [f32]], width: usize, bounds: &[usize], f: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize, usize, &mut [&mut [f32]]) -> T + Sync + Send,
{
    let count = bounds.len().saturating_sub(1);
    let mut per_band: Vec<Vec<&mut [f32]>> = (0..count).map(|_| Vec::with_capacity(outs.len())).collect();
    for out in outs.iter_mut() {
        let mut rest: &mut [f32] = out;
        for k in 0..count {
            let (band, tail) = rest.split_at_mut((bounds[k + 1] - bounds[k]) * width);
            per_band[k].push(band);
            rest = tail;
        }
    }
    per_band.par_iter_mut().enumerate().map(|(k, slices)| f(k, bounds[k], slices)).collect()
}

/// Calls `f(row, row_slices)` for the listed rows only (sorted, distinct), in parallel; returns
/// the results in the order of `rows`.
pub(crate) fn some_rows<T, F>(outs: &mut [&mut [f32]], width: usize, rows: &[usize], f: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize, &mut [&mut [f32]]) -> T + Sync + Send,
{
    let mut per_row: Vec<Vec<&mut [f32]>> = (0..rows.len()).map(|_| Vec::with_capacity(outs.len())).collect();
    for out in outs.iter_mut() {
        let mut wanted = rows.iter().enumerate().peekable();
        for (r, chunk) in out.chunks_mut(width).enumerate() {
            if let Some((k, _)) = wanted.next_if(|&(_, &row)| row == r) {
                per_row[k].push(chunk);
            }
        }
    }
    per_row.par_iter_mut().zip(rows).map(|(slices, &r)| f(r, slices)).collect()
}
