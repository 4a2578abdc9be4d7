//! Neighbours of a cell under each border rule, and the geometry of the pipes between them.

use super::params::Border;
use crate::grid::CellSize;

/// Pipe directions, paired so that `opposite(e) == e ^ 1`: E, W, S, N, then the diagonals
/// SE, NW, SW, NE. Rows grow southwards (image order).
pub const DIRS: [(isize, isize); 8] = [(0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (-1, -1), (1, -1), (-1, 1)];

/// The direction pointing back.
#[inline]
pub const fn opposite(e: usize) -> usize {
    e ^ 1
}

/// Grid shape and border rule: answers "who is my neighbour in direction e".
#[derive(Clone, Copy, Debug)]
pub struct Topology {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Border rule.
    pub border: Border,
}

impl Topology {
    /// Index of the neighbour of `(row, col)` in direction `e`, or `None` across a closed or
    /// open edge.
    #[inline]
    pub fn neighbour(&self, row: usize, col: usize, e: usize) -> Option<usize> {
        let (dr, dc) = DIRS[e];
        let (h, w) = (self.height as isize, self.width as isize);
        let (mut r, mut c) = (row as isize + dr, col as isize + dc);
        if self.border == Border::Wrap {
            r = r.rem_euclid(h);
            c = c.rem_euclid(w);
        } else if r < 0 || r >= h || c < 0 || c >= w {
            return None;
        }
        Some(r as usize * self.width + c as usize)
    }

    /// Index clamped into the grid (replicating edges) or wrapped: for gradients.
    #[inline]
    pub fn clamped(&self, row: isize, col: isize) -> usize {
        let (h, w) = (self.height as isize, self.width as isize);
        let (r, c) = if self.border == Border::Wrap {
            (row.rem_euclid(h), col.rem_euclid(w))
        } else {
            (row.clamp(0, h - 1), col.clamp(0, w - 1))
        };
        r as usize * self.width + c as usize
    }
}

/// Length of the pipe in direction `e`: the distance between cell centres, m.
pub fn pipe_length(cell: CellSize, e: usize) -> f64 {
    match e {
        0 | 1 => cell.x,
        2 | 3 => cell.y,
        _ => cell.x.hypot(cell.y),
    }
}

/// Unit vector (x east, y south) of direction `e`.
pub fn unit(cell: CellSize, e: usize) -> (f64, f64) {
    let (dr, dc) = DIRS[e];
    let (x, y) = (dc as f64 * cell.x, dr as f64 * cell.y);
    let n = x.hypot(y);
    (x / n, y / n)
}
