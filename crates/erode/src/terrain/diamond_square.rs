//! Diamond-square midpoint displacement (Fournier, Fussell & Carpenter 1982), the generator Jákó & Tóth
//! uses for its initial terrains.

use super::TerrainSpec;
use crate::rng::SplitMix64;

/// Raw diamond-square values on a `(2^n + 1)`-square lattice covering the grid, cropped to it.
/// `spec.persistence` is the roughness: the displacement shrinks by it at every halving.
pub fn diamond_square(spec: &TerrainSpec) -> Vec<f64> {
    let need = spec.width.max(spec.height).max(2);
    let mut n = 1usize;
    while n + 1 < need {
        n *= 2;
    }
    let size = n + 1;
    let mut rng = SplitMix64::new(spec.seed ^ 0xD1A3_0000_5C0A_4E00);
    let mut noise = move |amp: f64| (rng.next_f64() * 2.0 - 1.0) * amp;
    let mut h = vec![0.0f64; size * size];
    let at = |r: usize, c: usize| r * size + c;
    for (r, c) in [(0, 0), (0, n), (n, 0), (n, n)] {
        h[at(r, c)] = noise(1.0);
    }
    let mut step = n;
    let mut amp = 1.0;
    while step > 1 {
        let half = step / 2;
        // diamond: centre of each square
        for r in (half..size).step_by(step) {
            for c in (half..size).step_by(step) {
                let avg = (h[at(r - half, c - half)]
                    + h[at(r - half, c + half)]
                    + h[at(r + half, c - half)]
                    + h[at(r + half, c + half)])
                    / 4.0;
                h[at(r, c)] = avg + noise(amp);
            }
        }
        // square: edge midpoints, averaging the neighbours that exist
        for r in (0..size).step_by(half) {
            let first = if (r / half).is_multiple_of(2) { half } else { 0 };
            for c in (first..size).step_by(step) {
                let mut sum = 0.0;
                let mut k = 0.0;
                if r >= half {
                    sum += h[at(r - half, c)];
                    k += 1.0;
                }
                if r + half < size {
                    sum += h[at(r + half, c)];
                    k += 1.0;
                }
                if c >= half {
                    sum += h[at(r, c - half)];
                    k += 1.0;
                }
                if c + half < size {
                    sum += h[at(r, c + half)];
                    k += 1.0;
                }
                h[at(r, c)] = sum / k + noise(amp);
            }
        }
        amp *= spec.persistence;
        step = half;
    }
    let mut out = Vec::with_capacity(spec.width * spec.height);
    for r in 0..spec.height {
        out.extend_from_slice(&h[at(r, 0)..at(r, 0) + spec.width]);
    }
    out
}
