//! Where water goes, for the stream-power model: D8 receivers (O'Callaghan & Mark 1984), closed
//! depressions filled through a basin graph (Cordonnier, Bovy & Braun 2019), the stack of Braun
//! & Willett (2013) (every receiver before its donors) and the drainage area.
//!
//! Depressions: each pit's basin (the cells draining to it) is a node of a graph whose edges are
//! the lowest passes between touching basins, with every outlet (open edge, sea, nodata hole)
//! merged into one node; its minimum spanning tree (Kruskal) holds each basin's way out, and the
//! highest pass on that way is the basin's spill height. Cells below it are filled to it (lakes
//! fill with sediment at once, booked as `filled`), and the flat water surface drains along a
//! breadth-first search towards where it spills (the incision then leaves each of its cells
//! [`FLAT_GRADIENT`] above the next, so the lake is routed once). The cost is one scan of the
//! rows for passes and a sort of them, only in steps with pits; the result is the fill of
//! Priority-Flood (Barnes et al. 2014) without its priority queue over every cell.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use crate::analysis::domain::{STEPS, neighbour_on};

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
    /// Distance to the neighbour in each direction of [`STEPS`], m.
    pub distance: [f64; 8],
    /// Its inverse, 1/m.
    pub inverse_distance: [f64; 8],
    /// Cells at or below it are sea (base level), m.
    pub sea_level: f64,
    /// For each cell, a bit per direction of [`STEPS`] whose neighbour is on the map and inside
    /// the domain.
    pub around: Vec<u8>,
    /// Index step to the neighbour in each direction.
    pub offset: [isize; 8],
}

impl Cells {
    /// The neighbour of `i` in direction `k`, if on the map.
    #[inline]
    pub fn neighbour(&self, i: usize, k: usize) -> Option<usize> {
        neighbour_on(self.width, self.height, i, k)
    }

    /// The grid's geometry: `kind` per cell, distances in metres.
    pub fn new(width: usize, height: usize, kind: Vec<u8>, distance: [f64; 8], sea_level: f64) -> Self {
        let offset = std::array::from_fn(|k| STEPS[k].0 * width as isize + STEPS[k].1);
        let mut cells = Self {
            width,
            height,
            kind,
            distance,
            inverse_distance: distance.map(|d| 1.0 / d),
            sea_level,
            around: Vec::new(),
            offset,
        };
        cells.around = (0..width * height)
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
    fn stuck(&self, i: usize, z: f64, direction: u8) -> bool {
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
    /// The direction of [`STEPS`] to the receiver, or [`NO_DIRECTION`].
    pub direction: Vec<u8>,
    /// Cells inside the domain, every receiver before its donors (Braun & Willett's stack).
    pub stack: Vec<u32>,
    count: Vec<AtomicU32>,
    groups: Vec<usize>,
    /// Pits found before filling, this step.
    pub pits: usize,
    /// Cells left without a way out after filling (only in a domain with no base level).
    pub unresolved: usize,
    basin: Vec<AtomicU32>,
    basin_ranges: Vec<(u32, u32)>,
    edges: Vec<Pass>,
    stuck: Vec<u32>,
    level: Vec<f64>,
    queue: Vec<u32>,
}

/// The lowest pass found between two basins.
#[derive(Clone, Copy, Debug)]
struct Pass {
    /// The pass height: the higher of the two cells, m.
    height: f64,
    /// The basins.
    a: u32,
    b: u32,
}

const NO_PASS: Pass = Pass { height: f64::INFINITY, a: 0, b: 0 };

impl Routing {
    /// Steepest-descent receivers of every cell (parallel over rows); returns the number of
    /// pits (cells above base level with no lower neighbour).
    pub fn receivers(&mut self, cells: &Cells, z: &[f64]) -> usize {
        let n = cells.width * cells.height;
        self.receiver.resize(n, 0);
        self.direction.resize(n, NO_DIRECTION);
        let w = cells.width;
        self.pits = self
            .receiver
            .par_chunks_mut(w)
            .zip(self.direction.par_chunks_mut(w))
            .enumerate()
            .map(|(row, (rcv, dir))| {
                let mut pits = 0;
                for c in 0..w {
                    let i = row * w + c;
                    let (r, d) = steepest(cells, z, i);
                    rcv[c] = r;
                    dir[c] = d;
                    pits += usize::from(d == NO_DIRECTION && cells.kind[i] == ACTIVE && z[i] > cells.sea_level);
                }
                pits
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

    /// Fills the depressions of the pits the last [`Routing::build_stack`] labelled (with
    /// `label`), raising `z`, and routes the filled cells to where they spill; returns the
    /// filled height summed over cells, m. The stack must be built again after it.
    pub fn fill_depressions(&mut self, cells: &Cells, z: &mut [f64]) -> f64 {
        self.unresolved = 0;
        if self.basin_ranges.is_empty() {
            return 0.0;
        }
        let levels = self.spill_levels(cells, z);
        let w = cells.width;
        let basin = &self.basin;
        let label = |i: usize| basin[i].load(Ordering::Relaxed);
        let filled: f64 = z
            .par_chunks_mut(w)
            .enumerate()
            .map(|(row, zs)| {
                let mut sum = 0.0;
                for (c, zi) in zs.iter_mut().enumerate() {
                    let b = label(row * w + c);
                    if b != 0 && b != u32::MAX {
                        let level = levels[b as usize];
                        if level.is_finite() && *zi < level {
                            sum += level - *zi;
                            *zi = level;
                        }
                    }
                }
                sum
            })
            .collect::<Vec<f64>>()
            .iter()
            .sum();
        // route the pit basins' cells again on the filled surface
        let zr: &[f64] = z;
        self.receiver.par_chunks_mut(w).zip(self.direction.par_chunks_mut(w)).enumerate().for_each(
            |(row, (rcv, dir))| {
                for c in 0..w {
                    let i = row * w + c;
                    let b = label(i);
                    if b != 0 && b != u32::MAX {
                        let (r, d) = steepest(cells, zr, i);
                        rcv[c] = r;
                        dir[c] = d;
                    }
                }
            },
        );
        self.unresolved = self.route_flats(cells, z, false);
        filled
    }

    /// Spill height of every basin (index 0 the outlets', then the pits' in order), m; infinite
    /// for a basin with no way out.
    fn spill_levels(&mut self, cells: &Cells, z: &[f64]) -> Vec<f64> {
        let k = self.basin_ranges.len();
        let (w, h) = (cells.width, cells.height);
        let basin = &self.basin;
        // every pair of touching cells in two basins (one of them a pit's), as a pass of the
        // higher cell's height; each row looks east, south-east, south and south-west, so each
        // pair comes once, and runs of the same two basins along a row keep their lowest
        const FORWARD: [usize; 4] = [0, 4, 2, 5];
        self.edges = (0..h)
            .into_par_iter()
            .flat_map_iter(|row| {
                let mut out: Vec<Pass> = Vec::new();
                let mut last = [NO_PASS; 4];
                for c in 0..w {
                    let i = row * w + c;
                    if cells.kind[i] == OUTSIDE {
                        continue;
                    }
                    let a = basin[i].load(Ordering::Relaxed);
                    for (slot, &k) in FORWARD.iter().enumerate() {
                        let (dr, dc) = STEPS[k];
                        let (nr, nc) = (row as isize + dr, c as isize + dc);
                        if nr >= h as isize || nc < 0 || nc >= w as isize {
                            continue;
                        }
                        let j = nr as usize * w + nc as usize;
                        if cells.kind[j] == OUTSIDE {
                            continue;
                        }
                        let b = basin[j].load(Ordering::Relaxed);
                        if a == b {
                            continue;
                        }
                        let pass = Pass { height: z[i].max(z[j]), a: a.min(b), b: a.max(b) };
                        let prev = &mut last[slot];
                        if prev.a == pass.a && prev.b == pass.b && prev.height != f64::INFINITY {
                            prev.height = prev.height.min(pass.height);
                        } else {
                            if prev.height != f64::INFINITY {
                                out.push(*prev);
                            }
                            *prev = pass;
                        }
                    }
                }
                out.extend(last.into_iter().filter(|p| p.height != f64::INFINITY));
                out.into_iter()
            })
            .collect();
        // Kruskal: the minimum spanning tree holds every basin's lowest way out
        self.edges.par_sort_unstable_by_key(|e| (ordered(e.height), u64::from(e.a) << 32 | u64::from(e.b)));
        let mut parent: Vec<u32> = (0..=k as u32).collect();
        fn root(parent: &mut [u32], mut x: u32) -> u32 {
            while parent[x as usize] != x {
                let up = parent[parent[x as usize] as usize];
                parent[x as usize] = up;
                x = up;
            }
            x
        }
        let mut degree = vec![0u32; k + 2];
        let mut tree: Vec<Pass> = Vec::with_capacity(k);
        for e in &self.edges {
            let (ra, rb) = (root(&mut parent, e.a), root(&mut parent, e.b));
            if ra != rb {
                parent[ra.max(rb) as usize] = ra.min(rb);
                tree.push(*e);
                degree[e.a as usize + 1] += 1;
                degree[e.b as usize + 1] += 1;
                if tree.len() == k {
                    break;
                }
            }
        }
        // the tree as adjacency lists, walked from the outlets' node
        for b in 0..=k {
            degree[b + 1] += degree[b];
        }
        let mut slot = degree.clone();
        let mut adjacent = vec![(0u32, 0.0f64); 2 * tree.len()];
        for e in &tree {
            adjacent[slot[e.a as usize] as usize] = (e.b, e.height);
            slot[e.a as usize] += 1;
            adjacent[slot[e.b as usize] as usize] = (e.a, e.height);
            slot[e.b as usize] += 1;
        }
        let mut level = std::mem::take(&mut self.level);
        level.clear();
        level.resize(k + 1, f64::INFINITY);
        level[0] = f64::NEG_INFINITY;
        self.queue.clear();
        self.queue.push(0);
        let mut head = 0;
        while head < self.queue.len() {
            let b = self.queue[head] as usize;
            head += 1;
            for &(c, h) in &adjacent[degree[b] as usize..degree[b + 1] as usize] {
                if level[c as usize] == f64::INFINITY {
                    level[c as usize] = h.max(level[b]);
                    self.queue.push(c);
                }
            }
        }
        let out = level.clone();
        self.level = level;
        out
    }

    /// Gives every stuck cell (no lower neighbour) on a flat that spills a receiver of equal
    /// height, breadth-first from where the flat spills. With `merge`, every flat that does not
    /// spill then drains to its first cell, so each closed flat is one pit. Returns the stuck
    /// cells left (the pits).
    pub fn route_flats(&mut self, cells: &Cells, z: &[f64], merge: bool) -> usize {
        let n = z.len();
        let mut stuck = std::mem::take(&mut self.stuck);
        stuck.clear();
        let direction = &self.direction;
        stuck.par_extend(
            (0..n as u32)
                .into_par_iter()
                .with_min_len(4096)
                .filter(|&i| cells.stuck(i as usize, z[i as usize], direction[i as usize])),
        );
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
        for &i in &stuck {
            let i = i as usize;
            if !cells.stuck(i, z[i], direction[i]) || receiver[i] as usize != i {
                continue;
            }
            left += 1;
            if merge {
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

    /// Builds the stack from the receivers: each root's tree (roots in index order) breadth-first
    /// from the root, trees in groups that run in parallel (a tree never spans two groups).
    /// With `label`, only the pits' trees, for their basins: each cell's basin (0: drains to
    /// base level; `b` ≥ 1: to the `b`-th pit) and each pit basin's range (the stack must then
    /// be built again, whole, once the depressions are filled). Returns the number of pits.
    pub fn build_stack(&mut self, cells: &Cells, z: &[f64], label: bool) -> usize {
        let (w, h) = (cells.width, cells.height);
        let n = w * h;
        let direction = &self.direction;
        let roots: Vec<u32> = (0..h)
            .into_par_iter()
            .flat_map_iter(|row| {
                (row * w..(row + 1) * w)
                    .filter(|&i| {
                        direction[i] == NO_DIRECTION && cells.kind[i] != OUTSIDE && (!label || !cells.is_base(i, z[i]))
                    })
                    .map(|i| i as u32)
            })
            .collect();
        let per_group = roots.len().div_ceil(GROUPS).max(1);
        // pit ids: the pits among the roots, in order
        let is_pit = |i: u32| !cells.is_base(i as usize, z[i as usize]);
        let mut first_pit: Vec<u32> =
            roots.chunks(per_group).map(|rs| rs.iter().filter(|&&i| is_pit(i)).count() as u32).collect();
        let mut pits = 0;
        for f in &mut first_pit {
            let k = *f;
            *f = pits + 1;
            pits += k;
        }
        if label {
            self.basin.resize_with(n, || AtomicU32::new(0));
            self.basin
                .par_iter()
                .enumerate()
                .for_each(|(i, b)| b.store(if cells.kind[i] == OUTSIDE { u32::MAX } else { 0 }, Ordering::Relaxed));
        }
        let basin = &self.basin;
        let trees: Vec<Tree> = roots
            .par_chunks(per_group)
            .zip(first_pit.par_iter())
            .map(|(rs, &first)| {
                let mut out: Vec<u32> = Vec::new();
                let mut ranges = Vec::new();
                let mut id = first;
                for &root in rs {
                    let start = out.len();
                    let this = if label && is_pit(root) {
                        id += 1;
                        id - 1
                    } else {
                        0
                    };
                    out.push(root);
                    let mut head = start;
                    while head < out.len() {
                        let c = out[head] as usize;
                        head += 1;
                        // the donors: neighbours whose direction points here
                        cells.each_neighbour(c, |k, j| {
                            if direction[j] == OPPOSITE[k] {
                                out.push(j as u32);
                            }
                        });
                    }
                    if label {
                        for &i in &out[start..] {
                            basin[i as usize].store(this, Ordering::Relaxed);
                        }
                        if this != 0 {
                            ranges.push((start as u32, out.len() as u32));
                        }
                    }
                }
                (out, ranges)
            })
            .collect();
        self.stack.clear();
        self.groups.clear();
        self.basin_ranges.clear();
        for (tree, ranges) in &trees {
            let at = self.stack.len() as u32;
            self.groups.push(self.stack.len());
            self.stack.extend_from_slice(tree);
            self.basin_ranges.extend(ranges.iter().map(|&(s, e)| (at + s, at + e)));
        }
        self.groups.push(self.stack.len());
        pits as usize
    }

    /// The stack's groups: runs of whole trees, independent of each other.
    pub fn groups(&self) -> impl IndexedParallelIterator<Item = &[u32]> {
        self.groups.par_windows(2).map(|g| &self.stack[g[0]..g[1]])
    }

    /// Cells that drain through each cell (each group in reverse stack order: donors first).
    pub fn accumulate(&mut self) {
        let n = self.receiver.len();
        self.count.resize_with(n, || AtomicU32::new(0));
        self.count.par_iter().for_each(|c| c.store(0, Ordering::Relaxed));
        let (count, receiver) = (&self.count, &self.receiver);
        self.groups().for_each(|g| {
            for &i in g {
                count[i as usize].store(1, Ordering::Relaxed);
            }
            for &i in g.iter().rev() {
                let r = receiver[i as usize] as usize;
                if r != i as usize {
                    let c = count[i as usize].load(Ordering::Relaxed);
                    count[r].store(count[r].load(Ordering::Relaxed) + c, Ordering::Relaxed);
                }
            }
        });
    }

    /// Cells that drain through cell `i`, itself included (0 outside the domain).
    #[inline]
    pub fn count(&self, i: usize) -> u32 {
        self.count[i].load(Ordering::Relaxed)
    }
}

/// A group's trees: its cells in stack order, and the ranges of its pit basins among them.
type Tree = (Vec<u32>, Vec<(u32, u32)>);

/// Groups the stack's trees are split into for the parallel passes (a fixed number, so sums
/// over groups come out the same on any thread count).
const GROUPS: usize = 1024;

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

/// A key whose unsigned order is the total order of `f64`.
#[inline]
fn ordered(v: f64) -> u64 {
    let bits = v.to_bits();
    if bits >> 63 == 1 { !bits } else { bits | (1 << 63) }
}

/// A stuck cell's direction while its flat is being merged into it (never left in place).
const PIT: u8 = 9;

/// The direction opposite each of [`STEPS`].
const OPPOSITE: [u8; 8] = [1, 0, 3, 2, 7, 6, 5, 4];

/// The steepest lower neighbour of cell `i` and its direction; itself and [`NO_DIRECTION`] for
/// base level, nodata and pits.
#[inline]
fn steepest(cells: &Cells, z: &[f64], i: usize) -> (u32, u8) {
    let none = (i as u32, NO_DIRECTION);
    if cells.kind[i] != ACTIVE || z[i] <= cells.sea_level {
        return none;
    }
    let zi = z[i];
    let mut best = none;
    let mut steepest = 0.0;
    cells.each_neighbour(i, |k, j| {
        let s = (zi - z[j]) * cells.inverse_distance[k];
        if s > steepest {
            steepest = s;
            best = (j as u32, k as u8);
        }
    });
    best
}
