//! The droplet model: particle erosion after Beyer (2015), in metres and seconds
//! (`docs/droplet-model.md`).
//!
//! Each droplet is the rain of one cell. It starts at a random position (or where the rain map
//! says) and for up to `max_distance` metres, one cell per step: reads the bilinear height and
//! gradient, turns `dir = dir·k − grad·(1 − k)` (a random direction on flat ground), moves one
//! cell, and compares heights `Δh = h(new) − h(old)`. The parameters are lengths of path;
//! [`StepRule`] turns them into shares per step for the map's cell size, so the same parameters
//! give the same change at any resolution. Uphill it fills the dip it leaves up to the next
//! place's height (`Δh / Σw²` of the bilinear weights, at most its load); downhill its capacity
//! is `max(−Δh, min_slope·cell)·speed·water·capacity/cell`, times `(1 + A/discharge_area)^
//! discharge_exponent` with `A` the drainage area the droplets before it traced (their visits,
//! McDonald 2020): above capacity it drops a share of the excess, below it takes a share of the
//! free capacity through a circular brush of `radius` metres centred on the true position
//! (weights `max(0, r − dist)`, normalised; distances in f32, weights rounded to 2⁻²⁰ cell),
//! never lowering its place below the next one. Deposits split bilinearly over the 4 corners.
//! Then `speed² ← (speed² − 2·g·Δh)·friction share`, `water ← water·(1 − evaporation share)`.
//! A droplet that dies deposits its load; one leaving an open edge takes a last step onto the
//! fixed ground beyond it (the input's slope across the edge continued: `state::beyond_edge`),
//! then takes its load away (booked as outflow). After each batch a share of the batch's change
//! is spread over 3 x 3 cells (`smooth.rs`), against the pits single droplets leave.
//!
//! Every droplet changes the terrain as it goes and sees what came before it, itself included.
//! A hardness map makes cells resist (1 erodes least: `rock_erodibility` of soil's share).

//! # Determinism and parallelism
//!
//! Droplet `i` draws from `SplitMix64::keyed(seed, i)`. Droplets run in batches of `batch_size`;
//! within a batch they are grouped by the band of rows they start in, with bands at least two
//! reaches tall (a droplet never moves further than its lifetime, so it never touches a row more
//! than `reach = steps + ⌈radius⌉ + 2` rows away, path and radius in cells). The even bands' droplets run in parallel,
//! each band's in droplet order, then the odd bands': no two droplets running at the same time
//! touch the same cell, and the result is the same bits for any thread count. Against a strictly
//! serial run (`batch_size = 1`, or a map shorter than eight reaches) only the order of droplets
//! in a batch differs; `examples/droplet_batches.rs` measures the difference (BENCHMARKS.md): it
//! is about the size of the difference between two serial runs with different seeds.
//!
//! # Books
//!
//! Every change is a whole number of quanta (2⁻³² m); eroded, deposited and outflow are exact
//! integer sums of them: eroded = deposited + outflow holds to the quantum once every droplet
//! has died. The f32 terrain carries the changes with its own rounding (the report compares it
//! with the books).

mod brush;
pub mod cpu;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod params;
pub mod scene;
mod smooth;
pub mod state;

pub use cpu::{CpuSim, StepKind, StepRecord};
pub use params::{Border, NodataBorder, PARAM_DOCS, PRESETS, Params, StepRule, preset};
pub use state::{Books, StartMaps, State, params_fingerprint};

/// The model's name on the command line, in checkpoints and in reports.
pub const NAME: &str = "droplet";

/// The model as front ends list it (see [`crate::models::MODELS`]).
pub const INFO: crate::models::ModelInfo = crate::models::ModelInfo {
    name: NAME,
    summary: "Droplets eroding a heightmap one after another (Beyer 2015)",
    params: PARAM_DOCS,
    presets: || PRESETS.to_vec(),
    maps: &[
        crate::models::ParamDoc::new("height", "the eroded terrain, m"),
        crate::models::ParamDoc::new("erosion", "ground removed, m"),
        crate::models::ParamDoc::new("deposition", "ground laid down, m"),
        crate::models::ParamDoc::new("flow", "droplet visits per cell (where water ran)"),
    ],
    make: None,
};
