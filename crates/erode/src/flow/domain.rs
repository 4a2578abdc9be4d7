//! The cells an analysis works on: a grid of heights, its cell size, and which cells hold data.
//! Nodata cells are outside the domain: flow that reaches them leaves the map there, exactly as
//! it leaves across the map's edge, and no stencil reads them as terrain.

use super::neighbours::{distances, neighbour_on};
use crate::grid::CellSize;

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

    /// Distance between the centres of a cell and its neighbour in each direction of
    /// [`STEPS`](super::neighbours::STEPS), m.
    pub fn distances(&self) -> [f64; 8] {
        distances(self.cell)
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
