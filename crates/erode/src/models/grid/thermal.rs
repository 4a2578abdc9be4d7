//! Thermal erosion with 8 pipes (000 eqs. 14–15, 004's talus from hardness, MODEL.md's reading):
//! `H` is the largest drop to the 8 neighbours, `ΔS = Δt·Kt·R·H/2` leaves the cell, shared among the
//! neighbours steeper than the talus in proportion to their drop. `thermal_flux` computes the
//! moves from the terrain before erosion; `thermal_apply` adds them after transport. Thermal
//! moves never cross closed or open edges.

use super::derived::Derived;
use super::params::Params;
use super::state::State;
use super::topology::{Topology, Tri, opposite};
use crate::par;

/// One cell's thermal moves to its 8 neighbours (`None` where there is none), height units.
#[inline(always)]
fn moves_of(bed: f32, hard: f32, nb: &[f32; 8], present: &[bool; 8], k: &ThermalConsts) -> ([f32; 8], f32) {
    let mut drop = [0.0f32; 8];
    let mut biggest = 0.0f32;
    for e in 0..8 {
        let dr = if present[e] { bed - nb[e] } else { 0.0 };
        drop[e] = dr;
        biggest = if dr > biggest { dr } else { biggest };
    }
    let talus = k.scale * hard + k.bias;
    let mut total = 0.0f32;
    for e in 0..8 {
        let steep = present[e] && drop[e] > 0.0 && drop[e] > talus * k.dist[e];
        drop[e] = if steep { drop[e] } else { 0.0 };
        total += drop[e];
    }
    let amount = k.rate * hard * biggest * 0.5;
    let moving = total > 0.0 && biggest > 0.0;
    let share = if moving { amount / total } else { 0.0 };
    (drop.map(|dr| dr * share), if moving { amount } else { 0.0 })
}

#[derive(Clone, Copy)]
struct ThermalConsts {
    rate: f32,
    scale: f32,
    bias: f32,
    dist: [f32; 8],
}

/// Stage 4, `thermal_flux`: height sent to each of the 8 neighbours, into `moves`. Returns the
/// volume set moving, m³.
pub fn thermal_flux(st: &State, p: &Params, dv: &Derived, topo: &Topology, moves: &mut [Vec<f32>]) -> f64 {
    let (w, h) = (st.width, st.height);
    let (b, hard) = (&st.terrain, &st.hardness);
    let k = ThermalConsts {
        rate: (dv.dt * p.thermal_rate) as f32,
        scale: p.talus_scale as f32,
        bias: p.talus_bias as f32,
        dist: dv.distance,
    };
    let mut outs: Vec<&mut [f32]> = moves.iter_mut().map(Vec::as_mut_slice).collect();
    let sums = par::rows(&mut outs, w, |r, out| {
        let mut moved = 0.0f64;
        let mut border_cell = |c: usize, out: &mut [&mut [f32]]| {
            let i = r * w + c;
            let js: [Option<usize>; 8] = std::array::from_fn(|e| topo.neighbour(r, c, e));
            let nb = js.map(|j| j.map_or(0.0, |j| b[j]));
            let present = js.map(|j| j.is_some());
            let (m, amount) = moves_of(b[i], hard[i], &nb, &present, &k);
            for e in 0..8 {
                out[e][c] = m[e];
            }
            moved += f64::from(amount);
        };
        if r == 0 || r + 1 >= h || w < 3 {
            for c in 0..w {
                border_cell(c, out);
            }
            return [moved, 0.0, 0.0, 0.0];
        }
        border_cell(0, out);
        border_cell(w - 1, out);
        moved += interior_thermal(Tri::of(b, w, r), &hard[r * w + 1..r * w + w - 1], out, &k);
        [moved, 0.0, 0.0, 0.0]
    });
    sums[0] * dv.area
}

#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.2"))]
fn interior_thermal<'a>(b: Tri<'a>, hard: &[f32], out: &mut [&mut [f32]], k: &ThermalConsts) -> f64 {
    let n = hard.len();
    let bc = &b.centre()[..n];
    let bn: [&[f32]; 8] = std::array::from_fn(|e| &b.shifted(e)[..n]);
    let mut rows: [&mut [f32]; 8] = std::array::from_fn(|_| &mut [][..]);
    for (slot, o) in rows.iter_mut().zip(out.iter_mut()) {
        *slot = &mut o[1..1 + n];
    }
    let mut amounts = vec![0.0f32; n];
    for c in 0..n {
        let nb: [f32; 8] = std::array::from_fn(|e| bn[e][c]);
        let (m, amount) = moves_of(bc[c], hard[c], &nb, &[true; 8], k);
        for e in 0..8 {
            rows[e][c] = m[e];
        }
        amounts[c] = amount;
    }
    crate::par::lane_sum(&amounts)
}

/// Stage 7, `thermal_apply`: each cell gains what its neighbours sent it and loses what it sent.
pub fn thermal_apply(st: &mut State, topo: &Topology, moves: &[Vec<f32>]) {
    let (w, h) = (st.width, st.height);
    par::rows(&mut [&mut st.terrain], w, |r, out| {
        let border_cell = |c: usize| -> f32 {
            let i = r * w + c;
            let mut change = 0.0f32;
            for (e, m) in moves.iter().enumerate() {
                change -= m[i];
                if let Some(j) = topo.neighbour(r, c, e) {
                    change += moves[opposite(e)][j];
                }
            }
            change
        };
        if r == 0 || r + 1 >= h || w < 3 {
            for c in 0..w {
                out[0][c] += border_cell(c);
            }
            return [0.0; 4];
        }
        let (first, last) = (border_cell(0), border_cell(w - 1));
        out[0][0] += first;
        out[0][w - 1] += last;
        let n = w - 2;
        let own: [&[f32]; 8] = std::array::from_fn(|e| &moves[e][r * w + 1..r * w + 1 + n]);
        let back: [&[f32]; 8] = std::array::from_fn(|e| &Tri::of(&moves[opposite(e)], w, r).shifted(e)[..n]);
        apply_row(&own, &back, &mut out[0][1..1 + n]);
        [0.0; 4]
    });
}

#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.2"))]
fn apply_row(own: &[&[f32]; 8], back: &[&[f32]; 8], row: &mut [f32]) {
    let n = row.len();
    let own: [&[f32]; 8] = std::array::from_fn(|e| &own[e][..n]);
    let back: [&[f32]; 8] = std::array::from_fn(|e| &back[e][..n]);
    for c in 0..n {
        let mut change = 0.0f32;
        for e in 0..8 {
            change -= own[e][c];
            change += back[e][c];
        }
        row[c] += change;
    }
}
