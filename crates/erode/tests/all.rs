//! Every integration test of the library, one module per file beside this one, in one test
//! binary: one link instead of one per file, and the files' tests share the test threads (a
//! file whose last test runs alone no longer leaves a core idle while the next file waits).

mod common;

mod analysis;
mod contract;
mod droplet;
mod droplet_look;
#[cfg(feature = "gpu")]
mod gpu_droplet;
#[cfg(feature = "gpu")]
mod gpu_grid;
#[cfg(feature = "gpu")]
mod gpu_layout;
mod grid_erosion;
mod grid_layer;
mod grid_look;
mod grid_sweep;
mod grid_water;
mod nodata;
mod open_edge;
mod param_docs;
mod sph;
mod stream_power;
mod texture;
mod thermal;
