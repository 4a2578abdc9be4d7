//! The grid model: virtual-pipe shallow water with hydraulic erosion and deposition, hardness,
//! sediment softening, a depth limit and 8-pipe thermal erosion.
//!
//! Source: Jákó & Tóth (2011), after Mei et al. (2007), with the variants of McLeod, Chen & Hu's
//! interactive simulator and bshishov's Unity project, read as `docs/grid-model.md` says. Units: metres, seconds; fluxes m³/s.
//!
//! # Stages (one sub-step, in order; each has this name everywhere)
//!
//! | stage | what | Jákó & Tóth eqs. |
//! | --- | --- | --- |
//! | `water_increment` | rain (uniform, map, McLeod, Chen & Hu's buckets) and sources add depth | 1 |
//! | `water_flux` | pipe fluxes from surface differences, limited by the water held | 2–4 |
//! | `thermal_flux` | 8-pipe talus shares from the terrain before erosion | 14–15 |
//! | `water_update` | depth from net flow; velocity from the flow through the cell | 5–7 |
//! | `erosion_deposition` | capacity, dissolve or deposit, water adjustment, softening | 8–11 |
//! | `sediment_transport` | conservative flux form, or semi-Lagrangian | 12 |
//! | `thermal_apply` | add the talus moves | 14–15 |
//! | `evaporation` | `d·(1 − Ke·Δt)` | 13 |
//! | `smoothing` | McLeod, Chen & Hu's pass at local extrema (off by default) | – |
//!
//! An iteration runs `Params::substeps` sub-steps so each stays within the stable time step
//! (see [`derived`]). `thermal_flux` reads only the terrain and hardness, so it runs before
//! `water_update` (Jákó & Tóth list it after); `water_update` and `erosion_deposition` then run as one
//! pass over the rows ([`fused`]) whose time is booked under `erosion_deposition`.
//!
//! # Determinism
//!
//! Every stage computes each cell from arrays no other cell writes in that stage; rows run in
//! parallel with rayon and sums are taken by segments of a row's columns
//! ([`topology::SEGMENT`]) and reduced segment by segment, row by row, so results are bit-identical
//! for any number of threads and across runs. Random parts (buckets) draw from
//! `SplitMix64::keyed(seed, sub-step)`, so a resumed run draws what a straight run would.
//!
//! # Books
//!
//! [`Books`] sum in f64 every volume that enters, leaves or changes phase; [`State::balance`]
//! compares them with the volumes in the fields.

// Stencil loops index several arrays (and neighbours) by the same cell index.
#![allow(clippy::needless_range_loop)]

pub mod blocks;
pub mod cpu;
pub mod derived;
pub mod erosion;
pub mod fused;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod params;
pub mod presets;
pub mod smoothing;
pub mod start;
pub mod state;
pub mod sweep;
pub mod thermal;
pub mod tiled;
pub mod topology;
pub mod transport;
pub mod water;

pub use cpu::CpuSim;

/// Water added per cell by the sources, m/s of depth (empty when there are none): what
/// `water::water_increment` takes as `source_rate`.
pub fn cpu_source_rates(params: &Params, state: &State) -> Result<Vec<f32>, crate::error::SimError> {
    cpu::source_rates(params, state)
}
pub use derived::{Derived, SubstepTally};
pub use params::{
    Border, CapacityModel, CrossSection, FluxForm, HardnessMode, MAX_FRICTION, MAX_RAIN_RATE, NodataBorder, PARAM_DOCS,
    Params, RainMode, Source, StartWater, Transport, Units,
};
pub use presets::{PRESETS, Preset, UnknownPreset, preset};
pub use state::{Balance, Books, StartMaps, State, params_fingerprint};

/// The stages, in order. The name of each is the CPU function's, the timing counter's and (with
/// the GPU backend) the shader's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Rain and sources.
    WaterIncrement,
    /// Pipe fluxes.
    WaterFlux,
    /// Depth and velocity.
    WaterUpdate,
    /// Thermal moves from the old terrain.
    ThermalFlux,
    /// Capacity, dissolving, deposition.
    ErosionDeposition,
    /// Sediment moves with the water.
    SedimentTransport,
    /// Thermal moves applied.
    ThermalApply,
    /// Evaporation.
    Evaporation,
    /// McLeod, Chen & Hu's smoothing.
    Smoothing,
    /// `water_flux` to `thermal_apply` (and `evaporation`) as one sweep over the rows (see
    /// [`sweep`]); the default configuration runs this instead of the passes one by one.
    Sweep,
}

impl Stage {
    /// Every stage in order.
    pub const ALL: [Stage; 10] = [
        Stage::WaterIncrement,
        Stage::WaterFlux,
        Stage::WaterUpdate,
        Stage::ThermalFlux,
        Stage::ErosionDeposition,
        Stage::SedimentTransport,
        Stage::ThermalApply,
        Stage::Evaporation,
        Stage::Smoothing,
        Stage::Sweep,
    ];

    /// The stage's name.
    pub fn name(self) -> &'static str {
        match self {
            Stage::WaterIncrement => "water_increment",
            Stage::WaterFlux => "water_flux",
            Stage::WaterUpdate => "water_update",
            Stage::ThermalFlux => "thermal_flux",
            Stage::ErosionDeposition => "erosion_deposition",
            Stage::SedimentTransport => "sediment_transport",
            Stage::ThermalApply => "thermal_apply",
            Stage::Evaporation => "evaporation",
            Stage::Smoothing => "smoothing",
            Stage::Sweep => "sweep",
        }
    }
}

/// The model's name on the command line, in checkpoints and in reports.
pub const NAME: &str = "grid";

/// The model as front ends list it (see [`crate::models::MODELS`]).
pub const INFO: crate::models::ModelInfo = crate::models::ModelInfo {
    name: NAME,
    summary: "Shallow water in virtual pipes eroding a heightmap (Mei et al. 2007; Jákó & Tóth 2011)",
    params: PARAM_DOCS,
    presets: || PRESETS.iter().map(|p| (p.name, p.summary)).collect(),
    maps: &[
        crate::models::ParamDoc::new("height", "the eroded terrain, m"),
        crate::models::ParamDoc::new("water", "water depth at the end, m"),
        crate::models::ParamDoc::new("sediment", "sediment suspended in the water, m"),
        crate::models::ParamDoc::new("sediment_depth", "the loose layer over bedrock (deposits and debris), m"),
        crate::models::ParamDoc::new("hardness", "bedrock hardness, 0..1 (1 erodes least)"),
        crate::models::ParamDoc::new("erosion", "ground removed over the run, m"),
        crate::models::ParamDoc::new("deposition", "ground laid down over the run, m"),
        crate::models::ParamDoc::new("flow", "time-averaged discharge, m³/s"),
        crate::models::ParamDoc::new("velocity", "flow speed at the end, m/s"),
    ],
    make: None,
};
