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
    match g.as_slice().iter().position(|v| !(lo..=hi).contains(v)) {
        None => Ok(()),
        Some(i) => Err(SimError::MapValue {
            what,
            value: f64::from(g.as_slice()[i]),
            row: i / g.width(),
            col: i % g.width(),
            expected,
        }),
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
