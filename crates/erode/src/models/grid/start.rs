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

use super::params::{Params, RainMode, StartWater};
use crate::analysis::flow;
use crate::error::SimError;
use crate::flow::{Domain, fill};
use crate::grid::{CellSize, Grid};

/// Slope below which the steady depth is computed as at this slope (flats and lake outlets).
pub const MIN_SLOPE: f64 = 1e-3;

/// Water each cell receives, m/s of depth: the rain's mean rate (buckets drop as much as even
/// rain, in bursts) times the rain map, if any, plus the sources (see [`super::Source`]).
pub struct Inflow<'a> {
    rain: f64,
    map: Option<&'a [f32]>,
    /// Per cell, m/s (empty without sources).
    sources: Vec<f32>,
}

impl<'a> Inflow<'a> {
    /// The inflow of `params` on a map of `(width, height, cell size)` with `nodata` and a rain
    /// map `rain_map`.
    pub fn new(
        params: &Params,
        shape: (usize, usize, CellSize),
        nodata: Option<&[bool]>,
        rain_map: Option<&'a [f32]>,
    ) -> Result<Self, SimError> {
        let rain = match params.rain_mode {
            RainMode::Off => 0.0,
            _ => params.rain_rate,
        };
        // rounded to f32 as the steps add them
        let sources = super::cpu::source_rates_on(params, shape, nodata)?.into_iter().map(|v| v as f32).collect();
        Ok(Self { rain, map: rain_map, sources })
    }

    /// Cell `i`'s, m/s of depth.
    pub fn at(&self, i: usize) -> f64 {
        let r = self.map.map_or(1.0, |m| f64::from(m[i]));
        self.rain * r + self.sources.get(i).map_or(0.0, |&s| f64::from(s))
    }
}

/// The steady flow a run starts in: the depth of every cell (m) and the D8 routes the discharge
/// took, for those who carry it further (a run in tiles feeds each tile the water its upstream
/// neighbours send).
pub struct SteadyFlow {
    /// Water depth, m.
    pub depth: Vec<f32>,
    /// The D8 receiver of each cell ([`flow::NONE`] for outlets and cells outside).
    pub receiver: Vec<u32>,
    /// The steady discharge through each cell, m³/s.
    pub discharge: Vec<f64>,
}

/// The starting depth of every cell of `terrain` (m), or `None` for a dry start. `inflow` is the
/// water each cell receives (rain and sources); `nodata` marks cells outside the domain.
pub fn start_water(terrain: &Grid<f32>, nodata: Option<&[bool]>, params: &Params, inflow: &Inflow<'_>) -> Option<Vec<f32>> {
    match params.start_water {
        StartWater::Dry => None,
        StartWater::Lakes => {
            let domain = Domain { width: terrain.width(), height: terrain.height(), cell: terrain.cell_size(), nodata };
            let z = terrain.as_slice();
            let filled = fill::priority_flood(&domain, z);
            Some(filled.spill.par_iter().zip(z).map(|(s, z)| s - z).collect())
        }
        StartWater::Steady => Some(steady_flow(terrain, nodata, params, inflow).depth),
    }
}

/// The `steady` start (lakes full, the steady discharge elsewhere) with its routes.
pub fn steady_flow(terrain: &Grid<f32>, nodata: Option<&[bool]>, params: &Params, inflow: &Inflow<'_>) -> SteadyFlow {
    let domain = Domain { width: terrain.width(), height: terrain.height(), cell: terrain.cell_size(), nodata };
    let z = terrain.as_slice();
    let fill::Filled { spill, routed } = fill::priority_flood(&domain, z);
    // the lakes' depths, where the depth will be: the spill heights are done with
    let mut depth: Vec<f32> = spill.par_iter().zip(z).map(|(s, z)| s - z).collect();
    drop(spill);
    let mut d8 = flow::d8(&domain, &routed);
    // each cell's slope to its receiver, in place of its routed height: a cell's donors come
    // before it in the order, so its height is read by them all before it is overwritten (the
    // routed heights and the lengths are done with)
    let mut slope = routed;
    let length = std::mem::take(&mut d8.length);
    for &i in &d8.order {
        let i = i as usize;
        slope[i] = match d8.receiver[i] {
            flow::NONE => MIN_SLOPE,
            r => ((slope[i] - slope[r as usize]) / f64::from(length[i])).max(MIN_SLOPE),
        };
    }
    drop(length);
    let cell_area = domain.cell.area();
    let discharge = flow::d8_accumulate(&domain, &d8, |i| inflow.at(i) * cell_area);
    // the stack is done with (a gigabyte at 16384²)
    let flow::D8 { receiver, .. } = d8;
    let width = domain.cell.x.min(domain.cell.y);
    depth.par_iter_mut().enumerate().for_each(|(i, d)| {
        let lake = *d;
        if !domain.inside(i) || lake > 0.0 {
            return;
        }
        let q = discharge[i] / width;
        let slope = slope[i];
        let h = if params.friction > 0.0 {
            (q * (params.friction / (params.gravity * slope)).sqrt()).powf(2.0 / 3.0)
        } else {
            (q * q / params.gravity).cbrt()
        };
        *d = h as f32;
    });
    SteadyFlow { depth, receiver, discharge }
}
