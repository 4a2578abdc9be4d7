//! Stage 5, `erosion_deposition`: capacity (Jákó & Tóth eq. 8, McLeod et al.'s, or excess shear), dissolving (eq. 9
//! with the erodibility of the cell's hardness) or deposition (eq. 10), the water adjustment of
//! eqs. 9c/10c, and softening (eq. 11, with hardness as resistance: deposits get softer).
//! Never dissolves below the floor, never deposits more than is suspended, never removes more
//! water than there is.

use super::derived::Derived;
use super::params::{CapacityModel, Params};

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

/// Transport capacity at one cell, m of sediment (of bed volume: times the morphological factor).
#[inline(always)]
pub(super) fn capacity(k: &ErosionConsts, bx: f32, by: f32, u: f32, v: f32, d: f32) -> f32 {
    let speed = (u * u + v * v).sqrt();
    let norm = (1.0 + bx * bx + by * by).sqrt();
    // every form is computed and one kept by 0/1 weights: a three-way branch on the model
    // inside the row loop stops it vectorising (NaNs of the unused forms at zero speed are
    // dropped by the last select)
    // mei: sine of the downhill slope along the flow direction
    let along = -(bx * u + by * v) / (speed * norm);
    let along = if along > k.min_tilt { along } else { k.min_tilt };
    let lmax = 1.0 - d * k.per_max_depth;
    let lmax = if lmax > 0.0 { if lmax < 1.0 { lmax } else { 1.0 } } else { 0.0 };
    let mei = k.kc * along * speed * lmax;
    // sine: the tilt
    let tilt = (bx * bx + by * by).sqrt() / norm;
    let tilt = if tilt > k.min_tilt { tilt } else { k.min_tilt };
    let depth = if d < 1.0 { d } else { 1.0 };
    let sine = k.kc * tilt * speed * depth;
    // shear: bed shear stress over rho·g from the friction law, `Cf·|v|²/g`, less its threshold
    let excess = k.cf_over_g * speed * speed - k.critical_shear;
    let shear = k.kc * if excess > 0.0 { excess } else { 0.0 };
    let cap = k.use_mei * mei + k.use_sine * sine + k.use_shear * shear;
    if speed > 0.0 { cap } else { 0.0 }
}

#[derive(Clone, Copy)]
pub(super) struct ErosionConsts {
    pub(super) use_mei: f32,
    pub(super) use_sine: f32,
    pub(super) use_shear: f32,
    pub(super) dt: f32,
    pub(super) ks: f32,
    pub(super) kd: f32,
    pub(super) kh: f32,
    pub(super) kc: f32,
    pub(super) min_tilt: f32,
    pub(super) per_max_depth: f32,
    /// `1 − rock_erodibility`: the erodibility lost per unit of hardness.
    pub(super) loss: f32,
    pub(super) floor: f32,
    pub(super) cf_over_g: f32,
    /// `bed_change_limit`: the most the bed moves per sub-step per metre of water depth.
    pub(super) bed_step: f32,
    /// `f32::MAX` without a limit (0 with one), added so the limit never meets `0·∞`.
    pub(super) bed_unlimited: f32,
    /// `max_flow_depth` (`f32::MAX` without one): deep lakes move their bed no faster than water
    /// this deep.
    pub(super) depth_cap: f32,
    pub(super) critical_shear: f32,
    pub(super) water_per_soil: f32,
    /// 1 with a sediment layer (deposits join it), 0 without (it stays 0).
    pub(super) layer: f32,
}

/// What [`erode_cell`] leaves in a cell and moved there.
pub(super) struct Eroded {
    pub height: f32,
    pub sediment: f32,
    pub water: f32,
    pub hardness: f32,
    /// Depth of the loose layer.
    pub loose: f32,
    pub dissolved: f32,
    pub deposited: f32,
    /// The depth dissolving added and deposition removed: what `water` gained or lost, which
    /// the books count (a product below the depth's last place is lost to rounding).
    pub water_in: f32,
    pub water_out: f32,
}

/// One cell: capacity, then dissolve (eq. 9) or deposit (eq. 10) and soften (eq. 11), computed
/// without branches. `loose` is the depth of the sediment layer: the flow takes it first, with
/// erodibility 1, then bedrock with its hardness's; deposits join it.
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
    loose: f32,
) -> Eroded {
    let cap = capacity(k, bx, by, u, v, d);
    let above = height - k.floor;
    let above = if above > 0.0 { above } else { 0.0 };
    // the bed moves at most `bed_change_limit·d` per sub-step (d at most `max_flow_depth`), so
    // the flow can follow it
    let flow_depth = if d < k.depth_cap { d } else { k.depth_cap };
    let most = k.bed_step * flow_depth + k.bed_unlimited;
    // what the flow would take, within that limit; hardness is resistance: the ground yields
    // its erodibility's share of it (1 for loose soil, H = 0; `rock_erodibility` at H = 1)
    let pull = k.dt * k.ks * (cap - s);
    let pull = if pull < most { pull } else { most };
    let from_loose = if pull < loose { pull } else { loose };
    let want = from_loose + (1.0 - hard * k.loss) * (pull - from_loose);
    let dissolved = if want < above { want } else { above };
    let loose_left = loose - dissolved;
    let loose_left = if loose_left > 0.0 { loose_left } else { 0.0 };
    let settle = k.dt * k.kd * (s - cap);
    let deposited = if settle < s { settle } else { s };
    let deposited = if deposited < most { deposited } else { most };
    let water_out = deposited * k.water_per_soil;
    let water_out = if water_out < d { water_out } else { d };
    // softening: fresh deposits are looser, `H − Kh·deposited`, down to 0
    let softened = hard - k.kh * deposited;
    let softened = if softened > 0.0 { softened } else { 0.0 };
    if cap > s {
        let water = d + dissolved * k.water_per_soil;
        Eroded {
            height: height - dissolved,
            sediment: s + dissolved,
            water,
            hardness: hard,
            loose: loose_left,
            dissolved,
            deposited: 0.0,
            water_in: water - d,
            water_out: 0.0,
        }
    } else {
        let water = d - water_out;
        Eroded {
            height: height + deposited,
            sediment: s - deposited,
            water,
            hardness: softened,
            loose: loose + k.layer * deposited,
            dissolved: 0.0,
            deposited,
            water_in: 0.0,
            water_out: d - water,
        }
    }
}

impl ErosionConsts {
    /// `floor` is the lowest height erosion may reach (`State::floor`), m.
    pub(super) fn new(p: &Params, dv: &Derived, floor: f32) -> Self {
        Self {
            use_mei: f32::from(u8::from(p.capacity_model == CapacityModel::Mei)),
            use_sine: f32::from(u8::from(p.capacity_model == CapacityModel::Sine)),
            use_shear: f32::from(u8::from(p.capacity_model == CapacityModel::Shear)),
            dt: dv.dt as f32,
            ks: p.dissolve as f32,
            kd: p.deposit as f32,
            kh: p.softening as f32,
            kc: (p.capacity * dv.morphological_factor) as f32,
            min_tilt: p.min_tilt as f32,
            per_max_depth: (1.0 / p.max_erosion_depth) as f32,
            loss: (1.0 - p.rock_erodibility) as f32,
            floor,
            cf_over_g: (p.friction / p.gravity) as f32,
            bed_step: dv.bed_step,
            bed_unlimited: if p.bed_change_limit > 0.0 { 0.0 } else { f32::MAX },
            depth_cap: dv.depth_cap.min(f32::MAX),
            critical_shear: p.critical_shear as f32,
            water_per_soil: (1.0 / dv.morphological_factor) as f32,
            layer: f32::from(u8::from(p.sediment_layer)),
        }
    }
}
