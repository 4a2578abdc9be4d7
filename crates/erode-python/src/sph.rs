//! `erode.Sph`: fluid particles eroding a triangle mesh.

use std::path::PathBuf;

use erode::contract::SphRun;
use erode::models::sph;
use numpy::IntoPyArray;
use numpy::ndarray::Array2;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{value_error, with_params};
use crate::model::{PyModel, Run};

/// The SPH model: fluid particles eroding a triangle mesh (Skorkovská, Kolingerová & Beneš).
///
/// Sph(scene="tank", *, mesh=None, particles=0, faces=0, params=None, **parameters): a built-in
/// scene (lake, tunnel, tank), a scene file (.toml), or scene=None with a mesh (OBJ, PLY, STL)
/// and water over its middle or a heightmap file run as a scale model (`scale`), as `erode
/// simulate sph` starts them; 0 takes the scene's own count.
#[pyclass(name = "Sph", module = "erode", extends = PyModel)]
pub struct PySph {
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

/// The SPH run under `slf`.
fn sph_run(base: &PyModel) -> PyResult<&SphRun> {
    match &base.run {
        Run::Sph(r) => Ok(r),
        _ => Err(value_error("not an SPH run")),
    }
}

#[pymethods]
impl PySph {
    #[new]
    #[pyo3(signature = (scene = Some("tank"), *, mesh = None, particles = 0, faces = 0, params = None, **kwargs))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments
    fn new(
        py: Python<'_>,
        scene: Option<&str>,
        mesh: Option<PathBuf>,
        particles: usize,
        faces: usize,
        params: Option<&Bound<'_, PyDict>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let s = sph_setup(scene, mesh.as_deref(), particles, faces)?;
        let p: sph::Params = with_params(&s.params, params, kwargs)?;
        p.validate().map_err(value_error)?;
        let name = s.name.clone();
        let st = py.detach(|| s.state()).map_err(|e| value_error(format!("{name}: {e}")))?;
        if st.positions.is_empty() && st.inflow.emitters.is_empty() {
            return Err(value_error(format!("{name}: the fluid blocks hold no particle (they lie inside the solid?)")));
        }
        let run = SphRun::new(p, st).map_err(value_error)?;
        Ok(PyClassInitializer::from(PyModel::new(Run::Sph(Box::new(run)), None, false))
            .add_subclass(Self { scale: s.scale }))
    }

    /// Sph.resume(data, *, scene="tank", mesh=None, params=None, **parameters): the run saved by
    /// `checkpoint()`, with the same parameters.
    #[staticmethod]
    #[pyo3(signature = (data, *, scene = Some("tank"), mesh = None, params = None, **kwargs))]
    fn resume(
        py: Python<'_>,
        data: &[u8],
        scene: Option<&str>,
        mesh: Option<PathBuf>,
        params: Option<&Bound<'_, PyDict>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<Self>> {
        let base = sph_setup(scene, mesh.as_deref(), 0, 0)?;
        let p: sph::Params = with_params(&base.params, params, kwargs)?;
        let run = SphRun::resume(p, data).map_err(value_error)?;
        let model = PyModel::new(Run::Sph(Box::new(run)), None, false);
        Py::new(py, PyClassInitializer::from(model).add_subclass(Self { scale: base.scale }))
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

    /// Iterations done.
    #[getter]
    fn iterations(slf: PyRef<'_, Self>) -> u64 {
        slf.as_super().run_model().done()
    }

    /// The eroded surface: (vertices, faces), an (n, 3) float64 array of metres and an (m, 3)
    /// uint32 array of vertex indices, counter-clockwise seen from outside.
    fn mesh<'py>(slf: PyRef<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let py = slf.py();
        let m = &sph_run(slf.as_super())?.state().mesh;
        let v: Vec<f64> = m.positions.iter().flat_map(|p| p.to_array()).collect();
        let f: Vec<u32> = m.faces.iter().flat_map(|f| *f).collect();
        let v = Array2::from_shape_vec((m.positions.len(), 3), v).map_err(value_error)?.into_pyarray(py);
        let f = Array2::from_shape_vec((m.faces.len(), 3), f).map_err(value_error)?.into_pyarray(py);
        Ok((v.into_any(), f.into_any()))
    }

    /// The particles' positions, an (n, 3) float64 array of metres.
    fn particles<'py>(slf: PyRef<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let p = &sph_run(slf.as_super())?.state().positions;
        let v: Vec<f64> = p.iter().flat_map(|p| p.to_array()).collect();
        Ok(Array2::from_shape_vec((p.len(), 3), v).map_err(value_error)?.into_pyarray(py).into_any())
    }
}
