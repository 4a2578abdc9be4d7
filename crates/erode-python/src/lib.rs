//! The `erode` Python module: the library's models under its model contract, with numpy arrays
//! in and out.
//!
//! ```python
//! import erode
//! heights, georef = erode.read("dem.tif")
//! sim = erode.Grid(heights, cell_size=georef, preset="rivers", rain_rate=2e-5)
//! sim.run(500)               # the GIL released; Ctrl-C stops it at the next batch
//! erode.write("eroded.tif", sim.map("height"), georef=georef)
//! ```
//!
//! Parameters are keyword arguments (or a `params` dict) read exactly as the command line's
//! `--set key=value`, so unknown keys and bad values raise `ValueError` with the command line's
//! message. Heights are metres, cell sizes metres, time seconds (years for stream power).
//!
//! One file per job: `convert` reads arrays, cell sizes and parameters and makes arrays;
//! `model` is the base class every model class extends (running, books, maps, edits,
//! checkpoints); one file per model class; `georef` reads and writes files; `analysis`
//! analyses and bakes masks.

mod analysis;
mod convert;
mod droplet;
mod georef;
mod grid;
mod model;
mod sph;
mod stream_power;

use pyo3::prelude::*;

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
    m.add_class::<model::PyModel>()?;
    m.add_class::<grid::PyGrid>()?;
    m.add_class::<droplet::PyDroplets>()?;
    m.add_class::<stream_power::PyStreamPower>()?;
    m.add_class::<sph::PySph>()?;
    m.add_class::<georef::PyGeoref>()?;
    m.add_function(wrap_pyfunction!(models, m)?)?;
    m.add_function(wrap_pyfunction!(georef::read, m)?)?;
    m.add_function(wrap_pyfunction!(georef::write, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::analyze, m)?)?;
    m.add_function(wrap_pyfunction!(analysis::masks, m)?)?;
    Ok(())
}
