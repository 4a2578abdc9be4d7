//! What the user tunes in the droplet model, in metres and seconds: the same parameters give the
//! same terrain change on a map sampled at any cell size. [`StepRule`] turns them into what one
//! step of one cell does on a given map.

use crate::error::ParamError;
use crate::grid::CellSize;
use crate::models::info::ParamDoc;
pub use crate::models::nodata::NodataBorder;

/// What happens at the map's edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Border {
    /// A droplet leaving the map steps onto the ground beyond the edge (the input's slope
    /// there continued, fixed), then takes its sediment with it (booked as outflow).
    Open,
    /// A droplet reaching the edge stops there and deposits its load.
    Closed,
    /// The map is a torus.
    Wrap,
}

/// Droplet model parameters (Beyer 2015, in physical units; names as the CLI's `--set` uses
/// them). A droplet is the rain of one cell; it moves one cell per step, and every rate is per
/// metre of its path, so a map at half the cell size takes twice the steps to the same effect.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Path length over which a droplet's heading turns to the downhill direction, m (0: always
    /// straight downhill). Default 2.
    pub inertia_length: f64,
    /// Sediment capacity: cell-heights of sediment (m) a droplet carries per unit slope (m/m)
    /// and unit speed (m/s), at its starting water. Default 0.2.
    pub capacity: f64,
    /// Smallest slope used for the capacity (m/m), so droplets on flat ground still carry some.
    /// Default 0.01.
    pub min_slope: f64,
    /// Path length over which a droplet drops 63 % of its load above capacity, m. Default 20.
    pub deposition_length: f64,
    /// Path length over which a droplet takes 63 % of its free capacity from the ground, m.
    /// Default 10.
    pub erosion_length: f64,
    /// Gravity, m/s²: `speed² ← speed² − 2·g·Δh` over a step. Default 9.81.
    pub gravity: f64,
    /// Path length over which a droplet loses 63 % of its speed² to friction, m: with it, speed
    /// follows the slope (`speed² → 2·g·slope·friction_length`) instead of growing with every
    /// metre of drop. Default 50.
    pub friction_length: f64,
    /// Path length over which a droplet loses 63 % of its water, m. Default 100.
    pub evaporation_length: f64,
    /// Longest path a droplet takes, m. Default 150.
    pub max_distance: f64,
    /// Erosion brush radius, m (weights fall linearly to 0 there; below about one cell the
    /// droplet erodes its 4 corners bilinearly). Default 4.
    pub radius: f64,
    /// Speed a droplet starts with, m/s. Default 1.
    pub initial_speed: f64,
    /// How the capacity grows with the drainage area the droplets trace: `× (1 + A /
    /// discharge_area)^discharge_exponent`, where `A` is the droplet paths crossing the cell per
    /// droplet started on each cell (so far), times the cell area, m². A river carries more
    /// than a rill, as in stream-power laws; 0 is Beyer's droplet, blind to where others went.
    /// Default 0.7.
    pub discharge_exponent: f64,
    /// The drainage area at which the capacity has grown by `2^discharge_exponent`, m². Default
    /// 200.
    pub discharge_area: f64,
    /// Share (0..1) of each batch's terrain change spread over the 3 x 3 cells around where it
    /// happened (a binomial blur), against the single-cell pits of bilinear deposits; volume is
    /// kept to the quantum. Default 0.5.
    pub smoothing: f64,
    /// Erosion never digs below this height, metres (the floor against drain valleys). Default:
    /// none (`-inf`); the CLI's default is the input's lowest height.
    pub min_height: f64,
    /// Erodibility of hardness 1 relative to hardness 0 (0..1): with a hardness map, a cell of
    /// hardness `H` yields `1 − H·(1 − rock_erodibility)` of its brush share (as in the grid
    /// model). Default 0.1.
    pub rock_erodibility: f64,
    /// Edge rule. Default open.
    pub border: Border,
    /// The edges of nodata holes: open, a droplet reaching one leaves with its sediment (booked
    /// as outflow); closed, it stops there and deposits its load. Default open.
    pub nodata_border: NodataBorder,
    /// Droplets scheduled together: split by the band of rows they start in, bands far enough
    /// apart run in parallel (see `droplet::cpu`); the smoothing runs after each batch. 1 runs
    /// the droplets strictly one after the other. Results do not depend on the thread count
    /// either way; stopping at a multiple of it and resuming gives a straight run's result.
    /// Default 16384.
    pub batch_size: u32,
    /// Seed: droplet `i` draws from `SplitMix64::keyed(seed, i)`. Default 0.
    pub seed: u64,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            inertia_length: 2.0,
            capacity: 0.2,
            min_slope: 0.01,
            deposition_length: 20.0,
            erosion_length: 10.0,
            gravity: 9.81,
            friction_length: 50.0,
            evaporation_length: 100.0,
            max_distance: 150.0,
            radius: 4.0,
            initial_speed: 1.0,
            discharge_exponent: 0.7,
            discharge_area: 200.0,
            smoothing: 0.5,
            min_height: f64::NEG_INFINITY,
            rock_erodibility: 0.1,
            border: Border::Open,
            nodata_border: NodataBorder::Open,
            batch_size: 16384,
            seed: 0,
        }
    }
}

/// Most steps a droplet may take (a path longer than this many cells is refused).
pub const MAX_STEPS: f64 = 100_000.0;
/// Largest brush, cells.
pub const MAX_RADIUS_CELLS: f64 = 64.0;

/// Fewest cells a droplet's path (`max_distance`) should cross: on coarser cells a droplet
/// stops before it can gather water and sediment, and the run changes little.
pub const MIN_PATH_CELLS: f64 = 10.0;

impl Params {
    /// A note when `cell` is too coarse for these droplets' path (see [`MIN_PATH_CELLS`]).
    pub fn scale_note(&self, cell: crate::CellSize) -> Option<crate::models::ScaleNote> {
        let size = cell.x.max(cell.y);
        let largest = self.max_distance / MIN_PATH_CELLS;
        (size > largest).then(|| crate::models::ScaleNote {
            model: "droplet",
            cell: size,
            fits: (0.0, largest),
            why: format!(
                "a droplet travels at most {} m (max_distance), {:.1} cells, so the run changes little",
                self.max_distance,
                self.max_distance / size
            ),
            instead: Some("grid"),
        })
    }

    /// These parameters with the floor (`min_height`) at `lowest`, the input's lowest height in
    /// metres, when they leave it unset (−∞): what every front end runs, so the same parameters
    /// erode the same input alike in each.
    pub fn with_floor_at(self, lowest: f64) -> Self {
        if self.min_height == f64::NEG_INFINITY { Self { min_height: lowest, ..self } } else { self }
    }

    /// Checks every field; the error names the first one out of range.
    pub fn validate(&self) -> Result<(), ParamError> {
        fn check(ok: bool, name: &'static str, value: f64, expected: &'static str) -> Result<(), ParamError> {
            if ok { Ok(()) } else { Err(ParamError { name, value, expected }) }
        }
        let unit = |v: f64| (0.0..=1.0).contains(&v);
        let length = |v: f64| v.is_finite() && v >= 0.0;
        let positive = |v: f64| v.is_finite() && v > 0.0;
        check(length(self.inertia_length), "inertia_length", self.inertia_length, ">= 0 m")?;
        check(length(self.capacity), "capacity", self.capacity, ">= 0")?;
        check(length(self.min_slope), "min_slope", self.min_slope, ">= 0")?;
        check(positive(self.deposition_length), "deposition_length", self.deposition_length, "> 0 m")?;
        check(positive(self.erosion_length), "erosion_length", self.erosion_length, "> 0 m")?;
        check(length(self.gravity), "gravity", self.gravity, ">= 0 m/s²")?;
        check(positive(self.friction_length), "friction_length", self.friction_length, "> 0 m")?;
        check(positive(self.evaporation_length), "evaporation_length", self.evaporation_length, "> 0 m")?;
        check(positive(self.max_distance), "max_distance", self.max_distance, "> 0 m")?;
        check(length(self.radius), "radius", self.radius, ">= 0 m")?;
        check(length(self.initial_speed), "initial_speed", self.initial_speed, ">= 0 m/s")?;
        check(
            self.discharge_exponent.is_finite() && (0.0..=4.0).contains(&self.discharge_exponent),
            "discharge_exponent",
            self.discharge_exponent,
            "0 to 4",
        )?;
        check(positive(self.discharge_area), "discharge_area", self.discharge_area, "> 0 m²")?;
        check(unit(self.smoothing), "smoothing", self.smoothing, "0 to 1")?;
        check(
            !self.min_height.is_nan() && self.min_height < f64::INFINITY,
            "min_height",
            self.min_height,
            "a height or -inf",
        )?;
        check(unit(self.rock_erodibility), "rock_erodibility", self.rock_erodibility, "0 to 1")?;
        check(self.batch_size >= 1, "batch_size", f64::from(self.batch_size), ">= 1")?;
        Ok(())
    }

    /// What one step does on a map of `cell` size (validated here): the lengths turned into
    /// shares per step, the brush and the path into cells. The error names the parameter whose
    /// length in cells is out of range on this map.
    pub fn step_rule(&self, cell: CellSize) -> Result<StepRule, ParamError> {
        self.validate()?;
        // a step crosses one cell; non-square cells count their geometric mean
        let step = (cell.x * cell.y).sqrt();
        let steps = (self.max_distance / step).ceil();
        if !steps.is_finite() || steps > MAX_STEPS {
            return Err(ParamError {
                name: "max_distance",
                value: self.max_distance,
                expected: "a path of at most 100,000 cells on this map",
            });
        }
        let radius = self.radius / step;
        if !radius.is_finite() || radius > MAX_RADIUS_CELLS {
            return Err(ParamError { name: "radius", value: self.radius, expected: "at most 64 cells on this map" });
        }
        let over = |length: f64| 1.0 - (-step / length).exp();
        // the heading mixes `keep·dir − (1 − keep)·slope`; per cell the gradient is `step`
        // times the slope, and only the ratio of the two terms matters once it is normalised
        let keep = (-step / self.inertia_length).exp();
        let inertia = step * keep / (step * keep + 1.0 - keep);
        Ok(StepRule {
            inertia: if inertia.is_finite() { inertia } else { 0.0 },
            capacity: self.capacity / step,
            min_drop: self.min_slope * step,
            erosion: over(self.erosion_length),
            deposition: over(self.deposition_length),
            evaporation: over(self.evaporation_length),
            speed_kept: 1.0 - over(self.friction_length),
            gravity: 2.0 * self.gravity,
            radius,
            steps: steps.max(1.0) as u32,
            initial_speed: self.initial_speed,
            floor: self.min_height,
        })
    }
}

/// What one droplet step of one cell does on a given map ([`Params::step_rule`]): Beyer's
/// step with these numbers. Heights in metres, lengths in cells.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepRule {
    /// Share of its heading a droplet keeps against the gradient per cell.
    pub inertia: f64,
    /// Capacity per metre of drop over a step, per unit speed and water: cell-heights.
    pub capacity: f64,
    /// Smallest drop over a step used for the capacity, m.
    pub min_drop: f64,
    /// Share of the free capacity eroded per step.
    pub erosion: f64,
    /// Share of the load above capacity dropped per step.
    pub deposition: f64,
    /// Share of the water lost per step.
    pub evaporation: f64,
    /// Share of speed² kept against friction per step.
    pub speed_kept: f64,
    /// `speed² ← speed² − gravity·Δh`: twice g.
    pub gravity: f64,
    /// Brush radius, cells.
    pub radius: f64,
    /// Most steps a droplet takes.
    pub steps: u32,
    /// Starting speed, m/s.
    pub initial_speed: f64,
    /// Erosion never digs below this height, m.
    pub floor: f64,
}

/// One line per parameter, in declaration order, for `erode params droplet`.
pub const PARAM_DOCS: &[ParamDoc] = &[
    ParamDoc::new(
        "inertia_length",
        "path over which a droplet's heading turns downhill, m (>= 0; 0 = straight downhill)",
    ).linear(0.0, 50.0, "m"),
    ParamDoc::new("capacity", "sediment carried per unit slope and speed, cell-heights in m per m/s (>= 0)").log(1e-3, 10.0, "m per m/s"),
    ParamDoc::new("min_slope", "smallest slope used in the capacity, m/m (>= 0)").log(1e-4, 0.5, "m/m"),
    ParamDoc::new("deposition_length", "path over which 63 % of the load above capacity drops, m (> 0)").log(0.5, 1000.0, "m"),
    ParamDoc::new("erosion_length", "path over which 63 % of the free capacity is eroded, m (> 0)").log(0.5, 1000.0, "m"),
    ParamDoc::new("gravity", "m/s^2: speed^2 <- speed^2 - 2*g*dh (>= 0)").linear(0.0, 20.0, "m/s^2"),
    ParamDoc::new("friction_length", "path over which 63 % of speed^2 is lost to friction, m (> 0)").log(1.0, 1e12, "m"),
    ParamDoc::new("evaporation_length", "path over which 63 % of the water evaporates, m (> 0)").log(1.0, 5000.0, "m"),
    ParamDoc::new("max_distance", "longest path of a droplet, m (> 0; at most 100,000 cells)").log(1.0, 5000.0, "m"),
    ParamDoc::new("radius", "erosion brush radius, m (>= 0; at most 64 cells; below ~1 cell: bilinear corners)").linear(0.0, 32.0, "m"),
    ParamDoc::new("initial_speed", "speed a droplet starts with, m/s (>= 0)").linear(0.0, 10.0, "m/s"),
    ParamDoc::new(
        "discharge_exponent",
        "capacity x (1 + A/discharge_area)^this, A the drainage area droplets traced (0..4; 0 = off)",
    ).linear(0.0, 4.0, ""),
    ParamDoc::new("discharge_area", "drainage area where the capacity has grown by 2^discharge_exponent, m^2 (> 0)").log(1.0, 1e6, "m^2"),
    ParamDoc::new("smoothing", "share of each batch's change spread over the 3 x 3 cells around it (0..1)").linear(0.0, 1.0, ""),
    ParamDoc::new(
        "min_height",
        "floor erosion never digs below, m (the CLI uses the input's lowest height when unset)",
    ),
    ParamDoc::new(
        "rock_erodibility",
        "erodibility at hardness 1 relative to hardness 0 (0..1): 1 - H*(1 - rock_erodibility)",
    ).linear(0.0, 1.0, ""),
    ParamDoc::new("border", "\"open\" (sediment leaves with the droplet), \"closed\" or \"wrap\"").choices(&["open", "closed", "wrap"]),
    ParamDoc::new("nodata_border", "edges of nodata holes: \"open\" (sediment leaves with the droplet) or \"closed\"").choices(&["open", "closed"]),
    ParamDoc::new("batch_size", "droplets scheduled together, in parallel where far apart, smoothed after (>= 1)"),
    ParamDoc::new("seed", "droplet i draws from SplitMix64::keyed(seed, i)"),
];

/// The named parameter sets, for `--preset`: (name, what it is for); the default first.
pub const PRESETS: &[(&str, &str)] = &[
    ("default", "rills and gullies on slopes, valleys kept (Params::default)"),
    ("gentle", "light weathering: a third of the default's capacity"),
    ("beyer", "the numbers of Beyer (2015) read at 1 m cells: no friction, no smoothing, long paths"),
];

/// The parameter set named `name` (see [`PRESETS`]); the error lists the known ones.
pub fn preset(name: &str) -> Result<Params, crate::models::presets::UnknownPreset> {
    let d = Params::default();
    match name {
        "default" => Ok(d),
        "gentle" => Ok(Params { capacity: 0.1, ..d }),
        "beyer" => Ok(Params::beyer()),
        _ => Err(crate::models::presets::UnknownPreset {
            model: "droplet",
            name: name.to_string(),
            known: PRESETS.iter().map(|p| p.0).collect::<Vec<_>>().join(", "),
        }),
    }
}

impl Params {
    /// Beyer's (2015) per-step numbers on 1 m cells: inertia 0.3, capacity 10 (per metre of
    /// drop, as `capacity` here), deposition 0.08, erosion 0.7 and evaporation 0.02 per step,
    /// speed² gaining `9.81·Δh` (his `speed² + Δh·g`: half our `2·g`), lifetime 300 steps,
    /// radius 5; each
    /// share `s` per step is a length `−1 m / ln(1 − s)`. No friction, no smoothing.
    pub fn beyer() -> Self {
        let per_step = |share: f64| -1.0 / (1.0 - share).ln();
        Self {
            inertia_length: -1.0 / 0.3f64.ln(),
            capacity: 10.0,
            min_slope: 0.01,
            deposition_length: per_step(0.08),
            erosion_length: per_step(0.7),
            gravity: 9.81 / 2.0,
            friction_length: 1e12,
            evaporation_length: per_step(0.02),
            max_distance: 300.0,
            radius: 5.0,
            initial_speed: 1.0,
            smoothing: 0.0,
            discharge_exponent: 0.0,
            ..Self::default()
        }
    }
}
