//! One contract over the three models, so a front end (the command line, the viewer, the Python
//! package) drives any of them the same way: advance by `n`, read the books, take the maps,
//! save a checkpoint.
//!
//! The models know nothing of this module: each adapter here ([`GridRun`], [`DropletRun`],
//! [`SphRun`]) owns one model's parameters, state and simulator (CPU, or GPU where the model has
//! one) and speaks the contract for it. What only one model has (the grid model's sub-steps,
//! the SPH model's mesh) stays on the adapter, outside the trait.

use std::time::Duration;

use crate::SimError;
use crate::models::{droplet, grid, sph, stream_power};

/// What one unit of [`Model::advance`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// One time step of the whole domain (grid, SPH).
    Iteration,
    /// One droplet's life (droplet).
    Droplet,
    /// One time step of `dt_years` (stream power).
    Step,
}

impl Unit {
    /// `"iteration"`, `"droplet"` or `"step"`.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Iteration => "iteration",
            Unit::Droplet => "droplet",
            Unit::Step => "step",
        }
    }

    /// The plural of [`Unit::name`]: the flag that counts it (`--iterations`).
    pub fn plural(self) -> &'static str {
        match self {
            Unit::Iteration => "iterations",
            Unit::Droplet => "droplets",
            Unit::Step => "steps",
        }
    }
}

/// Where a model runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backend {
    /// Rayon threads.
    Cpu,
    /// wgpu compute shaders on the named adapter.
    Gpu {
        /// The adapter's name.
        adapter: String,
    },
}

/// One entry of a model's books, as a front end shows it.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Term {
    /// Its name (`snake_case`, its key in `report.json`'s `books.terms`): one word for one
    /// quantity in every model, the unit beside it, never in it.
    pub name: &'static str,
    /// Its value.
    pub value: f64,
    /// `"m³"`, or `"1"` for a ratio.
    pub unit: &'static str,
}

/// How well a model's books balance, in one shape for every model: the relative error the
/// tests hold to a tolerance, and the named terms it comes from.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Balance {
    /// The model's overall relative error (what goes in, out and stays, against what changed).
    pub relative_error: f64,
    /// The terms, in the model's order.
    pub terms: Vec<Term>,
}

impl Balance {
    /// The value of the term named `name`.
    pub fn term(&self, name: &str) -> Option<f64> {
        self.terms.iter().find(|t| t.name == name).map(|t| t.value)
    }
}

/// Simulated time: where the run is and how long one unit lasts, seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clock {
    /// Seconds simulated so far.
    pub now: f64,
    /// Seconds the next unit will simulate (the last step's length, sub-steps included).
    pub step: f64,
}

/// What every model does for a front end.
///
/// A model is made by its adapter from parameters and a start state, then advanced, read and
/// saved through this trait alone:
///
/// ```
/// use erode::contract::{GridRun, Model};
/// use erode::models::grid::{Params, StartMaps, State};
/// use erode::{CellSize, Grid};
///
/// // 32 x 32 cells of 1 m: a plane falling 0.1 m a row and 0.2 m a column
/// let terrain = Grid::from_fn(32, 32, CellSize::square(1.0), |r, c| (r + 2 * c) as f32 * 0.1)?;
/// let params = Params::default();
/// let mut run = GridRun::new(params.clone(), State::new(&terrain, &params, StartMaps::default())?)?;
/// run.advance(10, &mut |_| {})?;
/// run.sync()?;
/// assert_eq!(run.done(), 10);
/// assert!(run.balance().relative_error < 1e-6);
/// let height = run.map("height").ok_or("the grid model gives a height map")?;
/// assert_eq!(height.len(), 32 * 32);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Model: Send + Sync {
    /// `"grid"`, `"droplet"` or `"sph"`: the model's name on the command line and in files.
    fn name(&self) -> &'static str;
    /// What [`Model::advance`] counts.
    fn unit(&self) -> Unit;
    /// Units done since the model's start (those before a checkpoint included).
    fn done(&self) -> u64;
    /// Advances stopped at multiples of this many units (counted from the start) give the same
    /// result as one advance: where checkpoints may fall.
    fn granule(&self) -> u64 {
        1
    }
    /// Simulated time, for the models that have one.
    fn clock(&self) -> Option<Clock> {
        None
    }
    /// Runs `n` more units, calling `progress` with [`Model::done`] now and then. Advances add
    /// up: two of 5 give the bytes of one of 10 (at multiples of [`Model::granule`]).
    ///
    /// ```
    /// # use erode::contract::{GridRun, Model};
    /// # use erode::models::grid::{Params, StartMaps, State};
    /// # use erode::{CellSize, Grid};
    /// # let terrain = Grid::from_fn(32, 32, CellSize::square(1.0), |r, c| (r + 2 * c) as f32 * 0.1)?;
    /// # let mut run = GridRun::new(Params::default(), State::new(&terrain, &Params::default(), StartMaps::default())?)?;
    /// # let mut other = GridRun::new(Params::default(), State::new(&terrain, &Params::default(), StartMaps::default())?)?;
    /// let mut seen = Vec::new();
    /// run.advance(5, &mut |done| seen.push(done))?;
    /// run.advance(5, &mut |_| {})?;
    /// other.advance(10, &mut |_| {})?;
    /// assert_eq!(seen.last(), Some(&5));
    /// assert_eq!(run.map("height"), other.map("height"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn advance(&mut self, n: u64, progress: &mut dyn FnMut(u64)) -> Result<(), SimError>;
    /// Brings the state up to date with the simulator (a read-back from the GPU; nothing on the
    /// CPU). The reading methods below see the state as of the last `sync`.
    fn sync(&mut self) -> Result<(), SimError>;
    /// [`Model::sync`] of what the output maps `maps` (names of [`Model::map`]) and the books need
    /// at least: a GPU model may read back less (the rest of the state stays behind until the
    /// next `sync`, which a checkpoint needs).
    fn sync_maps(&mut self, maps: &[&str]) -> Result<(), SimError> {
        let _ = maps;
        self.sync()
    }
    /// Waits until the simulator has finished the work [`Model::advance`] handed it, reading
    /// nothing back (the GPU runs behind the CPU; for timing).
    fn wait(&self) -> Result<(), SimError> {
        Ok(())
    }
    /// The books: what went in, out and stayed, and how well they agree.
    ///
    /// ```
    /// # use erode::contract::{GridRun, Model};
    /// # use erode::models::grid::{Params, StartMaps, State};
    /// # use erode::{CellSize, Grid};
    /// # let terrain = Grid::from_fn(32, 32, CellSize::square(1.0), |r, c| (r + 2 * c) as f32 * 0.1)?;
    /// # let mut run = GridRun::new(Params::default(), State::new(&terrain, &Params::default(), StartMaps::default())?)?;
    /// run.advance(20, &mut |_| {})?;
    /// let books = run.balance();
    /// assert!(books.relative_error < 1e-6);
    /// assert!(books.term("eroded").is_some_and(|v| v >= 0.0)); // m³
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn balance(&self) -> Balance;
    /// The state as checkpoint bytes (see [`crate::checkpoint`]), to resume with the model's
    /// `resume`.
    ///
    /// ```
    /// # use erode::contract::{GridRun, Model};
    /// # use erode::models::grid::{Params, StartMaps, State};
    /// # use erode::{CellSize, Grid};
    /// # let terrain = Grid::from_fn(32, 32, CellSize::square(1.0), |r, c| (r + 2 * c) as f32 * 0.1)?;
    /// # let mut run = GridRun::new(Params::default(), State::new(&terrain, &Params::default(), StartMaps::default())?)?;
    /// run.advance(4, &mut |_| {})?;
    /// let mut again = GridRun::resume(Params::default(), &run.checkpoint(), u64::MAX)?;
    /// run.advance(4, &mut |_| {})?;
    /// again.advance(4, &mut |_| {})?;
    /// assert_eq!(again.done(), 8);
    /// assert_eq!(again.map("height"), run.map("height"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn checkpoint(&self) -> Vec<u8>;
    /// Writes [`Model::checkpoint`]'s bytes into `sink` (see [`crate::checkpoint::Sink`]), as
    /// of the last [`Model::sync_checkpoint`]: a model whose state is large writes it as it
    /// goes, without its bytes whole in memory beside it (a run over ranks gathers it a batch
    /// of rows at a time).
    fn write_checkpoint(&self, sink: &mut dyn crate::checkpoint::Sink) {
        let bytes = self.checkpoint();
        sink.start(bytes.len() as u64);
        sink.put(&bytes);
    }
    /// Brings up to date what [`Model::write_checkpoint`] writes: a [`Model::sync`], unless the
    /// model gathers its state as it writes it.
    fn sync_checkpoint(&mut self) -> Result<(), SimError> {
        self.sync()
    }
    /// How many ranks of a parallel run it runs over (1: this process alone). Over more, its
    /// writes (a checkpoint, the outputs) each talk to every rank, so they take turns.
    fn ranks(&self) -> usize {
        1
    }
    /// The fingerprint of its parameters, which its checkpoints carry (see
    /// [`crate::checkpoint::Header`]): checkpoints with another belong to another run.
    fn fingerprint(&self) -> u64;
    /// The hash of the input the run began from, which its checkpoints carry (see
    /// [`crate::checkpoint::Header`]; 0: not recorded).
    fn input_hash(&self) -> u64;
    /// Wall time spent in each named stage so far (empty for a model without stages).
    fn stage_times(&self) -> Vec<(&'static str, Duration)>;
    /// The output map `name` of a heightmap model (one of its
    /// [`ModelInfo::maps`](crate::models::ModelInfo::maps)), row-major, made when asked: a run
    /// that writes the height alone makes no other. `None` for a name it does not give (every
    /// name for the SPH model, whose result is a mesh).
    fn map(&self, name: &str) -> Option<Vec<f32>>;
    /// Every output map, named, in the order of its `ModelInfo::maps` (the height first; none
    /// for the SPH model).
    fn maps(&self) -> Vec<(&'static str, Vec<f32>)> {
        let names = crate::models::info::find(self.name()).map_or(&[][..], |m| m.maps);
        names.iter().filter_map(|d| Some((d.name, self.map(d.name)?))).collect()
    }
    /// Every value of the state is finite.
    fn is_finite(&self) -> bool;
    /// A heightmap model's columns, rows and cell size (`None` for the SPH model's mesh): what a
    /// resume checks against the input it is given.
    fn shape(&self) -> Option<(usize, usize, crate::CellSize)> {
        None
    }
    /// Where it runs.
    fn backend(&self) -> Backend {
        Backend::Cpu
    }
    /// Replaces the map `name` (one value per cell, row-major) as a person edits it between
    /// advances (a brush in the viewer): `height`, the terrain in metres as the model holds it,
    /// or one of the model's input maps as its start takes it (the stream-power model's
    /// `uplift` multiplier, the droplet model's `hardness` and `rain`). An edit is not erosion:
    /// the books move with it and still balance. [`Model::editable`] names the maps it takes.
    ///
    /// ```
    /// # use erode::contract::{GridRun, Model};
    /// # use erode::models::grid::{Params, StartMaps, State};
    /// # use erode::{CellSize, Grid};
    /// # let terrain = Grid::from_fn(32, 32, CellSize::square(1.0), |r, c| (r + 2 * c) as f32 * 0.1)?;
    /// # let mut run = GridRun::new(Params::default(), State::new(&terrain, &Params::default(), StartMaps::default())?)?;
    /// assert!(run.editable().contains(&"water"));
    /// run.set_map("water", &vec![0.01; 32 * 32])?; // a centimetre of water everywhere
    /// assert!(run.set_map("sediment", &vec![0.0; 32 * 32]).is_err());
    /// assert!(run.balance().relative_error < 1e-6);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn set_map(&mut self, name: &str, values: &[f32]) -> Result<(), SimError> {
        let _ = values;
        Err(not_editable(self.name(), name, self.editable()))
    }
    /// The maps [`Model::set_map`] takes (none by default).
    fn editable(&self) -> &'static [&'static str] {
        &[]
    }
}

/// How many units the next advance of a run split into parts should take: about `want`, ending
/// on a multiple of `granule` counted from the model's start (see [`Model::granule`]: where a
/// split run gives one advance's result, whatever the split), never more than `left`. `done` is
/// [`Model::done`]; a resumed run may start between two multiples.
///
/// ```
/// use erode::contract::advance_len;
/// // a model whose advances may stop every 8 units, 3 done: the next part ends at 16
/// assert_eq!(advance_len(3, 10, 8, 100), 13);
/// // never past what is left
/// assert_eq!(advance_len(3, 10, 8, 5), 5);
/// ```
pub fn advance_len(done: u64, want: u64, granule: u64, left: u64) -> u64 {
    let granule = granule.max(1);
    let end = done.saturating_add(want.max(1)).div_ceil(granule).saturating_mul(granule);
    end.saturating_sub(done).clamp(1, left.max(1)).min(left)
}

/// The error of an edit of a map `model` does not let be edited.
pub fn not_editable(model: &str, name: &str, editable: &[&str]) -> SimError {
    let takes = if editable.is_empty() { "none".to_string() } else { editable.join(", ") };
    SimError::Params(format!("the {model} model has no map `{name}` to edit (editable: {takes})"))
}

/// Checks that an edit of map `name` has one value per cell of a `cells`-cell grid.
pub fn edit_len(name: &str, values: &[f32], cells: usize) -> Result<(), SimError> {
    if values.len() == cells {
        Ok(())
    } else {
        Err(SimError::Params(format!("an edit of map `{name}` has {} values for {cells} cells", values.len())))
    }
}

/// A boxed model is a model: what a front end holds when it made the model from the models'
/// list (see [`crate::models::make`]).
impl<M: Model + ?Sized> Model for Box<M> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn unit(&self) -> Unit {
        (**self).unit()
    }
    fn done(&self) -> u64 {
        (**self).done()
    }
    fn granule(&self) -> u64 {
        (**self).granule()
    }
    fn clock(&self) -> Option<Clock> {
        (**self).clock()
    }
    fn advance(&mut self, n: u64, progress: &mut dyn FnMut(u64)) -> Result<(), SimError> {
        (**self).advance(n, progress)
    }
    fn sync(&mut self) -> Result<(), SimError> {
        (**self).sync()
    }
    fn sync_maps(&mut self, maps: &[&str]) -> Result<(), SimError> {
        (**self).sync_maps(maps)
    }
    fn wait(&self) -> Result<(), SimError> {
        (**self).wait()
    }
    fn balance(&self) -> Balance {
        (**self).balance()
    }
    fn checkpoint(&self) -> Vec<u8> {
        (**self).checkpoint()
    }
    fn write_checkpoint(&self, sink: &mut dyn crate::checkpoint::Sink) {
        (**self).write_checkpoint(sink)
    }
    fn sync_checkpoint(&mut self) -> Result<(), SimError> {
        (**self).sync_checkpoint()
    }
    fn ranks(&self) -> usize {
        (**self).ranks()
    }
    fn fingerprint(&self) -> u64 {
        (**self).fingerprint()
    }
    fn input_hash(&self) -> u64 {
        (**self).input_hash()
    }
    fn stage_times(&self) -> Vec<(&'static str, Duration)> {
        (**self).stage_times()
    }
    fn map(&self, name: &str) -> Option<Vec<f32>> {
        (**self).map(name)
    }
    fn maps(&self) -> Vec<(&'static str, Vec<f32>)> {
        (**self).maps()
    }
    fn is_finite(&self) -> bool {
        (**self).is_finite()
    }
    fn shape(&self) -> Option<(usize, usize, crate::CellSize)> {
        (**self).shape()
    }
    fn backend(&self) -> Backend {
        (**self).backend()
    }
    fn set_map(&mut self, name: &str, values: &[f32]) -> Result<(), SimError> {
        (**self).set_map(name, values)
    }
    fn editable(&self) -> &'static [&'static str] {
        (**self).editable()
    }
}

fn all_finite(fields: &[&[f32]]) -> bool {
    use rayon::prelude::*;
    fields.iter().all(|f| f.par_chunks(1 << 16).all(|c| c.iter().all(|v| v.is_finite())))
}

fn ratio(name: &'static str, value: f64) -> Term {
    Term { name, value, unit: "1" }
}

fn volume(name: &'static str, value: f64) -> Term {
    Term { name, value, unit: "m³" }
}

// ---------------------------------------------------------------------------------------------

/// The grid model (virtual pipes, Mei, Decaudin & Hu 2007; Jákó & Tóth 2011) under the
/// contract, on the CPU or the GPU.
pub struct GridRun {
    state: grid::State,
    sim: GridSim,
    #[cfg(feature = "gpu")]
    gpu: Option<(grid::gpu::GpuSim, String)>,
    /// The state lags the GPU or the ranks.
    stale: bool,
}

/// Where a grid run's cells are stepped.
// one per run, moved never: its size does not matter
#[allow(clippy::large_enum_variant)]
enum GridSim {
    /// In this process, by the CPU simulator (which a run on the GPU keeps beside it).
    Here(grid::CpuSim),
    /// Over ranks, this process rank 0 (see [`GridRun::use_ranks`]): its block and the orders.
    Ranks(grid::blocks::Leader),
}

impl GridRun {
    /// The model's name: [`Model::name`], its checkpoints' prefix and its command.
    pub const NAME: &'static str = grid::NAME;

    /// A run of `params` from `state` on the CPU.
    pub fn new(params: grid::Params, state: grid::State) -> Result<Self, SimError> {
        let cpu = grid::CpuSim::new(params, &state)?;
        Ok(Self {
            state,
            sim: GridSim::Here(cpu),
            #[cfg(feature = "gpu")]
            gpu: None,
            stale: false,
        })
    }

    /// A new run of `params` over the ranks of `exchange`, this process rank 0, that never builds
    /// the whole map's state: each rank starts its block from its own rows of the inputs
    /// ([`grid::blocks::Leader::start`]), rank 0 from `start`, its window of the map it read
    /// ([`grid::blocks::LeaderWindow::cut`], before it let the whole map go), the others from
    /// those their front ends read by `request` (see [`grid::blocks::follow`]). Rank 0 keeps of
    /// the whole map only what a checkpoint needs beside the cells it gathers (the nodata mask
    /// and the rain map); the rest is on the ranks.
    pub fn start_over_ranks(
        params: grid::Params,
        start: grid::blocks::LeaderWindow,
        request: &[u8],
        exchange: std::sync::Arc<dyn crate::ranks::Exchange>,
    ) -> Result<Self, SimError> {
        let grid::blocks::LeaderWindow { width, height, window, nodata, rain } = start;
        let leader = grid::blocks::Leader::start(params, height, request, window, exchange)?;
        let block = leader.block().state();
        // the state a checkpoint gathers the cells into: the run's values, the whole map's
        // masks, no cells
        let state = grid::State {
            width,
            height,
            nodata,
            rain_map: block.rain_map.as_ref().and(rain),
            terrain: Vec::new(),
            water: Vec::new(),
            sediment: Vec::new(),
            hardness: Vec::new(),
            sediment_depth: Vec::new(),
            flux: vec![Vec::new(); block.flux.len()],
            velocity_x: Vec::new(),
            velocity_y: Vec::new(),
            eroded: Vec::new(),
            deposited: Vec::new(),
            discharge_integral: Vec::new(),
            books: block.books.clone(),
            ..*block
        };
        Ok(Self::led(state, leader))
    }

    /// Rank 0 of a run over ranks leading with `leader`, `state` the run's state without its
    /// cells (they are on the ranks until a sync gathers them into it).
    fn led(state: grid::State, leader: grid::blocks::Leader) -> Self {
        Self {
            state,
            sim: GridSim::Ranks(leader),
            #[cfg(feature = "gpu")]
            gpu: None,
            stale: true,
        }
    }

    /// Rank 0's side of a run over ranks.
    fn leader(&self) -> Option<&grid::blocks::Leader> {
        match &self.sim {
            GridSim::Ranks(l) => Some(l),
            GridSim::Here(_) => None,
        }
    }

    /// A run of `params` from checkpoint `bytes` (written with the same parameters; at most
    /// `max_cells` cells).
    pub fn resume(params: grid::Params, bytes: &[u8], max_cells: u64) -> Result<Self, SimError> {
        let state = grid::State::from_bytes(bytes, grid::params_fingerprint(&params), max_cells)?;
        Self::new(params, state)
    }

    /// A run of `params` from the checkpoint frame `open` reads (as [`GridRun::resume`] from its
    /// bytes) over the ranks of `exchange`, this process rank 0, that no rank holds whole: rank 0
    /// reads it a batch of rows at a time and hands each rank its window's rows
    /// ([`grid::blocks::Leader::resume`]); the whole map's simulator is never built.
    pub fn resume_over_ranks(
        params: grid::Params,
        open: &crate::checkpoint::OpenFrame<'_>,
        max_cells: u64,
        exchange: std::sync::Arc<dyn crate::ranks::Exchange>,
    ) -> Result<Self, SimError> {
        let (leader, state) = grid::blocks::Leader::resume(params, open, max_cells, exchange)?;
        Ok(Self::led(state, leader))
    }

    /// Runs on the GPU of `ctx` from here on; if it cannot, says why and stays on the CPU.
    #[cfg(feature = "gpu")]
    pub fn use_gpu(&mut self, ctx: std::sync::Arc<crate::gpu::GpuContext>) -> Result<(), SimError> {
        self.sync()?;
        let adapter = ctx.adapter.name.clone();
        let sim = grid::gpu::GpuSim::new(ctx, self.params(), &self.state)?;
        self.gpu = Some((sim, adapter));
        Ok(())
    }

    /// Runs over the ranks of `exchange` from here on, this process rank 0, in blocks of rows
    /// (see [`grid::blocks`]): the same bytes as one process. The other ranks run
    /// [`grid::blocks::follow`]; each [`Model::sync`] gathers the whole state here, while
    /// [`Model::sync_maps`] leaves the maps on the ranks, for each to write its own rows (see
    /// [`GridRun::ranks_task`]); the books and [`Model::is_finite`] are reduced over them.
    pub fn use_ranks(&mut self, exchange: std::sync::Arc<dyn crate::ranks::Exchange>) -> Result<(), SimError> {
        self.sync()?;
        #[cfg(feature = "gpu")]
        if self.gpu.is_some() {
            return Err(grid::blocks::BlockError::Unsupported("the GPU backend").into());
        }
        // the whole map's simulator (its scratch) goes: the ranks step the cells
        self.sim = GridSim::Ranks(grid::blocks::Leader::new(self.params().clone(), &self.state, exchange)?);
        // the cells live on the ranks now: rank 0 holds its block, and the whole only to gather
        // a checkpoint
        self.state.release_evolving();
        self.stale = true;
        Ok(())
    }

    /// Over ranks, steps the run in tiles of rows and columns: each band of rows' columns in
    /// `parts` parts (see [`grid::blocks::Leader::tile`]); the same bytes. Alone, nothing to cut.
    pub fn tile_ranks(&mut self, parts: usize) -> Result<(), SimError> {
        match &mut self.sim {
            GridSim::Ranks(l) if parts > 1 => l.tile(parts),
            _ => Ok(()),
        }
    }

    /// Over ranks, the parts of each band's columns the run steps in ([`GridRun::tile_ranks`];
    /// 1: bands of whole rows, and alone).
    pub fn rank_parts(&self) -> usize {
        self.leader().map_or(1, grid::blocks::Leader::parts)
    }

    /// Runs on the CPU from here on (the state read back from the GPU first).
    pub fn use_cpu(&mut self) -> Result<(), SimError> {
        self.sync()?;
        #[cfg(feature = "gpu")]
        {
            self.gpu = None;
        }
        Ok(())
    }

    /// The GPU simulator, when the run is on the GPU (a renderer binds its buffers).
    #[cfg(feature = "gpu")]
    pub fn gpu_sim(&self) -> Option<&grid::gpu::GpuSim> {
        self.gpu.as_ref().map(|(g, _)| g)
    }

    /// The state as of the last [`Model::sync`]. Over ranks, the fields that evolve are empty
    /// between an advance and the next sync (their cells are on the ranks).
    pub fn state(&self) -> &grid::State {
        &self.state
    }

    /// Edits the state by hand between advances (a brush, a painted map): read back from the
    /// GPU first, `edit` applied, the fields an editor changes (terrain, water, hardness,
    /// sediment depth) written back to the device. The books are the editor's to move (an edit
    /// is not erosion: see [`Model::set_map`], which does).
    pub fn edit<T>(&mut self, edit: impl FnOnce(&mut grid::State) -> T) -> Result<T, SimError> {
        self.refuse_over_ranks("an edit")?;
        self.sync()?;
        let out = edit(&mut self.state);
        #[cfg(feature = "gpu")]
        if let Some((g, _)) = &mut self.gpu {
            g.write_edited(&self.state)?;
        }
        Ok(out)
    }

    /// Goes on with `params` (new sources or a rain map included) from the state as it is, on
    /// the backend it runs on. Another number of pipes restarts the pipes' fluxes from rest (no
    /// water is lost: friction brings the flow back to speed within seconds).
    pub fn set_params(&mut self, params: grid::Params) -> Result<(), SimError> {
        self.refuse_over_ranks("new parameters")?;
        self.sync()?;
        let pipes = params.pipes as usize;
        if self.state.flux.len() != pipes {
            self.state.flux = vec![vec![0.0; self.state.len()]; pipes];
        }
        #[cfg(feature = "gpu")]
        if let Some((g, adapter)) = &self.gpu {
            let sim = grid::gpu::GpuSim::new(g.context(), &params, &self.state)?;
            self.gpu = Some((sim, adapter.clone()));
        }
        self.sim = GridSim::Here(grid::CpuSim::new(params, &self.state)?);
        Ok(())
    }

    /// Over ranks: hands every other rank the front end's task `bytes` (see
    /// [`grid::blocks::Leader::task`]) and gives rank 0's block, to carry it out with; `None`
    /// when this process runs alone.
    pub fn ranks_task(&self, bytes: &[u8]) -> Option<&grid::blocks::Block> {
        let l = self.leader()?;
        l.task(bytes);
        Some(l.block())
    }

    /// Simulated seconds the terrain has changed for (see [`grid::State::terrain_time`]).
    pub fn terrain_time(&self) -> f64 {
        self.leader().map_or(self.state.terrain_time, |l| l.block().state().terrain_time)
    }

    fn refuse_over_ranks(&self, what: &'static str) -> Result<(), SimError> {
        match self.sim {
            GridSim::Ranks(_) => Err(grid::blocks::BlockError::Unsupported(what).into()),
            GridSim::Here(_) => Ok(()),
        }
    }

    /// The parameters.
    pub fn params(&self) -> &grid::Params {
        match &self.sim {
            GridSim::Here(cpu) => cpu.params(),
            GridSim::Ranks(l) => l.block().sim().params(),
        }
    }

    /// The time step and sub-steps the simulator runs now.
    pub fn derived(&self) -> &grid::Derived {
        #[cfg(feature = "gpu")]
        if let Some((g, _)) = &self.gpu {
            return g.derived();
        }
        match &self.sim {
            GridSim::Here(cpu) => cpu.derived(),
            GridSim::Ranks(l) => l.block().sim().derived(),
        }
    }

    /// How many sub-steps the iterations so far took.
    pub fn substep_tally(&self) -> &grid::SubstepTally {
        #[cfg(feature = "gpu")]
        if let Some((g, _)) = &self.gpu {
            return g.substep_tally();
        }
        match &self.sim {
            GridSim::Here(cpu) => cpu.substep_tally(),
            GridSim::Ranks(l) => l.block().sim().substep_tally(),
        }
    }
}

impl Model for GridRun {
    fn name(&self) -> &'static str {
        Self::NAME
    }
    fn unit(&self) -> Unit {
        Unit::Iteration
    }
    fn done(&self) -> u64 {
        if let Some(l) = self.leader() {
            return l.block().state().iteration;
        }
        #[cfg(feature = "gpu")]
        if let Some((g, _)) = &self.gpu {
            return g.iteration;
        }
        self.state.iteration
    }
    fn clock(&self) -> Option<Clock> {
        let d = self.derived();
        let step = d.dt * f64::from(d.substeps);
        #[cfg(feature = "gpu")]
        if let Some((g, _)) = &self.gpu {
            return Some(Clock { now: g.time, step });
        }
        let now = self.leader().map_or(self.state.time, |l| l.block().state().time);
        Some(Clock { now, step })
    }
    fn advance(&mut self, n: u64, progress: &mut dyn FnMut(u64)) -> Result<(), SimError> {
        if let GridSim::Ranks(l) = &mut self.sim {
            l.run(n)?;
            self.state.release_evolving();
            self.stale = true;
            progress(l.block().state().iteration);
            return Ok(());
        }
        #[cfg(feature = "gpu")]
        if let Some((g, _)) = &mut self.gpu {
            g.run(n)?;
            self.stale = true;
            progress(g.iteration);
            return Ok(());
        }
        // one call: the CPU simulator writes the velocity output on its last iteration only
        if let GridSim::Here(cpu) = &mut self.sim {
            cpu.run(&mut self.state, n);
        }
        progress(self.state.iteration);
        Ok(())
    }
    fn sync(&mut self) -> Result<(), SimError> {
        if let GridSim::Ranks(l) = &self.sim
            && self.stale
        {
            self.state.hold_evolving();
            l.gather_into(&mut self.state)?;
        }
        #[cfg(feature = "gpu")]
        if let Some((g, _)) = &self.gpu
            && self.stale
        {
            g.read_into(&mut self.state)?;
        }
        self.stale = false;
        Ok(())
    }
    fn wait(&self) -> Result<(), SimError> {
        #[cfg(feature = "gpu")]
        if let Some((g, _)) = &self.gpu {
            g.finish()?;
        }
        Ok(())
    }
    fn sync_maps(&mut self, maps: &[&str]) -> Result<(), SimError> {
        // what `GpuSim::read_outputs` brings back
        const OUTPUTS: [&str; 5] = ["height", "water", "sediment", "erosion", "deposition"];
        #[cfg(feature = "gpu")]
        if let Some((g, _)) = &self.gpu
            && self.stale
            && maps.iter().all(|m| OUTPUTS.contains(m))
        {
            // the rest (fluxes, velocities, hardness, the sediment layer) stays stale
            return g.read_outputs(&mut self.state);
        }
        let _ = (maps, OUTPUTS);
        if let GridSim::Ranks(l) = &mut self.sim {
            // each rank writes its own rows of the maps (see `ranks_task`), from bands of whole
            // rows
            return l.bands();
        }
        self.sync()
    }
    fn editable(&self) -> &'static [&'static str] {
        &["height", "water", "hardness"]
    }
    fn set_map(&mut self, name: &str, values: &[f32]) -> Result<(), SimError> {
        if !self.editable().contains(&name) {
            return Err(not_editable(Self::NAME, name, self.editable()));
        }
        edit_len(name, values, self.state.len())?;
        self.edit(|st| {
            let (soil, water) = (st.soil_volume(), st.water_volume());
            match name {
                // the height map is in metres above sea; the state holds heights above its reference
                "height" => {
                    let reference = st.reference_height;
                    for (t, &v) in st.terrain.iter_mut().zip(values) {
                        *t = (f64::from(v) - reference) as f32;
                    }
                }
                "water" => st.water.copy_from_slice(values),
                _ => st.hardness.copy_from_slice(values),
            }
            st.start_soil += st.soil_volume() - soil;
            st.start_water += st.water_volume() - water;
        })
    }
    fn balance(&self) -> Balance {
        let (b, st) = match self.leader() {
            Some(l) => (l.balance(), l.block().state()),
            None => (self.state.balance(), &self.state),
        };
        Balance {
            relative_error: b.relative_error,
            terms: vec![
                ratio("water_relative_error", b.water_relative_error),
                ratio("soil_relative_error", b.soil_relative_error),
                ratio("soil_imbalance_per_moved", b.soil_imbalance_per_moved),
                ratio("transport_drift_relative", b.transport_drift_relative),
                volume("water_volume", b.water_volume),
                volume("soil_volume", b.soil_volume),
                volume("start_water", st.start_water),
                volume("start_soil", st.start_soil),
                volume("rain", st.books.rain),
                volume("sources", st.books.sources),
                volume("evaporated", st.books.evaporated),
                volume("water_outflow", st.books.water_outflow),
                volume("eroded", st.books.eroded),
                volume("deposited", st.books.deposited),
                volume("sediment_outflow", st.books.sediment_outflow),
                volume("water_from_dissolving", st.books.water_from_dissolving),
                volume("water_to_deposition", st.books.water_to_deposition),
                volume("transport_drift", st.books.transport_drift),
                volume("thermal_moved", st.books.thermal_moved),
                volume("smoothing_moved", st.books.smoothing_moved),
            ],
        }
    }
    fn checkpoint(&self) -> Vec<u8> {
        self.state.to_bytes(self.fingerprint())
    }
    fn write_checkpoint(&self, sink: &mut dyn crate::checkpoint::Sink) {
        match self.leader() {
            Some(l) => l.write_checkpoint(self.fingerprint(), sink),
            None => self.state.write_to(self.fingerprint(), sink),
        }
    }
    fn sync_checkpoint(&mut self) -> Result<(), SimError> {
        // over ranks, the checkpoint is gathered as it is written
        if self.leader().is_some() { Ok(()) } else { self.sync() }
    }
    fn ranks(&self) -> usize {
        self.leader().map_or(1, |l| l.block().ranks())
    }
    fn fingerprint(&self) -> u64 {
        grid::params_fingerprint(self.params())
    }
    fn input_hash(&self) -> u64 {
        self.state.input
    }
    fn stage_times(&self) -> Vec<(&'static str, Duration)> {
        let times = match &self.sim {
            GridSim::Here(cpu) => cpu.stage_times(),
            GridSim::Ranks(l) => l.block().sim().stage_times(),
        };
        grid::Stage::ALL.iter().zip(times.0.iter().copied()).map(|(s, t)| (s.name(), t)).collect()
    }
    fn map(&self, name: &str) -> Option<Vec<f32>> {
        // over ranks, between an advance and a sync the cells are on the ranks (each writes
        // its own rows: see `ranks_task`)
        if self.state.terrain.len() != self.state.len() {
            return None;
        }
        self.state.output_map(name)
    }
    fn shape(&self) -> Option<(usize, usize, crate::CellSize)> {
        Some((self.state.width, self.state.height, self.state.cell_size))
    }
    fn is_finite(&self) -> bool {
        match self.leader() {
            Some(l) => l.is_finite(),
            None => self.state.finite_on(0..self.state.len()),
        }
    }
    fn backend(&self) -> Backend {
        #[cfg(feature = "gpu")]
        if let Some((_, adapter)) = &self.gpu {
            return Backend::Gpu { adapter: adapter.clone() };
        }
        Backend::Cpu
    }
}

/// The grid model over a map tile by tile ([`grid::tiled`]): for maps whose state does not fit
/// in memory. It counts iterations over all tiles (each tile runs its iterations in turn), and
/// advances and checkpoints by whole tiles ([`Model::granule`] is a tile's iterations).
pub struct TiledGridRun {
    tiled: grid::tiled::Tiled,
}

/// The magic of a tiled run's checkpoint frame.
const TILED_MAGIC: &[u8; 8] = b"ERODETIL";

impl TiledGridRun {
    /// A tiled run (the whole-map passes already done by [`grid::tiled::Tiled::new`]).
    pub fn new(tiled: grid::tiled::Tiled) -> Self {
        Self { tiled }
    }

    /// The same run gone on from checkpoint `bytes` of a run with the same parameters, tiles and
    /// inputs.
    pub fn resume(tiled: grid::tiled::Tiled, bytes: &[u8]) -> Result<Self, SimError> {
        let mut run = Self { tiled };
        let mut r = crate::checkpoint::Reader::open(bytes, TILED_MAGIC, "tiled grid")?;
        r.expect_version(&[1], |_| "")?;
        let header = r.header(run.fingerprint(), 1)?;
        if header.input != run.tiled.input_hash() {
            return Err(crate::checkpoint::CheckpointError::Invalid("made from other inputs".into()).into());
        }
        let (w, h, _) = run.tiled.shape();
        if (r.u64()?, r.u64()?) != (w as u64, h as u64) {
            return Err(crate::checkpoint::CheckpointError::Invalid("another map size".into()).into());
        }
        let done = r.u64()? as usize;
        let worst = r.f64()?;
        let books = grid::Books::from_array(r.f64_array()?);
        let sums = (0..run.tiled.names().len()).map(|_| r.f32s(w * h)).collect::<Result<Vec<_>, _>>()?;
        r.finish()?;
        run.tiled.restore(sums, done, books, worst)?;
        Ok(run)
    }

    /// The run's tiles and blended maps.
    pub fn tiled(&self) -> &grid::tiled::Tiled {
        &self.tiled
    }
}

impl Model for TiledGridRun {
    fn name(&self) -> &'static str {
        GridRun::NAME
    }
    fn unit(&self) -> Unit {
        Unit::Iteration
    }
    fn done(&self) -> u64 {
        self.tiled.done() as u64 * self.tiled.iterations()
    }
    fn granule(&self) -> u64 {
        self.tiled.iterations().max(1)
    }
    fn advance(&mut self, n: u64, progress: &mut dyn FnMut(u64)) -> Result<(), SimError> {
        let per_tile = self.granule();
        for _ in 0..n.div_ceil(per_tile) {
            let before = self.done();
            self.tiled.run_next(&mut |d| progress(before + d))?;
        }
        Ok(())
    }
    fn sync(&mut self) -> Result<(), SimError> {
        Ok(())
    }
    fn balance(&self) -> Balance {
        let b = self.tiled.books();
        Balance {
            relative_error: self.tiled.worst_relative_error(),
            terms: vec![
                volume("rain", b.rain),
                volume("sources", b.sources),
                volume("evaporated", b.evaporated),
                volume("water_outflow", b.water_outflow),
                volume("eroded", b.eroded),
                volume("deposited", b.deposited),
                volume("sediment_outflow", b.sediment_outflow),
                volume("water_from_dissolving", b.water_from_dissolving),
                volume("water_to_deposition", b.water_to_deposition),
                volume("transport_drift", b.transport_drift),
                volume("thermal_moved", b.thermal_moved),
                volume("smoothing_moved", b.smoothing_moved),
            ],
        }
    }
    fn checkpoint(&self) -> Vec<u8> {
        let (sums, done, b, worst) = self.tiled.sums();
        let header = crate::checkpoint::Header { params: self.fingerprint(), input: self.tiled.input_hash() };
        let (w, h, _) = self.tiled.shape();
        let mut out = crate::checkpoint::Writer::new(TILED_MAGIC, 1, header, 256 + sums.len() * w * h * 4);
        out.u64(w as u64);
        out.u64(h as u64);
        out.u64(done as u64);
        out.f64(worst);
        out.f64s(&b.to_array());
        for s in sums {
            out.f32s(s);
        }
        out.finish()
    }
    fn fingerprint(&self) -> u64 {
        let t = &self.tiled;
        let layout = t.layout();
        let (w, h, _) = t.shape();
        let first = layout.core(0);
        crate::checkpoint::fnv1a64(
            format!(
                "{:?} tiles {} {} overlap {} iterations {} maps {:?} of {w}x{h}",
                t.params(),
                first.width(),
                first.height(),
                layout.overlap(),
                t.iterations(),
                t.names()
            )
            .as_bytes(),
        )
    }
    fn input_hash(&self) -> u64 {
        self.tiled.input_hash()
    }
    fn stage_times(&self) -> Vec<(&'static str, Duration)> {
        grid::Stage::ALL.iter().zip(*self.tiled.stage_times()).map(|(s, t)| (s.name(), t)).collect()
    }
    fn map(&self, name: &str) -> Option<Vec<f32>> {
        self.tiled.map(name)
    }
    fn shape(&self) -> Option<(usize, usize, crate::CellSize)> {
        Some(self.tiled.shape())
    }
    fn is_finite(&self) -> bool {
        self.tiled.is_finite()
    }
}

// ---------------------------------------------------------------------------------------------

/// The droplet model (Beyer 2015) under the contract, on the CPU or the GPU.
pub struct DropletRun {
    state: droplet::State,
    cpu: droplet::CpuSim,
    #[cfg(feature = "gpu")]
    gpu: Option<(droplet::gpu::GpuSim, String)>,
    stale: bool,
}

impl DropletRun {
    /// The model's name: [`Model::name`], its checkpoints' prefix and its command.
    pub const NAME: &'static str = droplet::NAME;

    /// A run of `params` from `state` on the CPU.
    pub fn new(params: droplet::Params, state: droplet::State) -> Result<Self, SimError> {
        let cpu = droplet::CpuSim::new(params, &state)?;
        Ok(Self {
            state,
            cpu,
            #[cfg(feature = "gpu")]
            gpu: None,
            stale: false,
        })
    }

    /// A run of `params` from checkpoint `bytes` (written with the same parameters; at most
    /// `max_cells` cells).
    pub fn resume(params: droplet::Params, bytes: &[u8], max_cells: u64) -> Result<Self, SimError> {
        let fingerprint = droplet::params_fingerprint(&params);
        let state = droplet::State::from_bytes(bytes, fingerprint, max_cells)?;
        Self::new(params, state)
    }

    /// Runs on the GPU of `ctx` from here on; if it cannot, says why and stays on the CPU.
    #[cfg(feature = "gpu")]
    pub fn use_gpu(&mut self, ctx: std::sync::Arc<crate::gpu::GpuContext>) -> Result<(), SimError> {
        self.sync()?;
        let adapter = ctx.adapter.name.clone();
        let sim = droplet::gpu::GpuSim::new(ctx, self.cpu.params(), &self.state)?;
        self.gpu = Some((sim, adapter));
        Ok(())
    }

    /// How many droplets a GPU batch of this run would hold (those whose paths rarely cross).
    #[cfg(feature = "gpu")]
    pub fn gpu_batch(&self) -> u64 {
        let p = self.cpu.params();
        droplet::gpu::gpu_batch(self.cpu.rule(), p.batch_size, self.state.width * self.state.height)
    }

    /// The state as of the last [`Model::sync`].
    pub fn state(&self) -> &droplet::State {
        &self.state
    }

    /// The parameters.
    pub fn params(&self) -> &droplet::Params {
        self.cpu.params()
    }

    /// How many bands of rows a CPU batch is split into.
    pub fn parallel_bands(&self) -> usize {
        self.cpu.parallel_bands(self.state.height)
    }
}

impl Model for DropletRun {
    fn name(&self) -> &'static str {
        Self::NAME
    }
    fn unit(&self) -> Unit {
        Unit::Droplet
    }
    fn done(&self) -> u64 {
        #[cfg(feature = "gpu")]
        if let Some((g, _)) = &self.gpu {
            return g.droplets();
        }
        self.state.droplets
    }
    fn granule(&self) -> u64 {
        #[cfg(feature = "gpu")]
        if let Some((g, _)) = &self.gpu {
            return g.batch_size();
        }
        u64::from(self.cpu.params().batch_size)
    }
    fn advance(&mut self, n: u64, progress: &mut dyn FnMut(u64)) -> Result<(), SimError> {
        #[cfg(feature = "gpu")]
        if let Some((g, _)) = &mut self.gpu {
            g.run(n)?;
            self.stale = true;
            progress(g.droplets());
            return Ok(());
        }
        self.cpu.run(&mut self.state, n, progress);
        Ok(())
    }
    fn sync(&mut self) -> Result<(), SimError> {
        #[cfg(feature = "gpu")]
        if let Some((g, _)) = &self.gpu
            && self.stale
        {
            g.read_into(&mut self.state)?;
        }
        self.stale = false;
        Ok(())
    }
    fn wait(&self) -> Result<(), SimError> {
        #[cfg(feature = "gpu")]
        if let Some((g, _)) = &self.gpu {
            g.finish()?;
        }
        Ok(())
    }
    fn balance(&self) -> Balance {
        let st = &self.state;
        let (books, terrain) = st.balance();
        Balance {
            relative_error: books.max(terrain),
            terms: vec![
                ratio("books_relative_error", books),
                ratio("terrain_relative_error", terrain),
                volume("eroded", st.cubic_metres(st.books.eroded)),
                volume("deposited", st.cubic_metres(st.books.deposited)),
                volume("outflow", st.cubic_metres(st.books.outflow)),
            ],
        }
    }
    fn checkpoint(&self) -> Vec<u8> {
        self.state.to_bytes(self.fingerprint())
    }
    fn fingerprint(&self) -> u64 {
        droplet::params_fingerprint(self.cpu.params())
    }
    fn editable(&self) -> &'static [&'static str] {
        &["height", "hardness", "rain"]
    }
    fn set_map(&mut self, name: &str, values: &[f32]) -> Result<(), SimError> {
        #[cfg(feature = "gpu")]
        if self.gpu.is_some() {
            return Err(SimError::Params(format!("an edit of map `{name}` needs the droplet model on the CPU")));
        }
        let st = &mut self.state;
        edit_len(name, values, st.width * st.height)?;
        match name {
            "height" => {
                let before = st.volume();
                st.terrain.copy_from_slice(values);
                st.start_volume += st.volume() - before;
                // the edited edge is the one the droplets leave by
                st.beyond = droplet::state::beyond_edge(&st.terrain, st.width, st.height);
                return Ok(());
            }
            "hardness" => st.hardness = Some(values.to_vec()),
            "rain" => st.rain = Some(values.to_vec()),
            _ => return Err(not_editable(Self::NAME, name, self.editable())),
        }
        // the simulator keeps what it derives from the hardness and rain maps
        self.cpu = droplet::CpuSim::new(self.cpu.params().clone(), &self.state)?;
        Ok(())
    }
    fn input_hash(&self) -> u64 {
        self.state.input
    }
    fn stage_times(&self) -> Vec<(&'static str, Duration)> {
        Vec::new()
    }
    fn map(&self, name: &str) -> Option<Vec<f32>> {
        let st = &self.state;
        let field = match name {
            "height" => &st.terrain,
            "erosion" => &st.eroded,
            "deposition" => &st.deposited,
            "flow" => &st.flow,
            _ => return None,
        };
        Some(field.clone())
    }
    fn shape(&self) -> Option<(usize, usize, crate::CellSize)> {
        Some((self.state.width, self.state.height, self.state.cell_size))
    }
    fn is_finite(&self) -> bool {
        let s = &self.state;
        all_finite(&[&s.terrain, &s.eroded, &s.deposited, &s.flow])
    }
    fn backend(&self) -> Backend {
        #[cfg(feature = "gpu")]
        if let Some((_, adapter)) = &self.gpu {
            return Backend::Gpu { adapter: adapter.clone() };
        }
        Backend::Cpu
    }
}

// ---------------------------------------------------------------------------------------------

/// The stream-power model (uplift, Braun & Willett 2013's implicit incision, hillslope
/// diffusion) under the contract. Its unit is a step of `dt_years`; its clock counts years.
pub struct StreamPowerRun {
    state: stream_power::State,
    cpu: stream_power::CpuSim,
}

impl StreamPowerRun {
    /// The model's name: [`Model::name`], its checkpoints' prefix and its command.
    pub const NAME: &'static str = stream_power::NAME;

    /// A run of `params` from `state`.
    pub fn new(params: stream_power::Params, state: stream_power::State) -> Result<Self, SimError> {
        let cpu = stream_power::CpuSim::new(params, &state)?;
        Ok(Self { state, cpu })
    }

    /// A run of `params` from checkpoint `bytes` (written with the same parameters; at most
    /// `max_cells` cells).
    pub fn resume(params: stream_power::Params, bytes: &[u8], max_cells: u64) -> Result<Self, SimError> {
        let fingerprint = stream_power::params_fingerprint(&params);
        Self::new(params, stream_power::State::from_bytes(bytes, fingerprint, max_cells)?)
    }

    /// The state.
    pub fn state(&self) -> &stream_power::State {
        &self.state
    }

    /// The state, to edit between steps (the viewer's uplift brush).
    pub fn state_mut(&mut self) -> &mut stream_power::State {
        &mut self.state
    }

    /// Replaces the heights with `heights` (m, row-major, one per cell) in full precision, as
    /// [`Model::set_map`]`("height", ..)` does with `f32` values (the model works in `f64`):
    /// cells outside the domain keep theirs, the books move with the edit.
    pub fn set_heights(&mut self, heights: &[f64]) -> Result<(), SimError> {
        let st = &mut self.state;
        let cells = st.width * st.height;
        if heights.len() != cells {
            return Err(SimError::Params(format!(
                "an edit of map `height` has {} values for {cells} cells",
                heights.len()
            )));
        }
        if let Some(i) = (0..cells).find(|&i| st.inside(i) && !heights[i].is_finite()) {
            return Err(crate::GridError::NonFinite { count: 1, row: i / st.width, col: i % st.width }.into());
        }
        let before = st.volume();
        let nodata = st.nodata.take();
        for (i, (z, &v)) in st.terrain.iter_mut().zip(heights).enumerate() {
            if nodata.as_ref().is_none_or(|m| !m[i]) {
                *z = v;
            }
        }
        st.nodata = nodata;
        st.start_volume += st.volume() - before;
        Ok(())
    }

    /// The parameters.
    pub fn params(&self) -> &stream_power::Params {
        self.cpu.params()
    }

    /// The simulator (routing of the last step).
    pub fn sim(&self) -> &stream_power::CpuSim {
        &self.cpu
    }
}

impl Model for StreamPowerRun {
    fn name(&self) -> &'static str {
        Self::NAME
    }
    fn unit(&self) -> Unit {
        Unit::Step
    }
    fn done(&self) -> u64 {
        self.state.steps
    }
    fn advance(&mut self, n: u64, progress: &mut dyn FnMut(u64)) -> Result<(), SimError> {
        for _ in 0..n {
            self.cpu.step(&mut self.state);
            progress(self.state.steps);
        }
        Ok(())
    }
    fn sync(&mut self) -> Result<(), SimError> {
        Ok(())
    }
    fn balance(&self) -> Balance {
        let st = &self.state;
        let b = &st.books;
        Balance {
            relative_error: st.relative_error(),
            terms: vec![
                volume("uplifted", b.uplifted),
                volume("eroded", b.eroded),
                volume("diffused_out", b.diffused_out),
                volume("filled", b.filled),
                volume("left_through_base_level", b.left_through_base_level()),
                volume("volume_change", st.volume() - st.start_volume),
            ],
        }
    }
    fn checkpoint(&self) -> Vec<u8> {
        self.state.to_bytes(self.fingerprint())
    }
    fn fingerprint(&self) -> u64 {
        stream_power::params_fingerprint(self.cpu.params())
    }
    fn editable(&self) -> &'static [&'static str] {
        &["height", "uplift"]
    }
    fn set_map(&mut self, name: &str, values: &[f32]) -> Result<(), SimError> {
        let st = &mut self.state;
        edit_len(name, values, st.width * st.height)?;
        match name {
            "height" => {
                let heights: Vec<f64> = values.iter().map(|&v| f64::from(v)).collect();
                return self.set_heights(&heights);
            }
            "uplift" => st.uplift = Some(values.to_vec()),
            _ => return Err(not_editable(Self::NAME, name, self.editable())),
        }
        Ok(())
    }
    fn input_hash(&self) -> u64 {
        self.state.input
    }
    fn stage_times(&self) -> Vec<(&'static str, Duration)> {
        stream_power::Stage::ALL.iter().zip(self.cpu.stage_times()).map(|(s, t)| (s.name(), t)).collect()
    }
    fn map(&self, name: &str) -> Option<Vec<f32>> {
        self.state.output_map(name, self.cpu.params().uplift)
    }
    fn shape(&self) -> Option<(usize, usize, crate::CellSize)> {
        Some((self.state.width, self.state.height, self.state.cell_size))
    }
    fn is_finite(&self) -> bool {
        let s = &self.state;
        s.terrain.iter().all(|v| v.is_finite()) && all_finite(&[&s.drainage_area, &s.erosion_rate])
    }
}

// ---------------------------------------------------------------------------------------------

/// The SPH model (Skorkovská, Kolingerová & Beneš) under the contract.
pub struct SphRun {
    state: sph::State,
    sim: sph::CpuSim,
}

impl SphRun {
    /// The model's name: [`Model::name`], its checkpoints' prefix and its command.
    pub const NAME: &'static str = sph::NAME;

    /// A run of `params` from `state`.
    pub fn new(params: sph::Params, state: sph::State) -> Result<Self, SimError> {
        let sim = sph::CpuSim::new(params, &state)?;
        Ok(Self { state, sim })
    }

    /// A run of `params` from checkpoint `bytes` (written with the same parameters).
    pub fn resume(params: sph::Params, bytes: &[u8]) -> Result<Self, SimError> {
        let (state, frame) = sph::checkpoint::from_bytes(bytes, sph::checkpoint::params_fingerprint(&params))?;
        let sim = sph::CpuSim::with_frame(params, &state, frame)?;
        Ok(Self { state, sim })
    }

    /// The state: the mesh, the particles, the books.
    pub fn state(&self) -> &sph::State {
        &self.state
    }

    /// The parameters.
    pub fn params(&self) -> &sph::Params {
        self.sim.params()
    }

    /// What the simulator derived from the parameters (time step, smoothing length, ...).
    pub fn derived(&self) -> &sph::Derived {
        self.sim.derived()
    }

    /// Goes on with `params` from here, validated as at a start; the run's frame (its domain
    /// and the speed bound a derived sound speed follows) stays the one it began with.
    /// Checkpoints from here carry the new parameters' fingerprint.
    pub fn set_params(&mut self, params: sph::Params) -> Result<(), SimError> {
        self.sim = sph::CpuSim::with_frame(params, &self.state, self.sim.frame())?;
        Ok(())
    }
}

impl Model for SphRun {
    fn name(&self) -> &'static str {
        Self::NAME
    }
    fn unit(&self) -> Unit {
        Unit::Iteration
    }
    fn done(&self) -> u64 {
        self.state.iteration
    }
    fn clock(&self) -> Option<Clock> {
        Some(Clock { now: self.state.time, step: self.sim.derived().dt })
    }
    fn advance(&mut self, n: u64, progress: &mut dyn FnMut(u64)) -> Result<(), SimError> {
        for _ in 0..n {
            // a failed step leaves the state as it was after the last good one
            self.sim.step(&mut self.state)?;
            progress(self.state.iteration);
        }
        Ok(())
    }
    fn sync(&mut self) -> Result<(), SimError> {
        Ok(())
    }
    fn balance(&self) -> Balance {
        let st = &self.state;
        let b = st.balance();
        Balance {
            relative_error: b.relative_error,
            terms: vec![
                volume("eroded", st.books.eroded),
                volume("deposited", st.books.deposited),
                volume("carried", b.carried),
                volume("outflow", st.books.outflow),
                volume("pending", b.pending),
                volume("mesh_volume_change", b.mesh_volume_change),
                volume("mesh_volume_start", st.start_volume),
                volume("water_in", st.books.inflow),
                volume("water_held_back", st.books.inflow_held),
                volume("water_now", st.water()),
            ],
        }
    }
    fn checkpoint(&self) -> Vec<u8> {
        sph::checkpoint::to_bytes(&self.state, &self.sim.frame(), self.fingerprint())
    }
    fn fingerprint(&self) -> u64 {
        sph::checkpoint::params_fingerprint(self.sim.params())
    }
    fn input_hash(&self) -> u64 {
        self.state.input
    }
    fn stage_times(&self) -> Vec<(&'static str, Duration)> {
        sph::Stage::ALL.iter().zip(self.sim.stage_times()).map(|(s, t)| (s.name(), t)).collect()
    }
    fn map(&self, _name: &str) -> Option<Vec<f32>> {
        None
    }
    fn is_finite(&self) -> bool {
        let s = &self.state;
        s.positions.iter().chain(&s.velocities).chain(&s.mesh.positions).all(|v| v.is_finite())
    }
}
