//! What a run keeps of the heightmap it began from to write and report its results: the map's
//! shape, its cell size, which cells are nodata and what its file said (georeference, nodata
//! value), without its heights. A run holds heights of its own; the input's would be a second
//! copy of the whole map for as long as it runs (over MPI ranks, on rank 0).

use erode::{CellSize, Grid, GridError, Heightmap};

use crate::{Loaded, SourceInfo};

/// A heightmap's shape, nodata cells and file's information, without its heights.
#[derive(Clone, Debug, PartialEq)]
pub struct Footprint {
    /// Cells across.
    pub width: usize,
    /// Cells down.
    pub height: usize,
    /// Cell size, metres.
    pub cell_size: CellSize,
    /// Which cells are nodata (`None`: none is).
    nodata: Option<Vec<bool>>,
    /// What the file said besides the heights.
    pub info: SourceInfo,
}

impl Footprint {
    /// The footprint of `map`, read with `info`.
    pub fn of(map: &Heightmap, info: SourceInfo) -> Self {
        let g = &map.heights;
        let nodata = map.nodata_mask().map(<[bool]>::to_vec);
        Self { width: g.width(), height: g.height(), cell_size: g.cell_size(), nodata, info }
    }

    /// The footprint of a map `width` x `height` of cells `cell_size`, read with `info`, whose
    /// cells `nodata` marks have no data (a mask marking none is none).
    pub fn new(width: usize, height: usize, cell_size: CellSize, nodata: Option<Vec<bool>>, info: SourceInfo) -> Self {
        let nodata = nodata.filter(|m| m.contains(&true));
        Self { width, height, cell_size, nodata, info }
    }

    /// The nodata mask, if any cell has no data.
    pub fn nodata_mask(&self) -> Option<&[bool]> {
        self.nodata.as_deref()
    }

    /// Number of nodata cells.
    pub fn nodata_count(&self) -> usize {
        self.nodata.as_ref().map_or(0, |m| m.iter().filter(|&&b| b).count())
    }

    /// `values` (row-major, metres) as a map of this footprint: its shape, cell size and nodata
    /// cells (which hold the mean of the others, as a heightmap's do).
    pub fn map_of(&self, values: Vec<f32>) -> Result<Heightmap, GridError> {
        self.grid_of(values).and_then(|g| Heightmap::with_nodata(g, self.nodata.clone()))
    }

    /// `values` (row-major) as a grid of this footprint's shape and cell size.
    pub fn grid_of(&self, values: Vec<f32>) -> Result<Grid<f32>, GridError> {
        Grid::from_vec(self.width, self.height, self.cell_size, values)
    }
}

impl From<Loaded> for Footprint {
    fn from(loaded: Loaded) -> Self {
        Self::of(&loaded.map, loaded.info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_footprint_keeps_the_shape_and_nodata_of_its_map_and_makes_maps_like_it() {
        let cell = CellSize { x: 2.0, y: 3.0 };
        let heights = Grid::from_vec(3, 2, cell, vec![1.0, 2.0, 9.0, 4.0, 5.0, 6.0]).unwrap();
        let mask = vec![false, false, true, false, false, false];
        let map = Heightmap::with_nodata(heights, Some(mask.clone())).unwrap();
        let loaded = crate::decode(
            &crate::encode(&map, crate::Format::Tiff, &Default::default()).unwrap(),
            crate::Format::Tiff,
            &Default::default(),
        )
        .unwrap();
        let footprint = Footprint::from(loaded.clone());
        assert_eq!((footprint.width, footprint.height, footprint.cell_size), (3, 2, cell));
        assert_eq!(footprint.nodata_mask(), Some(&mask[..]));
        assert_eq!(footprint.nodata_count(), 1);
        // (its nodata value a NaN, which equals nothing: compared as written)
        assert_eq!(format!("{:?}", footprint.info), format!("{:?}", loaded.info));
        // a map of other values with the same nodata cell, filled as a heightmap fills it
        let other = footprint.map_of(vec![10.0, 20.0, f32::NAN, 40.0, 50.0, 60.0]).unwrap();
        assert_eq!(other.nodata_mask(), Some(&mask[..]));
        assert_eq!(other.heights.as_slice()[2], 36.0);
        assert!(footprint.map_of(vec![0.0; 5]).is_err(), "values of another shape");
        let whole =
            Footprint::of(&Heightmap::new(Grid::from_vec(2, 1, cell, vec![1.0, 2.0]).unwrap()).unwrap(), loaded.info);
        assert_eq!((whole.nodata_mask(), whole.nodata_count()), (None, 0));
    }
}
