//! Gradient (Perlin) noise and its fractal sums: fBm and ridged multifractal.

use super::TerrainSpec;
use crate::rng::SplitMix64;

/// 2-D gradient noise with a seeded permutation, values roughly in `[-1, 1]`.
struct Gradient {
    perm: [u8; 512],
}

impl Gradient {
    fn new(seed: u64) -> Self {
        let mut p: [u8; 256] = std::array::from_fn(|i| i as u8);
        let mut rng = SplitMix64::new(seed);
        for i in (1..256).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            p.swap(i, j);
        }
        Self { perm: std::array::from_fn(|i| p[i % 256]) }
    }

    fn grad(&self, ix: i64, iy: i64, dx: f64, dy: f64) -> f64 {
        let h = self.perm[(self.perm[(ix & 255) as usize] as usize + (iy & 255) as usize) & 511];
        // eight unit-ish directions
        match h & 7 {
            0 => dx + dy,
            1 => dx - dy,
            2 => -dx + dy,
            3 => -dx - dy,
            4 => dx * std::f64::consts::SQRT_2,
            5 => -dx * std::f64::consts::SQRT_2,
            6 => dy * std::f64::consts::SQRT_2,
            _ => -dy * std::f64::consts::SQRT_2,
        }
    }

    fn at(&self, x: f64, y: f64) -> f64 {
        let (x0, y0) = (x.floor(), y.floor());
        let (fx, fy) = (x - x0, y - y0);
        let (ix, iy) = (x0 as i64, y0 as i64);
        let fade = |t: f64| t * t * t * (t * (t * 6.0 - 15.0) + 10.0);
        let (u, v) = (fade(fx), fade(fy));
        let lerp = |a: f64, b: f64, t: f64| a + (b - a) * t;
        let n00 = self.grad(ix, iy, fx, fy);
        let n10 = self.grad(ix + 1, iy, fx - 1.0, fy);
        let n01 = self.grad(ix, iy + 1, fx, fy - 1.0);
        let n11 = self.grad(ix + 1, iy + 1, fx - 1.0, fy - 1.0);
        lerp(lerp(n00, n10, u), lerp(n01, n11, u), v)
    }
}

/// Octave sum over the grid; `shape(noise, weight)` turns one octave's noise into its
/// contribution and the next octave's weight.
fn octaves(spec: &TerrainSpec, shape: impl Fn(f64, f64) -> (f64, f64)) -> Vec<f64> {
    let layers: Vec<Gradient> =
        (0..spec.octaves).map(|o| Gradient::new(spec.seed.wrapping_mul(0x9E37).wrapping_add(u64::from(o)))).collect();
    let base_freq = 1.0 / spec.feature_size;
    let mut out = Vec::with_capacity(spec.width * spec.height);
    for row in 0..spec.height {
        for col in 0..spec.width {
            let (mut sum, mut amp, mut freq, mut weight) = (0.0, 1.0, base_freq, 1.0);
            for (o, layer) in layers.iter().enumerate() {
                // offset each octave so lattice points do not line up
                let off = o as f64 * 17.31;
                let n = layer.at(col as f64 * freq + off, row as f64 * freq - off);
                let (value, next_weight) = shape(n, weight);
                sum += value * amp;
                weight = next_weight;
                amp *= spec.persistence;
                freq *= 2.0;
            }
            out.push(sum);
        }
    }
    out
}

/// Fractal Brownian motion: the plain sum of octaves.
pub fn fbm(spec: &TerrainSpec) -> Vec<f64> {
    octaves(spec, |n, w| (n, w))
}

/// Ridged multifractal (Musgrave): `(1 - |n|)^2`, each octave weighted by the previous one,
/// so detail gathers on the ridges.
pub fn ridged(spec: &TerrainSpec) -> Vec<f64> {
    octaves(spec, |n, w| {
        let r = (1.0 - n.abs()).powi(2) * w;
        (r, (r * 2.0).clamp(0.0, 1.0))
    })
}
