//! `erode.Model`: every model under the library's model contract, the base of the classes of the
//! grid, droplet, stream-power and SPH models and the maker of the others by name. What a run
//! does (run in batches that Ctrl-C and a progress callback can stop, books, maps, edits,
//! checkpoints) is written here once.

use std::time::Instant;

use erode::Grid;
use erode::contract::{DropletRun, GridRun, Model, SphRun, StreamPowerRun, advance_len};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::convert::{array_of, cell_size_of, heights_of, sets, value_error, values_of, wide_array_of};

/// Seconds of simulation between two looks at Ctrl-C and the progress callback.
const BATCH_SECONDS: f64 = 0.1;

/// One model's run, by kind: the classes that know a model reach its own state through it.
pub enum Run {
    /// The grid model.
    Grid(Box<GridRun>),
    /// The droplet model.
    Droplet(Box<DropletRun>),
    /// The stream-power model.
    StreamPower(Box<StreamPowerRun>),
    /// The SPH model.
    Sph(Box<SphRun>),
    /// A model made by name from the models' list.
    Made(Box<dyn Model>),
}

impl Run {
    fn model(&self) -> &dyn Model {
        match self {
            Run::Grid(r) => r.as_ref(),
            Run::Droplet(r) => r.as_ref(),
            Run::StreamPower(r) => r.as_ref(),
            Run::Sph(r) => r.as_ref(),
            Run::Made(r) => r.as_ref(),
        }
    }

    fn model_mut(&mut self) -> &mut dyn Model {
        match self {
            Run::Grid(r) => r.as_mut(),
            Run::Droplet(r) => r.as_mut(),
            Run::StreamPower(r) => r.as_mut(),
            Run::Sph(r) => r.as_mut(),
            Run::Made(r) => r.as_mut(),
        }
    }
}

/// A model of the models' list made from its name (`erode.models()` lists every model), and the
/// base of `Grid`, `Droplets`, `StreamPower` and `Sph`.
///
/// Model(name, terrain, *, cell_size=1.0, preset=None, maps=None, params=None, **parameters):
/// terrain a 2-D float32 or float64 array of heights in metres (NaN: no data); cell_size a
/// number, (x, y) or a Georef; maps a dict of input maps by name (e.g. {"hardness": array}),
/// each of the terrain's shape; parameters as in `erode params NAME`, read as the command
/// line's `--set`. Maps come back float64 when the terrain was float64, else float32.
#[pyclass(name = "Model", module = "erode", subclass)]
pub struct PyModel {
    /// The run.
    pub run: Run,
    /// Cells outside the domain, NaN in the maps given back.
    pub nodata: Option<Vec<bool>>,
    /// Whether the maps come back as float64.
    pub wide: bool,
}

impl PyModel {
    /// A run whose maps have `nodata` cells and come back float64 when `wide`.
    pub fn new(run: Run, nodata: Option<&[bool]>, wide: bool) -> Self {
        Self { run, nodata: nodata.map(<[bool]>::to_vec), wide }
    }

    /// The model, for the classes' own getters.
    pub fn run_model(&self) -> &dyn Model {
        self.run.model()
    }

    /// The model's columns and rows, or a `ValueError` for a model of a mesh.
    fn shape(&self) -> PyResult<(usize, usize)> {
        let (w, h, _) = self.run.model().shape().ok_or_else(|| value_error("this model gives no maps"))?;
        Ok((w, h))
    }

    /// The output map `name` as an array (the stream-power model's height in its own `f64`).
    fn map_array<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        let shape = self.shape()?;
        if let (Run::StreamPower(r), "height", true) = (&self.run, name, self.wide) {
            return wide_array_of(py, shape, r.state().terrain.clone(), self.nodata.as_deref()).map(Some);
        }
        let Some(field) = self.run.model().map(name) else { return Ok(None) };
        array_of(py, shape, field, self.nodata.as_deref(), self.wide).map(Some)
    }
}

/// The maker of the model `name`, or a `ValueError` naming the models that have one.
fn maker_of(name: &str) -> PyResult<erode::models::make::Maker> {
    match erode::models::info::find(name).and_then(|i| i.make) {
        Some(m) => Ok(m),
        None => {
            let made: Vec<&str> = erode::models::MODELS.iter().filter(|m| m.make.is_some()).map(|m| m.name).collect();
            Err(value_error(format!("erode.Model(\"{name}\"): models made by name are {}", made.join(", "))))
        }
    }
}

/// The parameters of `name`'s `preset` (its first when `None`) with `params` and the keyword
/// arguments applied, as `--set` would.
fn made_params(
    name: &str,
    maker: &erode::models::make::Maker,
    preset: Option<&str>,
    params: Option<&Bound<'_, PyDict>>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<erode::models::make::Table> {
    let presets = erode::models::info::find(name).map_or_else(Vec::new, |i| (i.presets)());
    let preset = preset.or(presets.first().map(|p| p.0)).unwrap_or_default();
    let base = (maker.preset)(preset).map_err(value_error)?;
    let table = erode_io::params::load_table(&base, None, &sets(params, kwargs)?, maker.read).map_err(value_error)?;
    (maker.check)(&table).map_err(value_error)?;
    Ok(table)
}

#[pymethods]
impl PyModel {
    #[new]
    #[pyo3(signature = (name, terrain, *, cell_size = None, preset = None, maps = None, params = None, **kwargs))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments
    fn py_new(
        name: &str,
        terrain: &Bound<'_, PyAny>,
        cell_size: Option<&Bound<'_, PyAny>>,
        preset: Option<&str>,
        maps: Option<&Bound<'_, PyDict>>,
        params: Option<&Bound<'_, PyDict>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let maker = maker_of(name)?;
        let table = made_params(name, &maker, preset, params, kwargs)?;
        let cell = cell_size_of(cell_size)?;
        let heights = heights_of(terrain, "terrain", cell)?;
        let mut grids: Vec<(&'static str, Grid<f32>)> = Vec::new();
        for (k, v) in maps.into_iter().flat_map(|d| d.iter()) {
            let key: String = k.extract()?;
            let Some(doc) = maker.maps.iter().find(|m| m.name == key) else {
                let known: Vec<&str> = maker.maps.iter().map(|m| m.name).collect();
                return Err(value_error(format!("maps: the {name} model reads {}, not {key}", known.join(", "))));
            };
            grids.push((doc.name, values_of(&v, doc.name, cell)?.grid));
        }
        let refs: Vec<(&'static str, &Grid<f32>)> = grids.iter().map(|(n, g)| (*n, g)).collect();
        let map = &heights.map;
        let inputs = erode::models::make::Inputs { terrain: &map.heights, nodata: map.nodata_mask(), maps: &refs };
        let run = (maker.start)(&table, &inputs).map_err(value_error)?;
        Ok(Self::new(Run::Made(run), map.nodata_mask(), heights.wide.is_some()))
    }

    /// Model.resume(name, data, *, preset=None, params=None, **parameters): the model `name`
    /// from its checkpoint `data`, with the parameters it was run with.
    #[staticmethod]
    #[pyo3(signature = (name, data, *, preset = None, params = None, **kwargs))]
    fn resume(
        name: &str,
        data: &[u8],
        preset: Option<&str>,
        params: Option<&Bound<'_, PyDict>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let maker = maker_of(name)?;
        let table = made_params(name, &maker, preset, params, kwargs)?;
        let run = (maker.resume)(&table, data, u64::MAX).map_err(value_error)?;
        Ok(Self::new(Run::Made(run), None, false))
    }

    /// run(n, *, progress=None): runs `n` more units (iterations, droplets or steps: `unit`)
    /// with the GIL released, in batches of about a tenth of a second. After each batch Ctrl-C
    /// (KeyboardInterrupt) stops the run and `progress(done, total)` is called, `done` the units
    /// done since the model's start and `total` where this run ends; an exception it raises
    /// stops the run too. A stopped run keeps every finished batch and goes on with the next
    /// `run` to the same result as one unbroken run.
    #[pyo3(signature = (n, *, progress = None))]
    fn run(&mut self, py: Python<'_>, n: u64, progress: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let model = self.run.model_mut();
        let total = model.done().saturating_add(n);
        let granule = model.granule();
        let mut batch = 1;
        let outcome = loop {
            let done = model.done();
            if done >= total {
                break Ok(());
            }
            let len = advance_len(done, batch, granule, total - done);
            let started = Instant::now();
            if let Err(e) = py.detach(|| model.advance(len, &mut |_| {})) {
                break Err(value_error(e));
            }
            let per_unit = started.elapsed().as_secs_f64() / len as f64;
            batch = ((BATCH_SECONDS / per_unit.max(1e-9)) as u64).clamp(1, 1 << 20);
            if let Err(e) = py.check_signals() {
                break Err(e);
            }
            if let Some(callback) = progress
                && let Err(e) = callback.call1((model.done(), total))
            {
                break Err(e);
            }
        };
        py.detach(|| model.sync()).map_err(value_error)?;
        outcome
    }

    /// The model's name.
    #[getter]
    fn name(&self) -> &'static str {
        self.run.model().name()
    }

    /// What `run` counts: "iteration", "droplet" or "step".
    #[getter]
    fn unit(&self) -> &'static str {
        self.run.model().unit().name()
    }

    /// Units run since the model's start.
    #[getter]
    fn done(&self) -> u64 {
        self.run.model().done()
    }

    /// The books: `relative_error` and each named term (volumes in m³, ratios).
    fn books<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let b = self.run.model().balance();
        let d = PyDict::new(py);
        d.set_item("relative_error", b.relative_error)?;
        for t in &b.terms {
            d.set_item(t.name, t.value)?;
        }
        Ok(d)
    }

    /// Every output map by name (`erode.Model.map` of each), each a (rows, columns) array, NaN
    /// where the terrain had no data.
    fn maps<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let names = erode::models::info::find(self.run.model().name()).map_or(&[][..], |m| m.maps);
        for doc in names {
            if let Some(a) = self.map_array(py, doc.name)? {
                d.set_item(doc.name, a)?;
            }
        }
        Ok(d)
    }

    /// map(name): the output map `name` (one of `maps()`), a (rows, columns) array.
    fn map<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        self.map_array(py, name)?.ok_or_else(|| {
            let names = erode::models::info::find(self.run.model().name()).map_or(&[][..], |m| m.maps);
            let known: Vec<&str> = names.iter().map(|d| d.name).collect();
            value_error(format!("the {} model gives {}, not {name}", self.run.model().name(), known.join(", ")))
        })
    }

    /// The maps `set_map` takes.
    #[getter]
    fn editable(&self) -> Vec<&'static str> {
        self.run.model().editable().to_vec()
    }

    /// set_map(name, values): replaces the map `name` (one of `editable`: the height in metres,
    /// or an input map) between runs, as the viewer's brush does; the books move with it.
    /// Cells without data keep theirs.
    fn set_map(&mut self, name: &str, values: &Bound<'_, PyAny>) -> PyResult<()> {
        let (w, h, cell) = self.run.model().shape().ok_or_else(|| value_error("this model has no maps to set"))?;
        let given = values_of(values, name, cell)?;
        if (given.grid.width(), given.grid.height()) != (w, h) {
            return Err(value_error(format!(
                "{name}: {} rows x {} columns for a model of {h} x {w}",
                given.grid.height(),
                given.grid.width()
            )));
        }
        let outside = |i: usize| self.nodata.as_ref().is_some_and(|m| m[i]);
        if let (Run::StreamPower(r), "height", Some(wide)) = (&mut self.run, name, &given.wide) {
            return r.set_heights(wide).map_err(value_error);
        }
        let mut field = given.grid.as_slice().to_vec();
        if self.nodata.is_some() {
            let current = self.run.model().map(name).unwrap_or_else(|| vec![0.0; field.len()]);
            for (i, v) in field.iter_mut().enumerate().filter(|(i, _)| outside(*i)) {
                *v = current[i];
            }
        }
        self.run.model_mut().set_map(name, &field).map_err(value_error)
    }

    /// The state as checkpoint bytes, for `resume`.
    fn checkpoint<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.run.model().checkpoint())
    }
}
