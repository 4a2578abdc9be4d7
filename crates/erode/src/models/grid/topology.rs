//! Neighbours of a cell under each border rule, and the geometry of the pipes between them.

use std::ops::Range;
use std::sync::Arc;

use super::params::{Border, NodataBorder};
use crate::flow::neighbours::STEPS;
use crate::grid::CellSize;
use crate::par;

/// The direction of the neighbour table ([`STEPS`]) each pipe runs along: the same eight steps,
/// numbered in pairs so that `opposite(e) == e ^ 1` and the four axis pipes come first: E, W,
/// S, N, then the diagonals SE, NW, SW, NE. The flux maps, checkpoints and shaders store pipes
/// in this order.
pub const PIPE_STEPS: [usize; 8] = [0, 1, 2, 3, 4, 7, 5, 6];

/// Each pipe's row and column step ([`STEPS`] in [`PIPE_STEPS`] order). Rows grow southwards
/// (image order).
pub const DIRS: [(isize, isize); 8] = {
    let mut dirs = [(0, 0); 8];
    let mut e = 0;
    while e < 8 {
        dirs[e] = STEPS[PIPE_STEPS[e]];
        e += 1;
    }
    dirs
};

/// The direction pointing back.
#[inline]
pub const fn opposite(e: usize) -> usize {
    e ^ 1
}

/// Grid shape, border rules and the domain: answers "who is my neighbour in direction e", and
/// which columns of a row the interior kernels may compute without asking.
#[derive(Clone, Debug)]
pub struct Topology {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Border rule of the map's edges.
    pub border: Border,
    /// Border rule of the edges of nodata holes.
    pub nodata_border: NodataBorder,
    /// The cells outside the domain (nodata), if any, with each row's interior spans.
    domain: Option<Arc<Holes>>,
    /// `[(1, width − 1)]`: the interior span of a row without holes nearby.
    full: [(usize, usize); 1],
    /// The water surface and bed beyond the map's edges, where a larger map goes on (a tile's
    /// window): what an open edge's outflow sees instead of dry ground at the edge cell's level.
    beyond: Option<Arc<Beyond>>,
    /// Where the map is one block of a decomposed larger one: which of its rows it owns and how
    /// their sums join the other blocks' (see [`super::blocks`]).
    block: Option<Arc<super::blocks::Rows>>,
    /// The runs of columns a row's sums are taken over, in order (see [`SEGMENT`]).
    segments: Arc<[Range<usize>]>,
    /// Which of the runs count (a block's own columns; not its halos).
    counted: Range<usize>,
    /// Columns computed as at the map's edge whatever their neighbourhood: a wrapping map's
    /// first and last inside a block's window (so their sums add in the whole map's order).
    edge_columns: [usize; 2],
}

/// Columns of the map's segments: a row's sums (the books) are summed within each segment of
/// this many columns, counted from the map's first, and then over the segments in order. A
/// block of a map's columns that starts at a segment's edge therefore adds up to the same bits
/// as the whole row: the order of the sums depends on the map, not on how it is cut.
pub const SEGMENT: usize = 1024;

/// Levels on the ring of cells around a map, m: `(height + 2) × (width + 2)` row-major with the
/// map at (1, 1); NaN where nothing goes on (the real edge of a larger map).
#[derive(Debug)]
struct Beyond {
    surface: Vec<f32>,
    bed: Vec<f32>,
}

/// Nodata cells and, per row, the runs of columns whose whole 3 × 3 neighbourhood is inside the
/// map and the domain.
#[derive(Debug)]
struct Holes {
    outside: Vec<bool>,
    spans: Vec<Vec<(usize, usize)>>,
}

impl Topology {
    /// A grid of `width` × `height` cells with `border` at its edges and no holes.
    pub fn new(width: usize, height: usize, border: Border) -> Self {
        Self {
            width,
            height,
            border,
            nodata_border: NodataBorder::Closed,
            domain: None,
            full: [(1, width.max(2) - 1)],
            beyond: None,
            block: None,
            segments: (0..width).step_by(SEGMENT).map(|a| a..(a + SEGMENT).min(width)).collect(),
            counted: 0..width.div_ceil(SEGMENT),
            edge_columns: [usize::MAX; 2],
        }
    }

    /// With the cells of `outside` (`true` = nodata, row-major) out of the domain, their edges
    /// `nodata_border`. No cell outside: the same as without.
    pub fn with_holes(mut self, outside: Option<&[bool]>, nodata_border: NodataBorder) -> Self {
        self.nodata_border = nodata_border;
        self.domain = outside.filter(|m| m.iter().any(|&o| o)).map(|m| {
            let (w, h) = (self.width, self.height);
            let spans = (0..h)
                .map(|r| {
                    let mut spans = Vec::new();
                    if r == 0 || r + 1 >= h || w < 3 {
                        return spans;
                    }
                    // a column is plain when its column and both beside it are valid in all three rows
                    let valid = |c: usize| (r - 1..=r + 1).all(|rr| !m[rr * w + c]);
                    let column: Vec<bool> = (0..w).map(valid).collect();
                    let mut c = 1;
                    while c + 1 < w {
                        if column[c - 1] && column[c] && column[c + 1] {
                            let a = c;
                            while c + 1 < w && column[c - 1] && column[c] && column[c + 1] {
                                c += 1;
                            }
                            spans.push((a, c));
                        } else {
                            c += 1;
                        }
                    }
                    spans
                })
                .collect();
            Arc::new(Holes { outside: m.to_vec(), spans })
        });
        self
    }

    /// With the water `surface` and `bed` beyond the edges, m (`(height + 2) × (width + 2)`
    /// row-major, the map at (1, 1); NaN where the edge is a real edge): an open edge's outflow
    /// then runs down to that surface, never up it (a lake cut by the edge stays; a river leaves
    /// as its steady flow would). Ignored when the sizes do not fit.
    pub fn with_beyond(mut self, surface: Vec<f32>, bed: Vec<f32>) -> Self {
        let n = (self.width + 2) * (self.height + 2);
        if surface.len() == n && bed.len() == n {
            self.beyond = Some(Arc::new(Beyond { surface, bed }));
        }
        self
    }

    /// The water surface and bed beyond the map's edge from `(row, col)` in direction `e`, where
    /// [`Topology::with_beyond`] gave them.
    #[inline]
    pub fn beyond_level(&self, row: usize, col: usize, e: usize) -> Option<(f32, f32)> {
        let b = self.beyond.as_ref()?;
        let (dr, dc) = DIRS[e];
        let (r, c) = (row as isize + dr + 1, col as isize + dc + 1);
        if r < 0 || c < 0 || r as usize >= self.height + 2 || c as usize >= self.width + 2 {
            return None;
        }
        let k = r as usize * (self.width + 2) + c as usize;
        let (surface, bed) = (b.surface[k], b.bed[k]);
        (surface.is_finite() && bed.is_finite()).then_some((surface, bed))
    }

    /// As one block of a decomposed map: its sums are those of its own `rows` only, joined with
    /// the other blocks' (see [`super::blocks`]).
    pub(super) fn with_block(mut self, rows: Arc<super::blocks::Rows>) -> Self {
        let (segments, counted) = rows.segments();
        (self.segments, self.counted) = (segments.into(), counted);
        let edges = rows.map_edge_columns();
        self.edge_columns = [edges.first().copied().unwrap_or(usize::MAX), edges.get(1).copied().unwrap_or(usize::MAX)];
        self.edge_columns.sort_unstable();
        self.block = Some(rows);
        self
    }

    /// The block of a decomposed map this map is, if it is one.
    pub(super) fn block(&self) -> Option<&super::blocks::Rows> {
        self.block.as_deref()
    }

    /// Calls `f(row, columns, rows_of_outs)` for every row and each of its segments' columns
    /// (see [`SEGMENT`] and `par::row_sums`) and returns the sums reduced over the whole map (see
    /// [`Topology::total`]): this map's, or with [`Topology::with_block`] every block's owned
    /// rows.
    pub(super) fn rows<const K: usize, T: Send, F>(&self, outs: &mut [&mut [T]], width: usize, f: F) -> par::Sums<K>
    where
        F: Fn(usize, Range<usize>, &mut [&mut [T]]) -> par::Sums<K> + Sync + Send,
    {
        let per_row = par::row_sums_with(outs, width, |r, out| {
            self.segments.iter().map(|cols| f(r, cols.clone(), out)).collect::<Vec<_>>()
        });
        self.total(&per_row.concat())
    }

    /// The runs of columns a row's sums are taken over, in order (see [`SEGMENT`]).
    pub(super) fn segments(&self) -> &[Range<usize>] {
        &self.segments
    }

    /// Sums of every row's segments (row by row, each row's [`Topology::segments`] in order),
    /// reduced over the whole map: each row's segments in order, then the rows in order (as on
    /// any number of threads); with [`Topology::with_block`], every block's owned cells.
    pub(super) fn total<const K: usize>(&self, sums: &[par::Sums<K>]) -> par::Sums<K> {
        let per_row = self.segments.len().max(1);
        match &self.block {
            None => super::state::fold_rows(sums, per_row),
            Some(block) => {
                let (all, per_map_row) = block.gather_sums(sums, per_row, &self.counted);
                super::state::fold_rows(&all, per_map_row)
            }
        }
    }

    /// The largest of `x` over the whole map: this one's, or every block's.
    pub(super) fn max(&self, x: f64) -> f64 {
        self.block.as_ref().map_or(x, |b| b.max(x))
    }

    /// Whether cell `i` is outside the domain (nodata).
    #[inline]
    pub fn is_outside(&self, i: usize) -> bool {
        self.domain.as_ref().is_some_and(|d| d.outside[i])
    }

    /// Whether any cell is outside the domain.
    pub fn has_holes(&self) -> bool {
        self.domain.is_some()
    }

    /// Index of the neighbour of `(row, col)` in direction `e`, or `None` across a closed or
    /// open edge, into or out of a nodata hole.
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
        let j = r as usize * self.width + c as usize;
        match &self.domain {
            Some(d) if d.outside[j] || d.outside[row * self.width + col] => None,
            _ => Some(j),
        }
    }

    /// Whether what leaves `(row, col)` in direction `e`, where [`Topology::neighbour`] has no
    /// cell, leaves the domain (an open edge, or the edge of a hole with open nodata borders)
    /// rather than being reflected. A cell outside the domain sends nothing anywhere.
    #[inline]
    pub fn open_beyond(&self, row: usize, col: usize, e: usize) -> bool {
        if self.is_outside(row * self.width + col) {
            return false;
        }
        let (dr, dc) = DIRS[e];
        let (r, c) = (row as isize + dr, col as isize + dc);
        let on_map =
            self.border == Border::Wrap || (r >= 0 && r < self.height as isize && c >= 0 && c < self.width as isize);
        if on_map { self.nodata_border == NodataBorder::Open } else { self.border == Border::Open }
    }

    /// The cell beside `(row, col)` in direction `e` for a gradient: the neighbour, or the cell
    /// itself across a closed or open edge or a hole (the edge replicated).
    #[inline]
    pub fn beside(&self, row: usize, col: usize, e: usize) -> usize {
        self.neighbour(row, col, e).unwrap_or(row * self.width + col)
    }

    /// Index clamped into the grid (replicating edges) or wrapped: for back-traced positions.
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

    /// The runs `a..z` of the columns `cols` of row `r` the interior kernels compute: every cell
    /// of them and its 8 neighbours lie inside the map and the domain. Every other column of
    /// `cols` goes through [`Topology::neighbour`] ([`Topology::border_columns`]).
    #[inline]
    pub fn interior_spans(&self, r: usize, cols: &Range<usize>) -> Spans<'_> {
        Spans { spans: self.row_spans(r).iter(), cols: cols.clone(), edges: self.edge_columns, rest: None }
    }

    /// The runs of [`Topology::interior_spans`] over the whole row.
    #[inline]
    fn row_spans(&self, r: usize) -> &[(usize, usize)] {
        if self.block.as_ref().is_some_and(|b| b.is_map_edge(r)) {
            // the whole map's first or last row inside a block of a wrapping map: computed as
            // the whole map's run computes it, so that its sums add in the same order
            return &[];
        }
        match &self.domain {
            Some(d) => &d.spans[r],
            None if r == 0 || r + 1 >= self.height || self.width < 3 => &[],
            None => &self.full,
        }
    }

    /// The columns of `cols` of row `r` outside its [`Topology::interior_spans`], in order.
    pub fn border_columns(&self, r: usize, cols: &Range<usize>) -> impl Iterator<Item = usize> + '_ {
        let (from, to) = (cols.start, cols.end);
        let starts = std::iter::once(from).chain(self.interior_spans(r, cols).map(|s| s.1));
        let ends = self.interior_spans(r, cols).map(|s| s.0).chain(std::iter::once(to));
        starts.zip(ends).flat_map(|(a, z)| a..z)
    }

    /// All the columns of a row.
    pub fn all_columns(&self) -> Range<usize> {
        0..self.width
    }
}

/// The interior spans of a row's columns (see [`Topology::interior_spans`]): the row's spans
/// clipped to the columns asked for, less the edge columns inside them.
pub struct Spans<'a> {
    spans: std::slice::Iter<'a, (usize, usize)>,
    cols: Range<usize>,
    /// Columns cut out of the spans (`usize::MAX`: none), in order.
    edges: [usize; 2],
    /// What is left of a span after an edge column.
    rest: Option<(usize, usize)>,
}

impl Iterator for Spans<'_> {
    type Item = (usize, usize);

    #[inline]
    fn next(&mut self) -> Option<(usize, usize)> {
        loop {
            let (a, z) = match self.rest.take() {
                Some(span) => span,
                None => {
                    let &(a, z) = self.spans.next()?;
                    (a.max(self.cols.start), z.min(self.cols.end))
                }
            };
            if a >= z {
                continue;
            }
            match self.edges.iter().find(|&&e| e >= a && e < z) {
                Some(&e) => {
                    self.rest = Some((e + 1, z));
                    if a < e {
                        return Some((a, e));
                    }
                }
                None => return Some((a, z)),
            }
        }
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
    /// The columns `a − 1 ..= z` of the three rows: a view whose [`Tri::centre`] is columns
    /// `a..z` (`0 < a`, `z < width`).
    #[inline(always)]
    pub fn span(&self, a: usize, z: usize) -> Self {
        let cut = |row: &'a [f32]| &row[a - 1..z + 1];
        Self { up: cut(self.up), mid: cut(self.mid), down: cut(self.down) }
    }

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
