//! `erode.analyze` and `erode.masks`: the figures of `erode analyze` and the masks of `erode
//! masks`, for arrays.

use erode::Grid;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{array_of, cell_size_of, heights_of, value_error, values_of};

/// analyze(heights, *, cell_size=1.0) -> dict: what `erode analyze --json` prints for a
/// (rows, columns) float32 or float64 array of metres (NaN: no data): the slope–area fit
/// (concavity θ, R²) and its bins (`slope_area_bins`, for plots), drainage density, closed
/// depressions, hypsometry, fine relief.
#[pyfunction]
#[pyo3(signature = (heights, *, cell_size = None))]
pub fn analyze<'py>(
    py: Python<'py>,
    heights: &Bound<'py, PyAny>,
    cell_size: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let map = heights_of(heights, "heights", cell_size_of(cell_size)?)?.map;
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
#[pyo3(signature = (heights, *, cell_size = None, maps = None, curvature_scale = 0.5, curvature_radius = 2.0,
    occlusion_radius = 32, depth_scale = 1.0))]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments
pub fn masks<'py>(
    py: Python<'py>,
    heights: &Bound<'py, PyAny>,
    cell_size: Option<&Bound<'py, PyAny>>,
    maps: Option<&Bound<'py, PyDict>>,
    curvature_scale: f64,
    curvature_radius: f64,
    occlusion_radius: usize,
    depth_scale: f64,
) -> PyResult<Bound<'py, PyDict>> {
    use erode::texture::{Baker, Options};
    let cell = cell_size_of(cell_size)?;
    let map = heights_of(heights, "heights", cell)?.map;
    let mut run: Vec<(String, Grid<f32>)> = Vec::new();
    for (k, v) in maps.iter().flat_map(|d| d.iter()) {
        let name: String = k.extract()?;
        run.push((name.clone(), values_of(&v, &name, cell)?.grid));
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
    let shape = (map.heights.width(), map.heights.height());
    for (name, values) in made.map_err(value_error)? {
        out.set_item(name, array_of(py, shape, values, map.nodata_mask(), false)?)?;
    }
    Ok(out)
}
