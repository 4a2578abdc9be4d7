//! The cells an analysis works on: a grid of heights, its cell size, and which cells hold data.
//! Nodata cells are outside the domain: flow that reaches them leaves the map there, exactly as
//! it leaves across the map's edge, and no stencil reads them as terrain.

use crate::grid::CellSize;

/// Row and column steps of the eight neighbours: east, west, south, north, then the diagonals
/// south-east, south-west, north-east, north-west. Rows grow southwards.
pub const STEPS: [(isize, isize); 8] = [(0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (1, -1), (-1, 1), (-1, -1)];

/// The neighbour of cell `i` in direction `k` of [`STEPS`] on a `width` x `height` grid, if on it.
#[inline]
pub fn neighbour_on(width: usize, height: usize, i: usize, k: usize) -> Option<usize> {
    let (r, c) = ((i / width) as isize, (i % width) as isize);
    let (dr, dc) = STEPS[k];
    let (nr, nc) = (r + dr, c + dc);
    if nr < 0 || nc < 0 || nr >= height as isize || nc >= width as isize {
        None
    } else {
        Some(nr as usize * width + nc as usize)
    }
}

/// A grid of cells, some of them outside the domain.
#[derive(Clone, Copy, Debug)]
pub struct Domain<'a> {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Cell size, m.
    pub cell: CellSize,
    /// `true` for cells without data (outside the domain); `None` when every cell has data.
    pub nodata: Option<&'a [bool]>,
}

impl Domain<'_> {
    /// Number of cells, inside the domain or not.
    pub fn len(&self) -> usize {
        self.width * self.height
    }

    /// Always false: a domain has at least one cell.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether cell `i` is inside the domain.
    #[inline]
    pub fn inside(&self, i: usize) -> bool {
        self.nodata.is_none_or(|m| !m[i])
    }

    /// Distance between the centres of a cell and its neighbour in direction `k` of [`STEPS`], m.
    pub fn distance(&self, k: usize) -> f64 {
        match k {
            0 | 1 => self.cell.x,
            2 | 3 => self.cell.y,
            _ => self.cell.x.hypot(self.cell.y),
        }
    }

    /// The eight distances of [`Domain::distance`].
    pub fn distances(&self) -> [f64; 8] {
        std::array::from_fn(|k| self.distance(k))
    }

    /// The neighbour of cell `i` in direction `k` when it is on the map (inside the domain or not).
    #[inline]
    pub fn neighbour(&self, i: usize, k: usize) -> Option<usize> {
        neighbour_on(self.width, self.height, i, k)
    }

    /// Whether water can leave the domain from cell `i` (inside it): the cell is on the map's edge
    /// or next to a nodata cell.
    pub fn is_edge(&self, i: usize) -> bool {
        (0..8).any(|k| self.neighbour(i, k).is_none_or(|j| !self.inside(j)))
    }

    /// Number of cells inside the domain.
    pub fn valid_cells(&self) -> usize {
        self.nodata.map_or(self.len(), |m| m.iter().filter(|&&v| !v).count())
    }
}
