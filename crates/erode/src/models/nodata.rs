//! Nodata in a heightmap model: the cells outside the domain, and what their edge does.

use crate::{Grid, SimError};

/// What the edge of a nodata hole does: nodata cells are outside the domain, never terrain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NodataBorder {
    /// No flow into the hole: water reflects, as at a closed map edge.
    Closed,
    /// Water (and its sediment) flowing into the hole leaves the domain, booked as outflow.
    Open,
}

/// The nodata mask a state keeps: `None` when no cell is nodata; a mask of another size than
/// `terrain` is refused.
pub(crate) fn nodata_mask(mask: Option<&[bool]>, terrain: &Grid<f32>) -> Result<Option<Vec<bool>>, SimError> {
    match mask {
        Some(m) if m.len() != terrain.len() => Err(SimError::MapShape {
            what: "nodata mask",
            got_w: m.len(),
            got_h: 1,
            want_w: terrain.width(),
            want_h: terrain.height(),
        }),
        Some(m) if m.contains(&true) => Ok(Some(m.to_vec())),
        _ => Ok(None),
    }
}
