//! Neighbour search on a uniform grid: particles sorted by cell (cells of half the kernel's
//! support), so a particle's neighbours lie in the 5 x 5 x 5 cells around its own, each row of
//! five a contiguous run (fewer candidates than 3 x 3 x 3 cells of the whole support: 125 h³
//! against 216 h³ of space searched for a support of 2h).

use glam::DVec3;

/// How many cells the kernel's support spans.
pub const REACH: i64 = 2;

/// The cells of the fluid's domain and, once particles are sorted, where each cell's run starts.
///
/// Runs are kept only for the box of cells the particles occupy (the domain of a scene can hold
/// millions of cells, most of them empty: counting, summing and copying them all every
/// iteration cost more than the search). The box's cells keep the domain's order (x fastest,
/// then y, then z), so the particles sort the same either way.
#[derive(Clone, Debug)]
pub struct ParticleGrid {
    /// Smallest corner of the domain, metres.
    pub origin: DVec3,
    /// Cell edge, metres (the kernel's support over [`REACH`], `h`).
    pub cell: f64,
    /// Cells along x, y, z.
    pub dims: [usize; 3],
    /// The box of cells holding particles at the last sort: its first cell along x, y, z...
    first: [usize; 3],
    /// ...and its size along each (0 when no particle is left).
    span: [usize; 3],
    /// `start[c]..start[c + 1]`: the sorted particles in cell `c` of the box.
    start: Vec<u32>,
    /// Scratch of [`ParticleGrid::sort`]: each particle's cell along x, y, z, and where the
    /// next particle of each cell goes.
    cells: Vec<Option<[usize; 3]>>,
    fill: Vec<u32>,
}

impl ParticleGrid {
    /// The grid over `lo..hi` with cells of `cell` metres, or `None` when it would have more
    /// than `max_cells` cells.
    pub fn new(lo: DVec3, hi: DVec3, cell: f64, max_cells: usize) -> Option<Self> {
        let dims = [0, 1, 2].map(|k| (((hi[k] - lo[k]) / cell).ceil() as usize).max(1));
        let n = dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d))?;
        (n <= max_cells).then(|| Self {
            origin: lo,
            cell,
            dims,
            first: [0; 3],
            span: [0; 3],
            start: vec![0],
            cells: Vec::new(),
            fill: Vec::new(),
        })
    }

    /// The cell holding `p` (along x, y, z), or `None` outside the domain.
    #[inline]
    pub fn cell_of(&self, p: DVec3) -> Option<[usize; 3]> {
        let mut idx = [0usize; 3];
        for k in 0..3 {
            let c = ((p[k] - self.origin[k]) / self.cell).floor();
            if !(c >= 0.0 && c < self.dims[k] as f64) {
                return None;
            }
            idx[k] = c as usize;
        }
        Some(idx)
    }

    /// Sorts the particles by cell (stable: within a cell they keep their order) and returns the
    /// permutation `order[new] = old`; particles outside the domain are left out.
    pub fn sort(&mut self, positions: &[DVec3]) -> Vec<u32> {
        let mut cells = std::mem::take(&mut self.cells);
        cells.clear();
        cells.extend(positions.iter().map(|&p| self.cell_of(p)));
        let (mut lo, mut hi) = ([usize::MAX; 3], [0usize; 3]);
        for c in cells.iter().flatten() {
            for k in 0..3 {
                (lo[k], hi[k]) = (lo[k].min(c[k]), hi[k].max(c[k]));
            }
        }
        (self.first, self.span) =
            if lo[0] <= hi[0] { (lo, [0, 1, 2].map(|k| hi[k] - lo[k] + 1)) } else { ([0; 3], [0; 3]) };
        let (first, span) = (self.first, self.span);
        let key = |c: &[usize; 3]| ((c[2] - first[2]) * span[1] + (c[1] - first[1])) * span[0] + (c[0] - first[0]);
        self.start.clear();
        self.start.resize(span.iter().product::<usize>() + 1, 0);
        for c in cells.iter().flatten() {
            self.start[key(c) + 1] += 1;
        }
        for i in 1..self.start.len() {
            self.start[i] += self.start[i - 1];
        }
        self.fill.clear();
        self.fill.extend_from_slice(&self.start);
        let mut order = vec![0u32; *self.start.last().unwrap_or(&0) as usize];
        for (i, c) in cells.iter().enumerate() {
            if let Some(c) = c {
                let k = key(c);
                order[self.fill[k] as usize] = i as u32;
                self.fill[k] += 1;
            }
        }
        self.cells = cells;
        order
    }

    /// Calls `f(j)` for every sorted particle `j` in the cells within [`REACH`] cells of `p`'s
    /// (the kernel's support is `REACH` cells), in cell order.
    #[inline]
    pub fn for_near(&self, p: DVec3, mut f: impl FnMut(usize)) {
        self.for_runs(p, |run| {
            for j in run {
                f(j as usize);
            }
        });
    }

    /// Calls `f` with each run of sorted particles (one row of cells along x) that
    /// [`ParticleGrid::for_near`] visits, in order.
    #[inline]
    pub fn for_runs(&self, p: DVec3, mut f: impl FnMut(std::ops::Range<u32>)) {
        let rel = (p - self.origin) / self.cell;
        let c = [0, 1, 2].map(|k| floor(rel[k]));
        // in cells: the support's radius, and how far `p` is from a cell `k` away along an axis
        let reach2 = (REACH * REACH) as f64;
        let gap = |k: usize, cell: i64| {
            let (lo, hi) = (cell as f64, (cell + 1) as f64);
            if rel[k] < lo {
                lo - rel[k]
            } else if rel[k] > hi {
                rel[k] - hi
            } else {
                0.0
            }
        };
        // cells outside the box of particles are empty
        let (first, span) = (self.first.map(|f| f as i64), self.span.map(|s| s as i64));
        for z in c[2] - REACH..=c[2] + REACH {
            if z < first[2] || z >= first[2] + span[2] {
                continue;
            }
            let gz = gap(2, z);
            for y in c[1] - REACH..=c[1] + REACH {
                if y < first[1] || y >= first[1] + span[1] {
                    continue;
                }
                // rows and cells the support cannot reach are skipped (their particles would
                // all be rejected): the order of those visited stays the cells' order
                let gy = gap(1, y);
                let room = reach2 - gz * gz - gy * gy;
                if room <= 0.0 {
                    continue;
                }
                let row = (((z - first[2]) * span[1] + (y - first[1])) * span[0]) as usize;
                // the row's end cells only when the support reaches into them (no square root
                // or rounding per row: those cost more than the candidates they saved)
                let (gl, gr) = (gap(0, c[0] - REACH), gap(0, c[0] + REACH));
                let x0 = (c[0] - REACH + i64::from(gl * gl >= room)).max(first[0]);
                let x1 = (c[0] + REACH - i64::from(gr * gr >= room)).min(first[0] + span[0] - 1);
                if x0 > x1 {
                    continue;
                }
                // the cells along x are one contiguous run
                let (x0, x1) = ((x0 - first[0]) as usize, (x1 - first[0]) as usize);
                f(self.start[row + x0]..self.start[row + x1 + 1]);
            }
        }
    }
}

/// `x.floor()` as an integer, without a libm call (the baseline x86-64 target has no rounding
/// instruction).
#[inline]
fn floor(x: f64) -> i64 {
    let t = x as i64;
    if (t as f64) > x { t - 1 } else { t }
}

/// Each particle's neighbours within the kernel's support (itself included), in the grid's
/// cell order, found once per iteration: the forces, the continuity equation and the density
/// filter all visit the same pairs (positions do not change between them), and a scan of the
/// 5 x 5 x 5 cells rejects ~4 candidates for each neighbour it finds.
#[derive(Clone, Debug, Default)]
pub struct NeighbourLists {
    start: Vec<u32>,
    list: Vec<u32>,
}

impl NeighbourLists {
    /// Rebuilds the lists for the particles at `positions`, sorted into `grid`, within
    /// `support` metres (the buffers are kept from one iteration to the next: a fresh 3 MB list
    /// each iteration cost its page faults).
    pub fn rebuild(&mut self, grid: &ParticleGrid, positions: &[DVec3], support: f64) {
        use rayon::prelude::*;
        let support2 = support * support;
        let chunks: Vec<(Vec<u32>, Vec<u32>)> = positions
            .par_chunks(256)
            .map(|chunk| {
                let (mut counts, mut list) = (Vec::with_capacity(chunk.len()), Vec::with_capacity(chunk.len() * 64));
                for &x in chunk {
                    let before = list.len();
                    let mut len = before;
                    grid.for_runs(x, |run| {
                        // every candidate written, kept by advancing past it: no branch to
                        // mispredict on the ~1 in 4 that are in reach
                        list.resize(len + run.len(), 0);
                        for j in run {
                            list[len] = j;
                            len += usize::from((x - positions[j as usize]).length_squared() < support2);
                        }
                    });
                    list.truncate(len);
                    counts.push((len - before) as u32);
                }
                (counts, list)
            })
            .collect();
        let (start, list) = (&mut self.start, &mut self.list);
        start.clear();
        list.clear();
        start.push(0u32);
        let mut total = 0;
        for (counts, part) in chunks {
            for n in counts {
                total += n;
                start.push(total);
            }
            list.extend_from_slice(&part);
        }
    }

    /// The neighbours of particle `i` (itself included).
    #[inline]
    pub fn of(&self, i: usize) -> &[u32] {
        &self.list[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    #[test]
    fn lists_hold_every_particle_in_reach_as_brute_force_finds_them() {
        let mut rng = SplitMix64::keyed(3, 0);
        let (lo, hi, h) = (DVec3::ZERO, DVec3::new(2.0, 1.5, 1.0), 0.05);
        let mut grid = ParticleGrid::new(lo, hi, 2.0 * h / REACH as f64, 1 << 24).unwrap();
        let mut lists = NeighbourLists::default();
        for (round, (a, b)) in
            [(DVec3::new(0.3, 0.2, 0.1), DVec3::new(0.7, 0.6, 0.4)), (lo, hi)].into_iter().enumerate()
        {
            // a cluster (the box of occupied cells is a small part of the domain) and a few
            // particles outside the domain, which the sort leaves out
            let mut positions: Vec<DVec3> =
                (0..3000).map(|_| a + (b - a) * DVec3::new(rng.next_f64(), rng.next_f64(), rng.next_f64())).collect();
            positions.extend([DVec3::new(-0.1, 0.5, 0.5), DVec3::new(0.5, 1.6, 0.5), DVec3::new(2.5, 2.0, -1.0)]);
            let order = grid.sort(&positions);
            assert_eq!(order.len(), 3000, "round {round}: the three outside are left out");
            let sorted: Vec<DVec3> = order.iter().map(|&i| positions[i as usize]).collect();
            let support = 2.0 * h;
            lists.rebuild(&grid, &sorted, support);
            for (i, &x) in sorted.iter().enumerate() {
                let brute: Vec<u32> = (0..sorted.len() as u32)
                    .filter(|&j| (x - sorted[j as usize]).length_squared() < support * support)
                    .collect();
                assert_eq!(lists.of(i), &brute[..], "round {round}: particle {i} at {x}");
            }
            // from points outside the box of particles (and outside the domain) too
            for p in [lo, hi, a - DVec3::splat(0.06), b + DVec3::splat(0.02), DVec3::new(-0.05, 0.3, 0.2)] {
                let mut found = Vec::new();
                grid.for_near(p, |j| found.push(j));
                found.retain(|&j| (p - sorted[j]).length_squared() < support * support);
                let brute: Vec<usize> =
                    (0..sorted.len()).filter(|&j| (p - sorted[j]).length_squared() < support * support).collect();
                assert_eq!(found, brute, "round {round}: near {p}");
            }
        }
    }
}
