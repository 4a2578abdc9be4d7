//! Python values in, numpy arrays out: the one place the package reads an array, a cell size or
//! a parameter, and makes an array of a field.

use erode::{CellSize, Grid, Heightmap};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::georef::PyGeoref;

/// An error of the library as Python's `ValueError`, with its message on one line.
pub fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string().replace('\n', " "))
}

/// An error reading or writing a file as Python's `OSError`.
pub fn os_error(e: erode_io::Error) -> PyErr {
    PyOSError::new_err(e.to_string().replace('\n', " "))
}

/// One Python value as TOML text, the value of a `--set key=value`: bool, int, float, str, and
/// lists, tuples and dicts of them (a grid model's `sources` is a list of dicts).
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
    } else if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let items: PyResult<Vec<String>> = v.try_iter()?.map(|item| set_value(key, &item?)).collect();
        Ok(format!("[{}]", items?.join(", ")))
    } else if let Ok(dict) = v.cast::<PyDict>() {
        let mut items = Vec::new();
        for (k, item) in dict.iter() {
            let name: String = k.extract()?;
            items.push(format!("{name} = {}", set_value(key, &item)?));
        }
        Ok(format!("{{{}}}", items.join(", ")))
    } else {
        let kind = v.get_type().name()?;
        Err(PyTypeError::new_err(format!("parameter {key}: a bool, int, float, str, list or dict, not {kind}")))
    }
}

/// The `--set key=value` texts of the `params` dict and then the keyword arguments.
pub fn sets(params: Option<&Bound<'_, PyDict>>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<String>> {
    let mut sets = Vec::new();
    for dict in [params, kwargs].into_iter().flatten() {
        for (k, v) in dict.iter() {
            let key: String = k.extract()?;
            sets.push(format!("{key}={}", set_value(&key, &v)?));
        }
    }
    Ok(sets)
}

/// `base` with the `params` dict and then the keyword arguments applied, as `--set` would.
pub fn with_params<P>(base: &P, params: Option<&Bound<'_, PyDict>>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<P>
where
    P: serde::Serialize + serde::de::DeserializeOwned,
{
    erode_io::params::apply_sets(base, &sets(params, kwargs)?).map_err(value_error)
}

/// A cell size given as a number of metres, an `(x, y)` pair or a [`PyGeoref`] (its cell size),
/// checked as the command line and files are; `None` is 1 m.
pub fn cell_size_of(v: Option<&Bound<'_, PyAny>>) -> PyResult<CellSize> {
    let Some(v) = v.filter(|v| !v.is_none()) else { return Ok(CellSize::default()) };
    let cell = if let Ok(g) = v.cast::<PyGeoref>() {
        g.get().cell
    } else if let Ok(size) = v.extract::<f64>() {
        CellSize::square(size)
    } else if let Ok((x, y)) = v.extract::<(f64, f64)>() {
        CellSize { x, y }
    } else {
        let kind = v.get_type().name()?;
        return Err(PyTypeError::new_err(format!(
            "cell_size: metres as a number, an (x, y) pair or the Georef read() gave, not {kind}"
        )));
    };
    cell.check().map_err(|e| value_error(format!("cell_size: {e}")))?;
    Ok(cell)
}

/// A 2-D array of heights or of a map, as the model takes it (`f32`), and its values in full
/// precision when it was float64.
pub struct Values {
    /// The values as the `f32` grid the models start from.
    pub grid: Grid<f32>,
    /// The float64 values, row-major, when the array was float64.
    pub wide: Option<Vec<f64>>,
}

/// A 2-D float32 or float64 numpy array (C- or Fortran-ordered, or any strides: it is read in
/// logical order into the model's own memory, the one copy) as a grid of `cell` cells; `what`
/// names it in errors.
pub fn values_of(array: &Bound<'_, PyAny>, what: &str, cell: CellSize) -> PyResult<Values> {
    let (rows, cols, values, wide) = if let Ok(a) = array.extract::<PyReadonlyArray2<'_, f32>>() {
        let [rows, cols] = [a.shape()[0], a.shape()[1]];
        (rows, cols, a.as_array().iter().copied().collect(), None)
    } else if let Ok(a) = array.extract::<PyReadonlyArray2<'_, f64>>() {
        let [rows, cols] = [a.shape()[0], a.shape()[1]];
        let wide: Vec<f64> = a.as_array().iter().copied().collect();
        (rows, cols, wide.iter().map(|&v| v as f32).collect(), Some(wide))
    } else {
        let found = match array.getattr("dtype") {
            Ok(dtype) => format!("an array of {} with {} dimensions", dtype.str()?, array.getattr("ndim")?.str()?),
            Err(_) => array.get_type().name()?.to_string(),
        };
        return Err(PyTypeError::new_err(format!(
            "{what}: a 2-D numpy array of float32 or float64 (rows, columns), not {found}; use numpy.asarray(x, dtype=numpy.float64)"
        )));
    };
    let grid = Grid::from_vec(cols, rows, cell, values).map_err(|e| value_error(format!("{what}: {e}")))?;
    Ok(Values { grid, wide })
}

/// Heights as a heightmap (NaN cells have no data) and their float64 values if they had them.
pub struct Heights {
    /// The heightmap the models start from.
    pub map: Heightmap,
    /// The float64 heights, row-major, when the array was float64.
    pub wide: Option<Vec<f64>>,
}

/// A 2-D float32 or float64 array of heights in metres; NaN cells have no data.
pub fn heights_of(array: &Bound<'_, PyAny>, what: &str, cell: CellSize) -> PyResult<Heights> {
    let Values { grid, wide } = values_of(array, what, cell)?;
    let mask: Vec<bool> = grid.as_slice().iter().map(|v| v.is_nan()).collect();
    let map = Heightmap::with_nodata(grid, Some(mask)).map_err(|e| value_error(format!("{what}: {e}")))?;
    Ok(Heights { map, wide })
}

/// An optional input map (hardness, rain) as the models take it.
pub fn optional_map(array: Option<&Bound<'_, PyAny>>, what: &str, cell: CellSize) -> PyResult<Option<Grid<f32>>> {
    array.map(|a| values_of(a, what, cell).map(|v| v.grid)).transpose()
}

/// A row-major `f32` field as a (rows, columns) numpy array, NaN where `nodata` is set: float32
/// (the vector becomes the array's memory), or float64 when `wide`.
pub fn array_of<'py>(
    py: Python<'py>,
    (width, height): (usize, usize),
    mut field: Vec<f32>,
    nodata: Option<&[bool]>,
    wide: bool,
) -> PyResult<Bound<'py, PyAny>> {
    if wide {
        return wide_array_of(py, (width, height), field.iter().map(|&v| f64::from(v)).collect(), nodata);
    }
    if let Some(mask) = nodata {
        field.iter_mut().zip(mask).filter(|(_, o)| **o).for_each(|(v, _)| *v = f32::NAN);
    }
    let a = Array2::from_shape_vec((height, width), field).map_err(value_error)?;
    Ok(a.into_pyarray(py).into_any())
}

/// A row-major `f64` field as a (rows, columns) float64 numpy array, NaN where `nodata` is set.
pub fn wide_array_of<'py>(
    py: Python<'py>,
    (width, height): (usize, usize),
    mut field: Vec<f64>,
    nodata: Option<&[bool]>,
) -> PyResult<Bound<'py, PyAny>> {
    if let Some(mask) = nodata {
        field.iter_mut().zip(mask).filter(|(_, o)| **o).for_each(|(v, _)| *v = f64::NAN);
    }
    let a = Array2::from_shape_vec((height, width), field).map_err(value_error)?;
    Ok(a.into_pyarray(py).into_any())
}
