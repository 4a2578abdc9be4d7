//! Terrain generators: noise for real-looking terrain, analytic shapes for tests.
//!
//! Every generator is deterministic for a seed and returns heights in metres in
//! `[base, base + relief]`.

pub mod bench;
mod diamond_square;
mod noise;
mod shapes;

pub use diamond_square::diamond_square;
pub use noise::{fbm, ridged};
pub use shapes::{bowl, cone, plane_with_pit, ramp};

use crate::error::TerrainError;
use crate::grid::{CellSize, Grid, Heightmap};

/// Which terrain to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TerrainKind {
    /// Fractal Brownian motion of gradient noise: rolling hills.
    Fbm,
    /// Ridged multifractal noise: sharp crests, mountain ranges.
    Ridged,
    /// Diamond-square midpoint displacement (the generator Jákó & Tóth use).
    DiamondSquare,
    /// A cone centred on the grid: test shape with known symmetry.
    Cone,
    /// A plane sloping down from west to east: test shape with one slope.
    Ramp,
    /// A paraboloid bowl, lowest at the centre: test shape that holds water.
    Bowl,
    /// A flat plane with a smooth pit at the centre.
    PlaneWithPit,
    /// White noise (seeded): a flat noisy plain, the start from which the stream-power model
    /// grows a range.
    Noise,
}

impl TerrainKind {
    /// Every kind, in documentation order.
    pub const ALL: [TerrainKind; 8] = [
        Self::Fbm,
        Self::Ridged,
        Self::DiamondSquare,
        Self::Cone,
        Self::Ramp,
        Self::Bowl,
        Self::PlaneWithPit,
        Self::Noise,
    ];

    /// The kebab-case name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Fbm => "fbm",
            Self::Ridged => "ridged",
            Self::DiamondSquare => "diamond-square",
            Self::Cone => "cone",
            Self::Ramp => "ramp",
            Self::Bowl => "bowl",
            Self::PlaneWithPit => "plane-with-pit",
            Self::Noise => "noise",
        }
    }
}

/// What to generate. Every field documents its unit and default.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TerrainSpec {
    /// Generator. Default: `Fbm`.
    pub kind: TerrainKind,
    /// Columns. Default 256.
    pub width: usize,
    /// Rows. Default 256.
    pub height: usize,
    /// Cell size, metres. Default 1 m square.
    pub cell_size: CellSize,
    /// Seed of the noise generators (shapes ignore it). Default 0.
    pub seed: u64,
    /// Height difference between the lowest and highest cell, metres. Default 64 m.
    pub relief: f64,
    /// Height of the lowest cell, metres. Default 0 m.
    pub base: f64,
    /// Wavelength of the largest noise feature, cells. Default 128 cells.
    pub feature_size: f64,
    /// Noise octaves (fBm, ridged). Default 6, range 1..=16.
    pub octaves: u32,
    /// Amplitude ratio between octaves (fBm, ridged), or diamond-square roughness. Default 0.5,
    /// range (0, 1).
    pub persistence: f64,
}

impl Default for TerrainSpec {
    fn default() -> Self {
        Self {
            kind: TerrainKind::Fbm,
            width: 256,
            height: 256,
            cell_size: CellSize::square(1.0),
            seed: 0,
            relief: 64.0,
            base: 0.0,
            feature_size: 128.0,
            octaves: 6,
            persistence: 0.5,
        }
    }
}

impl TerrainSpec {
    /// Checks every parameter; the error names the first one out of range.
    pub fn validate(&self) -> Result<(), TerrainError> {
        let bad = |name, value: f64, expected| Err(TerrainError::Parameter { name, value, expected });
        // the bound a rescaled map's heights keep
        let most = crate::transform::MAX_HEIGHT;
        if !(self.relief >= 0.0 && self.relief <= most) {
            return bad("relief", self.relief, "0 to 1e6 m");
        }
        if !(self.base.abs() <= most && self.base.abs() + self.relief <= most) {
            return bad("base", self.base, "a height within ±1e6 m, with the relief");
        }
        if !(self.feature_size.is_finite() && self.feature_size >= 1.0) {
            return bad("feature_size", self.feature_size, "at least 1 cell");
        }
        if !(1..=16).contains(&self.octaves) {
            return bad("octaves", f64::from(self.octaves), "1 to 16");
        }
        if !(self.persistence > 0.0 && self.persistence < 1.0) {
            return bad("persistence", self.persistence, "strictly between 0 and 1");
        }
        Grid::from_vec(1, 1, self.cell_size, vec![0u8])?;
        if self.width == 0 || self.height == 0 {
            return Err(crate::error::GridError::Empty { width: self.width, height: self.height }.into());
        }
        Ok(())
    }
}

/// Generates the terrain `spec` describes.
pub fn generate(spec: &TerrainSpec) -> Result<Heightmap, TerrainError> {
    spec.validate()?;
    let unit = match spec.kind {
        TerrainKind::Fbm => fbm(spec),
        TerrainKind::Ridged => ridged(spec),
        TerrainKind::DiamondSquare => diamond_square(spec),
        TerrainKind::Cone => cone(spec.width, spec.height),
        TerrainKind::Ramp => ramp(spec.width, spec.height),
        TerrainKind::Bowl => bowl(spec.width, spec.height),
        TerrainKind::PlaneWithPit => plane_with_pit(spec.width, spec.height),
        TerrainKind::Noise => {
            let mut rng = crate::rng::SplitMix64::new(spec.seed);
            (0..spec.width * spec.height).map(|_| rng.next_f64()).collect()
        }
    };
    let heights = scale_to(unit, spec)?;
    Ok(Heightmap::new(heights)?)
}

/// Stretches raw values to `[base, base + relief]` metres.
fn scale_to(raw: Vec<f64>, spec: &TerrainSpec) -> Result<Grid<f32>, TerrainError> {
    let (lo, hi) = raw.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    let span = if hi > lo { hi - lo } else { 1.0 };
    let data = raw.iter().map(|&v| (spec.base + (v - lo) / span * spec.relief) as f32).collect();
    Ok(Grid::from_vec(spec.width, spec.height, spec.cell_size, data)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_spans_base_to_base_plus_relief_and_is_deterministic() {
        for kind in TerrainKind::ALL {
            let spec =
                TerrainSpec { kind, width: 67, height: 41, seed: 9, relief: 50.0, base: -10.0, ..Default::default() };
            let a = generate(&spec).unwrap();
            let b = generate(&spec).unwrap();
            assert_eq!(a, b, "{kind:?} not deterministic");
            let s = a.stats();
            assert!((s.min - -10.0).abs() < 1e-4, "{kind:?} min {}", s.min);
            assert!((s.max - 40.0).abs() < 1e-4, "{kind:?} max {}", s.max);
        }
    }

    #[test]
    fn seeds_change_noise_terrains() {
        for kind in [TerrainKind::Fbm, TerrainKind::Ridged, TerrainKind::DiamondSquare] {
            let a = generate(&TerrainSpec { kind, seed: 1, ..Default::default() }).unwrap();
            let b = generate(&TerrainSpec { kind, seed: 2, ..Default::default() }).unwrap();
            assert_ne!(a, b, "{kind:?} ignores the seed");
        }
    }

    #[test]
    fn validate_names_the_parameter() {
        let spec = TerrainSpec { persistence: 1.5, ..Default::default() };
        match spec.validate() {
            Err(TerrainError::Parameter { name, .. }) => assert_eq!(name, "persistence"),
            other => panic!("{other:?}"),
        }
    }
}
