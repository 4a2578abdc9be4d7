//! Coefficients computed once from `Params` and the cell size, and the stable time step.
//!
//! Stability of the pipe model. Linearised, the water surface `η` obeys
//! `d²η/dt² = g/(lx·ly) · Σ_pipes A_e·(η_nb − η)/l_e`, integrated with symplectic Euler (fluxes
//! first, then depths with the new fluxes), which is stable while `ω·Δt <= 2` for the fastest
//! mode. With `a = 2·A_E/lx`, `b = 2·A_S/ly`, `c = 2·A_diag/l_diag` the fastest mode's
//! `ω² = g/(lx·ly) · max(2a + 2b, 2a + 4c, 2b + 4c)` (the last two only with diagonal pipes): the
//! sum over pipe pairs of `2·A_e·(1 − cos k·e)/l_e` is bilinear in `(cos kx, cos ky)`, so its
//! maximum is at a corner. One-way pipes double `ω²` once both pipes of an interface carry water,
//! hence half the stable `Δt²`. On square cells with 4 constant pipes this is `g·A·Δt²/l³ <= 0.5`
//! (signed) and `<= 0.25` (one-way). With the depth cross-section `A_e` grows with the deepest
//! water, so the bound is evaluated per iteration with a margin.
//!
//! Eight pipes are weighted like the isotropic 9-point Laplacian (axis pipes 2/3, diagonal pipes
//! √2/6 of the cross-section), so the flow has no preferred direction.
//!
//! Thermal erosion moves up to `Kt·Δt·R·H/2` from each of up to 8 donors into one cell; with
//! `Kt·Δt <= 2/9` no cell is lifted above its donors, so sub-steps also keep that bound.

use super::params::{CrossSection, FluxForm, Params};
use super::topology::{pipe_length, unit};
use crate::grid::CellSize;

/// Largest `Kt·Δt` of one sub-step (see the module docs).
pub const MAX_THERMAL_STEP: f64 = 2.0 / 9.0;

/// With the depth cross-section, sub-steps are chosen for this multiple of the deepest water,
/// since water can gather during an iteration.
pub const DEPTH_MARGIN: f64 = 1.25;

/// The deepest water sets the depth cross-section's step through a ladder of depths: rounded up
/// to the next f32 whose low `RUNG_SHIFT` mantissa bits are zero (rungs 2^-7 apart, so the step
/// is at most 0.4 % shorter than the exact depth's), between [`SHALLOWEST_RUNG`] and
/// [`DEEPEST_RUNG`] m (or the depth at which `max_flow_depth` caps the cross-section). Both
/// backends take the same rung: the GPU picks its step from a table of rungs without reading the
/// depth back (`Params::depth_rungs`).
pub(super) const RUNG_SHIFT: u32 = 16;

/// The shallowest water the time step counts, m (2^-14: 0.06 mm).
pub const SHALLOWEST_RUNG: f32 = 1.0 / 16384.0;

/// The deepest water the time step counts without a `max_flow_depth`, m (2^20).
pub const DEEPEST_RUNG: f32 = 1_048_576.0;

/// The depth of rung `r`, m.
pub fn rung_depth(r: u32) -> f64 {
    f64::from(f32::from_bits(r << RUNG_SHIFT))
}

/// The rung at or above `depth` (>= 0), unclamped.
fn rung_above(depth: f64) -> u32 {
    let mut f = depth.max(0.0) as f32;
    if f64::from(f) < depth {
        f = f32::from_bits(f.to_bits() + 1);
    }
    let bits = f.to_bits();
    (bits >> RUNG_SHIFT) + u32::from(bits & ((1 << RUNG_SHIFT) - 1) != 0)
}

/// With `dt = 0`, the share of the largest stable step an iteration takes.
pub const AUTO_SAFETY: f64 = 0.9;

/// With `dt = 0`, the longest step, s: a dry map's stable step is unbounded.
pub const MAX_AUTO_DT: f64 = 60.0;

/// Most sub-steps an iteration may take: parameters that need more are refused
/// ([`Params::check_work`]); a run whose water deepens past it is held to it.
pub const MAX_SUBSTEPS: u32 = 10_000;

/// The sub-steps the iterations of a run took: with the depth cross-section they follow the
/// deepest water, so a report gives the most and the mean, not the first.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct SubstepTally {
    /// Iterations counted.
    pub iterations: u64,
    /// Sub-steps over them.
    pub total: u64,
    /// The most one iteration took.
    pub max: u32,
}

impl SubstepTally {
    /// Counts one iteration of `substeps`.
    pub fn record(&mut self, substeps: u32) {
        self.iterations += 1;
        self.total += u64::from(substeps);
        self.max = self.max.max(substeps);
    }

    /// Mean sub-steps per iteration (0 before any).
    pub fn mean(&self) -> f64 {
        if self.iterations == 0 { 0.0 } else { self.total as f64 / self.iterations as f64 }
    }
}

/// Most times the rain buckets of one step may cover the map.
pub const MAX_BUCKET_COVER: f64 = 100.0;

/// Cells the rain buckets of one step may always touch, however small the map.
pub const MIN_BUCKET_WORK: f64 = 1e7;

/// Coefficients of one sub-step.
#[derive(Clone, Debug, PartialEq)]
pub struct Derived {
    /// Sub-steps per iteration.
    pub substeps: u32,
    /// Time step of one sub-step, s (the iteration's is `substeps` times it).
    pub dt: f64,
    /// The morphological factor `F` of this iteration (`morphological_step` over the
    /// iteration's step, or `morphological_factor`).
    pub morphological_factor: f64,
    /// The largest stable water time step, s (for the depth it was computed at).
    pub stable_dt: f64,
    /// Cell area, m².
    pub area: f64,
    /// Flux gain per unit height difference per sub-step, `Δt·g·A_e/l_e`, m²/s; with the depth
    /// cross-section, per metre of flow depth (multiply by it).
    pub pipe_gain: [f32; 8],
    /// Whether `pipe_gain` is per metre of depth.
    pub depth_scaled: bool,
    /// Effective width of each pipe (face width times the 8-pipe weight), m.
    pub pipe_width: [f32; 8],
    /// `Δt·Cf`: the semi-implicit friction factor.
    pub friction: f32,
    /// Largest flow depth a pipe's cross-section counts, m (`Params::max_flow_depth`; infinite
    /// when 0).
    pub depth_cap: f32,
    /// The most the bed moves per sub-step per metre of water depth: `bed_change_limit` on cells
    /// up to [`BED_CHANGE_CELL`], times `√(BED_CHANGE_CELL / cell)` on coarser ones (0: no limit).
    pub bed_step: f32,
    /// Unit vector of each direction, x (east) part.
    pub unit_x: [f32; 8],
    /// Unit vector of each direction, y (south) part.
    pub unit_y: [f32; 8],
    /// Distance between cell centres per direction, m.
    pub distance: [f32; 8],
}

/// The share of a cell's water its outflow may take in one step, `1 − 2^-20`: the limit of
/// eq. 3 and the depth update round their products (in f32, and with fused multiply-adds on
/// some GPUs) to a few units in the last place either way, and a cell drained to below zero
/// would be clamped to dry, water made from nothing every time it drains. Keeping a millionth
/// of the water (in place, where the books count it) leaves rounding no room to overdraw.
pub const DRAINABLE: f64 = 1.0 - 1.0 / 1_048_576.0;

impl Derived {
    /// The volume rate a cell's water allows its outflow, m³/s per metre of depth:
    /// `lx·ly/Δt` times [`DRAINABLE`] (eq. 3's `K = min(1, d·lx·ly / (Σf·Δt))`).
    pub fn volume_per_dt(&self) -> f32 {
        (self.area / self.dt * DRAINABLE) as f32
    }
}

/// Cell size, m, up to which `bed_change_limit` applies as it is; coarser cells scale it by
/// `√(BED_CHANGE_CELL / cell)`. The limit sets how far a step can cut (it binds in channels), and
/// a cut of the same depth tilts a coarse map's channels as much as a fine map's only over a
/// reach as many times longer: measured on the artist bench at 2 m cells (the limit 0.1 carves
/// it) and on a real mountain DEM at 74 x 92 m cells (0.1 regrades every channel to the main
/// valleys' slope; 0.015–0.02 keeps its slope–area law), the square root fits both
/// (`docs/grid-model.md`). An empirical rule, not physics.
pub const BED_CHANGE_CELL: f64 = 2.0;

/// Width of the face a pipe crosses, m.
fn face_width(cell: CellSize, e: usize) -> f64 {
    match e {
        0 | 1 => cell.y,
        2 | 3 => cell.x,
        _ => (cell.x * cell.y).sqrt(),
    }
}

impl Params {
    /// The bed change limit on cells of `cell` (see [`BED_CHANGE_CELL`]).
    pub fn bed_step(&self, cell: CellSize) -> f64 {
        let size = cell.area().sqrt();
        self.bed_change_limit * (BED_CHANGE_CELL / size).min(1.0).sqrt()
    }

    /// Weight of pipe `e`: 1 with 4 pipes; 2/3 (axes) and √2/6 (diagonals) with 8.
    pub fn pipe_weight(&self, e: usize) -> f64 {
        match (self.pipes, e) {
            (4, _) => 1.0,
            (_, 0..=3) => 2.0 / 3.0,
            _ => std::f64::consts::SQRT_2 / 6.0,
        }
    }

    /// Cross-section of pipe `e`, m², for water `depth` m deep (depth mode) or the constant one.
    pub fn pipe_cross_section(&self, cell: CellSize, e: usize, depth: f64) -> f64 {
        let base = match self.cross_section {
            CrossSection::Constant if self.pipe_area > 0.0 => self.pipe_area,
            CrossSection::Constant => cell.area(),
            CrossSection::Depth => depth * face_width(cell, e),
        };
        base * self.pipe_weight(e)
    }

    /// The largest stable time step of the water flow, s, for these parameters and cells, with
    /// water at most `max_depth` m deep (ignored by the constant cross-section).
    pub fn stable_dt_at(&self, cell: CellSize, max_depth: f64) -> f64 {
        let cond = |e: usize| self.pipe_cross_section(cell, e, max_depth) / pipe_length(cell, e);
        let (a, b, c) = (2.0 * cond(0), 2.0 * cond(2), 2.0 * cond(4));
        let mut worst = 2.0 * a + 2.0 * b;
        if self.pipes == 8 {
            worst = worst.max(2.0 * a + 4.0 * c).max(2.0 * b + 4.0 * c);
        }
        let mut omega2 = self.gravity / cell.area() * worst;
        if self.flux_form == FluxForm::OneWay {
            omega2 *= 2.0;
        }
        if omega2 > 0.0 { 2.0 / omega2.sqrt() } else { f64::INFINITY }
    }

    /// [`Params::stable_dt_at`] for the constant cross-section, or for 1 m of water.
    pub fn stable_dt(&self, cell: CellSize) -> f64 {
        self.stable_dt_at(cell, 1.0)
    }

    /// The flow depth pipes count at most, m: `max_flow_depth`, or infinity when it is 0.
    pub fn depth_cap(&self) -> f64 {
        if self.max_flow_depth > 0.0 { self.max_flow_depth } else { f64::INFINITY }
    }

    /// The time step of one iteration with water at most `max_depth` m deep, s: `dt`, or with
    /// `dt = 0` ("auto") [`AUTO_SAFETY`] of the largest step that is stable for the water and
    /// thermal erosion and keeps every rate times the step within its bound (so an iteration is
    /// one sub-step).
    pub fn iteration_dt(&self, cell: CellSize, max_depth: f64) -> f64 {
        if self.dt > 0.0 {
            return self.dt;
        }
        let depth = (max_depth * DEPTH_MARGIN + 1e-3).min(self.depth_cap());
        let mut dt = self.stable_dt_at(cell, depth);
        for (rate, bound) in
            [(self.thermal_rate, MAX_THERMAL_STEP), (self.dissolve, 1.0), (self.deposit, 1.0), (self.evaporation, 0.5)]
        {
            if rate > 0.0 {
                dt = dt.min(bound / rate);
            }
        }
        AUTO_SAFETY * dt.min(MAX_AUTO_DT)
    }

    /// Sub-steps per iteration with water at most `max_depth` m deep: enough that each is within
    /// the stable water step and the thermal bound (always 1 with `dt = 0`).
    pub fn substeps_at(&self, cell: CellSize, max_depth: f64) -> u32 {
        self.substeps_needed(cell, max_depth).clamp(1.0, f64::from(MAX_SUBSTEPS)) as u32
    }

    /// [`Params::substeps_at`] before its bound: a whole number >= 1, or infinity.
    fn substeps_needed(&self, cell: CellSize, max_depth: f64) -> f64 {
        if self.dt <= 0.0 {
            return 1.0;
        }
        let depth = (max_depth * DEPTH_MARGIN + 1e-3).min(self.depth_cap());
        let water = (self.dt / self.stable_dt_at(cell, depth)).ceil();
        let terrain_dt =
            if self.morphological_step > 0.0 { self.morphological_step } else { self.dt * self.morphological_factor };
        let thermal = (self.thermal_rate * terrain_dt / MAX_THERMAL_STEP).ceil();
        let n = water.max(thermal).max(1.0);
        if n.is_nan() { f64::INFINITY } else { n }
    }

    /// Refuses parameters whose steps would run away on a `width` x `height` map of `cell` size
    /// with water at most `max_depth` m deep: more than [`MAX_SUBSTEPS`] sub-steps per
    /// iteration (a `dt` far above the stable step: gravity or cells far from the usual), or
    /// rain buckets touching more than [`MAX_BUCKET_COVER`] times the map's cells per step (or
    /// [`MIN_BUCKET_WORK`] cells on small maps). The error carries the estimate.
    pub fn check_work(
        &self,
        cell: CellSize,
        width: usize,
        height: usize,
        max_depth: f64,
    ) -> Result<(), crate::error::SimError> {
        use crate::error::SimError;
        let needed = self.substeps_needed(cell, max_depth);
        if needed > f64::from(MAX_SUBSTEPS) {
            let depth = (max_depth * DEPTH_MARGIN + 1e-3).min(self.depth_cap());
            let stable = self.stable_dt_at(cell, depth);
            return Err(SimError::TooMuchWork {
                name: "dt",
                value: self.dt,
                why: format!(
                    "an iteration would need {needed:.3e} sub-steps (at most {MAX_SUBSTEPS}): the stable water step \
                     is {stable:.3e} s for gravity {:e} m/s² on {:e} x {:e} m cells, and thermal erosion asks for steps of \
                     at most {MAX_THERMAL_STEP:.3} / thermal_rate; lower dt or use dt = 0 (auto)",
                    self.gravity, cell.x, cell.y
                ),
            });
        }
        if self.rain_mode == super::RainMode::Buckets && self.rain_rate > 0.0 {
            // a disc covers at most the map
            let side = 2.0 * self.bucket_radius.ceil() + 1.0;
            let disc = side.min(width as f64) * side.min(height as f64);
            let work = f64::from(self.bucket_count) * disc;
            let cells = (width * height) as f64;
            let most = (MAX_BUCKET_COVER * cells).max(MIN_BUCKET_WORK);
            if work > most {
                return Err(SimError::TooMuchWork {
                    name: "bucket_count",
                    value: f64::from(self.bucket_count),
                    why: format!(
                        "{} buckets of radius {} cells touch {work:.3e} cells per step, {:.0} times the map's {cells} \
                         (at most {most:.3e}); use fewer or smaller buckets, or rain_mode = \"uniform\"",
                        self.bucket_count,
                        self.bucket_radius,
                        work / cells
                    ),
                });
            }
        }
        Ok(())
    }

    /// Sub-steps for the constant cross-section (or 1 m of water).
    pub fn substeps(&self, cell: CellSize) -> u32 {
        self.substeps_at(cell, 1.0 / DEPTH_MARGIN - 1e-3 / DEPTH_MARGIN)
    }

    /// The rungs of the depth ladder the time step may be chosen at (see [`SHALLOWEST_RUNG`]): above
    /// the last, `max_flow_depth` caps the cross-section and every rung derives the same.
    pub fn depth_rungs(&self) -> std::ops::RangeInclusive<u32> {
        let lowest = rung_above(f64::from(SHALLOWEST_RUNG));
        let mut highest = rung_above(f64::from(DEEPEST_RUNG));
        let cap = self.depth_cap();
        if cap.is_finite() {
            let capped = |r: u32| rung_depth(r) * DEPTH_MARGIN + 1e-3 >= cap;
            let mut r = rung_above(((cap - 1e-3) / DEPTH_MARGIN).max(0.0)).clamp(lowest, highest);
            while r > lowest && capped(r - 1) {
                r -= 1;
            }
            while r < highest && !capped(r) {
                r += 1;
            }
            highest = r;
        }
        lowest..=highest
    }

    /// The rung the deepest water `max_depth` (m) takes its time step at.
    pub fn depth_rung(&self, max_depth: f64) -> u32 {
        let rungs = self.depth_rungs();
        rung_above(max_depth).clamp(*rungs.start(), *rungs.end())
    }

    /// Everything both backends need, computed once per iteration, with water at most
    /// `max_depth` m deep (rounded up to its rung of the depth ladder).
    pub fn derived(&self, cell: CellSize, max_depth: f64) -> Derived {
        let depth = rung_depth(self.depth_rung(max_depth));
        self.derived_with_substeps(cell, self.substeps_at(cell, depth), depth)
    }

    /// [`Params::derived`] with a given number of sub-steps (at least 1), whatever the stability
    /// analysis says.
    pub fn derived_with_substeps(&self, cell: CellSize, substeps: u32, max_depth: f64) -> Derived {
        let substeps = substeps.max(1);
        let max_depth = rung_depth(self.depth_rung(max_depth));
        let iteration_dt = self.iteration_dt(cell, max_depth);
        let dt = iteration_dt / f64::from(substeps);
        let morphological_factor = if self.morphological_step > 0.0 {
            self.morphological_step / iteration_dt
        } else {
            self.morphological_factor
        };
        let depth_scaled = self.cross_section == CrossSection::Depth;
        Derived {
            substeps,
            dt,
            morphological_factor,
            stable_dt: self.stable_dt_at(cell, (max_depth * DEPTH_MARGIN + 1e-3).min(self.depth_cap())),
            area: cell.area(),
            pipe_gain: std::array::from_fn(|e| {
                let a = self.pipe_cross_section(cell, e, 1.0);
                (dt * self.gravity * a / pipe_length(cell, e)) as f32
            }),
            depth_scaled,
            pipe_width: std::array::from_fn(|e| (face_width(cell, e) * self.pipe_weight(e)) as f32),
            friction: (dt * self.friction) as f32,
            depth_cap: self.depth_cap() as f32,
            bed_step: self.bed_step(cell) as f32,
            unit_x: std::array::from_fn(|e| unit(cell, e).0 as f32),
            unit_y: std::array::from_fn(|e| unit(cell, e).1 as f32),
            distance: std::array::from_fn(|e| pipe_length(cell, e) as f32),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_depth_ladder_rounds_up_by_less_than_one_percent_and_stops_where_the_cap_binds() {
        let cell = CellSize::square(4.0);
        for p in [Params::default(), Params::classic()] {
            let rungs = p.depth_rungs();
            for depth in [0.0, 1e-6, 3e-3, 0.1, 0.7, 1.0, 2.5, 40.0, 1e5] {
                let r = p.depth_rung(depth);
                assert!(rungs.contains(&r), "{depth}");
                let at = rung_depth(r);
                // the rung is at or above the depth, and the one below is under it (unclamped)
                if r > *rungs.start() && r < *rungs.end() {
                    assert!(at >= depth && rung_depth(r - 1) < depth, "{depth}: rung at {at}");
                    assert!(at <= depth * (1.0 + 1.0 / 128.0), "{depth}: rung at {at}");
                }
                // a rung's own depth is its rung
                assert_eq!(p.depth_rung(at), r);
                // and derives what any depth of that rung derives
                assert_eq!(p.derived(cell, depth), p.derived(cell, at), "{depth}");
            }
            // above the last rung every depth derives the same
            let last = rung_depth(*rungs.end());
            assert_eq!(p.derived(cell, last), p.derived(cell, 1e9));
            if p.depth_cap().is_finite() {
                let exact = |d: f64| (d * DEPTH_MARGIN + 1e-3).min(p.depth_cap());
                assert_eq!(exact(last), p.depth_cap());
                assert!(exact(rung_depth(rungs.end() - 1)) < p.depth_cap());
            }
        }
    }

    #[test]
    fn square_cell_limits_match_the_known_numbers() {
        let cell = CellSize::square(2.0);
        for (form, limit) in [(FluxForm::OneWay, 0.25), (FluxForm::Signed, 0.5)] {
            let p =
                Params { flux_form: form, pipe_area: 3.0, cross_section: CrossSection::Constant, ..Params::classic() };
            let dt = p.stable_dt(cell);
            let number = p.gravity * 3.0 * dt * dt / 8.0;
            assert!((number - limit).abs() < 1e-12, "{form:?}: {number}");
        }
    }

    #[test]
    fn depth_cross_section_limit_is_the_shallow_water_cfl() {
        // signed, 4 pipes, square cells: dt <= l / sqrt(2 g h)
        let cell = CellSize::square(5.0);
        let p = Params { flux_form: FluxForm::Signed, cross_section: CrossSection::Depth, ..Params::classic() };
        let h = 3.0;
        let dt = p.stable_dt_at(cell, h);
        assert!((dt - 5.0 / (2.0 * p.gravity * h).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn sub_steps_appear_past_the_limit() {
        let cell = CellSize::square(1.0);
        let p = Params { cross_section: CrossSection::Constant, thermal_rate: 0.0, ..Params::classic() };
        let limit = p.stable_dt(cell);
        let under = Params { dt: 0.9 * limit, ..p.clone() };
        let over = Params { dt: 2.5 * limit, ..p };
        assert_eq!(under.substeps(cell), 1);
        assert_eq!(over.substeps(cell), 3);
    }
}
