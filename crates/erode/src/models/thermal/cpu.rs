//! The thermal model's two stages, each a pass over rows computed from the heights before the
//! iteration, so any thread count gives the same bits.

use std::time::{Duration, Instant};

use super::params::Params;
use super::state::State;
use crate::flow::Domain;
use crate::flow::neighbours::offsets;
use crate::par;

/// The stages of an iteration, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Each cell's share per metre of excess over its angle of repose.
    TalusFlux,
    /// Each cell's limit on what it receives.
    TalusLimit,
    /// Every cell loses what it sheds and gains what its higher neighbours shed onto it.
    TalusApply,
}

impl Stage {
    /// Every stage, in the order an iteration runs them.
    pub const ALL: [Stage; 3] = [Stage::TalusFlux, Stage::TalusLimit, Stage::TalusApply];

    /// Its name in timers and docs.
    pub fn name(self) -> &'static str {
        match self {
            Stage::TalusFlux => "talus_flux",
            Stage::TalusLimit => "talus_limit",
            Stage::TalusApply => "talus_apply",
        }
    }
}

/// The thermal model's simulator: scratch and timers only.
pub struct CpuSim {
    params: Params,
    /// Each cell's slope of repose (rise over run), from its hardness.
    repose: Vec<f64>,
    /// Each cell's share per metre of excess.
    share: Vec<f64>,
    /// The fraction of what its higher neighbours shed onto each cell that arrives.
    limit: Vec<f64>,
    /// The heights after the iteration.
    next: Vec<f64>,
    times: [Duration; 3],
}

impl CpuSim {
    /// A simulator of `params` (checked) for `st`.
    pub fn new(params: Params, st: &State) -> Result<Self, crate::SimError> {
        params.validate()?;
        let n = st.terrain.len();
        let repose = match &st.hardness {
            Some(h) => h.iter().map(|&h| params.repose_slope(h)).collect(),
            None => vec![params.repose_slope(0.0); n],
        };
        Ok(Self {
            params,
            repose,
            share: vec![0.0; n],
            limit: vec![0.0; n],
            next: vec![0.0; n],
            times: [Duration::ZERO; 3],
        })
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Wall time spent in each stage so far.
    pub fn stage_times(&self) -> Vec<(&'static str, Duration)> {
        Stage::ALL.iter().zip(self.times).map(|(s, t)| (s.name(), t)).collect()
    }

    /// One iteration: [`talus_flux`], [`talus_limit`], then [`talus_apply`].
    pub fn step(&mut self, st: &mut State) {
        let t = Instant::now();
        talus_flux(st, &self.repose, self.params.rate, &mut self.share);
        self.times[0] += t.elapsed();
        let t = Instant::now();
        talus_limit(st, &self.repose, &self.share, self.params.rate, &mut self.limit);
        self.times[1] += t.elapsed();
        let t = Instant::now();
        let [eroded, deposited] = talus_apply(st, &self.repose, &self.share, &self.limit, &mut self.next);
        std::mem::swap(&mut st.terrain, &mut self.next);
        let area = st.cell_size.x * st.cell_size.y;
        st.books.eroded += eroded * area;
        st.books.deposited += deposited * area;
        st.iterations += 1;
        self.times[2] += t.elapsed();
    }
}

fn domain(st: &State) -> Domain<'_> {
    Domain { width: st.width, height: st.height, cell: st.cell_size, nodata: st.nodata.as_deref() }
}

/// Calls `f(k, j)` for each neighbour `j` of cell `i` (row `r`, column `c`) inside the domain,
/// `k` its direction in [`crate::flow::neighbours::STEPS`]; `offsets` are those directions as
/// steps in the row-major index, which cells away from the map's edge take without checks.
#[inline(always)]
fn each_neighbour(d: &Domain, offsets: &[isize; 8], r: usize, c: usize, mut f: impl FnMut(usize, usize)) {
    let i = r * d.width + c;
    let interior = r > 0 && c > 0 && r + 1 < d.height && c + 1 < d.width;
    for (k, &o) in offsets.iter().enumerate() {
        let j = if interior { Some(i.wrapping_add_signed(o)) } else { d.neighbour(i, k) };
        if let Some(j) = j.filter(|&j| d.inside(j)) {
            f(k, j);
        }
    }
}

/// The excess of ground at `from` over its slope of repose `repose` towards ground at `to`,
/// `distance` metres away, m (positive where material slides). Sender and receiver call it with
/// the same values, so what leaves one cell arrives at the other bit for bit.
#[inline(always)]
fn excess(from: f64, to: f64, repose: f64, distance: f64) -> f64 {
    (from - to) - repose * distance
}

/// Stage 1, `talus_flux`: each cell sheds `rate` times its largest excess, shared among its
/// neighbours in the domain in proportion to their excess; `share` gets that amount per metre
/// of excess (0 where nothing slides).
pub fn talus_flux(st: &State, repose: &[f64], rate: f64, share: &mut [f64]) {
    let d = domain(st);
    let (dist, offsets) = (d.distances(), offsets(d.width));
    let z = &st.terrain;
    par::rows::<1, _, _>(&mut [share], st.width, |r, out| {
        let row = &mut out[0];
        for (c, s) in row.iter_mut().enumerate() {
            let i = r * st.width + c;
            let (mut biggest, mut total) = (0.0f64, 0.0f64);
            if d.inside(i) {
                each_neighbour(&d, &offsets, r, c, |k, j| {
                    let e = excess(z[i], z[j], repose[i], dist[k]);
                    if e > 0.0 {
                        total += e;
                        biggest = biggest.max(e);
                    }
                });
            }
            *s = if total > 0.0 { rate * biggest / total } else { 0.0 };
        }
        [0.0]
    });
}

/// Stage 2, `talus_limit`: the fraction of what its higher neighbours would shed onto each cell
/// that arrives: all of it, unless that is more than `rate` times the largest of their excesses
/// over it (what the steepest alone would shed), so a hollow fed from many sides fills towards
/// the angle of repose instead of past it (a flux limiter on the receiving side, as the virtual
/// pipes scale a cell's outflow to the water it holds).
pub fn talus_limit(st: &State, repose: &[f64], share: &[f64], rate: f64, limit: &mut [f64]) {
    let d = domain(st);
    let (dist, offsets) = (d.distances(), offsets(d.width));
    let z = &st.terrain;
    par::rows::<1, _, _>(&mut [limit], st.width, |r, out| {
        let row = &mut out[0];
        for (c, l) in row.iter_mut().enumerate() {
            let i = r * st.width + c;
            let (mut planned, mut steepest) = (0.0f64, 0.0f64);
            if d.inside(i) {
                each_neighbour(&d, &offsets, r, c, |k, j| {
                    let coming = excess(z[j], z[i], repose[j], dist[k]);
                    if coming > 0.0 {
                        planned += share[j] * coming;
                        steepest = steepest.max(coming);
                    }
                });
            }
            let most = rate * steepest;
            *l = if planned > most { most / planned } else { 1.0 };
        }
        [0.0]
    });
}

/// Stage 3, `talus_apply`: each cell's new height, less what it sheds to each lower neighbour
/// and plus what each higher one sheds onto it (both times the receiver's limit), recomputed
/// from the same heights with the same operations, so what leaves one cell arrives at the
/// other bit for bit. Returns (what left cells, what arrived), m of height summed over cells.
pub fn talus_apply(st: &State, repose: &[f64], share: &[f64], limit: &[f64], next: &mut [f64]) -> [f64; 2] {
    let d = domain(st);
    let (dist, offsets) = (d.distances(), offsets(d.width));
    let z = &st.terrain;
    par::rows::<2, _, _>(&mut [next], st.width, |r, out| {
        let row = &mut out[0];
        let (mut left, mut arrived) = (0.0f64, 0.0f64);
        for (c, n) in row.iter_mut().enumerate() {
            let i = r * st.width + c;
            if !d.inside(i) {
                *n = z[i];
                continue;
            }
            let (mut out_i, mut in_i) = (0.0f64, 0.0f64);
            each_neighbour(&d, &offsets, r, c, |k, j| {
                let leaving = excess(z[i], z[j], repose[i], dist[k]);
                if leaving > 0.0 {
                    out_i += limit[j] * (share[i] * leaving);
                }
                let coming = excess(z[j], z[i], repose[j], dist[k]);
                if coming > 0.0 {
                    in_i += limit[i] * (share[j] * coming);
                }
            });
            *n = z[i] - out_i + in_i;
            left += out_i;
            arrived += in_i;
        }
        [left, arrived]
    })
}
