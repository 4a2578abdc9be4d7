//! The document the viewer edits and runs: terrain and water state, the parameters of both
//! models, river sources, brushes and the undo history. Everything the user does reaches it as an
//! [`Action`] (the app's input layer maps pointer and keys to actions), so tests drive it exactly
//! as the UI does, without a window.

use std::sync::Arc;

use erode::contract::{DropletRun, GridRun, Model, StreamPowerRun, Unit};
use erode::gpu::GpuContext;
use erode::models::grid::gpu::GpuSim;
use erode::models::grid::{Params, RainMode, Source, StartMaps, State, Units};
use erode::models::make::{Inputs, Maker, Table};
use erode::models::{droplet, stream_power};
use erode::{Grid, SimError};

use crate::brush::{self, Brush, BrushKind, Canvas, Field};
use crate::history::{Edit, History, diff};

/// Which model runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelKind {
    /// The virtual-pipe grid model (water, hydraulic and thermal erosion).
    Grid,
    /// Beyer's droplet model (no standing water).
    Droplet,
    /// The stream-power model: uplift, river incision and hillslope diffusion over thousands of
    /// years a step (paint the uplift map to grow ranges).
    StreamPower,
    /// A heightmap model the library's list makes (its `Maker`), by name: every such model is
    /// in the viewer without code of its own here.
    Made(&'static str),
}

impl ModelKind {
    /// The model as the library's list describes it (name, summary, parameters, presets).
    pub fn info(self) -> &'static erode::models::ModelInfo {
        match self {
            ModelKind::Grid => &erode::models::grid::INFO,
            ModelKind::Droplet => &erode::models::droplet::INFO,
            ModelKind::StreamPower => &erode::models::stream_power::INFO,
            // a `Made` only ever holds a name of the list (see `ModelKind::all`)
            ModelKind::Made(name) => erode::models::info::find(name).unwrap_or(&erode::models::grid::INFO),
        }
    }

    /// The heightmap models the viewer runs, in the list's order: the three before the list
    /// could make models, then every model it makes.
    pub fn all() -> Vec<ModelKind> {
        let made = erode::models::MODELS.iter().filter(|m| m.make.is_some()).map(|m| ModelKind::Made(m.name));
        [ModelKind::Grid, ModelKind::Droplet, ModelKind::StreamPower].into_iter().chain(made).collect()
    }

    /// The model called `name` on the command line.
    pub fn named(name: &str) -> Option<ModelKind> {
        ModelKind::all().into_iter().find(|m| m.info().name == name)
    }

    /// What a tick counts.
    pub fn unit(self) -> Unit {
        match self {
            ModelKind::Grid => Unit::Iteration,
            ModelKind::Droplet => Unit::Droplet,
            ModelKind::StreamPower => Unit::Step,
            ModelKind::Made(_) => self.info().make.map_or(Unit::Iteration, |m| m.unit),
        }
    }

    /// The model's maker, for those the list makes.
    fn maker(self) -> Option<Maker> {
        match self {
            ModelKind::Made(_) => self.info().make,
            _ => None,
        }
    }
}

/// A model is saved by its command-line name.
impl serde::Serialize for ModelKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.info().name)
    }
}

impl<'de> serde::Deserialize<'de> for ModelKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        // sessions before the list named the three models by their variants
        let old = match name.as_str() {
            "Grid" => Some(ModelKind::Grid),
            "Droplet" => Some(ModelKind::Droplet),
            "StreamPower" => Some(ModelKind::StreamPower),
            _ => None,
        };
        old.or_else(|| ModelKind::named(&name))
            .ok_or_else(|| serde::de::Error::custom(format!("no model `{name}` in this viewer")))
    }
}

/// Where the grid model runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BackendKind {
    /// rayon on the CPU, on a worker thread in the app.
    Cpu,
    /// wgpu compute on the device the window draws with.
    Gpu,
}

/// What the map overlay shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Overlay {
    /// No overlay: height and slope material.
    #[default]
    None,
    /// Total soil removed, m.
    Erosion,
    /// Total sediment added, m.
    Deposition,
    /// Time-averaged discharge (grid, m³/s) or droplet visits (droplet).
    Flow,
    /// Water speed, m/s.
    Velocity,
    /// Hardness `R`.
    Hardness,
    /// Suspended sediment, m.
    Sediment,
    /// The rain map.
    Rain,
    /// The stream-power model's uplift map (multiplier of the uplift rate).
    Uplift,
}

impl Overlay {
    /// Every overlay, in menu order.
    pub const ALL: [Overlay; 9] = [
        Overlay::None,
        Overlay::Erosion,
        Overlay::Deposition,
        Overlay::Flow,
        Overlay::Velocity,
        Overlay::Hardness,
        Overlay::Sediment,
        Overlay::Rain,
        Overlay::Uplift,
    ];

    /// Name shown in the UI.
    pub fn label(self) -> &'static str {
        match self {
            Overlay::None => "none",
            Overlay::Erosion => "erosion",
            Overlay::Deposition => "deposition",
            Overlay::Flow => "flow",
            Overlay::Velocity => "velocity",
            Overlay::Hardness => "hardness",
            Overlay::Sediment => "sediment",
            Overlay::Rain => "rain map",
            Overlay::Uplift => "uplift map",
        }
    }

    /// The overlay of a name as the command line writes it (`rain-map` for "rain map").
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.label().replace(' ', "-") == name)
    }

    /// Whether it is drawn on a log scale: discharge spans decades, from a hillslope's trickle to
    /// a river's flow.
    pub fn log_scale(self) -> bool {
        self == Overlay::Flow
    }

    /// What its values are measured in, for the legend (`model`'s: flow is a discharge on the
    /// grid, a count of visits for droplets).
    pub fn unit(self, model: ModelKind) -> &'static str {
        match self {
            Overlay::None => "",
            Overlay::Erosion if model == ModelKind::StreamPower => "m/yr",
            Overlay::Erosion | Overlay::Deposition | Overlay::Sediment => "m",
            Overlay::Flow if model == ModelKind::Droplet => "droplet visits",
            Overlay::Flow if model == ModelKind::StreamPower => "m² drained",
            Overlay::Flow => "m³/s",
            Overlay::Velocity => "m/s",
            Overlay::Hardness => "(1 erodes least)",
            Overlay::Rain => "x the rain rate",
            Overlay::Uplift => "x the uplift rate",
        }
    }
}

/// Everything the user can do to the world.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Starts a stroke of the current brush at a point, cells (x east, y south).
    StrokeBegin { x: f32, y: f32 },
    /// Continues the stroke to a point.
    StrokeTo { x: f32, y: f32 },
    /// Ends the stroke (one undo step).
    StrokeEnd,
    /// Places a river source at a point, cells, with `rate` m³/s.
    PlaceSource { x: f32, y: f32, rate: f64 },
    /// Moves source `index` to a point, cells.
    MoveSource { index: usize, x: f32, y: f32 },
    /// Sets the rate of source `index`, m³/s.
    SetSourceRate { index: usize, rate: f64 },
    /// Removes source `index`.
    RemoveSource { index: usize },
    /// Undoes the last edit.
    Undo,
    /// Redoes the last undone edit.
    Redo,
    /// Sets the brush.
    SetBrush(Brush),
    /// Replaces the grid model's parameters (validated first).
    SetGridParams(Box<Params>),
    /// Replaces the droplet model's parameters (validated first).
    SetDropletParams(Box<droplet::Params>),
    /// Replaces the stream-power model's parameters (validated first).
    SetStreamPowerParams(Box<stream_power::Params>),
    /// Replaces the parameters of a model the list makes (checked by its maker first).
    SetMadeParams(&'static str, Box<Table>),
    /// Chooses the model.
    SetModel(ModelKind),
    /// Rain on or off.
    SetRain(bool),
    /// Iterations (grid) or steps (stream power) per tick.
    SetIterationsPerTick(u32),
    /// Droplets per tick.
    SetDropletsPerTick(u32),
}

/// Why an action or a tick failed.
#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    /// A model refused its parameters or state.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// A parameter is out of range.
    #[error(transparent)]
    Param(#[from] erode::ParamError),
    /// No source has this index.
    #[error("no river source {0}")]
    NoSource(usize),
}

/// A stroke in progress: the field as it was at the start, for the undo patch.
struct Stroke {
    field: Field,
    before: Vec<f32>,
    created: bool,
    last: (f32, f32),
    flatten_to: f32,
}

/// The viewer's document.
pub struct World {
    /// The model that runs.
    pub model: ModelKind,
    /// Grid model parameters (rain mode as the user set it; see `rain`).
    pub grid_params: Params,
    /// Droplet model parameters.
    pub droplet_params: droplet::Params,
    /// Stream-power model parameters.
    pub stream_power_params: stream_power::Params,
    /// The parameters of each model the list makes, by name (its first preset at the start).
    pub made_params: std::collections::BTreeMap<&'static str, Table>,
    /// The stream-power model's uplift map: a multiplier of `uplift` per cell, 1 at the start.
    pub uplift: Vec<f32>,
    /// The grid model's run, on the CPU or the GPU: its state (terrain, water, maps and books)
    /// is the document brushes paint on. With another model its terrain follows that model's
    /// after every tick.
    grid: GridRun,
    /// The droplet or stream-power model's run while it is the model, made from the grid
    /// state's maps (heights relative to its reference) and driven through the model contract
    /// as every front end drives it: `None` until its first tick.
    run: Option<Box<dyn Model>>,
    /// Whether it rains (grid: the rain mode applies; droplet: droplets fall).
    pub rain: bool,
    /// The brush.
    pub brush: Brush,
    /// Grid iterations or stream-power steps per tick.
    pub iterations_per_tick: u32,
    /// Droplets per tick.
    pub droplets_per_tick: u32,
    history: History,
    stroke: Option<Stroke>,
    gpu_ctx: Option<Arc<GpuContext>>,
    /// Counts changes of terrain or water made outside the GPU (for renderers that upload).
    pub version: u64,
}

impl World {
    /// A world on `terrain` (heights in metres) with these parameters.
    pub fn new(terrain: &Grid<f32>, grid_params: Params, droplet_params: droplet::Params) -> Result<Self, WorldError> {
        Self::with_holes(terrain, None, grid_params, droplet_params)
    }

    /// A world on `terrain` whose `nodata` cells (`true`, row-major) are outside the domain, as
    /// the CLI runs a heightmap with nodata (see `erode::Heightmap::nodata_mask`).
    pub fn with_holes(
        terrain: &Grid<f32>,
        nodata: Option<&[bool]>,
        grid_params: Params,
        droplet_params: droplet::Params,
    ) -> Result<Self, WorldError> {
        droplet_params.validate()?;
        let state = State::new(terrain, &grid_params, StartMaps { nodata, ..StartMaps::default() })?;
        Self::from_parts(ModelKind::Grid, grid_params, droplet_params, state, true)
    }

    /// A world from its saved parts (the model's run is made again at its first tick).
    pub fn from_parts(
        model: ModelKind,
        grid_params: Params,
        droplet_params: droplet::Params,
        state: State,
        rain: bool,
    ) -> Result<Self, WorldError> {
        let relief = relief(&state.terrain);
        let cells = state.width * state.height;
        let grid = GridRun::new(effective(&grid_params, rain), state)?;
        Ok(Self {
            model,
            grid_params,
            droplet_params,
            stream_power_params: stream_power::Params::default(),
            made_params: ModelKind::all()
                .into_iter()
                .filter_map(|m| {
                    let (maker, info) = (m.maker()?, m.info());
                    Some((info.name, (maker.preset)((info.presets)().first()?.0).ok()?))
                })
                .collect(),
            uplift: vec![1.0; cells],
            grid,
            run: None,
            rain,
            brush: Brush { strength: (relief * 0.01).max(0.01), ..Brush::default() },
            iterations_per_tick: 4,
            droplets_per_tick: 2000,
            history: History::default(),
            stroke: None,
            gpu_ctx: None,
            version: 0,
        })
    }

    /// The grid state (as of the last read-back on the GPU): the document brushes paint on.
    pub fn state(&self) -> &State {
        self.grid.state()
    }

    /// Edits the grid state directly, as a script or a test would (the app edits through
    /// actions): read back from the GPU first and written back after; the books' starting
    /// volumes move with the edit. Not undoable, and not passed to another model's run.
    pub fn edit_state<T>(&mut self, edit: impl FnOnce(&mut State) -> T) -> Result<T, WorldError> {
        let out = self.edit_canvas(|c| edit(c.state))?;
        self.version += 1;
        Ok(out)
    }

    /// The grid parameters the model runs with: the user's, with rain off when `rain` is off.
    pub fn effective_grid_params(&self) -> Params {
        effective(&self.grid_params, self.rain)
    }

    /// Which backend runs the grid model.
    pub fn backend(&self) -> BackendKind {
        if self.gpu_ctx.is_some() { BackendKind::Gpu } else { BackendKind::Cpu }
    }

    /// Runs the grid model on `ctx`'s device from now on (`None`: on the CPU). The state moves
    /// to the new backend; a model the GPU cannot run is an error and leaves the CPU in charge.
    pub fn set_backend(&mut self, ctx: Option<Arc<GpuContext>>) -> Result<(), WorldError> {
        self.grid.use_cpu()?;
        self.gpu_ctx = None;
        if let Some(ctx) = ctx {
            self.grid.use_gpu(ctx.clone())?;
            self.gpu_ctx = Some(ctx);
        }
        Ok(())
    }

    /// The GPU device the grid model runs on, if any.
    pub fn gpu_context(&self) -> Option<Arc<GpuContext>> {
        self.gpu_ctx.clone()
    }

    /// The GPU simulator, when the grid model runs there and is built.
    pub fn gpu_sim(&self) -> Option<&GpuSim> {
        self.grid.gpu_sim()
    }

    /// Copies the GPU's state into `state` (no-op on the CPU).
    pub fn sync_from_gpu(&mut self) -> Result<(), WorldError> {
        Ok(self.grid.sync()?)
    }

    /// Reads back from the GPU what a view with `overlay` shows: terrain, water, sediment, the
    /// eroded and deposited maps and the books (5 of the state's ~24 fields); the flow, velocity
    /// and hardness overlays need the whole state. The rest stays on the device until a full
    /// [`World::sync_from_gpu`] (which edits, saves and switches make).
    pub fn sync_view_from_gpu(&mut self, overlay: Overlay) -> Result<(), WorldError> {
        match overlay {
            Overlay::Flow | Overlay::Velocity | Overlay::Hardness => Ok(self.grid.sync()?),
            _ => Ok(self.grid.sync_maps(&["height", "water", "sediment", "erosion", "deposition"])?),
        }
    }

    /// (undo steps, redo steps) available.
    pub fn history_depth(&self) -> (usize, usize) {
        self.history.depth()
    }

    /// Applies one action.
    pub fn apply(&mut self, action: Action) -> Result<(), WorldError> {
        match action {
            Action::StrokeBegin { x, y } => self.stroke_begin(x, y)?,
            Action::StrokeTo { x, y } => self.stroke_to(x, y)?,
            Action::StrokeEnd => self.stroke_end()?,
            Action::PlaceSource { x, y, rate } => {
                let mut s = self.grid_params.sources.clone();
                s.push(Source { x: f64::from(x), y: f64::from(y), radius: 2.0, rate, units: Units::Cells });
                self.set_sources(s)?;
            }
            Action::MoveSource { index, x, y } => {
                let mut s = self.grid_params.sources.clone();
                let src = s.get_mut(index).ok_or(WorldError::NoSource(index))?;
                (src.x, src.y, src.units) = (f64::from(x), f64::from(y), Units::Cells);
                self.set_sources(s)?;
            }
            Action::SetSourceRate { index, rate } => {
                let mut s = self.grid_params.sources.clone();
                s.get_mut(index).ok_or(WorldError::NoSource(index))?.rate = rate;
                self.set_sources(s)?;
            }
            Action::RemoveSource { index } => {
                let mut s = self.grid_params.sources.clone();
                if index >= s.len() {
                    return Err(WorldError::NoSource(index));
                }
                s.remove(index);
                self.set_sources(s)?;
            }
            Action::Undo => {
                if let Some(e) = self.history.undo() {
                    self.replay(&e, true)?;
                }
            }
            Action::Redo => {
                if let Some(e) = self.history.redo() {
                    self.replay(&e, false)?;
                }
            }
            Action::SetBrush(b) => self.brush = b,
            Action::SetGridParams(p) => {
                p.validate()?;
                // the run takes them first: parameters it refuses leave the old ones in place
                self.grid.set_params(effective(&p, self.rain))?;
                self.grid_params = *p;
            }
            Action::SetDropletParams(p) => {
                p.validate()?;
                self.droplet_params = *p;
                self.restart_run()?;
            }
            Action::SetStreamPowerParams(p) => {
                p.validate()?;
                p.edges()?;
                self.stream_power_params = *p;
                self.restart_run()?;
            }
            Action::SetMadeParams(name, table) => {
                let maker = ModelKind::named(name).and_then(ModelKind::maker);
                let maker = maker.ok_or_else(|| SimError::Params(format!("no model `{name}` to set parameters of")))?;
                (maker.check)(&table)?;
                self.made_params.insert(name, *table);
                self.restart_run()?;
            }
            Action::SetModel(m) => {
                self.sync_from_gpu()?;
                self.model = m;
                self.run = None;
            }
            Action::SetRain(on) => {
                self.grid.set_params(effective(&self.grid_params, on))?;
                self.rain = on;
            }
            Action::SetIterationsPerTick(n) => self.iterations_per_tick = n.max(1),
            Action::SetDropletsPerTick(n) => self.droplets_per_tick = n.max(1),
        }
        Ok(())
    }

    /// Parameters or sources changed: the simulators are rebuilt from the state.
    fn rebuild(&mut self) -> Result<(), WorldError> {
        Ok(self.grid.set_params(self.effective_grid_params())?)
    }

    fn set_sources(&mut self, after: Vec<Source>) -> Result<(), WorldError> {
        let mut p = self.grid_params.clone();
        p.sources = after.clone();
        p.validate()?;
        let before = std::mem::replace(&mut self.grid_params.sources, after.clone());
        self.history.push(Edit::Sources { before, after });
        self.rebuild()
    }

    fn replay(&mut self, e: &Edit, undo: bool) -> Result<(), WorldError> {
        match e {
            Edit::Stroke(patch) => {
                self.edit_canvas(|c| patch.write(c, undo))?;
                self.after_edit(patch.field)?;
            }
            Edit::Sources { before, after } => {
                self.grid_params.sources = if undo { before.clone() } else { after.clone() };
                self.rebuild()?;
            }
        }
        Ok(())
    }

    fn stroke_begin(&mut self, x: f32, y: f32) -> Result<(), WorldError> {
        if self.stroke.is_some() {
            self.stroke_end()?;
        }
        let field = self.brush.kind.field();
        let created = field == Field::Rain && self.state().rain_map.is_none();
        let before = self.edit_canvas(|c| {
            let before = brush::field_mut(c, field).clone();
            if created {
                c.state.rain_map = None;
            }
            before
        })?;
        let flatten_to = self.height_at(x, y);
        self.stroke = Some(Stroke { field, before, created, last: (x, y), flatten_to });
        self.dab(x, y)
    }

    fn stroke_to(&mut self, x: f32, y: f32) -> Result<(), WorldError> {
        let Some(s) = &self.stroke else { return self.stroke_begin(x, y) };
        let points = brush::dabs_between(s.last, (x, y), self.brush.radius);
        for (px, py) in points {
            self.dab(px, py)?;
        }
        if let Some(s) = &mut self.stroke {
            s.last = (x, y);
        }
        Ok(())
    }

    fn dab(&mut self, x: f32, y: f32) -> Result<(), WorldError> {
        let Some(s) = &self.stroke else { return Ok(()) };
        let flatten_to = s.flatten_to;
        if self.brush.kind == BrushKind::Rain && self.grid_params.rain_mode != RainMode::Map {
            self.grid_params.rain_mode = RainMode::Map;
        }
        // the books move with each dab, by what it alone changed: the model may run between dabs
        let b = self.brush;
        if self.edit_canvas(|c| brush::dab(c, &b, x, y, flatten_to))? {
            self.version += 1;
            self.push_edit_to_models(self.brush.kind.field())?;
        }
        Ok(())
    }

    fn stroke_end(&mut self) -> Result<(), WorldError> {
        let Some(s) = self.stroke.take() else { return Ok(()) };
        let now = self.edit_canvas(|c| brush::field_mut(c, s.field).clone())?;
        if let Some(p) = diff(s.field, self.state().width, &s.before, &now, s.created) {
            self.history.push(Edit::Stroke(p));
        }
        if s.field == Field::Rain {
            self.rebuild()?;
        }
        Ok(())
    }

    /// Edits what brushes paint on (the grid state, read back from the GPU first and written
    /// back after, and the uplift map). An edit is not erosion: the books' starting volumes move
    /// with it so they still balance.
    fn edit_canvas<T>(&mut self, edit: impl FnOnce(&mut Canvas<'_>) -> T) -> Result<T, WorldError> {
        let uplift = &mut self.uplift;
        Ok(self.grid.edit(|st| {
            let (soil, water) = (st.soil_volume(), st.water_volume());
            let out = edit(&mut Canvas { state: st, uplift });
            st.start_soil += st.soil_volume() - soil;
            st.start_water += st.water_volume() - water;
            out
        })?)
    }

    fn after_edit(&mut self, field: Field) -> Result<(), WorldError> {
        self.version += 1;
        self.push_edit_to_models(field)?;
        if field == Field::Rain {
            self.rebuild()?;
        }
        Ok(())
    }

    /// Brings an edit of the grid state to the run of another model, which keeps its own copy.
    fn push_edit_to_models(&mut self, field: Field) -> Result<(), WorldError> {
        if let Some(run) = &mut self.run {
            let st = self.grid.state();
            let (name, values) = match field {
                Field::Terrain => ("height", &st.terrain),
                Field::Hardness => ("hardness", &st.hardness),
                Field::Uplift => ("uplift", &self.uplift),
                Field::Rain => match &st.rain_map {
                    Some(rain) => ("rain", rain),
                    None => return Ok(()),
                },
                Field::Water => return Ok(()),
            };
            // each model takes the maps it has (the droplets no uplift, stream power no rain)
            if run.editable().contains(&name) {
                run.set_map(name, values)?;
            }
        }
        Ok(())
    }

    /// Bilinear terrain height at a point, cells (clamped to the grid).
    pub fn height_at(&self, x: f32, y: f32) -> f32 {
        let st = self.state();
        let (w, h) = (st.width, st.height);
        let c = ((x - 0.5).clamp(0.0, (w - 1) as f32)) as usize;
        let r = ((y - 0.5).clamp(0.0, (h - 1) as f32)) as usize;
        st.terrain[r * w + c]
    }

    /// Runs one tick of the model: `iterations_per_tick` grid iterations or stream-power steps,
    /// or `droplets_per_tick` droplets. Returns the units run.
    pub fn tick(&mut self) -> Result<u64, WorldError> {
        match self.model {
            ModelKind::Grid => self.tick_grid(),
            _ => self.tick_run(),
        }
    }

    /// The droplet or stream-power model's run, when it is the model and has ticked.
    pub fn run(&self) -> Option<&dyn Model> {
        self.run.as_deref()
    }

    /// The droplet or stream-power model's run from checkpoint `bytes` (a session's; written
    /// with the parameters the world holds now).
    pub fn resume_run(&mut self, bytes: &[u8], max_cells: u64) -> Result<(), WorldError> {
        let run: Box<dyn Model> = match self.model {
            ModelKind::Grid => return Ok(()),
            ModelKind::Droplet => Box::new(DropletRun::resume(self.droplet_run_params(), bytes, max_cells)?),
            ModelKind::StreamPower => {
                Box::new(StreamPowerRun::resume(self.stream_power_params.clone(), bytes, max_cells)?)
            }
            ModelKind::Made(name) => match self.model.maker() {
                Some(maker) => (maker.resume)(&self.made_table(name), bytes, max_cells)?,
                None => return Ok(()),
            },
        };
        if run.shape().map(|(w, h, _)| (w, h)) != Some((self.state().width, self.state().height)) {
            return Err(WorldError::Sim(SimError::Params(format!(
                "the saved {} run is not the size of the terrain",
                run.name()
            ))));
        }
        self.run = Some(run);
        Ok(())
    }

    /// The droplet model's run from a droplet state (a session of an older viewer).
    pub fn adopt_droplet_state(&mut self, d: droplet::State) -> Result<(), WorldError> {
        if (d.width, d.height) != (self.state().width, self.state().height) {
            return Err(WorldError::Sim(SimError::Params(
                "the saved droplet run is not the size of the terrain".into(),
            )));
        }
        self.run = Some(Box::new(DropletRun::new(self.droplet_run_params(), d)?));
        Ok(())
    }

    /// The parameters of made model `name` (its first preset if none were set).
    fn made_table(&self, name: &str) -> Table {
        self.made_params.get(name).cloned().unwrap_or_default()
    }

    /// The droplet parameters the run takes: the droplets run on the grid state's heights,
    /// which are relative to its reference (the input's lowest height: the floor an unset
    /// `min_height` means, as in the CLI).
    fn droplet_run_params(&self) -> droplet::Params {
        let reference = self.state().reference_height;
        let mut p = self.droplet_params.clone().with_floor_at(reference);
        p.min_height -= reference;
        p
    }

    /// The run of the droplet or stream-power model, made from the grid state's maps: its
    /// terrain, hardness (and the rain map where it rains by map), the painted uplift.
    fn start_run(&mut self) -> Result<Box<dyn Model>, WorldError> {
        self.sync_from_gpu()?;
        let st = self.grid.state();
        let (terrain, nodata) = (st.grid(&st.terrain), st.nodata.as_deref());
        Ok(match self.model {
            ModelKind::Droplet => {
                let maps = droplet::StartMaps { nodata, ..droplet::StartMaps::default() };
                let mut d = droplet::State::with_maps(&terrain, maps)?;
                d.hardness = Some(st.hardness.clone());
                d.rain = st.rain_map.clone().filter(|_| self.grid_params.rain_mode == RainMode::Map);
                Box::new(DropletRun::new(self.droplet_run_params(), d)?)
            }
            ModelKind::Grid => {
                return Err(WorldError::Sim(SimError::Params("the grid model runs on the world's own state".into())));
            }
            ModelKind::StreamPower => {
                let (hardness, uplift) = (st.grid(&st.hardness), st.grid(&self.uplift));
                let maps = stream_power::StartMaps {
                    uplift: Some(&uplift),
                    hardness: Some(&hardness),
                    nodata,
                    ..stream_power::StartMaps::default()
                };
                let p = self.stream_power_params.clone();
                let sp = stream_power::State::with_maps(&terrain, maps, p.rock_erodibility)?;
                Box::new(StreamPowerRun::new(p, sp)?)
            }
            ModelKind::Made(name) => {
                let Some(maker) = self.model.maker() else {
                    return Err(WorldError::Sim(SimError::Params(format!("no model `{name}` in the list"))));
                };
                // the input maps it reads that the world has
                let mut have = vec![("hardness", st.grid(&st.hardness)), ("uplift", st.grid(&self.uplift))];
                if let Some(rain) = &st.rain_map {
                    have.push(("rain", st.grid(rain)));
                }
                let maps: Vec<(&'static str, &erode::Grid<f32>)> = have
                    .iter()
                    .filter(|(n, _)| maker.maps.iter().any(|doc| doc.name == *n))
                    .map(|(n, g)| (*n, g))
                    .collect();
                (maker.start)(&self.made_table(name), &Inputs { terrain: &terrain, nodata, maps: &maps })?
            }
        })
    }

    /// New parameters: the next tick starts the run again from the terrain as it is now (the
    /// grid state follows the run's after every tick), its erosion maps and books from zero.
    fn restart_run(&mut self) -> Result<(), WorldError> {
        self.sync_from_gpu()?;
        self.run = None;
        Ok(())
    }

    fn tick_run(&mut self) -> Result<u64, WorldError> {
        let n = match self.model.unit() {
            Unit::Droplet => {
                let dry = self.state().rain_map.as_ref().is_some_and(|r| !r.iter().any(|&v| v > 0.0))
                    && self.grid_params.rain_mode == RainMode::Map;
                if !self.rain || dry {
                    return Ok(0);
                }
                u64::from(self.droplets_per_tick)
            }
            _ => u64::from(self.iterations_per_tick),
        };
        if self.run.is_none() {
            self.run = Some(self.start_run()?);
        }
        let Some(run) = &mut self.run else { return Ok(0) };
        run.advance(n, &mut |_| {})?;
        run.sync()?;
        // the grid state shows the model's terrain; its books keep up with the change
        if let Some((_, height)) = run.maps().into_iter().next() {
            self.grid.edit(|st| {
                let soil = st.soil_volume();
                st.terrain.copy_from_slice(&height);
                st.start_soil += st.soil_volume() - soil;
            })?;
        }
        self.version += 1;
        Ok(n)
    }

    fn tick_grid(&mut self) -> Result<u64, WorldError> {
        let n = u64::from(self.iterations_per_tick);
        self.grid.advance(n, &mut |_| {})?;
        // on the GPU the renderer draws the device's buffers: nothing to upload
        if self.gpu_ctx.is_none() {
            self.version += 1;
        }
        Ok(n)
    }

    /// Values of an overlay, one per cell (from the GPU's last read-back on that backend).
    pub fn overlay_values(&self, o: Overlay) -> Option<Vec<f32>> {
        let st = self.state();
        // the run's own maps where it has them: the droplets' erosion, deposition and visits;
        // stream power's rivers by their drainage area, its erosion as a rate (m/yr)
        if let Some(run) = &self.run {
            let name = match (self.model, o) {
                (ModelKind::Droplet, Overlay::Erosion) => "erosion",
                (ModelKind::Droplet, Overlay::Deposition) => "deposition",
                (ModelKind::Droplet, Overlay::Flow) => "flow",
                (ModelKind::StreamPower, Overlay::Flow) => "drainage_area",
                (ModelKind::StreamPower, Overlay::Erosion) => "erosion_rate",
                _ => "",
            };
            // (the flow overlay is drawn on a log scale: the drainage area as it is)
            if let Some((_, values)) = run.maps().into_iter().find(|(n, _)| *n == name) {
                return Some(values);
            }
        }
        Some(match o {
            Overlay::None => return None,
            Overlay::Uplift => self.uplift.clone(),
            Overlay::Erosion => st.eroded.clone(),
            Overlay::Deposition => st.deposited.clone(),
            Overlay::Flow => st.flow(),
            Overlay::Velocity => st.speed(),
            Overlay::Hardness => st.hardness.clone(),
            Overlay::Sediment => st.sediment.clone(),
            Overlay::Rain => st.rain_map.clone().unwrap_or_else(|| vec![0.0; st.len()]),
        })
    }

    /// The units run so far: grid iterations, droplets or stream-power steps.
    pub fn progress(&self) -> u64 {
        match &self.run {
            Some(run) => run.done(),
            None if self.model != ModelKind::Grid => 0,
            None => self.grid.done(),
        }
    }
}

/// Height range of a terrain, m (at least 1).
pub fn relief(t: &[f32]) -> f32 {
    let (lo, hi) = t.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    (hi - lo).max(1.0)
}

/// The grid parameters a run takes: `params`, with rain off when `rain` is off.
fn effective(params: &Params, rain: bool) -> Params {
    let mut p = params.clone();
    if !rain {
        p.rain_mode = RainMode::Off;
    }
    p
}
