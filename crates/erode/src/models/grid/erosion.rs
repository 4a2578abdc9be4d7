//! Stage 5, `erosion_deposition`: capacity (000 eq. 8 or 001's), dissolving (eq. 9 with
//! hardness) or deposition (eq. 10), the water adjustment of eqs. 9c/10c, and softening (eq. 11).
//! Never dissolves below the floor, never deposits more than is suspended, never removes more
//! water than there is.

use super::derived::Derived;
use super::params::{CapacityModel, Params};
use super::state::State;

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
    per_max_depth: f32,
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
            let lmax = 1.0 - d * per_max_depth;
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
pub(super) struct ErosionConsts {
    model: CapacityModel,
    dt: f32,
    ks: f32,
    kd: f32,
    kh: f32,
    kc: f32,
    min_tilt: f32,
    per_max_depth: f32,
    r_min: f32,
    floor: f32,
}

/// One cell: capacity, then dissolve (eq. 9) or deposit (eq. 10) and soften (eq. 11), computed
/// without branches. Returns (height, sediment, water, hardness, dissolved, deposited, water out).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn erode_cell(
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
    let cap = capacity(k.model, k.kc, k.min_tilt, k.per_max_depth, bx, by, u, v, d);
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

impl ErosionConsts {
    pub(super) fn new(st: &State, p: &Params, dv: &Derived) -> Self {
        Self {
            model: p.capacity_model,
            dt: dv.dt as f32,
            ks: p.dissolve as f32,
            kd: p.deposit as f32,
            kh: p.softening as f32,
            kc: p.capacity as f32,
            min_tilt: p.min_tilt as f32,
            per_max_depth: (1.0 / p.max_erosion_depth) as f32,
            r_min: p.hardness_min as f32,
            floor: st.floor,
        }
    }
}
