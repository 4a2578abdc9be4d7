//! Where water goes, for the stream-power model: D8 receivers (O'Callaghan & Mark 1984), closed
//! depressions filled through a basin graph (Cordonnier, Bovy & Braun 2019), the stack of Braun
//! & Willett (2013) (every receiver before its donors) and the drainage area.
//!
//! Depressions: each pit's basin (the cells draining to it) is a node of a graph whose edges are
//! the lowest passes between touching basins, with every outlet (open edge, sea, nodata hole)
//! merged into one node; its minimum spanning tree (Kruskal) holds each basin's way out, and the
//! highest pass on that way is the basin's spill height. Cells below it are filled to it (lakes
//! fill with sediment at once, booked as `filled`), and the flat water surface drains along a
//! breadth-first search towards where it spills. The cost is a scan of the pit basins' cells
//! and a sort of their passes: nothing when there are no pits (the common case once rivers
//! run), O(n log n) on a pit-heavy start. The result is the fill of Priority-Flood (Barnes et al.
//! 2014) without its priority queue over every cell.

use rayon::prelude::*;

use crate::analysis::domain::STEPS;

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
    /// Cells at or below it are sea (base level), m.
    pub sea_level: f64,
}

impl Cells {
    /// The neighbour of `i` in direction `k`, if on the map.
    #[inline]
    pub fn neighbour(&self, i: usize, k: usize) -> Option<usize> {
        let (r, c) = ((i / self.width) as isize, (i % self.width) as isize);
        let (dr, dc) = STEPS[k];
        let (nr, nc) = (r + dr, c + dc);
        if nr < 0 || nc < 0 || nr >= self.height as isize || nc >= self.width as isize {
            None
        } else {
            Some(nr as usize * self.width + nc as usize)
        }
    }

    /// Calls `f(k, j)` for each neighbour `j` of `i` on the map, `k` its direction.
    #[inline]
    pub fn each_neighbour(&self, i: usize, mut f: impl FnMut(usize, usize)) {
        let (w, h) = (self.width, self.height);
        let (r, c) = (i / w, i % w);
        if r > 0 && c > 0 && r + 1 < h && c + 1 < w {
            for (k, &(dr, dc)) in STEPS.iter().enumerate() {
                f(k, (i as isize + dr * w as isize + dc) as usize);
            }
        } else {
            for k in 0..8 {
                if let Some(j) = self.neighbour(i, k) {
                    f(k, j);
                }
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
#[derive(Clone, Debug, Default)]
pub struct Routing {
    /// The cell each cell drains to (itself for outlets, unresolved pits and nodata).
    pub receiver: Vec<u32>,
    /// The direction of [`STEPS`] to the receiver, or [`NO_DIRECTION`].
    pub direction: Vec<u8>,
    /// Cells inside the domain, every receiver before its donors (Braun & Willett's stack).
    pub stack: Vec<u32>,
    /// Cells that drain through each cell, itself included (its drainage area in cells).
    pub count: Vec<u32>,
    /// Pits found before filling, this step.
    pub pits: usize,
    /// Cells left without a way out after filling (only in a domain with no base level).
    pub unresolved: usize,
    /// (temporary) times of the depression parts, ms.
    pub parts: [f64; 4],
    donor_start: Vec<u32>,
    donors: Vec<u32>,
    basin: Vec<u32>,
    basin_ranges: Vec<(u32, u32)>,
    edges: Vec<Pass>,
    best: Vec<Pass>,
    touched: Vec<u32>,
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

    /// Fills the depressions of the pits the last [`Routing::build_stack`] labelled (with
    /// `label`), raising `z`, and routes the filled cells to where they spill; returns the
    /// filled height summed over cells, m. The stack must be built again after it.
    pub fn fill_depressions(&mut self, cells: &Cells, z: &mut [f64]) -> f64 {
        self.unresolved = 0;
        if self.basin_ranges.is_empty() {
            return 0.0;
        }
        let t0 = std::time::Instant::now();
        let levels = self.spill_levels(cells, z);
        self.parts[0] += t0.elapsed().as_secs_f64() * 1e3;
        let t0 = std::time::Instant::now();
        let mut filled = 0.0;
        for (b, &(start, end)) in self.basin_ranges.iter().enumerate() {
            let level = levels[b + 1];
            if !level.is_finite() {
                continue;
            }
            for &i in &self.stack[start as usize..end as usize] {
                let zi = &mut z[i as usize];
                if *zi < level {
                    filled += level - *zi;
                    *zi = level;
                }
            }
        }
        // route the pit basins' cells again on the filled surface
        let w = cells.width;
        let basin = &self.basin;
        let zr: &[f64] = z;
        self.receiver.par_chunks_mut(w).zip(self.direction.par_chunks_mut(w)).enumerate().for_each(
            |(row, (rcv, dir))| {
                for c in 0..w {
                    let i = row * w + c;
                    if basin[i] != 0 && basin[i] != u32::MAX {
                        let (r, d) = steepest(cells, zr, i);
                        rcv[c] = r;
                        dir[c] = d;
                    }
                }
            },
        );
        self.parts[1] += t0.elapsed().as_secs_f64() * 1e3;
        let t0 = std::time::Instant::now();
        self.unresolved = self.route_flats(cells, z, false);
        self.parts[2] += t0.elapsed().as_secs_f64() * 1e3;
        filled
    }

    /// Spill height of every basin (index 0 the outlets', then the pits' in order), m; infinite
    /// for a basin with no way out.
    fn spill_levels(&mut self, cells: &Cells, z: &[f64]) -> Vec<f64> {
        let k = self.basin_ranges.len();
        self.edges.clear();
        self.best.clear();
        self.best.resize(k + 1, NO_PASS);
        self.touched.clear();
        for b in 1..=k {
            let (start, end) = self.basin_ranges[b - 1];
            let (basin, best, touched) = (&self.basin, &mut self.best, &mut self.touched);
            for &i in &self.stack[start as usize..end as usize] {
                let i = i as usize;
                cells.each_neighbour(i, |_, j| {
                    if cells.kind[j] == OUTSIDE {
                        return;
                    }
                    let c = basin[j] as usize;
                    if c == b || (c != 0 && c < b) {
                        return;
                    }
                    let height = z[i].max(z[j]);
                    if height < best[c].height {
                        if best[c].height == f64::INFINITY {
                            touched.push(c as u32);
                        }
                        best[c] = Pass { height, a: b as u32, b: c as u32 };
                    }
                });
            }
            for &c in &self.touched {
                self.edges.push(self.best[c as usize]);
                self.best[c as usize] = NO_PASS;
            }
            self.touched.clear();
        }
        // Kruskal: the minimum spanning tree holds every basin's lowest way out
        self.edges.par_sort_unstable_by(|x, y| x.height.total_cmp(&y.height).then(x.a.cmp(&y.a)).then(x.b.cmp(&y.b)));
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
    /// height, breadth-first from where the flat spills; with `merge`, every flat that does not
    /// spill then drains to its first cell, so each closed flat is one pit. Returns the stuck
    /// cells left (the pits).
    pub fn route_flats(&mut self, cells: &Cells, z: &[f64], merge: bool) -> usize {
        let n = z.len();
        let mut stuck = std::mem::take(&mut self.touched);
        stuck.clear();
        stuck.extend((0..n as u32).filter(|&i| cells.stuck(i as usize, z[i as usize], self.direction[i as usize])));
        self.queue.clear();
        let (receiver, direction, queue) = (&mut self.receiver, &mut self.direction, &mut self.queue);
        // seeds: stuck cells beside a cell of the same height that drains
        for &i in &stuck {
            let i = i as usize;
            let mut found = false;
            cells.each_neighbour(i, |k, j| {
                if !found && cells.kind[j] != OUTSIDE && z[j] == z[i] && !cells.stuck(j, z[j], direction[j]) {
                    receiver[i] = j as u32;
                    direction[i] = k as u8;
                    queue.push(i as u32);
                    found = true;
                }
            });
        }
        let spread = |queue: &mut Vec<u32>, receiver: &mut [u32], direction: &mut [u8], mut head: usize| {
            while head < queue.len() {
                let i = queue[head] as usize;
                head += 1;
                cells.each_neighbour(i, |k, j| {
                    if z[j] == z[i] && cells.stuck(j, z[j], direction[j]) {
                        receiver[j] = i as u32;
                        direction[j] = OPPOSITE[k];
                        queue.push(j as u32);
                    }
                });
            }
        };
        spread(queue, receiver, direction, 0);
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
                // mark the pit itself as taken: it stays its own receiver
                direction[i] = PIT;
                spread(queue, receiver, direction, head);
                direction[i] = NO_DIRECTION;
            }
        }
        self.touched = stuck;
        left
    }

    /// Builds the stack from the receivers (roots in index order, each root's tree whole before
    /// the next); with `label`, also each cell's basin (0: drains to base level; `b` ≥ 1: to the
    /// `b`-th pit) and each pit basin's range in the stack. Returns the number of pits.
    pub fn build_stack(&mut self, cells: &Cells, z: &[f64], label: bool) -> usize {
        let n = self.receiver.len();
        self.donor_start.clear();
        self.donor_start.resize(n + 1, 0);
        for i in 0..n {
            let r = self.receiver[i] as usize;
            if r != i {
                self.donor_start[r + 1] += 1;
            }
        }
        for i in 0..n {
            self.donor_start[i + 1] += self.donor_start[i];
        }
        self.donors.resize(self.donor_start[n] as usize, 0);
        // fill from each receiver's end backwards, so its donors come out in index order
        let mut end: Vec<u32> = self.donor_start[1..].to_vec();
        for i in (0..n).rev() {
            let r = self.receiver[i] as usize;
            if r != i {
                end[r] -= 1;
                self.donors[end[r] as usize] = i as u32;
            }
        }
        drop(end);
        self.stack.clear();
        self.basin_ranges.clear();
        if label {
            self.basin.clear();
            self.basin.resize(n, u32::MAX);
        }
        let mut head = 0;
        for (root, &zr) in z.iter().enumerate() {
            if self.receiver[root] as usize != root || cells.kind[root] == OUTSIDE {
                continue;
            }
            let start = self.stack.len();
            let id = if label && !cells.is_base(root, zr) {
                self.basin_ranges.push((start as u32, 0));
                self.basin_ranges.len() as u32
            } else {
                0
            };
            self.stack.push(root as u32);
            if label {
                self.basin[root] = id;
            }
            while head < self.stack.len() {
                let c = self.stack[head] as usize;
                head += 1;
                let (a, b) = (self.donor_start[c] as usize, self.donor_start[c + 1] as usize);
                for &d in &self.donors[a..b] {
                    self.stack.push(d);
                    if label {
                        self.basin[d as usize] = id;
                    }
                }
            }
            if id != 0 {
                self.basin_ranges[id as usize - 1].1 = self.stack.len() as u32;
            }
        }
        self.basin_ranges.len()
    }

    /// Cells draining through each cell (in reverse stack order: donors first).
    pub fn accumulate(&mut self) {
        let n = self.receiver.len();
        self.count.clear();
        self.count.resize(n, 0);
        for &i in &self.stack {
            self.count[i as usize] = 1;
        }
        for &i in self.stack.iter().rev() {
            let r = self.receiver[i as usize] as usize;
            if r != i as usize {
                self.count[r] += self.count[i as usize];
            }
        }
    }
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
    let (w, h) = (cells.width, cells.height);
    let (r, c) = (i / w, i % w);
    let zi = z[i];
    let mut best = none;
    let mut steepest = 0.0;
    let interior = r > 0 && c > 0 && r + 1 < h && c + 1 < w;
    for (k, &(dr, dc)) in STEPS.iter().enumerate() {
        let j = if interior {
            (i as isize + dr * w as isize + dc) as usize
        } else {
            match cells.neighbour(i, k) {
                Some(j) => j,
                None => continue,
            }
        };
        if cells.kind[j] == OUTSIDE {
            continue;
        }
        let s = (zi - z[j]) / cells.distance[k];
        if s > steepest {
            steepest = s;
            best = (j as u32, k as u8);
        }
    }
    best
}
