//! Stages 3 and 5, `water_update` and `erosion_deposition`, run as one pass over the rows: a
//! row's update needs only the fluxes (complete after `water_flux`) and its own depth, and its
//! erosion needs only that row's new depth and velocity and the terrain before erosion (which
//! `thermal_flux`, run before this pass, does not change). Fusing them saves writing and reading
//! back depth and velocity. The last stage, `evaporation`, runs here too: no stage after
//! `water_update` reads the depth. The per-cell arithmetic is `water::update_cell`,
//! `erosion::erode_cell`, then `d·(1 − Ke·Δt)`, exactly as the stage list reads.

use std::ops::Range;

use super::derived::Derived;
use super::erosion::{ErosionConsts, Moved, erode_cell};
use super::params::{FluxForm, Params};
use super::state::State;
use super::topology::{Around, Topology, Tri, opposite};
use super::water::{UpdateConsts, update_cell};
use crate::CellSize;
use crate::par;

/// What one pass of update, erosion and evaporation moved: (water that left across open edges,
/// what erosion moved, water evaporated), m³.
pub struct Pass {
    /// Water that left across open edges, m³.
    pub outflow: f64,
    /// What erosion moved.
    pub moved: Moved,
    /// Water evaporated, m³.
    pub evaporated: f64,
}

/// The ten rows [`update_erode_row`] writes, in its order: `next` then the state's depth,
/// velocity x and y, discharge integral, sediment, hardness, eroded, deposited and sediment
/// depth. A macro, so
/// the caller can still read the state's flux and terrain while these are borrowed.
macro_rules! update_outputs {
    ($st:expr, $next:expr) => {
        [
            $next,
            &mut $st.water[..],
            &mut $st.velocity_x[..],
            &mut $st.velocity_y[..],
            &mut $st.discharge_integral[..],
            &mut $st.sediment[..],
            &mut $st.hardness[..],
            &mut $st.eroded[..],
            &mut $st.deposited[..],
            &mut $st.sediment_depth[..],
        ]
    };
}
pub(super) use update_outputs;

/// Runs both stages and evaporation; the terrain goes through `next` (gradients read the old
/// terrain), which the caller swaps in.
pub fn update_and_erode(st: &mut State, p: &Params, dv: &Derived, topo: &Topology, next: &mut [f32]) -> Pass {
    let k = UpdateErodeConsts::new(st.cell_size, st.floor, p, dv);
    let w = st.width;
    let (flux, b) = (&st.flux, &st.terrain);
    let mut outs: [&mut [f32]; 10] = update_outputs!(st, next);
    let sums = topo.rows(&mut outs, w, |r, cols, out| {
        let around: [Around<'_>; 8] = std::array::from_fn(|e| Around::of(&flux[e % flux.len()], topo, r));
        update_erode_row(r, cols, topo, &around[..flux.len()], b, out, &k)
    });
    k.pass(sums)
}

/// Constants of the fused pass.
#[derive(Clone, Copy)]
pub(super) struct UpdateErodeConsts {
    pub(super) ku: UpdateConsts,
    pub(super) ke: ErosionConsts,
    pub(super) inv2x: f32,
    pub(super) inv2y: f32,
    pub(super) signed: bool,
    pub(super) dt: f32,
    /// `Ke·Δt`: the share of the depth evaporation takes (eq. 13).
    pub(super) evaporate: f32,
    pub(super) area: f64,
    pub(super) velocity: bool,
}

impl UpdateErodeConsts {
    /// For cells of `cell` whose erosion stops at `floor` (`State::floor`), m.
    pub(super) fn new(cell: CellSize, floor: f32, p: &Params, dv: &Derived) -> Self {
        Self {
            ku: UpdateConsts::new(cell, p, dv),
            ke: ErosionConsts::new(p, dv, floor),
            inv2x: (0.5 / cell.x) as f32,
            inv2y: (0.5 / cell.y) as f32,
            signed: p.flux_form == FluxForm::Signed,
            dt: dv.dt as f32,
            evaporate: (p.evaporation * dv.dt) as f32,
            area: dv.area,
            velocity: true,
        }
    }

    /// Whether the pass writes the velocity maps (an output only, unless transport is
    /// semi-Lagrangian).
    pub(super) fn with_velocity(self, velocity: bool) -> Self {
        Self { velocity, ..self }
    }

    /// The totals of a pass from its row sums (see [`update_erode_row`]).
    pub(super) fn pass(&self, sums: par::Sums<6>) -> Pass {
        let a = self.area;
        Pass {
            outflow: sums[0],
            moved: Moved {
                eroded: sums[1] * a,
                deposited: sums[2] * a,
                water_in: sums[5] * a,
                water_out: sums[3] * a,
            },
            evaporated: sums[4] * a,
        }
    }
}

/// Columns `cols` of row `r` of the fused pass: `flux` holds each pipe's new flux around the row (`P` of them),
/// `b` the whole terrain before erosion; `out` row `r` of next terrain, depth, velocity x and y,
/// discharge integral, sediment, hardness, eroded, deposited and sediment depth. Returns
/// (outflow m³, dissolved, deposited, water removed, evaporated, water added, all m of height;
/// the water as the depth changed), summed over `cols`.
pub(super) fn update_erode_row(
    r: usize,
    cols: Range<usize>,
    topo: &Topology,
    flux: &[Around<'_>],
    b: &[f32],
    out: &mut [&mut [f32]],
    k: &UpdateErodeConsts,
) -> par::Sums<6> {
    match (flux.len(), k.signed, k.velocity) {
        (4, false, true) => row_of::<4, false, true>(r, cols, topo, flux, b, out, k),
        (4, false, false) => row_of::<4, false, false>(r, cols, topo, flux, b, out, k),
        (4, true, _) => row_of::<4, true, true>(r, cols, topo, flux, b, out, k),
        (_, false, true) => row_of::<8, false, true>(r, cols, topo, flux, b, out, k),
        (_, false, false) => row_of::<8, false, false>(r, cols, topo, flux, b, out, k),
        (_, true, _) => row_of::<8, true, true>(r, cols, topo, flux, b, out, k),
    }
}

/// Net flow out of column `c` of row `r` through pipe `e` (m³/s): the pipe's flux less the
/// neighbour's back.
#[inline]
fn net_out(flux: &[Around<'_>], signed: bool, topo: &Topology, r: usize, c: usize, e: usize) -> f32 {
    if signed {
        return flux[e].mid()[c];
    }
    let back = topo.neighbour(r, c, e).map_or(0.0, |j| flux[opposite(e)].at(j));
    flux[e].mid()[c] - back
}

fn row_of<const P: usize, const SIGNED: bool, const VELOCITY: bool>(
    r: usize,
    cols: Range<usize>,
    topo: &Topology,
    flux: &[Around<'_>],
    b: &[f32],
    out: &mut [&mut [f32]],
    k: &UpdateErodeConsts,
) -> par::Sums<6> {
    let w = topo.width;
    let (ku, ke, inv2x, inv2y) = (k.ku, k.ke, k.inv2x, k.inv2y);
    let dt = k.dt;
    // (dissolved, deposited, water removed, evaporated, water added), m of height, summed in a
    // fixed order
    let mut totals = [0.0f64; 5];
    let mut outflow = 0.0f64;
    let mut border_cell = |c: usize, out: &mut [&mut [f32]], totals: &mut [f64; 5]| {
        let i = r * w + c;
        let q: [f32; P] = std::array::from_fn(|e| net_out(flux, SIGNED, topo, r, c, e));
        for e in 0..P.min(4) {
            if topo.neighbour(r, c, e).is_none() && topo.open_beyond(r, c, e) {
                outflow += f64::from(q[e].max(0.0)) * f64::from(dt);
            }
        }
        let (d2, u, v, dq) = update_cell::<P>(out[1][c], &q, &ku);
        // central differences; across an edge or a hole the cell itself stands in
        let bx = (b[topo.beside(r, c, 0)] - b[topo.beside(r, c, 1)]) * inv2x;
        let by = (b[topo.beside(r, c, 2)] - b[topo.beside(r, c, 3)]) * inv2y;
        let e = erode_cell(&ke, bx, by, u, v, b[i], out[5][c], d2, out[6][c], out[9][c]);
        // the last stage, `evaporation` (`d ← d − d·Ke·Δt`, eq. 13), runs here: no stage after
        // `water_update` reads the depth
        let kept = e.water - e.water * k.evaporate;
        out[0][c] = e.height;
        out[1][c] = kept;
        if k.velocity {
            out[2][c] = u;
            out[3][c] = v;
        }
        out[4][c] += dq;
        out[5][c] = e.sediment;
        out[6][c] = e.hardness;
        out[7][c] += e.dissolved;
        out[8][c] += e.deposited;
        out[9][c] = e.loose;
        totals[0] += f64::from(e.dissolved);
        totals[1] += f64::from(e.deposited);
        totals[2] += f64::from(e.water_out);
        totals[3] += f64::from(e.water - kept);
        totals[4] += f64::from(e.water_in);
    };
    for c in topo.border_columns(r, &cols) {
        border_cell(c, out, &mut totals);
    }
    for (a, z) in topo.interior_spans(r, &cols) {
        let own: [&[f32]; P] = std::array::from_fn(|e| &flux[e].mid()[a..z]);
        let back: [&[f32]; P] = std::array::from_fn(|e| flux[opposite(e)].tri().span(a, z).shifted(e));
        let [next, d, u, v, q, s, hard, eroded, deposited, loose] = out else { return [0.0; 6] };
        let i = a..z;
        row::<P, SIGNED, VELOCITY>(
            &own,
            &back,
            Tri::of(b, w, r).span(a, z),
            Rows {
                next: &mut next[i.clone()],
                d: &mut d[i.clone()],
                u: &mut u[i.clone()],
                v: &mut v[i.clone()],
                q: &mut q[i.clone()],
                s: &mut s[i.clone()],
                hard: &mut hard[i.clone()],
                eroded: &mut eroded[i.clone()],
                deposited: &mut deposited[i.clone()],
                loose: &mut loose[i],
            },
            &mut totals,
            ku,
            ke,
            inv2x,
            inv2y,
            k.evaporate,
        );
    }
    [outflow, totals[0], totals[1], totals[2], totals[3], totals[4]]
}

/// The interior columns of one row, each field its own slice.
struct Rows<'r> {
    next: &'r mut [f32],
    d: &'r mut [f32],
    u: &'r mut [f32],
    v: &'r mut [f32],
    q: &'r mut [f32],
    s: &'r mut [f32],
    hard: &'r mut [f32],
    eroded: &'r mut [f32],
    deposited: &'r mut [f32],
    loose: &'r mut [f32],
}

/// Columns per chunk of a row: the chunk's scratch lives on the stack.
const CHUNK: usize = 256;

#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512cd+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.2"
))]
#[allow(clippy::too_many_arguments)]
fn row<'a, const P: usize, const SIGNED: bool, const VELOCITY: bool>(
    own: &[&[f32]; P],
    back: &[&[f32]; P],
    b: Tri<'a>,
    o: Rows<'_>,
    totals: &mut [f64; 5],
    ku: UpdateConsts,
    ke: ErosionConsts,
    inv2x: f32,
    inv2y: f32,
    evaporate: f32,
) {
    let n = b.centre().len();
    let (bc, be, bw, bs, bn) =
        (&b.centre()[..n], &b.shifted(0)[..n], &b.shifted(1)[..n], &b.shifted(2)[..n], &b.shifted(3)[..n]);
    // scratch for one chunk, filled before it is read (zeroed once per row, not per chunk)
    let mut gx = [0.0f32; CHUNK];
    let mut gy = [0.0f32; CHUNK];
    let mut net = [[0.0f32; CHUNK]; P];
    let mut amounts = [[0.0f32; CHUNK]; 5];
    let mut start = 0;
    while start < n {
        let end = (start + CHUNK).min(n);
        let len = end - start;
        // zipped slices: no bounds checks, so these loops vectorise whole
        for ((g, e), w) in gx[..len].iter_mut().zip(&be[start..end]).zip(&bw[start..end]) {
            *g = (e - w) * inv2x;
        }
        for ((g, s), n) in gy[..len].iter_mut().zip(&bs[start..end]).zip(&bn[start..end]) {
            *g = (s - n) * inv2y;
        }
        for e in 0..P {
            let (own, back) = (&own[e][start..end], &back[e][start..end]);
            for ((net, own), back) in net[e][..len].iter_mut().zip(own).zip(back) {
                *net = if SIGNED { *own } else { own - back };
            }
        }
        let nets: [&[f32]; P] = std::array::from_fn(|e| &net[e][..len]);
        let [dissolved, settled, water_out, evaporated, water_in] = &mut amounts;
        let span = start..end;
        cells::<P, VELOCITY>(
            nets,
            &gx[..len],
            &gy[..len],
            &bc[span.clone()],
            &mut o.next[span.clone()],
            &mut o.d[span.clone()],
            &mut o.u[span.clone()],
            &mut o.v[span.clone()],
            &mut o.q[span.clone()],
            &mut o.s[span.clone()],
            &mut o.hard[span.clone()],
            &mut o.eroded[span.clone()],
            &mut o.deposited[span.clone()],
            &mut o.loose[span],
            &mut dissolved[..len],
            &mut settled[..len],
            &mut water_out[..len],
            &mut evaporated[..len],
            &mut water_in[..len],
            ku,
            ke,
            evaporate,
        );
        for (t, a) in totals.iter_mut().zip(&amounts) {
            *t += par::lane_sum(&a[..len]);
        }
        start = end;
    }
}

#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512cd+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.2"
))]
#[allow(clippy::too_many_arguments)]
fn cells<const P: usize, const VELOCITY: bool>(
    nets: [&[f32]; P],
    gx: &[f32],
    gy: &[f32],
    bc: &[f32],
    next: &mut [f32],
    d: &mut [f32],
    u: &mut [f32],
    v: &mut [f32],
    q: &mut [f32],
    s: &mut [f32],
    hard: &mut [f32],
    eroded: &mut [f32],
    deposited: &mut [f32],
    loose: &mut [f32],
    dissolved: &mut [f32],
    settled: &mut [f32],
    water_out: &mut [f32],
    evaporated: &mut [f32],
    water_in: &mut [f32],
    ku: UpdateConsts,
    ke: ErosionConsts,
    evaporate: f32,
) {
    let n = next.len();
    let nets: [&[f32]; P] = std::array::from_fn(|e| &nets[e][..n]);
    let (gx, gy, bc, d, u, v, q) = (&gx[..n], &gy[..n], &bc[..n], &mut d[..n], &mut u[..n], &mut v[..n], &mut q[..n]);
    let (s, hard, eroded, deposited) = (&mut s[..n], &mut hard[..n], &mut eroded[..n], &mut deposited[..n]);
    let loose = &mut loose[..n];
    let (dissolved, settled, water_out) = (&mut dissolved[..n], &mut settled[..n], &mut water_out[..n]);
    let (evaporated, water_in) = (&mut evaporated[..n], &mut water_in[..n]);
    for c in 0..n {
        let netc: [f32; P] = std::array::from_fn(|e| nets[e][c]);
        let (d2, uu, vv, dq) = update_cell::<P>(d[c], &netc, &ku);
        let e = erode_cell(&ke, gx[c], gy[c], uu, vv, bc[c], s[c], d2, hard[c], loose[c]);
        let kept = e.water - e.water * evaporate;
        next[c] = e.height;
        d[c] = kept;
        if VELOCITY {
            u[c] = uu;
            v[c] = vv;
        }
        q[c] += dq;
        s[c] = e.sediment;
        hard[c] = e.hardness;
        eroded[c] += e.dissolved;
        deposited[c] += e.deposited;
        loose[c] = e.loose;
        dissolved[c] = e.dissolved;
        settled[c] = e.deposited;
        water_out[c] = e.water_out;
        evaporated[c] = e.water - kept;
        water_in[c] = e.water_in;
    }
}
