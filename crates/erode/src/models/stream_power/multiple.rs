//! River incision over multiple flow directions, the `flow = "mfd"` option: the stream-power
//! law summed over each cell's receivers of the flow graph's MFD routing
//! ([`crate::flow::multiple`]), as the multiple-receiver version of FastScape (Braun & Willett
//! 2013's solver) does. Cells are solved each after its receivers, on every thread, each from
//! the cells it waited for in direction order: the same bits on any thread count.
//!
//! Incision of a cell with receivers `k` (new heights `z_k`, already solved) solves
//! `z − z₀ + Σ_k F_k·max(0, z − z_k)^n = 0`, `F_k = K·Δt·(A·w_k)^m / L_k^n`, with `w_k` the
//! share of receiver `k`: exact for `n = 1` (piecewise linear in `z`), bracketed Newton
//! otherwise. The left side grows with `z`, so the root is unique and lies between the lowest
//! receiver and `z₀`.

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::erosion::{Incision, Lowering};
use crate::flow::multiple::MultipleFlow;
use crate::flow::routing::{Cells, FLAT_GRADIENT, OUTSIDE, Routing};

/// The powers the incision over multiple receivers needs, and its scratch.
#[derive(Debug, Default)]
pub struct MultipleIncision {
    /// Each cell's shares to the power `m`.
    share_m: Vec<[f32; 8]>,
    /// Each cell's drainage area (cells) to the power `m`.
    area_m: Vec<f64>,
}

impl MultipleIncision {
    /// The shares and drainage areas of `flow` (routed and accumulated) to the power `m`.
    pub fn prepare(&mut self, flow: &MultipleFlow, m: f64) {
        let n = flow.shares().len();
        let mf = m as f32;
        self.share_m.resize(n, [0.0; 8]);
        self.share_m.par_iter_mut().zip(flow.shares()).zip(flow.receivers()).with_min_len(4096).for_each(
            |((sm, s), &mask)| {
                for k in 0..8 {
                    sm[k] = if mask & (1 << k) != 0 { s[k].powf(mf) } else { 0.0 };
                }
            },
        );
        self.area_m.resize(n, 0.0);
        self.area_m.par_iter_mut().enumerate().with_min_len(4096).for_each(|(i, am)| *am = flow.area(i).powf(m));
    }

    /// Lowers every cell after its receivers (on every thread), from the heights `z`, writing
    /// the new heights into `out`; returns the lowerings' sum and the raises' sum (a cell left
    /// not above its lowest receiver is set [`FLAT_GRADIENT`] above it, as in D8's
    /// [`super::erosion::incise`]), summed by rows in order.
    pub fn incise(
        &self,
        cells: &Cells,
        routing: &Routing,
        flow: &mut MultipleFlow,
        inc: Incision<'_>,
        z: &[f64],
        out: &mut Lowering,
    ) -> (f64, f64) {
        if out.height.len() != z.len() {
            out.height = (0..z.len()).map(|_| AtomicU64::new(0)).collect();
        }
        let height = |i: usize| f64::from_bits(out.height[i].load(Ordering::Relaxed));
        let set = |i: usize, z: f64| out.height[i].store(z.to_bits(), Ordering::Relaxed);
        let (share_m, area_m) = (&self.share_m, &self.area_m);
        flow.visit_receivers_first(cells, routing.stack.len(), |i, links| {
            let z0 = z[i];
            let mut receivers = [(0.0f64, 0.0f64); 8];
            let mut count = 0;
            let mut lowest = f64::INFINITY;
            let f_cell = inc.k_dt * inc.scale.map_or(1.0, |s| f64::from(s[i])) * area_m[i];
            let mut mask = links;
            while mask != 0 {
                let k = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                let zr = height((i as isize + cells.offset[k]) as usize);
                receivers[count] = (zr, f_cell * f64::from(share_m[i][k]) * inc.inv_length_n[k]);
                lowest = lowest.min(zr);
                count += 1;
            }
            let new = if count == 0 {
                z0
            } else {
                let new = if z0 > lowest { solve(z0, &mut receivers[..count], inc.n) } else { z0 };
                if new <= lowest { lowest + FLAT_GRADIENT } else { new }
            };
            set(i, new);
        });
        // the books, by rows in order: a cell below its old height eroded, one above was raised
        let w = cells.width;
        let sums: Vec<(f64, f64)> = (0..cells.height)
            .into_par_iter()
            .map(|row| {
                let (mut eroded, mut raised) = (0.0, 0.0);
                for (c, &old) in z[row * w..(row + 1) * w].iter().enumerate() {
                    let i = row * w + c;
                    if cells.kind[i] != OUTSIDE {
                        let change = height(i) - old;
                        if change > 0.0 {
                            raised += change;
                        } else {
                            eroded -= change;
                        }
                    }
                }
                (eroded, raised)
            })
            .collect();
        sums.iter().fold((0.0, 0.0), |(e, r), s| (e + s.0, r + s.1))
    }
}

/// The `z` in `(lowest receiver, z0]` with `z − z0 + Σ f·max(0, z − z_r)^n = 0`, for receivers
/// `(z_r, f)` (sorted in place by height), `z0` above the lowest.
fn solve(z0: f64, receivers: &mut [(f64, f64)], n: f64) -> f64 {
    receivers.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let lowest = receivers[0].0;
    if n == 1.0 {
        // piecewise linear: take receivers from the lowest while the root lies above the next
        let (mut f_sum, mut fz_sum) = (0.0, 0.0);
        let mut z = z0;
        for (q, &(zr, f)) in receivers.iter().enumerate() {
            if zr >= z {
                break;
            }
            f_sum += f;
            fz_sum += f * zr;
            z = (z0 + fz_sum) / (1.0 + f_sum);
            if receivers.get(q + 1).is_none_or(|next| z <= next.0) {
                break;
            }
        }
        return z;
    }
    // heights above the lowest receiver, for precision; g grows with y from g(0) < 0 to g(y0) >= 0
    let y0 = z0 - lowest;
    let g = |y: f64| {
        let (mut v, mut dv) = (y - y0, 1.0);
        for &(zr, f) in receivers.iter() {
            let d = y - (zr - lowest);
            if d > 0.0 {
                v += f * d.powf(n);
                dv += f * n * d.powf(n - 1.0);
            }
        }
        (v, dv)
    };
    let (mut lo, mut hi) = (0.0, y0);
    let mut y = y0;
    for _ in 0..100 {
        let (v, dv) = g(y);
        if v == 0.0 {
            break;
        }
        if v > 0.0 {
            hi = y
        } else {
            lo = y
        }
        let mut next = y - v / dv;
        if !(next > lo && next < hi) {
            next = 0.5 * (lo + hi);
        }
        if (next - y).abs() <= 1e-14 * next {
            y = next;
            break;
        }
        y = next;
    }
    lowest + y
}

#[cfg(test)]
mod tests {
    use super::*;

    fn residual(z: f64, z0: f64, receivers: &[(f64, f64)], n: f64) -> f64 {
        z - z0 + receivers.iter().map(|&(zr, f)| f * (z - zr).max(0.0).powf(n)).sum::<f64>()
    }

    #[test]
    fn the_implicit_step_over_several_receivers_is_solved() {
        let cases: [(f64, &[(f64, f64)]); 5] = [
            (10.0, &[(2.0, 0.5)]),
            (10.0, &[(2.0, 0.5), (9.0, 3.0), (5.0, 0.1)]),
            (100.0, &[(99.9, 50.0), (0.0, 1e-3), (50.0, 0.2)]),
            (1.0, &[(0.5, 1e3), (0.9, 1e3)]),
            (1000.0, &[(999.0, 0.3), (999.5, 0.3), (998.0, 0.01), (999.99, 7.0)]),
        ];
        for n in [1.0, 2.0, 0.5, 1.5] {
            for (z0, rs) in cases {
                let mut sorted = rs.to_vec();
                let z = solve(z0, &mut sorted, n);
                let lowest = rs.iter().map(|r| r.0).fold(f64::INFINITY, f64::min);
                assert!(z > lowest && z <= z0, "n {n} z0 {z0} {rs:?}: {z}");
                let r = residual(z, z0, rs, n);
                assert!(r.abs() < 1e-9 * (z0 - lowest), "n {n} z0 {z0} {rs:?}: z {z}, residual {r}");
            }
        }
    }
}
