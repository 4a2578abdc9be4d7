//! Terrain analysis: what a landscape's drainage and relief say about how it was made.
//!
//! `erode analyze` prints these figures, every model's docs report them for their pictures, and
//! the stream-power model routes its water with the same functions.
//!
//! | figure | what it shows |
//! | --- | --- |
//! | slope–area fit ([`slope_area`]) | `S = ks·A^−θ` over channels: θ ≈ 0.35–0.6 in fluvial landscapes, ≈ 0.1 in noise |
//! | drainage density | channel length per area, km/km² (channels: drainage area >= `channel_area_cells`) |
//! | hypsometric integral | `(mean − min)/(max − min)`: ~0.5 young, lower when worn down |
//! | closed depressions ([`depressions`]) | pits per km²: erosion models that pock-mark a terrain raise it |
//! | fine relief ([`relief`]) | RMS of the terrain minus its blur (σ = 2 cells), m: blur lowers it |
//! | axis/diagonal power ([`relief`]) | ~1 without preferred direction, above 1 for grooves along the grid |
//!
//! Steps: depressions filled by Priority-Flood + ε (Barnes, Lehman & Mulla 2014, [`fill`]), D8
//! and Freeman's (1991) multiple-flow-direction routing and drainage areas ([`flow`]), slope
//! (Horn 1981) and curvature (Zevenbergen & Thorne 1987, [`surface`]).
//!
//! Nodata cells are outside the domain: flow that reaches them leaves the map there, as it does
//! across the map's edge ([`crate::flow::domain`]), and they never count as terrain.

pub mod compare;
pub mod depressions;
pub mod flow;
pub mod relief;
pub mod slope_area;
pub mod surface;

use serde::Serialize;

use crate::error::AnalysisError;
pub use crate::flow::Domain;
use crate::flow::fill;
use crate::grid::Heightmap;
pub use depressions::Depressions;
pub use slope_area::{Bin, Fit};

/// What to measure with. Every field names its unit and default.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Smallest drainage area of the slope–area fit, cells. Default 100.
    pub min_area_cells: f64,
    /// Drainage area from which a cell is a channel (drainage density, the channel map, fine
    /// relief outside channels), cells. Default 100.
    pub channel_area_cells: f64,
    /// Depth a closed depression needs to be counted, m. Default 0.01.
    pub depression_depth: f64,
    /// Whether to keep the maps (drainage areas, slope, curvature) in the result. Default false.
    pub maps: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self { min_area_cells: 100.0, channel_area_cells: 100.0, depression_depth: 0.01, maps: false }
    }
}

impl Options {
    /// Checks every field; the error names the first one out of range.
    pub fn validate(&self) -> Result<(), AnalysisError> {
        let bad = |name, value, expected| Err(AnalysisError::Option { name, value, expected });
        if !(self.min_area_cells.is_finite() && self.min_area_cells >= 1.0) {
            return bad("min_area_cells", self.min_area_cells, "a number of cells >= 1");
        }
        if !(self.channel_area_cells.is_finite() && self.channel_area_cells >= 1.0) {
            return bad("channel_area_cells", self.channel_area_cells, "a number of cells >= 1");
        }
        if !(self.depression_depth.is_finite() && self.depression_depth >= 0.0) {
            return bad("depression_depth", self.depression_depth, "a depth >= 0 m");
        }
        Ok(())
    }
}

/// Heights of the valid cells.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Relief {
    /// Lowest, m.
    pub min: f64,
    /// Highest, m.
    pub max: f64,
    /// 1st percentile, m.
    pub p1: f64,
    /// 99th percentile, m.
    pub p99: f64,
    /// Mean, m.
    pub mean: f64,
}

/// Fine relief (see [`relief`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FineRelief {
    /// RMS over every valid cell, m.
    pub all_m: f64,
    /// RMS over the cells that are not channels (drainage area below `channel_area_cells`), m;
    /// `None` when every cell is a channel.
    pub hillslopes_m: Option<f64>,
    /// Power along the grid's axes over power along the diagonals, at wavelengths of 2–10 cells;
    /// `None` on maps under 8 x 8 cells or without fine relief.
    pub axis_to_diagonal: Option<f64>,
}

/// Drainage (D8).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Drainage {
    /// Drainage area from which a cell is a channel, cells.
    pub channel_area_cells: f64,
    /// Channel length per area, km/km².
    pub density_per_km: f64,
    /// Cells that are channels.
    pub channel_cells: usize,
    /// Largest drainage area, m².
    pub max_area_m2: f64,
}

/// Every figure of an analysis (what `erode analyze --json` prints). Never NaN: what cannot be
/// measured is `None`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figures {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Cell size along x, m.
    pub cell_size_x: f64,
    /// Cell size along y, m.
    pub cell_size_y: f64,
    /// Cells with data.
    pub valid_cells: usize,
    /// Area of the valid cells, km².
    pub area_km2: f64,
    /// Heights.
    pub relief: Relief,
    /// `(mean − min)/(max − min)`; `None` on a flat map.
    pub hypsometric_integral: Option<f64>,
    /// Mean slope (Horn), m/m.
    pub mean_slope: f64,
    /// The 99th percentile of slope (Horn), m/m: how steep the steepest 1 % of the terrain is
    /// (cliffs and scarps, what thermal erosion wears back).
    pub steep_slope: f64,
    /// The slope–area fit; `None` when fewer than three area bins have enough channel cells.
    pub slope_area: Option<Fit>,
    /// The bins behind the fit (for plots).
    pub slope_area_bins: Vec<Bin>,
    /// Drainage.
    pub drainage: Drainage,
    /// Closed depressions.
    pub depressions: Depressions,
    /// Fine relief.
    pub fine_relief: FineRelief,
}

/// Maps of an analysis, row-major like the input (0 outside the domain).
#[derive(Clone, Debug, PartialEq)]
pub struct Maps {
    /// D8 drainage area, m².
    pub drainage_area: Vec<f32>,
    /// Multiple-flow-direction drainage area (Freeman 1991), m².
    pub drainage_area_mfd: Vec<f32>,
    /// Slope, m/m.
    pub slope: Vec<f32>,
    /// Profile curvature, 1/m.
    pub profile_curvature: Vec<f32>,
    /// Plan curvature, 1/m.
    pub plan_curvature: Vec<f32>,
    /// Depth of the closed depression a cell lies in, m.
    pub depression_depth: Vec<f32>,
    /// Fine relief (the terrain minus its blur), m.
    pub fine_relief: Vec<f32>,
    /// (drainage area m², slope m/m) of every cell the slope–area fit could use, before its
    /// area and slope limits: what a slope–area plot draws.
    pub slope_area_samples: Vec<(f64, f64)>,
}

/// Figures, and the maps when asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// The figures.
    pub figures: Figures,
    /// The maps, when [`Options::maps`] is set.
    pub maps: Option<Maps>,
}

/// A finite value or `None`.
fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// Analyses `map` (heights in metres, cell sizes from the map).
pub fn analyze(map: &Heightmap, options: &Options) -> Result<Analysis, AnalysisError> {
    options.validate()?;
    let g = &map.heights;
    let domain = Domain { width: g.width(), height: g.height(), cell: g.cell_size(), nodata: map.nodata_mask() };
    let valid = domain.valid_cells();
    if valid == 0 {
        return Err(AnalysisError::NoData);
    }
    let z = g.as_slice();
    let cell_area = domain.cell.area();

    // the flood is serial: the local measures run beside it
    let ((filled, d8, area), (surface, fine, axis_to_diagonal)) = rayon::join(
        || {
            let filled = fill::priority_flood(&domain, z);
            let d8 = flow::d8(&domain, &filled.routed);
            let area = flow::d8_area(&domain, &d8);
            (filled, d8, area)
        },
        || {
            let fine = relief::fine_relief(&domain, z);
            let axis = relief::axis_to_diagonal_power(&domain, &fine).and_then(finite);
            (surface::surface(&domain, z), fine, axis)
        },
    );

    let min_area = options.min_area_cells * cell_area;
    let samples: Vec<(f64, f64)> = d8
        .order
        .iter()
        .map(|&i| i as usize)
        .filter(|&i| d8.receiver[i] != flow::NONE && filled.spill[i] <= z[i])
        .map(|i| (area[i], (filled.routed[i] - filled.routed[d8.receiver[i] as usize]) / f64::from(d8.length[i])))
        .collect();
    let (bins, fit) = slope_area::fit(&samples, min_area);

    let channel_area = options.channel_area_cells * cell_area;
    let (mut channel_cells, mut channel_length) = (0usize, 0.0f64);
    for &i in &d8.order {
        let i = i as usize;
        if area[i] >= channel_area {
            channel_cells += 1;
            channel_length +=
                if d8.receiver[i] == flow::NONE { domain.cell.x.min(domain.cell.y) } else { f64::from(d8.length[i]) };
        }
    }
    let area_km2 = valid as f64 * cell_area / 1e6;

    let mut heights: Vec<f32> = (0..domain.len()).filter(|&i| domain.inside(i)).map(|i| z[i]).collect();
    let mean = heights.iter().map(|&v| f64::from(v)).sum::<f64>() / heights.len() as f64;
    let mut pct = |p: f64| {
        let k = ((heights.len() - 1) as f64 * p).round() as usize;
        f64::from(*heights.select_nth_unstable_by(k, f32::total_cmp).1)
    };
    let (lo, hi, p1, p99) = (pct(0.0), pct(1.0), pct(0.01), pct(0.99));
    let mut slopes: Vec<f32> = (0..domain.len()).filter(|&i| domain.inside(i)).map(|i| surface.slope[i]).collect();
    let mean_slope = slopes.iter().map(|&v| f64::from(v)).sum::<f64>() / valid as f64;
    let steep_slope = {
        let k = ((slopes.len() - 1) as f64 * 0.99).round() as usize;
        f64::from(*slopes.select_nth_unstable_by(k, f32::total_cmp).1)
    };

    let figures = Figures {
        width: domain.width,
        height: domain.height,
        cell_size_x: domain.cell.x,
        cell_size_y: domain.cell.y,
        valid_cells: valid,
        area_km2,
        relief: Relief { min: lo, max: hi, p1, p99, mean },
        hypsometric_integral: (hi > lo).then(|| (mean - lo) / (hi - lo)).and_then(finite),
        mean_slope,
        steep_slope,
        slope_area: fit,
        slope_area_bins: bins,
        drainage: Drainage {
            channel_area_cells: options.channel_area_cells,
            density_per_km: channel_length / 1e3 / area_km2,
            channel_cells,
            max_area_m2: area.iter().copied().fold(0.0, f64::max),
        },
        depressions: depressions::depressions(&domain, z, &filled.spill, options.depression_depth),
        fine_relief: FineRelief {
            all_m: relief::rms(&fine, |i| domain.inside(i)).unwrap_or(0.0),
            hillslopes_m: relief::rms(&fine, |i| domain.inside(i) && area[i] < channel_area),
            axis_to_diagonal,
        },
    };
    // the D8 graph's buffers go before the MFD graph is built (the peak memory of `maps`)
    drop(d8);
    let maps = options.maps.then(|| Maps {
        drainage_area: area.iter().map(|&a| a as f32).collect(),
        drainage_area_mfd: flow::mfd_area(&domain, &filled.routed).iter().map(|&a| a as f32).collect(),
        slope: surface.slope,
        profile_curvature: surface.profile_curvature,
        plan_curvature: surface.plan_curvature,
        depression_depth: (0..domain.len()).map(|i| filled.spill[i] - z[i]).collect(),
        fine_relief: fine,
        slope_area_samples: samples,
    });
    Ok(Analysis { figures, maps })
}
