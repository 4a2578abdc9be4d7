//! River incision, `dz/dt = −K·A^m·S^n`, solved implicitly along the stack (Braun & Willett
//! 2013): a cell's new height uses its receiver's new height, which the stack has already
//! computed, so any time step is stable. For `n = 1` the update is exact,
//! `z ← (z + F·z_r) / (1 + F)` with `F = K·Δt·A^m / L`; for other `n` Newton's method solves
//! `z − z₀ + K·Δt·A^m·((z − z_r)/L)^n = 0` between `z_r` and `z₀`.

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::flow::routing::{FLAT_GRADIENT, NO_DIRECTION, Routing, split_groups};

/// `count^m` for drainage areas in cells, from a table for the small counts most cells have.
#[derive(Clone, Debug)]
pub struct AreaPower {
    m: f64,
    table: Vec<f64>,
}

/// Counts below this come from the table.
const TABLE: usize = 1 << 16;

impl AreaPower {
    /// The table for exponent `m`.
    pub fn new(m: f64) -> Self {
        Self { m, table: (0..TABLE).map(|c| (c as f64).powf(m)).collect() }
    }

    /// `count^m`.
    #[inline]
    pub fn get(&self, count: u32) -> f64 {
        match self.table.get(count as usize) {
            Some(&v) => v,
            None => f64::from(count).powf(self.m),
        }
    }
}

/// The constants of one erosion pass.
#[derive(Clone, Copy, Debug)]
pub struct Incision<'a> {
    /// `K·Δt·a^m`, with `a` the cell area: `F = k_dt · count^m · scale / L^n`.
    pub k_dt: f64,
    /// Slope exponent.
    pub n: f64,
    /// `1 / L^n` for each direction.
    pub inv_length_n: [f64; 8],
    /// Erodibility multiplier per cell, if any.
    pub scale: Option<&'a [f32]>,
}

/// The heights a step's incision writes, per cell (f64 bits in relaxed atomics: the stack's
/// groups write their own cells in parallel), and its scratch.
#[derive(Debug, Default)]
pub struct Lowering {
    /// New heights, m (a cell's lowering is how far below its old height this is).
    pub height: Vec<AtomicU64>,
    /// New heights per place of the stack (a receiver's is read from here), m.
    by_place: Vec<f64>,
}

/// Lowers every cell along the stack, the stack's groups in parallel, from the heights `z`;
/// writes the new heights into `out`, and returns the lowerings' sum and the sum of the
/// raises (by group, in order): a cell not above its receiver once that has moved (on a
/// lake's surface) is set [`FLAT_GRADIENT`] above it, so the step ends on a surface that
/// drains.
pub fn incise(routing: &Routing, powers: &AreaPower, inc: Incision<'_>, z: &[f64], out: &mut Lowering) -> (f64, f64) {
    let linear = inc.n == 1.0;
    if out.height.len() != z.len() {
        out.height = (0..z.len()).map(|_| AtomicU64::new(0)).collect();
    }
    out.by_place.resize(routing.stack.len(), 0.0);
    let (stack, link, height) = (&routing.stack, &routing.link, &out.height);
    let set = |i: usize, z: f64| height[i].store(z.to_bits(), Ordering::Relaxed);
    let sums: Vec<(f64, f64)> = split_groups(routing.group_bounds(), &mut out.by_place)
        .into_par_iter()
        .map(|(start, zs)| {
            let (mut total, mut raised) = (0.0, 0.0);
            for p in 0..zs.len() {
                let i = stack[start + p] as usize;
                let z0 = z[i];
                let d = routing.direction[i];
                if d == NO_DIRECTION {
                    zs[p] = z0;
                    set(i, z0);
                    continue;
                }
                let zr = zs[link[start + p] as usize - start];
                let mut znew = z0;
                if z0 > zr {
                    let mut f = inc.k_dt * powers.get(routing.area_at(start + p)) * inc.inv_length_n[d as usize];
                    if let Some(s) = inc.scale {
                        f *= f64::from(s[i]);
                    }
                    znew = if linear { (z0 + f * zr) / (1.0 + f) } else { zr + newton(z0 - zr, f, inc.n) };
                }
                // not above the receiver (a lake's surface, or a drop lost to rounding): just above it
                if znew <= zr {
                    let up = zr + FLAT_GRADIENT;
                    raised += up - z0;
                    zs[p] = up;
                    set(i, up);
                    continue;
                }
                total += z0 - znew;
                zs[p] = znew;
                set(i, znew);
            }
            (total, raised)
        })
        .collect();
    sums.iter().fold((0.0, 0.0), |(e, r), s| (e + s.0, r + s.1))
}

/// The drop `y` in `(0, y0]` with `y − y0 + f·y^n = 0`.
fn newton(y0: f64, f: f64, n: f64) -> f64 {
    if f == 0.0 {
        return y0;
    }
    let mut y = y0;
    for _ in 0..60 {
        let g = y - y0 + f * y.powf(n);
        let dg = 1.0 + n * f * y.powf(n - 1.0);
        let next = (y - g / dg).clamp(y * 1e-3, y0);
        if (next - y).abs() <= 1e-14 * y0 {
            return next;
        }
        y = next;
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newton_solves_the_implicit_step() {
        for (y0, f, n) in [(10.0, 0.5, 2.0), (3.0, 100.0, 2.0), (1.0, 0.1, 0.5), (5.0, 7.0, 1.5), (2.0, 1.0, 1.0)] {
            let y = newton(y0, f, n);
            assert!(y > 0.0 && y <= y0);
            assert!((y - y0 + f * y.powf(n)).abs() < 1e-9 * y0, "{y0} {f} {n}: {y}");
        }
        let p = AreaPower::new(0.45);
        assert_eq!(p.get(1), 1.0);
        assert!((p.get(100_000) - 100_000f64.powf(0.45)).abs() < 1e-9);
    }
}
