//! Where water goes: D8 receivers (O'Callaghan & Mark 1984), flats
//! routed to where they spill, the stack of Braun & Willett (2013) (every receiver before its
//! donors) and the drainage area. Closed depressions are in [`super::depressions`].

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use super::neighbours::{OPPOSITE, diagonal, direction_to, neighbour_on, offsets};

/// A cell's kind, fixed for the run.
pub const ACTIVE: u8 = 0;
/// A cell held at base level: an open map edge, or beside a nodata hole.
pub const BASE: u8 = 1;
/// A nodata cell: outside the domain.
pub const OUTSIDE: u8 = 2;
/// The direction of a cell that is its own receiver (an outlet, a pit, outside).
pub const NO_DIRECTION: u8 = 8;

/// The grid's geometry as routing needs it.
#[derive(Clone, Debug)]
pub struct Cells {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// [`ACTIVE`], [`BASE`] or [`OUTSIDE`] per cell.
    pub kind: Vec<u8>,
    /// Distance to the neighbour in each direction of [`STEPS`](super::neighbours::STEPS), m.
    pub distance: [f64; 8],
    /// Its inverse, 1/m.
    pub inverse_distance: [f64; 8],
    /// Cells at or below it are sea (base level), m.
    pub sea_level: f64,
    /// For each cell, a bit per direction of [`STEPS`](super::neighbours::STEPS) whose neighbour is on the map and inside
    /// the domain.
    pub around: Vec<u8>,
    /// Index step to the neighbour in each direction.
    pub offset: [isize; 8],
    /// For each row, whether every cell of it but the first and last has all eight neighbours
    /// inside the domain (the fast path of the receivers).
    pub whole_row: Vec<bool>,
}

impl Cells {
    /// The neighbour of `i` in direction `k`, if on the map.
    #[inline]
    pub fn neighbour(&self, i: usize, k: usize) -> Option<usize> {
        neighbour_on(self.width, self.height, i, k)
    }

    /// The grid's geometry: `kind` per cell, distances in metres.
    pub fn new(width: usize, height: usize, kind: Vec<u8>, distance: [f64; 8], sea_level: f64) -> Self {
        let offset = offsets(width);
        let mut cells = Self {
            width,
            height,
            kind,
            distance,
            inverse_distance: distance.map(|d| 1.0 / d),
            sea_level,
            around: Vec::new(),
            offset,
            whole_row: Vec::new(),
        };
        cells.around = (0..width * height)
            .into_par_iter()
            .map(|i| {
                let mut bits = 0u8;
                for k in 0..8 {
                    if cells.neighbour(i, k).is_some_and(|j| cells.kind[j] != OUTSIDE) {
                        bits |= 1 << k;
                    }
                }
                bits
            })
            .collect();
        cells.whole_row = (0..height)
            .map(|r| width >= 3 && (r * width + 1..(r + 1) * width - 1).all(|i| cells.around[i] == 0xff))
            .collect();
        cells
    }

    /// Calls `f(k, j)` for each neighbour `j` of `i` inside the domain, `k` its direction.
    #[inline]
    pub fn each_neighbour(&self, i: usize, mut f: impl FnMut(usize, usize)) {
        let m = self.around[i];
        for k in 0..8 {
            if m & (1 << k) != 0 {
                f(k, (i as isize + self.offset[k]) as usize);
            }
        }
    }

    /// Whether cell `i` is stuck: above base level with no lower neighbour (`direction`).
    #[inline]
    pub(super) fn stuck(&self, i: usize, z: f64, direction: u8) -> bool {
        direction == NO_DIRECTION && self.kind[i] == ACTIVE && z > self.sea_level
    }

    /// Whether cell `i` (height `z`) is base level this step: an open edge, beside nodata, or sea.
    #[inline]
    pub fn is_base(&self, i: usize, z: f64) -> bool {
        self.kind[i] == BASE || (self.kind[i] == ACTIVE && z <= self.sea_level)
    }
}

/// The routing of one step, and the scratch it is built in.
#[derive(Debug, Default)]
pub struct Routing {
    /// The cell each cell drains to (itself for outlets, unresolved pits and nodata).
    pub receiver: Vec<u32>,
    /// The direction of [`STEPS`](super::neighbours::STEPS) to the receiver, or [`NO_DIRECTION`].
    pub direction: Vec<u8>,
    /// Cells inside the domain, every receiver before its donors (Braun & Willett's stack).
    pub stack: Vec<u32>,
    /// For each place in the stack, the place of its receiver (its own for a root).
    pub link: Vec<u32>,
    /// For each place in the stack, the cells that drain through it, itself included.
    area: Vec<u32>,
    /// The same for each cell (0 outside the domain).
    count: Vec<AtomicU32>,
    groups: Vec<usize>,
    /// Pits found before filling, this step.
    pub pits: usize,
    /// Cells left without a way out after filling (only in a domain with no base level).
    pub unresolved: usize,
    /// Pits whose lakes were flooded from the pit alone this step (the rest went to the basin
    /// graph).
    pub small_lakes: usize,
    /// The pits left after flats are merged, in index order.
    pub(super) pit_cells: Vec<u32>,
    pub(super) basins: super::depressions::Basins,
    pub(super) lakes: super::lakes::Lakes,
    pub(super) stuck: Vec<u32>,
    pub(super) queue: Vec<u32>,
    /// Per cell, a bit per direction of [`STEPS`](super::neighbours::STEPS) whose neighbour drains to it.
    pub(super) donors: Vec<u8>,
    /// Rho8 (Fairfield & Leymarie 1991): the key of this step's random diagonal factors; `None`
    /// for plain D8.
    pub rho8: Option<u64>,
}

/// Rho8's factor on cell `i`'s diagonal slopes in the step keyed `key`: `√2·ρ`, `ρ = 1/(2 − r)`
/// with `r` uniform in [0, 1) (Fairfield & Leymarie 1991). `ρ` is 1/√2 on average, a diagonal
/// step's D8 weight, so the factor is about 1 on average and 0.71 to 1.41 cell by cell.
#[inline]
fn rho8_factor(key: u64, i: usize) -> f64 {
    // one SplitMix64 output per cell (the keyed stream's two extra mixes cost ~10 % of a step)
    let r = crate::rng::SplitMix64::new(key ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)).next_f64();
    std::f64::consts::SQRT_2 / (2.0 - r)
}

impl Routing {
    /// Steepest-descent receivers of every cell (parallel over rows); returns the number of
    /// pits (cells above base level with no lower neighbour).
    pub fn receivers(&mut self, cells: &Cells, z: &[f64]) -> usize {
        let n = cells.width * cells.height;
        self.receiver.resize(n, 0);
        self.direction.resize(n, NO_DIRECTION);
        let w = cells.width;
        let rho8 = self.rho8;
        let one = |i: usize| match rho8 {
            Some(key) => steepest_scaled(cells, z, i, rho8_factor(key, i)),
            None => steepest(cells, z, i),
        };
        self.pits = self
            .receiver
            .par_chunks_mut(w)
            .zip(self.direction.par_chunks_mut(w))
            .enumerate()
            .map_init(SteepestRow::default, |scratch, (row, (rcv, dir))| {
                if !cells.whole_row[row] {
                    for c in 0..w {
                        (rcv[c], dir[c]) = one(row * w + c);
                    }
                } else {
                    (rcv[0], dir[0]) = one(row * w);
                    scratch.interior(cells, z, row, rcv, dir, rho8);
                    (rcv[w - 1], dir[w - 1]) = one(row * w + w - 1);
                }
                (row * w..(row + 1) * w)
                    .filter(|&i| dir[i - row * w] == NO_DIRECTION && cells.kind[i] == ACTIVE && z[i] > cells.sea_level)
                    .count()
            })
            .sum();
        self.pits
    }

    /// Raises every pit (a cell above base level with no lower neighbour) to its lowest
    /// neighbour, returning the raise summed over cells, m. Never above the pit's spill height
    /// (water leaves a pit no lower than over its lowest neighbour), so the fill that follows is
    /// the same; but a pit of one cell, most of a noisy start's, no longer needs a basin of its
    /// own. The receivers must be found again after it.
    pub fn raise_pits(&mut self, cells: &Cells, z: &mut [f64]) -> f64 {
        let w = cells.width;
        let direction = &self.direction;
        let zr: &[f64] = z;
        // new heights from the old ones, then applied: the same for any order of rows
        let raised: Vec<(u32, f64)> = (0..cells.height)
            .into_par_iter()
            .flat_map_iter(|row| {
                (row * w..(row + 1) * w).filter_map(|i| {
                    if !cells.stuck(i, zr[i], direction[i]) {
                        return None;
                    }
                    let mut lowest = f64::INFINITY;
                    cells.each_neighbour(i, |_, j| lowest = lowest.min(zr[j]));
                    (lowest.is_finite() && lowest > zr[i]).then_some((i as u32, lowest))
                })
            })
            .collect();
        let mut sum = 0.0;
        for &(i, h) in &raised {
            sum += h - z[i as usize];
            z[i as usize] = h;
        }
        sum
    }

    /// Gives every stuck cell (no lower neighbour) on a flat that spills a receiver of equal
    /// height, breadth-first from where the flat spills. With `merge`, every flat that does not
    /// spill then drains to its first cell, so each closed flat is one pit. Returns the stuck
    /// cells left (the pits).
    pub fn route_flats(&mut self, cells: &Cells, z: &[f64], merge: bool) -> usize {
        let mut stuck = std::mem::take(&mut self.stuck);
        stuck.clear();
        let direction = &self.direction;
        // rows in parallel, each row's stuck cells in order
        let w = cells.width;
        stuck.par_extend(direction.par_chunks(w).enumerate().flat_map_iter(|(row, dir)| {
            dir.iter()
                .enumerate()
                .filter(move |&(c, &d)| d == NO_DIRECTION && cells.stuck(row * w + c, z[row * w + c], d))
                .map(move |(c, _)| (row * w + c) as u32)
        }));
        self.stuck = stuck;
        self.route_stuck(cells, z, merge)
    }

    /// [`Routing::route_flats`] for the stuck cells in `self.stuck` (in index order).
    pub(super) fn route_stuck(&mut self, cells: &Cells, z: &[f64], merge: bool) -> usize {
        let stuck = std::mem::take(&mut self.stuck);
        self.queue.clear();
        let mut levels: Vec<f64> = Vec::new();
        let (receiver, direction, queue) = (&mut self.receiver, &mut self.direction, &mut self.queue);
        // seeds: stuck cells beside a cell of the same height that drained before this pass
        // (found first, then routed, so no seed drains to another)
        let zr: &[f64] = z;
        let seeds: Vec<(u32, u32, u8)> = stuck
            .iter()
            .filter_map(|&i| {
                let i = i as usize;
                let mut found = None;
                cells.each_neighbour(i, |k, j| {
                    if found.is_none()
                        && cells.kind[j] != OUTSIDE
                        && zr[j] == zr[i]
                        && !cells.stuck(j, zr[j], direction[j])
                    {
                        found = Some((i as u32, j as u32, k as u8));
                    }
                });
                found
            })
            .collect();
        for &(i, j, k) in &seeds {
            receiver[i as usize] = j;
            direction[i as usize] = k;
            queue.push(i);
            levels.push(z[i as usize]);
        }
        spread(cells, Flat { queue, levels: &mut levels, receiver, direction }, z, 0);
        let mut left = 0;
        if merge {
            self.pit_cells.clear();
        }
        for &i in &stuck {
            let i = i as usize;
            if !cells.stuck(i, z[i], direction[i]) || receiver[i] as usize != i {
                continue;
            }
            left += 1;
            if merge {
                self.pit_cells.push(i as u32);
                let head = queue.len();
                queue.push(i as u32);
                levels.push(z[i]);
                // mark the pit itself as taken: it stays its own receiver
                direction[i] = PIT;
                spread(cells, Flat { queue, levels: &mut levels, receiver, direction }, z, head);
                direction[i] = NO_DIRECTION;
            }
        }
        self.stuck = stuck;
        left
    }

    /// Carves a filled lake's way out (Cordonnier, Bovy & Braun 2019): each cell of `way` (from
    /// the lake's edge to its pit) drains to the one before it, the first to `outer`.
    pub(super) fn carve(&mut self, cells: &Cells, outer: usize, way: &[u32]) {
        let mut to = outer;
        for &c in way {
            let c = c as usize;
            self.receiver[c] = to as u32;
            self.direction[c] = direction_to(cells.width, c, to).unwrap_or(NO_DIRECTION);
            to = c;
        }
    }

    /// Builds the stack from the receivers: each root's tree (roots in index order) breadth-first
    /// from the root, trees in groups that run in parallel (a tree never spans two groups); with
    /// `links`, each place's [`Routing::link`] too (what [`Routing::accumulate`] and the stream
    /// power's implicit erosion walk; a graph only read in the stack's order leaves them out).
    pub fn build_stack(&mut self, cells: &Cells, links: bool) {
        let w = cells.width;
        let direction = &self.direction;
        let roots: Vec<u32> = (0..cells.height)
            .into_par_iter()
            .flat_map_iter(|row| {
                (row * w..(row + 1) * w)
                    .filter(|&i| direction[i] == NO_DIRECTION && cells.kind[i] != OUTSIDE)
                    .map(|i| i as u32)
            })
            .collect();
        donor_masks(cells, &self.direction, &mut self.donors);
        collect_trees(
            cells,
            &self.donors,
            &roots,
            Trees {
                cells: &mut self.stack,
                groups: &mut self.groups,
                ranges: None,
                links: if links { Some(&mut self.link) } else { None },
            },
        );
        if !links {
            self.link = Vec::new();
        }
    }

    /// Where the stack's groups start, and its end: runs of whole trees, independent of each
    /// other.
    pub fn group_bounds(&self) -> &[usize] {
        &self.groups
    }

    /// Cells that drain through each place of the stack (each group in reverse stack order:
    /// donors first), then through each cell.
    pub fn accumulate(&mut self) {
        self.area.clear();
        self.area.resize(self.stack.len(), 1);
        let n = self.receiver.len();
        if self.count.len() != n {
            self.count = (0..n).map(|_| AtomicU32::new(0)).collect();
        }
        let (link, stack, count) = (&self.link, &self.stack, &self.count);
        split_groups(&self.groups, &mut self.area).into_par_iter().for_each(|(start, area)| {
            for p in (0..area.len()).rev() {
                let r = link[start + p] as usize - start;
                if r != p {
                    area[r] += area[p];
                }
            }
            for (p, &a) in area.iter().enumerate() {
                count[stack[start + p] as usize].store(a, Ordering::Relaxed);
            }
        });
    }

    /// Cells that drain through the stack's place `p`, itself included.
    #[inline]
    pub fn area_at(&self, p: usize) -> u32 {
        self.area[p]
    }

    /// Cells that drain through cell `i`, itself included (0 outside the domain).
    #[inline]
    pub fn count(&self, i: usize) -> u32 {
        self.count[i].load(Ordering::Relaxed)
    }
}

/// `data` (one item per place of the stack) cut at the groups' bounds: each group's start and
/// its part, to be worked on in parallel.
pub fn split_groups<'a, T>(groups: &[usize], mut data: &'a mut [T]) -> Vec<(usize, &'a mut [T])> {
    let mut parts = Vec::with_capacity(groups.len());
    for g in groups.windows(2) {
        let (part, rest) = data.split_at_mut(g[1] - g[0]);
        parts.push((g[0], part));
        data = rest;
    }
    parts
}

/// One group's trees: their cells, each tree's range among them, each cell's link.
type GroupTrees = (Vec<u32>, Vec<(u32, u32)>, Vec<u32>);

/// Where [`collect_trees`] writes: the trees' cells, each group's start (and the end), and
/// optionally each tree's range among the cells and each cell's link (the place of its
/// receiver among them).
pub(super) struct Trees<'a> {
    pub cells: &'a mut Vec<u32>,
    pub groups: &'a mut Vec<usize>,
    pub ranges: Option<&'a mut Vec<(u32, u32)>>,
    pub links: Option<&'a mut Vec<u32>>,
}

/// Each root's tree (the cells that drain to it, following the [`donor_masks`]), breadth-first
/// from the root, in order of `roots`; the roots are split into [`GROUPS`] runs whose trees are found in
/// parallel, so each group holds whole trees.
pub(super) fn collect_trees(cells: &Cells, donors: &[u8], roots: &[u32], into: Trees<'_>) {
    let per_group = roots.len().div_ceil(GROUPS).max(1);
    let want_ranges = into.ranges.is_some();
    let want_links = into.links.is_some();
    let trees: Vec<GroupTrees> = roots
        .par_chunks(per_group)
        .map(|rs| {
            let mut out: Vec<u32> = Vec::new();
            let mut ranges = Vec::new();
            let mut links = Vec::new();
            for &root in rs {
                let start = out.len();
                out.push(root);
                if want_links {
                    links.push(start as u32);
                }
                let mut head = start;
                while head < out.len() {
                    let c = out[head] as usize;
                    let mut m = donors[c];
                    while m != 0 {
                        let k = m.trailing_zeros() as usize;
                        m &= m - 1;
                        out.push((c as isize + cells.offset[k]) as u32);
                        if want_links {
                            links.push(head as u32);
                        }
                    }
                    head += 1;
                }
                if want_ranges {
                    ranges.push((start as u32, out.len() as u32));
                }
            }
            (out, ranges, links)
        })
        .collect();
    into.cells.clear();
    into.groups.clear();
    let mut all_ranges = into.ranges;
    if let Some(r) = all_ranges.as_deref_mut() {
        r.clear();
    }
    let mut all_links = into.links;
    if let Some(l) = all_links.as_deref_mut() {
        l.clear();
    }
    // each group's trees let go as they are copied, into room made once: the stack's peak is
    // about one copy of it, not two and the doublings of growing ones
    let total: usize = trees.iter().map(|t| t.0.len()).sum();
    into.cells.reserve_exact(total);
    if let Some(l) = all_links.as_deref_mut() {
        l.reserve_exact(total);
    }
    for (tree, ranges, links) in trees {
        let at = into.cells.len() as u32;
        into.groups.push(into.cells.len());
        into.cells.extend_from_slice(&tree);
        drop(tree);
        if let Some(r) = all_ranges.as_deref_mut() {
            r.extend(ranges.iter().map(|&(s, e)| (at + s, at + e)));
        }
        if let Some(l) = all_links.as_deref_mut() {
            l.extend(links.iter().map(|&p| at + p));
        }
    }
    into.groups.push(into.cells.len());
}

/// Each cell's donors from `direction`: bit `k` set when the neighbour in direction `k` drains
/// to it. Rows in parallel; interior rows a direction at a time over the row (the compiler
/// vectorises it).
pub(super) fn donor_masks(cells: &Cells, direction: &[u8], donors: &mut Vec<u8>) {
    let w = cells.width;
    donors.resize(direction.len(), 0);
    donors.par_chunks_mut(w).enumerate().for_each(|(row, out)| {
        let scalar = |i: usize| {
            let mut m = 0u8;
            cells.each_neighbour(i, |k, j| m |= u8::from(direction[j] == OPPOSITE[k]) << k);
            m
        };
        if !cells.whole_row[row] {
            for (c, o) in out.iter_mut().enumerate() {
                *o = scalar(row * w + c);
            }
            return;
        }
        out[0] = scalar(row * w);
        out[w - 1] = scalar(row * w + w - 1);
        let (start, len) = (row * w + 1, w - 2);
        let inner = &mut out[1..w - 1];
        inner.fill(0);
        for (k, (&offset, &want)) in cells.offset.iter().zip(&OPPOSITE).enumerate() {
            let other = &direction[(start as isize + offset) as usize..][..len];
            for (o, &d) in inner.iter_mut().zip(other) {
                *o |= u8::from(d == want) << k;
            }
        }
    });
}

/// Groups the stack's trees are split into for the parallel passes (a fixed number, so sums
/// over groups come out the same on any thread count).
pub(super) const GROUPS: usize = 1024;

/// The breadth-first search over a flat: its queue (cells and the flat's height) and the
/// routing it writes.
struct Flat<'a> {
    queue: &'a mut Vec<u32>,
    levels: &'a mut Vec<f64>,
    receiver: &'a mut [u32],
    direction: &'a mut [u8],
}

/// Routes the stuck cells of each flat in `f.queue` from `head` on, breadth-first, each to the
/// cell it was reached from.
fn spread(cells: &Cells, f: Flat<'_>, z: &[f64], mut head: usize) {
    while head < f.queue.len() {
        let i = f.queue[head] as usize;
        let level = f.levels[head];
        head += 1;
        cells.each_neighbour(i, |k, j| {
            if z[j] == level && cells.stuck(j, z[j], f.direction[j]) {
                f.receiver[j] = i as u32;
                f.direction[j] = OPPOSITE[k];
                f.queue.push(j as u32);
                f.levels.push(level);
            }
        });
    }
}

/// Height a cell not above the cell it drains to (on a filled lake's surface) is set above it
/// after incision, m: every step ends on a surface that drains, so a lake is routed once, and
/// the slope it makes (1e-8 over 100 m cells) is below what `erode analyze` counts as slope.
pub const FLAT_GRADIENT: f64 = 1e-6;

/// A stuck cell's direction while its flat is being merged into it (never left in place).
const PIT: u8 = 9;

/// Scratch of [`SteepestRow::interior`]: the steepest slope and its direction per column.
#[derive(Default)]
struct SteepestRow {
    slope: Vec<f64>,
    direction: Vec<f64>,
    factor: Vec<f64>,
}

impl SteepestRow {
    /// [`steepest`] for the columns `1..w-1` of an interior row, direction by direction over
    /// the whole row (no branch per neighbour, so the compiler vectorises it); the same
    /// receivers as [`steepest`], ties to the first direction.
    fn interior(&mut self, cells: &Cells, z: &[f64], row: usize, rcv: &mut [u32], dir: &mut [u8], rho8: Option<u64>) {
        let w = cells.width;
        let (start, len) = (row * w + 1, w - 2);
        self.slope.clear();
        self.slope.resize(len, 0.0);
        self.direction.clear();
        self.direction.resize(len, f64::from(NO_DIRECTION));
        // Rho8's diagonal factors of the row's cells (none for D8, whose slopes stay as they were)
        self.factor.clear();
        if let Some(key) = rho8 {
            self.factor.extend((start..start + len).map(|i| rho8_factor(key, i)));
        }
        let centre = &z[start..start + len];
        for k in 0..8 {
            let from = (start as isize + cells.offset[k]) as usize;
            let other = &z[from..from + len];
            let inverse = cells.inverse_distance[k];
            let (slope, direction) = (&mut self.slope[..len], &mut self.direction[..len]);
            let kf = (k as f64).to_bits();
            // a select by mask, not a branch: the same in every lane
            let mut take = |c: usize, s: f64| {
                let keep = u64::from(s <= slope[c] || s.is_nan()).wrapping_neg();
                slope[c] = f64::from_bits((slope[c].to_bits() & keep) | (s.to_bits() & !keep));
                direction[c] = f64::from_bits((direction[c].to_bits() & keep) | (kf & !keep));
            };
            if diagonal(k) && rho8.is_some() {
                let factor = &self.factor[..len];
                for c in 0..len {
                    take(c, (centre[c] - other[c]) * inverse * factor[c]);
                }
            } else {
                for c in 0..len {
                    take(c, (centre[c] - other[c]) * inverse);
                }
            }
        }
        for c in 0..len {
            let i = start + c;
            let d =
                if cells.kind[i] != ACTIVE || z[i] <= cells.sea_level { NO_DIRECTION } else { self.direction[c] as u8 };
            dir[c + 1] = d;
            rcv[c + 1] = if d == NO_DIRECTION { i as u32 } else { (i as isize + cells.offset[d as usize]) as u32 };
        }
    }
}

/// [`steepest`] with the diagonal slopes times `factor` (Rho8).
fn steepest_scaled(cells: &Cells, z: &[f64], i: usize, factor: f64) -> (u32, u8) {
    let none = (i as u32, NO_DIRECTION);
    if cells.kind[i] != ACTIVE || z[i] <= cells.sea_level {
        return none;
    }
    let zi = z[i];
    let mut best = none;
    let mut steepest = 0.0;
    cells.each_neighbour(i, |k, j| {
        let s = (zi - z[j]) * cells.inverse_distance[k];
        let s = if diagonal(k) { s * factor } else { s };
        if s > steepest {
            steepest = s;
            best = (j as u32, k as u8);
        }
    });
    best
}

/// The steepest lower neighbour of cell `i` and its direction; itself and [`NO_DIRECTION`] for
/// base level, nodata and pits.
#[inline]
pub(super) fn steepest(cells: &Cells, z: &[f64], i: usize) -> (u32, u8) {
    // times 1 is exact: D8's slopes as they are
    steepest_scaled(cells, z, i, 1.0)
}
