//! What the user tunes in the droplet model. Positions and the brush radius are in cells;
//! heights in metres (the model treats a cell step as one unit of horizontal distance, as 002
//! does, so slopes are metres per cell).

use crate::error::ParamError;

/// What happens at the map's edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DropletBorder {
    /// A droplet leaving the map takes its sediment with it (booked as outflow).
    Open,
    /// A droplet reaching the edge stops there and deposits its load.
    Closed,
    /// The map is a torus.
    Wrap,
}

/// Droplet model parameters (Beyer 2015 as told in 002; names as the CLI's `--set` uses them).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DropletParams {
    /// How much of its direction a droplet keeps each step (0..1). Default 0.3 (002).
    pub inertia: f64,
    /// Sediment capacity factor (per metre of drop, per unit speed and water). Default 10 (002).
    pub capacity: f64,
    /// Smallest drop used for the capacity, metres per cell. Default 0.01.
    pub min_slope: f64,
    /// Share of the excess sediment dropped per step (0..1). Default 0.08 (002).
    pub deposition: f64,
    /// Share of the free capacity eroded per step (0..1). Default 0.7 (002).
    pub erosion: f64,
    /// Gravity in `speed² ← speed² − Δh·g`. Default 9.81 (002).
    pub gravity: f64,
    /// Share of water lost per step (0..1). Default 0.02 (002).
    pub evaporation: f64,
    /// Most steps a droplet lives. Default 300 (002).
    pub max_lifetime: u32,
    /// Erosion brush radius, cells (>= 0; 0 erodes the 4 corners bilinearly). Default 5 (002).
    pub radius: f64,
    /// Water a droplet starts with. Default 1.
    pub initial_water: f64,
    /// Speed a droplet starts with, cells per step. Default 1.
    pub initial_speed: f64,
    /// Erosion never digs below this height, metres (the floor against drain valleys). Default:
    /// none (`-inf`); the CLI's default is the input's lowest height.
    pub min_height: f64,
    /// Erodibility of hardness 1 relative to hardness 0 (0..1): with a hardness map, a cell of
    /// hardness `H` yields `1 − H·(1 − rock_erodibility)` of its brush share (as in the grid
    /// model). Default 0.1.
    pub rock_erodibility: f64,
    /// Edge rule. Default open.
    pub border: DropletBorder,
    /// Droplets scheduled together: split by the band of rows they start in, bands far enough
    /// apart run in parallel (see `droplet::cpu`). 1 runs the droplets strictly one after the
    /// other. Results do not depend on the thread count either way; stopping at a multiple of
    /// it and resuming gives a straight run's result. Default 16384.
    pub batch_size: u32,
    /// Seed: droplet `i` draws from `SplitMix64::keyed(seed, i)`. Default 0.
    pub seed: u64,
}

impl Default for DropletParams {
    fn default() -> Self {
        Self {
            inertia: 0.3,
            capacity: 10.0,
            min_slope: 0.01,
            deposition: 0.08,
            erosion: 0.7,
            gravity: 9.81,
            evaporation: 0.02,
            max_lifetime: 300,
            radius: 5.0,
            initial_water: 1.0,
            initial_speed: 1.0,
            min_height: f64::NEG_INFINITY,
            rock_erodibility: 0.1,
            border: DropletBorder::Open,
            batch_size: 16384,
            seed: 0,
        }
    }
}

impl DropletParams {
    /// Checks every field; the error names the first one out of range.
    pub fn validate(&self) -> Result<(), ParamError> {
        fn check(ok: bool, name: &'static str, value: f64, expected: &'static str) -> Result<(), ParamError> {
            if ok { Ok(()) } else { Err(ParamError { name, value, expected }) }
        }
        let unit = |v: f64| (0.0..=1.0).contains(&v);
        check(unit(self.inertia), "inertia", self.inertia, "0 to 1")?;
        check(self.capacity.is_finite() && self.capacity >= 0.0, "capacity", self.capacity, ">= 0")?;
        check(self.min_slope.is_finite() && self.min_slope >= 0.0, "min_slope", self.min_slope, ">= 0")?;
        check(unit(self.deposition), "deposition", self.deposition, "0 to 1")?;
        check(unit(self.erosion), "erosion", self.erosion, "0 to 1")?;
        check(self.gravity.is_finite() && self.gravity >= 0.0, "gravity", self.gravity, ">= 0")?;
        check(unit(self.evaporation), "evaporation", self.evaporation, "0 to 1")?;
        check(self.max_lifetime >= 1, "max_lifetime", f64::from(self.max_lifetime), ">= 1")?;
        check(self.radius.is_finite() && (0.0..=64.0).contains(&self.radius), "radius", self.radius, "0 to 64 cells")?;
        check(self.initial_water.is_finite() && self.initial_water > 0.0, "initial_water", self.initial_water, "> 0")?;
        check(
            self.initial_speed.is_finite() && self.initial_speed >= 0.0,
            "initial_speed",
            self.initial_speed,
            ">= 0",
        )?;
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
}

/// One line per parameter, in declaration order, for `erode params droplet`.
pub const DROPLET_PARAM_DOCS: &[(&str, &str)] = &[
    ("inertia", "share of its direction a droplet keeps each step (0..1)"),
    ("capacity", "sediment capacity factor, per metre of drop per unit speed and water (>= 0)"),
    ("min_slope", "smallest drop used in the capacity, metres per cell (>= 0)"),
    ("deposition", "share of the excess sediment dropped per step (0..1)"),
    ("erosion", "share of the free capacity eroded per step (0..1)"),
    ("gravity", "gravity in speed^2 <- speed^2 - dh*g (>= 0)"),
    ("evaporation", "share of water lost per step (0..1)"),
    ("max_lifetime", "most steps a droplet lives (>= 1)"),
    ("radius", "erosion brush radius, cells (0..64; 0 = bilinear corners)"),
    ("initial_water", "water a droplet starts with (> 0)"),
    ("initial_speed", "speed a droplet starts with, cells per step (>= 0)"),
    ("min_height", "floor erosion never digs below, m (the CLI uses the input's lowest height when unset)"),
    ("rock_erodibility", "erodibility at hardness 1 relative to hardness 0 (0..1): 1 - H*(1 - rock_erodibility)"),
    ("border", "\"open\" (sediment leaves with the droplet), \"closed\" or \"wrap\""),
    ("batch_size", "droplets scheduled together, in parallel where far apart (>= 1; 1 = strictly serial)"),
    ("seed", "droplet i draws from SplitMix64::keyed(seed, i)"),
];
