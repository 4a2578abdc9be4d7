//! The thermal model: talus erosion alone (Musgrave, Kolb & Mace 1989, in the eight-neighbour
//! form of Olsen 2004), the "Thermal" node of terrain tools: wherever the ground is steeper than
//! its angle of repose, material slides to its lower neighbours until it is not. Scree slopes,
//! crumbled cliffs, talus aprons (`docs/thermal-model.md`).
//!
//! An iteration, from the heights before it:
//!
//! 1. `talus_flux`: cell `i`'s excess towards each neighbour `j` in the domain is
//!    `e_ij = (z_i − z_j) − tan α_i · d_ij`; the cell sheds `rate · max e_ij`, shared among the
//!    neighbours with `e_ij > 0` in proportion to `e_ij`;
//! 2. `talus_limit`: a cell that its higher neighbours would feed with more than `rate` times
//!    the steepest one's excess gets that much, shared in proportion (a flux limiter on the
//!    receiving side, so a hollow fed from all sides does not overfill);
//! 3. `talus_apply`: each cell loses what it sheds and gains what its higher neighbours shed
//!    onto it, both recomputed from the same heights, so what leaves arrives bit for bit.
//!
//! `α` is `talus_angle` on ground of hardness 0 and `hard_talus_angle` at hardness 1 (a
//! hardness map interpolates between). With `rate ≤ 0.25` the terrain settles without cells
//! rocking back and forth between iterations. The map
//! edges and nodata cells are closed: material never leaves the domain, so its volume stays;
//! the books (f64, m³) count what left cells (`eroded`) and what arrived (`deposited`).
//! Heights are f64 metres; each row is computed on its own and sums reduced in row order: the
//! same bits on any thread count.

pub mod cpu;
pub mod params;
pub mod run;
pub mod state;

pub use cpu::{CpuSim, Stage};
pub use params::{PARAM_DOCS, PRESETS, Params, preset};
pub use run::ThermalRun;
pub use state::{Books, State, params_fingerprint};

use crate::contract::Unit;
use crate::models::make::Maker;
use crate::models::{ModelInfo, ParamDoc};

/// The model's name on the command line, in checkpoints and in reports.
pub const NAME: &str = "thermal";

/// The model as front ends list it (see [`crate::models::MODELS`]).
pub const INFO: ModelInfo = ModelInfo {
    name: NAME,
    summary: "Talus erosion alone: slopes steeper than the angle of repose shed material downhill (Musgrave et al. 1989)",
    params: PARAM_DOCS,
    presets: || PRESETS.to_vec(),
    maps: &[ParamDoc::new("height", "the terrain, m"), ParamDoc::new("change", "height now less at the start, m")],
    // peak resident size per cell of a whole run, measured 84 B on 1024² and 73 B on 4096², rounded up
    make: Some(Maker::of::<ThermalRun>(Unit::Iteration, 96, &[ParamDoc::new(
        "hardness",
        "0..1; ground of hardness H rests at talus_angle + H x (hard_talus_angle - talus_angle)",
    )])),
};
