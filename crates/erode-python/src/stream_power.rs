//! `erode.StreamPower`: uplift, river incision and hillslope diffusion over geological time.

use erode::contract::StreamPowerRun;
use erode::models::stream_power;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{cell_size_of, heights_of, optional_map, value_error, with_params};
use crate::model::{PyModel, Run};

/// The stream-power model: uplift, river incision `K·A^m·S^n` (Braun & Willett 2013) and
/// hillslope diffusion, heights in metres, time in years.
///
/// StreamPower(terrain, *, cell_size=1.0, preset="default", uplift_map=None,
/// erodibility_map=None, hardness=None, params=None, **parameters): terrain a 2-D float32 or
/// float64 array of heights in metres (NaN: no data); the maps multiply the uplift rate and the
/// erodibility cell by cell (hardness converts as in the other models); one `run` unit is a
/// step of `dt_years`. The model computes in float64: float64 heights go in and the height
/// comes back in full precision.
#[pyclass(name = "StreamPower", module = "erode", extends = PyModel)]
pub struct PyStreamPower;

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
    #[pyo3(signature = (terrain, *, cell_size = None, preset = "default", uplift_map = None, erodibility_map = None, hardness = None, params = None, **kwargs))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments
    fn new(
        terrain: &Bound<'_, PyAny>,
        cell_size: Option<&Bound<'_, PyAny>>,
        preset: &str,
        uplift_map: Option<&Bound<'_, PyAny>>,
        erodibility_map: Option<&Bound<'_, PyAny>>,
        hardness: Option<&Bound<'_, PyAny>>,
        params: Option<&Bound<'_, PyDict>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let cell = cell_size_of(cell_size)?;
        let heights = heights_of(terrain, "terrain", cell)?;
        let p = stream_power_params(preset, params, kwargs)?;
        let uplift = optional_map(uplift_map, "uplift_map", cell)?;
        let erodibility = optional_map(erodibility_map, "erodibility_map", cell)?;
        let hardness = optional_map(hardness, "hardness", cell)?;
        let map = &heights.map;
        let maps = stream_power::StartMaps {
            uplift: uplift.as_ref(),
            erodibility: erodibility.as_ref(),
            hardness: hardness.as_ref(),
            nodata: map.nodata_mask(),
        };
        let st = stream_power::State::with_maps(&map.heights, maps, p.rock_erodibility).map_err(value_error)?;
        let mut run = StreamPowerRun::new(p, st).map_err(value_error)?;
        if let Some(wide) = &heights.wide {
            // the heights in the precision they came in (the start above read them as f32)
            run.set_heights(wide).map_err(value_error)?;
        }
        Ok(PyClassInitializer::from(PyModel::new(
            Run::StreamPower(Box::new(run)),
            map.nodata_mask(),
            heights.wide.is_some(),
        ))
        .add_subclass(Self))
    }

    /// StreamPower.resume(data, *, preset="default", params=None, **parameters): the run saved
    /// by `checkpoint()`, with the same parameters.
    #[staticmethod]
    #[pyo3(signature = (data, *, preset = "default", params = None, **kwargs))]
    fn resume(
        py: Python<'_>,
        data: &[u8],
        preset: &str,
        params: Option<&Bound<'_, PyDict>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<Self>> {
        let p = stream_power_params(preset, params, kwargs)?;
        let run = StreamPowerRun::resume(p, data, u64::MAX).map_err(value_error)?;
        let nodata = run.state().nodata.clone();
        let base = PyModel::new(Run::StreamPower(Box::new(run)), nodata.as_deref(), false);
        Py::new(py, PyClassInitializer::from(base).add_subclass(Self))
    }

    /// Steps done.
    #[getter]
    fn steps(slf: PyRef<'_, Self>) -> u64 {
        slf.as_super().run_model().done()
    }

    /// Years simulated.
    #[getter]
    fn years(slf: PyRef<'_, Self>) -> f64 {
        match &slf.as_super().run {
            Run::StreamPower(r) => r.state().years,
            _ => 0.0,
        }
    }
}
