//! The CPU droplet simulator: batches of droplets in parallel against a terrain snapshot, their
//! changes merged as integer quanta.

use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};

use rayon::prelude::*;

use super::params::{DropletBorder, DropletParams};
use super::state::{DropletBooks, DropletState, QUANTA_PER_METRE};
use crate::error::SimError;
use crate::rng::SplitMix64;

/// Changes of one batch, as integer quanta per cell.
struct Deltas {
    height: Vec<AtomicI64>,
    eroded: Vec<AtomicI64>,
    deposited: Vec<AtomicI64>,
    visits: Vec<AtomicU32>,
}

/// Where a droplet's changes go: shared atomics for a parallel batch, plain integers for a
/// batch of one. Both add the same integers, so the results are identical.
trait Sink {
    fn height(&mut self, i: usize, q: i64);
    fn eroded(&mut self, i: usize, q: i64);
    fn deposited(&mut self, i: usize, q: i64);
    fn visit(&mut self, i: usize);
}

impl Sink for &Deltas {
    fn height(&mut self, i: usize, q: i64) {
        self.height[i].fetch_add(q, Ordering::Relaxed);
    }
    fn eroded(&mut self, i: usize, q: i64) {
        self.eroded[i].fetch_add(q, Ordering::Relaxed);
    }
    fn deposited(&mut self, i: usize, q: i64) {
        self.deposited[i].fetch_add(q, Ordering::Relaxed);
    }
    fn visit(&mut self, i: usize) {
        self.visits[i].fetch_add(1, Ordering::Relaxed);
    }
}

/// Exclusive access: plain adds through `get_mut`.
struct Plain<'a>(&'a mut Deltas);

impl Sink for Plain<'_> {
    fn height(&mut self, i: usize, q: i64) {
        *self.0.height[i].get_mut() += q;
    }
    fn eroded(&mut self, i: usize, q: i64) {
        *self.0.eroded[i].get_mut() += q;
    }
    fn deposited(&mut self, i: usize, q: i64) {
        *self.0.deposited[i].get_mut() += q;
    }
    fn visit(&mut self, i: usize) {
        *self.0.visits[i].get_mut() += 1;
    }
}

/// Runs droplets on the CPU; identical results for any thread count.
pub struct DropletSim {
    params: DropletParams,
    deltas: Deltas,
}

fn quanta(metres: f64) -> i64 {
    (metres * QUANTA_PER_METRE).round() as i64
}

/// The terrain snapshot a batch reads, with the map's geometry.
struct Terrain<'a> {
    h: &'a [f32],
    w: usize,
    rows: usize,
    wrap: bool,
}

impl Terrain<'_> {
    fn index(&self, x: isize, y: isize) -> usize {
        let (x, y) = if self.wrap {
            (x.rem_euclid(self.w as isize), y.rem_euclid(self.rows as isize))
        } else {
            (x.clamp(0, self.w as isize - 1), y.clamp(0, self.rows as isize - 1))
        };
        y as usize * self.w + x as usize
    }

    /// Bilinear height and gradient at `(x, y)` cells.
    fn sample(&self, x: f64, y: f64) -> (f64, f64, f64) {
        let (ix, iy) = (x.floor() as isize, y.floor() as isize);
        let (u, v) = (x - ix as f64, y - iy as f64);
        let at = |dx: isize, dy: isize| f64::from(self.h[self.index(ix + dx, iy + dy)]);
        let (h00, h10, h01, h11) = (at(0, 0), at(1, 0), at(0, 1), at(1, 1));
        let gx = (h10 - h00) * (1.0 - v) + (h11 - h01) * v;
        let gy = (h01 - h00) * (1.0 - u) + (h11 - h10) * u;
        let height = h00 * (1.0 - u) * (1.0 - v) + h10 * u * (1.0 - v) + h01 * (1.0 - u) * v + h11 * u * v;
        (height, gx, gy)
    }
}

impl DropletSim {
    /// A simulator for `state` with `params` (validated here). The map needs at least 2 x 2 cells.
    pub fn new(params: DropletParams, state: &DropletState) -> Result<Self, SimError> {
        params.validate()?;
        if state.width < 2 || state.height < 2 {
            return Err(crate::error::GridError::Empty { width: state.width, height: state.height }.into());
        }
        let n = state.width * state.height;
        let deltas = Deltas {
            height: (0..n).map(|_| AtomicI64::new(0)).collect(),
            eroded: (0..n).map(|_| AtomicI64::new(0)).collect(),
            deposited: (0..n).map(|_| AtomicI64::new(0)).collect(),
            visits: (0..n).map(|_| AtomicU32::new(0)).collect(),
        };
        Ok(Self { params, deltas })
    }

    /// The parameters.
    pub fn params(&self) -> &DropletParams {
        &self.params
    }

    /// Runs `count` more droplets. Batches are aligned to multiples of `batch_size` counted from
    /// the first droplet, so stopping at a multiple of it and resuming gives the same result as a
    /// straight run.
    pub fn run(&mut self, st: &mut DropletState, count: u64, progress: &mut dyn FnMut(u64)) {
        let batch = u64::from(self.params.batch_size);
        let end = st.droplets + count;
        while st.droplets < end {
            let batch_end = ((st.droplets / batch + 1) * batch).min(end);
            self.batch(st, st.droplets, batch_end);
            st.droplets = batch_end;
            progress(st.droplets);
        }
    }

    fn batch(&mut self, st: &mut DropletState, first: u64, end: u64) {
        let terrain =
            Terrain { h: &st.terrain, w: st.width, rows: st.height, wrap: self.params.border == DropletBorder::Wrap };
        let p = &self.params;
        let results: Vec<(DropletBooks, Vec<u32>)> = if end - first == 1 {
            vec![droplet(p, &terrain, &mut Plain(&mut self.deltas), first)]
        } else {
            let d = &self.deltas;
            (first..end).into_par_iter().map(|i| droplet(p, &terrain, &mut &*d, i)).collect()
        };
        let mut touched: Vec<u32> = Vec::new();
        for (b, cells) in results {
            touched.extend_from_slice(&cells);
            st.books.eroded += b.eroded;
            st.books.deposited += b.deposited;
            st.books.outflow += b.outflow;
            st.books.steps += b.steps;
        }
        // the batch is over: exclusive access, plain loads, only the cells the batch touched
        let to_m = |q: i64| (q as f64 / QUANTA_PER_METRE) as f32;
        let dl = &mut self.deltas;
        for i in touched {
            let i = i as usize;
            let qh = dl.height[i].get_mut();
            if *qh != 0 {
                st.terrain[i] = (f64::from(st.terrain[i]) + *qh as f64 / QUANTA_PER_METRE) as f32;
                *qh = 0;
            }
            let qe = dl.eroded[i].get_mut();
            if *qe != 0 {
                st.eroded[i] += to_m(*qe);
                *qe = 0;
            }
            let qd = dl.deposited[i].get_mut();
            if *qd != 0 {
                st.deposited[i] += to_m(*qd);
                *qd = 0;
            }
            let v = dl.visits[i].get_mut();
            if *v != 0 {
                st.flow[i] += *v as f32;
                *v = 0;
            }
        }
    }
}

/// Adds `q` quanta at `(x, y)` split bilinearly over the 4 corners (the remainder to the last,
/// so the sum is exact). Returns `q`.
fn deposit(t: &Terrain<'_>, d: &mut impl Sink, x: f64, y: f64, q: i64, touched: &mut Vec<u32>) -> i64 {
    if q <= 0 {
        return 0;
    }
    let (ix, iy) = (x.floor() as isize, y.floor() as isize);
    let (u, v) = (x - ix as f64, y - iy as f64);
    let weights = [(0, 0, (1.0 - u) * (1.0 - v)), (1, 0, u * (1.0 - v)), (0, 1, (1.0 - u) * v), (1, 1, u * v)];
    let mut left = q;
    for (k, &(dx, dy, wgt)) in weights.iter().enumerate() {
        let part = if k == 3 { left } else { ((q as f64) * wgt).round() as i64 };
        let part = part.min(left);
        left -= part;
        let i = t.index(ix + dx, iy + dy);
        d.height(i, part);
        d.deposited(i, part);
        touched.push(i as u32);
    }
    q
}

/// Removes up to `amount` metres through the circular brush around `(x, y)`, no cell below
/// `floor`. Returns the quanta removed.
#[allow(clippy::too_many_arguments)]
fn erode(
    t: &Terrain<'_>,
    d: &mut impl Sink,
    x: f64,
    y: f64,
    amount: f64,
    radius: f64,
    floor: f64,
    touched: &mut Vec<u32>,
) -> i64 {
    // the brush: cells within `radius` of the true position, weights computed once
    const MAX_CELLS: usize = 130 * 130;
    let (x0, x1) = ((x - radius).floor() as isize, (x + radius).ceil() as isize);
    let (y0, y1) = ((y - radius).floor() as isize, (y + radius).ceil() as isize);
    let in_map = |ix: isize, iy: isize| t.wrap || (ix >= 0 && iy >= 0 && ix < t.w as isize && iy < t.rows as isize);
    let mut cells: Vec<(usize, f64)> =
        Vec::with_capacity(((x1 - x0 + 1) * (y1 - y0 + 1)).clamp(1, MAX_CELLS as isize) as usize);
    let mut total = 0.0;
    for iy in y0..=y1 {
        for ix in x0..=x1 {
            let (dx, dy) = (ix as f64 - x, iy as f64 - y);
            let wgt = radius - (dx * dx + dy * dy).sqrt();
            if wgt > 0.0 && in_map(ix, iy) {
                cells.push((t.index(ix, iy), wgt));
                total += wgt;
            }
        }
    }
    let mut removed = 0i64;
    let mut take = |d: &mut dyn FnMut(usize, i64), i: usize, metres: f64| {
        let avail = (f64::from(t.h[i]) - floor).max(0.0);
        let q = if metres.is_finite() && metres > 0.0 { quanta(metres.min(avail)) } else { 0 };
        if q > 0 {
            d(i, q);
            touched.push(i as u32);
            removed += q;
        }
    };
    let mut apply = |i: usize, q: i64| {
        d.height(i, -q);
        d.eroded(i, q);
    };
    if total <= 0.0 {
        // radius 0 (or a brush with no cell inside): the 4 corners, bilinearly
        let (ix, iy) = (x.floor() as isize, y.floor() as isize);
        let (u, v) = (x - ix as f64, y - iy as f64);
        for (dx, dy, wgt) in
            [(0, 0, (1.0 - u) * (1.0 - v)), (1, 0, u * (1.0 - v)), (0, 1, (1.0 - u) * v), (1, 1, u * v)]
        {
            take(&mut apply, t.index(ix + dx, iy + dy), amount * wgt);
        }
        return removed;
    }
    for (i, wgt) in cells {
        take(&mut apply, i, amount * wgt / total);
    }
    removed
}

/// One droplet's life. Returns its books.
fn droplet(p: &DropletParams, t: &Terrain<'_>, d: &mut impl Sink, index: u64) -> (DropletBooks, Vec<u32>) {
    let mut touched = Vec::new();
    let mut rng = SplitMix64::keyed(p.seed, index);
    let (w, h) = (t.w as f64, t.rows as f64);
    let (mut x, mut y) = (rng.next_f64() * (w - 1.0), rng.next_f64() * (h - 1.0));
    let (mut dx, mut dy) = (0.0f64, 0.0f64);
    let (mut speed, mut water) = (p.initial_speed, p.initial_water);
    let mut sediment: i64 = 0;
    let mut books = DropletBooks::default();
    let mut alive_at_end = true;
    for _ in 0..p.max_lifetime {
        books.steps += 1;
        let (h_old, gx, gy) = t.sample(x, y);
        dx = dx * p.inertia - gx * (1.0 - p.inertia);
        dy = dy * p.inertia - gy * (1.0 - p.inertia);
        let len = dx.hypot(dy);
        if len < 1e-12 {
            let angle = rng.next_f64() * std::f64::consts::TAU;
            (dx, dy) = (angle.cos(), angle.sin());
        } else {
            (dx, dy) = (dx / len, dy / len);
        }
        let (mut nx, mut ny) = (x + dx, y + dy);
        let outside = nx < 0.0 || ny < 0.0 || nx >= w - 1.0 || ny >= h - 1.0;
        if outside {
            match p.border {
                DropletBorder::Open => {
                    books.outflow += sediment;
                    sediment = 0;
                    alive_at_end = false;
                    break;
                }
                DropletBorder::Closed => break,
                DropletBorder::Wrap => {
                    nx = nx.rem_euclid(w);
                    ny = ny.rem_euclid(h);
                }
            }
        }
        let (h_new, _, _) = t.sample(nx, ny);
        let dh = h_new - h_old;
        let carried = sediment as f64 / QUANTA_PER_METRE;
        let capacity = (-dh).max(p.min_slope) * speed * water * p.capacity;
        if dh > 0.0 || carried > capacity {
            let amount = if dh > 0.0 { dh.min(carried) } else { (carried - capacity) * p.deposition };
            let q = quanta(amount).clamp(0, sediment);
            books.deposited += deposit(t, d, x, y, q, &mut touched);
            sediment -= q;
        } else {
            let amount = ((capacity - carried) * p.erosion).min(-dh);
            let q = erode(t, d, x, y, amount, p.radius, p.min_height, &mut touched);
            books.eroded += q;
            sediment += q;
        }
        speed = (speed * speed - dh * p.gravity).max(0.0).sqrt();
        water *= 1.0 - p.evaporation;
        (x, y) = (nx, ny);
        let cell = t.index(x.floor() as isize, y.floor() as isize);
        d.visit(cell);
        touched.push(cell as u32);
    }
    if alive_at_end && sediment > 0 {
        // a droplet that dies (lifetime, closed edge) leaves its load where it is
        books.deposited += deposit(t, d, x, y, sediment, &mut touched);
    }
    (books, touched)
}
