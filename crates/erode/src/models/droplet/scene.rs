//! The droplet model's named bench scene, shared by its criterion bench, its probes and the
//! figures in BENCHMARKS.md, so they all measure the same terrain.

use super::params::Params;
use crate::Grid;
use crate::error::TerrainError;
use crate::terrain::{TerrainKind, TerrainSpec, generate};

/// fBm terrain of `size` x `size` cells (1 m), seed 2, features half the map across, with
/// `relief` metres between its lowest and highest cell. At 4 % of the size (the bench's) its
/// slopes are the gentle ones of Beyer's examples: droplets at his settings take ~39 steps.
pub fn bench_terrain(size: usize, relief: f64) -> Result<Grid<f32>, TerrainError> {
    let spec = TerrainSpec {
        kind: TerrainKind::Fbm,
        width: size,
        height: size,
        seed: 2,
        relief,
        feature_size: size as f64 / 2.0,
        ..Default::default()
    };
    Ok(generate(&spec)?.heights)
}

/// `params` with the floor (`min_height`) at the lowest height of `terrain`, as `erode simulate
/// droplet` sets it when the parameters leave it unset.
pub fn floor_at_lowest(params: Params, terrain: &Grid<f32>) -> Params {
    let lowest = terrain.as_slice().iter().fold(f32::INFINITY, |a, &b| a.min(b));
    Params { min_height: f64::from(lowest), ..params }
}
