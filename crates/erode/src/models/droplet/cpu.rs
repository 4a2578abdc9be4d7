//! The CPU droplet simulator. Every droplet changes the terrain in place as it goes, as in Beyer's,
//! and sees what the droplets before it (and itself) changed.
//!
//! Parallel and deterministic by keeping droplets apart: a droplet of lifetime `L` and brush
//! radius `r` never touches a row more than `reach = L + ⌈r⌉ + 2` rows from where it started. A
//! batch of droplets is split by the band of rows each starts in, bands at least `2·reach` tall;
//! the droplets of the even bands run (each band's in droplet order, the bands in parallel), then
//! those of the odd bands. Bands of one parity are more than `2·reach` apart, so their droplets
//! never touch the same cell: each band's task owns its rows plus `reach` on either side, and
//! the result does not depend on the number of threads. The band layout depends only on the map
//! and the parameters. A map shorter than eight reaches (or wrapping) runs its droplets strictly
//! in order, one after the other.

// Brush loops index several slices by the same cell.
#![allow(clippy::needless_range_loop)]

use rayon::prelude::*;

use super::brush::{Brush, MAX_AMOUNT, Plane, WEIGHT_UNITS, floor_i, quanta_f};
use super::params::{Border, NodataBorder, Params, StepRule};
use super::state::{Books, QUANTA_PER_METRE, State};
use crate::error::SimError;
use crate::rng::SplitMix64;

/// The rows a droplet may change: the state's fields from row `first_row` on (the whole map, or
/// a band's rows and reach). Cells are addressed by their index in the whole map.
struct Ground<'a> {
    terrain: &'a mut [f32],
    eroded: &'a mut [f32],
    deposited: &'a mut [f32],
    flow: &'a mut [f32],
    /// Index of the first cell held.
    base: usize,
}

impl Ground<'_> {
    #[inline]
    fn height(&self, i: usize) -> f32 {
        self.terrain[i - self.base]
    }
    /// Removes up to `want` metres (its erodibility's share, above the floor) from cell `i`;
    /// returns the quanta the height lost.
    #[inline]
    fn erode(&mut self, i: usize, want: f64, erodibility: f64, floor: f64) -> i64 {
        let i = i - self.base;
        super::brush::erode_cell(want, erodibility, &mut self.terrain[i], &mut self.eroded[i], floor) as i64
    }
    #[inline]
    fn deposit(&mut self, i: usize, q: i64) {
        let (i, m) = (i - self.base, q as f64 / QUANTA_PER_METRE);
        self.terrain[i] = (f64::from(self.terrain[i]) + m) as f32;
        self.deposited[i] += m as f32;
    }
    #[inline]
    fn visit(&mut self, i: usize) {
        self.flow[i - self.base] += 1.0;
    }
}

/// What one step of a droplet did, for tests and tools that watch droplets (see
/// [`CpuSim::run_traced`]). Positions in cells, heights in metres (bilinear samples).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepRecord {
    /// Position before the step.
    pub from: (f64, f64),
    /// Position after the step.
    pub to: (f64, f64),
    /// Height at `from` before the step's change.
    pub h_from: f64,
    /// Height at `to` before the step's change.
    pub h_to: f64,
    /// Height at `from` after it.
    pub h_from_after: f64,
    /// Height at `to` after it.
    pub h_to_after: f64,
    /// What the droplet did.
    pub kind: StepKind,
    /// How much it eroded or deposited, m (of height, summed over the cells).
    pub amount: f64,
}

/// What a droplet did in one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// Eroded through the brush (downhill, below capacity).
    Erode,
    /// Deposited going uphill.
    DepositUphill,
    /// Deposited its excess over capacity (downhill).
    DepositExcess,
}

/// Watches steps; `()` watches nothing and costs nothing.
trait Observe {
    const ON: bool;
    fn step(&mut self, record: StepRecord);
}

impl Observe for () {
    const ON: bool = false;
    fn step(&mut self, _: StepRecord) {}
}

struct Watch<'a>(&'a mut dyn FnMut(&StepRecord));

impl Observe for Watch<'_> {
    const ON: bool = true;
    fn step(&mut self, record: StepRecord) {
        (self.0)(&record)
    }
}

/// Runs droplets on the CPU; identical results for any thread count.
pub struct CpuSim {
    params: Params,
    /// What a step does on this map.
    rule: StepRule,
    /// Cumulative rain per cell, when droplets start where it rains.
    spawn: Option<Vec<f64>>,
    /// The brush of the current erosion step (serial runs reuse it).
    brush: Brush,
    /// Each cell's share of the erosion it yields, from the state's hardness map (`None`: 1), 0
    /// in nodata cells.
    erodibility: Option<Vec<f32>>,
    /// The state's nodata cells (outside the domain), if any.
    outside: Option<Vec<bool>>,
    /// The state's ground beyond the edge.
    beyond: Vec<f32>,
}

/// The share of its erosion a cell of each hardness yields: `1 − H·(1 − rock_erodibility)`.
pub fn erodibility(hardness: &[f32], rock_erodibility: f64) -> Vec<f32> {
    let loss = 1.0 - rock_erodibility;
    hardness.iter().map(|&h| (1.0 - f64::from(h) * loss) as f32).collect()
}

/// Metres (>= 0) to quanta.
#[inline]
fn quanta(metres: f64) -> i64 {
    let m = if metres > 0.0 { metres } else { 0.0 };
    quanta_f(if m < MAX_AMOUNT { m } else { MAX_AMOUNT }) as i64
}

/// The map's geometry and the per-cell data the droplets read besides the heights.
struct Map<'a> {
    w: usize,
    rows: usize,
    wrap: bool,
    erodibility: Option<&'a [f32]>,
    floor: f64,
    /// Drainage area per droplet visit after `n` droplets is `visit_area / n`, over
    /// `discharge_area` (0 with `discharge_exponent` 0).
    visit_area: f64,
    /// Cells of the map, the least droplet count `visit_area` is divided by.
    cells: f64,
    /// Nodata cells (outside the domain), if any.
    outside: Option<&'a [bool]>,
    /// The ground one cell beyond the edge (`State::beyond`).
    beyond: &'a [f32],
}

impl Map<'_> {
    #[inline]
    fn index(&self, x: isize, y: isize) -> usize {
        let (w, h) = (self.w as isize, self.rows as isize);
        let (x, y) = if self.wrap {
            (if x < 0 || x >= w { x.rem_euclid(w) } else { x }, if y < 0 || y >= h { y.rem_euclid(h) } else { y })
        } else {
            (x.clamp(0, w - 1), y.clamp(0, h - 1))
        };
        y as usize * self.w + x as usize
    }

    /// The 4 corner cells around `(x, y)` and the position within them.
    #[inline(always)]
    fn corners(&self, x: f64, y: f64) -> ([usize; 4], f64, f64) {
        let (ix, iy) = (floor_i(x), floor_i(y));
        let (u, v) = (x - ix as f64, y - iy as f64);
        let inside = ix >= 0 && iy >= 0 && (ix as usize) + 1 < self.w && (iy as usize) + 1 < self.rows;
        let c = if inside {
            let i = iy as usize * self.w + ix as usize;
            [i, i + 1, i + self.w, i + self.w + 1]
        } else {
            [self.index(ix, iy), self.index(ix + 1, iy), self.index(ix, iy + 1), self.index(ix + 1, iy + 1)]
        };
        (c, u, v)
    }

    /// Bilinear height and gradient at `(x, y)` cells.
    #[inline(always)]
    fn sample(&self, g: &Ground<'_>, x: f64, y: f64) -> (f64, f64, f64) {
        let ([a, b, c, d], u, v) = self.corners(x, y);
        let (h00, h10, h01, h11) =
            (f64::from(g.height(a)), f64::from(g.height(b)), f64::from(g.height(c)), f64::from(g.height(d)));
        let gx = (h10 - h00) * (1.0 - v) + (h11 - h01) * v;
        let gy = (h01 - h00) * (1.0 - u) + (h11 - h10) * u;
        let height = h00 * (1.0 - u) * (1.0 - v) + h10 * u * (1.0 - v) + h01 * (1.0 - u) * v + h11 * u * v;
        (height, gx, gy)
    }

    /// The bilinear height at `(x, y)`, up to one cell beyond the edge, where it reads the ground
    /// beyond (`State::beyond`): where a droplet leaving an open edge goes.
    fn sample_beyond(&self, g: &Ground<'_>, x: f64, y: f64) -> f64 {
        let (ix, iy) = (floor_i(x), floor_i(y));
        let (u, v) = (x - ix as f64, y - iy as f64);
        let z = |cx: isize, cy: isize| -> f64 {
            match super::state::beyond_index(self.w, self.rows, cx, cy) {
                Some(k) => f64::from(self.beyond[k]),
                None => f64::from(g.height(self.index(cx, cy))),
            }
        };
        z(ix, iy) * (1.0 - u) * (1.0 - v)
            + z(ix + 1, iy) * u * (1.0 - v)
            + z(ix, iy + 1) * (1.0 - u) * v
            + z(ix + 1, iy + 1) * u * v
    }

    /// Whether the bilinear sample at `(x, y)` would read a nodata cell.
    #[inline]
    fn touches_hole(&self, x: f64, y: f64) -> bool {
        self.outside.is_some_and(|m| self.corners(x, y).0.iter().any(|&i| m[i]))
    }

    /// The share of its erosion cell `i` yields.
    #[inline]
    fn erodibility(&self, i: usize) -> f64 {
        self.erodibility.map_or(1.0, |r| f64::from(r[i]))
    }
}

/// The cumulative rain per cell (where droplets start; none in nodata cells), or `None` for
/// uniform.
fn spawn_table(st: &State) -> Option<Vec<f64>> {
    if st.rain.is_none() && st.nodata.is_none() {
        return None;
    }
    let mut total = 0.0;
    Some(
        (0..st.terrain.len())
            .map(|i| {
                if !st.nodata.as_ref().is_some_and(|m| m[i]) {
                    total += st.rain.as_ref().map_or(1.0, |r| f64::from(r[i]));
                }
                total
            })
            .collect(),
    )
}

impl CpuSim {
    /// A simulator for `state` with `params` (validated here). The map needs at least 2 x 2 cells.
    pub fn new(params: Params, state: &State) -> Result<Self, SimError> {
        let rule = params.step_rule(state.cell_size)?;
        if state.width < 2 || state.height < 2 {
            return Err(crate::error::GridError::TooSmall { width: state.width, height: state.height, min: 2 }.into());
        }
        let spawn = spawn_table(state);
        if spawn.as_ref().is_some_and(|s| s.last().is_none_or(|&t| t <= 0.0)) {
            return Err(SimError::NoRain);
        }
        let mut erodibility = state.hardness.as_deref().map(|h| erodibility(h, params.rock_erodibility));
        if let Some(mask) = &state.nodata {
            // the brush leaves nodata cells as they are
            let e = erodibility.get_or_insert_with(|| vec![1.0; mask.len()]);
            e.iter_mut().zip(mask).filter(|(_, o)| **o).for_each(|(e, _)| *e = 0.0);
        }
        let outside = state.nodata.clone();
        let beyond = state.ground_beyond();
        Ok(Self { params, rule, spawn, brush: Brush::default(), erodibility, outside, beyond })
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// What one step does on this map (the parameters in cells and shares per step).
    pub fn rule(&self) -> &StepRule {
        &self.rule
    }

    /// Rows a droplet can reach from the row it starts in (see the module's text).
    pub fn reach(&self) -> usize {
        self.rule.steps as usize + self.rule.radius.ceil() as usize + 2
    }

    /// How many bands of rows a batch of droplets is split into on a map of `height` rows (1:
    /// the droplets run strictly one after the other).
    pub fn parallel_bands(&self, height: usize) -> usize {
        self.bands(height).map_or(1, |b| b.len() - 1)
    }

    /// The bands of rows a batch is split into (`bounds[k]..bounds[k + 1]`), or `None` when the
    /// map is too short (or wraps) for droplets of different bands to run at the same time.
    fn bands(&self, height: usize) -> Option<Vec<usize>> {
        let count = height / (2 * self.reach());
        if self.params.border == Border::Wrap || count < 4 || self.params.batch_size < 2 {
            return None;
        }
        Some((0..=count).map(|k| k * height / count).collect())
    }

    /// Runs `count` more droplets, calling `progress` with the droplets done so far now and then.
    /// Batches are aligned to multiples of `batch_size` counted from the first droplet, so
    /// stopping at a multiple of it and resuming gives the same result as a straight run.
    pub fn run(&mut self, st: &mut State, count: u64, progress: &mut dyn FnMut(u64)) {
        let batch = u64::from(self.params.batch_size);
        let end = st.droplets + count;
        let bands = self.bands(st.height);
        let mut before = Vec::new();
        while st.droplets < end {
            let batch_end = ((st.droplets / batch + 1) * batch).min(end);
            if self.params.smoothing > 0.0 {
                before.clone_from(&st.terrain);
            }
            match &bands {
                Some(bounds) => self.batch(st, st.droplets, batch_end, bounds),
                None => {
                    for index in st.droplets..batch_end {
                        self.serial(st, index, &mut ());
                    }
                }
            }
            if self.params.smoothing > 0.0 {
                let wrap = self.params.border == Border::Wrap;
                let holes = st.nodata.as_deref();
                super::smooth::smooth_change(&mut st.terrain, &before, st.width, wrap, self.params.smoothing, holes);
            }
            st.droplets = batch_end;
            progress(st.droplets);
        }
    }

    /// Runs the next droplet alone (as a strictly serial run would), calling `observe` after each
    /// of its steps.
    #[doc(hidden)]
    pub fn run_traced(&mut self, st: &mut State, observe: &mut dyn FnMut(&StepRecord)) {
        let index = st.droplets;
        self.serial(st, index, &mut Watch(observe));
        st.droplets += 1;
    }

    fn map<'a>(&'a self, st: &State) -> Map<'a> {
        Map {
            w: st.width,
            rows: st.height,
            wrap: self.params.border == Border::Wrap,
            erodibility: self.erodibility.as_deref(),
            floor: self.params.min_height,
            visit_area: self.visit_area(st),
            cells: (st.width * st.height) as f64,
            outside: self.outside.as_deref(),
            beyond: &self.beyond,
        }
    }

    /// A cell crossed by every droplet started on `n` cells, after `done` droplets, has been
    /// visited `n · done / cells` times: its drainage area is `visits · cells · cell area /
    /// done`. This is that over `discharge_area`, before dividing by `done`.
    fn visit_area(&self, st: &State) -> f64 {
        if self.params.discharge_exponent == 0.0 {
            return 0.0;
        }
        (st.width * st.height) as f64 * st.cell_size.area() / self.params.discharge_area
    }

    fn serial<O: Observe>(&mut self, st: &mut State, index: u64, observe: &mut O) {
        // the brush is lent out so the map can borrow the rest of `self`
        let mut brush = std::mem::take(&mut self.brush);
        let map = self.map(st);
        let mut ground = Ground {
            terrain: &mut st.terrain,
            eroded: &mut st.eroded,
            deposited: &mut st.deposited,
            flow: &mut st.flow,
            base: 0,
        };
        let b = life(&self.params, &self.rule, &map, self.spawn.as_deref(), &mut ground, index, &mut brush, observe);
        add_books(&mut st.books, &b);
        self.brush = brush;
    }

    /// Droplets `first..end`: grouped by the band they start in; the even bands' groups in
    /// parallel, then the odd bands'.
    fn batch(&mut self, st: &mut State, first: u64, end: u64, bounds: &[usize]) {
        let (w, h) = (st.width, st.height);
        let reach = self.reach();
        let bands = bounds.len() - 1;
        let mut groups: Vec<Vec<u64>> = vec![Vec::new(); bands];
        {
            let map = self.map(st);
            for index in first..end {
                let mut rng = SplitMix64::keyed(self.params.seed, index);
                let (_, y) = start(&mut rng, &map, self.spawn.as_deref());
                let row = (y as usize).min(h - 1);
                groups[bounds.partition_point(|&b| b <= row) - 1].push(index);
            }
        }
        let (p, rule, spawn) = (&self.params, &self.rule, self.spawn.as_deref());
        for parity in 0..2 {
            // each band of this parity owns its rows and `reach` rows on either side; those
            // stretches do not overlap (bands are at least 2·reach tall)
            let owned: Vec<(usize, usize, usize)> = (parity..bands)
                .step_by(2)
                .map(|k| (k, bounds[k].saturating_sub(reach), (bounds[k + 1] + reach).min(h)))
                .collect();
            let map = Map { wrap: false, ..self.map(st) };
            let mut fields = [&mut st.terrain[..], &mut st.eroded[..], &mut st.deposited[..], &mut st.flow[..]];
            let mut tasks: Vec<(usize, [&mut [f32]; 4], usize)> = Vec::with_capacity(owned.len());
            let mut done_rows = 0;
            for &(k, top, bottom) in &owned {
                let parts: [&mut [f32]; 4] = std::array::from_fn(|f| {
                    let field = std::mem::take(&mut fields[f]);
                    let (_, rest) = field.split_at_mut((top - done_rows) * w);
                    let (mine, rest) = rest.split_at_mut((bottom - top) * w);
                    fields[f] = rest;
                    mine
                });
                done_rows = bottom;
                tasks.push((k, parts, top * w));
            }
            let books: Vec<Books> = tasks
                .into_par_iter()
                .map_init(Brush::default, |brush, (k, [terrain, eroded, deposited, flow], base)| {
                    let mut ground = Ground { terrain, eroded, deposited, flow, base };
                    let mut total = Books::default();
                    for &index in &groups[k] {
                        add_books(&mut total, &life(p, rule, &map, spawn, &mut ground, index, brush, &mut ()));
                    }
                    total
                })
                .collect();
            for b in &books {
                add_books(&mut st.books, b);
            }
        }
    }
}

fn add_books(books: &mut Books, b: &Books) {
    books.eroded += b.eroded;
    books.deposited += b.deposited;
    books.outflow += b.outflow;
    books.steps += b.steps;
}

/// Adds `q` quanta at `(x, y)` split bilinearly over the 4 corners, the remainder to the
/// heaviest corner, so the sum is exact; a corner's part below the f32 resolution of its height
/// (which would round away) goes to the heaviest corner too. Returns `q`.
fn deposit(map: &Map<'_>, g: &mut Ground<'_>, x: f64, y: f64, q: i64) -> i64 {
    if q <= 0 {
        return 0;
    }
    let (cells, u, v) = map.corners(x, y);
    let weights = [(1.0 - u) * (1.0 - v), u * (1.0 - v), (1.0 - u) * v, u * v];
    let heaviest = (0..4).fold(0, |best, k| if weights[k] > weights[best] { k } else { best });
    let mut left = q;
    for k in 0..4 {
        if k == heaviest {
            continue;
        }
        let part = (((q as f64) * weights[k] + 0.5) as i64).min(left);
        let resolution = height_resolution(f64::from(g.height(cells[k]))) * QUANTA_PER_METRE;
        if part > 0 && part as f64 >= resolution {
            g.deposit(cells[k], part);
            left -= part;
        }
    }
    if left > 0 {
        g.deposit(cells[heaviest], left);
    }
    q
}

/// The spacing of f32 heights near `h`, m (its last digit).
#[inline]
fn height_resolution(h: f64) -> f64 {
    let h = (h as f32).abs().max(f32::MIN_POSITIVE);
    f64::from(f32::from_bits(h.to_bits() & 0x7f80_0000) * f32::EPSILON)
}

/// `Σ w²` of the bilinear weights at `(x, y)`: a change of `q` split by the weights moves the
/// height at `(x, y)` by `q·Σ w²`.
#[inline]
fn bilinear_self_weight(x: f64, y: f64) -> f64 {
    let (u, v) = (x - floor_i(x) as f64, y - floor_i(y) as f64);
    ((1.0 - u) * (1.0 - u) + u * u) * ((1.0 - v) * (1.0 - v) + v * v)
}

/// Removes up to `amount` metres through the circular brush of `radius` cells around `(x, y)`
/// (weights `max(0, radius − distance)`, normalised; each cell's share scaled by its erodibility),
/// no cell below the floor, and no more than lowers the droplet's own place by `drop` (so one
/// step never digs it below where it goes next). Returns the quanta removed.
#[allow(clippy::too_many_arguments)]
fn erode(
    map: &Map<'_>,
    g: &mut Ground<'_>,
    x: f64,
    y: f64,
    amount: f64,
    drop: f64,
    radius: f64,
    brush: &mut Brush,
) -> i64 {
    let plane = Plane { w: map.w, rows: map.rows, wrap: map.wrap };
    let total = if radius > 0.0 { brush.lay(plane, x, y, radius) } else { 0.0 };
    if total <= 0.0 {
        // radius 0 (or a brush with no cell inside): the 4 corners, bilinearly
        let amount = amount.min(drop / bilinear_self_weight(x, y));
        let (cells, u, v) = map.corners(x, y);
        let weights = [(1.0 - u) * (1.0 - v), u * (1.0 - v), (1.0 - u) * v, u * v];
        let mut removed = 0;
        for k in 0..4 {
            let i = cells[k];
            removed += g.erode(i, amount * weights[k], map.erodibility(i), map.floor);
        }
        return removed;
    }
    // the centre weighs `radius / total` of the brush (`total` in weight units)
    let amount = amount.min(drop * total / (radius * WEIGHT_UNITS));
    brush.erode(plane, g.terrain, g.eroded, g.base, amount / total, map.erodibility, map.floor)
}

/// Where droplet `index` starts: uniform over the map, or in proportion to the rain.
fn start(rng: &mut SplitMix64, map: &Map<'_>, spawn: Option<&[f64]>) -> (f64, f64) {
    let (w, h) = (map.w as f64, map.rows as f64);
    match spawn {
        None => (rng.next_f64() * (w - 1.0), rng.next_f64() * (h - 1.0)),
        Some(cdf) => {
            let total = cdf.last().copied().unwrap_or(0.0);
            let u = rng.next_f64() * total;
            let cell = cdf.partition_point(|&c| c <= u).min(cdf.len() - 1);
            let (col, row) = ((cell % map.w) as f64, (cell / map.w) as f64);
            // anywhere within the cell, kept where the bilinear sample has its 4 corners
            let x = (col + (rng.next_f64() - 0.5)).clamp(0.0, w - 1.0 - 1e-9);
            let y = (row + (rng.next_f64() - 0.5)).clamp(0.0, h - 1.0 - 1e-9);
            (x, y)
        }
    }
}

/// One droplet's life. Returns its books.
#[allow(clippy::too_many_arguments)]
fn life<O: Observe>(
    p: &Params,
    r: &StepRule,
    map: &Map<'_>,
    spawn: Option<&[f64]>,
    g: &mut Ground<'_>,
    index: u64,
    brush: &mut Brush,
    observe: &mut O,
) -> Books {
    let mut rng = SplitMix64::keyed(p.seed, index);
    let (w, h) = (map.w as f64, map.rows as f64);
    let (mut x, mut y) = start(&mut rng, map, spawn);
    let (mut dx, mut dy) = (0.0f64, 0.0f64);
    let (mut speed, mut water) = (r.initial_speed, 1.0);
    let mut sediment: i64 = 0;
    let mut books = Books::default();
    if map.touches_hole(x, y) {
        // rain beside a hole runs into it
        return books;
    }
    let mut alive_at_end = true;
    for _ in 0..r.steps {
        books.steps += 1;
        let (h_old, gx, gy) = map.sample(g, x, y);
        dx = dx * r.inertia - gx * (1.0 - r.inertia);
        dy = dy * r.inertia - gy * (1.0 - r.inertia);
        let len2 = dx * dx + dy * dy;
        if len2 < 1e-24 {
            let angle = rng.next_f64() * std::f64::consts::TAU;
            (dx, dy) = (angle.cos(), angle.sin());
        } else {
            let len = len2.sqrt();
            (dx, dy) = (dx / len, dy / len);
        }
        let (mut nx, mut ny) = (x + dx, y + dy);
        let outside = nx < 0.0 || ny < 0.0 || nx >= w - 1.0 || ny >= h - 1.0;
        // an open edge: the droplet takes this last step onto the ground beyond, then leaves
        let mut leaving = false;
        if outside {
            match p.border {
                Border::Open => leaving = true,
                Border::Closed => break,
                Border::Wrap => {
                    nx = nx.rem_euclid(w);
                    ny = ny.rem_euclid(h);
                }
            }
        }
        if !leaving && map.touches_hole(nx, ny) {
            match p.nodata_border {
                NodataBorder::Open => {
                    books.outflow += sediment;
                    sediment = 0;
                    alive_at_end = false;
                }
                NodataBorder::Closed => {}
            }
            break;
        }
        let h_new = if leaving { map.sample_beyond(g, nx, ny) } else { map.sample(g, nx, ny).0 };
        let dh = h_new - h_old;
        let carried = sediment as f64 / QUANTA_PER_METRE;
        let mut capacity = (-dh).max(r.min_drop) * speed * water * r.capacity;
        if map.visit_area > 0.0 {
            // droplet `index` has those before it to read (or fewer, running beside them in a
            // batch: then it reads less area, never more); until a quarter droplet per cell has
            // run, the count is taken as that many, so a few visits do not read as a river
            let ([cell, ..], _, _) = map.corners(x, y);
            let per_visit = map.visit_area / (index as f64).max(map.cells / 4.0);
            let area = f64::from(g.flow[cell - g.base]) * per_visit;
            capacity *= (1.0 + area).powf(p.discharge_exponent);
        }
        let (kind, moved) = if dh > 0.0 || carried > capacity {
            // uphill: fill the dip it leaves up to the height of the next place
            let amount = if dh > 0.0 {
                (dh / bilinear_self_weight(x, y)).min(carried)
            } else {
                (carried - capacity) * r.deposition
            };
            let mut q = quanta(amount.max(0.0)).clamp(0, sediment);
            if dh <= 0.0 && (q as f64) < 8.0 * height_resolution(h_old) * QUANTA_PER_METRE {
                // a share of the excess below the f32 heights' resolution here would round
                // away (and the books would count it): the droplet carries it on instead
                q = 0;
            }
            books.deposited += deposit(map, g, x, y, q);
            sediment -= q;
            (if dh > 0.0 { StepKind::DepositUphill } else { StepKind::DepositExcess }, q)
        } else {
            let amount = (capacity - carried) * r.erosion;
            let q = erode(map, g, x, y, amount, -dh, r.radius, brush);
            books.eroded += q;
            sediment += q;
            (StepKind::Erode, q)
        };
        if O::ON {
            observe.step(StepRecord {
                from: (x, y),
                to: (nx, ny),
                h_from: h_old,
                h_to: h_new,
                h_from_after: map.sample(g, x, y).0,
                h_to_after: if leaving { map.sample_beyond(g, nx, ny) } else { map.sample(g, nx, ny).0 },
                kind,
                amount: moved as f64 / QUANTA_PER_METRE,
            });
        }
        if leaving {
            books.outflow += sediment;
            sediment = 0;
            alive_at_end = false;
            break;
        }
        speed = ((speed * speed - dh * r.gravity) * r.speed_kept).max(0.0).sqrt();
        water *= 1.0 - r.evaporation;
        (x, y) = (nx, ny);
        let ([cell, ..], _, _) = map.corners(x, y);
        g.visit(cell);
    }
    if alive_at_end && sediment > 0 {
        // a droplet that dies (lifetime, closed edge) leaves its load where it is
        books.deposited += deposit(map, g, x, y, sediment);
    }
    books
}
