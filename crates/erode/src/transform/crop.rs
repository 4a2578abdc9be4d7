//! A window of a map, cell for cell.

use crate::error::TransformError;
use crate::grid::{Grid, Heightmap};

/// A window of cells: its top-left cell and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// First column.
    pub col: usize,
    /// First row.
    pub row: usize,
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
}

/// The cells of `map` inside `window`, with their nodata mask; the cell size is unchanged.
/// Refuses an empty window, one that leaves the map, and one holding nothing but nodata.
pub fn crop(map: &Heightmap, window: Window) -> Result<Heightmap, TransformError> {
    let g = &map.heights;
    let Window { col, row, width, height } = window;
    let fits = |start: usize, len: usize, size: usize| start.checked_add(len).is_some_and(|end| end <= size);
    if width == 0 || height == 0 || !fits(col, width, g.width()) || !fits(row, height, g.height()) {
        return Err(TransformError::Window { window, map_width: g.width(), map_height: g.height() });
    }
    let mut heights = Vec::with_capacity(width * height);
    let mut mask = map.nodata_mask().map(|_| Vec::with_capacity(width * height));
    for r in row..row + height {
        let start = g.index(r, col);
        heights.extend_from_slice(&g.as_slice()[start..start + width]);
        if let (Some(out), Some(m)) = (mask.as_mut(), map.nodata_mask()) {
            out.extend_from_slice(&m[start..start + width]);
        }
    }
    let grid = Grid::from_vec(width, height, g.cell_size(), heights)?;
    Ok(Heightmap::with_nodata(grid, mask)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CellSize;
    use crate::error::GridError;

    fn ramp() -> Heightmap {
        let g = Grid::from_fn(5, 4, CellSize { x: 2.0, y: 3.0 }, |r, c| (10 * r + c) as f32).unwrap();
        let mut mask = vec![false; 20];
        mask[7] = true;
        Heightmap::with_nodata(g, Some(mask)).unwrap()
    }

    #[test]
    fn a_window_keeps_its_cells_mask_and_cell_size() {
        let out = crop(&ramp(), Window { col: 1, row: 1, width: 3, height: 2 }).unwrap();
        assert_eq!((out.heights.width(), out.heights.height()), (3, 2));
        assert_eq!(out.heights.cell_size(), CellSize { x: 2.0, y: 3.0 });
        assert_eq!(out.heights.row(1), &[21.0, 22.0, 23.0]);
        // cell (1, 2) of the map was nodata: (0, 1) of the window
        assert!(out.is_nodata(1) && out.nodata_count() == 1);
    }

    #[test]
    fn empty_outside_or_all_nodata_windows_are_refused() {
        let map = ramp();
        for w in [
            Window { col: 0, row: 0, width: 0, height: 2 },
            Window { col: 3, row: 0, width: 3, height: 2 },
            Window { col: 0, row: 3, width: 1, height: 2 },
            Window { col: usize::MAX, row: 0, width: 2, height: 1 },
        ] {
            let err = crop(&map, w).unwrap_err();
            assert!(matches!(err, TransformError::Window { .. }), "{w:?}: {err}");
            assert!(err.to_string().contains("5 x 4"), "{err}");
        }
        let err = crop(&map, Window { col: 2, row: 1, width: 1, height: 1 }).unwrap_err();
        assert_eq!(err, TransformError::Grid(GridError::AllNodata));
    }
}
