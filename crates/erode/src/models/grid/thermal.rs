//! Thermal erosion with 8 pipes (Jákó & Tóth eqs. 14–15, bshishov's talus from hardness, read as `docs/grid-model.md` says):
//! the largest drop `D` to the 8 neighbours sets `ΔS = Δt·Kt·k(H)·D/2` leaving the cell, shared among
//! the neighbours steeper than the talus in proportion to their drop; `k(H)` is the erodibility of
//! the cell's hardness (see `Params::erodibility`) and the talus rises with hardness,
//! `tan α = talus_scale·H + talus_bias` (bshishov). `thermal_flux` computes, from
//! the terrain before erosion, each cell's `ΔS / Σ drops` (its share per metre of drop) and its
//! talus; `thermal_apply` recomputes every move from those and the same old terrain, so the
//! eight moves per cell never go through memory, and adds them after transport. Sender and
//! receiver compute a move with the same operations, so it leaves and arrives bit for bit.
//! Thermal moves never cross closed or open edges.
//!
//! With a sediment layer (`Params::sediment_layer`, after Cordonnier et al. 2017's layered
//! terrain) a cell with loose material on it moves that material at its angle of repose,
//! `repose_slope`, with erodibility 1 and never more than the layer holds; a cell of bare
//! bedrock moves as above, at its hardness's talus. What a cell receives joins its layer.

use std::ops::Range;

use super::derived::Derived;
use super::params::Params;
use super::state::State;
use super::topology::{Around, Topology, Tri};
use crate::par;

/// The drop towards a neighbour if it counts (steeper than the talus), else 0.
#[inline(always)]
fn steep(drop: f32, talus: f32, dist: f32) -> f32 {
    if drop > 0.0 && drop > talus * dist { drop } else { 0.0 }
}

#[derive(Clone, Copy)]
pub(super) struct ThermalConsts {
    pub(super) rate: f32,
    /// Talus of loose material (`repose_slope`).
    pub(super) repose: f32,
    /// Whether there is a sediment layer.
    pub(super) layer: bool,
    /// `1 − rock_erodibility`: the erodibility lost per unit of hardness.
    pub(super) loss: f32,
    pub(super) scale: f32,
    pub(super) bias: f32,
    pub(super) dist: [f32; 8],
}

/// One cell: (share per metre of drop, talus, volume set moving in height units). `loose` is
/// the depth of its sediment layer (0 without one).
#[inline(always)]
fn share_of(bed: f32, hard: f32, loose: f32, nb: &[f32; 8], present: &[bool; 8], k: &ThermalConsts) -> (f32, f32, f32) {
    let has_loose = loose > 0.0;
    let talus = if has_loose { k.repose } else { k.scale * hard + k.bias };
    let mut biggest = 0.0f32;
    let mut total = 0.0f32;
    for e in 0..8 {
        let drop = if present[e] { bed - nb[e] } else { 0.0 };
        biggest = if drop > biggest { drop } else { biggest };
        total += if present[e] { steep(drop, talus, k.dist[e]) } else { 0.0 };
    }
    let rock = k.rate * (1.0 - hard * k.loss) * biggest * 0.5;
    let slide = k.rate * biggest * 0.5;
    let slide = if slide < loose { slide } else { loose };
    let amount = if has_loose { slide } else { rock };
    let moving = total > 0.0 && biggest > 0.0;
    let share = amount / total;
    (if moving { share } else { 0.0 }, talus, if moving { amount } else { 0.0 })
}

/// Stage 4, `thermal_flux`: each cell's share and talus, from the terrain before erosion.
/// Returns the volume set moving, m³.
pub fn thermal_flux(
    st: &State,
    p: &Params,
    dv: &Derived,
    topo: &Topology,
    share: &mut [f32],
    talus: &mut [f32],
) -> f64 {
    let w = st.width;
    let (b, hard, loose) = (&st.terrain, &st.hardness, &st.sediment_depth);
    let k = ThermalConsts::new(p, dv);
    let sums = topo.rows(&mut [share, talus], w, |r, cols, out| {
        let [sh, ta] = out else { return [0.0; 4] };
        let row = r * w..(r + 1) * w;
        [flux_row(r, cols, topo, b, &hard[row.clone()], &loose[row], sh, ta, &k), 0.0, 0.0, 0.0]
    });
    sums[0] * dv.area
}

impl ThermalConsts {
    pub(super) fn new(p: &Params, dv: &Derived) -> Self {
        Self {
            rate: (dv.dt * dv.morphological_factor * p.thermal_rate) as f32,
            repose: p.repose_slope as f32,
            layer: p.sediment_layer,
            loss: (1.0 - p.rock_erodibility) as f32,
            scale: p.talus_scale as f32,
            bias: p.talus_bias as f32,
            dist: dv.distance,
        }
    }
}

/// Columns `cols` of row `r` of `thermal_flux`: shares and taluses from the whole terrain `b`
/// (before erosion) and the row's hardness and sediment depth. Returns the height set moving, m,
/// summed over `cols`.
#[allow(clippy::too_many_arguments)]
pub(super) fn flux_row(
    r: usize,
    cols: Range<usize>,
    topo: &Topology,
    b: &[f32],
    hard: &[f32],
    loose: &[f32],
    share: &mut [f32],
    talus: &mut [f32],
    k: &ThermalConsts,
) -> f64 {
    let w = topo.width;
    let border_cell = |c: usize, share: &mut [f32], talus: &mut [f32]| -> f32 {
        let i = r * w + c;
        let js: [Option<usize>; 8] = std::array::from_fn(|e| topo.neighbour(r, c, e));
        let nb = js.map(|j| j.map_or(0.0, |j| b[j]));
        let present = js.map(|j| j.is_some());
        let (sh, ta, amount) = share_of(b[i], hard[c], loose[c], &nb, &present, k);
        share[c] = sh;
        talus[c] = ta;
        amount
    };
    // the row's amounts: border cells in order, the interior in stack chunks summed by lanes
    let mut total = 0.0f64;
    for c in topo.border_columns(r, &cols) {
        total += f64::from(border_cell(c, share, talus));
    }
    let mut amounts = [0.0f32; CHUNK];
    for (a, z) in topo.interior_spans(r, &cols) {
        let tri = Tri::of(b, w, r);
        let mut start = a;
        while start < z {
            let end = (start + CHUNK).min(z);
            let len = end - start;
            share_row(
                tri,
                start - 1,
                &hard[start..end],
                &loose[start..end],
                &mut share[start..end],
                &mut talus[start..end],
                &mut amounts[..len],
                *k,
            );
            total += par::lane_sum(&amounts[..len]);
            start = end;
        }
    }
    total
}

/// Columns per chunk of a row whose amounts are summed on the stack.
const CHUNK: usize = 256;

#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512cd+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.2"
))]
#[allow(clippy::too_many_arguments)]
fn share_row<'a>(
    b: Tri<'a>,
    skip: usize,
    hard: &[f32],
    loose: &[f32],
    share: &mut [f32],
    talus: &mut [f32],
    amounts: &mut [f32],
    k: ThermalConsts,
) {
    // interior columns `skip + 1 ..`: `skip` into the row's centre and neighbour views
    let n = hard.len();
    let loose = &loose[..n];
    let bc = &b.centre()[skip..skip + n];
    let bn: [&[f32]; 8] = std::array::from_fn(|e| &b.shifted(e)[skip..skip + n]);
    let (share, talus, amounts) = (&mut share[..n], &mut talus[..n], &mut amounts[..n]);
    for c in 0..n {
        let nb: [f32; 8] = std::array::from_fn(|e| bn[e][c]);
        let (sh, ta, amount) = share_of(bc[c], hard[c], loose[c], &nb, &[true; 8], &k);
        share[c] = sh;
        talus[c] = ta;
        amounts[c] = amount;
    }
}

/// Stage 7, `thermal_apply`: each cell gains what its neighbours send it and loses what it sends,
/// every move recomputed from the old terrain `old`, the shares and the taluses; with a sediment
/// layer, what it sends leaves its layer (down to bedrock) and what it gains joins it.
#[allow(clippy::too_many_arguments)]
pub fn thermal_apply(
    st: &mut State,
    p: &Params,
    topo: &Topology,
    dv: &Derived,
    old: &[f32],
    share: &[f32],
    talus: &[f32],
) {
    let w = st.width;
    let dist = dv.distance;
    let layer = p.sediment_layer;
    par::rows(&mut [&mut st.terrain, &mut st.sediment_depth], w, |r, out| {
        let [row, loose] = out else { return [0.0; 4] };
        let loose = if layer { Some(&mut **loose) } else { None };
        apply_row_at(r, topo, old, Around::of(share, topo, r), Around::of(talus, topo, r), row, loose, dist);
        [0.0; 4]
    });
}

/// Row `r` of `thermal_apply`: adds the row's thermal change to `row` (the terrain after
/// erosion), from the whole old terrain and the shares and taluses around the row, and moves
/// the row's sediment layer `loose` (after erosion) with it when there is one.
#[allow(clippy::too_many_arguments)]
pub(super) fn apply_row_at(
    r: usize,
    topo: &Topology,
    old: &[f32],
    share: Around<'_>,
    talus: Around<'_>,
    row: &mut [f32],
    loose: Option<&mut [f32]>,
    dist: [f32; 8],
) {
    let (w, all) = (topo.width, topo.all_columns());
    let (sm, tm) = (share.mid(), talus.mid());
    // (change, sent, received) of a cell at the map's edge or a hole's
    let border_cell = |c: usize| -> (f32, f32, f32) {
        let i = r * w + c;
        let (mut change, mut sent, mut received) = (0.0f32, 0.0f32, 0.0f32);
        for e in 0..8 {
            if let Some(j) = topo.neighbour(r, c, e) {
                let mine = sm[c] * steep(old[i] - old[j], tm[c], dist[e]);
                let theirs = share.at(j) * steep(old[j] - old[i], talus.at(j), dist[e]);
                change -= mine;
                change += theirs;
                sent += mine;
                received += theirs;
            }
        }
        (change, sent, received)
    };
    match loose {
        None => {
            for c in topo.border_columns(r, &all) {
                row[c] += border_cell(c).0;
            }
            for (a, z) in topo.interior_spans(r, &all) {
                let (o, s, t) = (Tri::of(old, w, r).span(a, z), share.tri().span(a, z), talus.tri().span(a, z));
                apply_row::<false>(o, s, t, &mut row[a..z], &mut [], dist);
            }
        }
        Some(loose) => {
            for c in topo.border_columns(r, &all) {
                let (change, sent, received) = border_cell(c);
                row[c] += change;
                loose[c] = layer_after(loose[c], sent, received);
            }
            for (a, z) in topo.interior_spans(r, &all) {
                let (o, s, t) = (Tri::of(old, w, r).span(a, z), share.tri().span(a, z), talus.tri().span(a, z));
                apply_row::<true>(o, s, t, &mut row[a..z], &mut loose[a..z], dist);
            }
        }
    }
}

/// A cell's sediment layer after thermal moves: what it sent leaves the layer (bedrock once the
/// layer is gone), what it received joins it.
#[inline(always)]
fn layer_after(loose: f32, sent: f32, received: f32) -> f32 {
    let left = loose - sent;
    (if left > 0.0 { left } else { 0.0 }) + received
}

#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512cd+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.2"
))]
fn apply_row<'a, const LAYER: bool>(
    old: Tri<'a>,
    share: Tri<'a>,
    talus: Tri<'a>,
    row: &mut [f32],
    loose: &mut [f32],
    dist: [f32; 8],
) {
    let n = row.len();
    let (oc, sc, tc) = (&old.centre()[..n], &share.centre()[..n], &talus.centre()[..n]);
    let on: [&[f32]; 8] = std::array::from_fn(|e| &old.shifted(e)[..n]);
    let sn: [&[f32]; 8] = std::array::from_fn(|e| &share.shifted(e)[..n]);
    let tn: [&[f32]; 8] = std::array::from_fn(|e| &talus.shifted(e)[..n]);
    if !LAYER {
        for c in 0..n {
            let mut change = 0.0f32;
            for e in 0..8 {
                change += gain_across(oc[c], on[e][c], sc[c], tc[c], sn[e][c], tn[e][c], dist[e]);
            }
            row[c] += change;
        }
        return;
    }
    // with the layer, each cell sums what it sends and receives apart too: a chunk at a time,
    // direction by direction (in the same order, so the change has the same bits), which
    // vectorises where a per-cell loop over eight directions and three sums does not
    let loose = &mut loose[..n];
    let mut start = 0;
    while start < n {
        let end = (start + CHUNK).min(n);
        let len = end - start;
        let mut change = [0.0f32; CHUNK];
        let mut sent = [0.0f32; CHUNK];
        let mut received = [0.0f32; CHUNK];
        let (change, sent, received) = (&mut change[..len], &mut sent[..len], &mut received[..len]);
        let (oc, sc, tc) = (&oc[start..end], &sc[start..end], &tc[start..end]);
        for e in 0..8 {
            let (on, sn, tn, de) = (&on[e][start..end], &sn[e][start..end], &tn[e][start..end], dist[e]);
            for c in 0..len {
                let g = gain_across(oc[c], on[c], sc[c], tc[c], sn[c], tn[c], de);
                change[c] += g;
                sent[c] += if g < 0.0 { -g } else { 0.0 };
                received[c] += if g > 0.0 { g } else { 0.0 };
            }
        }
        let (row, loose) = (&mut row[start..end], &mut loose[start..end]);
        for c in 0..len {
            row[c] += change[c];
            loose[c] = layer_after(loose[c], sent[c], received[c]);
        }
        start = end;
    }
}

/// What a cell gains across one interface: its neighbour's move to it less its own move to the
/// neighbour. At most one of the two is not zero (only the higher side can send), so one test
/// of the drop's sign picks it; the result has the bits of `0 − mine + theirs` as the border
/// path computes it (`x − 0` and `x + 0` are `x`, and the change never holds −0).
#[inline(always)]
fn gain_across(b: f32, b_nb: f32, share: f32, talus: f32, share_nb: f32, talus_nb: f32, dist: f32) -> f32 {
    let drop = b - b_nb;
    let rise = b_nb - b;
    let sends = drop > 0.0;
    let (amount, slope, per) = if sends { (drop, talus, share) } else { (rise, talus_nb, share_nb) };
    let moved = if amount > 0.0 && amount > slope * dist { per * amount } else { 0.0 };
    if sends { -moved } else { moved }
}
