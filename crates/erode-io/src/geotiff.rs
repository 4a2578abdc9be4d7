//! GeoTIFF georeference: the raw tags, carried through unchanged, and the cell size in metres
//! they imply.

use erode::CellSize;

/// GeoTIFF tags as read, written back unchanged to TIFF outputs.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GeoRef {
    /// ModelPixelScaleTag (33550): `(sx, sy, sz)` in CRS units per pixel.
    pub pixel_scale: Option<Vec<f64>>,
    /// ModelTiepointTag (33922): `(i, j, k, x, y, z)` raster point to model point.
    pub tiepoint: Option<Vec<f64>>,
    /// ModelTransformationTag (34264): the 4 x 4 raster-to-model matrix, row by row, used
    /// instead of a pixel scale and tiepoint. Only north-up forms are read (no rotation or
    /// shear; see [`GeoRef::check_transformation`]).
    pub transformation: Option<Vec<f64>>,
    /// GeoKeyDirectoryTag (34735).
    pub geokeys: Option<Vec<u16>>,
    /// GeoDoubleParamsTag (34736).
    pub geo_doubles: Option<Vec<f64>>,
    /// GeoAsciiParamsTag (34737).
    pub geo_ascii: Option<String>,
}

/// What kind of coordinates the georeference uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CrsKind {
    /// Map projection: pixel scale in linear units.
    Projected,
    /// Latitude/longitude: pixel scale in degrees.
    Geographic,
    /// A pixel scale without GeoKeys: taken as metres.
    Local,
}

/// Two numbers along x and y.
type Pair = (f64, f64);

const MODEL_TYPE: u16 = 1024;
const RASTER_TYPE: u16 = 1025;
const GEOGRAPHIC_TYPE: u16 = 2048;
const SEMI_MAJOR: u16 = 2057;
const INV_FLATTENING: u16 = 2059;
const PROJECTED_TYPE: u16 = 3072;
const LINEAR_UNITS: u16 = 3076;

/// WGS 84, used when the file names no ellipsoid.
const WGS84_A: f64 = 6_378_137.0;
const WGS84_INV_F: f64 = 298.257_223_563;

impl GeoRef {
    /// True when no tag is present.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The value of a GeoKey: a short held in the directory, or the first double of
    /// GeoDoubleParams it points at.
    fn key(&self, id: u16) -> Option<f64> {
        let keys = self.geokeys.as_ref()?;
        let count = usize::from(*keys.get(3)?);
        for k in 0..count {
            let e = keys.get(4 + 4 * k..8 + 4 * k)?;
            if e[0] != id {
                continue;
            }
            return match e[1] {
                0 => Some(f64::from(e[3])),
                34736 => self.geo_doubles.as_ref()?.get(usize::from(e[3])).copied(),
                _ => None,
            };
        }
        None
    }

    /// Refuses a ModelTransformationTag that is not 16 values, or that rotates or shears the
    /// raster (the models need rows and columns along the axes); the error says which.
    pub fn check_transformation(&self) -> Result<(), String> {
        let Some(m) = &self.transformation else { return Ok(()) };
        if m.len() != 16 || m.iter().any(|v| !v.is_finite()) {
            return Err(format!("ModelTransformationTag holds {} values, not 16 finite ones", m.len()));
        }
        if m[1] != 0.0 || m[4] != 0.0 {
            return Err(format!(
                "the ModelTransformationTag rotates or shears the raster (x = {}·col + {}·row, y = {}·col + {}·row); \
                 only north-up rasters are read: warp it first (gdalwarp)",
                m[0], m[1], m[4], m[5]
            ));
        }
        if m[0] == 0.0 || m[5] == 0.0 {
            return Err("the ModelTransformationTag gives a pixel size of 0".into());
        }
        Ok(())
    }

    /// The pixel size in CRS units along columns and rows (both > 0 for a north-up raster;
    /// the row size is positive when rows run south) and the model point of the raster's
    /// top-left corner, from either georeference form.
    fn scale_and_origin(&self) -> Option<(Pair, Option<Pair>)> {
        if let Some(m) = self.transformation.as_ref().filter(|m| m.len() == 16) {
            return Some(((m[0], -m[5]), Some((m[3], m[7]))));
        }
        let s = self.pixel_scale.as_ref()?;
        let scale = (*s.first()?, *s.get(1)?);
        let origin =
            self.tiepoint.as_ref().filter(|t| t.len() >= 6).map(|t| (t[3] - t[0] * scale.0, t[4] + t[1] * scale.1));
        Some((scale, origin))
    }

    /// Projected, geographic or local.
    pub fn crs_kind(&self) -> Option<CrsKind> {
        self.scale_and_origin()?;
        Some(match self.key(MODEL_TYPE).map(|v| v as u16) {
            Some(2) => CrsKind::Geographic,
            Some(1) => CrsKind::Projected,
            _ if self.geokeys.is_none() => CrsKind::Local,
            _ => CrsKind::Projected,
        })
    }

    /// The EPSG code of the CRS, if the keys give one.
    pub fn epsg(&self) -> Option<u16> {
        let code = match self.crs_kind()? {
            CrsKind::Geographic => self.key(GEOGRAPHIC_TYPE),
            CrsKind::Projected => self.key(PROJECTED_TYPE),
            CrsKind::Local => None,
        }?;
        // 32767 means user-defined
        (code > 0.0 && code < 32767.0).then_some(code as u16)
    }

    /// Model coordinates of the top-left corner of the raster.
    pub fn origin(&self) -> Option<(f64, f64)> {
        self.scale_and_origin()?.1
    }

    /// Pixel size in CRS units `(x, y)`, from the pixel scale or the transformation.
    pub fn pixel_size(&self) -> Option<(f64, f64)> {
        Some(self.scale_and_origin()?.0)
    }

    /// The affine transform from (column, row) to model coordinates as GDAL and rasterio give
    /// it, `(x0, sx, 0, y0, 0, -sy)`: `x = x0 + col·sx`, `y = y0 − row·sy`, `(x0, y0)` the top-left
    /// corner of cell `(0, 0)` (half a cell from a point raster's tiepoint). `None` without a
    /// pixel size and origin.
    pub fn geotransform(&self) -> Option<[f64; 6]> {
        let ((sx, sy), origin) = self.scale_and_origin()?;
        let (x, y) = origin?;
        let (x0, y0) = if self.pixel_is_point() { (x - 0.5 * sx, y + 0.5 * sy) } else { (x, y) };
        Some([x0, sx, 0.0, y0, 0.0, -sy])
    }

    /// True when the raster's points are the cells' centres (GTRasterTypeGeoKey = PixelIsPoint)
    /// rather than their top-left corners.
    fn pixel_is_point(&self) -> bool {
        self.key(RASTER_TYPE) == Some(2.0)
    }

    /// The georeference of a new raster over part of this one: its cell `(0, 0)` starts at this
    /// raster's `(col, row)` (in cells, fractions allowed) and its cells are `scale.0` x `scale.1`
    /// of this one's. Crops are `(col, row)` with a scale of 1; resamples a scale of old over new
    /// count. The CRS and keys stay; the corner and the pixel size move (tiepoint rewritten for
    /// cell `(0, 0)`, or the transformation's translation and scale).
    pub fn window(&self, col: f64, row: f64, scale: (f64, f64)) -> GeoRef {
        let Some(((sx, sy), origin)) = self.scale_and_origin() else { return self.clone() };
        // a point raster's origin is cell (0, 0)'s centre; the new one's centre lies half a new
        // cell from the window's corner
        let shift = if self.pixel_is_point() { (0.5 * scale.0 - 0.5, 0.5 * scale.1 - 0.5) } else { (0.0, 0.0) };
        let corner = origin.map(|(x, y)| (x + (col + shift.0) * sx, y - (row + shift.1) * sy));
        let mut out = self.clone();
        if let Some(m) = out.transformation.as_mut().filter(|m| m.len() == 16) {
            m[0] *= scale.0;
            m[5] *= scale.1;
            if let Some((x, y)) = corner {
                m[3] = x;
                m[7] = y;
            }
            return out;
        }
        if let Some(p) = out.pixel_scale.as_mut().filter(|p| p.len() >= 2) {
            p[0] *= scale.0;
            p[1] *= scale.1;
        }
        if let (Some(t), Some((x, y))) = (out.tiepoint.as_mut().filter(|t| t.len() >= 6), corner) {
            let z = t[5];
            *t = vec![0.0, 0.0, 0.0, x, y, z];
        }
        out
    }

    /// Cell size in metres: the pixel scale in metres for projected CRSs (converting feet), or for
    /// geographic CRSs the metre size of a cell at the raster's centre latitude on the file's
    /// ellipsoid (WGS 84 if it names none).
    pub fn cell_size_metres(&self, height: usize) -> Option<CellSize> {
        let (sx, sy) = self.pixel_size()?;
        // a south-up raster (rows running north) has the same cell size
        let (sx, sy) = (sx.abs(), sy.abs());
        if !(sx > 0.0 && sy > 0.0 && sx.is_finite() && sy.is_finite()) {
            return None;
        }
        match self.crs_kind()? {
            CrsKind::Local => Some(CellSize { x: sx, y: sy }),
            CrsKind::Projected => {
                let unit = match self.key(LINEAR_UNITS).map(|v| v as u16) {
                    Some(9002) => 0.3048,
                    Some(9003) => 1200.0 / 3937.0,
                    _ => 1.0,
                };
                Some(CellSize { x: sx * unit, y: sy * unit })
            }
            CrsKind::Geographic => {
                let (_, top) = self.origin()?;
                let (_, row_step) = self.pixel_size()?;
                let lat = (top - row_step * height as f64 / 2.0).clamp(-90.0, 90.0).to_radians();
                let a = self.key(SEMI_MAJOR).filter(|v| *v > 0.0).unwrap_or(WGS84_A);
                let inv_f = self.key(INV_FLATTENING).filter(|v| *v > 0.0).unwrap_or(WGS84_INV_F);
                let f = 1.0 / inv_f;
                let e2 = f * (2.0 - f);
                let w = (1.0 - e2 * lat.sin().powi(2)).sqrt();
                // radii of curvature: meridian (north-south) and prime vertical (east-west)
                let m = a * (1.0 - e2) / (w * w * w);
                let n = a / w;
                let deg = std::f64::consts::PI / 180.0;
                Some(CellSize { x: sx * deg * n * lat.cos(), y: sy * deg * m })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geographic(lat_top: f64) -> GeoRef {
        GeoRef {
            pixel_scale: Some(vec![1.0 / 120.0, 1.0 / 120.0, 0.0]),
            tiepoint: Some(vec![0.0, 0.0, 0.0, 5.0, lat_top, 0.0]),
            geokeys: Some(vec![1, 1, 0, 2, 1024, 0, 1, 2, 2048, 0, 1, 4326]),
            ..Default::default()
        }
    }

    #[test]
    fn geographic_cell_size_matches_reference() {
        // 30 arc-seconds at the equator: 1/120 degree of the WGS 84 meridian arc and equator.
        // References: equatorial circumference 40,075,016.7 m / 360 / 120 = 927.66 m east-west;
        // meridional radius at the equator a(1 - e^2) = 6,335,439 m -> 921.44 m north-south.
        let g = geographic(0.5);
        let c = g.cell_size_metres(120).unwrap();
        assert!((c.x - 927.66).abs() < 0.05, "{}", c.x);
        assert!((c.y - 921.44).abs() < 0.05, "{}", c.y);
        // at 60 degrees the east-west size is about half
        let c60 = geographic(60.5).cell_size_metres(120).unwrap();
        assert!((c60.x / c.x - 0.5).abs() < 0.01);
        assert_eq!(g.epsg(), Some(4326));
        assert_eq!(g.crs_kind(), Some(CrsKind::Geographic));
    }

    #[test]
    fn the_geotransform_is_gdals_corner_based_affine() {
        let s = 1.0 / 120.0;
        assert_eq!(geographic(47.0).geotransform(), Some([5.0, s, 0.0, 47.0, 0.0, -s]));
        // a point raster's tiepoint is cell (0, 0)'s centre: GDAL's corner lies half a cell out
        let mut point = geographic(47.0);
        point.geokeys = Some(vec![1, 1, 0, 3, 1024, 0, 1, 2, 2048, 0, 1, 4326, 1025, 0, 1, 2]);
        assert_eq!(point.geotransform(), Some([5.0 - s / 2.0, s, 0.0, 47.0 + s / 2.0, 0.0, -s]));
        assert_eq!(GeoRef::default().geotransform(), None);
    }

    #[test]
    fn a_transformation_reads_as_the_scale_and_tiepoint_it_equals() {
        let scaled = geographic(47.0);
        let transformed = GeoRef {
            pixel_scale: None,
            tiepoint: None,
            transformation: Some(vec![
                1.0 / 120.0,
                0.0,
                0.0,
                5.0,
                0.0,
                -1.0 / 120.0,
                0.0,
                47.0,
                0.0,
                0.0,
                0.0,
                0.0,
                0.0,
                0.0,
                0.0,
                1.0,
            ]),
            ..scaled.clone()
        };
        assert_eq!(transformed.check_transformation(), Ok(()));
        assert_eq!(transformed.origin(), scaled.origin());
        assert_eq!(transformed.cell_size_metres(120), scaled.cell_size_metres(120));
        assert_eq!(transformed.crs_kind(), Some(CrsKind::Geographic));
        let mut rotated = transformed.clone();
        rotated.transformation.as_mut().unwrap()[1] = 0.001;
        assert!(rotated.check_transformation().unwrap_err().contains("rotates or shears"));
    }

    #[test]
    fn projected_feet_are_converted() {
        let g = GeoRef {
            pixel_scale: Some(vec![10.0, 10.0, 0.0]),
            tiepoint: Some(vec![0.0; 6]),
            geokeys: Some(vec![1, 1, 0, 2, 1024, 0, 1, 1, 3076, 0, 1, 9002]),
            ..Default::default()
        };
        let c = g.cell_size_metres(10).unwrap();
        assert!((c.x - 3.048).abs() < 1e-12);
    }

    #[test]
    fn a_window_moves_the_corner_and_scales_the_pixel() {
        let g = geographic(50.0);
        // 12 columns and 24 rows in, cells twice as large
        let w = g.window(12.0, 24.0, (2.0, 2.0));
        let (x, y) = w.origin().unwrap();
        assert!((x - 5.1).abs() < 1e-12 && (y - 49.8).abs() < 1e-12, "{x} {y}");
        assert_eq!(w.pixel_size(), Some((1.0 / 60.0, 1.0 / 60.0)));
        assert_eq!(w.geokeys, g.geokeys);
        // a point raster's origin is a cell centre: halving the cells moves it a quarter cell
        let mut point = g.clone();
        point.geokeys = Some(vec![1, 1, 0, 3, 1024, 0, 1, 2, 1025, 0, 1, 2, 2048, 0, 1, 4326]);
        let (x, _) = point.window(0.0, 0.0, (0.5, 0.5)).origin().unwrap();
        assert!((x - (5.0 - 0.25 / 120.0)).abs() < 1e-12, "{x}");
        // the transformation form moves the same way
        let t = GeoRef {
            transformation: Some(vec![
                10.0, 0.0, 0.0, 1000.0, 0.0, -10.0, 0.0, 5000.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0,
            ]),
            ..Default::default()
        };
        let w = t.window(3.0, 4.0, (4.0, 4.0));
        assert_eq!(w.origin(), Some((1030.0, 4960.0)));
        assert_eq!(w.pixel_size(), Some((40.0, 40.0)));
    }
}
