//! The erosion models. Each has `Params` (what the user tunes), `State` (what evolves) and a
//! simulator that owns scratch memory and runs `step`.

pub mod droplet;
pub mod grid;
pub mod info;
pub(crate) mod inputs;
pub mod nodata;
pub mod presets;
mod scale;
pub mod sph;
pub mod stream_power;

pub use info::{MODELS, ModelInfo, ParamDoc};
pub use scale::ScaleNote;
