//! Water stages: increment (rain, sources), flux (virtual pipes), update (depth, velocity) and
//! evaporation. Jákó & Tóth eqs. 1–7 and 13, with the corrections `docs/grid-model.md` explains (eq. 3 is a `min`, eq. 6 starts
//! from `d1`, velocity divides by the mean depth and is 0 below `velocity_epsilon`).

use std::ops::Range;

use super::derived::Derived;
use super::params::{FluxForm, Params, RainMode};
use super::state::State;
use super::topology::{Around, Topology, Tri};
use crate::CellSize;
use crate::par;
use crate::rng::SplitMix64;

/// What `water_increment` adds to each row (rain, a rain map, sources), built once per sub-step.
#[derive(Clone, Copy)]
pub(super) struct Increment<'a> {
    rain: f32,
    map: Option<&'a [f32]>,
    sources: &'a [f32],
    dt: f32,
    outside: Option<&'a [bool]>,
}

impl<'a> Increment<'a> {
    /// The rain and sources of `p` (buckets are added separately): `map` is the state's rain
    /// map, `outside` its nodata cells (which receive nothing).
    pub(super) fn new(
        p: &Params,
        dv: &Derived,
        map: Option<&'a [f32]>,
        outside: Option<&'a [bool]>,
        source_rate: &'a [f32],
    ) -> Self {
        let map = if p.rain_mode == RainMode::Map { map } else { None };
        Self { rain: Self::rain_depth(p, dv), map, sources: source_rate, dt: dv.dt as f32, outside }
    }

    /// The depth of rain a sub-step adds to each cell (times its rain map's value), m:
    /// `rain_rate·Δt` for uniform and mapped rain; buckets add theirs separately, in bursts.
    pub(super) fn rain_depth(p: &Params, dv: &Derived) -> f32 {
        match p.rain_mode {
            RainMode::Uniform | RainMode::Map => (p.rain_rate * dv.dt) as f32,
            RainMode::Off | RainMode::Buckets => 0.0,
        }
    }

    /// Whether it adds nothing.
    pub(super) fn is_empty(&self) -> bool {
        self.rain <= 0.0 && self.sources.is_empty()
    }

    /// Adds the rain and sources of columns `cols` of row `r` to `d` (that row). Returns (rain,
    /// sources) added, m of depth summed over `cols`.
    pub(super) fn row(&self, r: usize, cols: Range<usize>, d: &mut [f32]) -> [f64; 2] {
        let w = d.len();
        let span = r * w + cols.start..r * w + cols.end;
        let d = &mut d[cols];
        let mut totals = [0.0f64; 2];
        // nodata cells receive nothing: what the row adds there is taken back and unbooked
        let holes = self.outside.map(|m| &m[span.clone()]).filter(|m| m.contains(&true));
        let kept: Vec<(usize, f32)> = holes
            .map_or_else(Vec::new, |m| m.iter().enumerate().filter(|(_, o)| **o).map(|(c, _)| (c, d[c])).collect());
        if self.rain > 0.0 {
            totals[0] = match self.map {
                Some(m) => add_scaled(d, &m[span.clone()], self.rain),
                None => add_uniform(d, self.rain),
            };
        }
        if !self.sources.is_empty() {
            totals[1] = add_scaled(d, &self.sources[span.clone()], self.dt);
        }
        for (c, before) in kept {
            let i = span.start + c;
            if self.rain > 0.0 {
                totals[0] -= f64::from(self.rain * self.map.map_or(1.0, |m| m[i]));
            }
            if !self.sources.is_empty() {
                totals[1] -= f64::from(self.dt * self.sources[i]);
            }
            d[c] = before;
        }
        totals
    }
}

/// `d += rain` over a row; returns what was added (the f32 differences, summed by chunks of
/// [`CHUNK`] with [`par::lane_sum`]).
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512cd+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.2"
))]
fn add_uniform(d: &mut [f32], rain: f32) -> f64 {
    let mut added = [0.0f32; CHUNK];
    let mut total = 0.0;
    for chunk in d.chunks_mut(CHUNK) {
        let len = chunk.len();
        for (v, a) in chunk.iter_mut().zip(added.iter_mut()) {
            let before = *v;
            *v += rain;
            *a = *v - before;
        }
        total += par::lane_sum(&added[..len]);
    }
    total
}

/// `d += scale·rate` over a row (a rain map, or source rates); returns what was added, summed as
/// in [`add_uniform`].
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512cd+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.2"
))]
fn add_scaled(d: &mut [f32], rate: &[f32], scale: f32) -> f64 {
    let mut added = [0.0f32; CHUNK];
    let mut total = 0.0;
    for (chunk, rate) in d.chunks_mut(CHUNK).zip(rate.chunks(CHUNK)) {
        let len = chunk.len();
        for ((v, a), &m) in chunk.iter_mut().zip(added.iter_mut()).zip(rate) {
            let before = *v;
            *v += scale * m;
            *a = *v - before;
        }
        total += par::lane_sum(&added[..len]);
    }
    total
}

/// Columns per chunk of a row whose per-cell amounts are summed on the stack.
const CHUNK: usize = 256;

/// Stage 1, `water_increment`: rain and sources add depth, then McLeod, Chen & Hu's buckets. Returns (rain,
/// sources) volumes, m³. `with_rows` false leaves rain and sources to the sweep.
pub fn water_increment(
    st: &mut State,
    p: &Params,
    dv: &Derived,
    topo: &Topology,
    source_rate: &[f32],
    key: u64,
    with_rows: bool,
) -> (f64, f64) {
    let mut sums = [0.0; 2];
    if with_rows {
        let inc = Increment::new(p, dv, st.rain_map.as_deref(), st.nodata.as_deref(), source_rate);
        if !inc.is_empty() {
            sums = topo.rows(&mut [&mut st.water], st.width, |r, cols, out| inc.row(r, cols, out[0]));
        }
    }
    let mut rain_volume = sums[0] * dv.area;
    if p.rain_mode == RainMode::Buckets && p.rain_rate > 0.0 && p.bucket_count > 0 {
        rain_volume += buckets(st, p, dv, key);
    }
    (rain_volume, sums[1] * dv.area)
}

/// McLeod, Chen & Hu's buckets: the step's rain falls on `bucket_count` seeded discs. Returns the volume, m³.
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
                let i = y as usize * w + x as usize;
                if dx * dx + dy * dy <= rad * rad && !st.nodata.as_ref().is_some_and(|m| m[i]) {
                    cells.push(i);
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

/// One pipe's new flux (Jákó & Tóth eq. 2 with the cross-section and friction of `Params`): `f` the old
/// flux, `eta`/`bed` this cell's surface and bed, `eta_j`/`bed_j` the neighbour's.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn pipe<const SIGNED: bool, const DEPTH: bool>(
    eta: f32,
    bed: f32,
    eta_j: f32,
    bed_j: f32,
    f: f32,
    gain: f32,
    width: f32,
    friction: f32,
    depth_cap: f32,
) -> f32 {
    // flow depth at the face: water above the higher bed (a dry bank passes nothing), at most
    // `depth_cap` (`Params::max_flow_depth`)
    let top = if eta > eta_j { eta } else { eta_j };
    let floor = if bed > bed_j { bed } else { bed_j };
    let h = top - floor;
    let h = if h > 0.0 { h } else { 0.0 };
    let h = if h < depth_cap { h } else { depth_cap };
    let g = if DEPTH { gain * h } else { gain };
    let q = f + g * (eta - eta_j);
    // semi-implicit friction `q / (1 + r/a)` with `r = friction·|f|`, `a = width·h²`, written
    // `q − q·r/(a + r)`: one division, and exactly `q` without friction; with h = 0 the division
    // is discarded by the select
    let r = friction * f.abs();
    let q = if h > 0.0 { q - q * r / (width * h * h + r) } else { q };
    if SIGNED || q > 0.0 { q } else { 0.0 }
}

/// Sediment sent per m³ of outflow per metre of suspended sediment: the fraction of its water a
/// cell's pipes took (`min(Σf⁺·Δt, d1·a) / (d1·a)`) per unit of outflow. Transport multiplies it
/// by the sediment and each pipe's flux, so what one cell sends is what its neighbour receives.
#[inline(always)]
fn sediment_share(gross: f32, depth: f32, dt: f32, area: f32) -> f32 {
    let held = depth * area;
    let sent = gross * dt;
    let sent = if sent < held { sent } else { held };
    let share = (sent / held) / gross;
    if gross > 0.0 && held > 0.0 { share } else { 0.0 }
}

/// Σ of the positive parts of a cell's pipes, in pipe order.
#[inline(always)]
fn gross_outflow<const P: usize>(f: &[f32; P]) -> f32 {
    let mut sum = 0.0f32;
    for e in 0..P {
        sum += if f[e] > 0.0 { f[e] } else { 0.0 };
    }
    sum
}

/// The limit of eq. 3: the share of the new outflow a cell can afford.
#[inline(always)]
fn afford(sum: f32, held: f32) -> f32 {
    if sum > held { held / sum } else { 1.0 }
}

/// Stage 2, `water_flux`: pipe fluxes from the water surface `η = b + d`, limited so no cell
/// sends more than it holds (eq. 3, `K = min(1, d·lx·ly / (Σf·Δt))`). Writes each cell's
/// `sediment_share` into `share` for transport; `limit` is scratch.
pub fn water_flux(st: &mut State, p: &Params, dv: &Derived, topo: &Topology, limit: &mut [f32], share: &mut [f32]) {
    match (p.flux_form == FluxForm::Signed, dv.depth_scaled, st.flux.len()) {
        (false, false, 4) => flux_pass::<4, false, false>(st, dv, topo, share),
        (false, true, 4) => flux_pass::<4, false, true>(st, dv, topo, share),
        (true, false, 4) => flux_pass::<4, true, false>(st, dv, topo, limit),
        (true, true, 4) => flux_pass::<4, true, true>(st, dv, topo, limit),
        (false, false, _) => flux_pass::<8, false, false>(st, dv, topo, share),
        (false, true, _) => flux_pass::<8, false, true>(st, dv, topo, share),
        (true, false, _) => flux_pass::<8, true, false>(st, dv, topo, limit),
        (true, true, _) => flux_pass::<8, true, true>(st, dv, topo, limit),
    }
    if p.flux_form == FluxForm::Signed {
        scale_by_donor(st, dv, topo, limit, share);
    }
}

/// Constants of `water_flux`.
#[derive(Clone, Copy)]
pub(super) struct FluxConsts {
    gain: [f32; 8],
    width: [f32; 8],
    friction: f32,
    depth_cap: f32,
    volume_per_dt: f32,
    dt: f32,
    area: f32,
}

impl FluxConsts {
    pub(super) fn new(dv: &Derived) -> Self {
        Self {
            gain: dv.pipe_gain,
            width: dv.pipe_width,
            friction: dv.friction,
            depth_cap: dv.depth_cap,
            volume_per_dt: dv.volume_per_dt(),
            dt: dv.dt as f32,
            area: dv.area as f32,
        }
    }
}

fn flux_pass<const P: usize, const SIGNED: bool, const DEPTH: bool>(
    st: &mut State,
    dv: &Derived,
    topo: &Topology,
    limit: &mut [f32],
) {
    let w = st.width;
    let (b, d) = (&st.terrain, &st.water);
    let k = FluxConsts::new(dv);
    let mut outs: Vec<&mut [f32]> = st.flux.iter_mut().map(Vec::as_mut_slice).collect();
    outs.push(limit);
    par::rows(&mut outs, w, |r, out| {
        flux_row::<P, SIGNED, DEPTH>(r, topo, b, Around::of(d, topo, r), out, &k);
        [0.0; 4]
    });
}

/// Row `r` of `water_flux` (before the signed form's donor scaling): `out` holds row `r` of each
/// pipe's flux (old in, new out) and then of the shares (one-way) or limits (signed). `b` is the
/// whole terrain, `d` the depth around the row.
#[inline]
pub(super) fn flux_row<const P: usize, const SIGNED: bool, const DEPTH: bool>(
    r: usize,
    topo: &Topology,
    b: &[f32],
    d: Around<'_>,
    out: &mut [&mut [f32]],
    k: &FluxConsts,
) {
    let w = topo.width;
    let dm = d.mid();
    // a border cell: neighbours through the topology (the outside of an open edge is dry
    // ground at this cell's level)
    let generic = |c: usize, out: &mut [&mut [f32]]| {
        let i = r * w + c;
        let (eta, bed) = (b[i] + dm[c], b[i]);
        let mut new = [0.0f32; P];
        let mut sum = 0.0f32;
        for e in 0..P {
            let (eta_j, bed_j) = match topo.neighbour(r, c, e) {
                Some(j) => (b[j] + d.at(j), b[j]),
                None if e < 4 && topo.open_beyond(r, c, e) => match topo.beyond_level(r, c, e) {
                    // down to the surface beyond, never up it
                    Some((surface, bed)) => (if surface < eta { surface } else { eta }, bed),
                    None => (b[i], b[i]),
                },
                None => continue,
            };
            new[e] = pipe::<SIGNED, DEPTH>(
                eta,
                bed,
                eta_j,
                bed_j,
                out[e][c],
                k.gain[e],
                k.width[e],
                k.friction,
                k.depth_cap,
            );
            sum += if new[e] > 0.0 { new[e] } else { 0.0 };
        }
        let kk = afford(sum, dm[c] * k.volume_per_dt);
        for e in 0..P {
            new[e] = if SIGNED { new[e] } else { new[e] * kk };
            out[e][c] = new[e];
        }
        out[P][c] = if SIGNED { kk } else { sediment_share(gross_outflow(&new), dm[c], k.dt, k.area) };
    };
    let all = topo.all_columns();
    for c in topo.border_columns(r, &all) {
        generic(c, out);
    }
    for (a, z) in topo.interior_spans(r, &all) {
        interior_flux::<P, SIGNED, DEPTH>(
            Tri::of(b, w, r).span(a, z),
            d.tri().span(a, z),
            out,
            a,
            k.gain,
            k.width,
            k.friction,
            k.depth_cap,
            k.volume_per_dt,
            k.dt,
            k.area,
        );
    }
}

/// Interior columns of one row (a span: `b` and `d` are views whose centre is columns
/// `first..`): the same arithmetic as the border path, without lookups,
/// and the same operations per cell in the same order. The loops run pipe by pipe over a chunk
/// of the row (each a few streams, so they vectorise with 8 pipes as with 4), then scale.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512cd+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.2"
))]
#[allow(clippy::too_many_arguments)]
fn interior_flux<const P: usize, const SIGNED: bool, const DEPTH: bool>(
    b: Tri<'_>,
    d: Tri<'_>,
    out: &mut [&mut [f32]],
    first: usize,
    gain: [f32; 8],
    width: [f32; 8],
    friction: f32,
    depth_cap: f32,
    volume_per_dt: f32,
    dt: f32,
    area: f32,
) {
    // the columns `first..first + n` of the rows in `out`; `b` and `d` are views of them
    let n = b.centre().len();
    let (fluxes, tail) = out.split_at_mut(P);
    let mut fl: [&mut [f32]; P] = std::array::from_fn(|_| &mut [][..]);
    for (slot, row) in fl.iter_mut().zip(fluxes.iter_mut()) {
        *slot = &mut row[first..first + n];
    }
    let limit: &mut [f32] = &mut tail[0][first..first + n];
    let (bc, dc) = (&b.centre()[..n], &d.centre()[..n]);
    let bn: [&[f32]; P] = std::array::from_fn(|e| &b.shifted(e)[..n]);
    let dn: [&[f32]; P] = std::array::from_fn(|e| &d.shifted(e)[..n]);
    let mut sum = [0.0f32; CHUNK];
    let mut kk = [0.0f32; CHUNK];
    let mut start = 0;
    while start < n {
        let end = (start + CHUNK).min(n);
        let len = end - start;
        let (bc, dc) = (&bc[start..end], &dc[start..end]);
        let (sum, kk) = (&mut sum[..len], &mut kk[..len]);
        sum.fill(0.0);
        for e in 0..P {
            let (f, bn, dn) = (&mut fl[e][start..end], &bn[e][start..end], &dn[e][start..end]);
            let (g, wd) = (gain[e], width[e]);
            for (((((f, sum), &bed), &depth), &bed_j), &depth_j) in
                f.iter_mut().zip(sum.iter_mut()).zip(bc).zip(dc).zip(bn).zip(dn)
            {
                let q = pipe::<SIGNED, DEPTH>(bed + depth, bed, bed_j + depth_j, bed_j, *f, g, wd, friction, depth_cap);
                *f = q;
                *sum += if q > 0.0 { q } else { 0.0 };
            }
        }
        for ((kk, &sum), &depth) in kk.iter_mut().zip(sum.iter()).zip(dc) {
            *kk = afford(sum, depth * volume_per_dt);
        }
        let limit = &mut limit[start..end];
        if SIGNED {
            limit.copy_from_slice(kk);
        } else {
            // scaled fluxes, and their positive parts summed in pipe order (`gross_outflow`)
            sum.fill(0.0);
            for f in fl.iter_mut() {
                for ((f, sum), &kk) in f[start..end].iter_mut().zip(sum.iter_mut()).zip(kk.iter()) {
                    *f *= kk;
                    *sum += if *f > 0.0 { *f } else { 0.0 };
                }
            }
            for ((l, &gross), &depth) in limit.iter_mut().zip(sum.iter()).zip(dc) {
                *l = sediment_share(gross, depth, dt, area);
            }
        }
        start = end;
    }
}

/// Signed form: scale each interface by its donor's limit. Both sides compute the same product,
/// so the pair stays exactly antisymmetric.
fn scale_by_donor(st: &mut State, dv: &Derived, topo: &Topology, limit: &[f32], share: &mut [f32]) {
    let w = st.width;
    let (dt, area) = (dv.dt as f32, dv.area as f32);
    let water = &st.water;
    let mut outs: Vec<&mut [f32]> = st.flux.iter_mut().map(Vec::as_mut_slice).collect();
    let pipes = outs.len();
    outs.push(share);
    par::rows(&mut outs, w, |r, out| {
        for c in 0..w {
            let i = r * w + c;
            let mut gross = 0.0f32;
            for e in 0..pipes {
                let f = out[e][c];
                let k = if f > 0.0 { limit[i] } else { topo.neighbour(r, c, e).map_or(1.0, |j| limit[j]) };
                out[e][c] = f * k;
                gross += if out[e][c] > 0.0 { out[e][c] } else { 0.0 };
            }
            out[pipes][c] = sediment_share(gross, water[i], dt, area);
        }
        [0.0; 4]
    });
}

/// Constants of the update stage.
#[derive(Clone, Copy)]
pub(super) struct UpdateConsts {
    pub(super) dt: f32,
    pub(super) inv_area: f32,
    pub(super) ux: [f32; 8],
    pub(super) uy: [f32; 8],
    pub(super) inv_lx: f32,
    pub(super) inv_ly: f32,
    pub(super) eps: f32,
}

impl UpdateConsts {
    pub(super) fn new(cell: CellSize, p: &Params, dv: &Derived) -> Self {
        Self {
            dt: dv.dt as f32,
            inv_area: (1.0 / dv.area) as f32,
            ux: dv.unit_x,
            uy: dv.unit_y,
            inv_lx: (1.0 / cell.x) as f32,
            inv_ly: (1.0 / cell.y) as f32,
            eps: p.velocity_epsilon as f32,
        }
    }
}

/// One cell of `water_update` from its net outflows `q` per pipe: (d2, u, v, discharge·Δt).
#[inline(always)]
pub(super) fn update_cell<const P: usize>(d1: f32, q: &[f32; P], k: &UpdateConsts) -> (f32, f32, f32, f32) {
    let (mut net, mut wx, mut wy) = (0.0f32, 0.0f32, 0.0f32);
    for e in 0..P {
        net += q[e];
        wx += q[e] * k.ux[e];
        wy += q[e] * k.uy[e];
    }
    let d2 = d1 - k.dt * net * k.inv_area;
    let d2 = if d2 > 0.0 { d2 } else { 0.0 };
    let (wx, wy) = (0.5 * wx, 0.5 * wy);
    let mean = 0.5 * (d1 + d2);
    let per_depth = 1.0 / mean;
    let u = if mean > k.eps { wx * per_depth * k.inv_ly } else { 0.0 };
    let v = if mean > k.eps { wy * per_depth * k.inv_lx } else { 0.0 };
    (d2, u, v, (wx * wx + wy * wy).sqrt() * k.dt)
}
