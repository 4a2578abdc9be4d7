//! Regular 2-D grids of cells: the shape every heightfield model works on.

use crate::error::GridError;

/// Size of one cell in metres, per axis. Cells need not be square: a geographic DEM can have
/// e.g. 92 m x 71 m cells.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CellSize {
    /// Extent of a cell along x (columns), metres.
    pub x: f64,
    /// Extent of a cell along y (rows), metres.
    pub y: f64,
}

impl CellSize {
    /// Square cells of `size` metres.
    pub fn square(size: f64) -> Self {
        Self { x: size, y: size }
    }

    /// Area of one cell, square metres.
    pub fn area(&self) -> f64 {
        self.x * self.y
    }

    /// The smallest cell side accepted, m: finer, the models' steps underflow (no terrain is
    /// sampled finer than 0.1 mm).
    pub const MIN: f64 = 1e-4;
    /// The largest cell side accepted, m (10,000 km): coarser, they overflow.
    pub const MAX: f64 = 1e7;

    /// Refuses a side that is not a finite number of metres from [`CellSize::MIN`] to
    /// [`CellSize::MAX`]: the one check of a cell size, wherever it comes from (a flag, a
    /// file's metadata, a checkpoint, Python).
    pub fn check(&self) -> Result<(), GridError> {
        let ok = |v: f64| (Self::MIN..=Self::MAX).contains(&v);
        if ok(self.x) && ok(self.y) { Ok(()) } else { Err(GridError::BadCellSize { x: self.x, y: self.y }) }
    }
}

impl Default for CellSize {
    /// One metre square.
    fn default() -> Self {
        Self::square(1.0)
    }
}

/// A `width x height` grid stored row-major: cell `(row, col)` is `data[row * width + col]`,
/// row 0 is the north (top) edge, as in image files.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid<T> {
    width: usize,
    height: usize,
    cell_size: CellSize,
    data: Vec<T>,
}

impl<T> Grid<T> {
    /// Wraps `data` (row-major, `width * height` values).
    pub fn from_vec(width: usize, height: usize, cell_size: CellSize, data: Vec<T>) -> Result<Self, GridError> {
        if width == 0 || height == 0 {
            return Err(GridError::Empty { width, height });
        }
        cell_size.check()?;
        let expected = width.checked_mul(height).ok_or(GridError::TooLarge { width, height })?;
        if data.len() != expected {
            return Err(GridError::LengthMismatch { width, height, len: data.len() });
        }
        Ok(Self { width, height, cell_size, data })
    }

    /// Builds a grid by calling `f(row, col)` for every cell.
    pub fn from_fn(
        width: usize,
        height: usize,
        cell_size: CellSize,
        mut f: impl FnMut(usize, usize) -> T,
    ) -> Result<Self, GridError> {
        if width == 0 || height == 0 {
            return Err(GridError::Empty { width, height });
        }
        let n = width.checked_mul(height).ok_or(GridError::TooLarge { width, height })?;
        let mut data = Vec::with_capacity(n);
        for row in 0..height {
            for col in 0..width {
                data.push(f(row, col));
            }
        }
        Self::from_vec(width, height, cell_size, data)
    }

    /// Number of columns.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Number of rows.
    pub fn height(&self) -> usize {
        self.height
    }

    /// Number of cells, `width * height`.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Always false: a grid has at least one cell.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Cell size in metres.
    pub fn cell_size(&self) -> CellSize {
        self.cell_size
    }

    /// Replaces the cell size (metres per cell along each axis).
    pub fn set_cell_size(&mut self, cell_size: CellSize) -> Result<(), GridError> {
        cell_size.check()?;
        self.cell_size = cell_size;
        Ok(())
    }

    /// Row-major values.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// Row-major values, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// The values, consuming the grid.
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }

    /// Index of `(row, col)` in the row-major data.
    #[inline]
    pub fn index(&self, row: usize, col: usize) -> usize {
        row * self.width + col
    }

    /// The value at `(row, col)`, or `None` outside the grid.
    pub fn get(&self, row: usize, col: usize) -> Option<&T> {
        if row < self.height && col < self.width { self.data.get(row * self.width + col) } else { None }
    }

    /// One row of values.
    pub fn row(&self, row: usize) -> &[T] {
        &self.data[row * self.width..(row + 1) * self.width]
    }

    /// A grid of the same shape holding `f` of every value.
    pub fn map<U>(&self, f: impl FnMut(&T) -> U) -> Grid<U> {
        Grid {
            width: self.width,
            height: self.height,
            cell_size: self.cell_size,
            data: self.data.iter().map(f).collect(),
        }
    }

    /// True when `other` has the same width and height.
    pub fn same_shape<U>(&self, other: &Grid<U>) -> bool {
        self.width == other.width && self.height == other.height
    }
}

/// A terrain: heights in metres, and the cells the source marked as having no data.
#[derive(Clone, Debug, PartialEq)]
pub struct Heightmap {
    /// Heights in metres. Values at nodata cells are finite placeholders (the mean of the
    /// valid cells) so that nothing downstream meets a NaN; check [`Heightmap::is_nodata`].
    pub heights: Grid<f32>,
    nodata: Option<Vec<bool>>,
}

impl Heightmap {
    /// A heightmap with every cell valid. Refuses NaN or infinite heights.
    pub fn new(heights: Grid<f32>) -> Result<Self, GridError> {
        Self::with_nodata(heights, None)
    }

    /// A heightmap with a nodata mask (`true` = no data), same layout as `heights`.
    /// Valid cells must be finite; nodata cells may hold anything and are replaced by the
    /// mean of the valid cells.
    pub fn with_nodata(mut heights: Grid<f32>, nodata: Option<Vec<bool>>) -> Result<Self, GridError> {
        if let Some(mask) = nodata.as_ref().filter(|m| m.len() != heights.len()) {
            return Err(GridError::LengthMismatch {
                width: heights.width(),
                height: heights.height(),
                len: mask.len(),
            });
        }
        let mut valid = ValidCells::new(heights.width());
        valid.add(heights.as_slice(), nodata.as_deref());
        let fill = valid.fill()?;
        let nodata = nodata.filter(|m| m.iter().any(|&b| b));
        if let Some(mask) = &nodata {
            for (h, &m) in heights.as_mut_slice().iter_mut().zip(mask) {
                if m {
                    *h = fill;
                }
            }
        }
        Ok(Self { heights, nodata })
    }

    /// True when cell `i` (row-major index) has no data.
    pub fn is_nodata(&self, i: usize) -> bool {
        self.nodata.as_ref().is_some_and(|m| m[i])
    }

    /// The nodata mask, if any cell has no data.
    pub fn nodata_mask(&self) -> Option<&[bool]> {
        self.nodata.as_deref()
    }

    /// Number of nodata cells.
    pub fn nodata_count(&self) -> usize {
        self.nodata.as_ref().map_or(0, |m| m.iter().filter(|&&b| b).count())
    }

    /// Statistics over the valid cells: each row's, then the rows' folded in order (so that the
    /// owners of blocks of rows, each giving its rows' [`RowStats`], get the same bits).
    pub fn stats(&self) -> HeightStats {
        let w = self.heights.width();
        HeightStats::of_rows((0..self.heights.height()).map(|r| {
            let mask = self.nodata.as_ref().map(|m| &m[r * w..(r + 1) * w]);
            RowStats::of(self.heights.row(r), mask)
        }))
    }
}

/// The fold [`Heightmap::with_nodata`] runs over a map's cells in row-major order: the valid
/// cells' serial f64 sum and count, and the first cell that is neither finite nor nodata. Fed a
/// block of rows at a time, in order, it gives the bits of the whole map's (what a reader that
/// never holds the whole map needs to fill its nodata cells as a heightmap does).
#[derive(Clone, Copy, Debug)]
pub struct ValidCells {
    width: usize,
    /// Cells added so far.
    cells: usize,
    sum: f64,
    valid: usize,
    bad: usize,
    first: Option<(usize, usize)>,
}

impl ValidCells {
    /// Nothing added yet, of a map `width` cells across.
    pub fn new(width: usize) -> Self {
        Self { width: width.max(1), cells: 0, sum: 0.0, valid: 0, bad: 0, first: None }
    }

    /// Continues over `heights`, the map's next cells in row-major order (`nodata[i]`: cell
    /// `i` of them has no data).
    pub fn add(&mut self, heights: &[f32], nodata: Option<&[bool]>) {
        for (i, &h) in heights.iter().enumerate() {
            if nodata.is_some_and(|m| m.get(i).copied().unwrap_or(false)) {
                continue;
            }
            if h.is_finite() {
                self.sum += f64::from(h);
                self.valid += 1;
            } else {
                self.bad += 1;
                let at = self.cells + i;
                self.first.get_or_insert((at / self.width, at % self.width));
            }
        }
        self.cells += heights.len();
    }

    /// The value the nodata cells take: the mean of the valid cells, metres. Refuses a map with
    /// a cell neither finite nor nodata (naming the first) or with no valid cell.
    pub fn fill(&self) -> Result<f32, GridError> {
        if let Some((row, col)) = self.first {
            return Err(GridError::NonFinite { count: self.bad, row, col });
        }
        if self.valid == 0 {
            return Err(GridError::AllNodata);
        }
        Ok((self.sum / self.valid as f64) as f32)
    }
}

/// One row's part of [`HeightStats`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowStats {
    /// Lowest valid height, or +inf.
    pub min: f32,
    /// Highest valid height, or -inf.
    pub max: f32,
    /// The valid heights' sum, in order.
    pub sum: f64,
    /// Valid cells.
    pub n: u64,
}

impl RowStats {
    /// The statistics of a row of `heights`, leaving out the cells `nodata` marks.
    pub fn of(heights: &[f32], nodata: Option<&[bool]>) -> Self {
        let mut s = Self { min: f32::INFINITY, max: f32::NEG_INFINITY, sum: 0.0, n: 0 };
        for (i, &h) in heights.iter().enumerate() {
            if nodata.is_some_and(|m| m[i]) {
                continue;
            }
            s.min = s.min.min(h);
            s.max = s.max.max(h);
            s.sum += f64::from(h);
            s.n += 1;
        }
        s
    }
}

impl HeightStats {
    /// The statistics of a map from its rows', in row order.
    pub fn of_rows(rows: impl IntoIterator<Item = RowStats>) -> Self {
        let (mut min, mut max, mut sum, mut n) = (f32::INFINITY, f32::NEG_INFINITY, 0.0f64, 0u64);
        for r in rows {
            min = min.min(r.min);
            max = max.max(r.max);
            sum += r.sum;
            n += r.n;
        }
        HeightStats { min, max, mean: sum / n.max(1) as f64, valid_cells: n as usize }
    }
}

/// Summary of a heightmap's valid cells, metres.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct HeightStats {
    /// Lowest height.
    pub min: f32,
    /// Highest height.
    pub max: f32,
    /// Mean height (f64 sums by row).
    pub mean: f64,
    /// Number of cells with data.
    pub valid_cells: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_vec_checks_shape_and_cell_size() {
        assert!(Grid::from_vec(2, 2, CellSize::square(1.0), vec![0.0f32; 3]).is_err());
        assert!(Grid::from_vec(0, 2, CellSize::square(1.0), Vec::<f32>::new()).is_err());
        assert!(Grid::from_vec(1, 1, CellSize { x: 0.0, y: 1.0 }, vec![0.0f32]).is_err());
        let g = Grid::from_vec(3, 2, CellSize { x: 92.0, y: 71.0 }, (0..6).collect()).unwrap();
        assert_eq!(g.get(1, 2), Some(&5));
        assert_eq!(g.get(2, 0), None);
        assert_eq!(g.row(1), &[3, 4, 5]);
        assert_eq!(g.cell_size().area(), 92.0 * 71.0);
    }

    #[test]
    fn valid_cells_by_rows_give_the_whole_maps_fill() {
        // a fill taken a block of rows at a time must be the bits a whole heightmap's is
        let (w, h) = (7, 9);
        let v: Vec<f32> = (0..w * h).map(|i| (i as f32 * 0.37).sin() * 1e3 + 1e-3 * i as f32).collect();
        let mask: Vec<bool> = (0..w * h).map(|i| i % 5 == 0).collect();
        let g = Grid::from_vec(w, h, CellSize::default(), v.clone()).unwrap();
        let whole = Heightmap::with_nodata(g, Some(mask.clone())).unwrap();
        let mut by_rows = ValidCells::new(w);
        for rows in [0..2, 2..3, 3..9] {
            let cells = rows.start * w..rows.end * w;
            by_rows.add(&v[cells.clone()], Some(&mask[cells]));
        }
        assert_eq!(by_rows.fill().unwrap().to_bits(), whole.heights.as_slice()[0].to_bits());
        // a non-finite cell is named by its place in the whole map, whichever block holds it
        let mut bad = v.clone();
        bad[4 * w + 3] = f32::NAN;
        bad[6 * w + 1] = f32::INFINITY;
        let mut by_rows = ValidCells::new(w);
        by_rows.add(&bad[..3 * w], None);
        by_rows.add(&bad[3 * w..], None);
        assert_eq!(by_rows.fill(), Err(GridError::NonFinite { count: 2, row: 4, col: 3 }));
        let mut none = ValidCells::new(w);
        none.add(&v[..w], Some(&[true; 7]));
        assert_eq!(none.fill(), Err(GridError::AllNodata));
    }

    #[test]
    fn heightmap_refuses_nan_with_position_unless_nodata() {
        let g = Grid::from_vec(3, 2, CellSize::default(), vec![0.0, 1.0, 2.0, f32::NAN, 4.0, f32::INFINITY]).unwrap();
        match Heightmap::new(g.clone()) {
            Err(GridError::NonFinite { count, row, col }) => assert_eq!((count, row, col), (2, 1, 0)),
            other => panic!("expected NonFinite, got {other:?}"),
        }
        let mask = vec![false, false, false, true, false, true];
        let hm = Heightmap::with_nodata(g, Some(mask)).unwrap();
        assert_eq!(hm.nodata_count(), 2);
        let s = hm.stats();
        assert_eq!((s.min, s.max, s.valid_cells), (0.0, 4.0, 4));
        // nodata cells are filled with the mean of the valid ones, never a cliff
        assert_eq!(hm.heights.as_slice()[3], 1.75);
    }
}
