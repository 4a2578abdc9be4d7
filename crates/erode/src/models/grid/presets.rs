//! Named parameter sets: what to start from. `rivers` is [`Params::default`]; each other preset
//! is a few choices away from it, and `classic` is the model as the papers write it.
//!
//! | preset | what it makes |
//! | --- | --- |
//! | `rivers` | channel networks cut by a long storm: branching gullies and valleys, deposits in valley floors and lakes, hillslopes kept |
//! | `gentle` | weathering only: steep slopes slump towards their talus angle, nothing is carved |
//! | `badlands` | dense gullies in soft ground: a low erosion threshold, heavy rain, little slumping |
//! | `alpine` | hard rock, steep channels and talus: slopes slump to steep angles, fresh deposits to gentle ones |
//! | `classic` | Jákó & Tóth (2011) as written: Mei et al.'s capacity, closed borders, rain against evaporation |
//!
//! Why `rivers` carves where `classic` blurs (measured with `erode analyze`; `docs/grid-model.md`):
//! - water reaches the rivers: open borders (and open edges of nodata holes) give a base level,
//!   no evaporation, and the run
//!   starts from the steady flow of the rain (`start_water = "steady"`), so depth grows with
//!   drainage area from the first step instead of a film of equal depth everywhere;
//! - erosion needs shear: the `shear` capacity is 0 below `critical_shear`, so thin films on
//!   hillslopes keep the terrain's fine relief and channels take the work;
//! - time: the water takes the largest stable step (`dt = 0`) and the terrain moves a fixed
//!   `morphological_step` of storm time per iteration (a documented acceleration, as
//!   sediment-transport codes use; Roelvink 2006), so iterations count terrain time at any cell
//!   size; `bed_change_limit` keeps each step's change small against the depth so the flow can
//!   follow;
//! - 8 pipes, so channels do not line up with the grid's axes.

use super::params::{Border, CapacityModel, HardnessMode, NodataBorder, Params, RainMode, StartWater};

/// A named parameter set.
pub struct Preset {
    /// Its name (`--preset NAME`).
    pub name: &'static str,
    /// What it makes, in a line.
    pub summary: &'static str,
    /// Its parameters.
    pub params: fn() -> Params,
}

/// Every preset, the default first.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "rivers",
        summary: "channel networks, valley deposits, hillslopes kept (the default)",
        params: rivers,
    },
    Preset { name: "gentle", summary: "weathering only: steep slopes slump, nothing is carved", params: gentle },
    Preset { name: "badlands", summary: "dense gullies in soft ground", params: badlands },
    Preset { name: "alpine", summary: "hard rock, steep channels and talus slopes", params: alpine },
    Preset {
        name: "classic",
        summary: "Jákó & Tóth (2011) as written: Mei et al.'s capacity, rain against evaporation",
        params: Params::classic,
    },
];

/// The preset called `name`; the error lists the known ones.
pub fn preset(name: &str) -> Result<Params, UnknownPreset> {
    PRESETS.iter().find(|p| p.name == name).map(|p| (p.params)()).ok_or_else(|| UnknownPreset {
        model: "grid",
        name: name.to_string(),
        known: PRESETS.iter().map(|p| p.name).collect::<Vec<_>>().join(", "),
    })
}

pub use crate::models::presets::UnknownPreset;

/// The default: a long storm that cuts channel networks (see the module docs).
pub fn rivers() -> Params {
    Params {
        dt: 0.0,
        friction: 0.05,
        max_flow_depth: 1.0,
        pipes: 8,
        border: Border::Open,
        nodata_border: NodataBorder::Open,
        start_water: StartWater::Steady,
        rain_mode: RainMode::Uniform,
        rain_rate: 1e-4,
        evaporation: 0.0,
        capacity_model: CapacityModel::Shear,
        capacity: 1.0,
        critical_shear: 0.002,
        morphological_step: 60_000.0,
        bed_change_limit: 0.1,
        dissolve: 0.002,
        deposit: 0.005,
        hardness: 0.5,
        hardness_mode: HardnessMode::Uniform,
        softening: 0.0,
        thermal_rate: 3e-6,
        talus_scale: 2.0,
        talus_bias: 0.4,
        sediment_layer: true,
        soil_depth: 5.0,
        ..Params::classic()
    }
}

/// Weathering only: no rain; slopes above the talus slump.
pub fn gentle() -> Params {
    Params {
        rain_mode: RainMode::Off,
        rain_rate: 0.0,
        start_water: StartWater::Dry,
        talus_scale: 0.2,
        talus_bias: 0.1,
        // weathering wears the ground itself to a low talus: one material, no soil over rock
        sediment_layer: false,
        ..rivers()
    }
}

/// Dense gullies: soft ground, a low threshold, heavy rain, little slumping.
pub fn badlands() -> Params {
    Params {
        hardness: 0.2,
        critical_shear: 0.0005,
        rain_rate: 2e-4,
        thermal_rate: 5e-7,
        talus_scale: 1.0,
        talus_bias: 0.4,
        ..rivers()
    }
}

/// Hard rock that stands steep and fresh deposits that slump gently.
pub fn alpine() -> Params {
    Params { hardness: 0.8, softening: 1.0, talus_scale: 1.2, talus_bias: 0.1, thermal_rate: 3.5e-6, ..rivers() }
}
