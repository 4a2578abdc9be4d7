//! Stage 5, `erosion_deposition`: capacity (000 eq. 8 or 001's), dissolving (eq. 9 with
//! hardness) or deposition (eq. 10), the water adjustment of eqs. 9c/10c, and softening (eq. 11).
//! Never dissolves below the floor, never deposits more than is suspended, never removes more
//! water than there is.

use super::derived::Derived;
use super::params::{CapacityModel, Params};
use super::state::State;
use super::topology::{Topology, Tri};
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
#[inline(always)]
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
    let speed = (u * u + v * v).sqrt();
    let norm = (1.0 + bx * bx + by * by).sqrt();
    let cap = match model {
        CapacityModel::Mei => {
            // sine of the downhill slope along the flow direction
            let along = -(bx * u + by * v) / (speed * norm);
            let along = if along > min_tilt { along } else { min_tilt };
            let lmax = 1.0 - d / max_depth;
            let lmax = if lmax > 0.0 { if lmax < 1.0 { lmax } else { 1.0 } } else { 0.0 };
            kc * along * speed * lmax
        }
        CapacityModel::Sine => {
            let tilt = (bx * bx + by * by).sqrt() / norm;
            let tilt = if tilt > min_tilt { tilt } else { min_tilt };
            let depth = if d < 1.0 { d } else { 1.0 };
            kc * tilt * speed * depth
        }
    };
    if speed > 0.0 { cap } else { 0.0 }
}

#[derive(Clone, Copy)]
struct ErosionConsts {
    model: CapacityModel,
    dt: f32,
    ks: f32,
    kd: f32,
    kh: f32,
    kc: f32,
    min_tilt: f32,
    max_depth: f32,
    r_min: f32,
    floor: f32,
}

/// One cell: capacity, then dissolve (eq. 9) or deposit (eq. 10) and soften (eq. 11), computed
/// without branches. Returns (height, sediment, water, hardness, dissolved, deposited, water out).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn erode_cell(
    k: &ErosionConsts,
    bx: f32,
    by: f32,
    u: f32,
    v: f32,
    height: f32,
    s: f32,
    d: f32,
    hard: f32,
) -> (f32, f32, f32, f32, f32, f32, f32) {
    let cap = capacity(k.model, k.kc, k.min_tilt, k.max_depth, bx, by, u, v, d);
    let above = height - k.floor;
    let above = if above > 0.0 { above } else { 0.0 };
    let want = k.dt * hard * k.ks * (cap - s);
    let dissolved = if want < above { want } else { above };
    let settle = k.dt * k.kd * (s - cap);
    let deposited = if settle < s { settle } else { s };
    let water_out = if deposited < d { deposited } else { d };
    let softened = hard - k.dt * k.kh * k.ks * (s - cap);
    let softened = if softened > k.r_min { softened } else { k.r_min };
    if cap > s {
        (height - dissolved, s + dissolved, d + dissolved, hard, dissolved, 0.0, 0.0)
    } else {
        (height + deposited, s - deposited, d - water_out, softened, 0.0, deposited, water_out)
    }
}

/// Runs the stage; terrain goes through `next` (gradients read the old terrain), which the caller
/// swaps in.
pub fn erosion_deposition(st: &mut State, p: &Params, dv: &Derived, topo: &Topology, next: &mut [f32]) -> Moved {
    let (w, h) = (st.width, st.height);
    let b = &st.terrain;
    let (u, v) = (&st.velocity_x, &st.velocity_y);
    let k = ErosionConsts {
        model: p.capacity_model,
        dt: dv.dt as f32,
        ks: p.dissolve as f32,
        kd: p.deposit as f32,
        kh: p.softening as f32,
        kc: p.capacity as f32,
        min_tilt: p.min_tilt as f32,
        max_depth: p.max_erosion_depth as f32,
        r_min: p.hardness_min as f32,
        floor: st.floor,
    };
    let (inv2x, inv2y) = ((0.5 / st.cell_size.x) as f32, (0.5 / st.cell_size.y) as f32);
    let sums = par::rows(
        &mut [next, &mut st.sediment, &mut st.water, &mut st.hardness, &mut st.eroded, &mut st.deposited],
        w,
        |r, out| {
            // per-cell amounts, summed after the loop so the loop vectorises
            let mut amounts = [vec![0.0f32; w], vec![0.0f32; w], vec![0.0f32; w]];
            let interior = r > 0 && r + 1 < h && w >= 3;
            let slopes = |c: usize| {
                let (ri, cc) = (r as isize, c as isize);
                let bx = (b[topo.clamped(ri, cc + 1)] - b[topo.clamped(ri, cc - 1)]) * inv2x;
                let by = (b[topo.clamped(ri + 1, cc)] - b[topo.clamped(ri - 1, cc)]) * inv2y;
                (bx, by)
            };
            let mut cells = |range: std::ops::Range<usize>, slope: &dyn Fn(usize) -> (f32, f32)| {
                for c in range {
                    let i = r * w + c;
                    let (bx, by) = slope(c);
                    let (hh, ss, dd, rr, dis, dep, wout) =
                        erode_cell(&k, bx, by, u[i], v[i], b[i], out[1][c], out[2][c], out[3][c]);
                    out[0][c] = hh;
                    out[1][c] = ss;
                    out[2][c] = dd;
                    out[3][c] = rr;
                    out[4][c] += dis;
                    out[5][c] += dep;
                    amounts[0][c] = dis;
                    amounts[1][c] = dep;
                    amounts[2][c] = wout;
                }
            };
            if interior {
                cells(0..1, &slopes);
                cells(w - 1..w, &slopes);
                interior_erosion(
                    &k,
                    Tri::of(b, w, r),
                    &u[r * w..(r + 1) * w],
                    &v[r * w..(r + 1) * w],
                    out,
                    &mut amounts,
                    inv2x,
                    inv2y,
                );
            } else {
                cells(0..w, &slopes);
            }
            let [dis, dep, wout] = &amounts;
            let dis = par::lane_sum(dis);
            [dis, par::lane_sum(dep), dis, par::lane_sum(wout)]
        },
    );
    let a = dv.area;
    Moved { eroded: sums[0] * a, deposited: sums[1] * a, water_in: sums[2] * a, water_out: sums[3] * a }
}

#[multiversion::multiversion(targets("x86_64+avx2+fma", "x86_64+sse4.2"))]
#[allow(clippy::too_many_arguments)]
fn interior_erosion<'a>(
    k: &ErosionConsts,
    b: Tri<'a>,
    u: &[f32],
    v: &[f32],
    out: &mut [&mut [f32]],
    amounts: &mut [Vec<f32>; 3],
    inv2x: f32,
    inv2y: f32,
) {
    let n = u.len() - 2;
    let (bc, be, bw, bs, bn) =
        (&b.centre()[..n], &b.shifted(0)[..n], &b.shifted(1)[..n], &b.shifted(2)[..n], &b.shifted(3)[..n]);
    let (u, v) = (&u[1..1 + n], &v[1..1 + n]);
    let [next, sed, water, hard, eroded, deposited] = out else { return };
    let (next, sed, water, hard) = (&mut next[1..1 + n], &mut sed[1..1 + n], &mut water[1..1 + n], &mut hard[1..1 + n]);
    let (eroded, deposited) = (&mut eroded[1..1 + n], &mut deposited[1..1 + n]);
    let [a_dis, a_dep, a_w] = amounts;
    let (a_dis, a_dep, a_w) = (&mut a_dis[1..1 + n], &mut a_dep[1..1 + n], &mut a_w[1..1 + n]);
    for c in 0..n {
        let bx = (be[c] - bw[c]) * inv2x;
        let by = (bs[c] - bn[c]) * inv2y;
        let (hh, ss, dd, rr, dis, dep, wout) = erode_cell(k, bx, by, u[c], v[c], bc[c], sed[c], water[c], hard[c]);
        next[c] = hh;
        sed[c] = ss;
        water[c] = dd;
        hard[c] = rr;
        eroded[c] += dis;
        deposited[c] += dep;
        a_dis[c] = dis;
        a_dep[c] = dep;
        a_w[c] = wout;
    }
}
