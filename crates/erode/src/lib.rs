//! # erode
//!
//! Terrain erosion simulation: the library behind the `erode` command line and viewer.
//!
//! This crate holds the models and the data they work on. It reads and writes no files (that is
//! `erode-io`), prints nothing, and opens no windows.
//!
//! | module | what |
//! | --- | --- |
//! | [`contract`] | one interface over the models: advance by n, books, maps, checkpoints |
//! | [`amplify`] | multi-scale erosion: a coarse range refined level by level (Schott et al. 2024) |
//! | [`analysis`] | drainage, slope–area fits, depressions, curvature: what a terrain's shape says |
//! | [`grid`] | [`Grid`], cell sizes in metres, [`Heightmap`] with a nodata mask |
//! | [`terrain`] | seeded generators: fBm, ridged, diamond-square, and analytic test shapes |
//! | [`transform`] | resample, crop and rescale heightmaps between steps of a chain |
//! | [`preview`] | hillshaded colour previews of a heightmap, as RGB pixels |
//! | [`rng`] | the fixed random number generator every model uses |
//!
//! Units: heights and cell sizes in metres, time in seconds.
//!
//! ```
//! use erode::terrain::{generate, TerrainKind, TerrainSpec};
//!
//! let spec = TerrainSpec { kind: TerrainKind::Ridged, width: 64, height: 64, seed: 7, ..Default::default() };
//! let map = generate(&spec).unwrap();
//! let stats = map.stats();
//! assert!(stats.min >= 0.0 && stats.max <= 64.0 + 1e-3);
//! ```
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod adaptive_mesh;
pub mod amplify;
pub mod analysis;
pub mod checkpoint;
pub mod contract;
pub mod error;
pub mod flow;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod grid;
pub mod mesh_chunks;
pub mod mesh_preview;
pub mod models;
mod par;
pub mod preview;
pub mod ranks;
pub mod rng;
pub mod surface_mesh;
pub mod terrain;
pub mod texture;
pub mod transform;

pub use checkpoint::CheckpointError;
pub use error::{
    AnalysisError, GridError, MeshError, ParamError, SimError, TerrainError, TextureError, TransformError,
};
pub use grid::{CellSize, Grid, HeightStats, Heightmap, RowStats, ValidCells};
