//! The CPU simulator: owns scratch memory, runs the stages in order.

use std::time::{Duration, Instant};

use super::derived::{Derived, SubstepTally};
use super::fused::Pass;
use super::params::{Params, RainMode, Units};
use super::state::Books;
use super::state::State;
use super::topology::Topology;
use super::{Stage, fused, smoothing, sweep, thermal, transport, water};
use crate::error::SimError;

/// Wall time spent per stage since the simulator was built.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StageTimes(pub [Duration; Stage::ALL.len()]);

/// Memory the stages need between them; rebuilt from `Params` and `State`, never saved.
struct Scratch {
    share: Vec<f32>,
    limit: Vec<f32>,
    next: Vec<f32>,
    sediment_next: Vec<f32>,
    thermal_share: Vec<f32>,
    talus: Vec<f32>,
}

/// Runs the grid model on the CPU (rayon over rows; identical bits for any thread count).
pub struct CpuSim {
    params: Params,
    derived: Derived,
    topo: Topology,
    source_rate: Vec<f32>,
    scratch: Scratch,
    times: StageTimes,
    forced_substeps: Option<u32>,
    substeps: SubstepTally,
}

/// Adds a fused pass's volumes to the books.
fn book_pass(books: &mut Books, pass: &Pass) {
    books.water_outflow += pass.outflow;
    books.eroded += pass.moved.eroded;
    books.deposited += pass.moved.deposited;
    books.water_from_dissolving += pass.moved.water_in;
    books.water_to_deposition += pass.moved.water_out;
    books.evaporated += pass.evaporated;
}

/// The deepest water, m (order-independent, so deterministic in parallel): over the whole map
/// when `st` is one block of a larger one.
fn max_depth(st: &State, topo: &Topology) -> f64 {
    use rayon::prelude::*;
    let deepest = |cells: std::ops::Range<usize>| st.water[cells].par_iter().copied().reduce(|| 0.0f32, f32::max);
    let mine = match topo.block() {
        None => deepest(0..st.len()),
        Some(b) => b.owned_runs().map(deepest).fold(0.0f32, f32::max),
    };
    topo.max(f64::from(mine))
}

/// Water added per cell by the sources, m/s of depth (empty when there are none).
pub(super) fn source_rates(params: &Params, st: &State) -> Result<Vec<f32>, SimError> {
    let shape = (st.width, st.height, st.cell_size);
    Ok(source_rates_on(params, shape, st.nodata.as_deref())?.into_iter().map(|v| v as f32).collect())
}

/// [`source_rates`] on a map of `(width, height, cell size)` with `nodata` (in f64: the steady
/// start's inflow, before any state exists).
pub(super) fn source_rates_on(
    params: &Params,
    (w, h, cell_size): (usize, usize, crate::grid::CellSize),
    nodata: Option<&[bool]>,
) -> Result<Vec<f64>, SimError> {
    if params.sources.is_empty() {
        return Ok(Vec::new());
    }
    let mut rate = vec![0.0f64; w * h];
    let outside = |i: usize| nodata.is_some_and(|m| m[i]);
    for (index, s) in params.sources.iter().enumerate() {
        let (sx, sy) = match s.units {
            Units::Cells => (1.0, 1.0),
            Units::Metres => (1.0 / cell_size.x, 1.0 / cell_size.y),
        };
        let (x, y, radius) = (s.x * sx, s.y * sy, s.radius * sx.max(sy));
        if x < -0.5 || y < -0.5 || x > w as f64 - 0.5 || y > h as f64 - 0.5 {
            return Err(SimError::SourceOutside { index, x: s.x, y: s.y });
        }
        let mut cells = Vec::new();
        let reach = radius.ceil() as isize + 1;
        let (cx, cy) = (x.round() as isize, y.round() as isize);
        for r in (cy - reach).max(0)..=(cy + reach).min(h as isize - 1) {
            for c in (cx - reach).max(0)..=(cx + reach).min(w as isize - 1) {
                let i = r as usize * w + c as usize;
                if (c as f64 - x).hypot(r as f64 - y) <= radius && !outside(i) {
                    cells.push(i);
                }
            }
        }
        if cells.is_empty() {
            let i = cy.clamp(0, h as isize - 1) as usize * w + cx.clamp(0, w as isize - 1) as usize;
            if outside(i) {
                return Err(SimError::SourceInHole { index, x: s.x, y: s.y });
            }
            cells.push(i);
        }
        let per_cell = s.rate / cell_size.area() / cells.len() as f64;
        for i in cells {
            rate[i] += per_cell;
        }
    }
    Ok(rate)
}

impl CpuSim {
    /// A simulator for `state` with `params` (validated here).
    pub fn new(params: Params, state: &State) -> Result<Self, SimError> {
        params.validate()?;
        let source_rate = source_rates(&params, state)?;
        let topo = Topology::new(state.width, state.height, params.border)
            .with_holes(state.nodata.as_deref(), params.nodata_border);
        Self::with(params, state, topo, source_rate)
    }

    /// A simulator for `state`, one block of a decomposed map (see [`super::blocks`]), with
    /// the sources' rates on its rows.
    pub(super) fn for_block(
        params: Params,
        state: &State,
        source_rate: Vec<f32>,
        rows: std::sync::Arc<super::blocks::Rows>,
    ) -> Result<Self, SimError> {
        params.validate()?;
        let topo = Topology::new(state.width, state.height, params.border)
            .with_holes(state.nodata.as_deref(), params.nodata_border)
            .with_block(rows);
        Self::with(params, state, topo, source_rate)
    }

    fn with(params: Params, state: &State, topo: Topology, source_rate: Vec<f32>) -> Result<Self, SimError> {
        if state.flux.len() != params.pipes as usize {
            return Err(crate::checkpoint::CheckpointError::Invalid(format!(
                "the state has {} pipes per cell, the parameters ask for {}",
                state.flux.len(),
                params.pipes
            ))
            .into());
        }
        let n = state.len();
        let depth = max_depth(state, &topo);
        params.check_work(state.cell_size, state.width, state.height, depth)?;
        let derived = params.derived(state.cell_size, depth);
        Ok(Self {
            params,
            derived,
            topo,
            source_rate,
            scratch: Scratch {
                share: vec![0.0; n],
                limit: vec![0.0; n],
                next: vec![0.0; n],
                sediment_next: vec![0.0; n],
                thermal_share: vec![0.0; n],
                talus: vec![0.0; n],
            },
            times: StageTimes::default(),
            forced_substeps: None,
            substeps: SubstepTally::default(),
        })
    }

    /// Forces the number of sub-steps per iteration, overriding the stability analysis. For
    /// experiments and the tests that show what the analysis prevents: past the stable limit the
    /// water turns into a checkerboard.
    #[doc(hidden)]
    pub fn force_substeps(&mut self, substeps: u32) {
        self.forced_substeps = Some(substeps);
        self.derived = self.params.derived_with_substeps(self.cell(), substeps, 1.0);
    }

    fn cell(&self) -> crate::grid::CellSize {
        crate::grid::CellSize { x: f64::from(self.derived.distance[0]), y: f64::from(self.derived.distance[2]) }
    }

    /// The water surface and bed beyond the map's open edges, m above the state's reference
    /// height (see [`Topology::with_beyond`]): for a map that is a window of a larger one.
    pub fn set_beyond(&mut self, surface: Vec<f32>, bed: Vec<f32>) {
        self.topo = self.topo.clone().with_beyond(surface, bed);
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Water the sources add per cell, m/s of depth (empty when there are none).
    pub(super) fn source_rate(&self) -> &[f32] {
        &self.source_rate
    }

    /// The coefficients derived from them (sub-steps, stable time step, ...).
    pub fn derived(&self) -> &Derived {
        &self.derived
    }

    /// The sub-steps the iterations so far took (most, mean).
    pub fn substep_tally(&self) -> &SubstepTally {
        &self.substeps
    }

    /// Wall time per stage so far.
    pub fn stage_times(&self) -> &StageTimes {
        &self.times
    }

    /// One iteration: `derived().substeps` sub-steps of every stage.
    pub fn step(&mut self, st: &mut State) {
        self.iterate(st, sweep::covers(&self.params), true);
    }

    /// `n` iterations. The same state as `n` calls of [`CpuSim::step`], bit for bit, but faster:
    /// the velocity maps are an output no stage reads back in the default configuration
    /// (conservative transport), so they are written on the last iteration only.
    pub fn run(&mut self, st: &mut State, n: u64) {
        let covered = sweep::covers(&self.params);
        for k in 0..n {
            self.iterate(st, covered, k + 1 == n);
        }
    }

    /// `velocity`: whether this iteration must leave the velocity maps in `st` (the sweep skips
    /// writing them otherwise; the stage-by-stage passes always write them).
    fn iterate(&mut self, st: &mut State, use_sweep: bool, velocity: bool) {
        if self.derived.depth_scaled {
            // the stable step depends on the deepest water: re-derive from the state
            let depth = max_depth(st, &self.topo);
            self.derived = match self.forced_substeps {
                Some(n) => self.params.derived_with_substeps(st.cell_size, n, depth),
                None => self.params.derived(st.cell_size, depth),
            };
        }
        let substeps = self.derived.substeps;
        self.substeps.record(substeps);
        for k in 0..substeps {
            let key = st.iteration.wrapping_mul(1 << 20).wrapping_add(u64::from(k));
            self.substep(st, key, use_sweep, velocity && k + 1 == substeps);
            if let Some(block) = self.topo.block() {
                block.swap_halos(st);
            }
        }
        st.iteration += 1;
        let dt = self.derived.dt * f64::from(substeps);
        st.time += dt;
        st.terrain_time += dt * self.derived.morphological_factor;
    }

    fn timed<T>(&mut self, stage: Stage, f: impl FnOnce(&mut Self) -> T) -> T {
        let t0 = Instant::now();
        let out = f(self);
        self.times.0[stage as usize] += t0.elapsed();
        out
    }

    /// `water_flux` to `thermal_apply` (with `evaporation`), one pass per stage: for the
    /// configurations the sweep does not cover.
    fn stage_by_stage(&mut self, st: &mut State) {
        self.timed(Stage::WaterFlux, |s| {
            water::water_flux(st, &s.params, &s.derived, &s.topo, &mut s.scratch.limit, &mut s.scratch.share)
        });
        self.timed(Stage::ThermalFlux, |s| {
            if s.params.thermal_rate > 0.0 {
                st.books.thermal_moved += thermal::thermal_flux(
                    st,
                    &s.params,
                    &s.derived,
                    &s.topo,
                    &mut s.scratch.thermal_share,
                    &mut s.scratch.talus,
                );
            }
        });
        // water_update, erosion_deposition and evaporation run as one pass (see `fused`); its
        // time is booked under erosion_deposition
        self.timed(Stage::ErosionDeposition, |s| {
            let pass = fused::update_and_erode(st, &s.params, &s.derived, &s.topo, &mut s.scratch.next);
            std::mem::swap(&mut st.terrain, &mut s.scratch.next);
            book_pass(&mut st.books, &pass);
        });
        self.timed(Stage::SedimentTransport, |s| {
            let (lost, drift) = transport::sediment_transport(
                st,
                &s.params,
                &s.derived,
                &s.topo,
                &s.scratch.share,
                &mut s.scratch.sediment_next,
            );
            std::mem::swap(&mut st.sediment, &mut s.scratch.sediment_next);
            st.books.sediment_outflow += lost;
            st.books.transport_drift += drift;
        });
        self.timed(Stage::ThermalApply, |s| {
            if s.params.thermal_rate > 0.0 {
                // the terrain before erosion is still in `next` (swapped out by erosion)
                let sc = &s.scratch;
                thermal::thermal_apply(st, &s.params, &s.topo, &s.derived, &sc.next, &sc.thermal_share, &sc.talus);
            }
        });
    }

    /// One iteration run stage by stage even where the sweep covers the parameters (for the
    /// test that the two schedules agree bit for bit).
    #[doc(hidden)]
    pub fn step_stage_by_stage(&mut self, st: &mut State) {
        self.iterate(st, false, true);
    }

    /// The stage list of Jákó & Tóth's section 2, in order.
    fn substep(&mut self, st: &mut State, key: u64, use_sweep: bool, velocity: bool) {
        self.timed(Stage::WaterIncrement, |s| {
            let with_rows = !(use_sweep && s.params.rain_mode != RainMode::Buckets);
            let (rain, sources) = water::water_increment(st, &s.params, &s.derived, &s.topo, &s.source_rate, key, with_rows);
            st.books.rain += rain;
            st.books.sources += sources;
        });
        if use_sweep {
            self.timed(Stage::Sweep, |s| {
                let sc = &mut s.scratch;
                let scratch = sweep::SweepScratch {
                    share: &mut sc.share,
                    thermal_share: &mut sc.thermal_share,
                    talus: &mut sc.talus,
                    next: &mut sc.next,
                    sediment_next: &mut sc.sediment_next,
                };
                let rows = (s.params.rain_mode != RainMode::Buckets).then_some(&s.source_rate[..]);
                let t = sweep::sweep(st, &s.params, &s.derived, &s.topo, rows, velocity, scratch);
                st.books.rain += t.rain;
                st.books.sources += t.sources;
                std::mem::swap(&mut st.terrain, &mut sc.next);
                std::mem::swap(&mut st.sediment, &mut sc.sediment_next);
                if s.params.thermal_rate > 0.0 {
                    st.books.thermal_moved += t.thermal_moved;
                }
                book_pass(&mut st.books, &t.pass);
                st.books.sediment_outflow += t.sediment_outflow;
                st.books.transport_drift += 0.0;
            });
        } else {
            self.stage_by_stage(st);
        }
        self.timed(Stage::Smoothing, |s| {
            st.books.smoothing_moved +=
                smoothing::smoothing(st, &s.params, &s.topo, s.derived.area, &mut s.scratch.limit);
        });
    }
}
