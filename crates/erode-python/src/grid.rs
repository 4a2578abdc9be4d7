//! `erode.Grid`: the grid model (shallow water in virtual pipes eroding a heightmap).

use erode::contract::GridRun;
use erode::models::grid;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{cell_size_of, heights_of, optional_map, value_error, with_params};
use crate::model::{PyModel, Run};

/// The grid model: shallow water in virtual pipes eroding a heightmap (Mei, Decaudin & Hu 2007;
/// Jákó & Tóth 2011).
///
/// Grid(terrain, *, cell_size=1.0, preset="rivers", hardness=None, rain=None,
/// sediment_depth=None, params=None, **parameters): terrain a 2-D float32 or float64 array of
/// heights in metres (NaN: no data, outside the domain); cell_size a number, (x, y) or a Georef;
/// hardness (0..1, 1 erodes least: sets hardness_mode = "map", as the command line's
/// --hardness-map), rain (>= 0, rain_rate times it: sets rain_mode = "map", as --rain-map does)
/// and sediment_depth (m of loose material on the bedrock, a former run's map, in place of
/// soil_depth) arrays of the same shape; parameters as in `erode params grid`, river sources as
/// `sources=[{"x": col, "y": row, "rate": m3_per_s, "radius": cells}]`. The model computes in
/// float32.
#[pyclass(name = "Grid", module = "erode", extends = PyModel)]
pub struct PyGrid;

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
    #[pyo3(signature = (terrain, *, cell_size = None, preset = "rivers", hardness = None, rain = None, sediment_depth = None, params = None, **kwargs))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments
    fn new(
        terrain: &Bound<'_, PyAny>,
        cell_size: Option<&Bound<'_, PyAny>>,
        preset: &str,
        hardness: Option<&Bound<'_, PyAny>>,
        rain: Option<&Bound<'_, PyAny>>,
        sediment_depth: Option<&Bound<'_, PyAny>>,
        params: Option<&Bound<'_, PyDict>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let mut p = grid_params(preset, params, kwargs)?;
        let cell = cell_size_of(cell_size)?;
        let heights = heights_of(terrain, "terrain", cell)?;
        let hardness = optional_map(hardness, "hardness", cell)?;
        let rain = optional_map(rain, "rain", cell)?;
        let sediment_depth = optional_map(sediment_depth, "sediment_depth", cell)?;
        if hardness.is_some() {
            p = p.with_hardness_map().map_err(|e| value_error(format!("hardness: {e}")))?;
        }
        if rain.is_some() {
            p = p.with_rain_map().map_err(|e| value_error(format!("rain: {e}")))?;
        }
        let map = &heights.map;
        let maps = grid::StartMaps {
            hardness: hardness.as_ref(),
            rain: rain.as_ref(),
            water: None,
            sediment_depth: sediment_depth.as_ref(),
            nodata: map.nodata_mask(),
        };
        let st = grid::State::new(&map.heights, &p, maps).map_err(value_error)?;
        let run = GridRun::new(p, st).map_err(value_error)?;
        Ok(PyClassInitializer::from(PyModel::new(Run::Grid(Box::new(run)), map.nodata_mask(), heights.wide.is_some()))
            .add_subclass(Self))
    }

    /// Grid.resume(data, *, preset="rivers", params=None, **parameters): the run saved by
    /// `checkpoint()`, with the same parameters.
    #[staticmethod]
    #[pyo3(signature = (data, *, preset = "rivers", params = None, **kwargs))]
    fn resume(
        py: Python<'_>,
        data: &[u8],
        preset: &str,
        params: Option<&Bound<'_, PyDict>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<Self>> {
        let p = grid_params(preset, params, kwargs)?;
        let run = GridRun::resume(p, data, u64::MAX).map_err(value_error)?;
        let nodata = run.state().nodata.clone();
        let base = PyModel::new(Run::Grid(Box::new(run)), nodata.as_deref(), false);
        Py::new(py, PyClassInitializer::from(base).add_subclass(Self))
    }

    /// Iterations done.
    #[getter]
    fn iterations(slf: PyRef<'_, Self>) -> u64 {
        slf.as_super().run_model().done()
    }

    /// Seconds of storm simulated.
    #[getter]
    fn seconds(slf: PyRef<'_, Self>) -> f64 {
        slf.as_super().run_model().clock().map_or(0.0, |c| c.now)
    }
}
