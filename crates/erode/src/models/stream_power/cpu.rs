//! The stream-power simulator: one step is the stages of [`Stage::ALL`], in order. Diffusion
//! comes before routing so the depressions it makes are filled in the same step: every step
//! ends on a surface that drains.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::diffusion::{DiffusionScratch, diffuse};
use super::erosion::{AreaPower, Incision, Lowering, incise};
use super::multiple::MultipleIncision;
use crate::flow::multiple::MultipleFlow;
use super::params::{Flow, Params};
use crate::flow::routing::{ACTIVE, BASE, Cells, OUTSIDE, Routing};
use super::state::State;
use crate::flow::neighbours::distances;
use crate::error::SimError;

/// The stages of a step, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Rock rises (base level stays).
    Uplift,
    /// Hillslope diffusion, implicit along rows then columns.
    Diffusion,
    /// D8 receivers and the pits they leave.
    Routing,
    /// Closed depressions filled to their spill height, their cells routed out.
    Depressions,
    /// The stack: every receiver before its donors (with MFD, also each cell's receivers and
    /// shares, and the cells with every donor before its receivers).
    Order,
    /// Drainage area down the stack.
    Accumulation,
    /// River incision, implicit along the stack.
    Erosion,
}

/// Pits are raised to their lowest neighbour first when more than one cell in this many is
/// one (a noisy start); mid-run, the few pits diffusion makes are cheaper to leave to the basin
/// graph than another routing pass.
const MANY_PITS: usize = 200;

/// Stages in a step.
pub const STAGES: usize = 7;

impl Stage {
    /// Every stage in order.
    pub const ALL: [Stage; STAGES] = [
        Stage::Uplift,
        Stage::Diffusion,
        Stage::Routing,
        Stage::Depressions,
        Stage::Order,
        Stage::Accumulation,
        Stage::Erosion,
    ];

    /// The stage's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Uplift => "uplift",
            Stage::Routing => "routing",
            Stage::Order => "order",
            Stage::Depressions => "depressions",
            Stage::Accumulation => "accumulation",
            Stage::Erosion => "erosion",
            Stage::Diffusion => "diffusion",
        }
    }
}

/// Key of Rho8's random diagonal factors; each step's key is this with its step count.
const RHO8_KEY: u64 = 0x7268_6f38_0000_0000;

/// The CPU simulator: parameters, the grid's geometry, scratch and stage timers.
#[derive(Debug)]
pub struct CpuSim {
    params: Params,
    cells: Cells,
    routing: Routing,
    /// The multiple-flow routing and its incision's powers, when `flow` is MFD.
    multiple: Option<(MultipleFlow, MultipleIncision)>,
    /// Rho8 routing (`flow = "rho8"`).
    rho8: bool,
    powers: AreaPower,
    lowering: Lowering,
    diffusion: DiffusionScratch,
    times: [Duration; STAGES],
}

impl CpuSim {
    /// A simulator of `params` for `state`'s grid. Refuses bad parameters and a domain with no
    /// base level (every edge closed, no sea and no nodata hole).
    pub fn new(params: Params, state: &State) -> Result<Self, SimError> {
        params.validate()?;
        let edges = params.edges()?;
        let (w, h) = (state.width, state.height);
        let mut kind = vec![ACTIVE; w * h];
        for (i, k) in kind.iter_mut().enumerate() {
            let (r, c) = (i / w, i % w);
            let open = (r == 0 && edges.north)
                || (c + 1 == w && edges.east)
                || (r + 1 == h && edges.south)
                || (c == 0 && edges.west);
            if !state.inside(i) {
                *k = OUTSIDE;
            } else if open {
                *k = BASE;
            }
        }
        let cell = state.cell_size;
        let mut cells = Cells::new(w, h, kind, distances(cell), params.sea_level);
        // cells beside a nodata hole are base level: water reaching a hole leaves the map there
        for i in 0..w * h {
            if cells.kind[i] == ACTIVE
                && (0..8).any(|k| cells.neighbour(i, k).is_some_and(|j| cells.kind[j] == OUTSIDE))
            {
                cells.kind[i] = BASE;
            }
        }
        let has_base = (0..w * h).any(|i| cells.is_base(i, state.terrain[i]));
        if !has_base {
            return Err(SimError::NoBaseLevel);
        }
        let powers = AreaPower::new(params.m);
        let multiple = (params.flow_kind()? == Flow::Multiple).then(Default::default);
        let rho8 = params.flow_kind()? == Flow::Rho8;
        Ok(Self {
            params,
            cells,
            routing: Routing::default(),
            multiple,
            rho8,
            powers,
            lowering: Lowering::default(),
            diffusion: DiffusionScratch::default(),
            times: [Duration::ZERO; STAGES],
        })
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The routing of the last step (receivers, stack, drainage area in cells).
    pub fn routing(&self) -> &Routing {
        &self.routing
    }

    /// Cells that drain through cell `i` in the last step, itself included (fractions of cells
    /// with MFD; 0 outside the domain).
    pub fn drainage_cells(&self, i: usize) -> f64 {
        match &self.multiple {
            Some((m, _)) => m.area(i),
            None => f64::from(self.routing.count(i)),
        }
    }

    /// Wall time spent in each stage of [`Stage::ALL`] so far.
    pub fn stage_times(&self) -> [Duration; STAGES] {
        self.times
    }

    /// Runs `n` steps.
    pub fn run(&mut self, st: &mut State, n: u64) {
        for _ in 0..n {
            self.step(st);
        }
    }

    /// One step of `dt_years`: the stages of [`Stage::ALL`] in order.
    pub fn step(&mut self, st: &mut State) {
        let p = &self.params;
        let dt = p.dt_years;
        let area = st.cell_size.area();
        let mut clock = Instant::now();
        let mut lap = |times: &mut [Duration; STAGES], stage: Stage| {
            let now = Instant::now();
            times[stage as usize] += now - clock;
            clock = now;
        };

        // uplift: every cell but the fixed base level (sea floor rises too)
        let cells = &self.cells;
        let w = st.width;
        let u_dt = p.uplift * dt;
        let uplift_map = st.uplift.as_deref();
        let raised: f64 = st
            .terrain
            .par_chunks_mut(w)
            .enumerate()
            .map(|(r, row)| {
                let mut sum = 0.0;
                for (c, z) in row.iter_mut().enumerate() {
                    let i = r * w + c;
                    if cells.kind[i] == ACTIVE {
                        let du = u_dt * uplift_map.map_or(1.0, |m| f64::from(m[i]));
                        *z += du;
                        sum += du;
                    }
                }
                sum
            })
            .collect::<Vec<f64>>()
            .iter()
            .sum();
        lap(&mut self.times, Stage::Uplift);

        let diffused = if p.diffusivity > 0.0 {
            let cell = (st.cell_size.x, st.cell_size.y);
            diffuse(cells, p.diffusivity * dt, cell, &mut st.terrain, &mut self.diffusion)
        } else {
            0.0
        };
        lap(&mut self.times, Stage::Diffusion);

        // Rho8: this step's random diagonal factors, the same on any thread count
        self.routing.rho8 = self.rho8.then_some(RHO8_KEY ^ st.steps);
        let mut pits = self.routing.receivers(cells, &st.terrain);
        let mut filled = 0.0;
        if pits > st.terrain.len() / MANY_PITS {
            // a noisy start: most pits are one cell, which raising to their lowest neighbour
            // resolves without a basin of their own
            filled += self.routing.raise_pits(cells, &mut st.terrain);
            self.routing.receivers(cells, &st.terrain);
        }
        if pits > 0 {
            pits = self.routing.route_flats(cells, &st.terrain, true);
            self.routing.pits = pits;
        }
        lap(&mut self.times, Stage::Routing);
        if pits > 0 {
            filled += self.routing.fill_depressions(cells, &mut st.terrain);
        }
        lap(&mut self.times, Stage::Depressions);
        self.routing.build_stack(cells, true);
        if let Some((multiple, _)) = &mut self.multiple {
            multiple.route(cells, &self.routing, &st.terrain, p.flow_exponent);
        }
        lap(&mut self.times, Stage::Order);
        match &mut self.multiple {
            Some((multiple, incision)) => {
                multiple.accumulate(cells, &self.routing);
                incision.prepare(multiple, p.m);
            }
            None => self.routing.accumulate(),
        }
        lap(&mut self.times, Stage::Accumulation);

        let inc = Incision {
            k_dt: p.erodibility * dt * area.powf(p.m),
            n: p.n,
            inv_length_n: cells.distance.map(|d| 1.0 / d.powf(p.n)),
            scale: st.erodibility.as_deref(),
        };
        let (eroded, lake_surface) = match &mut self.multiple {
            Some((multiple, incision)) => {
                incision.incise(cells, &self.routing, multiple, inc, &st.terrain, &mut self.lowering)
            }
            // the trees of the stack erode in parallel, each cell once
            None => incise(&self.routing, &self.powers, inc, &st.terrain, &mut self.lowering),
        };
        filled += lake_surface;
        let height = &self.lowering.height;
        let this = &*self;
        st.terrain
            .par_iter_mut()
            .zip(st.drainage_area.par_iter_mut())
            .zip(st.erosion_rate.par_iter_mut())
            .enumerate()
            .with_min_len(4096)
            .for_each(|(i, ((z, a), e))| {
                if cells.kind[i] == OUTSIDE {
                    (*a, *e) = (0.0, 0.0);
                    return;
                }
                let new = f64::from_bits(height[i].load(Ordering::Relaxed));
                *a = (this.drainage_cells(i) * area) as f32;
                *e = ((*z - new).max(0.0) / dt) as f32;
                *z = new;
            });
        lap(&mut self.times, Stage::Erosion);

        // books
        let b = &mut st.books;
        b.uplifted += raised * area;
        b.eroded += eroded * area;
        b.diffused_out += diffused * area;
        b.filled += filled * area;
        st.steps += 1;
        st.years += dt;
    }
}
