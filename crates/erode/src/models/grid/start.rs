//! The water a run starts with. A dry start spends most of a run filling pits and waiting for
//! rain to reach the rivers (crossing a 1024-cell map takes thousands of steps), so erosion
//! follows where the water happens to be, not the drainage. The other starts begin where a long
//! rain would have left the terrain:
//!
//! - `lakes`: every closed depression full to its spill height (Priority-Flood, Barnes et al.
//!   2014);
//! - `steady` (the default): the lakes, and on every other cell the depth that carries its share
//!   of the steady discharge of rain and sources, `q = Q/w` (`Q` their inflow over the cell's D8
//!   catchment, `w` the cell width), under
//!   the friction law: `u = √(g·h·S/Cf)`, so `h = (q·√(Cf/(g·S)))^(2/3)` with `S` the D8 slope
//!   (at least [`MIN_SLOPE`]); without friction, the critical depth `(q²/g)^(1/3)`.
//!
//! Fluxes start at zero; friction brings the flow to its terminal speed within seconds.

use rayon::prelude::*;

use super::params::{Params, StartWater};
use crate::analysis::flow;
use crate::flow::{Domain, fill};
use crate::grid::Grid;

/// Slope below which the steady depth is computed as at this slope (flats and lake outlets).
pub const MIN_SLOPE: f64 = 1e-3;

/// The starting depth of every cell of `terrain` (m), or `None` for a dry start. `inflow` is the
/// water each cell receives, m/s of depth (rain and sources); `nodata` marks cells outside the
/// domain.
pub fn start_water(terrain: &Grid<f32>, nodata: Option<&[bool]>, params: &Params, inflow: &[f64]) -> Option<Vec<f32>> {
    if params.start_water == StartWater::Dry {
        return None;
    }
    let domain = Domain { width: terrain.width(), height: terrain.height(), cell: terrain.cell_size(), nodata };
    let z = terrain.as_slice();
    let filled = fill::priority_flood(&domain, z);
    if params.start_water == StartWater::Lakes {
        return Some(filled.spill.par_iter().zip(z).map(|(s, z)| s - z).collect());
    }
    let d8 = flow::d8(&domain, &filled.routed);
    let cell_area = domain.cell.area();
    let discharge = flow::d8_accumulate(&domain, &d8, |i| inflow[i] * cell_area);
    let width = domain.cell.x.min(domain.cell.y);
    let depth = (0..z.len()).into_par_iter().map(|i| {
        let lake = filled.spill[i] - z[i];
        if !domain.inside(i) || lake > 0.0 {
            return lake;
        }
        let q = discharge[i] / width;
        let slope = match d8.receiver[i] {
            flow::NONE => MIN_SLOPE,
            r => ((filled.routed[i] - filled.routed[r as usize]) / f64::from(d8.length[i])).max(MIN_SLOPE),
        };
        let h = if params.friction > 0.0 {
            (q * (params.friction / (params.gravity * slope)).sqrt()).powf(2.0 / 3.0)
        } else {
            (q * q / params.gravity).cbrt()
        };
        h as f32
    });
    Some(depth.collect())
}
