//! The `erode` Python module: the library's models under its model contract, with numpy arrays
//! in and out.
//!
//! ```python
//! import numpy as np, erode
//! sim = erode.Grid(terrain.astype(np.float32), cell_size=2.0, preset="rivers", rain_rate=2e-5)
//! sim.run(500)               # the GIL is released while it runs
//! height = sim.maps()["height"]
//! ```
//!
//! Parameters are keyword arguments (or a `params` dict) read exactly as the command line's
//! `--set key=value`, so unknown keys and bad values raise `ValueError` with the command line's
//! message. Heights are metres, cell sizes metres, time seconds.

use std::path::PathBuf;

use erode::contract::{DropletRun, GridRun, Model, SphRun, StreamPowerRun};
use erode::models::{droplet, grid, sph, stream_power};
use erode::{CellSize, Grid, Heightmap};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyString};

/// An error of the library as Python's `ValueError`, with its message on one line.
fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string().replace('\n', " "))
}

/// An error reading or writing a file as Python's `OSError`.
fn os_error(e: erode_io::Error) -> PyErr {
    PyOSError::new_err(e.to_string().replace('\n', " "))
}

/// One Python value as the text of a `--set key=value`.
fn set_value(key: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    if v.is_instance_of::<PyBool>() {
        Ok(if v.extract::<bool>()? { "true" } else { "false" }.to_string())
    } else if v.is_instance_of::<PyInt>() {
        Ok(v.extract::<i64>()?.to_string())
    } else if v.is_instance_of::<PyFloat>() {
        let x: f64 = v.extract()?;
        Ok(if x.is_nan() { "nan".to_string() } else { format!("{x:?}") })
    } else if v.is_instance_of::<PyString>() {
        let s: String = v.extract()?;
        Ok(format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\"")))
    } else {
        let kind = v.get_type().name()?;
        Err(PyTypeError::new_err(format!("parameter {key}: a bool, int, float or str, not {kind}")))
    }
}

/// `base` with the `params` dict and then the keyword arguments applied, as `--set` would.
fn with_params<P>(base: &P, params: Option<&Bound<'_, PyDict>>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<P>
where
    P: serde::Serialize + serde::de::DeserializeOwned,
{
    let mut sets = Vec::new();
    for dict in [params, kwargs].into_iter().flatten() {
        for (k, v) in dict.iter() {
            let key: String = k.extract()?;
            sets.push(format!("{key}={}", set_value(&key, &v)?));
        }
    }
    erode_io::params::apply_sets(base, &sets).map_err(value_error)
}

/// A 2-D float32 numpy array as a grid of `cell_size` metres (copied once, C or Fortran order
/// alike); `what` names it in errors.
fn grid_of(array: &Bound<'_, PyAny>, what: &str, cell_size: f64) -> PyResult<Grid<f32>> {
    let Ok(a) = array.extract::<PyReadonlyArray2<'_, f32>>() else {
        let found = match array.getattr("dtype") {
            Ok(dtype) => format!("an array of {} with {} dimensions", dtype.str()?, array.getattr("ndim")?.str()?),
            Err(_) => array.get_type().name()?.to_string(),
        };
        return Err(PyTypeError::new_err(format!(
            "{what}: a 2-D numpy array of float32 (rows, columns), not {found}; use .astype(numpy.float32)"
        )));
    };
    // the one check of a cell size, as the command line and files have it
    CellSize::square(cell_size).check().map_err(|e| value_error(format!("cell_size: {e}")))?;
    let [rows, cols] = [a.shape()[0], a.shape()[1]];
    let values: Vec<f32> = a.as_array().iter().copied().collect();
    Grid::from_vec(cols, rows, CellSize::square(cell_size), values).map_err(|e| value_error(format!("{what}: {e}")))
}

/// A 2-D float32 numpy array as a heightmap of `cell_size` metres; NaN cells have no data.
fn heightmap(array: &Bound<'_, PyAny>, what: &str, cell_size: f64) -> PyResult<Heightmap> {
    let grid = grid_of(array, what, cell_size)?;
    let mask: Vec<bool> = grid.as_slice().iter().map(|v| v.is_nan()).collect();
    Heightmap::with_nodata(grid, Some(mask)).map_err(|e| value_error(format!("{what}: {e}")))
}

/// An optional map (hardness, rain) of the terrain's cell size.
fn optional_map(array: Option<&Bound<'_, PyAny>>, what: &str, cell_size: f64) -> PyResult<Option<Grid<f32>>> {
    array.map(|a| grid_of(a, what, cell_size)).transpose()
}

/// A row-major field of `map`'s shape as a (rows, columns) numpy array, NaN where `map` has no
/// data; the vector becomes the array's memory (no copy).
fn array<'py>(
    py: Python<'py>,
    width: usize,
    height: usize,
    mut field: Vec<f32>,
    nodata: Option<&[bool]>,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    if let Some(mask) = nodata {
        field.iter_mut().zip(mask).filter(|(_, o)| **o).for_each(|(v, _)| *v = f32::NAN);
    }
    let a = Array2::from_shape_vec((height, width), field).map_err(value_error)?;
    Ok(a.into_pyarray(py))
}

/// The books as a dict: `relative_error` and each named term.
fn books<'py>(py: Python<'py>, model: &dyn Model) -> PyResult<Bound<'py, PyDict>> {
    let b = model.balance();
    let d = PyDict::new(py);
    d.set_item("relative_error", b.relative_error)?;
    for t in &b.terms {
        d.set_item(t.name, t.value)?;
    }
    Ok(d)
}

/// Runs `n` units of `model` with the GIL released.
fn advance(py: Python<'_>, model: &mut impl Model, n: u64) -> PyResult<()> {
    py.detach(|| model.advance(n, &mut |_| {}).and_then(|()| model.sync())).map_err(value_error)
}

// ---------------------------------------------------------------------------------------------

/// The grid model: shallow water in virtual pipes eroding a heightmap (Mei, Decaudin & Hu 2007;
/// Jákó & Tóth 2011).
///
/// Grid(terrain, *, cell_size=1.0, preset="rivers", hardness=None, rain=None,
/// sediment_depth=None, params=None, **parameters): terrain a 2-D float32 array of heights in
/// metres (NaN: no data, outside the domain); hardness (0..1, 1 erodes least: sets hardness_mode
/// = "map", as the command line's --hardness-map), rain (>= 0, rain_rate times it: sets rain_mode =
/// "map", as --rain-map does) and
/// sediment_depth (m of loose material on the bedrock, a former run's map, in place of
/// soil_depth) arrays of the same shape; parameters as in `erode params grid`.
#[pyclass(name = "Grid", module = "erode")]
struct PyGrid {
    run: GridRun,
}

fn grid_params(
    preset: &str,
    params: Option<&Bound<'_, PyDict>>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<grid::Params> {
    let base = grid::preset(preset).map_err(value_error)?;
    let p: grid::Params = with_params(&base, params, kwargs)?;
    p.validate().map_err(value_error)?;
    Ok(p)
}

#[pymethods]
impl PyGrid {
    #[new]
    #[pyo3(signature = (terrain, *, cell_size = 1.0, preset = "rivers", hardness = None, rain = None, sediment_depth = None, params = None, **kwargs))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        terrain: &Bound<'_, PyAny>,
        cell_size: f64,
        preset: &str,
        hardness: Option<&Bound<'_, PyAny>>,
        rain: Option<&Bound<'_, PyAny>>,
        sediment_depth: Option<&Bound<'_, PyAny>>,
        params: Option<&Bound<'_, PyDict>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let mut p = grid_params(preset, params, kwargs)?;
        let map = heightmap(terrain, "terrain", cell_size)?;
        let hardness = optional_map(hardness, "hardness", cell_size)?;
        let rain = optional_map(rain, "rain", cell_size)?;
        let sediment_depth = optional_map(sediment_depth, "sediment_depth", cell_size)?;
        if hardness.is_some() {
            p = p.with_hardness_map().map_err(|e| value_error(format!("hardness: {e}")))?;
        }
        if rain.is_some() {
            p = p.with_rain_map().map_err(|e| value_error(format!("rain: {e}")))?;
        }
        let maps = grid::StartMaps {
            hardness: hardness.as_ref(),
            rain: rain.as_ref(),
            water: None,
            sediment_depth: sediment_depth.as_ref(),
            nodata: map.nodata_mask(),
        };
        let st = grid::State::new(&map.heights, &p, maps).map_err(value_error)?;
        Ok(Self { run: GridRun::new(p, st).map_err(value_error)? })
    }

    /// The run saved by `checkpoint()`, with the same parameters.
    #[staticmethod]
    #[pyo3(signature = (data, *, preset = "rivers", params = None, **kwargs))]
    fn resume(
        data: &[u8],
        preset: &str,
        params: Option<&Bound<'_, PyDict>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let p = grid_params(preset, params, kwargs)?;
        Ok(Self { run: GridRun::resume(p, data, u64::MAX).map_err(value_error)? })
    }

    /// Runs `n` more iterations (the GIL released meanwhile).
    fn run(&mut self, py: Python<'_>, n: u64) -> PyResult<()> {
        advance(py, &mut self.run, n)
    }

    /// Iterations done.
    #[getter]
    fn iterations(&self) -> u64 {
        self.run.done()
    }

    /// Seconds of storm simulated.
    #[getter]
    fn seconds(&self) -> f64 {
        self.run.state().time
    }

    /// The books: `relative_error` and the volumes (m³) and ratios they come from.
    fn books<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        books(py, &self.run)
    }

    /// The output maps by name (height, water, sediment, sediment_depth, hardness, erosion,
    /// deposition, flow, velocity), each a (rows, columns) float32 array, NaN where the input had no data.
    fn maps<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let st = self.run.state();
        maps(py, &self.run, st.width, st.height, st.nodata.as_deref())
    }

    /// The state as bytes, for `Grid.resume`.
    fn checkpoint<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.run.checkpoint())
    }
}

fn maps<'py>(
    py: Python<'py>,
    model: &dyn Model,
    width: usize,
    height: usize,
    nodata: Option<&[bool]>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, field) in model.maps() {
        d.set_item(name, array(py, width, height, field, nodata)?)?;
    }
    Ok(d)
}

// ---------------------------------------------------------------------------------------------

/// The droplet model: droplets eroding a heightmap one after another (Beyer 2015).
///
/// Droplets(terrain, *, cell_size=1.0, preset="default", hardness=None, rain=None, params=None,
/// **parameters): hardness (0..1, 1 erodes least) scales each cell's erosion, rain (>= 0) says
/// where droplets start; the floor below which nothing erodes is the terrain's lowest height
/// unless `min_height` is given, as on the command line.
#[pyclass(name = "Droplets", module = "erode")]
struct PyDroplets {
    run: DropletRun,
}

fn droplet_params(
    preset: &str,
    lowest: f64,
    params: Option<&Bound<'_, PyDict>>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<droplet::Params> {
    let base = droplet::preset(preset).map_err(value_error)?;
    let p: droplet::Params = with_params(&base, params, kwargs)?;
    let p = p.with_floor_at(lowest);
    p.validate().map_err(value_error)?;
    Ok(p)
}

#[pymethods]
impl PyDroplets {
    #[new]
    #[pyo3(signature = (terrain, *, cell_size = 1.0, preset = "default", hardness = None, rain = None, params = None, **kwargs))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        terrain: &Bound<'_, PyAny>,
        cell_size: f64,
        preset: &str,
        hardness: Option<&Bound<'_, PyAny>>,
        rain: Option<&Bound<'_, PyAny>>,
        params: Option<&Bound<'_, PyDict>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let map = heightmap(terrain, "terrain", cell_size)?;
        let p = droplet_params(preset, f64::from(map.stats().min), params, kwargs)?;
        let hardness = optional_map(hardness, "hardness", cell_size)?;
        let rain = optional_map(rain, "rain", cell_size)?;
        let maps = droplet::StartMaps { hardness: hardness.as_ref(), rain: rain.as_ref(), nodata: map.nodata_mask() };
        let st = droplet::State::with_maps(&map.heights, maps).map_err(value_error)?;
        Ok(Self { run: DropletRun::new(p, st).map_err(value_error)? })
    }

    /// The run saved by `checkpoint()`, with the same parameters (and the same `lowest` height,
    /// the floor, which the terrain gave at the start).
    #[staticmethod]
    #[pyo3(signature = (data, *, lowest, preset = "default", params = None, **kwargs))]
    fn resume(
        data: &[u8],
        lowest: f64,
        preset: &str,
        params: Option<&Bound<'_, PyDict>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let p = droplet_params(preset, lowest, params, kwargs)?;
        Ok(Self { run: DropletRun::resume(p, data, u64::MAX).map_err(value_error)? })
    }

    /// Runs `n` more droplets (the GIL released meanwhile).
    fn run(&mut self, py: Python<'_>, n: u64) -> PyResult<()> {
        advance(py, &mut self.run, n)
    }

    /// Droplets done.
    #[getter]
    fn droplets(&self) -> u64 {
        self.run.done()
    }

    /// The books: `relative_error` and the volumes (m³) and ratios they come from.
    fn books<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        books(py, &self.run)
    }

    /// The output maps by name (height, erosion, deposition, flow), each a (rows, columns)
    /// float32 array, NaN where the input had no data.
    fn maps<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let st = self.run.state();
        maps(py, &self.run, st.width, st.height, st.nodata.as_deref())
    }

    /// The state as bytes, for `Droplets.resume`.
    fn checkpoint<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.run.checkpoint())
    }
}

// ---------------------------------------------------------------------------------------------

/// The stream-power model: uplift, river incision `K·A^m·S^n` (Braun & Willett 2013) and
/// hillslope diffusion, heights in metres, time in years.
///
/// StreamPower(terrain, *, cell_size=1.0, preset="default", uplift_map=None, erodibility_map=None,
/// hardness=None, params=None, **parameters): the maps multiply the uplift rate and the
/// erodibility cell by cell (hardness converts as in the other models); one `run` unit is a step
/// of `dt_years`.
#[pyclass(name = "StreamPower", module = "erode")]
struct PyStreamPower {
    run: StreamPowerRun,
}

fn stream_power_params(
    preset: &str,
    params: Option<&Bound<'_, PyDict>>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<stream_power::Params> {
    let base = stream_power::preset(preset).map_err(value_error)?;
    let p: stream_power::Params = with_params(&base, params, kwargs)?;
    p.validate().map_err(value_error)?;
    Ok(p)
}

#[pymethods]
impl PyStreamPower {
    #[new]
    #[pyo3(signature = (terrain, *, cell_size = 1.0, preset = "default", uplift_map = None, erodibility_map = None, hardness = None, params = None, **kwargs))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        terrain: &Bound<'_, PyAny>,
        cell_size: f64,
        preset: &str,
        uplift_map: Option<&Bound<'_, PyAny>>,
        erodibility_map: Option<&Bound<'_, PyAny>>,
        hardness: Option<&Bound<'_, PyAny>>,
        params: Option<&Bound<'_, PyDict>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let map = heightmap(terrain, "terrain", cell_size)?;
        let p = stream_power_params(preset, params, kwargs)?;
        let uplift = optional_map(uplift_map, "uplift_map", cell_size)?;
        let erodibility = optional_map(erodibility_map, "erodibility_map", cell_size)?;
        let hardness = optional_map(hardness, "hardness", cell_size)?;
        let maps = stream_power::StartMaps {
            uplift: uplift.as_ref(),
            erodibility: erodibility.as_ref(),
            hardness: hardness.as_ref(),
            nodata: map.nodata_mask(),
        };
        let st = stream_power::State::with_maps(&map.heights, maps, p.rock_erodibility).map_err(value_error)?;
        Ok(Self { run: StreamPowerRun::new(p, st).map_err(value_error)? })
    }

    /// The run saved by `checkpoint()`, with the same parameters.
    #[staticmethod]
    #[pyo3(signature = (data, *, preset = "default", params = None, **kwargs))]
    fn resume(
        data: &[u8],
        preset: &str,
        params: Option<&Bound<'_, PyDict>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let p = stream_power_params(preset, params, kwargs)?;
        Ok(Self { run: StreamPowerRun::resume(p, data, u64::MAX).map_err(value_error)? })
    }

    /// Runs `n` more steps (the GIL released meanwhile).
    fn run(&mut self, py: Python<'_>, n: u64) -> PyResult<()> {
        advance(py, &mut self.run, n)
    }

    /// Steps done.
    #[getter]
    fn steps(&self) -> u64 {
        self.run.done()
    }

    /// Years simulated.
    #[getter]
    fn years(&self) -> f64 {
        self.run.state().years
    }

    /// The books: `relative_error` and the volumes (m³) they come from.
    fn books<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        books(py, &self.run)
    }

    /// The output maps by name (height, drainage_area, erosion_rate, uplift), each a (rows,
    /// columns) float32 array, NaN where the input had no data.
    fn maps<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let st = self.run.state();
        maps(py, &self.run, st.width, st.height, st.nodata.as_deref())
    }

    /// The state as bytes, for `StreamPower.resume`.
    fn checkpoint<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.run.checkpoint())
    }
}

// ---------------------------------------------------------------------------------------------

/// The SPH model: fluid particles eroding a triangle mesh (Skorkovská, Kolingerová & Beneš).
///
/// Sph(scene="tank", *, mesh=None, particles=0, faces=0, params=None, **parameters): a built-in
/// scene (lake, tunnel, tank), a scene file (.toml), or scene=None with a mesh (OBJ, PLY, STL)
/// and water over its middle or a heightmap file run as a scale model (`scale`), as `erode
/// simulate sph` starts them; 0 takes the scene's own count.
#[pyclass(name = "Sph", module = "erode")]
struct PySph {
    run: SphRun,
    scale: Option<sph::ModelScale>,
}

/// The setup of a scene, as the command line makes it.
fn sph_setup(
    scene: Option<&str>,
    mesh: Option<&std::path::Path>,
    particles: usize,
    faces: usize,
) -> PyResult<erode_io::scene::SphSetup> {
    let read = erode_io::ReadOptions::default();
    let source = erode_io::scene::SphSource { input: mesh, scene, particles, faces, read: &read };
    erode_io::scene::sph_setup(source).map_err(value_error)
}

#[pymethods]
impl PySph {
    #[new]
    #[pyo3(signature = (scene = Some("tank"), *, mesh = None, particles = 0, faces = 0, params = None, **kwargs))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        scene: Option<&str>,
        mesh: Option<PathBuf>,
        particles: usize,
        faces: usize,
        params: Option<&Bound<'_, PyDict>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let s = sph_setup(scene, mesh.as_deref(), particles, faces)?;
        let p: sph::Params = with_params(&s.params, params, kwargs)?;
        p.validate().map_err(value_error)?;
        let name = s.name.clone();
        let st = py.detach(|| s.state()).map_err(|e| value_error(format!("{name}: {e}")))?;
        if st.positions.is_empty() && st.inflow.emitters.is_empty() {
            return Err(value_error(format!("{name}: the fluid blocks hold no particle (they lie inside the solid?)")));
        }
        Ok(Self { run: SphRun::new(p, st).map_err(value_error)?, scale: s.scale })
    }

    /// The run saved by `checkpoint()`, with the same parameters.
    #[staticmethod]
    #[pyo3(signature = (data, *, scene = Some("tank"), mesh = None, params = None, **kwargs))]
    fn resume(
        data: &[u8],
        scene: Option<&str>,
        mesh: Option<PathBuf>,
        params: Option<&Bound<'_, PyDict>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let base = sph_setup(scene, mesh.as_deref(), 0, 0)?;
        let p: sph::Params = with_params(&base.params, params, kwargs)?;
        Ok(Self { run: SphRun::resume(p, data).map_err(value_error)?, scale: base.scale })
    }

    /// A heightmap's scale model: a dict of `horizontal` and `vertical` (model metres per
    /// terrain metre), `exaggeration` and `base` (the terrain's height at the model's z = 0, m);
    /// None for meshes and scenes. `mesh()` and `particles()` are in the model's metres: a
    /// terrain point is `(x / horizontal, y / horizontal, z / vertical + base)`.
    #[getter]
    fn scale<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(s) = self.scale else { return Ok(None) };
        let d = PyDict::new(py);
        d.set_item("horizontal", s.horizontal)?;
        d.set_item("vertical", s.vertical)?;
        d.set_item("exaggeration", s.exaggeration())?;
        d.set_item("base", s.base)?;
        Ok(Some(d))
    }

    /// Runs `n` more iterations (the GIL released meanwhile).
    fn run(&mut self, py: Python<'_>, n: u64) -> PyResult<()> {
        advance(py, &mut self.run, n)
    }

    /// Iterations done.
    #[getter]
    fn iterations(&self) -> u64 {
        self.run.done()
    }

    /// The books: `relative_error` and the volumes (m³) they come from.
    fn books<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        books(py, &self.run)
    }

    /// The eroded surface: (vertices, faces), an (n, 3) float64 array of metres and an (m, 3)
    /// uint32 array of vertex indices, counter-clockwise seen from outside.
    fn mesh<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let m = &self.run.state().mesh;
        let v: Vec<f64> = m.positions.iter().flat_map(|p| p.to_array()).collect();
        let f: Vec<u32> = m.faces.iter().flat_map(|f| *f).collect();
        let v = Array2::from_shape_vec((m.positions.len(), 3), v).map_err(value_error)?.into_pyarray(py);
        let f = Array2::from_shape_vec((m.faces.len(), 3), f).map_err(value_error)?.into_pyarray(py);
        Ok((v.into_any(), f.into_any()))
    }

    /// The particles' positions, an (n, 3) float64 array of metres.
    fn particles<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let p = &self.run.state().positions;
        let v: Vec<f64> = p.iter().flat_map(|p| p.to_array()).collect();
        Ok(Array2::from_shape_vec((p.len(), 3), v).map_err(value_error)?.into_pyarray(py))
    }

    /// The state as bytes, for `Sph.resume`.
    fn checkpoint<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.run.checkpoint())
    }
}

// ---------------------------------------------------------------------------------------------

/// Heights as a numpy array and the cell size (x, y) in metres.
type HeightsAndCell<'py> = (Bound<'py, PyArray2<f32>>, (f64, f64));

/// read(path, *, nodata=None) -> (heights, cell_size): a heightmap file in any format erode reads
/// (GeoTIFF, PNG, EXR, PGM, NPY, RAW) as a (rows, columns) float32 array of metres, NaN where
/// there is no data, and its cell size in metres (x, y).
#[pyfunction]
#[pyo3(signature = (path, *, nodata = None))]
fn read<'py>(py: Python<'py>, path: PathBuf, nodata: Option<f64>) -> PyResult<HeightsAndCell<'py>> {
    let options = erode_io::ReadOptions { nodata, ..Default::default() };
    let loaded = py.detach(|| erode_io::read(&path, &options)).map_err(os_error)?;
    let m = &loaded.map;
    let g = &m.heights;
    let cell = (g.cell_size().x, g.cell_size().y);
    Ok((array(py, g.width(), g.height(), g.as_slice().to_vec(), m.nodata_mask())?, cell))
}

/// write(path, heights, *, cell_size=1.0): a (rows, columns) float32 array of metres as a
/// heightmap file, the format from the extension (NaN cells written as nodata).
#[pyfunction]
#[pyo3(signature = (path, heights, *, cell_size = 1.0))]
fn write(py: Python<'_>, path: PathBuf, heights: &Bound<'_, PyAny>, cell_size: f64) -> PyResult<()> {
    let map = heightmap(heights, "heights", cell_size)?;
    py.detach(|| erode_io::write(&path, &map, &erode_io::WriteOptions::default())).map_err(os_error)
}

/// analyze(heights, *, cell_size=1.0) -> dict: what `erode analyze --json` prints for a
/// (rows, columns) float32 array of metres (NaN: no data): the slope–area fit (concavity θ,
/// R²), drainage density, closed depressions, hypsometry, fine relief.
#[pyfunction]
#[pyo3(signature = (heights, *, cell_size = 1.0))]
fn analyze<'py>(py: Python<'py>, heights: &Bound<'py, PyAny>, cell_size: f64) -> PyResult<Bound<'py, PyAny>> {
    let map = heightmap(heights, "heights", cell_size)?;
    let options = erode::analysis::Options::default();
    let analysis = py.detach(|| erode::analysis::analyze(&map, &options)).map_err(value_error)?;
    let text = serde_json::to_string(&analysis.figures).map_err(value_error)?;
    py.import("json")?.call_method1("loads", (text,))
}

/// masks(heights, *, cell_size=1.0, maps=None, curvature_scale=0.5, curvature_radius=2.0,
/// occlusion_radius=32, depth_scale=1.0) -> dict: what `erode masks --format tif` writes, as
/// float32 arrays of values 0..1 by name (NaN: no data): every mask the heights give (slope,
/// curvature, flow, wetness, occlusion, talus) and those of the run maps given in `maps`
/// (`erosion`, `deposition`, `sediment_depth`, metres, each of the terrain's shape). Each
/// mapping is in `erode masks --help` and docs/masks.md.
#[pyfunction]
#[pyo3(signature = (heights, *, cell_size = 1.0, maps = None, curvature_scale = 0.5, curvature_radius = 2.0,
    occlusion_radius = 32, depth_scale = 1.0))]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments
fn masks<'py>(
    py: Python<'py>,
    heights: &Bound<'py, PyAny>,
    cell_size: f64,
    maps: Option<&Bound<'py, PyDict>>,
    curvature_scale: f64,
    curvature_radius: f64,
    occlusion_radius: usize,
    depth_scale: f64,
) -> PyResult<Bound<'py, PyDict>> {
    use erode::texture::{Baker, Options};
    let map = heightmap(heights, "heights", cell_size)?;
    let mut run: Vec<(String, Grid<f32>)> = Vec::new();
    for (k, v) in maps.iter().flat_map(|d| d.iter()) {
        let name: String = k.extract()?;
        run.push((name.clone(), grid_of(&v, &name, cell_size)?));
    }
    let options = Options { curvature_scale, curvature_radius, occlusion_radius, depth_scale };
    let mut baker = Baker::new(&map, options).map_err(value_error)?;
    for (name, grid) in &run {
        baker = baker.with_run_map(name, grid).map_err(|e| value_error(format!("maps[\"{name}\"]: {e}")))?;
    }
    let made = py.detach(|| {
        baker
            .available()
            .into_iter()
            .map(|m| baker.mask(m).map(|v| (m.info().name, v.to_vec())))
            .collect::<Result<Vec<_>, _>>()
    });
    let out = PyDict::new(py);
    let (w, h) = (map.heights.width(), map.heights.height());
    for (name, values) in made.map_err(value_error)? {
        out.set_item(name, array(py, w, h, values, map.nodata_mask())?)?;
    }
    Ok(out)
}

/// A model of the models' list made from its name alone (`erode.models()` lists every model;
/// those with classes of their own above are made by them).
///
/// Model(name, terrain, *, cell_size=1.0, preset=None, maps=None, params=None, **parameters):
/// terrain a 2-D float32 array of heights in metres (NaN: no data); maps a dict of input maps
/// by name (e.g. {"hardness": array}), each of the terrain's shape; parameters as in `erode
/// params NAME`, read as the command line's `--set`.
#[pyclass(name = "Model", module = "erode")]
struct PyModel {
    run: Box<dyn Model>,
    nodata: Option<Vec<bool>>,
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
    let mut sets = Vec::new();
    for dict in [params, kwargs].into_iter().flatten() {
        for (k, v) in dict.iter() {
            let key: String = k.extract()?;
            sets.push(format!("{key}={}", set_value(&key, &v)?));
        }
    }
    let table = erode_io::params::load_table(&base, None, &sets, maker.read).map_err(value_error)?;
    (maker.check)(&table).map_err(value_error)?;
    Ok(table)
}

#[pymethods]
impl PyModel {
    #[new]
    #[pyo3(signature = (name, terrain, *, cell_size = 1.0, preset = None, maps = None, params = None, **kwargs))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: &str,
        terrain: &Bound<'_, PyAny>,
        cell_size: f64,
        preset: Option<&str>,
        maps: Option<&Bound<'_, PyDict>>,
        params: Option<&Bound<'_, PyDict>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let maker = maker_of(name)?;
        let table = made_params(name, &maker, preset, params, kwargs)?;
        let map = heightmap(terrain, "terrain", cell_size)?;
        let mut grids = Vec::new();
        for (k, v) in maps.into_iter().flat_map(|d| d.iter()) {
            let key: String = k.extract()?;
            let Some(doc) = maker.maps.iter().find(|m| m.name == key) else {
                let known: Vec<&str> = maker.maps.iter().map(|m| m.name).collect();
                return Err(value_error(format!("maps: the {name} model reads {}, not {key}", known.join(", "))));
            };
            grids.push((doc.name, grid_of(&v, doc.name, cell_size)?));
        }
        let refs: Vec<(&'static str, &Grid<f32>)> = grids.iter().map(|(n, g)| (*n, g)).collect();
        let inputs = erode::models::make::Inputs { terrain: &map.heights, nodata: map.nodata_mask(), maps: &refs };
        let run = (maker.start)(&table, &inputs).map_err(value_error)?;
        Ok(Self { run, nodata: map.nodata_mask().map(<[bool]>::to_vec) })
    }

    /// The model `name` from its checkpoint `data`, with the parameters it was run with.
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
        Ok(Self { run, nodata: None })
    }

    /// Runs `n` more units (iterations, droplets or steps: `unit`), the GIL released.
    fn run(&mut self, py: Python<'_>, n: u64) -> PyResult<()> {
        advance(py, &mut self.run, n)
    }

    /// The model's name.
    #[getter]
    fn name(&self) -> &'static str {
        self.run.name()
    }

    /// What `run` counts.
    #[getter]
    fn unit(&self) -> &'static str {
        self.run.unit().name()
    }

    /// Units run since the start.
    #[getter]
    fn done(&self) -> u64 {
        self.run.done()
    }

    /// The books: `relative_error` and each term.
    fn books<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        books(py, self.run.as_ref())
    }

    /// The output maps by name, each (rows, columns) float32, NaN where the terrain had no data.
    fn maps<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (width, height, _) = self.run.shape().ok_or_else(|| value_error("this model gives no maps"))?;
        maps(py, self.run.as_ref(), width, height, self.nodata.as_deref())
    }

    /// The state as checkpoint bytes, for `Model.resume`.
    fn checkpoint<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.run.checkpoint())
    }
}

/// The names of every model, in the list's order.
#[pyfunction]
fn models() -> Vec<&'static str> {
    erode::models::MODELS.iter().map(|m| m.name).collect()
}

/// Terrain erosion simulation: the grid, droplet, SPH and stream-power models of the `erode`
/// library.
#[pymodule]
#[pyo3(name = "erode")]
fn erode_python(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<PyGrid>()?;
    m.add_class::<PyDroplets>()?;
    m.add_class::<PySph>()?;
    m.add_class::<PyStreamPower>()?;
    m.add_class::<PyModel>()?;
    m.add_function(wrap_pyfunction!(models, m)?)?;
    m.add_function(wrap_pyfunction!(read, m)?)?;
    m.add_function(wrap_pyfunction!(write, m)?)?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(masks, m)?)?;
    Ok(())
}
