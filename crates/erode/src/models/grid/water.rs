//! Water stages: increment (rain, sources), flux (virtual pipes), update (depth, velocity) and
//! evaporation. 000 eqs. 1–7 and 13, with MODEL.md's corrections (eq. 3 is a `min`, eq. 6 starts
//! from `d1`, velocity divides by the mean depth and is 0 below `velocity_epsilon`).

use super::derived::Derived;
use super::params::{Border, FluxForm, Params, RainMode};
use super::state::State;
use super::topology::{Topology, opposite};
use crate::par;
use crate::rng::SplitMix64;

/// Stage 1, `water_increment`: rain and sources add depth. Returns (rain, sources) volumes, m³.
pub fn water_increment(st: &mut State, p: &Params, dv: &Derived, source_rate: &[f32], key: u64) -> (f64, f64) {
    let w = st.width;
    let dt = dv.dt as f32;
    let rain = match p.rain_mode {
        RainMode::Uniform => (p.rain_rate * dv.dt) as f32,
        RainMode::Map => (p.rain_rate * dv.dt) as f32,
        RainMode::Off | RainMode::Buckets => 0.0,
    };
    let map = if p.rain_mode == RainMode::Map { st.rain_map.as_deref() } else { None };
    let add_rain = rain > 0.0;
    let add_sources = !source_rate.is_empty();
    let mut sums = [0.0; 4];
    if add_rain || add_sources {
        sums = par::rows(&mut [&mut st.water], w, |r, out| {
            let d = &mut *out[0];
            let (mut rain_sum, mut src_sum) = (0.0f64, 0.0f64);
            for (c, d) in d.iter_mut().enumerate() {
                let i = r * w + c;
                let before = *d;
                if add_rain {
                    let amount = map.map_or(rain, |m| rain * m[i]);
                    *d += amount;
                    rain_sum += f64::from(*d - before);
                }
                if add_sources {
                    let mid = *d;
                    *d += source_rate[i] * dt;
                    src_sum += f64::from(*d - mid);
                }
            }
            [rain_sum, src_sum, 0.0, 0.0]
        });
    }
    let mut rain_volume = sums[0] * dv.area;
    if p.rain_mode == RainMode::Buckets && p.rain_rate > 0.0 && p.bucket_count > 0 {
        rain_volume += buckets(st, p, dv, key);
    }
    (rain_volume, sums[1] * dv.area)
}

/// 001's buckets: the step's rain falls on `bucket_count` seeded discs. Returns the volume, m³.
fn buckets(st: &mut State, p: &Params, dv: &Derived, key: u64) -> f64 {
    let (w, h) = (st.width, st.height);
    let mut rng = SplitMix64::keyed(p.seed ^ 0x0B0C_4E75, key);
    let total_depth = p.rain_rate * dv.dt * (w * h) as f64 / f64::from(p.bucket_count);
    let rad = p.bucket_radius;
    let reach = rad.ceil() as isize;
    let mut volume = 0.0;
    for _ in 0..p.bucket_count {
        let cx = rng.below(w as u64) as isize;
        let cy = rng.below(h as u64) as isize;
        let mut cells = Vec::new();
        let rows = (cy - reach).max(0)..=(cy + reach).min(h as isize - 1);
        for y in rows {
            for x in (cx - reach).max(0)..=(cx + reach).min(w as isize - 1) {
                let (dx, dy) = ((x - cx) as f64, (y - cy) as f64);
                if dx * dx + dy * dy <= rad * rad {
                    cells.push(y as usize * w + x as usize);
                }
            }
        }
        let each = (total_depth / cells.len().max(1) as f64) as f32;
        for i in cells {
            let before = st.water[i];
            st.water[i] += each;
            volume += f64::from(st.water[i] - before) * dv.area;
        }
    }
    volume
}

/// Stage 2, `water_flux`: pipe fluxes from the water surface `η = b + d`, limited so no cell
/// sends more than it holds (eq. 3, `K = min(1, d·lx·ly / (Σf·Δt))`). `limit` is scratch.
pub fn water_flux(st: &mut State, p: &Params, dv: &Derived, topo: &Topology, limit: &mut [f32]) {
    let w = st.width;
    let (b, d) = (&st.terrain, &st.water);
    let pipes = st.flux.len();
    let gain = dv.pipe_gain;
    let width = dv.pipe_width;
    let depth_scaled = dv.depth_scaled;
    let friction = dv.friction;
    let volume_per_dt = (dv.area / dv.dt) as f32;
    let open = p.border == Border::Open;
    let signed = p.flux_form == FluxForm::Signed;
    {
        let mut outs: Vec<&mut [f32]> = st.flux.iter_mut().map(Vec::as_mut_slice).collect();
        outs.push(limit);
        par::rows(&mut outs, w, |r, out| {
            let mut new = [0.0f32; 8];
            for c in 0..w {
                let i = r * w + c;
                let eta = b[i] + d[i];
                let mut sum = 0.0f32;
                for (e, n) in new.iter_mut().enumerate().take(pipes) {
                    let f = out[e][c];
                    // the neighbour's surface and bed; the outside of an open edge is dry ground
                    // at this cell's level
                    let (eta_j, b_j) = match topo.neighbour(r, c, e) {
                        Some(j) => (b[j] + d[j], b[j]),
                        None if open && e < 4 => (b[i], b[i]),
                        None => {
                            *n = 0.0;
                            continue;
                        }
                    };
                    // flow depth at the face: water above the higher bed (dry banks pass nothing)
                    let h_face = (eta.max(eta_j) - b[i].max(b_j)).max(0.0);
                    let g = if depth_scaled { gain[e] * h_face } else { gain[e] };
                    let mut q = f + g * (eta - eta_j);
                    if friction > 0.0 && h_face > 0.0 {
                        q /= 1.0 + friction * f.abs() / (width[e] * h_face * h_face);
                    }
                    *n = if signed { q } else { q.max(0.0) };
                    sum += n.max(0.0);
                }
                let held = d[i] * volume_per_dt;
                let k = if sum > held { held / sum } else { 1.0 };
                if signed {
                    out[pipes][c] = k;
                    for (e, &n) in new.iter().enumerate().take(pipes) {
                        out[e][c] = n;
                    }
                } else {
                    for (e, &n) in new.iter().enumerate().take(pipes) {
                        out[e][c] = n * k;
                    }
                }
            }
            [0.0; 4]
        });
    }
    if signed {
        // scale each interface by its donor's limit: both sides compute the same product, so the
        // pair stays exactly antisymmetric
        let limit = &*limit;
        let mut outs: Vec<&mut [f32]> = st.flux.iter_mut().map(Vec::as_mut_slice).collect();
        par::rows(&mut outs, w, |r, out| {
            for c in 0..w {
                let i = r * w + c;
                for (e, row) in out.iter_mut().enumerate() {
                    let f = row[c];
                    let k = if f > 0.0 { limit[i] } else { topo.neighbour(r, c, e).map_or(1.0, |j| limit[j]) };
                    row[c] = f * k;
                }
            }
            [0.0; 4]
        });
    }
}

/// Net flow out of cell `i` through pipe `e` (m³/s): the pipe's flux less the neighbour's back.
#[inline]
pub fn net_out(flux: &[Vec<f32>], signed: bool, topo: &Topology, r: usize, c: usize, e: usize) -> f32 {
    let i = r * topo.width + c;
    if signed {
        return flux[e][i];
    }
    let back = topo.neighbour(r, c, e).map_or(0.0, |j| flux[opposite(e)][j]);
    flux[e][i] - back
}

/// Stage 3, `water_update`: depth from the net flow (eqs. 5–6), velocity from the flow through
/// the cell (eq. 7 and MODEL.md), discharge accumulated. Keeps `d1` (depth before the flow) in
/// `before` for transport. Returns the water volume that left across open edges, m³.
pub fn water_update(st: &mut State, p: &Params, dv: &Derived, topo: &Topology, before: &mut [f32]) -> f64 {
    let w = st.width;
    let flux = &st.flux;
    let pipes = flux.len();
    let signed = p.flux_form == FluxForm::Signed;
    let open = p.border == Border::Open;
    let dt = dv.dt as f32;
    let inv_area = (1.0 / dv.area) as f32;
    let (ux, uy) = (dv.unit_x, dv.unit_y);
    let (lx, ly) = (st.cell_size.x as f32, st.cell_size.y as f32);
    let eps = p.velocity_epsilon as f32;
    let sums = par::rows(
        &mut [&mut st.water, &mut st.velocity_x, &mut st.velocity_y, &mut st.discharge_integral, before],
        w,
        |r, out| {
            let mut outflow = 0.0f64;
            for c in 0..w {
                let d1 = out[0][c];
                let (mut net, mut wx, mut wy) = (0.0f32, 0.0f32, 0.0f32);
                for e in 0..pipes {
                    let q = net_out(flux, signed, topo, r, c, e);
                    net += q;
                    wx += q * ux[e];
                    wy += q * uy[e];
                    if open && e < 4 && topo.neighbour(r, c, e).is_none() {
                        outflow += f64::from(q.max(0.0)) * f64::from(dt);
                    }
                }
                let d2 = (d1 - dt * net * inv_area).max(0.0);
                let (wx, wy) = (0.5 * wx, 0.5 * wy);
                let mean = 0.5 * (d1 + d2);
                let (u, v) = if mean > eps { (wx / (ly * mean), wy / (lx * mean)) } else { (0.0, 0.0) };
                out[0][c] = d2;
                out[1][c] = u;
                out[2][c] = v;
                out[3][c] += wx.hypot(wy) * dt;
                out[4][c] = d1;
            }
            [outflow, 0.0, 0.0, 0.0]
        },
    );
    sums[0]
}

/// Last stage, `evaporation`: `d ← d·(1 − Ke·Δt)` (eq. 13). Returns the evaporated volume, m³.
pub fn evaporation(st: &mut State, p: &Params, dv: &Derived) -> f64 {
    let keep = (1.0 - p.evaporation * dv.dt) as f32;
    if keep >= 1.0 {
        return 0.0;
    }
    let sums = par::rows(&mut [&mut st.water], st.width, |_, out| {
        let mut gone = 0.0f64;
        for d in out[0].iter_mut() {
            let before = *d;
            *d *= keep;
            gone += f64::from(before - *d);
        }
        [gone, 0.0, 0.0, 0.0]
    });
    sums[0] * dv.area
}
