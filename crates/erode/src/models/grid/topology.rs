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

/// Three rows of a field around an interior row: neighbours by direction without any border
/// logic, so the interior loops of the stages vectorise. Only for `0 < row < height − 1` and
/// `0 < col < width − 1`; border cells go through [`Topology::neighbour`].
#[derive(Clone, Copy)]
pub struct Tri<'a> {
    up: &'a [f32],
    mid: &'a [f32],
    down: &'a [f32],
}

impl<'a> Tri<'a> {
    /// From three rows of equal length.
    #[inline]
    pub fn new(up: &'a [f32], mid: &'a [f32], down: &'a [f32]) -> Self {
        Self { up, mid, down }
    }

    /// Rows `row − 1`, `row`, `row + 1` of `field`.
    #[inline]
    pub fn of(field: &'a [f32], width: usize, row: usize) -> Self {
        let at = |r: usize| &field[r * width..(r + 1) * width];
        Self { up: at(row - 1), mid: at(row), down: at(row + 1) }
    }

    /// The cell itself.
    #[inline(always)]
    pub fn here(&self, c: usize) -> f32 {
        self.mid[c]
    }

    /// The neighbour in direction `e` (see [`DIRS`]).
    #[inline(always)]
    pub fn at(&self, c: usize, e: usize) -> f32 {
        match e {
            0 => self.mid[c + 1],
            1 => self.mid[c - 1],
            2 => self.down[c],
            3 => self.up[c],
            4 => self.down[c + 1],
            5 => self.up[c - 1],
            6 => self.down[c - 1],
            _ => self.up[c + 1],
        }
    }
}

impl<'a> Tri<'a> {
    /// The interior columns `1..width − 1` of the row (`n = width − 2` values).
    #[inline(always)]
    pub fn centre(&self) -> &'a [f32] {
        let n = self.mid.len() - 2;
        &self.mid[1..1 + n]
    }

    /// For the interior columns, the neighbours in direction `e`, as a slice aligned with
    /// [`Tri::centre`]: element `k` is the neighbour of column `k + 1`.
    #[inline(always)]
    pub fn shifted(&self, e: usize) -> &'a [f32] {
        let n = self.mid.len() - 2;
        let (row, start) = match e {
            0 => (self.mid, 2),
            1 => (self.mid, 0),
            2 => (self.down, 1),
            3 => (self.up, 1),
            4 => (self.down, 2),
            5 => (self.up, 0),
            6 => (self.down, 0),
            _ => (self.up, 2),
        };
        &row[start..start + n]
    }
}

/// Rows `row − 1`, `row` and `row + 1` of one field, wherever they live (the whole array, a band
/// of rows, a copy): what a stage needs of a field it reads around a row. Across a closed or
/// open edge the missing row is never read (the topology has no neighbour there); with wrap
/// borders it is the row on the other side.
#[derive(Clone, Copy)]
pub struct Around<'a> {
    up: &'a [f32],
    mid: &'a [f32],
    down: &'a [f32],
    /// Flat index of the first cell of each row (`up`, `mid`, `down`).
    starts: [usize; 3],
}

impl<'a> Around<'a> {
    /// From the three rows (`up`/`down` may be any row of the right length where they do not
    /// exist).
    #[inline]
    pub fn new(up: &'a [f32], mid: &'a [f32], down: &'a [f32], row: usize, height: usize) -> Self {
        let w = mid.len();
        let above = if row > 0 { row - 1 } else { height - 1 };
        let below = if row + 1 < height { row + 1 } else { 0 };
        Self { up, mid, down, starts: [above * w, row * w, below * w] }
    }

    /// Around `row` of a whole field.
    #[inline]
    pub fn of(field: &'a [f32], topo: &Topology, row: usize) -> Self {
        let (w, h) = (topo.width, topo.height);
        let at = |r: usize| &field[r * w..(r + 1) * w];
        let up = if row > 0 { at(row - 1) } else { at(h - 1) };
        let down = if row + 1 < h { at(row + 1) } else { at(0) };
        Self::new(up, at(row), down, row, h)
    }

    /// The value at flat index `j`, which must lie in one of the three rows (as every neighbour
    /// the topology returns does).
    #[inline]
    pub fn at(&self, j: usize) -> f32 {
        let w = self.mid.len();
        let [up, mid, down] = self.starts;
        if j >= mid && j < mid + w {
            self.mid[j - mid]
        } else if j >= up && j < up + w {
            self.up[j - up]
        } else {
            self.down[j - down]
        }
    }

    /// Row `row` itself.
    #[inline]
    pub fn mid(&self) -> &'a [f32] {
        self.mid
    }

    /// As a [`Tri`], for the interior kernels.
    #[inline]
    pub fn tri(&self) -> Tri<'a> {
        Tri::new(self.up, self.mid, self.down)
    }
}
