//! The erosion models. Each has `Params` (what the user tunes), `State` (what evolves) and a
//! simulator that owns scratch memory and runs `step`.

pub mod info;
pub(crate) mod inputs;
pub mod make;
pub mod nodata;
pub mod presets;
mod scale;

pub use info::{ModelInfo, ParamDoc, Slider};
pub use scale::ScaleNote;

/// Declares each model's module and [`MODELS`], the one list of them that every front end
/// iterates (`erode simulate`, `erode params`, the memory check, the viewer, Python, the
/// tests): a new model is its folder and its name here.
macro_rules! models {
    ($($model:ident),* $(,)?) => {
        $(pub mod $model;)*
        /// Every model, in the order front ends show them: each one's `INFO`.
        pub static MODELS: &[ModelInfo] = &[$($model::INFO),*];
    };
}

models!(grid, droplet, stream_power, sph, thermal);
