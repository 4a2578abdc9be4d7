//! What the user tunes in the grid model. Every field names its unit and default; `validate`
//! names the first field out of range.

use crate::error::ParamError;

/// How water flows between cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FluxForm {
    /// Mei et al.'s one-way pipes: each cell keeps an outflow per direction, clamped at zero
    /// (Jákó & Tóth eq. 2). Both pipes of an interface can carry water at once, which makes waves travel
    /// sqrt(2) too fast once they have reversed; stable up to `g·A·Δt²/l³ <= 0.25` on square cells.
    OneWay,
    /// One signed net flux per interface: waves at the pipe model's own speed, and twice the
    /// stable time step.
    Signed,
}

/// The cross-section `A` of the virtual pipes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CrossSection {
    /// The documents' constant `A` (`pipe_area`, else the cell area): waves travel at
    /// `sqrt(g·A·lx/(l·ly))` whatever the depth, and thin films race.
    Constant,
    /// `A` = flow depth at the interface × face width (LISFLOOD-FP's inertial form): the shallow
    /// water wave speed `sqrt(g·h)`, a dry bank lets nothing through, and with `friction` thin
    /// films flow at realistic speeds. The stable step then depends on the deepest water, so each
    /// iteration picks its sub-steps from the state.
    Depth,
}

/// Where the model's edge lets water through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Border {
    /// No flow across the edge (bshishov): water reflects.
    Closed,
    /// Water (and its sediment) leaving across the edge is lost and booked as outflow.
    Open,
    /// The map is a torus (Jákó & Tóth 2011).
    Wrap,
}

pub use crate::models::nodata::NodataBorder;

/// Sediment transport capacity (see `docs/grid-model.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapacityModel {
    /// Jákó & Tóth eq. 8: `Kc · sin(downhill slope along the flow) · |v| · lmax(d)`.
    Mei,
    /// McLeod, Chen & Hu: `Kc · sin(tilt) · |v| · clamp(d, 0, 1 m)`.
    Sine,
    /// Excess bed shear: `Kc · max(0, Cf·|v|²/g − critical_shear)`, the shear stress over
    /// `ρ·g` from the friction law less a threshold: thin films on hillslopes stay below it,
    /// channels erode in proportion to their stream power, still water deposits.
    Shear,
}

/// How suspended sediment moves with the water.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Transport {
    /// Each pipe carries the sediment of the water it moves (upwind, flux form): mass is
    /// conserved to rounding and never negative.
    Conservative,
    /// Jákó & Tóth eq. 12: back-trace along the velocity, bilinear interpolation. Loses or creates mass;
    /// the books report the drift.
    SemiLagrangian,
}

/// Where rain falls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RainMode {
    /// No rain (sources only).
    Off,
    /// `rain_rate` on every cell (Jákó & Tóth eq. 1).
    Uniform,
    /// `rain_rate` times a rain map (0..1 per cell) given to the simulator.
    Map,
    /// McLeod, Chen & Hu's buckets: each step `bucket_count` discs of `bucket_radius` cells at seeded random
    /// places get all the rain of the step (same mean as uniform).
    Buckets,
}

/// The water a run starts with (see `start.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StartWater {
    /// No water.
    Dry,
    /// Closed depressions full to their spill height.
    Lakes,
    /// The lakes, and the steady flow of the rain and sources everywhere else.
    Steady,
}

/// Initial hardness `H` (resistance: 1 erodes least).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HardnessMode {
    /// `hardness` everywhere.
    Uniform,
    /// A hardness map (0..1 per cell) given to the simulator.
    Map,
    /// McLeod, Chen & Hu: `hardness` plus seeded noise of `hardness_noise` amplitude plus `hardness_depth_gain`
    /// times how low the cell lies in the terrain's range (rock below is harder, as McLeod et al. mean).
    Noise,
}

/// Units of a source's position and radius.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Units {
    /// Grid cells (column, row).
    Cells,
    /// Metres from the top-left corner.
    Metres,
}

/// A river source: water added on a disc.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// Column (cells) or easting from the left edge (metres).
    pub x: f64,
    /// Row (cells) or distance from the top edge (metres).
    pub y: f64,
    /// Disc radius; 0 puts all water on the nearest cell.
    #[serde(default)]
    pub radius: f64,
    /// Water added, m³/s.
    pub rate: f64,
    /// Units of `x`, `y`, `radius`. Default cells.
    #[serde(default = "cells")]
    pub units: Units,
}

fn cells() -> Units {
    Units::Cells
}

/// Largest bed friction `friction` (dimensionless): rivers have 0.001–0.1; far past this the
/// friction term overflows.
pub const MAX_FRICTION: f64 = 1e6;

/// Grid model parameters (Jákó & Tóth 2011 with McLeod, Chen & Hu's and bshishov's options). Heights in metres, time in seconds.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Time step of one iteration, s; 0 = auto: each iteration takes the largest stable step for
    /// the water of the moment (see [`Params::iteration_dt`]). A fixed step past the stable limit
    /// of the flux form is split into sub-steps (see [`Params::stable_dt`]). Default 0 (auto;
    /// the `classic` preset's is 0.05).
    pub dt: f64,
    /// Gravity, m/s². Default 9.81.
    pub gravity: f64,
    /// Virtual pipe cross-section `A`, m². Default 0, meaning the cell area `lx·ly`.
    pub pipe_area: f64,
    /// Flux form. Default one-way (the documents').
    pub flux_form: FluxForm,
    /// Pipe cross-section. Default depth.
    pub cross_section: CrossSection,
    /// Bed friction `Cf` (Darcy–Weisbach/Chezy, dimensionless): the flux loses
    /// `Cf·|u|·u` per unit depth, applied semi-implicitly. Default 0.05 (a river; the `classic`
    /// preset's 0.3 is rough overland flow); 0 = none (the documents').
    pub friction: f64,
    /// Flow depth the depth cross-section counts at most, m; 0 = no limit. Deep lakes then keep
    /// their level and volume but pass waves no faster than water this deep, so they do not
    /// shrink the time step. Default 1.
    pub max_flow_depth: f64,
    /// Pipes per cell: 4 (axes) or 8 (with diagonals, no axis-aligned channels). Default 8.
    pub pipes: u32,
    /// Borders. Default open.
    pub border: Border,
    /// The edges of nodata holes (cells outside the domain). Default open.
    pub nodata_border: NodataBorder,
    /// The water at the start when no water map is given. Default steady.
    pub start_water: StartWater,
    /// Rain placement. Default uniform.
    pub rain_mode: RainMode,
    /// Rain, m/s of water depth (Jákó & Tóth's `Kr·r`). Default 1e-4 (a downpour of 360 mm/h;
    /// the `classic` preset's 0.005 is a storm sped up, as erosion tools do).
    pub rain_rate: f64,
    /// Buckets per step (rain mode buckets). Default 8.
    pub bucket_count: u32,
    /// Bucket radius, cells. Default 4.
    pub bucket_radius: f64,
    /// Evaporation `Ke`, 1/s: each step keeps `1 − Ke·Δt` of the water. Default 0.
    pub evaporation: f64,
    /// Capacity model. Default shear.
    pub capacity_model: CapacityModel,
    /// Sediment capacity constant `Kc`, s (metres of sediment per m/s of flow). Default 1.
    pub capacity: f64,
    /// Bed shear stress over `ρ·g` below which the shear capacity is 0, m. Default 0.002.
    pub critical_shear: f64,
    /// Morphological acceleration `F` (Roelvink 2006): the terrain changes as in `F` seconds of
    /// flow per second of water simulated (the capacity and thermal erosion × `F`, the water
    /// displaced by sediment ÷ `F`). Used when `morphological_step` is 0. Default 1.
    pub morphological_factor: f64,
    /// Terrain time per iteration, s; 0 = use `morphological_factor`. Each iteration then moves
    /// the terrain as this many seconds of the storm would, whatever the water's step (`F` is
    /// this over the step), so an iteration changes a 2 m terrain as much as a 30 m one and the
    /// run's length in iterations is its length in terrain time. Default 60000.
    pub morphological_step: f64,
    /// Largest bed change by dissolving or deposition in one sub-step, as a share of the water
    /// depth (0..1), on cells up to 2 m; coarser cells scale it by `√(2 m / cell)` (see
    /// `derived::BED_CHANGE_CELL`); 0 = no limit. Keeps an accelerated terrain from outrunning
    /// the flow. Default 0.1.
    pub bed_change_limit: f64,
    /// Minimum sine of the slope used in the capacity, so flat ground still carries. Default 0.05.
    pub min_tilt: f64,
    /// Depth at and beyond which the mei capacity's `lmax` is 0 (deep water does not erode), m.
    /// Default 2.
    pub max_erosion_depth: f64,
    /// Dissolving rate `Ks`, 1/s. Default 0.002.
    pub dissolve: f64,
    /// Deposition rate `Kd`, 1/s. Default 0.005.
    pub deposit: f64,
    /// Softening `Kh` (eq. 11, read with hardness as resistance): hardness lost per metre of
    /// sediment deposited, 1/m, so fresh deposits erode easily and slump at a low talus. Default 0
    /// (off).
    pub softening: f64,
    /// Initial hardness `H` (0..1): resistance, 1 erodes least, 0 is loose soil. Default 0.5.
    pub hardness: f64,
    /// Erodibility of hardness 1 relative to loose soil (hardness 0 erodes with 1), 0..1: the
    /// erodibility of hardness `H` is `1 − H·(1 − rock_erodibility)`, for water and thermal
    /// erosion alike. Default 0.1.
    pub rock_erodibility: f64,
    /// Initial hardness mode. Default uniform.
    pub hardness_mode: HardnessMode,
    /// Noise amplitude of hardness mode noise. Default 0.3.
    pub hardness_noise: f64,
    /// Extra hardness at the lowest terrain, hardness mode noise. Default 0.3.
    pub hardness_depth_gain: f64,
    /// Sediment transport. Default conservative.
    pub transport: Transport,
    /// Thermal erosion rate `Kt`, 1/s of terrain time (eq. 14; accelerated like the water's
    /// erosion). Default 3e-6; 0 turns thermal erosion off.
    pub thermal_rate: f64,
    /// Talus slope of bedrock from its hardness (bshishov): `tan α = talus_scale·H + talus_bias`.
    /// Default 2.
    pub talus_scale: f64,
    /// See `talus_scale`. Default 0.4 (so bedrock of the default hardness 0.5 stands up to
    /// tan α = 1.4, about 54°).
    pub talus_bias: f64,
    /// A layer of loose material over the bedrock (after Cordonnier et al. 2017's layered
    /// terrain): deposits are loose, water takes loose material first and with erodibility 1,
    /// thermal erosion moves loose material at `repose_slope` and bedrock only past its talus;
    /// the layer's depth is the `sediment_depth` map. Default true; false keeps one material
    /// (Jákó & Tóth's model as written).
    pub sediment_layer: bool,
    /// Angle of repose of loose material (`sediment_layer`), as its tangent. Default 0.7 (35°).
    pub repose_slope: f64,
    /// Loose material (soil) at the start on bedrock of hardness 0, m (`sediment_layer`); bedrock
    /// of hardness `H` starts with `(1 − H)·soil_depth` (hard rock weathers to thin soil, and a
    /// hardness map shows from the first step where bare rock stands). Soil-mantled hillslopes
    /// slump at the angle of repose while the bedrock under them stands. Default 5 (2.5 m at the
    /// default hardness 0.5).
    pub soil_depth: f64,
    /// McLeod, Chen & Hu's smoothing at local extrema: height difference to the 4-neighbour mean tolerated, m.
    /// Default 0.
    pub smoothing_threshold: f64,
    /// Share of the excess over `smoothing_threshold` moved to the 4 neighbours per step (0..1).
    /// Default 0 (off).
    pub smoothing_strength: f64,
    /// Mean depth below which a cell has no velocity, m. Default 1e-4.
    pub velocity_epsilon: f64,
    /// How far below the input's lowest cell erosion may dig, m. Default 0.
    pub floor_depth: f64,
    /// Seed of the random parts (buckets, hardness noise). Default 0.
    pub seed: u64,
    /// River sources.
    pub sources: Vec<Source>,
}

impl Default for Params {
    /// The `rivers` preset (see [`super::presets`]).
    fn default() -> Self {
        super::presets::rivers()
    }
}

/// Largest rain rate, m/s of water depth.
pub const MAX_RAIN_RATE: f64 = 10.0;

impl Params {
    /// The model as Jákó & Tóth (2011) and Mei et al. (2007) write it, with the depth
    /// cross-section and friction this project adds: Mei's capacity, 4 pipes, closed borders, a
    /// fixed 0.05 s step, strong rain against strong evaporation (erode's defaults before the
    /// presets; the `classic` preset).
    pub fn classic() -> Self {
        Self {
            dt: 0.05,
            gravity: 9.81,
            pipe_area: 0.0,
            flux_form: FluxForm::OneWay,
            cross_section: CrossSection::Depth,
            friction: 0.3,
            max_flow_depth: 0.0,
            pipes: 4,
            border: Border::Closed,
            nodata_border: NodataBorder::Closed,
            start_water: StartWater::Dry,
            rain_mode: RainMode::Uniform,
            rain_rate: 0.005,
            bucket_count: 8,
            bucket_radius: 4.0,
            evaporation: 0.02,
            capacity_model: CapacityModel::Mei,
            capacity: 0.05,
            critical_shear: 0.005,
            morphological_factor: 1.0,
            morphological_step: 0.0,
            bed_change_limit: 0.0,
            min_tilt: 0.05,
            max_erosion_depth: 2.0,
            dissolve: 0.5,
            deposit: 0.3,
            softening: 0.0,
            hardness: 0.0,
            rock_erodibility: 0.1,
            hardness_mode: HardnessMode::Uniform,
            hardness_noise: 0.3,
            hardness_depth_gain: 0.3,
            transport: Transport::Conservative,
            thermal_rate: 0.05,
            talus_scale: 0.4,
            talus_bias: 0.8,
            sediment_layer: false,
            repose_slope: 0.7,
            soil_depth: 0.0,
            smoothing_threshold: 0.0,
            smoothing_strength: 0.0,
            velocity_epsilon: 1e-4,
            floor_depth: 0.0,
            seed: 0,
            sources: Vec::new(),
        }
    }
}

pub use crate::models::info::ParamDoc;

/// One line per parameter, in declaration order.
pub const PARAM_DOCS: &[ParamDoc] = &[
    ParamDoc::new("dt", "time step of one iteration, s (>= 0; 0 = auto, the largest stable step); sub-stepped past the stable limit").linear(0.0, 1.0, "s"),
    ParamDoc::new("gravity", "gravity, m/s^2 (> 0)").linear(1.0, 20.0, "m/s^2"),
    ParamDoc::new("pipe_area", "virtual pipe cross-section A, m^2 (>= 0; 0 = cell area)").linear(0.0, 100.0, "m^2"),
    ParamDoc::new("flux_form", "\"one-way\" (Mei's pipes, the documents') or \"signed\" (net flux per interface)").choices(&["one-way", "signed"]),
    ParamDoc::new("cross_section", "\"depth\" (A = flow depth x face width: shallow-water wave speed) or \"constant\" (the documents' A)").choices(&["depth", "constant"]),
    ParamDoc::new("friction", "bed friction Cf (dimensionless, 0 to 1e6): flux loses Cf*|u|*u per unit depth; 0 = none").log(1e-4, 10.0, ""),
    ParamDoc::new("max_flow_depth", "depth cross-section: deepest flow a pipe counts, m (>= 0; 0 = no limit): deep lakes keep the time step").linear(0.0, 10.0, "m"),
    ParamDoc::new("pipes", "4 (axes) or 8 (with diagonals: no axis-aligned channels)").choices(&["4", "8"]),
    ParamDoc::new("border", "\"closed\" (reflect), \"open\" (outflow booked as lost) or \"wrap\"").choices(&["closed", "open", "wrap"]),
    ParamDoc::new("nodata_border", "edges of nodata holes: \"closed\" (reflect) or \"open\" (outflow into the hole booked as lost)").choices(&["closed", "open"]),
    ParamDoc::new("start_water", "\"dry\", \"lakes\" (depressions full) or \"steady\" (lakes and the steady flow of the rain and sources)").choices(&["dry", "lakes", "steady"]),
    ParamDoc::new("rain_mode", "\"off\", \"uniform\", \"map\" (rain_rate times the rain map; --rain-map sets it) or \"buckets\"").choices(&["off", "uniform", "map", "buckets"]),
    ParamDoc::new("rain_rate", "rain, m/s of water depth (0 to 10)").log(1e-7, 1e-2, "m/s"),
    ParamDoc::new("bucket_count", "rain buckets per step (rain_mode = \"buckets\")"),
    ParamDoc::new("bucket_radius", "rain bucket radius, cells (> 0)").linear(0.5, 32.0, "cells"),
    ParamDoc::new("evaporation", "evaporation Ke, 1/s (0 <= Ke*dt < 1)").linear(0.0, 0.1, "1/s"),
    ParamDoc::new(
        "capacity_model",
        "\"shear\" (excess bed shear, the default), \"mei\" (Jákó & Tóth eq. 8, slope along the flow, depth \
         limit) or \"sine\" (McLeod, Chen & Hu, depth clamped to 1 m)",
    ).choices(&["shear", "mei", "sine"]),
    ParamDoc::new("capacity", "sediment capacity constant Kc, s (>= 0)").log(1e-3, 100.0, "s"),
    ParamDoc::new("critical_shear", "shear capacity: bed shear over rho*g below which nothing erodes, m (>= 0)").linear(0.0, 0.02, "m"),
    ParamDoc::new("morphological_factor", "erosion acceleration F: terrain changes as in F seconds of flow per second (>= 1; see morphological_step)").log(1.0, 1e6, ""),
    ParamDoc::new("morphological_step", "terrain time per iteration, s (>= 0; 0 = use morphological_factor): iterations count terrain time").linear(0.0, 1e6, "s"),
    ParamDoc::new("bed_change_limit", "most bed change per sub-step per metre of water depth on cells up to 2 m, times sqrt(2 m / cell) on coarser ones (0..1; 0 = no limit)").linear(0.0, 1.0, ""),
    ParamDoc::new("min_tilt", "minimum sine of the slope in the capacity (0..1)").linear(0.0, 1.0, ""),
    ParamDoc::new("max_erosion_depth", "depth where lmax reaches 0 (mei capacity), m (> 0)").linear(0.1, 20.0, "m"),
    ParamDoc::new("dissolve", "dissolving rate Ks, 1/s (0 <= Ks*dt <= 1)").log(1e-5, 1.0, "1/s"),
    ParamDoc::new("deposit", "deposition rate Kd, 1/s (0 <= Kd*dt <= 1)").log(1e-5, 1.0, "1/s"),
    ParamDoc::new("softening", "softening Kh: hardness lost per metre deposited, 1/m (>= 0)").linear(0.0, 10.0, "1/m"),
    ParamDoc::new("hardness", "initial hardness H, resistance (0 loose soil .. 1 erodes least)").linear(0.0, 1.0, ""),
    ParamDoc::new("rock_erodibility", "erodibility at hardness 1 relative to hardness 0 (0..1): 1 - H*(1 - rock_erodibility)").linear(0.0, 1.0, ""),
    ParamDoc::new("hardness_mode", "\"uniform\", \"map\" (with --hardness-map) or \"noise\" (McLeod, Chen & Hu)").choices(&["uniform", "map", "noise"]),
    ParamDoc::new("hardness_noise", "noise amplitude, hardness_mode = \"noise\" (>= 0)").linear(0.0, 1.0, ""),
    ParamDoc::new("hardness_depth_gain", "extra hardness at the lowest terrain, hardness_mode = \"noise\" (>= 0)").linear(0.0, 1.0, ""),
    ParamDoc::new("transport", "\"conservative\" (flux form, mass exact) or \"semi-lagrangian\" (Jákó & Tóth eq. 12, drift reported)").choices(&["conservative", "semi-lagrangian"]),
    ParamDoc::new("thermal_rate", "thermal erosion Kt, 1/s (0 <= Kt*dt <= 1; 0 = off)").log(1e-8, 1.0, "1/s"),
    ParamDoc::new("talus_scale", "tan(talus) = talus_scale * hardness + talus_bias (bshishov)").linear(0.0, 5.0, ""),
    ParamDoc::new("talus_bias", "see talus_scale; tan(talus) must stay > 0").linear(0.01, 5.0, ""),
    ParamDoc::new("sediment_layer", "loose material over bedrock: deposits loose, eroded first, slump at repose_slope (true/false)").choices(&["true", "false"]),
    ParamDoc::new("repose_slope", "tan of the angle of repose of loose material (sediment_layer; > 0)").linear(0.05, 2.0, ""),
    ParamDoc::new("soil_depth", "loose material at the start on bedrock of hardness 0, m; (1 - hardness) times it elsewhere (sediment_layer; >= 0)").linear(0.0, 50.0, "m"),
    ParamDoc::new("smoothing_threshold", "McLeod, Chen & Hu's smoothing: tolerated difference to the 4-neighbour mean at extrema, m (>= 0)").linear(0.0, 10.0, "m"),
    ParamDoc::new("smoothing_strength", "McLeod, Chen & Hu's smoothing: share of the excess moved per step (0..1; 0 = off)").linear(0.0, 1.0, ""),
    ParamDoc::new("velocity_epsilon", "mean depth below which velocity is 0, m (> 0)").log(1e-6, 1e-2, "m"),
    ParamDoc::new("floor_depth", "how far below the input's lowest cell erosion may dig, m (>= 0)").linear(0.0, 1000.0, "m"),
    ParamDoc::new("seed", "seed of buckets and hardness noise"),
    ParamDoc::new("sources", "river sources: [[sources]] x, y, radius, rate (m^3/s), units = \"cells\" | \"metres\""),
];

/// Cell sizes the grid model's water and thermal erosion suit, metres: above this, water
/// spreads as a sheet across cells wider than the channels it should cut, and thermal erosion
/// (an angle of repose between neighbours) flattens slopes that rivers hold up.
pub const MAX_CELL: f64 = 250.0;

impl Params {
    /// A note when `cell` is coarser than [`MAX_CELL`].
    pub fn scale_note(&self, cell: crate::CellSize) -> Option<crate::models::ScaleNote> {
        let size = cell.x.max(cell.y);
        (size > MAX_CELL).then(|| crate::models::ScaleNote {
            model: "grid",
            cell: size,
            fits: (0.0, MAX_CELL),
            why: "shallow water spreads over cells far wider than its channels, and thermal erosion flattens slopes \
                  rivers hold up"
                .into(),
            instead: Some("stream-power"),
        })
    }

    /// These parameters with a hardness map in use: a map given is a map used, so
    /// `hardness_mode = "uniform"` becomes `"map"`; `"noise"` makes its own hardness and refuses
    /// one.
    pub fn with_hardness_map(mut self) -> Result<Self, crate::SimError> {
        match self.hardness_mode {
            HardnessMode::Uniform => self.hardness_mode = HardnessMode::Map,
            HardnessMode::Map => {}
            HardnessMode::Noise => return Err(crate::SimError::HardnessMapWithNoise),
        }
        Ok(self)
    }

    /// These parameters with a rain map given: `rain_mode = "map"` (from "uniform", whose rain
    /// the map scales); refused with no rain to scale ("off") or rain of another shape
    /// ("buckets").
    pub fn with_rain_map(mut self) -> Result<Self, crate::SimError> {
        match self.rain_mode {
            RainMode::Uniform | RainMode::Map => self.rain_mode = RainMode::Map,
            RainMode::Off => return Err(crate::SimError::RainMapWithMode("off")),
            RainMode::Buckets => return Err(crate::SimError::RainMapWithMode("buckets")),
        }
        Ok(self)
    }

    /// Checks every field; the error names the first one out of range.
    pub fn validate(&self) -> Result<(), ParamError> {
        fn check(ok: bool, name: &'static str, value: f64, expected: &'static str) -> Result<(), ParamError> {
            if ok { Ok(()) } else { Err(ParamError { name, value, expected }) }
        }
        let finite = |v: f64| v.is_finite();
        check(finite(self.dt) && self.dt >= 0.0, "dt", self.dt, ">= 0 seconds (0 = auto)")?;
        check(finite(self.gravity) && self.gravity > 0.0, "gravity", self.gravity, "> 0 m/s^2")?;
        check(finite(self.pipe_area) && self.pipe_area >= 0.0, "pipe_area", self.pipe_area, ">= 0 m^2")?;
        // past ~1e25 the friction term Cf·|u|·u overflows f32 to a NaN; 1e6 is 10^7 times a river's
        check((0.0..=MAX_FRICTION).contains(&self.friction), "friction", self.friction, "0 to 1e6")?;
        check(
            finite(self.max_flow_depth) && self.max_flow_depth >= 0.0,
            "max_flow_depth",
            self.max_flow_depth,
            ">= 0 m",
        )?;
        check(self.pipes == 4 || self.pipes == 8, "pipes", f64::from(self.pipes), "4 or 8")?;
        // 10 m/s is a thousand times any storm (and stays finite: the tests run it); 1e308
        // overflowed the f32 depths
        check((0.0..=MAX_RAIN_RATE).contains(&self.rain_rate), "rain_rate", self.rain_rate, "0 to 10 m/s")?;
        check(
            finite(self.bucket_radius) && self.bucket_radius > 0.0,
            "bucket_radius",
            self.bucket_radius,
            "> 0 cells",
        )?;
        check(
            finite(self.evaporation) && self.evaporation >= 0.0 && self.evaporation * self.dt < 1.0,
            "evaporation",
            self.evaporation,
            ">= 0 with evaporation * dt < 1",
        )?;
        check(finite(self.capacity) && self.capacity >= 0.0, "capacity", self.capacity, ">= 0 s")?;
        check(
            finite(self.critical_shear) && self.critical_shear >= 0.0,
            "critical_shear",
            self.critical_shear,
            ">= 0 m",
        )?;
        check(
            finite(self.morphological_factor) && self.morphological_factor >= 1.0,
            "morphological_factor",
            self.morphological_factor,
            ">= 1",
        )?;
        check(
            finite(self.morphological_step) && self.morphological_step >= 0.0,
            "morphological_step",
            self.morphological_step,
            ">= 0 s",
        )?;
        check(
            (0.0..=1.0).contains(&self.bed_change_limit),
            "bed_change_limit",
            self.bed_change_limit,
            "0 to 1 (a share of the depth)",
        )?;
        // with a morphological step, one iteration's thermal erosion is `Kt·step`: it must stay
        // within the bound that keeps 8 donors from lifting a cell above them
        check(
            self.morphological_step <= 0.0
                || self.thermal_rate * self.morphological_step <= super::derived::MAX_THERMAL_STEP,
            "thermal_rate",
            self.thermal_rate,
            ">= 0 with thermal_rate * morphological_step <= 2/9",
        )?;
        check((0.0..=1.0).contains(&self.min_tilt), "min_tilt", self.min_tilt, "0 to 1")?;
        check(
            finite(self.max_erosion_depth) && self.max_erosion_depth > 0.0,
            "max_erosion_depth",
            self.max_erosion_depth,
            "> 0 m",
        )?;
        check(
            finite(self.dissolve) && self.dissolve >= 0.0 && self.dissolve * self.dt <= 1.0,
            "dissolve",
            self.dissolve,
            ">= 0 with dissolve * dt <= 1",
        )?;
        check(
            finite(self.deposit) && self.deposit >= 0.0 && self.deposit * self.dt <= 1.0,
            "deposit",
            self.deposit,
            ">= 0 with deposit * dt <= 1",
        )?;
        check(finite(self.softening) && self.softening >= 0.0, "softening", self.softening, ">= 0 1/m")?;
        check((0.0..=1.0).contains(&self.rock_erodibility), "rock_erodibility", self.rock_erodibility, "0 to 1")?;
        check((0.0..=1.0).contains(&self.hardness), "hardness", self.hardness, "0 to 1")?;
        check(
            finite(self.hardness_noise) && self.hardness_noise >= 0.0,
            "hardness_noise",
            self.hardness_noise,
            ">= 0",
        )?;
        check(
            finite(self.hardness_depth_gain) && self.hardness_depth_gain >= 0.0,
            "hardness_depth_gain",
            self.hardness_depth_gain,
            ">= 0",
        )?;
        check(
            finite(self.thermal_rate) && self.thermal_rate >= 0.0 && self.thermal_rate * self.dt <= 1.0,
            "thermal_rate",
            self.thermal_rate,
            ">= 0 with thermal_rate * dt <= 1",
        )?;
        check(finite(self.talus_scale), "talus_scale", self.talus_scale, "finite")?;
        // the bias alone is the talus of hardness 0; with the scale, of hardness 1: the one that
        // takes the angle out of range is named
        for (name, value, r) in [("talus_bias", self.talus_bias, 0.0), ("talus_scale", self.talus_scale, 1.0)] {
            let tan = self.talus_scale * r + self.talus_bias;
            check(
                finite(tan) && tan > 0.0 && tan.atan() < std::f64::consts::FRAC_PI_2 * 0.999,
                name,
                value,
                "talus angle (tan = talus_scale * hardness + talus_bias) inside (0, 90) degrees for every hardness",
            )?;
        }
        check(
            finite(self.repose_slope) && self.repose_slope > 0.0 && self.repose_slope <= 1e3,
            "repose_slope",
            self.repose_slope,
            "> 0 and <= 1000 (tan of an angle below 90 degrees)",
        )?;
        check(
            finite(self.soil_depth) && (0.0..=1e6).contains(&self.soil_depth),
            "soil_depth",
            self.soil_depth,
            "0 to 1e6 m",
        )?;
        check(
            finite(self.smoothing_threshold) && self.smoothing_threshold >= 0.0,
            "smoothing_threshold",
            self.smoothing_threshold,
            ">= 0 m",
        )?;
        check((0.0..=1.0).contains(&self.smoothing_strength), "smoothing_strength", self.smoothing_strength, "0 to 1")?;
        check(
            finite(self.velocity_epsilon) && self.velocity_epsilon > 0.0,
            "velocity_epsilon",
            self.velocity_epsilon,
            "> 0 m",
        )?;
        check(finite(self.floor_depth) && self.floor_depth >= 0.0, "floor_depth", self.floor_depth, ">= 0 m")?;
        for s in &self.sources {
            check(finite(s.x) && finite(s.y), "sources.x/y", if finite(s.x) { s.y } else { s.x }, "finite")?;
            check(finite(s.radius) && s.radius >= 0.0, "sources.radius", s.radius, ">= 0")?;
            check(finite(s.rate) && s.rate >= 0.0, "sources.rate", s.rate, ">= 0 m^3/s")?;
        }
        Ok(())
    }
}
