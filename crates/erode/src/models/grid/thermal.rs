//! Thermal erosion with 8 pipes (000 eqs. 14–15, 004's talus from hardness, MODEL.md's reading):
//! `H` is the largest drop to the 8 neighbours, `ΔS = Δt·Kt·R·H/2` leaves the cell, shared among the
//! neighbours steeper than the talus in proportion to their drop. `thermal_flux` computes the
//! moves from the terrain before erosion; `thermal_apply` adds them after transport. Thermal
//! moves never cross closed or open edges.

use super::derived::Derived;
use super::params::Params;
use super::state::State;
use super::topology::{Topology, opposite};
use crate::par;

/// Stage 4, `thermal_flux`: height sent to each of the 8 neighbours, into `moves`. Returns the
/// volume set moving, m³.
pub fn thermal_flux(st: &State, p: &Params, dv: &Derived, topo: &Topology, moves: &mut [Vec<f32>]) -> f64 {
    let w = st.width;
    let (b, hard) = (&st.terrain, &st.hardness);
    let rate = (dv.dt * p.thermal_rate) as f32;
    let (scale, bias) = (p.talus_scale as f32, p.talus_bias as f32);
    let dist = dv.distance;
    let mut outs: Vec<&mut [f32]> = moves.iter_mut().map(Vec::as_mut_slice).collect();
    let sums = par::rows(&mut outs, w, |r, out| {
        let mut moved = 0.0f64;
        for c in 0..w {
            let i = r * w + c;
            let mut drop = [0.0f32; 8];
            let mut biggest = 0.0f32;
            for (e, dr) in drop.iter_mut().enumerate() {
                if let Some(j) = topo.neighbour(r, c, e) {
                    *dr = b[i] - b[j];
                    biggest = biggest.max(*dr);
                }
            }
            let talus = scale * hard[i] + bias;
            let mut total = 0.0f32;
            for (e, dr) in drop.iter_mut().enumerate() {
                if *dr > 0.0 && *dr > talus * dist[e] && topo.neighbour(r, c, e).is_some() {
                    total += *dr;
                } else {
                    *dr = 0.0;
                }
            }
            if total > 0.0 && biggest > 0.0 {
                let amount = rate * hard[i] * biggest * 0.5;
                for (e, &dr) in drop.iter().enumerate() {
                    out[e][c] = amount * dr / total;
                }
                moved += f64::from(amount);
            } else {
                for row in out.iter_mut() {
                    row[c] = 0.0;
                }
            }
        }
        [moved, 0.0, 0.0, 0.0]
    });
    sums[0] * dv.area
}

/// Stage 7, `thermal_apply`: each cell gains what its neighbours sent it and loses what it sent.
pub fn thermal_apply(st: &mut State, topo: &Topology, moves: &[Vec<f32>]) {
    let w = st.width;
    par::rows(&mut [&mut st.terrain], w, |r, out| {
        for c in 0..w {
            let i = r * w + c;
            let mut change = 0.0f32;
            for (e, m) in moves.iter().enumerate() {
                change -= m[i];
                if let Some(j) = topo.neighbour(r, c, e) {
                    change += moves[opposite(e)][j];
                }
            }
            out[0][c] += change;
        }
        [0.0; 4]
    });
}
