//! Neighbour search on a uniform grid: particles sorted by cell (cells of half the kernel's
//! support), so a particle's neighbours lie in the 5 x 5 x 5 cells around its own, each row of
//! five a contiguous run (fewer candidates than 3 x 3 x 3 cells of the whole support: 125 h³
//! against 216 h³ of space searched for a support of 2h).

use glam::DVec3;

/// How many cells the kernel's support spans.
pub const REACH: i64 = 2;

/// The cells of the fluid's domain and, once particles are sorted, where each cell's run starts.
#[derive(Clone, Debug)]
pub struct ParticleGrid {
    /// Smallest corner of the domain, metres.
    pub origin: DVec3,
    /// Cell edge, metres (the kernel's support over [`REACH`], `h`).
    pub cell: f64,
    /// Cells along x, y, z.
    pub dims: [usize; 3],
    /// `start[c]..start[c + 1]`: the sorted particles in cell `c`.
    pub start: Vec<u32>,
}

impl ParticleGrid {
    /// The grid over `lo..hi` with cells of `cell` metres, or `None` when it would have more
    /// than `max_cells` cells.
    pub fn new(lo: DVec3, hi: DVec3, cell: f64, max_cells: usize) -> Option<Self> {
        let dims = [0, 1, 2].map(|k| (((hi[k] - lo[k]) / cell).ceil() as usize).max(1));
        let n = dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d))?;
        (n <= max_cells).then(|| Self { origin: lo, cell, dims, start: vec![0; n + 1] })
    }

    /// The cell holding `p`, or `None` outside the domain.
    #[inline]
    pub fn cell_of(&self, p: DVec3) -> Option<usize> {
        let mut idx = [0usize; 3];
        for k in 0..3 {
            let c = ((p[k] - self.origin[k]) / self.cell).floor();
            if !(c >= 0.0 && c < self.dims[k] as f64) {
                return None;
            }
            idx[k] = c as usize;
        }
        Some((idx[2] * self.dims[1] + idx[1]) * self.dims[0] + idx[0])
    }

    /// Sorts the particles by cell (stable: within a cell they keep their order) and returns the
    /// permutation `order[new] = old`; particles outside the domain are left out.
    pub fn sort(&mut self, positions: &[DVec3]) -> Vec<u32> {
        let cells: Vec<Option<usize>> = positions.iter().map(|&p| self.cell_of(p)).collect();
        self.start.iter_mut().for_each(|s| *s = 0);
        for c in cells.iter().flatten() {
            self.start[c + 1] += 1;
        }
        for i in 1..self.start.len() {
            self.start[i] += self.start[i - 1];
        }
        let mut fill = self.start.clone();
        let mut order = vec![0u32; *self.start.last().unwrap_or(&0) as usize];
        for (i, c) in cells.iter().enumerate() {
            if let Some(c) = c {
                order[fill[*c] as usize] = i as u32;
                fill[*c] += 1;
            }
        }
        order
    }

    /// Calls `f(j)` for every sorted particle `j` in the cells within [`REACH`] cells of `p`'s
    /// (the kernel's support is `REACH` cells), in cell order.
    #[inline]
    pub fn for_near(&self, p: DVec3, mut f: impl FnMut(usize)) {
        let c = [0, 1, 2].map(|k| ((p[k] - self.origin[k]) / self.cell).floor() as i64);
        for z in c[2] - REACH..=c[2] + REACH {
            if z < 0 || z >= self.dims[2] as i64 {
                continue;
            }
            for y in c[1] - REACH..=c[1] + REACH {
                if y < 0 || y >= self.dims[1] as i64 {
                    continue;
                }
                let row = (z as usize * self.dims[1] + y as usize) * self.dims[0];
                let x0 = (c[0] - REACH).max(0) as usize;
                let x1 = ((c[0] + REACH).min(self.dims[0] as i64 - 1)) as usize;
                if x0 > x1 {
                    continue;
                }
                // the cells along x are one contiguous run
                for j in self.start[row + x0]..self.start[row + x1 + 1] {
                    f(j as usize);
                }
            }
        }
    }
}
