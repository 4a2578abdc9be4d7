//! `erode.Droplets`: the droplet model (droplets eroding a heightmap one after another).

use erode::contract::DropletRun;
use erode::models::droplet;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{cell_size_of, heights_of, optional_map, value_error, with_params};
use crate::model::{PyModel, Run};

/// The droplet model: droplets eroding a heightmap one after another (Beyer 2015).
///
/// Droplets(terrain, *, cell_size=1.0, preset="default", hardness=None, rain=None, params=None,
/// **parameters): terrain a 2-D float32 or float64 array of heights in metres (NaN: no data);
/// hardness (0..1, 1 erodes least) scales each cell's erosion, rain (>= 0) says where droplets
/// start; the floor below which nothing erodes is the terrain's lowest height unless
/// `min_height` is given, as on the command line. The model computes in float32.
#[pyclass(name = "Droplets", module = "erode", extends = PyModel)]
pub struct PyDroplets;

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
    #[pyo3(signature = (terrain, *, cell_size = None, preset = "default", hardness = None, rain = None, params = None, **kwargs))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments
    fn new(
        terrain: &Bound<'_, PyAny>,
        cell_size: Option<&Bound<'_, PyAny>>,
        preset: &str,
        hardness: Option<&Bound<'_, PyAny>>,
        rain: Option<&Bound<'_, PyAny>>,
        params: Option<&Bound<'_, PyDict>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let cell = cell_size_of(cell_size)?;
        let heights = heights_of(terrain, "terrain", cell)?;
        let map = &heights.map;
        let p = droplet_params(preset, f64::from(map.stats().min), params, kwargs)?;
        let hardness = optional_map(hardness, "hardness", cell)?;
        let rain = optional_map(rain, "rain", cell)?;
        let maps = droplet::StartMaps { hardness: hardness.as_ref(), rain: rain.as_ref(), nodata: map.nodata_mask() };
        let st = droplet::State::with_maps(&map.heights, maps).map_err(value_error)?;
        let run = DropletRun::new(p, st).map_err(value_error)?;
        Ok(PyClassInitializer::from(PyModel::new(
            Run::Droplet(Box::new(run)),
            map.nodata_mask(),
            heights.wide.is_some(),
        ))
        .add_subclass(Self))
    }

    /// Droplets.resume(data, *, lowest, preset="default", params=None, **parameters): the run
    /// saved by `checkpoint()`, with the same parameters (and the same `lowest` height, the
    /// floor, which the terrain gave at the start).
    #[staticmethod]
    #[pyo3(signature = (data, *, lowest, preset = "default", params = None, **kwargs))]
    fn resume(
        py: Python<'_>,
        data: &[u8],
        lowest: f64,
        preset: &str,
        params: Option<&Bound<'_, PyDict>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<Self>> {
        let p = droplet_params(preset, lowest, params, kwargs)?;
        let run = DropletRun::resume(p, data, u64::MAX).map_err(value_error)?;
        let nodata = run.state().nodata.clone();
        let base = PyModel::new(Run::Droplet(Box::new(run)), nodata.as_deref(), false);
        Py::new(py, PyClassInitializer::from(base).add_subclass(Self))
    }

    /// Droplets done.
    #[getter]
    fn droplets(slf: PyRef<'_, Self>) -> u64 {
        slf.as_super().run_model().done()
    }
}
