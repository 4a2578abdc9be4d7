//! The checks every heightmap model makes of its input maps: sizes that match the terrain,
//! values in range.

use crate::{Grid, SimError};

/// Refuses a map holding a value outside `lo..=hi` (NaN included), naming the first.
pub(crate) fn check_values(
    what: &'static str,
    g: &Grid<f32>,
    lo: f32,
    hi: f32,
    expected: &'static str,
) -> Result<(), SimError> {
    let check = ValueCheck::range(what, g, lo, hi, expected);
    match check.first_bad(0..g.len()) {
        None => Ok(()),
        Some((i, v)) => Err(check.error(i, v, g.width())),
    }
}

/// A test of every value of one input map, and the error that names the first to fail it: what
/// a start looks for in its inputs' cells, one map at a time (a run over ranks looks in each
/// rank's rows and names the first over all of them).
pub(crate) struct ValueCheck<'a> {
    cells: &'a [f32],
    test: Test,
}

enum Test {
    /// Heights: finite.
    Finite,
    /// A map's values: in `lo..=hi`.
    Range { what: &'static str, lo: f32, hi: f32, expected: &'static str },
}

impl<'a> ValueCheck<'a> {
    /// Heights must be finite.
    pub(crate) fn finite(heights: &'a Grid<f32>) -> Self {
        Self { cells: heights.as_slice(), test: Test::Finite }
    }

    /// Map `what`'s values must lie in `lo..=hi` (`expected` says so in words).
    pub(crate) fn range(what: &'static str, g: &'a Grid<f32>, lo: f32, hi: f32, expected: &'static str) -> Self {
        Self { cells: g.as_slice(), test: Test::Range { what, lo, hi, expected } }
    }

    /// The first of `cells` (indices into the map) that fails, with its value.
    pub(crate) fn first_bad(&self, cells: std::ops::Range<usize>) -> Option<(usize, f32)> {
        let bad = |v: f32| match self.test {
            Test::Finite => !v.is_finite(),
            Test::Range { lo, hi, .. } => !(lo..=hi).contains(&v),
        };
        let start = cells.start;
        self.cells.get(cells)?.iter().position(|&v| bad(v)).map(|k| (start + k, self.cells[start + k]))
    }

    /// The error naming cell `index` of value `value` of a map `width` cells wide.
    pub(crate) fn error(&self, index: usize, value: f32, width: usize) -> SimError {
        let (row, col) = (index / width.max(1), index % width.max(1));
        match self.test {
            Test::Finite => crate::error::GridError::NonFinite { count: 1, row, col }.into(),
            Test::Range { what, expected, .. } => {
                SimError::MapValue { what, value: f64::from(value), row, col, expected }
            }
        }
    }
}

/// Refuses a map of another size than `terrain`, naming it `what`.
pub(crate) fn check_shape(what: &'static str, g: &Grid<f32>, terrain: &Grid<f32>) -> Result<(), SimError> {
    if g.same_shape(terrain) {
        Ok(())
    } else {
        Err(SimError::MapShape {
            what,
            got_w: g.width(),
            got_h: g.height(),
            want_w: terrain.width(),
            want_h: terrain.height(),
        })
    }
}
