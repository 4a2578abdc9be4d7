//! What the user tunes in the stream-power model, in metres and years.

use crate::error::ParamError;
use crate::models::info::ParamDoc;
use crate::models::presets::UnknownPreset;

/// Stream-power model parameters (names as the CLI's `--set` uses them):
/// `dz/dt = U − K·A^m·S^n + D·∇²z`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Rock uplift rate `U`, m/yr (an uplift map multiplies it cell by cell). Default 0.001
    /// (1 mm/yr, an active range).
    pub uplift: f64,
    /// Erodibility `K`, m^(1−2m)/yr (an erodibility map multiplies it). Default 2e-5.
    pub erodibility: f64,
    /// Drainage-area exponent `m`. Default 0.45.
    pub m: f64,
    /// Slope exponent `n` (1 is solved exactly; other values by Newton iterations). Default 1.
    pub n: f64,
    /// Hillslope diffusivity `D`, m²/yr (0: no hillslope diffusion). Default 0.01.
    pub diffusivity: f64,
    /// Time step, years. The solvers are implicit: any step is stable, and shorter ones follow
    /// transients more closely. Default 10,000.
    pub dt_years: f64,
    /// Cells at or below this height are sea: base level, where rivers end (`-inf`: no sea).
    /// Default -inf.
    pub sea_level: f64,
    /// The map edges held at base level (rivers leave there): any of the letters `n`, `e`, `s`,
    /// `w`; the others are closed (no flow, no diffusive flux). Default "nesw".
    pub open_edges: String,
    /// Erodibility of hardness 1 relative to hardness 0 (0..1): with a hardness map a cell of
    /// hardness `H` erodes with `K·(1 − H·(1 − rock_erodibility))`, as in the other models.
    /// Default 0.1.
    pub rock_erodibility: f64,
    /// How water leaves a cell: `"d8"`, all of it to the steepest lower neighbour (O'Callaghan &
    /// Mark 1984), or `"mfd"`, shared among every lower neighbour in proportion to
    /// `slope^flow_exponent` (multiple flow directions, Freeman 1991; as in FastScape's multiple
    /// receivers), or `"rho8"`, D8 with each cell's diagonal slopes scaled by a random factor
    /// every step (Fairfield & Leymarie 1991). D8 cuts single-cell channels and is faster; MFD
    /// spreads water over hillslopes and ridges; Rho8 costs what D8 does without its preference
    /// for the eight directions. Default "d8".
    pub flow: String,
    /// The exponent `p` of MFD's shares, `slope^p` (0: equal shares; larger values approach
    /// D8). Unused with D8. Default 1.1 (Freeman 1991; `erode analyze --mfd` uses the same).
    pub flow_exponent: f64,
}

/// How water leaves a cell (the `flow` parameter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// All to the steepest lower neighbour.
    D8,
    /// Shared among the lower neighbours by slope.
    Multiple,
    /// All to the steepest lower neighbour, the diagonal slopes scaled by a random factor drawn
    /// per cell and step (Fairfield & Leymarie 1991's Rho8): the mean diagonal is D8's, but no
    /// direction wins everywhere, so channels need not run along the axes and diagonals.
    Rho8,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            uplift: 1e-3,
            erodibility: 2e-5,
            m: 0.45,
            n: 1.0,
            diffusivity: 0.01,
            dt_years: 1e4,
            sea_level: f64::NEG_INFINITY,
            open_edges: "nesw".into(),
            rock_erodibility: 0.1,
            flow: "d8".into(),
            flow_exponent: crate::analysis::flow::MFD_EXPONENT,
        }
    }
}

/// Which map edges are open (at base level).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenEdges {
    /// Row 0.
    pub north: bool,
    /// The last column.
    pub east: bool,
    /// The last row.
    pub south: bool,
    /// Column 0.
    pub west: bool,
}

impl OpenEdges {
    /// Whether any edge is open.
    pub fn any(self) -> bool {
        self.north || self.east || self.south || self.west
    }
}

/// Largest `flow_exponent` accepted (beyond it MFD is D8 in all but cost).
pub const MAX_FLOW_EXPONENT: f64 = 20.0;

/// Largest `m` or `n` accepted (beyond it `A^m` overflows f64 on large maps).
pub const MAX_EXPONENT: f64 = 4.0;

/// Cell sizes the stream-power law describes, metres: rivers and their valleys over kilometres.
/// On finer cells it cuts one-cell trenches into hillslopes that no river would hold.
pub const CELL_RANGE: (f64, f64) = (10.0, 10_000.0);

/// Largest uplift rate, either way, m/yr.
pub const MAX_UPLIFT: f64 = 1.0;
/// Largest erodibility `K`, m^(1-2m)/yr.
pub const MAX_ERODIBILITY: f64 = 1.0;
/// Largest hillslope diffusivity, m²/yr.
pub const MAX_DIFFUSIVITY: f64 = 1e4;

impl Params {
    /// A note when `cell` lies outside [`CELL_RANGE`].
    pub fn scale_note(&self, cell: crate::CellSize) -> Option<crate::models::ScaleNote> {
        let size = cell.x.max(cell.y);
        let (lo, hi) = CELL_RANGE;
        let (why, instead) = if size < lo {
            (
                "stream power describes rivers over kilometres and cuts one-cell trenches into hillslopes this fine",
                Some("grid"),
            )
        } else if size > hi {
            ("a cell this large holds whole river networks", None)
        } else {
            return None;
        };
        Some(crate::models::ScaleNote { model: "stream-power", cell: size, fits: CELL_RANGE, why: why.into(), instead })
    }

    /// Checks every parameter (bounds: [`MAX_UPLIFT`], [`MAX_ERODIBILITY`], [`MAX_DIFFUSIVITY`]).
    pub fn validate(&self) -> Result<(), ParamError> {
        fn check(ok: bool, name: &'static str, value: f64, expected: &'static str) -> Result<(), ParamError> {
            if ok { Ok(()) } else { Err(ParamError { name, value, expected }) }
        }
        let rate = |v: f64| v.is_finite() && v >= 0.0;
        // bounds far past any landscape (uplift: mountain belts rise ~1e-2 m/yr; erodibility:
        // 1e-7 to 1e-4; diffusivity: 1e-3 to 1 m²/yr) that keep a run finite: at each of
        // them a run of 1e6 years stays finite (the test `params_at_their_bounds_stay_finite`)
        check(self.uplift.abs() <= MAX_UPLIFT, "uplift", self.uplift, "-1 to 1 m/yr")?;
        check(
            rate(self.erodibility) && self.erodibility <= MAX_ERODIBILITY,
            "erodibility",
            self.erodibility,
            "0 to 1, m^(1-2m)/yr",
        )?;
        check(self.m.is_finite() && (0.0..=MAX_EXPONENT).contains(&self.m), "m", self.m, "0 to 4")?;
        check(self.n.is_finite() && self.n > 0.0 && self.n <= MAX_EXPONENT, "n", self.n, "> 0 and <= 4")?;
        check(
            rate(self.diffusivity) && self.diffusivity <= MAX_DIFFUSIVITY,
            "diffusivity",
            self.diffusivity,
            "0 to 1e4 m²/yr",
        )?;
        check(self.dt_years.is_finite() && self.dt_years > 0.0, "dt_years", self.dt_years, "> 0 years")?;
        check(self.sea_level < f64::INFINITY, "sea_level", self.sea_level, "a height or -inf")?;
        check((0.0..=1.0).contains(&self.rock_erodibility), "rock_erodibility", self.rock_erodibility, "0 to 1")?;
        check(
            self.flow_exponent.is_finite() && (0.0..=MAX_FLOW_EXPONENT).contains(&self.flow_exponent),
            "flow_exponent",
            self.flow_exponent,
            "0 to 20",
        )?;
        self.edges()?;
        self.flow_kind()?;
        Ok(())
    }

    /// The routing `flow` names.
    pub fn flow_kind(&self) -> Result<Flow, ParamError> {
        match self.flow.to_ascii_lowercase().as_str() {
            "d8" => Ok(Flow::D8),
            "mfd" => Ok(Flow::Multiple),
            "rho8" => Ok(Flow::Rho8),
            _ => Err(ParamError { name: "flow", value: f64::NAN, expected: "\"d8\", \"mfd\" or \"rho8\"" }),
        }
    }

    /// The open edges `open_edges` names.
    pub fn edges(&self) -> Result<OpenEdges, ParamError> {
        let mut e = OpenEdges::default();
        for ch in self.open_edges.chars() {
            match ch.to_ascii_lowercase() {
                'n' => e.north = true,
                'e' => e.east = true,
                's' => e.south = true,
                'w' => e.west = true,
                _ => {
                    return Err(ParamError {
                        name: "open_edges",
                        value: f64::NAN,
                        expected: "letters among n, e, s, w (e.g. \"nesw\", \"w\", or \"\" for none)",
                    });
                }
            }
        }
        Ok(e)
    }
}

/// `erode params stream-power`: each parameter with its unit and range.
pub const PARAM_DOCS: &[ParamDoc] = &[
    ParamDoc::new("uplift", "rock uplift rate U, m/yr (-1 to 1; an uplift map multiplies it)").linear(-0.01, 0.01, "m/yr"),
    ParamDoc::new("erodibility", "K in K*A^m*S^n, m^(1-2m)/yr (0 to 1; an erodibility map multiplies it)").log(1e-7, 1e-3, "m^(1-2m)/yr"),
    ParamDoc::new("m", "drainage-area exponent (0..4); steady channels have slope ~ A^(-m/n)").linear(0.0, 1.5, ""),
    ParamDoc::new("n", "slope exponent (> 0, <= 4; 1 is solved exactly, others by Newton iterations)").linear(0.5, 4.0, ""),
    ParamDoc::new("diffusivity", "hillslope diffusivity D, m^2/yr (0 to 1e4)").log(1e-4, 10.0, "m^2/yr"),
    ParamDoc::new("dt_years", "time step, years (> 0; implicit solvers: any step is stable)").log(1.0, 1e6, "years"),
    ParamDoc::new("sea_level", "cells at or below it are sea, base level, m (-inf: no sea)"),
    ParamDoc::new(
        "open_edges",
        "map edges at base level: letters among n, e, s, w (\"\" closes all; needs a sea_level)",
    ),
    ParamDoc::new(
        "rock_erodibility",
        "erodibility at hardness 1 relative to 0 (0..1): K*(1 - H*(1 - rock_erodibility))",
    ).linear(0.0, 1.0, ""),
    ParamDoc::new(
        "flow",
        "\"d8\" (all water to the steepest neighbour), \"mfd\" (shared among lower neighbours by slope) or \"rho8\" \
         (D8 with random diagonal slopes, Fairfield & Leymarie 1991)",
    ).choices(&["d8", "mfd", "rho8"]),
    ParamDoc::new(
        "flow_exponent",
        "MFD shares ~ slope^flow_exponent (0..20; 0 equal shares, large values approach D8)",
    ).linear(0.0, 20.0, ""),
];

/// The named parameter sets, for `--preset`: (name, what it is for); the default first.
pub const PRESETS: &[(&str, &str)] = &[
    ("default", "an active range: 1 mm/yr uplift, m/n = 0.45 (Params::default)"),
    ("slow", "a slowly rising range: 0.1 mm/yr uplift, lower relief"),
    ("nonlinear", "n = 2, m = 0.9 (the same concavity, slopes that grow as the square root of the rate)"),
];

/// The parameter set called `name`.
pub fn preset(name: &str) -> Result<Params, UnknownPreset> {
    let d = Params::default();
    match name {
        "default" => Ok(d),
        "slow" => Ok(Params { uplift: 1e-4, ..d }),
        "nonlinear" => Ok(Params { m: 0.9, n: 2.0, erodibility: 4e-7, ..d }),
        _ => Err(UnknownPreset {
            model: "stream-power",
            name: name.to_string(),
            known: PRESETS.iter().map(|p| p.0).collect::<Vec<_>>().join(", "),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_presets_validate_and_bad_values_are_named() {
        for (name, _) in PRESETS {
            preset(name).unwrap().validate().unwrap();
        }
        assert_eq!(PARAM_DOCS.len(), 11);
        let bad = |p: Params| p.validate().unwrap_err().name;
        let d = Params::default();
        assert_eq!(bad(Params { n: 0.0, ..d.clone() }), "n");
        assert_eq!(bad(Params { m: f64::NAN, ..d.clone() }), "m");
        assert_eq!(bad(Params { erodibility: -1.0, ..d.clone() }), "erodibility");
        assert_eq!(bad(Params { diffusivity: -0.1, ..d.clone() }), "diffusivity");
        assert_eq!(bad(Params { dt_years: 0.0, ..d.clone() }), "dt_years");
        assert_eq!(bad(Params { uplift: f64::INFINITY, ..d.clone() }), "uplift");
        assert_eq!(bad(Params { open_edges: "nx".into(), ..d.clone() }), "open_edges");
        assert_eq!(bad(Params { flow: "dinf".into(), ..d.clone() }), "flow");
        assert_eq!(bad(Params { flow_exponent: -1.0, ..d.clone() }), "flow_exponent");
        assert_eq!(Params { flow: "MFD".into(), ..d.clone() }.flow_kind().unwrap(), Flow::Multiple);
        assert!(preset("nope").is_err());
    }
}
