//! The bench terrains every model's docs, tests and benchmarks measure on, named once.
//!
//! - **mountain**: fBm with 1500 m of relief on 30 m cells (1024² is 30.7 km across), the
//!   scale of a DEM tile of a mountain range.
//! - **artist**: fBm with 100 m of relief on 2 m cells (1024² is 2 km across), what a terrain
//!   artist erodes for a game level.
//!
//! Both keep their shape in metres at any size: the largest feature is a quarter of the 1024²
//! map (7.7 km and 512 m), so a smaller size is a smaller piece of the same kind of land, and
//! [`at_cell_size`] samples the same surface on a finer or coarser grid.

use super::{TerrainKind, TerrainSpec, generate};
use crate::error::TerrainError;
use crate::grid::{CellSize, Heightmap};

/// Which bench terrain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bench {
    /// 30 m cells, 1500 m relief.
    Mountain,
    /// 2 m cells, 100 m relief.
    Artist,
}

impl Bench {
    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Bench::Mountain => "mountain",
            Bench::Artist => "artist",
        }
    }

    /// Cell size of the bench, m.
    pub fn cell_size(self) -> f64 {
        match self {
            Bench::Mountain => 30.0,
            Bench::Artist => 2.0,
        }
    }

    /// Relief (highest minus lowest cell of the 1024² map), m.
    pub fn relief(self) -> f64 {
        match self {
            Bench::Mountain => 1500.0,
            Bench::Artist => 100.0,
        }
    }
}

/// The largest feature's wavelength, m: a quarter of the 1024² map.
fn feature_metres(bench: Bench) -> f64 {
    256.0 * bench.cell_size()
}

/// `size`² cells of the bench terrain at its own cell size.
pub fn bench(bench: Bench, size: usize) -> Result<Heightmap, TerrainError> {
    at_cell_size(bench, size, bench.cell_size())
}

/// `size`² cells of the bench terrain's surface sampled every `cell` metres: the same land as
/// [`bench()`] on another grid (the same noise at the same places in metres, the same number of
/// octaves, so no finer detail appears on a finer grid).
pub fn at_cell_size(bench: Bench, size: usize, cell: f64) -> Result<Heightmap, TerrainError> {
    let spec = TerrainSpec {
        kind: TerrainKind::Fbm,
        width: size,
        height: size,
        cell_size: CellSize::square(cell),
        seed: 1,
        relief: bench.relief() * (size as f64 * cell / (1024.0 * bench.cell_size())).min(1.0).sqrt(),
        base: 0.0,
        feature_size: feature_metres(bench) / cell,
        octaves: 8,
        persistence: 0.5,
    };
    generate(&spec)
}

/// The stream-power model's bench start: a flat plain `size`² cells of `cell` metres with 1 m
/// of white noise (seeded): every ninth cell or so is a pit, the hardest start for depression
/// filling, and the start from which uplift grows a range.
pub fn noisy_plain(size: usize, cell: f64, seed: u64) -> Result<crate::Grid<f32>, crate::GridError> {
    let mut rng = crate::rng::SplitMix64::new(seed);
    let data = (0..size * size).map(|_| rng.next_f32()).collect();
    crate::Grid::from_vec(size, size, CellSize::square(cell), data)
}
