//! One sweep over the rows for `water_flux`, `thermal_flux`, `water_update`,
//! `erosion_deposition`, `evaporation`, `sediment_transport` and `thermal_apply`: the same row
//! functions as the stage-by-stage passes, scheduled so that each row's data is still in cache
//! when the next stage needs it.
//!
//! The grid is cut into bands of rows, one rayon task each. A band walks its rows once: at row
//! `t` it computes the fluxes (and thermal shares) of row `t`, then updates and erodes row
//! `t − 1` (whose fluxes around it are now all new), then transports sediment and applies the
//! thermal moves for row `t − 2`. A stage that reads its neighbours' rows cannot run there on the
//! rows at a band's edges (the neighbour band may not have produced them yet, or may already
//! have overwritten them), so those rows are deferred: the update/erosion of a band's first and
//! last row, and the transport/thermal moves of its first two and last two, run after all bands
//! have finished, in two short parallel passes. The depth a band's fluxes read across its edge
//! is copied before the sweep; no band writes a row another band reads during the sweep.
//!
//! Every cell therefore goes through exactly the arithmetic of the stage-by-stage passes, and
//! per-row sums are reduced in row order: the results are bit-identical to them (and to any
//! number of threads or bands), which `tests/grid_sweep.rs` checks.
//!
//! It covers the one-way flux form with conservative transport (the defaults); the signed form
//! (a donor-scaling pass between flux and update) and semi-Lagrangian transport (which reads
//! beyond the neighbouring rows) run stage by stage.

use super::derived::Derived;
use super::fused::{UpdateErodeConsts, update_erode_row, update_outputs};
use super::params::{Border, FluxForm, Params, Transport};
use super::state::State;
use super::thermal::{self, ThermalConsts};
use super::topology::{Around, Topology};
use super::transport::conservative_row;
use super::water::{FluxConsts, Increment, flux_row};
use crate::par;

/// Scratch arrays the sweep writes (whole grids, swapped into the state by the caller).
pub struct SweepScratch<'a> {
    /// Sediment share per cell (from `water_flux`).
    pub share: &'a mut [f32],
    /// Thermal share per metre of drop.
    pub thermal_share: &'a mut [f32],
    /// Talus per cell.
    pub talus: &'a mut [f32],
    /// The terrain after erosion and thermal moves (swap into the state).
    pub next: &'a mut [f32],
    /// The sediment after transport (swap into the state).
    pub sediment_next: &'a mut [f32],
}

/// Totals of one sweep.
pub struct SweepTotals {
    /// Height set moving by thermal erosion, m³.
    pub thermal_moved: f64,
    /// Update, erosion and evaporation.
    pub pass: super::fused::Pass,
    /// Sediment that left across open edges, m³.
    pub sediment_outflow: f64,
    /// Rain and source water added, m³ (0 unless the sweep added them).
    pub rain: f64,
    /// Source water added, m³.
    pub sources: f64,
}

/// Whether the sweep covers these parameters.
pub fn covers(p: &Params) -> bool {
    p.flux_form == FluxForm::OneWay && p.transport == Transport::Conservative
}

/// Runs the sweep (see the module's text); the caller swaps `next` and `sediment_next` in.
/// `source_rate` is `Some` when the sweep also adds rain and sources (`water_increment`
/// without buckets) to each row just before its fluxes. Without `velocity` the velocity maps
/// are left as they were (nothing in the sweep reads them).
pub fn sweep(
    st: &mut State,
    p: &Params,
    dv: &Derived,
    topo: &Topology,
    source_rate: Option<&[f32]>,
    velocity: bool,
    sc: SweepScratch<'_>,
) -> SweepTotals {
    match (st.flux.len(), dv.depth_scaled) {
        (4, false) => sweep_with::<4, false>(st, p, dv, topo, source_rate, velocity, sc),
        (4, true) => sweep_with::<4, true>(st, p, dv, topo, source_rate, velocity, sc),
        (_, false) => sweep_with::<8, false>(st, p, dv, topo, source_rate, velocity, sc),
        (_, true) => sweep_with::<8, true>(st, p, dv, topo, source_rate, velocity, sc),
    }
}

/// Field positions in a band's list of slices, after the `P` fluxes.
const SHARE: usize = 0;
const THERMAL_SHARE: usize = 1;
const TALUS: usize = 2;
/// The ten rows `update_erode_row` writes start here: next, depth, velocity x and y,
/// discharge, sediment, hardness, eroded, deposited, sediment depth.
const UPDATE: usize = 3;
const DEPTH: usize = UPDATE + 1;
const SEDIMENT: usize = UPDATE + 5;
const HARDNESS: usize = UPDATE + 6;
const LOOSE: usize = UPDATE + 9;
const SEDIMENT_NEXT: usize = UPDATE + 10;

/// Per-row sums: thermal amount, the fused pass's first five, transport's lost, rain, sources,
/// the fused pass's sixth (water added).
type RowSums = [f64; 10];

/// Bands for `height` rows: four per thread (so a slow band does not hold a core idle), at least
/// 8 rows each.
fn band_bounds(height: usize) -> Vec<usize> {
    let count = (rayon::current_num_threads() * 4).min(height / 8).max(1);
    (0..=count).map(|k| k * height / count).collect()
}

/// Rows of band `a..z` within `margin` rows of its edges (all of them in a thin band).
fn deferred(a: usize, z: usize, margin: usize) -> impl Iterator<Item = usize> {
    (a..z).filter(move |&r| r < a + margin || r + margin >= z)
}

fn sweep_with<const P: usize, const DEPTH_SCALED: bool>(
    st: &mut State,
    p: &Params,
    dv: &Derived,
    topo: &Topology,
    source_rate: Option<&[f32]>,
    velocity: bool,
    sc: SweepScratch<'_>,
) -> SweepTotals {
    let (w, h) = (st.width, st.height);
    let inc = source_rate
        .map(|src| Increment::new(p, dv, st.rain_map.as_deref(), st.nodata.as_deref(), src))
        .filter(|i| !i.is_empty());
    let wrap = p.border == Border::Wrap;
    let k = Consts {
        flux: FluxConsts::new(dv),
        thermal: ThermalConsts::new(p, dv),
        update: UpdateErodeConsts::new(st.cell_size, st.floor, p, dv).with_velocity(velocity),
        thermal_on: p.thermal_rate > 0.0,
        dist: dv.distance,
    };
    let bounds = band_bounds(h);
    // the depth each band's fluxes read across its top and bottom edges, before the sweep (with
    // the rain and sources the band above or below adds to it)
    let row_copy = |r: usize| {
        let mut row = st.water[r * w..(r + 1) * w].to_vec();
        if let Some(inc) = &inc {
            inc.row(r, 0..w, &mut row);
        }
        row
    };
    let edges: Vec<[Vec<f32>; 2]> = bounds
        .windows(2)
        .map(|ab| {
            let (a, z) = (ab[0], ab[1]);
            let above = if a > 0 {
                row_copy(a - 1)
            } else if wrap {
                row_copy(h - 1)
            } else {
                row_copy(a)
            };
            let below = if z < h {
                row_copy(z)
            } else if wrap {
                row_copy(0)
            } else {
                row_copy(z - 1)
            };
            [above, below]
        })
        .collect();

    let b: &[f32] = &st.terrain;
    // each row's sums, segment by segment (see `Topology::total`)
    let segs = topo.segments();
    let n = segs.len();
    let mut sums = vec![RowSums::default(); h * n];
    {
        let mut fields: Vec<&mut [f32]> = st.flux.iter_mut().map(Vec::as_mut_slice).collect();
        fields.extend([&mut *sc.share, &mut *sc.thermal_share, &mut *sc.talus]);
        let outputs: [&mut [f32]; 10] = update_outputs!(st, &mut *sc.next);
        fields.extend(outputs);
        fields.push(&mut *sc.sediment_next);
        let per_band = par::bands(&mut fields, w, &bounds, |band_no, a, band| {
            let z = bounds[band_no + 1];
            let mut out = vec![RowSums::default(); (z - a) * n];
            let row = |r: usize| (r - a) * n..(r - a + 1) * n;
            let mut rings = Rings::new(w);
            for t in a..z {
                if let Some(inc) = &inc {
                    // rain and sources reach rows t and t + 1 before the fluxes of row t read them
                    let first = if t == a { a } else { t + 1 };
                    for r in first..(t + 2).min(z) {
                        let d = row_of_mut(band[P + DEPTH], a, r, w);
                        for (cols, sums) in segs.iter().zip(&mut out[row(r)]) {
                            [sums[7], sums[8]] = inc.row(r, cols.clone(), d);
                        }
                    }
                }
                band_fluxes::<P, DEPTH_SCALED>(band, &mut rings, a, z, t, &edges[band_no], topo, b, &k, &mut out[row(t)]);
                if t >= a + 2 {
                    band_update::<P>(band, a, t - 1, topo, b, &k, &mut out[row(t - 1)]);
                }
                if t >= a + 4 {
                    band_moves::<P>(band, &rings, a, t - 2, topo, b, &k, &mut out[row(t - 2)]);
                }
            }
            out
        });
        for (k, rows) in per_band.into_iter().enumerate() {
            sums[bounds[k] * n..bounds[k + 1] * n].copy_from_slice(&rows);
        }
    }

    // the deferred rows at the bands' edges: update and erosion, then transport and thermal
    let edge_rows =
        |margin: usize| -> Vec<usize> { bounds.windows(2).flat_map(|ab| deferred(ab[0], ab[1], margin)).collect() };
    let flux = &st.flux;
    let updated = {
        let mut outs: [&mut [f32]; 10] = update_outputs!(st, &mut *sc.next);
        let rows = edge_rows(1);
        let done = par::some_rows(&mut outs, w, &rows, |r, out| {
            let f: [Around<'_>; P] = std::array::from_fn(|e| Around::of(&flux[e], topo, r));
            segs.iter().map(|cols| update_erode_row(r, cols.clone(), topo, &f, b, out, &k.update)).collect::<Vec<_>>()
        });
        rows.into_iter().zip(done).collect::<Vec<_>>()
    };
    for (r, per_seg) in updated {
        for (sums, s) in sums[r * n..(r + 1) * n].iter_mut().zip(per_seg) {
            sums[1..6].copy_from_slice(&s[..5]);
            sums[9] = s[5];
        }
    }
    let moved = {
        let (s, share, ts, ta) = (&st.sediment, &*sc.share, &*sc.thermal_share, &*sc.talus);
        let mut outs: [&mut [f32]; 3] = [&mut *sc.sediment_next, &mut *sc.next, &mut st.sediment_depth];
        let rows = edge_rows(2);
        let done = par::some_rows(&mut outs, w, &rows, |r, out| {
            let f: [Around<'_>; P] = std::array::from_fn(|e| Around::of(&flux[e], topo, r));
            let [sed, next, loose] = out else { return Vec::new() };
            let (s, share) = (Around::of(s, topo, r), Around::of(share, topo, r));
            let lost: Vec<f64> = segs.iter().map(|cols| conservative_row(r, cols.clone(), topo, &f, s, share, sed)).collect();
            if k.thermal_on {
                let loose = if k.thermal.layer { Some(&mut **loose) } else { None };
                let (ts, ta) = (Around::of(ts, topo, r), Around::of(ta, topo, r));
                thermal::apply_row_at(r, topo, b, ts, ta, next, loose, k.dist);
            }
            lost
        });
        rows.into_iter().zip(done).collect::<Vec<_>>()
    };
    for (r, lost) in moved {
        for (sums, lost) in sums[r * n..(r + 1) * n].iter_mut().zip(lost) {
            sums[6] = lost;
        }
    }

    // reduce in row order, as the stage-by-stage passes do
    let s = topo.total(&sums);
    let (thermal_total, fused, lost, added) = (s[0], [s[1], s[2], s[3], s[4], s[5], s[9]], s[6], [s[7], s[8]]);
    SweepTotals {
        thermal_moved: thermal_total * dv.area,
        pass: k.update.pass(fused),
        sediment_outflow: lost * dv.area,
        rain: added[0] * dv.area,
        sources: added[1] * dv.area,
    }
}

/// Everything the row functions need, built once per sweep.
struct Consts {
    flux: FluxConsts,
    thermal: ThermalConsts,
    update: UpdateErodeConsts,
    thermal_on: bool,
    dist: [f32; 8],
}

/// Rows of the scratch fields a band's sweep is still to read (share, thermal share, talus):
/// the last `RING` rows computed, row `r` at slot `r % RING`. Row `t`'s are written at step `t`
/// and last read at step `t + 3` (the moves of row `t + 1`), so four slots suffice and the
/// scratch stays in the core's cache; only the rows the deferred passes read go to the full
/// arrays.
struct Rings {
    fields: [Vec<f32>; 3],
    width: usize,
}

const RING: usize = 4;

impl Rings {
    fn new(width: usize) -> Self {
        Self { fields: std::array::from_fn(|_| vec![0.0; RING * width]), width }
    }

    fn row(&self, field: usize, r: usize) -> &[f32] {
        let at = (r % RING) * self.width;
        &self.fields[field][at..at + self.width]
    }

    fn around(&self, field: usize, r: usize, h: usize) -> Around<'_> {
        Around::new(self.row(field, r - 1), self.row(field, r), self.row(field, r + 1), r, h)
    }
}

/// Row `r` of a band's field.
fn row_of(field: &[f32], a: usize, r: usize, w: usize) -> &[f32] {
    &field[(r - a) * w..(r - a + 1) * w]
}

fn row_of_mut(field: &mut [f32], a: usize, r: usize, w: usize) -> &mut [f32] {
    &mut field[(r - a) * w..(r - a + 1) * w]
}

/// A band's field around row `r` (both neighbours inside the band).
fn band_around(field: &[f32], a: usize, r: usize, w: usize, h: usize) -> Around<'_> {
    Around::new(row_of(field, a, r - 1, w), row_of(field, a, r, w), row_of(field, a, r + 1, w), r, h)
}

/// `water_flux` and `thermal_flux` of row `t` of band `a..z`.
#[allow(clippy::too_many_arguments)]
fn band_fluxes<const P: usize, const DEPTH_SCALED: bool>(
    band: &mut [&mut [f32]],
    rings: &mut Rings,
    a: usize,
    z: usize,
    t: usize,
    edges: &[Vec<f32>; 2],
    topo: &Topology,
    b: &[f32],
    k: &Consts,
    sums: &mut [RowSums],
) {
    let (w, h) = (topo.width, topo.height);
    let (fl, rest) = band.split_at_mut(P);
    let (scratch, state) = rest.split_at_mut(UPDATE);
    let d = &*state[DEPTH - UPDATE];
    let up = if t > a { row_of(d, a, t - 1, w) } else { &edges[0][..] };
    let down = if t + 1 < z { row_of(d, a, t + 1, w) } else { &edges[1][..] };
    let depth = Around::new(up, row_of(d, a, t, w), down, t, h);
    let at = (t % RING) * w;
    let [share, thermal_share, talus] = &mut rings.fields;
    let (share, thermal_share, talus) =
        (&mut share[at..at + w], &mut thermal_share[at..at + w], &mut talus[at..at + w]);
    let mut outs: [&mut [f32]; 9] = std::array::from_fn(|_| &mut [][..]);
    for (slot, f) in outs.iter_mut().zip(fl.iter_mut()) {
        *slot = row_of_mut(f, a, t, w);
    }
    outs[P] = &mut *share;
    flux_row::<P, false, DEPTH_SCALED>(t, topo, b, depth, &mut outs[..P + 1], &k.flux);
    if k.thermal_on {
        let hard = row_of(state[HARDNESS - UPDATE], a, t, w);
        let loose = row_of(state[LOOSE - UPDATE], a, t, w);
        for (cols, sums) in topo.segments().iter().zip(sums) {
            sums[0] = thermal::flux_row(t, cols.clone(), topo, b, hard, loose, thermal_share, talus, &k.thermal);
        }
    }
    // the deferred moves of a band's first and last two rows read these rows after the sweep
    if t < a + 3 || t + 3 >= z {
        for (full, ring) in scratch.iter_mut().zip([&*share, &*thermal_share, &*talus]) {
            row_of_mut(full, a, t, w).copy_from_slice(ring);
        }
    }
}

/// `water_update`, `erosion_deposition` and `evaporation` of row `r` of the band starting at `a`.
fn band_update<const P: usize>(
    band: &mut [&mut [f32]],
    a: usize,
    r: usize,
    topo: &Topology,
    b: &[f32],
    k: &Consts,
    sums: &mut [RowSums],
) {
    let (w, h) = (topo.width, topo.height);
    let (fl, rest) = band.split_at_mut(P);
    let f: [Around<'_>; P] = std::array::from_fn(|e| band_around(fl[e], a, r, w, h));
    let mut outs: [&mut [f32]; 10] = std::array::from_fn(|_| &mut [][..]);
    for (slot, field) in outs.iter_mut().zip(rest[UPDATE..UPDATE + 10].iter_mut()) {
        *slot = row_of_mut(field, a, r, w);
    }
    for (cols, sums) in topo.segments().iter().zip(sums) {
        let s = update_erode_row(r, cols.clone(), topo, &f, b, &mut outs, &k.update);
        sums[1..6].copy_from_slice(&s[..5]);
        sums[9] = s[5];
    }
}

/// `sediment_transport` and `thermal_apply` of row `r` of the band starting at `a`.
#[allow(clippy::too_many_arguments)]
fn band_moves<const P: usize>(
    band: &mut [&mut [f32]],
    rings: &Rings,
    a: usize,
    r: usize,
    topo: &Topology,
    b: &[f32],
    k: &Consts,
    sums: &mut [RowSums],
) {
    let (w, h) = (topo.width, topo.height);
    let (fl, rest) = band.split_at_mut(P);
    let (_, state) = rest.split_at_mut(UPDATE);
    let (next, state) = state.split_at_mut(1);
    let (middle, sediment_next) = state.split_at_mut(SEDIMENT_NEXT - UPDATE - 1);
    let f: [Around<'_>; P] = std::array::from_fn(|e| band_around(fl[e], a, r, w, h));
    let (before, loose) = middle.split_at_mut(LOOSE - UPDATE - 1);
    let s = band_around(before[SEDIMENT - UPDATE - 1], a, r, w, h);
    let share = rings.around(SHARE, r, h);
    let out = row_of_mut(sediment_next[0], a, r, w);
    for (cols, sums) in topo.segments().iter().zip(sums) {
        sums[6] = conservative_row(r, cols.clone(), topo, &f, s, share, out);
    }
    if k.thermal_on {
        let ts = rings.around(THERMAL_SHARE, r, h);
        let ta = rings.around(TALUS, r, h);
        let loose = if k.thermal.layer { Some(row_of_mut(loose[0], a, r, w)) } else { None };
        thermal::apply_row_at(r, topo, b, ts, ta, row_of_mut(next[0], a, r, w), loose, k.dist);
    }
}
