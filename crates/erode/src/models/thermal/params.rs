//! What the user tunes in the thermal model: angles of repose in degrees and a rate.

use crate::error::ParamError;
use crate::models::info::ParamDoc;
use crate::models::presets::UnknownPreset;

/// Thermal model parameters (names as the command line's `--set` uses them).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Angle of repose of loose material (hardness 0), degrees: ground steeper than this sheds
    /// material to its lower neighbours. Default 35 (dry sand and scree rest at 30–40).
    pub talus_angle: f64,
    /// Angle of repose of the hardest rock (hardness 1), degrees; hardness between the two
    /// interpolates the angle. Only a hardness map makes it matter. Default 60.
    pub hard_talus_angle: f64,
    /// Fraction of a cell's largest excess over its angle of repose that it sheds per
    /// iteration (0 to 0.25: above, cells fed from several sides at once rock back and forth
    /// between iterations). Default 0.25.
    pub rate: f64,
}

impl Default for Params {
    fn default() -> Self {
        Self { talus_angle: 35.0, hard_talus_angle: 60.0, rate: 0.25 }
    }
}

/// Largest rate: at 0.5 (the most a single pair of cells takes without overshooting) 11 % of
/// a steep ridged terrain's cells rock back and forth by more than a millimetre after 400
/// iterations, at 0.25 none (the test `a_steep_terrain_settles_without_rocking`).
pub const MAX_RATE: f64 = 0.25;

/// Steepest angle of repose accepted, degrees (a vertical wall has no talus).
const MAX_ANGLE: f64 = 89.0;

impl Params {
    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<(), ParamError> {
        fn check(ok: bool, name: &'static str, value: f64, expected: &'static str) -> Result<(), ParamError> {
            if ok { Ok(()) } else { Err(ParamError { name, value, expected }) }
        }
        let angle = |v: f64| v.is_finite() && v > 0.0 && v <= MAX_ANGLE;
        check(angle(self.talus_angle), "talus_angle", self.talus_angle, "> 0 and <= 89 degrees")?;
        check(
            angle(self.hard_talus_angle) && self.hard_talus_angle >= self.talus_angle,
            "hard_talus_angle",
            self.hard_talus_angle,
            "talus_angle to 89 degrees",
        )?;
        check(self.rate > 0.0 && self.rate <= MAX_RATE, "rate", self.rate, "> 0 and <= 0.25")?;
        Ok(())
    }

    /// The slope (rise over run) at which ground of hardness `h` (0..1) rests.
    pub fn repose_slope(&self, h: f32) -> f64 {
        let degrees = self.talus_angle + f64::from(h) * (self.hard_talus_angle - self.talus_angle);
        degrees.to_radians().tan()
    }
}

/// Every parameter as `erode params thermal` documents it, in field order.
pub const PARAM_DOCS: &[ParamDoc] = &[
    ParamDoc::new(
        "talus_angle",
        "angle of repose of loose material (hardness 0), degrees (> 0, <= 89): steeper ground sheds material",
    ).linear(1.0, 89.0, "degrees"),
    ParamDoc::new(
        "hard_talus_angle",
        "angle of repose of the hardest rock (hardness 1), degrees (talus_angle to 89); hardness between interpolates",
    ).linear(1.0, 89.0, "degrees"),
    ParamDoc::new(
        "rate",
        "fraction of a cell's largest excess over its angle of repose shed per iteration (> 0, <= 0.25)",
    ).linear(0.01, 0.25, ""),
];

/// The presets, the default first: (name, what it is for).
pub const PRESETS: &[(&str, &str)] = &[
    ("default", "scree at 35 degrees, hard rock at 60 (Params::default)"),
    ("scree", "loose slopes at 30 degrees: soft, rounded relief and wide talus aprons"),
    ("cliffs", "only the steepest faces crumble: 45 degrees, hard rock at 75"),
];

/// The parameter set called `name`.
pub fn preset(name: &str) -> Result<Params, UnknownPreset> {
    let d = Params::default();
    match name {
        "default" => Ok(d),
        "scree" => Ok(Params { talus_angle: 30.0, ..d }),
        "cliffs" => Ok(Params { talus_angle: 45.0, hard_talus_angle: 75.0, ..d }),
        _ => Err(UnknownPreset {
            model: super::NAME,
            name: name.to_string(),
            known: PRESETS.iter().map(|p| p.0).collect::<Vec<_>>().join(", "),
        }),
    }
}
