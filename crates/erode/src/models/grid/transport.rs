//! Stage 6, `sediment_transport`: suspended sediment moves with the water.
//!
//! - Conservative (default): every pipe carries the sediment of the water it moved. A cell whose
//!   pipes took the fraction `φ = Σf·Δt / (d1·lx·ly)` of its water (at most 1, by the flux limit)
//!   sends the same fraction of its sediment, split over the pipes like the water. What one cell
//!   sends is exactly what its neighbour receives, so mass is kept to rounding and never negative.
//! - Semi-Lagrangian (Jákó & Tóth eq. 12): `s(x) = s1(x − v·Δt)` with bilinear interpolation, the back-trace
//!   clamped to the grid (wrapped with wrap borders). Creates or loses mass; returned as drift.

use std::ops::Range;

use super::derived::Derived;
use super::params::{Border, Params, Transport};
use super::state::State;
use super::topology::{Around, Topology, opposite};

/// Runs the stage into `next` (the new sediment, swapped in by the caller); `share` is what
/// `water_flux` wrote. Returns (sediment that left across open edges, drift), m³.
pub fn sediment_transport(
    st: &mut State,
    p: &Params,
    dv: &Derived,
    topo: &Topology,
    share: &[f32],
    next: &mut [f32],
) -> (f64, f64) {
    match p.transport {
        Transport::Conservative => (conservative(st, dv, topo, share, next), 0.0),
        Transport::SemiLagrangian => (0.0, semi_lagrangian(st, dv, topo, next)),
    }
}

fn conservative(st: &State, dv: &Derived, topo: &Topology, share: &[f32], next: &mut [f32]) -> f64 {
    match st.flux.len() {
        4 => conservative_pipes::<4>(st, dv, topo, share, next),
        _ => conservative_pipes::<8>(st, dv, topo, share, next),
    }
}

fn conservative_pipes<const P: usize>(
    st: &State,
    dv: &Derived,
    topo: &Topology,
    share: &[f32],
    next: &mut [f32],
) -> f64 {
    let w = st.width;
    let (flux, s) = (&st.flux, &st.sediment);
    let sums = topo.rows(&mut [next], w, |r, cols, out| {
        let f: [Around<'_>; P] = std::array::from_fn(|e| Around::of(&flux[e], topo, r));
        let lost = conservative_row(r, cols, topo, &f, Around::of(s, topo, r), Around::of(share, topo, r), out[0]);
        [lost, 0.0, 0.0, 0.0]
    });
    sums[0] * dv.area
}

/// Columns `cols` of row `r` of the conservative transport into `out`, from the new fluxes, the
/// sediment after erosion and the shares around the row. Returns the sediment that left across
/// open edges from them, m.
pub(super) fn conservative_row<const P: usize>(
    r: usize,
    cols: Range<usize>,
    topo: &Topology,
    flux: &[Around<'_>; P],
    s: Around<'_>,
    share: Around<'_>,
    out: &mut [f32],
) -> f64 {
    let positive = |x: f32| if x > 0.0 { x } else { 0.0 };
    let (sm, shm) = (s.mid(), share.mid());
    let mut lost = 0.0f64;
    let mut border_cell = |c: usize, out: &mut [f32]| {
        let mut value = sm[c];
        let per_flux = sm[c] * shm[c];
        for e in 0..P {
            let sent = per_flux * positive(flux[e].mid()[c]);
            value -= sent;
            match topo.neighbour(r, c, e) {
                Some(j) => value += s.at(j) * share.at(j) * positive(flux[opposite(e)].at(j)),
                None if topo.open_beyond(r, c, e) => lost += f64::from(sent),
                None => {}
            }
        }
        out[c] = positive(value);
    };
    for c in topo.border_columns(r, &cols) {
        border_cell(c, out);
    }
    for (a, z) in topo.interior_spans(r, &cols) {
        let own: [&[f32]; P] = std::array::from_fn(|e| &flux[e].mid()[a..z]);
        let back: [&[f32]; P] = std::array::from_fn(|e| flux[opposite(e)].tri().span(a, z).shifted(e));
        let (st3, sh3) = (s.tri().span(a, z), share.tri().span(a, z));
        let s_nb: [&[f32]; P] = std::array::from_fn(|e| st3.shifted(e));
        let share_nb: [&[f32]; P] = std::array::from_fn(|e| sh3.shifted(e));
        move_row::<P>(&own, &back, &sm[a..z], &shm[a..z], &s_nb, &share_nb, &mut out[a..z]);
    }
    lost
}

#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512cd+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.2"
))]
fn move_row<const P: usize>(
    own: &[&[f32]; P],
    back: &[&[f32]; P],
    s: &[f32],
    share: &[f32],
    s_nb: &[&[f32]; P],
    share_nb: &[&[f32]; P],
    row: &mut [f32],
) {
    let n = row.len();
    let positive = |x: f32| if x > 0.0 { x } else { 0.0 };
    let own: [&[f32]; P] = std::array::from_fn(|e| &own[e][..n]);
    let back: [&[f32]; P] = std::array::from_fn(|e| &back[e][..n]);
    let s_nb: [&[f32]; P] = std::array::from_fn(|e| &s_nb[e][..n]);
    let share_nb: [&[f32]; P] = std::array::from_fn(|e| &share_nb[e][..n]);
    let (s, share) = (&s[..n], &share[..n]);
    for c in 0..n {
        let mut value = s[c];
        let per_flux = s[c] * share[c];
        for e in 0..P {
            value -= per_flux * positive(own[e][c]);
            value += s_nb[e][c] * share_nb[e][c] * positive(back[e][c]);
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
    let sums = topo.rows(&mut [next], w, |r, cols, out| {
        let mut drift = 0.0f64;
        for c in cols {
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
