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
use super::topology::{Topology, Tri, opposite};
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
    match st.flux.len() {
        4 => conservative_pipes::<4>(st, p, dv, topo, water_before, per_flux, next),
        _ => conservative_pipes::<8>(st, p, dv, topo, water_before, per_flux, next),
    }
}

fn conservative_pipes<const P: usize>(
    st: &State,
    p: &Params,
    dv: &Derived,
    topo: &Topology,
    water_before: &[f32],
    per_flux: &mut [f32],
    next: &mut [f32],
) -> f64 {
    let (w, h) = (st.width, st.height);
    let flux = &st.flux;
    let s = &st.sediment;
    let dt = dv.dt as f32;
    let area = dv.area as f32;
    // pass 1: sediment per m³ of outflow, for each cell (the same number its neighbours use)
    par::rows(&mut [per_flux], w, |r, out| {
        let span = r * w..(r + 1) * w;
        let fl: [&[f32]; P] = std::array::from_fn(|e| &flux[e][span.clone()]);
        let (sr, dr) = (&s[span.clone()], &water_before[span]);
        per_flux_row::<P>(&fl, sr, dr, &mut out[0][..w], dt, area);
        [0.0; 4]
    });
    let per_flux = &*per_flux;
    let open = p.border == Border::Open;
    let positive = |x: f32| if x > 0.0 { x } else { 0.0 };
    // pass 2: what leaves and what arrives
    let sums = par::rows(&mut [next], w, |r, out| {
        let mut lost = 0.0f64;
        let mut border_cell = |c: usize, out: &mut [&mut [f32]]| {
            let i = r * w + c;
            let mut value = s[i];
            for e in 0..P {
                let sent = per_flux[i] * positive(flux[e][i]);
                value -= sent;
                match topo.neighbour(r, c, e) {
                    Some(j) => value += per_flux[j] * positive(flux[opposite(e)][j]),
                    None if open => lost += f64::from(sent),
                    None => {}
                }
            }
            out[0][c] = positive(value);
        };
        if r == 0 || r + 1 >= h || w < 3 {
            for c in 0..w {
                border_cell(c, out);
            }
            return [lost, 0.0, 0.0, 0.0];
        }
        border_cell(0, out);
        border_cell(w - 1, out);
        let n = w - 2;
        let span = r * w + 1..r * w + 1 + n;
        let own: [&[f32]; P] = std::array::from_fn(|e| &flux[e][span.clone()]);
        let back: [&[f32]; P] = std::array::from_fn(|e| &Tri::of(&flux[opposite(e)], w, r).shifted(e)[..n]);
        let pf = Tri::of(per_flux, w, r);
        let pf_here = &pf.centre()[..n];
        let pf_nb: [&[f32]; P] = std::array::from_fn(|e| &pf.shifted(e)[..n]);
        let sr = &s[span];
        move_row::<P>(&own, &back, pf_here, &pf_nb, sr, &mut out[0][1..1 + n]);
        [lost, 0.0, 0.0, 0.0]
    });
    sums[0] * dv.area
}

#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.2"))]
fn per_flux_row<const P: usize>(fl: &[&[f32]; P], s: &[f32], held_depth: &[f32], row: &mut [f32], dt: f32, area: f32) {
    let n = row.len();
    let fl: [&[f32]; P] = std::array::from_fn(|e| &fl[e][..n]);
    let (s, held_depth) = (&s[..n], &held_depth[..n]);
    for c in 0..n {
        let mut gross = 0.0f32;
        for e in 0..P {
            gross += if fl[e][c] > 0.0 { fl[e][c] } else { 0.0 };
        }
        let held = held_depth[c] * area;
        let sent = gross * dt;
        let sent = if sent < held { sent } else { held };
        let value = s[c] * (sent / held) / gross;
        row[c] = if gross > 0.0 && held > 0.0 { value } else { 0.0 };
    }
}

#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.2"))]
fn move_row<const P: usize>(
    own: &[&[f32]; P],
    back: &[&[f32]; P],
    pf_here: &[f32],
    pf_nb: &[&[f32]; P],
    s: &[f32],
    row: &mut [f32],
) {
    let n = row.len();
    let positive = |x: f32| if x > 0.0 { x } else { 0.0 };
    let own: [&[f32]; P] = std::array::from_fn(|e| &own[e][..n]);
    let back: [&[f32]; P] = std::array::from_fn(|e| &back[e][..n]);
    let pf_nb: [&[f32]; P] = std::array::from_fn(|e| &pf_nb[e][..n]);
    let (pf_here, s) = (&pf_here[..n], &s[..n]);
    for c in 0..n {
        let mut value = s[c];
        for e in 0..P {
            value -= pf_here[c] * positive(own[e][c]);
            value += pf_nb[e][c] * positive(back[e][c]);
        }
        row[c] = positive(value);
    }
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
