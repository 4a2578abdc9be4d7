//! The SPH model: fluid particles eroding a triangle mesh, after Skorkovská, Kolingerová and
//! Beneš, read as `docs/sph-model.md` says. The surface may hold what a heightfield cannot:
//! tunnels, caves, overhangs.
//!
//! One iteration ([`CpuSim::step`]): water enters at emitters and leaves in sinks
//! ([`inflow`]); particles are sorted into a uniform grid of the kernel's
//! support and the walls near each are found through a grid over the faces; pressure follows
//! the Tait equation (clamped at 0). Forces: the pressure gradient (renormalised along walls),
//! Monaghan's artificial and a laminar viscosity, gravity along −z, each wall's mirror pressure
//! and no-slip drag, and within the particle radius the penalty force of eq. 1. Density follows
//! the continuity equation (the walls' mirror images included), Shepard-filtered now and then.
//! Particles advance by symplectic Euler with a fixed step from the CFL and viscous limits
//! (sound speed at least 10x the top speed the scene can reach); `docs/sph-model.md` has the
//! equations. At each contact the shear rate `θ = v_rel/d`
//! (eq. 4; `d` at least a tenth of the radius) gives `τ = K·θ^m` (eq. 3); above `τc` the
//! particle takes `k·(τ − τc)^a·Δt·Δx²` from the face (eq. 2), a third from each vertex; below
//! it, it gives back up to `k·(τc − τ)^a·Δt·Δx²` of what it carries; both times the
//! morphological factor (Roelvink 2006), so the surface changes within minutes. Then each vertex with a
//! volume owed moves along its normal by `s/V` (eqs. 5–7), one after the other, so the enclosed
//! volume changes by exactly `s`; the faces around moved vertices are checked (area, turn-over,
//! crossing another face) and a bad move is undone with a typed error.
//!
//! Units: metres, seconds, kilograms; volumes in m³. The books (f64): mesh volume change
//! (divergence theorem) + pending + carried + outflow = 0.
//!
//! Every per-particle stage gathers from neighbours in a fixed order and the vertex volumes are
//! added in particle order, so the result is the same bits for any thread count.

pub mod build;
pub mod checkpoint;
pub mod cpu;
pub mod inflow;
pub mod intersect;
pub mod kernel;
pub mod mesh;
mod mirror;
pub mod neighbors;
pub mod params;
pub mod scale_model;
pub mod scenes;
pub mod state;

pub use build::{HeightmapMesh, Refine};
pub use cpu::{CpuSim, Derived, Frame, Stage};
pub use inflow::{Emitter, Inflow, Sink};
pub use mesh::TriMesh;
pub use params::{MAX_KINEMATIC_VISCOSITY, MAX_MORPHOLOGICAL_FACTOR, MAX_SOUND_SPEED, PARAM_DOCS, Params};
pub use scale_model::{ModelScale, heightmap_scene};
pub use scenes::{Scene, SceneKind};
pub use state::{Balance, Books, FluidBlock, State, check_mesh, input_hash};

/// The model's name on the command line, in checkpoints and in reports.
pub const NAME: &str = "sph";

/// The model as front ends list it (see [`crate::models::MODELS`]).
pub const INFO: crate::models::ModelInfo = crate::models::ModelInfo {
    name: NAME,
    summary: "Fluid particles eroding a triangle mesh (Skorkovská et al.): caves, tunnels, overhangs",
    params: PARAM_DOCS,
    presets: Vec::new,
    maps: &[],
    make: None,
};
