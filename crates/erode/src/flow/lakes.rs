//! Small lakes: each pit's lake flooded up from the pit alone
//! (Priority-Flood from one seed, Barnes et al. 2014) until the flood meets a cell lower than
//! its level, where the lake spills.
//!
//! Mid-run most pits are shallow dips that diffusion leaves in channels: their lakes are a few
//! cells, while their basins (what the basin graph of [`super::depressions`] works on) are
//! whole catchments. A lake flooded from its pit alone has the right level when the water it
//! spills reaches base level without rising again: directly, or through lakes kept before it
//! that are no higher. Those lakes are filled here, and each one's way out is carved along the
//! cells its flood went through from the pit to where it spills (the other filled cells keep
//! draining towards the pit, as in the basin graph); the others (lakes that spill into each
//! other, or into a higher one, or grow too large) are left to the basin graph, which then
//! sees the kept ones already filled.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use rayon::prelude::*;

use super::fill::key;
use super::routing::{Cells, Routing, steepest};

/// A lake of more cells than this is left to the basin graph (its flood would cost more than
/// the graph's pass over its basin).
const MAX_CELLS: usize = 1 << 14;

/// One pit's lake, flooded from the pit.
#[derive(Clone, Copy, Debug)]
struct Lake {
    /// The water level: the highest cell of the flood before it spilled, m.
    level: f64,
    /// The cell it spills into (lower than `level`, or base level).
    spill: u32,
    /// The place in [`Lakes::cells`] of the lake's cell it spills from.
    edge: u32,
    /// Its cells' range in [`Lakes::cells`].
    cells: (u32, u32),
}

/// The small lakes of one step, and the scratch they are flooded in.
#[derive(Debug, Default)]
pub struct Lakes {
    /// Per cell, the last mark that visited it (a flood, or the cells around a fill).
    seen: Vec<u32>,
    mark: u32,
    /// The root each cell's receivers lead to, for the cells looked up this step (few: the
    /// spills' ways down).
    root: HashMap<u32, u32>,
    /// Cells to flood: height key, cell, and the place in `cells` of the cell it was reached
    /// from.
    heap: BinaryHeap<Reverse<(u64, u32, u32)>>,
    /// The lakes' cells, each lake's in the order flooded (its pit first).
    cells: Vec<u32>,
    /// For each of `cells`, the place of the cell it was reached from (the pit's own).
    reached_from: Vec<u32>,
    path: Vec<u32>,
    /// The cells whose routing a fill may change, for [`Routing::reroute`].
    pub(super) touched: Vec<u32>,
    /// Per cell, [`RAISED`] and [`KEPT`] (for a fill of much of the grid).
    flags: Vec<u8>,
    /// A carved way's cells, edge first.
    way: Vec<u32>,
}

impl Lakes {
    /// A fresh mark for `seen` (the array cleared when the marks run out).
    pub(super) fn next_mark(&mut self, n: usize) -> u32 {
        if self.seen.len() != n || self.mark == u32::MAX {
            self.seen = vec![0; n];
            self.mark = 0;
        }
        self.mark += 1;
        self.mark
    }

    /// Marks `i` seen under `mark`; whether it was not yet.
    #[inline]
    pub(super) fn visit(&mut self, i: usize, mark: u32) -> bool {
        let fresh = self.seen[i] != mark;
        self.seen[i] = mark;
        fresh
    }

    /// Floods the lake of `pit` up from it; `None` when it has no way out or grows past
    /// [`MAX_CELLS`].
    fn flood(&mut self, cells: &Cells, z: &[f64], pit: usize) -> Option<Lake> {
        let mark = self.next_mark(z.len());
        self.heap.clear();
        let start = self.cells.len() as u32;
        self.visit(pit, mark);
        self.heap.push(Reverse((key(z[pit]), pit as u32, start)));
        let mut level = f64::NEG_INFINITY;
        while let Some(Reverse((_, c, from))) = self.heap.pop() {
            let c = c as usize;
            let zc = z[c];
            if c != pit && (zc < level || cells.is_base(c, zc)) {
                let level = level.max(zc);
                return Some(Lake { level, spill: c as u32, edge: from, cells: (start, self.cells.len() as u32) });
            }
            if self.cells.len() - start as usize == MAX_CELLS {
                self.cells.truncate(start as usize);
                self.reached_from.truncate(start as usize);
                return None;
            }
            level = zc;
            let place = self.cells.len() as u32;
            self.cells.push(c as u32);
            self.reached_from.push(from);
            self.push_around(cells, z, c, place, mark);
        }
        self.cells.truncate(start as usize);
        self.reached_from.truncate(start as usize);
        None
    }

    /// Floods two lakes that spill into each other (`pits`, their pits) on as one: from both
    /// lakes' cells at the higher level, until the flood meets a lower cell that drains to
    /// neither pit (`receiver`, the routing before any lake). `None` when it has no way out or
    /// grows past [`MAX_CELLS`].
    fn flood_pair(
        &mut self,
        cells: &Cells,
        z: &[f64],
        receiver: &[u32],
        lakes: [Lake; 2],
        pits: [u32; 2],
    ) -> Option<Lake> {
        let mark = self.next_mark(z.len());
        self.heap.clear();
        let start = self.cells.len();
        for l in lakes {
            let shift = start as i64 + (self.cells.len() - start) as i64 - i64::from(l.cells.0);
            for place in l.cells.0 as usize..l.cells.1 as usize {
                let c = self.cells[place];
                self.cells.push(c);
                self.reached_from.push((i64::from(self.reached_from[place]) + shift) as u32);
                self.seen[c as usize] = mark;
            }
        }
        for place in start..self.cells.len() {
            self.push_around(cells, z, self.cells[place] as usize, place as u32, mark);
        }
        let mut level = lakes[0].level.max(lakes[1].level);
        while let Some(Reverse((_, c, from))) = self.heap.pop() {
            let c = c as usize;
            let zc = z[c];
            if zc < level || cells.is_base(c, zc) {
                let inside = !cells.is_base(c, zc) && pits.contains(&self.root_of(receiver, c));
                if !inside {
                    return Some(Lake {
                        level: level.max(zc),
                        spill: c as u32,
                        edge: from,
                        cells: (start as u32, self.cells.len() as u32),
                    });
                }
            } else {
                level = zc;
            }
            if self.cells.len() - start == MAX_CELLS {
                self.cells.truncate(start);
                self.reached_from.truncate(start);
                return None;
            }
            let place = self.cells.len() as u32;
            self.cells.push(c as u32);
            self.reached_from.push(from);
            self.push_around(cells, z, c, place, mark);
        }
        self.cells.truncate(start);
        self.reached_from.truncate(start);
        None
    }

    /// Pushes the neighbours of cell `c` (at `place` in `cells`) not yet seen under `mark`.
    fn push_around(&mut self, cells: &Cells, z: &[f64], c: usize, place: u32, mark: u32) {
        let m = cells.around[c];
        for k in 0..8 {
            if m & (1 << k) != 0 {
                let j = (c as isize + cells.offset[k]) as usize;
                if self.visit(j, mark) {
                    self.heap.push(Reverse((key(z[j]), j as u32, place)));
                }
            }
        }
    }

    /// The cells of `lake`'s way out, from its edge back to its pit, into `way`.
    fn way_of(&mut self, lake: Lake) {
        self.way.clear();
        let mut at = lake.edge as usize;
        loop {
            self.way.push(self.cells[at]);
            let from = self.reached_from[at] as usize;
            if from == at {
                break;
            }
            at = from;
        }
    }

    /// The root that cell `i`'s receivers lead to (a pit, or an outlet), remembered for the
    /// step (cleared at each step's start).
    fn root_of(&mut self, receiver: &[u32], i: usize) -> u32 {
        self.path.clear();
        let mut c = i;
        let root = loop {
            if let Some(&r) = self.root.get(&(c as u32)) {
                break r;
            }
            let r = receiver[c] as usize;
            if r == c {
                break c as u32;
            }
            self.path.push(c as u32);
            c = r;
        };
        for &p in &self.path {
            self.root.insert(p, root);
        }
        root
    }
}

impl Routing {
    /// Fills the lakes of the pits in `pit_cells` that can be flooded from their pit alone
    /// (see the module's text) and carves their ways out, adding the cells to `raised` and
    /// `carved` for [`Routing::reroute`]; leaves in `pit_cells` the pits left for the basin
    /// graph. Returns the filled height summed over cells, m.
    pub(super) fn fill_small_lakes(
        &mut self,
        cells: &Cells,
        z: &mut [f64],
        raised: &mut Vec<u32>,
        carved: &mut Vec<u32>,
    ) -> f64 {
        let mut lakes = std::mem::take(&mut self.lakes);
        lakes.cells.clear();
        lakes.reached_from.clear();
        let pits = std::mem::take(&mut self.pit_cells);
        let own: Vec<Option<Lake>> = pits.iter().map(|&p| lakes.flood(cells, z, p as usize)).collect();

        // where each lake's water goes: the pit (its index) or an outlet (`OUT`)
        const OUT: u32 = u32::MAX;
        lakes.root.clear();
        let receiver = &self.receiver;
        let target_of = |lakes: &mut Lakes, lake: &Option<Lake>| match lake {
            None => OUT,
            Some(l) if cells.is_base(l.spill as usize, z[l.spill as usize]) => OUT,
            Some(l) => {
                let root = lakes.root_of(receiver, l.spill as usize);
                pits.binary_search(&root).map_or(OUT, |p| p as u32)
            }
        };
        let mut targets: Vec<u32> = own.iter().map(|l| target_of(&mut lakes, l)).collect();
        // two lakes that spill into each other (a chain of dips along a channel often ends in
        // such a pair) are flooded again as one; the first of the pair stands for both
        let mut floods = own.clone();
        let mut partner = vec![OUT; pits.len()];
        for p in 0..pits.len() {
            let t = targets[p];
            if t == OUT || t as usize <= p || targets[t as usize] as usize != p {
                continue;
            }
            let (Some(a), Some(b)) = (own[p], own[t as usize]) else { continue };
            let merged = lakes.flood_pair(cells, z, receiver, [a, b], [pits[p], pits[t as usize]]);
            let to = target_of(&mut lakes, &merged);
            if merged.is_some() && to as usize != p && to != t {
                floods[p] = merged;
                targets[p] = to;
                floods[t as usize] = None;
                partner[p] = t;
                partner[t as usize] = p as u32;
            }
        }
        // a lake spilling into the second of a pair spills into the pair
        for t in targets.iter_mut() {
            if *t != OUT && floods[*t as usize].is_none() && partner[*t as usize] != OUT {
                *t = partner[*t as usize];
            }
        }
        // kept: lakes whose water reaches an outlet through kept lakes no higher than them,
        // found from the outlets up the lakes that spill into each kept one (a lake that
        // spills into another's basin is never below that one's level, whose own flood would
        // reach the first pit no higher: the check guards against ties)
        let mut into: Vec<Vec<u32>> = vec![Vec::new(); pits.len()];
        let mut kept = vec![false; pits.len()];
        let mut queue: Vec<u32> = Vec::new();
        for (p, (&t, lake)) in targets.iter().zip(&floods).enumerate() {
            match (t, lake) {
                (_, None) => {}
                (OUT, Some(_)) => {
                    kept[p] = true;
                    queue.push(p as u32);
                }
                (t, Some(_)) => into[t as usize].push(p as u32),
            }
        }
        let mut head = 0;
        while head < queue.len() {
            let q = queue[head] as usize;
            head += 1;
            let level = floods[q].map_or(f64::INFINITY, |l| l.level);
            if partner[q] != OUT {
                kept[partner[q] as usize] = true;
            }
            for &a in &into[q] {
                if floods[a as usize].is_some_and(|l| l.level >= level) {
                    kept[a as usize] = true;
                    queue.push(a);
                }
            }
        }

        // fill the kept lakes and carve each one's way out along the cells its flood went
        // through, from the pit to where it spills; lakes that others spill into first, and a
        // way that meets one already carved (lakes at one level share cells) joins it there
        let mut filled = 0.0;
        let carving = lakes.next_mark(z.len());
        for &q in &queue {
            let q = q as usize;
            let Some(l) = floods[q] else { continue };
            for &c in &lakes.cells[l.cells.0 as usize..l.cells.1 as usize] {
                let c = c as usize;
                if z[c] < l.level {
                    filled += l.level - z[c];
                    z[c] = l.level;
                    raised.push(c as u32);
                }
            }
            // a pair's way out, then each of its pits' own ways (the one not on the pair's way
            // drains into the other's lake)
            let ways =
                if partner[q] == OUT { [Some(l), None, None] } else { [Some(l), own[q], own[partner[q] as usize]] };
            for lake in ways.into_iter().flatten() {
                lakes.way_of(lake);
                let joins = lakes.way.iter().rposition(|&c| lakes.seen[c as usize] == carving);
                let (outer, way) = match joins {
                    Some(k) => (lakes.way[k] as usize, &lakes.way[k + 1..]),
                    None => (lake.spill as usize, &lakes.way[..]),
                };
                self.carve(cells, outer, way);
                for &c in way {
                    lakes.seen[c as usize] = carving;
                }
                carved.extend_from_slice(way);
            }
        }
        self.lakes = lakes;
        self.pit_cells = pits
            .iter()
            .zip(&kept)
            .filter(|&(&p, &k)| !k && cells.stuck(p as usize, z[p as usize], self.direction[p as usize]))
            .map(|(&p, _)| p)
            .collect();
        filled
    }

    /// After a fill: the cells `raised` keep draining along their former slopes (towards their
    /// pit) and the `carved` ones along their carved way; every other cell beside a raised one
    /// takes its steepest neighbour again (the only cells a fill can change), then the flats
    /// among those are routed. Returns the stuck cells left.
    pub(super) fn reroute(&mut self, cells: &Cells, z: &[f64], raised: &[u32], carved: &[u32]) -> usize {
        let n = z.len();
        let mut lakes = std::mem::take(&mut self.lakes);
        let mut touched = std::mem::take(&mut lakes.touched);
        touched.clear();
        if raised.len() * 16 < n {
            let kept = lakes.next_mark(n);
            for &i in raised.iter().chain(carved) {
                lakes.visit(i as usize, kept);
            }
            let mark = lakes.next_mark(n);
            for &i in raised {
                cells.each_neighbour(i as usize, |_, j| {
                    if lakes.seen[j] != kept && lakes.visit(j, mark) {
                        touched.push(j as u32);
                    }
                });
            }
            touched.sort_unstable();
            for &i in &touched {
                (self.receiver[i as usize], self.direction[i as usize]) = steepest(cells, z, i as usize);
            }
        } else {
            // much of the grid: rows in parallel, each cell checking its neighbours' flags
            lakes.flags.clear();
            lakes.flags.resize(n, 0);
            for &i in raised {
                lakes.flags[i as usize] = RAISED | KEPT;
            }
            for &i in carved {
                lakes.flags[i as usize] |= KEPT;
            }
            let (flags, w) = (&lakes.flags, cells.width);
            touched.par_extend(
                self.receiver.par_chunks_mut(w).zip(self.direction.par_chunks_mut(w)).enumerate().flat_map_iter(
                    |(row, (rcv, dir))| {
                        let mut out = Vec::new();
                        for c in 0..w {
                            let i = row * w + c;
                            if flags[i] & KEPT != 0 {
                                continue;
                            }
                            let mut beside = 0;
                            cells.each_neighbour(i, |_, j| beside |= flags[j]);
                            if beside & RAISED != 0 {
                                (rcv[c], dir[c]) = steepest(cells, z, i);
                                out.push(i as u32);
                            }
                        }
                        out
                    },
                ),
            );
        }
        self.stuck.clear();
        let direction = &self.direction;
        self.stuck
            .extend(touched.iter().copied().filter(|&i| cells.stuck(i as usize, z[i as usize], direction[i as usize])));
        lakes.touched = touched;
        self.lakes = lakes;
        self.route_stuck(cells, z, false)
    }
}

/// A flag of [`Lakes::flags`]: the fill raised the cell.
const RAISED: u8 = 1;
/// A flag of [`Lakes::flags`]: the cell keeps its routing (raised, or on a carved way).
const KEPT: u8 = 2;
