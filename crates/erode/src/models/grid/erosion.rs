//! Stage 5, `erosion_deposition`: capacity (000 eq. 8 or 001's), dissolving (eq. 9 with
//! hardness) or deposition (eq. 10), the water adjustment of eqs. 9c/10c, and softening (eq. 11).
//! Never dissolves below the floor, never deposits more than is suspended, never removes more
//! water than there is.

use super::derived::Derived;
use super::params::{CapacityModel, Params};
use super::state::State;
use super::topology::Topology;
use crate::par;

/// Volumes moved by one erosion pass, m³.
pub struct Moved {
    /// Soil dissolved.
    pub eroded: f64,
    /// Sediment deposited.
    pub deposited: f64,
    /// Water added with dissolved soil.
    pub water_in: f64,
    /// Water removed with deposited soil.
    pub water_out: f64,
}

/// Transport capacity at one cell, m of sediment.
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn capacity(
    model: CapacityModel,
    kc: f32,
    min_tilt: f32,
    max_depth: f32,
    bx: f32,
    by: f32,
    u: f32,
    v: f32,
    d: f32,
) -> f32 {
    let speed = u.hypot(v);
    if speed <= 0.0 {
        return 0.0;
    }
    let norm = (1.0 + bx * bx + by * by).sqrt();
    match model {
        CapacityModel::Mei => {
            // sine of the downhill slope along the flow direction
            let along = -(bx * u + by * v) / (speed * norm);
            let lmax = (1.0 - d / max_depth).clamp(0.0, 1.0);
            kc * along.max(min_tilt) * speed * lmax
        }
        CapacityModel::Sine => {
            let tilt = (bx * bx + by * by).sqrt() / norm;
            kc * tilt.max(min_tilt) * speed * d.clamp(0.0, 1.0)
        }
    }
}

/// Runs the stage; terrain goes through `next` (gradients read the old terrain), which the caller
/// swaps in.
pub fn erosion_deposition(st: &mut State, p: &Params, dv: &Derived, topo: &Topology, next: &mut [f32]) -> Moved {
    let w = st.width;
    let b = &st.terrain;
    let (u, v) = (&st.velocity_x, &st.velocity_y);
    let dt = dv.dt as f32;
    let (ks, kd, kh) = (p.dissolve as f32, p.deposit as f32, p.softening as f32);
    let (kc, min_tilt, max_depth) = (p.capacity as f32, p.min_tilt as f32, p.max_erosion_depth as f32);
    let r_min = p.hardness_min as f32;
    let floor = st.floor;
    let (inv2x, inv2y) = ((0.5 / st.cell_size.x) as f32, (0.5 / st.cell_size.y) as f32);
    let model = p.capacity_model;
    let sums = par::rows(
        &mut [next, &mut st.sediment, &mut st.water, &mut st.hardness, &mut st.eroded, &mut st.deposited],
        w,
        |r, out| {
            let (mut eroded, mut deposited, mut water_in, mut water_out) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
            let (ri, ci) = (r as isize, 0isize);
            let _ = ci;
            for c in 0..w {
                let i = r * w + c;
                let cc = c as isize;
                let bx = (b[topo.clamped(ri, cc + 1)] - b[topo.clamped(ri, cc - 1)]) * inv2x;
                let by = (b[topo.clamped(ri + 1, cc)] - b[topo.clamped(ri - 1, cc)]) * inv2y;
                let (s, d, hard) = (out[1][c], out[2][c], out[3][c]);
                let cap = capacity(model, kc, min_tilt, max_depth, bx, by, u[i], v[i], d);
                let mut height = b[i];
                if cap > s {
                    let amount = (dt * hard * ks * (cap - s)).min((height - floor).max(0.0));
                    height -= amount;
                    out[1][c] = s + amount;
                    out[2][c] = d + amount;
                    out[4][c] += amount;
                    eroded += f64::from(amount);
                    water_in += f64::from(amount);
                } else {
                    let amount = (dt * kd * (s - cap)).min(s);
                    height += amount;
                    out[1][c] = s - amount;
                    let dw = amount.min(d);
                    out[2][c] = d - dw;
                    out[3][c] = (hard - dt * kh * ks * (s - cap)).max(r_min);
                    out[5][c] += amount;
                    deposited += f64::from(amount);
                    water_out += f64::from(dw);
                }
                out[0][c] = height;
            }
            [eroded, deposited, water_in, water_out]
        },
    );
    let a = dv.area;
    Moved { eroded: sums[0] * a, deposited: sums[1] * a, water_in: sums[2] * a, water_out: sums[3] * a }
}
