//! What evolves in the grid model, its mass books, and an exact binary checkpoint of both.

use std::ops::Range;

use super::params::{HardnessMode, Params, RainMode};
use super::topology::SEGMENT;
use crate::par;
use crate::checkpoint::{CheckpointError, Header, Reader, Sink, Stream};
use crate::error::SimError;
use crate::grid::{CellSize, Grid};
use crate::models::inputs::{ValueCheck, check_shape};
use crate::models::nodata::nodata_mask;

/// Volumes in m³ that entered, left or changed phase since the start, summed in f64.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Books {
    /// Water added by rain.
    pub rain: f64,
    /// Water added by sources.
    pub sources: f64,
    /// Water evaporated.
    pub evaporated: f64,
    /// Water that left across open borders.
    pub water_outflow: f64,
    /// Water volume added by dissolved soil (Jákó & Tóth eq. 9c).
    pub water_from_dissolving: f64,
    /// Water volume removed by deposited soil (Jákó & Tóth eq. 10c).
    pub water_to_deposition: f64,
    /// Soil dissolved from the terrain into suspension.
    pub eroded: f64,
    /// Suspended sediment deposited onto the terrain.
    pub deposited: f64,
    /// Suspended sediment that left across open borders.
    pub sediment_outflow: f64,
    /// Sediment created (+) or lost (−) by semi-Lagrangian transport (0 with conservative).
    pub transport_drift: f64,
    /// Soil moved by thermal erosion (moves within the terrain; for information).
    pub thermal_moved: f64,
    /// Soil moved by the smoothing pass (within the terrain; for information).
    pub smoothing_moved: f64,
}

impl Books {
    /// Its terms, in the order of the fields (how checkpoints write them).
    pub fn to_array(&self) -> [f64; 12] {
        [
            self.rain,
            self.sources,
            self.evaporated,
            self.water_outflow,
            self.water_from_dissolving,
            self.water_to_deposition,
            self.eroded,
            self.deposited,
            self.sediment_outflow,
            self.transport_drift,
            self.thermal_moved,
            self.smoothing_moved,
        ]
    }

    /// [`Books::to_array`] read back.
    pub fn from_array(b: [f64; 12]) -> Self {
        let [
            rain,
            sources,
            evaporated,
            water_outflow,
            water_from_dissolving,
            water_to_deposition,
            eroded,
            deposited,
            sediment_outflow,
            transport_drift,
            thermal_moved,
            smoothing_moved,
        ] = b;
        Self {
            rain,
            sources,
            evaporated,
            water_outflow,
            water_from_dissolving,
            water_to_deposition,
            eroded,
            deposited,
            sediment_outflow,
            transport_drift,
            thermal_moved,
            smoothing_moved,
        }
    }
}

/// The whole evolving state of a grid-model run. Saving and reloading it (see
/// [`State::to_bytes`]) continues a run bit for bit.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// The inputs this run began from: [`StartMaps::input_hash`] of the heights, nodata mask and
    /// maps it started on (0: not recorded, in checkpoints older than it). Checkpoints carry it,
    /// so a resume from other inputs can be refused.
    pub input: u64,
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Cell size, m.
    pub cell_size: CellSize,
    /// Terrain height `b` above `reference_height`, m. Kept relative so that f32 resolves the
    /// small per-step changes of erosion as finely on a DEM at 400 m as at sea level (at 400 m the
    /// f32 step is 3e-5 m, and rounding it made the soil books drift 2e-4 in 6000 iterations);
    /// [`State::heights`] gives the absolute heights.
    pub terrain: Vec<f32>,
    /// Water depth `d`, m.
    pub water: Vec<f32>,
    /// Suspended sediment `s`, m of soil.
    pub sediment: Vec<f32>,
    /// Hardness `H` in `[0, 1]` of the bedrock: resistance (1 erodes least; see
    /// `Params::rock_erodibility`).
    pub hardness: Vec<f32>,
    /// Depth of loose material over the bedrock, m (`Params::sediment_layer`; 0 everywhere
    /// without it): part of `terrain`, not on top of it. Deposits and thermal debris join it,
    /// the flow takes it first.
    pub sediment_depth: Vec<f32>,
    /// Outgoing water flux per pipe direction (see `topology::DIRS`), m³/s: one-way pipes hold
    /// values >= 0; the signed form holds the net flux, antisymmetric between neighbours.
    pub flux: Vec<Vec<f32>>,
    /// Water velocity east, m/s, of the last iteration that wrote it: every [`CpuSim::step`],
    /// the last iteration of a [`CpuSim::run`].
    ///
    /// [`CpuSim::step`]: super::CpuSim::step
    /// [`CpuSim::run`]: super::CpuSim::run
    pub velocity_x: Vec<f32>,
    /// Water velocity south, m/s (written as `velocity_x` is).
    pub velocity_y: Vec<f32>,
    /// Total soil dissolved per cell, m.
    pub eroded: Vec<f32>,
    /// Total sediment deposited per cell, m.
    pub deposited: Vec<f32>,
    /// Time integral of the discharge magnitude per cell, m³.
    pub discharge_integral: Vec<f32>,
    /// Rain map (0..1 per cell) for rain mode map.
    pub rain_map: Option<Vec<f32>>,
    /// Cells outside the domain (`true` = nodata), if any: no stage moves water, sediment or
    /// soil into or out of them (see `Params::nodata_border`), and they keep their terrain.
    pub nodata: Option<Vec<bool>>,
    /// Iterations done.
    pub iteration: u64,
    /// Simulated time of the water, s.
    pub time: f64,
    /// Terrain time, s: the simulated time times the morphological factor of each iteration
    /// (how long the storm would take to change the terrain this much).
    pub terrain_time: f64,
    /// The books since the start.
    pub books: Books,
    /// Lowest height of the input, m: the origin of `terrain` and the reference of the soil volume.
    pub reference_height: f64,
    /// Erosion never digs below this height above `reference_height`, m (≤ 0).
    pub floor: f32,
    /// Soil volume at the start (terrain above `reference_height` plus sediment), m³.
    pub start_soil: f64,
    /// Water volume at the start, m³.
    pub start_water: f64,
}

/// Maps a run can start from besides the terrain.
#[derive(Clone, Copy, Debug, Default)]
pub struct StartMaps<'a> {
    /// Hardness (0..1) for hardness mode map.
    pub hardness: Option<&'a Grid<f32>>,
    /// Rain (0..1) for rain mode map.
    pub rain: Option<&'a Grid<f32>>,
    /// Initial water depth, m.
    pub water: Option<&'a Grid<f32>>,
    /// Depth of loose material over the bedrock at the start, m (with `sediment_layer`; in place
    /// of `soil_depth` everywhere): a former run's `sediment_depth` map, to go on from its
    /// terrain with its layer.
    pub sediment_depth: Option<&'a Grid<f32>>,
    /// Cells outside the domain (`true` = nodata; see [`crate::Heightmap::nodata_mask`]).
    pub nodata: Option<&'a [bool]>,
}

impl<'a> StartMaps<'a> {
    /// The hash of a run's inputs, `terrain` and these maps ([`crate::checkpoint::inputs_hash`]):
    /// what its checkpoints record, so a resume with other inputs is refused.
    pub fn input_hash(&self, terrain: &Grid<f32>) -> u64 {
        crate::checkpoint::inputs_hash(terrain, self.nodata, &self.named())
    }

    /// The maps by the names the inputs' hash gives them, in its order.
    pub(super) fn named(&self) -> [(&'static str, Option<&'a Grid<f32>>); 4] {
        [("hardness", self.hardness), ("rain", self.rain), ("water", self.water), ("sediment_depth", self.sediment_depth)]
    }

    /// What a start looks for in `terrain` and these maps, in order: the tests of their cells
    /// (see [`ValueCheck`]), and after them the refusal of a map that `params` needs and is
    /// missing, that it would not use, or of another size than `terrain`, if there is one (the
    /// cells of the maps before it are looked at first).
    pub(super) fn checks(&self, terrain: &'a Grid<f32>, params: &Params) -> (Vec<ValueCheck<'a>>, Option<SimError>) {
        let mut checks = vec![ValueCheck::finite(terrain)];
        let refused = self.checks_into(&mut checks, terrain, params).err();
        (checks, refused)
    }

    fn checks_into(&self, checks: &mut Vec<ValueCheck<'a>>, terrain: &'a Grid<f32>, params: &Params) -> Result<(), SimError> {
        let mut check = |what: &'static str, m: &'a Grid<f32>, hi: f32, expected: &'static str| {
            check_shape(what, m, terrain)?;
            checks.push(ValueCheck::range(what, m, 0.0, hi, expected));
            Ok::<(), SimError>(())
        };
        if params.hardness_mode == HardnessMode::Map {
            let m = self.hardness.ok_or(SimError::MissingMap("hardness_mode = \"map\" needs a hardness map"))?;
            check("hardness", m, 1.0, "0 to 1")?;
        }
        match (params.rain_mode, self.rain) {
            (RainMode::Map, None) => return Err(SimError::MissingMap("rain_mode = \"map\" needs a rain map")),
            // the steps would leave it out where the steady start took it in
            (_, Some(_)) if params.rain_mode != RainMode::Map => {
                return Err(SimError::MapNotUsed { map: "rain", needs: "rain_mode = \"map\"" });
            }
            (_, Some(m)) => check("rain", m, f32::MAX, "a finite rate >= 0")?,
            (_, None) => {}
        }
        match (self.sediment_depth, params.sediment_layer) {
            (Some(_), false) => {
                return Err(SimError::MapNotUsed { map: "sediment depth", needs: "sediment_layer = true" });
            }
            (Some(m), true) => check("sediment depth", m, 1e6, "a depth of 0 to 1e6 m")?,
            (None, _) => {}
        }
        if let Some(m) = self.water {
            check("water", m, f32::MAX, "a finite depth >= 0")?;
        }
        Ok(())
    }
}

/// The fields the stages change, listed once for [`State::evolving`],
/// [`State::evolving_mut`] and [`State::release_evolving`]: `$r` (`&` or `&mut`) of each, the
/// pipes' fluxes last.
macro_rules! evolving {
    ($st:expr, $iter:ident, $($r:tt)+) => {{
        let st = $st;
        let mut v = vec![
            $($r)+ st.terrain,
            $($r)+ st.water,
            $($r)+ st.sediment,
            $($r)+ st.hardness,
            $($r)+ st.sediment_depth,
            $($r)+ st.velocity_x,
            $($r)+ st.velocity_y,
            $($r)+ st.eroded,
            $($r)+ st.deposited,
            $($r)+ st.discharge_integral,
        ];
        v.extend(st.flux.$iter());
        v
    }};
}

impl State {
    /// A run at rest on `terrain` (heights in metres).
    pub fn new(terrain: &Grid<f32>, params: &Params, maps: StartMaps<'_>) -> Result<Self, SimError> {
        // the input's hash, a serial pass over the cells, beside the rest
        let (input, state) = rayon::join(|| maps.input_hash(terrain), || Self::at_rest(terrain, params, maps));
        state.map(|s| Self { input, ..s })
    }

    /// [`State::new`] but for the input's hash.
    fn at_rest(terrain: &Grid<f32>, params: &Params, maps: StartMaps<'_>) -> Result<Self, SimError> {
        params.validate()?;
        let (checks, refused) = maps.checks(terrain, params);
        if let Some((c, i, v)) = checks.iter().find_map(|c| c.first_bad(0..terrain.len()).map(|(i, v)| (c, i, v))) {
            return Err(c.error(i, v, terrain.width()));
        }
        if let Some(e) = refused {
            return Err(e);
        }
        let (lo, hi) = terrain.as_slice().iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(a, c), &v| (a.min(v), c.max(v)));
        let n = terrain.len();
        let hardness = match params.hardness_mode {
            HardnessMode::Noise => Some(noise_hardness(terrain, params, lo, hi)),
            _ => None,
        };
        let nodata = nodata_mask(maps.nodata, terrain)?;
        let mut state = Self::rest_on(terrain, params, maps, lo, nodata, hardness);
        let area = state.cell_size.area();
        state.start_soil = state.terrain.iter().map(|&v| f64::from(v)).sum::<f64>() * area;
        state.start_water = state.water.iter().map(|&v: &f32| f64::from(v)).sum::<f64>() * area;
        // the fields that start at zero, written out (the kernel's first touch of a page is
        // much of a large run's start) while the steady start floods the terrain
        let (water, zeros) = rayon::join(
            || if maps.water.is_none() { state.start_water(terrain, params) } else { Ok(None) },
            || (0..6 + params.pipes as usize).map(|_| touched_zeros(n)).collect::<Vec<_>>(),
        );
        if let Some(water) = water? {
            state.water = water;
            state.start_water = state.water_volume();
        }
        state.zeros(zeros);
        Ok(state)
    }

    /// A state at rest on `terrain` (heights, m: the whole map, or a block's rows of it) whose
    /// lowest height is `lo`, before its water's start and the fields that start at zero (see
    /// [`State::zeros`]), with `maps` checked ([`StartMaps::checks`]), cells outside the domain
    /// `nodata` (`None`: none of the map's) and the hardness of `hardness_mode = "noise"`, which
    /// needs the whole map. The volumes at the start are left at 0.
    pub(super) fn rest_on(
        terrain: &Grid<f32>,
        params: &Params,
        maps: StartMaps<'_>,
        lo: f32,
        nodata: Option<Vec<bool>>,
        noise_hardness: Option<Vec<f32>>,
    ) -> Self {
        let (w, h, n) = (terrain.width(), terrain.height(), terrain.len());
        let copy = |m: Option<&Grid<f32>>| m.map(|m| m.as_slice().to_vec());
        let hardness = match (params.hardness_mode, copy(maps.hardness), noise_hardness) {
            (HardnessMode::Map, Some(m), _) | (HardnessMode::Noise, _, Some(m)) => m,
            _ => vec![params.hardness as f32; n],
        };
        let rain_map = copy(maps.rain).filter(|_| params.rain_mode == RainMode::Map);
        let sediment_depth = match (copy(maps.sediment_depth), params.sediment_layer) {
            (Some(m), true) => m,
            // hard rock weathers to thin soil: hardness H starts with (1 − H)·soil_depth
            (None, true) => hardness.iter().map(|&h| params.soil_depth as f32 * (1.0 - h)).collect(),
            (_, false) => vec![0.0; n],
        };
        let mut water = copy(maps.water).unwrap_or_else(|| vec![0.0; n]);
        if let Some(mask) = &nodata {
            water.iter_mut().zip(mask).filter(|(_, o)| **o).for_each(|(d, _)| *d = 0.0);
        }
        // heights above the lowest cell (lo is one of the f32 samples, so v − lo rounds at most
        // once, at the ulp of the relief rather than of the altitude)
        let b: Vec<f32> = terrain.as_slice().iter().map(|&v| v - lo).collect();
        Self {
            input: 0,
            width: w,
            height: h,
            cell_size: terrain.cell_size(),
            terrain: b,
            water,
            sediment: Vec::new(),
            hardness,
            sediment_depth,
            flux: Vec::new(),
            velocity_x: Vec::new(),
            velocity_y: Vec::new(),
            eroded: Vec::new(),
            deposited: Vec::new(),
            discharge_integral: Vec::new(),
            rain_map,
            nodata,
            iteration: 0,
            time: 0.0,
            terrain_time: 0.0,
            books: Books::default(),
            reference_height: f64::from(lo),
            floor: (-params.floor_depth) as f32,
            start_soil: 0.0,
            start_water: 0.0,
        }
    }

    /// Takes `zeros` (6 + the pipes' fields of the state's cells) as the fields that start at
    /// zero: suspended sediment, velocities, the running totals, the pipes' fluxes.
    pub(super) fn zeros(&mut self, mut zeros: Vec<Vec<f32>>) {
        self.flux = zeros.split_off(6.min(zeros.len()));
        [
            self.sediment,
            self.velocity_x,
            self.velocity_y,
            self.eroded,
            self.deposited,
            self.discharge_integral,
        ] = <[Vec<f32>; 6]>::try_from(zeros).unwrap_or_default();
    }

    /// The water of `params.start_water` on a new state (see [`super::start`]), `None` for a
    /// dry start.
    fn start_water(&self, terrain: &Grid<f32>, params: &Params) -> Result<Option<Vec<f32>>, SimError> {
        let shape = (self.width, self.height, self.cell_size);
        let inflow = super::start::Inflow::new(params, shape, self.nodata.as_deref(), self.rain_map.as_deref())?;
        let mut water = super::start::start_water(terrain, self.nodata.as_deref(), params, &inflow);
        if let (Some(water), Some(mask)) = (&mut water, &self.nodata) {
            water.iter_mut().zip(mask).filter(|(_, o)| **o).for_each(|(d, _)| *d = 0.0);
        }
        Ok(water)
    }

    /// The state on rows `rows` of this one (in that order; a row may wrap around): every
    /// per-cell field cut, the rest (iteration, books, reference height, ...) kept.
    pub(crate) fn rows(&self, rows: &[usize]) -> State {
        let w = self.width;
        let cut = |v: &[f32]| rows.iter().flat_map(|&r| v[r * w..(r + 1) * w].iter().copied()).collect();
        let mask = |m: &[bool]| rows.iter().flat_map(|&r| m[r * w..(r + 1) * w].iter().copied()).collect();
        self.cut((w, rows.len()), &cut, &mask)
    }

    /// The state on columns `cols` of this one (in that order; a column may wrap around), as
    /// [`State::rows`] cuts rows.
    pub(crate) fn columns(&self, cols: &[usize]) -> State {
        let (w, h) = (self.width, self.height);
        let cut = |v: &[f32]| (0..h).flat_map(|r| cols.iter().map(move |&c| v[r * w + c])).collect();
        let mask = |m: &[bool]| (0..h).flat_map(|r| cols.iter().map(move |&c| m[r * w + c])).collect();
        self.cut((cols.len(), h), &cut, &mask)
    }

    /// The state of `width` × `height` cells whose every per-cell field is `cut` (the nodata
    /// mask `mask`) from this one's, the rest kept.
    fn cut(
        &self,
        (width, height): (usize, usize),
        cut: &dyn Fn(&[f32]) -> Vec<f32>,
        mask: &dyn Fn(&[bool]) -> Vec<bool>,
    ) -> State {
        State {
            width,
            height,
            terrain: cut(&self.terrain),
            water: cut(&self.water),
            sediment: cut(&self.sediment),
            hardness: cut(&self.hardness),
            sediment_depth: cut(&self.sediment_depth),
            flux: self.flux.iter().map(|f| cut(f)).collect(),
            velocity_x: cut(&self.velocity_x),
            velocity_y: cut(&self.velocity_y),
            eroded: cut(&self.eroded),
            deposited: cut(&self.deposited),
            discharge_integral: cut(&self.discharge_integral),
            rain_map: self.rain_map.as_deref().map(cut),
            nodata: self.nodata.as_deref().map(mask),
            books: self.books.clone(),
            ..*self
        }
    }

    /// The per-cell fields the stages change, in [`State::evolving_mut`]'s order.
    pub(super) fn evolving(&self) -> Vec<&[f32]> {
        evolving!(self, iter, &).into_iter().map(Vec::as_slice).collect()
    }

    /// The per-cell fields the stages change, in a fixed order (what a decomposed run's blocks
    /// send each other over their halos and gather).
    pub(super) fn evolving_mut(&mut self) -> Vec<&mut [f32]> {
        evolving!(self, iter_mut, &mut).into_iter().map(Vec::as_mut_slice).collect()
    }

    /// Frees the cells of every field that evolves (a run over ranks keeps them on the ranks
    /// between gathers); [`State::hold_evolving`] makes room for them again.
    pub(crate) fn release_evolving(&mut self) {
        for v in evolving!(self, iter_mut, &mut) {
            *v = Vec::new();
        }
    }

    /// Room (zeros) for every field that evolves whose cells were released.
    pub(crate) fn hold_evolving(&mut self) {
        let n = self.len();
        for v in evolving!(self, iter_mut, &mut).into_iter().filter(|v| v.len() != n) {
            *v = vec![0.0; n];
        }
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.width * self.height
    }

    /// Always false: a state has cells.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A field as a grid (copies).
    pub fn grid(&self, field: &[f32]) -> Grid<f32> {
        Grid::from_vec(self.width, self.height, self.cell_size, field.to_vec())
            .unwrap_or_else(|_| unreachable_grid(self.cell_size))
    }

    /// Soil volume now: terrain above the reference height plus suspended sediment, m³.
    pub fn soil_volume(&self) -> f64 {
        let [t, s, _] = self.volume_rows(0..self.height, [0.0; 3]);
        (t + s) * self.cell_size.area()
    }

    /// Water volume now, m³.
    pub fn water_volume(&self) -> f64 {
        let [_, _, w] = self.volume_rows(0..self.height, [0.0; 3]);
        w * self.cell_size.area()
    }

    /// The sums of terrain, suspended sediment and water over `rows`, continuing from `from`
    /// (m, per unit of cell area): each row summed by [`SEGMENT`]s (each in column order, then
    /// the segments in order), the rows in order. The sums over a map cut into bands of rows,
    /// carried from band to band, or cut into tiles and gathered by segments
    /// ([`fold_rows`]), come out the bits of the sums over the whole.
    pub(super) fn volume_rows(&self, rows: Range<usize>, from: [f64; 3]) -> [f64; 3] {
        let w = self.width;
        rows.fold(from, |acc, r| {
            let row: Vec<[f64; 3]> = (0..w).step_by(SEGMENT).map(|a| self.volume_run(r, a..(a + SEGMENT).min(w))).collect();
            par::add(acc, &par::fold(&row))
        })
    }

    /// The sums of terrain, suspended sediment and water over columns `cols` of row `r`, in
    /// column order (m, per unit of cell area).
    pub(super) fn volume_run(&self, r: usize, cols: Range<usize>) -> [f64; 3] {
        let cells = r * self.width + cols.start..r * self.width + cols.end;
        let fold = |v: &Vec<f32>| v.get(cells.clone()).unwrap_or_default().iter().fold(0.0, |a, &x| a + f64::from(x));
        [fold(&self.terrain), fold(&self.sediment), fold(&self.water)]
    }

    /// Whether every value of every field that evolves is finite on `cells`.
    pub fn finite_on(&self, cells: Range<usize>) -> bool {
        use rayon::prelude::*;
        let finite = |f: &[f32]| f.par_chunks(1 << 16).all(|c| c.iter().all(|v| v.is_finite()));
        self.evolving().iter().all(|f| finite(f.get(cells.clone()).unwrap_or_default()))
    }

    /// Absolute terrain heights, m (the `height` output).
    pub fn heights(&self) -> Vec<f32> {
        self.terrain.iter().map(|&v| (f64::from(v) + self.reference_height) as f32).collect()
    }

    /// Time-averaged discharge per cell since the start, m³/s (the `flow` output).
    pub fn flow(&self) -> Vec<f32> {
        let time = self.time.max(f64::MIN_POSITIVE);
        self.discharge_integral.iter().map(|&q| (f64::from(q) / time) as f32).collect()
    }

    /// Water speed per cell, m/s (the `velocity` output).
    pub fn speed(&self) -> Vec<f32> {
        self.velocity_x.iter().zip(&self.velocity_y).map(|(u, v)| u.hypot(*v)).collect()
    }

    /// The map a run writes under the output name `name` (`None` for no such map): `height` (m),
    /// `water` (m), `sediment` (suspended, m), `sediment_depth` (loose material on the bed, m),
    /// `hardness`, `erosion` (m), `deposition` (m), `flow` (m³/s), `velocity` (m/s).
    pub fn output_map(&self, name: &str) -> Option<Vec<f32>> {
        Some(match name {
            "height" => self.heights(),
            "water" => self.water.clone(),
            "sediment" => self.sediment.clone(),
            "sediment_depth" => self.sediment_depth.clone(),
            "hardness" => self.hardness.clone(),
            "erosion" => self.eroded.clone(),
            "deposition" => self.deposited.clone(),
            "flow" => self.flow(),
            "velocity" => self.speed(),
            _ => return None,
        })
    }

    /// The balance of the books now.
    pub fn balance(&self) -> Balance {
        self.balance_of(self.water_volume(), self.soil_volume())
    }

    /// The balance of the books with the water and soil volumes now, m³ (summed over the whole
    /// map: this state may be a block's window).
    pub(super) fn balance_of(&self, water_now: f64, soil_now: f64) -> Balance {
        let b = &self.books;
        let water_expected = self.start_water + b.rain + b.sources - b.evaporated - b.water_outflow
            + b.water_from_dissolving
            - b.water_to_deposition;
        let soil_expected = self.start_soil - b.sediment_outflow + b.transport_drift;
        let water_imbalance = water_now - water_expected;
        let soil_imbalance = soil_now - soil_expected;
        let water_scale = self.start_water.max(b.rain + b.sources).max(f64::MIN_POSITIVE);
        let soil_scale = self.start_soil.max(f64::MIN_POSITIVE);
        let moved = (b.eroded + b.deposited).max(f64::MIN_POSITIVE);
        Balance {
            water_volume: water_now,
            soil_volume: soil_now,
            water_imbalance,
            soil_imbalance,
            water_relative_error: water_imbalance.abs() / water_scale,
            soil_relative_error: soil_imbalance.abs() / soil_scale,
            relative_error: (water_imbalance.abs() / water_scale).max(soil_imbalance.abs() / soil_scale),
            soil_imbalance_per_moved: soil_imbalance.abs() / moved,
            transport_drift_relative: b.transport_drift.abs() / soil_scale,
        }
    }
}

/// `n` zeros, written on every thread: the pages are the process's before the run touches them.
fn touched_zeros(n: usize) -> Vec<f32> {
    use rayon::prelude::*;
    let mut v = Vec::with_capacity(n);
    v.par_extend(rayon::iter::repeat_n(0.0f32, n));
    v
}

/// `Grid::from_vec` cannot fail for a state's own fields; this keeps the library free of panics.
fn unreachable_grid(cell: CellSize) -> Grid<f32> {
    Grid::from_fn(1, 1, cell, |_, _| 0.0).unwrap_or_else(|_| unreachable_grid(CellSize::default()))
}

/// How well the books balance. Volumes in m³.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Balance {
    /// Water now.
    pub water_volume: f64,
    /// Soil now (terrain above the input's minimum plus sediment).
    pub soil_volume: f64,
    /// Water now minus what the books expect.
    pub water_imbalance: f64,
    /// Soil now minus what the books expect.
    pub soil_imbalance: f64,
    /// |water imbalance| / max(start water, water added).
    pub water_relative_error: f64,
    /// |soil imbalance| / start soil.
    pub soil_relative_error: f64,
    /// The larger of the two relative errors.
    pub relative_error: f64,
    /// |soil imbalance| / (eroded + deposited): the figure that shows a small leak.
    pub soil_imbalance_per_moved: f64,
    /// |transport drift| / start soil (semi-Lagrangian transport's own error).
    pub transport_drift_relative: f64,
}

/// Sums of map rows' segments (`per_row` each, in map order) reduced as one process reduces a
/// row's: each row's segments in order, then the rows in order.
pub(super) fn fold_rows<const K: usize>(sums: &[par::Sums<K>], per_row: usize) -> par::Sums<K> {
    par::fold(&sums.chunks(per_row.max(1)).map(par::fold).collect::<Vec<_>>())
}

/// McLeod, Chen & Hu's hardness: base plus noise plus more hardness where the terrain lies low.
/// Noise hardness (`hardness_mode = "noise"`) over the whole of `terrain`.
pub(super) fn noise_hardness_of(terrain: &Grid<f32>, params: &Params) -> Vec<f32> {
    let (lo, hi) = terrain.as_slice().iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(a, c), &v| (a.min(v), c.max(v)));
    noise_hardness(terrain, params, lo, hi)
}

pub(super) fn noise_hardness(terrain: &Grid<f32>, params: &Params, lo: f32, hi: f32) -> Vec<f32> {
    use crate::terrain::{TerrainKind, TerrainSpec, generate};
    let spec = TerrainSpec {
        kind: TerrainKind::Fbm,
        width: terrain.width(),
        height: terrain.height(),
        seed: params.seed ^ 0x4A4D_0000,
        relief: 1.0,
        feature_size: (terrain.width().max(terrain.height()) as f64 / 8.0).max(1.0),
        octaves: 4,
        ..Default::default()
    };
    let noise = generate(&spec).map(|m| m.heights.into_vec()).unwrap_or_else(|_| vec![0.5; terrain.len()]);
    let span = (hi - lo).max(f32::MIN_POSITIVE);
    terrain
        .as_slice()
        .iter()
        .zip(&noise)
        .map(|(&b, &n)| {
            let low = 1.0 - (b - lo) / span;
            let r = params.hardness
                + params.hardness_noise * (f64::from(n) - 0.5) * 2.0
                + params.hardness_depth_gain * f64::from(low);
            r.clamp(0.0, 1.0) as f32
        })
        .collect()
}

/// One per-cell field of a checkpoint frame ([`State::frame_cells`]).
pub(crate) enum Cells<'a> {
    /// f32 values, 4 little-endian bytes a cell.
    F32(&'a [f32]),
    /// A mask, a byte a cell.
    Mask(&'a [bool]),
}

impl Cells<'_> {
    /// Bytes a cell takes in the frame.
    pub(crate) fn bytes_per_cell(&self) -> usize {
        match self {
            Cells::F32(_) => 4,
            Cells::Mask(_) => 1,
        }
    }

    /// Cells.
    pub(crate) fn len(&self) -> usize {
        match self {
            Cells::F32(v) => v.len(),
            Cells::Mask(v) => v.len(),
        }
    }

    /// Appends the bytes of `cells` of it to `out`, as a frame holds them.
    pub(crate) fn append_to(&self, cells: Range<usize>, out: &mut Vec<u8>) {
        match self {
            Cells::F32(v) => {
                let start = out.len();
                out.resize(start + cells.len() * 4, 0);
                for (d, x) in out[start..].chunks_exact_mut(4).zip(&v[cells]) {
                    d.copy_from_slice(&x.to_le_bytes());
                }
            }
            Cells::Mask(v) => out.extend(v[cells].iter().map(|&b| u8::from(b))),
        }
    }

    /// Writes `cells` of it into `out`.
    pub(crate) fn put(&self, cells: Range<usize>, out: &mut Stream<'_>) {
        match self {
            Cells::F32(v) => out.f32s(&v[cells]),
            Cells::Mask(v) => out.mask(&v[cells]),
        }
    }
}

const MAGIC: &[u8; 8] = b"ERODEGRD";
// 2: terrain and floor relative to the reference height
// 3: hardness is resistance (1 erodes least), not the erodibility of Jákó & Tóth's equations
// 4: the nodata mask (a version 3 checkpoint reads as one without)
// 5: the input's hash in the header
// 6: the sediment layer's depth, after the nodata mask (a version 3-5 checkpoint reads as one
//    without a layer)
pub(super) const VERSION: u32 = 6;

use crate::checkpoint::fnv1a64;

impl State {
    /// The whole state as bytes: versioned, with a checksum. `params_fingerprint` (see
    /// [`params_fingerprint`]) lets a resume refuse different parameters.
    pub fn to_bytes(&self, params_fingerprint: u64) -> Vec<u8> {
        self.frame(params_fingerprint, None)
    }

    /// The bytes of [`State::rows`]`(rows)` ([`State::to_bytes`]), written from this state's
    /// rows without the state of those rows in between (a run over ranks hands out its blocks so).
    pub(crate) fn rows_to_bytes(&self, params_fingerprint: u64, rows: &[usize]) -> Vec<u8> {
        self.frame(params_fingerprint, Some(rows))
    }

    /// Writes [`State::to_bytes`] into `sink` as it goes, without the frame in memory.
    pub fn write_to(&self, params_fingerprint: u64, sink: &mut dyn Sink) {
        self.write_frame(params_fingerprint, (self.width, self.height), sink, &mut |_, field, w| field.put(0..field.len(), w));
    }

    /// The frame of the whole state, or of `rows` of it.
    fn frame(&self, params_fingerprint: u64, rows: Option<&[usize]>) -> Vec<u8> {
        let width = self.width;
        let height = rows.map_or(self.height, <[usize]>::len);
        let mut out = Vec::new();
        self.write_frame(params_fingerprint, (self.width, height), &mut out, &mut |_, field, w| match rows {
            None => field.put(0..field.len(), w),
            Some(rows) => rows.iter().for_each(|&r| field.put(r * width..(r + 1) * width, w)),
        });
        out
    }

    /// Writes into `sink` the frame of a state of this one's values `height` rows high: its
    /// head from this state (its width, cell size, clocks, books and which fields it has), then
    /// field `k` of [`State::frame_cells`] as `cells(k, field, out)` writes it (this state's
    /// rows, or those every rank gathers), then the checksum. The one layout of a grid
    /// checkpoint, whoever holds the cells.
    pub(crate) fn write_frame(
        &self,
        params_fingerprint: u64,
        (width, height): (usize, usize),
        sink: &mut dyn Sink,
        cells: &mut dyn FnMut(usize, &Cells<'_>, &mut Stream<'_>),
    ) {
        let header = Header { params: params_fingerprint, input: self.input };
        let fields = self.frame_cells();
        let per_cell: u64 = fields.iter().map(|f| f.bytes_per_cell() as u64).sum();
        let books = self.books.to_array();
        // magic, version, header (28), then the head's words, the cells and the checksum
        let head = 28 + 8 * (2 + 2 + 1 + 3 + 1 + 2 + books.len() + 3);
        let len = head as u64 + per_cell * (width * height) as u64 + 8;
        let mut w = Stream::new(sink, len, MAGIC, VERSION, header);
        for v in [width as u64, height as u64] {
            w.u64(v);
        }
        for v in [self.cell_size.x, self.cell_size.y] {
            w.f64(v);
        }
        w.u64(self.iteration);
        for v in [self.time, self.terrain_time, self.reference_height] {
            w.f64(v);
        }
        w.u64(u64::from(self.floor.to_bits()));
        for v in [self.start_soil, self.start_water] {
            w.f64(v);
        }
        w.f64s(&books);
        w.u64(self.flux.len() as u64);
        w.u64(u64::from(self.rain_map.is_some()));
        w.u64(u64::from(self.nodata.is_some()));
        for (k, field) in fields.iter().enumerate() {
            cells(k, field, &mut w);
        }
        w.finish();
    }

    /// The per-cell fields of a checkpoint frame, in its order: the fields (terrain, water,
    /// sediment, hardness, velocities, erosion, deposition, discharge, the pipes' fluxes, the
    /// rain map when there is one), the nodata mask when there is one, the sediment layer.
    pub(crate) fn frame_cells(&self) -> Vec<Cells<'_>> {
        let mut v: Vec<Cells<'_>> = self.fields().into_iter().map(Cells::F32).collect();
        if let Some(mask) = &self.nodata {
            v.push(Cells::Mask(mask));
        }
        v.push(Cells::F32(&self.sediment_depth));
        v
    }

    fn fields(&self) -> Vec<&[f32]> {
        let mut v: Vec<&[f32]> = vec![
            &self.terrain,
            &self.water,
            &self.sediment,
            &self.hardness,
            &self.velocity_x,
            &self.velocity_y,
            &self.eroded,
            &self.deposited,
            &self.discharge_integral,
        ];
        v.extend(self.flux.iter().map(Vec::as_slice));
        if let Some(r) = &self.rain_map {
            v.push(r);
        }
        v
    }

    /// Reads [`State::to_bytes`] back, checking magic, version, checksum, size and parameters.
    pub fn from_bytes(bytes: &[u8], params_fingerprint: u64, max_cells: u64) -> Result<Self, SimError> {
        let mut r = Reader::open(bytes, MAGIC, "grid")?;
        let version = r.version;
        let head = Self::read_head(&mut r, params_fingerprint, max_cells)?;
        let height = head.height;
        let mut st = head.with_rows(height);
        for mut field in st.frame_cells_mut(version) {
            let n = field.len() * field.bytes_per_cell();
            field.fill(0, r.take(n)?);
        }
        r.finish()?;
        Ok(st)
    }

    /// Bytes of the head of a frame of `version`, from its magic to its last flag: what
    /// [`State::read_head`] reads.
    pub(crate) fn head_len(version: u32) -> usize {
        let input = if version >= 5 { 8 } else { 0 };
        let nodata = if version >= 4 { 8 } else { 0 };
        // magic, version, fingerprint; size, cell size, iteration, clocks, floor, start
        // volumes, books, pipes, rain
        12 + 8 + input + 16 + 16 + 8 + 24 + 8 + 16 + 8 * 12 + 8 + 8 + nodata
    }

    /// The version of a frame that begins with `first` (its magic and version: 12 bytes), checked
    /// to be one this erode reads.
    pub(crate) fn frame_version(first: &[u8]) -> Result<u32, SimError> {
        if first.len() < 12 || &first[..8] != MAGIC {
            return Err(CheckpointError::NotACheckpoint { model: "grid" }.into());
        }
        let version = u32::from_le_bytes([first[8], first[9], first[10], first[11]]);
        if READABLE.contains(&version) {
            return Ok(version);
        }
        let why = if version == 2 {
            " (hardness as resistance; version 2 held it as erodibility): start the run again"
        } else {
            ""
        };
        Err(CheckpointError::Version { found: version, wanted: VERSION, why }.into())
    }

    /// A frame's head (see [`State::head_len`]) read from `r`, refusing other parameters and more
    /// than `max_cells` cells: the state with no cells yet (its fields empty, as
    /// [`State::with_rows`] fills them), `height` the whole map's.
    pub(crate) fn read_head(r: &mut Reader<'_>, params_fingerprint: u64, max_cells: u64) -> Result<Self, SimError> {
        Self::frame_version(&[&MAGIC[..], &r.version.to_le_bytes()].concat())?;
        let header = r.header(params_fingerprint, 5)?;
        let width = r.u64()?;
        let height = r.u64()?;
        if width == 0 || height == 0 || width.checked_mul(height).is_none_or(|n| n > max_cells) {
            return Err(CheckpointError::Size(format!("size {width} x {height}")).into());
        }
        let (width, height) = (width as usize, height as usize);
        let cell_size = CellSize { x: r.f64()?, y: r.f64()? };
        let iteration = r.u64()?;
        let time = r.f64()?;
        let terrain_time = r.f64()?;
        let reference_height = r.f64()?;
        let floor = f32::from_bits(r.u64()? as u32);
        let start_soil = r.f64()?;
        let start_water = r.f64()?;
        let books = Books::from_array(r.f64_array()?);
        let pipes = r.u64()?;
        if pipes != 4 && pipes != 8 {
            return Err(CheckpointError::Invalid(format!("{pipes} pipes per cell")).into());
        }
        let has_rain = r.u64()? == 1;
        let has_nodata = r.version >= 4 && r.u64()? == 1;
        Ok(Self {
            input: header.input,
            width,
            height,
            cell_size,
            terrain: Vec::new(),
            water: Vec::new(),
            sediment: Vec::new(),
            hardness: Vec::new(),
            sediment_depth: Vec::new(),
            flux: vec![Vec::new(); pipes as usize],
            velocity_x: Vec::new(),
            velocity_y: Vec::new(),
            eroded: Vec::new(),
            deposited: Vec::new(),
            discharge_integral: Vec::new(),
            rain_map: has_rain.then(Vec::new),
            nodata: has_nodata.then(Vec::new),
            iteration,
            time,
            terrain_time,
            books,
            reference_height,
            floor,
            start_soil,
            start_water,
        })
    }

    /// This state `rows` rows high, every per-cell field zeros (no cell nodata): what a frame's
    /// cells are read into.
    pub(crate) fn with_rows(self, rows: usize) -> Self {
        let n = self.width * rows;
        let z = || vec![0.0f32; n];
        Self {
            height: rows,
            terrain: z(),
            water: z(),
            sediment: z(),
            hardness: z(),
            sediment_depth: z(),
            flux: vec![z(); self.flux.len()],
            velocity_x: z(),
            velocity_y: z(),
            eroded: z(),
            deposited: z(),
            discharge_integral: z(),
            rain_map: self.rain_map.as_ref().map(|_| z()),
            nodata: self.nodata.as_ref().map(|_| vec![false; n]),
            books: self.books.clone(),
            ..self
        }
    }

    /// The per-cell fields a frame of `version` holds, in its order ([`State::frame_cells`]),
    /// to be filled: a frame before version 6 has no sediment layer (it stays zeros).
    pub(crate) fn frame_cells_mut(&mut self, version: u32) -> Vec<CellsMut<'_>> {
        self.frame_vecs_mut(version)
            .into_iter()
            .map(|v| match v {
                FrameVec::F32(v) => CellsMut::F32(v),
                FrameVec::Mask(m) => CellsMut::Mask(m),
            })
            .collect()
    }

    /// [`State::frame_cells_mut`]'s fields themselves (to be sized or let go one at a time).
    pub(crate) fn frame_vecs_mut(&mut self, version: u32) -> Vec<FrameVec<'_>> {
        let mut v: Vec<FrameVec<'_>> = vec![
            FrameVec::F32(&mut self.terrain),
            FrameVec::F32(&mut self.water),
            FrameVec::F32(&mut self.sediment),
            FrameVec::F32(&mut self.hardness),
            FrameVec::F32(&mut self.velocity_x),
            FrameVec::F32(&mut self.velocity_y),
            FrameVec::F32(&mut self.eroded),
            FrameVec::F32(&mut self.deposited),
            FrameVec::F32(&mut self.discharge_integral),
        ];
        v.extend(self.flux.iter_mut().map(FrameVec::F32));
        if let Some(r) = &mut self.rain_map {
            v.push(FrameVec::F32(r));
        }
        if let Some(m) = &mut self.nodata {
            v.push(FrameVec::Mask(m));
        }
        if version >= 6 {
            v.push(FrameVec::F32(&mut self.sediment_depth));
        }
        v
    }
}

/// One per-cell field of a state's frame ([`State::frame_vecs_mut`]).
pub(crate) enum FrameVec<'a> {
    /// f32 values.
    F32(&'a mut Vec<f32>),
    /// A mask.
    Mask(&'a mut Vec<bool>),
}

impl FrameVec<'_> {
    /// The field as cells to read.
    pub(crate) fn cells(&self) -> Cells<'_> {
        match self {
            FrameVec::F32(v) => Cells::F32(v),
            FrameVec::Mask(m) => Cells::Mask(m),
        }
    }

    /// The field as cells to fill.
    pub(crate) fn cells_mut(&mut self) -> CellsMut<'_> {
        match self {
            FrameVec::F32(v) => CellsMut::F32(v),
            FrameVec::Mask(m) => CellsMut::Mask(m),
        }
    }

    /// `n` cells (zeros, or none outside the domain).
    pub(crate) fn resize(&mut self, n: usize) {
        match self {
            FrameVec::F32(v) => v.resize(n, 0.0),
            FrameVec::Mask(m) => m.resize(n, false),
        }
    }

    /// Lets the cells go.
    pub(crate) fn release(&mut self) {
        match self {
            FrameVec::F32(v) => **v = Vec::new(),
            FrameVec::Mask(m) => **m = Vec::new(),
        }
    }
}

/// The frame versions this erode reads.
const READABLE: [u32; 4] = [3, 4, 5, VERSION];

/// One per-cell field of a state, to be filled from a frame's bytes
/// ([`State::frame_cells_mut`]).
pub(crate) enum CellsMut<'a> {
    /// f32 values, 4 little-endian bytes a cell.
    F32(&'a mut [f32]),
    /// A mask, a byte a cell.
    Mask(&'a mut [bool]),
}

impl CellsMut<'_> {
    /// Bytes a cell takes in the frame.
    pub(crate) fn bytes_per_cell(&self) -> usize {
        match self {
            CellsMut::F32(_) => 4,
            CellsMut::Mask(_) => 1,
        }
    }

    /// Cells.
    pub(crate) fn len(&self) -> usize {
        match self {
            CellsMut::F32(v) => v.len(),
            CellsMut::Mask(v) => v.len(),
        }
    }

    /// Sets the cells from `at` on from `bytes`, as a frame holds them.
    pub(crate) fn fill(&mut self, at: usize, bytes: &[u8]) {
        match self {
            CellsMut::F32(v) => {
                for (d, b) in v[at..].iter_mut().zip(bytes.as_chunks::<4>().0) {
                    *d = f32::from_le_bytes(*b);
                }
            }
            CellsMut::Mask(v) => {
                for (d, &b) in v[at..].iter_mut().zip(bytes) {
                    *d = b != 0;
                }
            }
        }
    }
}

/// A fingerprint of parameters: equal parameters give equal fingerprints.
pub fn params_fingerprint(params: &Params) -> u64 {
    fnv1a64(format!("{params:?}").as_bytes())
}
