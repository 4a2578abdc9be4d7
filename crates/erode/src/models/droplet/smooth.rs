//! The smoothing of a batch's terrain change, after Beyer (2015), who smooths the erosion
//! changes before applying them against the bumps and pits single droplets leave. Here a share
//! of each batch's change is spread by the binomial 3 x 3 kernel (`[1 2 1]/4` along each axis).
//! The kernel scatters: what would leave the map stays in its cell (or wraps), so the change's
//! volume is kept, and the f32 rounding is carried from cell to cell along each row and then
//! from row to row, so the terrain keeps it too. Nodata cells are like the map's edge: nothing
//! is spread into them and they spread nothing. The result does not depend on the thread count.

use rayon::prelude::*;

/// `terrain ← before + (1 − share)·Δ + share·blur(Δ)` with `Δ = terrain − before`, on a map
/// `w` cells wide; `outside` marks nodata cells (left as they are).
pub(super) fn smooth_change(
    terrain: &mut [f32],
    before: &[f32],
    w: usize,
    wrap: bool,
    share: f64,
    outside: Option<&[bool]>,
) {
    let rows = terrain.len() / w;
    if w == 0 || rows == 0 {
        return;
    }
    let valid = |i: usize| !outside.is_some_and(|m| m[i]);
    // along the rows
    let mut across = vec![0.0f64; terrain.len()];
    across.par_chunks_mut(w).enumerate().for_each(|(y, out)| {
        let row = y * w;
        let change = |x: usize| f64::from(terrain[row + x]) - f64::from(before[row + x]);
        blur_line(out, w, wrap, change, |x| valid(row + x));
    });
    // down the columns, a row at a time; each row carries the f32 rounding along itself and
    // hands what is left to the next row, so the volume is kept to a fraction of a quantum
    let leftovers: Vec<f64> = terrain
        .par_chunks_mut(w)
        .zip(before.par_chunks(w))
        .enumerate()
        .map(|(y, (out, base))| {
            let line = |k: usize| &across[k * w..(k + 1) * w];
            let here = line(y);
            let (up, down) = neighbours(y, rows, wrap);
            let mut carry = 0.0;
            for x in 0..w {
                if !valid(y * w + x) {
                    continue;
                }
                let (up, down) = (up.filter(|k| valid(k * w + x)), down.filter(|k| valid(k * w + x)));
                let blurred = 0.5 * here[x]
                    + 0.25 * up.map_or(here[x], |k| line(k)[x])
                    + 0.25 * down.map_or(here[x], |k| line(k)[x]);
                let change = f64::from(out[x]) - f64::from(base[x]);
                let exact = f64::from(base[x]) + (1.0 - share) * change + share * blurred + carry;
                out[x] = exact as f32;
                carry = exact - f64::from(out[x]);
            }
            carry
        })
        .collect();
    let mut carry = 0.0;
    for (y, left) in leftovers.iter().enumerate() {
        // the row's last cell in the domain takes what the row left over (a row without one
        // has nothing left over)
        let Some(last) = (y * w..(y + 1) * w).rev().find(|&i| valid(i)) else { continue };
        let exact = f64::from(terrain[last]) + carry + left;
        terrain[last] = exact as f32;
        carry = exact - f64::from(terrain[last]);
    }
}

/// The neighbours of `k` in a line of `n`: `None` where the kernel's share stays home.
fn neighbours(k: usize, n: usize, wrap: bool) -> (Option<usize>, Option<usize>) {
    if n == 1 {
        return (None, None);
    }
    let before = if k > 0 {
        Some(k - 1)
    } else if wrap {
        Some(n - 1)
    } else {
        None
    };
    let after = if k + 1 < n {
        Some(k + 1)
    } else if wrap {
        Some(0)
    } else {
        None
    };
    (before, after)
}

/// `[1 2 1]/4` of `value` along a line of `n` into `out`, over the places `valid` accepts (the
/// others neither send nor receive).
fn blur_line(out: &mut [f64], n: usize, wrap: bool, value: impl Fn(usize) -> f64, valid: impl Fn(usize) -> bool) {
    for (k, o) in out.iter_mut().enumerate().take(n) {
        let here = value(k);
        let (a, b) = neighbours(k, n, wrap);
        let (a, b) = (a.filter(|&j| valid(j)), b.filter(|&j| valid(j)));
        *o = 0.5 * here + 0.25 * a.map_or(here, &value) + 0.25 * b.map_or(here, &value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_volume_and_spreads_a_spike() {
        for wrap in [false, true] {
            let (w, h) = (7, 5);
            let before = vec![10.0f32; w * h];
            let mut t = before.clone();
            // a spike in a corner and one inside
            t[0] += 1.0;
            t[2 * w + 3] -= 2.0;
            smooth_change(&mut t, &before, w, wrap, 1.0, None);
            let change: f64 = t.iter().map(|&v| f64::from(v) - 10.0).sum();
            assert!((change + 1.0).abs() < 1e-5, "wrap {wrap}: volume change {change}");
            // the inside spike keeps a quarter, its side neighbours an eighth, diagonals 1/16
            assert!((f64::from(t[2 * w + 3]) - 9.5).abs() < 1e-5);
            assert!((f64::from(t[2 * w + 4]) - (10.0 - 0.25)).abs() < 1e-5);
            assert!((f64::from(t[3 * w + 4]) - (10.0 - 0.125)).abs() < 1e-5);
            if wrap {
                assert!(t[w * h - 1] > 10.0, "the corner's share wraps");
            } else {
                // the corner keeps what could not leave: (3/4)² of it
                assert!((f64::from(t[0]) - 10.5625).abs() < 1e-5);
            }
        }
    }

    #[test]
    fn share_zero_changes_nothing() {
        let before = vec![1.0f32; 12];
        let mut t: Vec<f32> = (0..12).map(|k| k as f32).collect();
        let expect = t.clone();
        smooth_change(&mut t, &before, 4, false, 0.0, None);
        assert_eq!(t, expect);
    }
}
