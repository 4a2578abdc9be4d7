//! Multiple flow directions (MFD) for the stream-power model, the `flow = "mfd"` option: each
//! cell's water is shared among all its lower neighbours in proportion to `slope^p` (Freeman
//! 1991), and river incision sums over those receivers, as the multiple-receiver version of
//! FastScape (Braun & Willett 2013's solver) does.
//!
//! It builds on the D8 routing of the same step: the depressions are filled and every cell has
//! a D8 receiver by then. The surface water flows over is the terrain raised, where a filled
//! lake left it level, just above the cell's D8 receiver; every lower neighbour on that surface
//! is a receiver, so each cell has at least one (its D8 receiver) and the receivers form no
//! cycle. The drainage area is summed visiting each cell after its donors, the incision solved
//! visiting each after its receivers, on every thread (see [`super::dependency`]; a cell's
//! receivers lie in different D8 trees, so the stack's groups do not apply). Each visit reads
//! only the cells it waited for, in direction order: the same bits on any thread count.
//!
//! Incision of a cell with receivers `k` (new heights `z_k`, already solved) solves
//! `z − z₀ + Σ_k F_k·max(0, z − z_k)^n = 0`, `F_k = K·Δt·(A·w_k)^m / L_k^n`, with `w_k` the
//! share of receiver `k`: exact for `n = 1` (piecewise linear in `z`), bracketed Newton
//! otherwise. The left side grows with `z`, so the root is unique and lies between the lowest
//! receiver and `z₀`.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use rayon::prelude::*;

use super::dependency::visit_in_order;
use super::erosion::{Incision, Lowering};
use super::routing::{Cells, FLAT_GRADIENT, NO_DIRECTION, OPPOSITE, OUTSIDE, Routing};

/// The multiple-flow routing of one step, and its scratch.
#[derive(Debug, Default)]
pub struct MultipleFlow {
    /// The surface water flows over: the terrain, raised just above the D8 receiver where a
    /// filled lake left it level, m.
    surface: Vec<f64>,
    /// A bit per direction of each cell's receivers.
    receivers: Vec<u8>,
    /// Each cell's share of its water to the neighbour in each direction (0: not a receiver).
    share: Vec<[f32; 8]>,
    /// The same shares to the power `m`, for the incision.
    share_m: Vec<[f32; 8]>,
    /// A bit per direction of the neighbours that drain to each cell.
    donors: Vec<u8>,
    /// How many cells each cell still waits for, while the cells are visited in order.
    waiting: Vec<AtomicU8>,
    /// Cells that drain through each cell, itself included (fractions of cells; f64 bits).
    area: Vec<AtomicU64>,
    /// Each cell's area over the sum of its shares: what one unit of share carries on (f64 bits).
    outflow: Vec<AtomicU64>,
    /// `area^m`.
    area_m: Vec<f64>,
}

impl MultipleFlow {
    /// The receivers and donors of every cell and the shares, from the terrain `z` and the
    /// step's D8 routing (its stack built); `exponent` is `p` in `slope^p`, `m` the
    /// drainage-area exponent.
    pub fn route(&mut self, cells: &Cells, routing: &Routing, z: &[f64], exponent: f64, m: f64) {
        let n = z.len();
        let (exponent, m) = (exponent as f32, m as f32);
        self.surface.clear();
        self.surface.extend_from_slice(z);
        // receivers before donors along the D8 stack: a level lake's cells step up from its outlet
        for &i in &routing.stack {
            let i = i as usize;
            if routing.direction[i] != NO_DIRECTION {
                let r = routing.receiver[i] as usize;
                if self.surface[i] <= self.surface[r] {
                    self.surface[i] = self.surface[r] + FLAT_GRADIENT;
                }
            }
        }
        self.share.resize(n, [0.0; 8]);
        self.share_m.resize(n, [0.0; 8]);
        let w = cells.width;
        let surface = &self.surface;
        let direction = &routing.direction;
        self.receivers.resize(n, 0);
        self.share
            .par_chunks_mut(w)
            .zip(self.share_m.par_chunks_mut(w))
            .zip(self.receivers.par_chunks_mut(w))
            .enumerate()
            .for_each(|(row, ((shares, shares_m), masks))| {
                for (c, ((share, share_m), mask)) in
                    shares.iter_mut().zip(shares_m.iter_mut()).zip(masks.iter_mut()).enumerate()
                {
                    let i = row * w + c;
                    (*share, *share_m, *mask) = ([0.0; 8], [0.0; 8], 0);
                    if direction[i] == NO_DIRECTION {
                        continue;
                    }
                    let mut slope = [0.0f64; 8];
                    let mut steepest = 0.0f64;
                    cells.each_neighbour(i, |k, j| {
                        if surface[j] < surface[i] {
                            slope[k] = (surface[i] - surface[j]) * cells.inverse_distance[k];
                            steepest = steepest.max(slope[k]);
                        }
                    });
                    // relative to the steepest, so no share underflows to nothing; in f32, as
                    // they are kept (single precision is plenty for a share)
                    let mut weight = [0.0f32; 8];
                    let mut sum = 0.0f32;
                    for k in 0..8 {
                        if slope[k] > 0.0 {
                            weight[k] = ((slope[k] / steepest) as f32).powf(exponent);
                            sum += weight[k];
                        }
                    }
                    for k in 0..8 {
                        if weight[k] > 0.0 {
                            *mask |= 1 << k;
                            share[k] = weight[k] / sum;
                            share_m[k] = share[k].powf(m);
                        }
                    }
                }
            });
        let receivers = &self.receivers;
        self.donors.resize(n, 0);
        self.donors.par_chunks_mut(w).enumerate().for_each(|(row, donors)| {
            for (c, d) in donors.iter_mut().enumerate() {
                let mut mask = 0;
                cells.each_neighbour(row * w + c, |k, j| mask |= ((receivers[j] >> OPPOSITE[k]) & 1) << k);
                *d = mask;
            }
        });
    }

    /// Sets each cell inside the domain waiting for the cells `links` gives it (a bit each),
    /// and returns those that wait for none.
    fn wait_for(&mut self, cells: &Cells, links: &[u8]) -> Vec<u32> {
        let n = links.len();
        if self.waiting.len() != n {
            self.waiting = (0..n).map(|_| AtomicU8::new(0)).collect();
        }
        let w = cells.width;
        let waiting = &self.waiting;
        (0..cells.height)
            .into_par_iter()
            .flat_map_iter(|row| {
                (row * w..(row + 1) * w).filter_map(|i| {
                    waiting[i].store(links[i].count_ones() as u8, Ordering::Relaxed);
                    (cells.kind[i] != OUTSIDE && links[i] == 0).then_some(i as u32)
                })
            })
            .collect()
    }

    /// Drainage area in cells, every cell after its donors (on every thread): a cell's own
    /// plus what each donor passes on in its share to it.
    pub fn accumulate(&mut self, cells: &Cells, routing: &Routing, m: f64) {
        let n = self.surface.len();
        if self.area.len() != n {
            self.area = (0..n).map(|_| AtomicU64::new(0)).collect();
            self.outflow = (0..n).map(|_| AtomicU64::new(0)).collect();
        }
        let donors = std::mem::take(&mut self.donors);
        let starts = self.wait_for(cells, &donors);
        let (area, outflow, share, receivers) = (&self.area, &self.outflow, &self.share, &self.receivers);
        let load = |v: &AtomicU64| f64::from_bits(v.load(Ordering::Relaxed));
        visit_in_order(&self.waiting, starts, routing.stack.len(), &cells.offset, |c| {
            let mut a = 1.0;
            let mut mask = donors[c];
            while mask != 0 {
                let k = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                let d = (c as isize + cells.offset[k]) as usize;
                a += load(&outflow[d]) * f64::from(share[d][OPPOSITE[k] as usize]);
            }
            area[c].store(a.to_bits(), Ordering::Relaxed);
            // over the shares' sum in f64, so no water is lost to their rounding
            let mut total = 0.0;
            let mut mask = receivers[c];
            while mask != 0 {
                let k = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                total += f64::from(share[c][k]);
            }
            if total > 0.0 {
                outflow[c].store((a / total).to_bits(), Ordering::Relaxed);
            }
            receivers[c]
        });
        self.donors = donors;
        self.area_m.resize(n, 0.0);
        self.area_m.par_iter_mut().zip(area).with_min_len(4096).for_each(|(am, a)| *am = load(a).powf(m));
    }

    /// Cells that drain through cell `i`, itself included (0 outside the domain).
    #[inline]
    pub fn area(&self, i: usize) -> f64 {
        if self.area.is_empty() { 0.0 } else { f64::from_bits(self.area[i].load(Ordering::Relaxed)) }
    }

    /// Lowers every cell after its receivers (on every thread), from the heights `z`, writing
    /// the new heights into `out`; returns the lowerings' sum and the raises' sum (a cell left
    /// not above its lowest receiver is set [`FLAT_GRADIENT`] above it, as in D8's
    /// [`super::erosion::incise`]), summed by rows in order.
    pub fn incise(
        &mut self,
        cells: &Cells,
        routing: &Routing,
        inc: Incision<'_>,
        z: &[f64],
        out: &mut Lowering,
    ) -> (f64, f64) {
        if out.height.len() != z.len() {
            out.height = (0..z.len()).map(|_| AtomicU64::new(0)).collect();
        }
        let links = std::mem::take(&mut self.receivers);
        let starts = self.wait_for(cells, &links);
        let height = |i: usize| f64::from_bits(out.height[i].load(Ordering::Relaxed));
        let set = |i: usize, z: f64| out.height[i].store(z.to_bits(), Ordering::Relaxed);
        let (share_m, area_m, donors) = (&self.share_m, &self.area_m, &self.donors);
        visit_in_order(&self.waiting, starts, routing.stack.len(), &cells.offset, |i| {
            let z0 = z[i];
            let mut receivers = [(0.0f64, 0.0f64); 8];
            let mut count = 0;
            let mut lowest = f64::INFINITY;
            let f_cell = inc.k_dt * inc.scale.map_or(1.0, |s| f64::from(s[i])) * area_m[i];
            let mut mask = links[i];
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
            donors[i]
        });
        self.receivers = links;
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
