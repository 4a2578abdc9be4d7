//! The stream-power model: a landscape-evolution model that grows and wears mountain ranges
//! over millions of years, in metres and years (`docs/stream-power-model.md`).
//!
//! `dz/dt = U − K·A^m·S^n + D·∇²z`: rock rises at `U`, rivers cut at a rate that grows with
//! their drainage area `A` and slope `S` (the stream-power law; detachment-limited: what they
//! cut leaves through base level), and hillslopes creep by diffusion. A step of `Δt`:
//!
//! 1. `uplift`: every cell but base level rises by `U·Δt` (an uplift map multiplies `U`);
//! 2. `diffusion`: implicit hillslope diffusion, rows then columns (see [`diffusion`]);
//! 3. `routing`: each cell's steepest lower neighbour (D8, O'Callaghan & Mark 1984), flats
//!    routed to where they spill;
//! 4. `depressions`: closed depressions filled to their spill height, lake surfaces routed to
//!    their outlet: small lakes flooded from their pit (see [`crate::flow::lakes`]), the rest through a
//!    basin graph and its minimum spanning tree (Cordonnier, Bovy & Braun 2019; see
//!    [`crate::flow::depressions`]);
//! 5. `order`: the stack of Braun & Willett (2013), every receiver before its donors;
//! 6. `accumulation`: drainage area down the stack;
//! 7. `erosion`: the implicit stream-power solver of Braun & Willett (2013), exact for `n = 1`,
//!    Newton iterations otherwise (see [`erosion`]).
//!
//! With `flow = "mfd"` the order, accumulation and erosion stages share each cell's water among
//! all its lower neighbours (Freeman 1991) and solve the incision over them (see [`multiple`]; the routing is [`crate::flow::multiple`]).
//!
//! Filling and incision leave every cell above its receiver, so each step ends on a surface
//! that drains (diffusion's new pits are filled in the step that makes them).
//!
//! Base level: the open map edges (`open_edges`), cells beside nodata holes, and cells at or
//! below `sea_level`; they keep their height. Both solvers are implicit, so any `Δt` is stable.
//!
//! # Determinism and books
//!
//! The row passes (uplift, diffusion, routing) compute each cell on its own; the stack's trees
//! are split into a fixed number of groups that run in parallel (accumulation, erosion), each
//! tree whole in one group; the remaining work on pits and flats runs in one thread. With MFD,
//! cells are visited in dependency order on every thread, each computed from the cells it
//! waited for in a fixed order. Sums are reduced by row or by group, in order: the same bits on
//! any thread count. The books (f64, m³) hold `ΔV = uplifted − eroded − diffused_out + filled`,
//! each term summed as it happens, to ~1e-12.

pub mod cpu;
pub mod diffusion;
pub mod erosion;
pub mod multiple;
pub mod params;
pub mod state;

pub use cpu::{CpuSim, STAGES, Stage};
pub use params::{Flow, OpenEdges, PARAM_DOCS, PRESETS, Params, preset};
pub use state::{Books, StartMaps, State, params_fingerprint};

/// The model's name on the command line, in checkpoints and in reports.
pub const NAME: &str = "stream-power";

/// The model as front ends list it (see [`crate::models::MODELS`]).
pub const INFO: crate::models::ModelInfo = crate::models::ModelInfo {
    name: NAME,
    summary: "Uplift and stream-power erosion over millions of years: mountain ranges and their drainage (Braun & Willett 2013)",
    params: PARAM_DOCS,
    presets: || PRESETS.to_vec(),
    maps: &[
        crate::models::ParamDoc::new("height", "the terrain, m"),
        crate::models::ParamDoc::new("drainage_area", "area draining through each cell, m²"),
        crate::models::ParamDoc::new("erosion_rate", "river erosion rate of the last step, m/yr"),
        crate::models::ParamDoc::new("uplift", "uplift rate, m/yr"),
    ],
    make: None,
};
