//! Closed depressions, filled through a basin graph (Cordonnier,
//! Bovy & Braun 2019).
//!
//! Each pit's basin (the cells draining to it) is a node of a graph whose edges are the lowest
//! passes between touching basins, with every outlet (open edge, sea, nodata hole) merged into
//! one node; its minimum spanning tree (Kruskal) holds each basin's way out, and the highest
//! pass on that way is the basin's spill height. Cells below it are filled to it (lakes fill
//! with sediment at once, booked as `filled`). The filled cells keep draining along their former
//! slopes, towards the pit, and the pit drains out along a way carved from it up to the pass
//! (the former slopes from the pass down to the pit, turned round: Cordonnier et al.'s
//! carving), so the lake is routed without a search over its flat surface; the incision then
//! leaves each lake cell [`FLAT_GRADIENT`](super::routing::FLAT_GRADIENT) above the next, so
//! a lake is routed once. The result is the fill of Priority-Flood (Barnes et al. 2014) without
//! its priority queue over every cell. Only the cells beside the fill are routed again.
//!
//! A pit's basin is its whole catchment, and mid-run most pits are dips that diffusion leaves
//! in channels, so the basins cover much of the grid while the lakes are a few cells: when pits
//! are few, each lake is first flooded from its pit alone ([`super::lakes`]), and only the
//! pits whose lakes spill into each other come here.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use super::fill::key;
use super::routing::{Cells, GROUPS, OUTSIDE, Routing, Trees, collect_trees, donor_masks};

/// The lowest pass found between two basins.
#[derive(Clone, Copy, Debug)]
struct Pass {
    /// The pass height: the higher of the two cells, m.
    height: f64,
    /// The basins (0: the outlets).
    a: u32,
    b: u32,
    /// The pass's cell in `a` and in `b`.
    cells: (u32, u32),
}

/// The pits' basins of one step, and the scratch they are found in.
#[derive(Debug, Default)]
pub struct Basins {
    /// Each cell's basin: 0 for none (drains to base level), `b` ≥ 1 for the `b`-th pit's,
    /// `u32::MAX` outside the domain; back to 0 after each fill.
    label: Vec<AtomicU32>,
    /// The basins' cells, each basin's breadth-first from its pit.
    cells: Vec<u32>,
    /// Runs of whole basins among `cells`, for the parallel passes.
    groups: Vec<usize>,
    /// Each basin's range among `cells`.
    ranges: Vec<(u32, u32)>,
    edges: Vec<Pass>,
    queue: Vec<u32>,
    donors: Vec<u8>,
}

impl Routing {
    /// Fills the closed depressions of the pits [`Routing::route_flats`] left (with `merge`),
    /// raising `z`, and routes the filled cells to where they spill; returns the filled height
    /// summed over cells, m. The stack must be built after it.
    pub fn fill_depressions(&mut self, cells: &Cells, z: &mut [f64]) -> f64 {
        self.unresolved = 0;
        self.small_lakes = 0;
        let mut filled = 0.0;
        // the cells filled, and those on carved ways: both keep their routing
        let (mut raised, mut carved) = (Vec::new(), Vec::new());
        if !self.pit_cells.is_empty() && self.pit_cells.len() <= z.len() / FEW_PITS {
            let before = self.pit_cells.len();
            filled += self.fill_small_lakes(cells, z, &mut raised, &mut carved);
            self.small_lakes = before - self.pit_cells.len();
        }
        if !self.pit_cells.is_empty() {
            filled += self.fill_basins(cells, z, &mut raised, &mut carved);
        }
        self.reroute(cells, z, &raised, &carved);
        let direction = &self.direction;
        self.unresolved =
            self.pit_cells.iter().filter(|&&p| cells.stuck(p as usize, z[p as usize], direction[p as usize])).count();
        filled
    }

    /// Fills the basins of the pits in `pit_cells` through the basin graph and carves their ways
    /// out, adding the cells to `raised` and `carved`; returns the filled height summed over
    /// cells, m.
    fn fill_basins(&mut self, cells: &Cells, z: &mut [f64], raised: &mut Vec<u32>, carved: &mut Vec<u32>) -> f64 {
        let mut basins = std::mem::take(&mut self.basins);
        basins.prepare(cells);
        basins.label(cells, &self.direction, &self.pit_cells);
        let (levels, exits) = basins.spill_levels(cells, z);
        let filled = basins.fill(cells, z, &levels, raised);
        // each filled basin's way out: from its cell at the pass down its former slopes to its
        // pit, carved the other way
        let mut way = Vec::new();
        for (&(inner, outer), level) in exits.iter().zip(&levels).skip(1) {
            if !level.is_finite() {
                continue;
            }
            way.clear();
            let mut c = inner as usize;
            loop {
                way.push(c as u32);
                let next = self.receiver[c] as usize;
                if next == c {
                    break;
                }
                c = next;
            }
            self.carve(cells, outer as usize, &way);
            carved.extend_from_slice(&way);
        }
        basins.clear_labels();
        self.basins = basins;
        filled
    }
}

/// Lakes are first flooded from their pits ([`super::lakes`]) when there is at most one pit in
/// this many cells (mid-run); a noisy start's many pits, whose lakes mostly spill into each
/// other, go to the basin graph at once.
const FEW_PITS: usize = 256;

impl Basins {
    /// The labels, all 0 inside the domain (once per grid).
    fn prepare(&mut self, cells: &Cells) {
        let n = cells.width * cells.height;
        if self.label.len() != n {
            self.label = (0..n).map(|i| AtomicU32::new(if cells.kind[i] == OUTSIDE { u32::MAX } else { 0 })).collect();
        }
    }

    /// Labels each pit's basin, the `b`-th pit's `b`, following `direction`.
    fn label(&mut self, cells: &Cells, direction: &[u8], pits: &[u32]) {
        donor_masks(cells, direction, &mut self.donors);
        collect_trees(
            cells,
            &self.donors,
            pits,
            Trees { cells: &mut self.cells, groups: &mut self.groups, ranges: Some(&mut self.ranges), links: None },
        );
        let (label, all) = (&self.label, &self.cells);
        self.ranges.par_iter().enumerate().for_each(|(b, &(s, e))| {
            for &i in &all[s as usize..e as usize] {
                label[i as usize].store(b as u32 + 1, Ordering::Relaxed);
            }
        });
    }

    /// The basins' cells in runs of whole basins, for the parallel passes.
    fn groups(&self) -> impl IndexedParallelIterator<Item = &[u32]> {
        self.groups.par_windows(2).map(|g| &self.cells[g[0]..g[1]])
    }

    /// Back to no basin, for the next step.
    fn clear_labels(&mut self) {
        let label = &self.label;
        self.groups().for_each(|g| g.iter().for_each(|&i| label[i as usize].store(0, Ordering::Relaxed)));
    }

    /// Raises each basin's cells below its spill level to it, adding them to `raised` in index
    /// order; returns the raise summed over cells (by row, in order), m.
    fn fill(&self, cells: &Cells, z: &mut [f64], levels: &[f64], raised: &mut Vec<u32>) -> f64 {
        let (label, w) = (&self.label, cells.width);
        let rows: Vec<(Vec<u32>, f64)> = z
            .par_chunks_mut(w)
            .enumerate()
            .map(|(row, zs)| {
                let (mut out, mut sum) = (Vec::new(), 0.0);
                for (c, h) in zs.iter_mut().enumerate() {
                    let i = row * w + c;
                    let level =
                        levels.get(label[i].load(Ordering::Relaxed) as usize).copied().unwrap_or(f64::NEG_INFINITY);
                    if level.is_finite() && *h < level {
                        sum += level - *h;
                        *h = level;
                        out.push(i as u32);
                    }
                }
                (out, sum)
            })
            .collect();
        let mut total = 0.0;
        for (out, sum) in &rows {
            raised.extend_from_slice(out);
            total += sum;
        }
        total
    }

    /// Spill height of every basin (index 0 the outlets', then the pits' in order), m; infinite
    /// for a basin with no way out; and each basin's way out, its cell at the pass and the
    /// cell past it.
    fn spill_levels(&mut self, cells: &Cells, z: &[f64]) -> (Vec<f64>, Vec<(u32, u32)>) {
        let k = self.ranges.len();
        let (label, all) = (&self.label, &self.cells);
        // each basin's lowest pass to each basin it touches (the outlets, or a pit basin of a
        // higher number: each pair once), as the higher of the two cells
        let per_chunk = k.div_ceil(GROUPS).max(1);
        self.edges = self
            .ranges
            .par_chunks(per_chunk)
            .enumerate()
            .flat_map_iter(|(chunk, ranges)| {
                let mut out: Vec<Pass> = Vec::new();
                let mut passes: Vec<(u32, f64, u32, u32)> = Vec::new();
                for (r, &(s, e)) in ranges.iter().enumerate() {
                    let a = (chunk * per_chunk + r + 1) as u32;
                    passes.clear();
                    for &i in &all[s as usize..e as usize] {
                        let i = i as usize;
                        cells.each_neighbour(i, |_, j| {
                            let b = label[j].load(Ordering::Relaxed);
                            if b == a || (b != 0 && b < a) {
                                return;
                            }
                            // a basin touches a few others: a short list, the lowest pass to each
                            // (the first cell of this basin on ties)
                            let h = z[i].max(z[j]);
                            match passes.iter_mut().find(|p| p.0 == b) {
                                Some(p) => {
                                    if h < p.1 || (h == p.1 && (i as u32) < p.2) {
                                        *p = (b, h, i as u32, j as u32);
                                    }
                                }
                                None => passes.push((b, h, i as u32, j as u32)),
                            }
                        });
                    }
                    out.extend(passes.iter().map(|&(b, h, i, j)| {
                        let cells = if a < b { (i, j) } else { (j, i) };
                        Pass { height: h, a: a.min(b), b: a.max(b), cells }
                    }));
                }
                out.into_iter()
            })
            .collect();
        // Kruskal: the minimum spanning tree holds every basin's lowest way out
        self.edges.par_sort_unstable_by_key(|e| (key(e.height), u64::from(e.a) << 32 | u64::from(e.b)));
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
        // the tree as adjacency lists, walked from the outlets' node: a basin's level is the
        // highest pass on its way there
        for b in 0..=k {
            degree[b + 1] += degree[b];
        }
        let mut slot = degree.clone();
        // each entry: the basin across, the pass height, the pass's cell here and across
        let mut adjacent = vec![(0u32, 0.0f64, 0u32, 0u32); 2 * tree.len()];
        for e in &tree {
            adjacent[slot[e.a as usize] as usize] = (e.b, e.height, e.cells.0, e.cells.1);
            slot[e.a as usize] += 1;
            adjacent[slot[e.b as usize] as usize] = (e.a, e.height, e.cells.1, e.cells.0);
            slot[e.b as usize] += 1;
        }
        let mut level = vec![f64::INFINITY; k + 1];
        let mut exit = vec![(0u32, 0u32); k + 1];
        level[0] = f64::NEG_INFINITY;
        self.queue.clear();
        self.queue.push(0);
        let mut head = 0;
        while head < self.queue.len() {
            let b = self.queue[head] as usize;
            head += 1;
            for &(c, h, here, across) in &adjacent[degree[b] as usize..degree[b + 1] as usize] {
                if level[c as usize] == f64::INFINITY {
                    level[c as usize] = h.max(level[b]);
                    exit[c as usize] = (across, here);
                    self.queue.push(c);
                }
            }
        }
        (level, exit)
    }
}
