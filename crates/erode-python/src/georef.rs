//! Heightmap files: `read` gives the heights and their [`PyGeoref`], `write` takes them back, so
//! a GeoTIFF's georeference survives a run.

use std::path::PathBuf;

use erode::CellSize;
use erode_io::GeoRef;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{array_of, cell_size_of, heights_of, os_error, value_error};

/// Where a heightmap lies on Earth and how big its cells are: what `read()` found in the file,
/// for `write()` to put back and for rasterio, xarray or GDAL to take.
///
/// cell_size: (x, y) in metres (for a latitude/longitude raster, the size of a cell at its centre
/// latitude); transform: GDAL's and rasterio's affine `(x0, sx, 0, y0, 0, -sy)` in the CRS's
/// units, or None; crs: "EPSG:code" when the file names one, else None; nodata: the sample value
/// the file declared for cells without data, or None.
#[pyclass(name = "Georef", module = "erode", frozen)]
pub struct PyGeoref {
    /// Cell size, metres.
    pub cell: CellSize,
    /// The GeoTIFF's georeference keys, written back unchanged.
    pub georef: Option<GeoRef>,
    /// The nodata value declared.
    pub nodata: Option<f64>,
}

#[pymethods]
impl PyGeoref {
    /// The cell size (x, y), metres.
    #[getter]
    fn cell_size(&self) -> (f64, f64) {
        (self.cell.x, self.cell.y)
    }

    /// The affine transform (x0, sx, 0, y0, 0, -sy) of GDAL and rasterio, or None.
    #[getter]
    fn transform(&self) -> Option<(f64, f64, f64, f64, f64, f64)> {
        let t = self.georef.as_ref()?.geotransform()?;
        Some((t[0], t[1], t[2], t[3], t[4], t[5]))
    }

    /// "EPSG:code" when the file names its CRS by code, else None.
    #[getter]
    fn crs(&self) -> Option<String> {
        self.georef.as_ref()?.epsg().map(|c| format!("EPSG:{c}"))
    }

    /// The nodata sample value the file declared, or None.
    #[getter]
    fn nodata(&self) -> Option<f64> {
        self.nodata
    }

    /// to_xarray(heights, name="height") -> xarray.DataArray: `heights` (rows, columns) with
    /// coordinates `y` and `x` at the cells' centres (in the CRS's units with a transform, else
    /// metres from the top-left corner) and `crs`, `transform`, `cell_size` as attributes.
    #[pyo3(signature = (heights, name = "height"))]
    fn to_xarray<'py>(&self, py: Python<'py>, heights: &Bound<'py, PyAny>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let xr = py.import("xarray")?;
        let shape: (usize, usize) = heights.getattr("shape")?.extract()?;
        let (x0, sx, y0, sy) = match self.transform() {
            Some(t) => (t.0, t.1, t.3, -t.5),
            None => (0.0, self.cell.x, 0.0, self.cell.y),
        };
        let xs: Vec<f64> = (0..shape.1).map(|c| x0 + (c as f64 + 0.5) * sx).collect();
        let ys: Vec<f64> = (0..shape.0).map(|r| y0 - (r as f64 + 0.5) * sy).collect();
        let coords = PyDict::new(py);
        coords.set_item("y", ys)?;
        coords.set_item("x", xs)?;
        let attrs = PyDict::new(py);
        attrs.set_item("cell_size", self.cell_size())?;
        attrs.set_item("units", "m")?;
        if let Some(crs) = self.crs() {
            attrs.set_item("crs", crs)?;
        }
        if let Some(t) = self.transform() {
            attrs.set_item("transform", t)?;
        }
        if let Some(v) = self.nodata {
            attrs.set_item("nodata", v)?;
        }
        let kwargs = PyDict::new(py);
        kwargs.set_item("coords", coords)?;
        kwargs.set_item("dims", ("y", "x"))?;
        kwargs.set_item("name", name)?;
        kwargs.set_item("attrs", attrs)?;
        xr.call_method("DataArray", (heights,), Some(&kwargs))
    }

    fn __repr__(&self) -> String {
        let opt = |v: Option<String>| v.unwrap_or_else(|| "None".into());
        format!(
            "Georef(cell_size=({:?}, {:?}), crs={}, transform={}, nodata={})",
            self.cell.x,
            self.cell.y,
            opt(self.crs().map(|c| format!("'{c}'"))),
            opt(self.transform().map(|t| format!("{t:?}"))),
            opt(self.nodata.map(|v| format!("{v:?}"))),
        )
    }
}

/// read(path, *, nodata=None, dtype="float32") -> (heights, georef): a heightmap file in any
/// format erode reads (GeoTIFF, PNG, EXR, PGM, NPY, RAW) as a (rows, columns) array of metres
/// (float32, or float64 with dtype="float64"), NaN where there is no data, and its Georef.
#[pyfunction]
#[pyo3(signature = (path, *, nodata = None, dtype = "float32"))]
pub fn read<'py>(
    py: Python<'py>,
    path: PathBuf,
    nodata: Option<f64>,
    dtype: &str,
) -> PyResult<(Bound<'py, PyAny>, PyGeoref)> {
    let wide = match dtype {
        "float32" => false,
        "float64" => true,
        _ => return Err(value_error(format!("dtype: \"float32\" or \"float64\", not \"{dtype}\""))),
    };
    let options = erode_io::ReadOptions { nodata, ..Default::default() };
    let loaded = py.detach(|| erode_io::read(&path, &options)).map_err(os_error)?;
    let g = &loaded.map.heights;
    let heights = array_of(py, (g.width(), g.height()), g.as_slice().to_vec(), loaded.map.nodata_mask(), wide)?;
    let georef = PyGeoref { cell: g.cell_size(), georef: loaded.info.georef.clone(), nodata: loaded.info.nodata_value };
    Ok((heights, georef))
}

/// write(path, heights, *, cell_size=None, georef=None): a (rows, columns) float32 or float64
/// array of metres as a heightmap file, the format from the extension, NaN cells as nodata. A
/// Georef (from read()) puts the file's transform, CRS and nodata value back into a GeoTIFF;
/// cell_size (a number or (x, y), metres; default the georef's, else 1) says the cell size.
#[pyfunction]
#[pyo3(signature = (path, heights, *, cell_size = None, georef = None))]
pub fn write(
    py: Python<'_>,
    path: PathBuf,
    heights: &Bound<'_, PyAny>,
    cell_size: Option<&Bound<'_, PyAny>>,
    georef: Option<PyRef<'_, PyGeoref>>,
) -> PyResult<()> {
    let cell = match (&georef, cell_size) {
        (Some(g), None) => g.cell,
        _ => cell_size_of(cell_size)?,
    };
    let map = heights_of(heights, "heights", cell)?.map;
    let options = erode_io::WriteOptions {
        georef: georef.as_ref().and_then(|g| g.georef.clone()),
        nodata_value: georef.as_ref().and_then(|g| g.nodata),
        ..Default::default()
    };
    py.detach(|| erode_io::write(&path, &map, &options)).map_err(os_error)
}
