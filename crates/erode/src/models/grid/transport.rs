//! Stage 6, `sediment_transport`: suspended sediment moves with the water.
//!
//! - Conservative (default): every pipe carries the sediment of the water it moved. A cell whose
//!   pipes took the fraction `φ = Σf·Δt / (d1·lx·ly)` of its water (at most 1, by the flux limit)
//!   sends the same fraction of its sediment, split over the pipes like the water. What one cell
//!   sends is exactly what its neighbour receives, so mass is kept to rounding and never negative.
//! - Semi-Lagrangian (000 eq. 12): `s(x) = s1(x − v·Δt)` with bilinear interpolation, the back-trace
//!   clamped to the grid (wrapped with wrap borders). Creates or loses mass; returned as drift.

use super::derived::Derived;
use super::params::{Border, Params, Transport};
use super::state::State;
use super::topology::{Topology, opposite};
use crate::par;

/// Runs the stage with scratch `per_flux` and `next` (the new sediment, swapped in by the caller).
/// Returns (sediment that left across open edges, drift), m³.
pub fn sediment_transport(
    st: &mut State,
    p: &Params,
    dv: &Derived,
    topo: &Topology,
    water_before: &[f32],
    per_flux: &mut [f32],
    next: &mut [f32],
) -> (f64, f64) {
    match p.transport {
        Transport::Conservative => (conservative(st, p, dv, topo, water_before, per_flux, next), 0.0),
        Transport::SemiLagrangian => (0.0, semi_lagrangian(st, dv, topo, next)),
    }
}

fn conservative(
    st: &State,
    p: &Params,
    dv: &Derived,
    topo: &Topology,
    water_before: &[f32],
    per_flux: &mut [f32],
    next: &mut [f32],
) -> f64 {
    let w = st.width;
    let flux = &st.flux;
    let pipes = flux.len();
    let s = &st.sediment;
    let dt = dv.dt as f32;
    let area = dv.area as f32;
    // pass 1: sediment per m³ of outflow, for each cell (the same number its neighbours use)
    par::rows(&mut [per_flux], w, |r, out| {
        for c in 0..w {
            let i = r * w + c;
            let gross: f32 = (0..pipes).map(|e| flux[e][i].max(0.0)).sum();
            let held = water_before[i] * area;
            out[0][c] = if gross > 0.0 && held > 0.0 {
                let sent = (gross * dt).min(held);
                s[i] * (sent / held) / gross
            } else {
                0.0
            };
        }
        [0.0; 4]
    });
    let per_flux = &*per_flux;
    let open = p.border == Border::Open;
    // pass 2: what leaves and what arrives
    let sums = par::rows(&mut [next], w, |r, out| {
        let mut lost = 0.0f64;
        for c in 0..w {
            let i = r * w + c;
            let mut value = s[i];
            for e in 0..pipes {
                let sent = per_flux[i] * flux[e][i].max(0.0);
                value -= sent;
                match topo.neighbour(r, c, e) {
                    Some(j) => value += per_flux[j] * flux[opposite(e)][j].max(0.0),
                    None if open => lost += f64::from(sent),
                    None => {}
                }
            }
            out[0][c] = value.max(0.0);
        }
        [lost, 0.0, 0.0, 0.0]
    });
    sums[0] * dv.area
}

fn semi_lagrangian(st: &State, dv: &Derived, topo: &Topology, next: &mut [f32]) -> f64 {
    let (w, h) = (st.width, st.height);
    let s = &st.sediment;
    let (u, v) = (&st.velocity_x, &st.velocity_y);
    let (sx, sy) = ((dv.dt / st.cell_size.x) as f32, (dv.dt / st.cell_size.y) as f32);
    let wrap = topo.border == Border::Wrap;
    let sums = par::rows(&mut [next], w, |r, out| {
        let mut drift = 0.0f64;
        for c in 0..w {
            let i = r * w + c;
            let (mut x, mut y) = (c as f32 - u[i] * sx, r as f32 - v[i] * sy);
            if !wrap {
                x = x.clamp(0.0, (w - 1) as f32);
                y = y.clamp(0.0, (h - 1) as f32);
            }
            let (x0, y0) = (x.floor(), y.floor());
            let (fx, fy) = (x - x0, y - y0);
            let at = |yy: isize, xx: isize| s[topo.clamped(yy, xx)];
            let (xi, yi) = (x0 as isize, y0 as isize);
            let top = at(yi, xi) * (1.0 - fx) + at(yi, xi + 1) * fx;
            let bottom = at(yi + 1, xi) * (1.0 - fx) + at(yi + 1, xi + 1) * fx;
            let value = top * (1.0 - fy) + bottom * fy;
            drift += f64::from(value) - f64::from(s[i]);
            out[0][c] = value;
        }
        [drift, 0.0, 0.0, 0.0]
    });
    sums[0] * dv.area
}
