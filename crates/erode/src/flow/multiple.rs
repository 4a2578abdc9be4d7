//! Multiple flow directions (MFD): each cell's water is shared among all its lower neighbours
//! in proportion to `slope^p` (Freeman 1991), as the multiple-receiver version of FastScape
//! (Braun & Willett 2013's solver) routes it.
//!
//! It builds on the D8 routing of the same surface: the depressions are filled and every cell
//! has a D8 receiver by then. The surface water flows over is the terrain raised, where a filled
//! lake left it level, just above the cell's D8 receiver; every lower neighbour on that surface
//! is a receiver, so each cell has at least one (its D8 receiver) and the receivers form no
//! cycle. The drainage area is summed visiting each cell after its donors (and an eroder may
//! visit each after its receivers) on every thread (see [`super::dependency`]; a cell's
//! receivers lie in different D8 trees, so the stack's groups do not apply). Each visit reads
//! only the cells it waited for, in direction order: the same bits on any thread count.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use rayon::prelude::*;

use super::dependency::visit_in_order;
use super::neighbours::OPPOSITE;
use super::routing::{Cells, FLAT_GRADIENT, NO_DIRECTION, OUTSIDE, Routing};

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
    /// A bit per direction of the neighbours that drain to each cell.
    donors: Vec<u8>,
    /// How many cells each cell still waits for, while the cells are visited in order.
    waiting: Vec<AtomicU8>,
    /// Cells that drain through each cell, itself included (fractions of cells; f64 bits).
    area: Vec<AtomicU64>,
    /// Each cell's area over the sum of its shares: what one unit of share carries on (f64 bits).
    outflow: Vec<AtomicU64>,
}

impl MultipleFlow {
    /// The receivers and donors of every cell and the shares, from the terrain `z` and the
    /// step's D8 routing (its stack built); `exponent` is `p` in `slope^p`.
    pub fn route(&mut self, cells: &Cells, routing: &Routing, z: &[f64], exponent: f64) {
        let n = z.len();
        let exponent = exponent as f32;
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
        let w = cells.width;
        let surface = &self.surface;
        let direction = &routing.direction;
        self.receivers.resize(n, 0);
        self.share.par_chunks_mut(w).zip(self.receivers.par_chunks_mut(w)).enumerate().for_each(
            |(row, (shares, masks))| {
                for (c, (share, mask)) in shares.iter_mut().zip(masks.iter_mut()).enumerate() {
                    let i = row * w + c;
                    (*share, *mask) = ([0.0; 8], 0);
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
                        }
                    }
                }
            },
        );
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
    pub fn accumulate(&mut self, cells: &Cells, routing: &Routing) {
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
    }

    /// Cells that drain through cell `i`, itself included (0 outside the domain).
    #[inline]
    pub fn area(&self, i: usize) -> f64 {
        if self.area.is_empty() { 0.0 } else { f64::from_bits(self.area[i].load(Ordering::Relaxed)) }
    }

    /// Each cell's share of its water to the neighbour in each direction of
    /// [`STEPS`](super::neighbours::STEPS) (0: not a receiver).
    pub fn shares(&self) -> &[[f32; 8]] {
        &self.share
    }

    /// Each cell's receivers: a bit per direction of [`STEPS`](super::neighbours::STEPS).
    pub fn receivers(&self) -> &[u8] {
        &self.receivers
    }

    /// Calls `visit(i, receivers)` for each cell inside the domain once every one of its
    /// receivers was visited (on every thread), `receivers` a bit per direction of
    /// [`STEPS`](super::neighbours::STEPS): the order an implicit eroder solves in. `total` is
    /// the number of cells inside the domain.
    pub fn visit_receivers_first(&mut self, cells: &Cells, total: usize, visit: impl Fn(usize, u8) + Sync) {
        let links = std::mem::take(&mut self.receivers);
        let starts = self.wait_for(cells, &links);
        let (donors, receivers) = (&self.donors, &links);
        visit_in_order(&self.waiting, starts, total, &cells.offset, |i| {
            visit(i, receivers[i]);
            donors[i]
        });
        self.receivers = links;
    }
}
