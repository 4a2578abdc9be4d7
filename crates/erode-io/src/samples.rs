//! What every decoder hands back, and the one place where samples become metres.

use erode::{CellSize, Grid, Heightmap};

use crate::error::FormatError;
use crate::{DEFAULT_IMAGE_RANGE, Format, GeoRef, IntMapping, Loaded, ReadOptions, SourceInfo};

/// Decoded samples, row-major.
pub(crate) enum Samples {
    /// Float samples: metres.
    Float(Vec<f32>),
    /// Integer samples with their full-scale value (255, 65535, a PGM maxval, ...).
    Int { values: Vec<i32>, full_scale: u32, kind: IntKind },
}

/// Whether integer samples are an image (mapped by range) or a DEM (metres as stored).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntKind {
    Image,
    Metres,
}

/// A decoder's result, before mapping.
pub(crate) struct Decoded {
    pub width: usize,
    pub height: usize,
    pub samples: Samples,
    pub sample_type: &'static str,
    /// Cells the format itself marks as missing (PNG alpha 0).
    pub mask: Option<Vec<bool>>,
    pub meta: FileMeta,
}

/// Metadata a file may carry.
#[derive(Default)]
pub(crate) struct FileMeta {
    pub georef: Option<GeoRef>,
    pub nodata: Option<f64>,
    /// Height range erode stored when it wrote the file.
    pub range: Option<(f64, f64)>,
    pub cell_size: Option<CellSize>,
}

/// Checks a claimed size against the cap before anything is allocated for it.
pub(crate) fn check_size(width: u64, height: u64, options: &ReadOptions) -> Result<(usize, usize), FormatError> {
    if width == 0 || height == 0 {
        return Err(FormatError::ZeroSize { width, height });
    }
    match width.checked_mul(height) {
        Some(n) if n <= options.max_cells => {}
        _ => return Err(FormatError::TooLarge { width, height, max_cells: options.max_cells }),
    }
    let w =
        usize::try_from(width).map_err(|_| FormatError::TooLarge { width, height, max_cells: options.max_cells })?;
    let h =
        usize::try_from(height).map_err(|_| FormatError::TooLarge { width, height, max_cells: options.max_cells })?;
    Ok((w, h))
}

fn same_sample(a: f64, nodata: f64) -> bool {
    if nodata.is_nan() { a.is_nan() } else { a == nodata }
}

/// Turns samples into a heightmap in metres, applying the mapping, nodata and cell size.
pub(crate) fn finish(d: Decoded, format: Format, options: &ReadOptions) -> Result<Loaded, FormatError> {
    let (grid, mask, info) = finish_cells(d, format, options)?;
    let map = Heightmap::with_nodata(grid, mask)?;
    Ok(Loaded { map, info })
}

/// Heights in metres, which of them are nodata (`None`: none), and what the file said.
pub(crate) type Cells = (Grid<f32>, Option<Vec<bool>>, SourceInfo);

/// [`finish`]'s heights and nodata mask, before they are checked to be a heightmap (a block of
/// rows may hold no valid cell).
pub(crate) fn finish_cells(d: Decoded, format: Format, options: &ReadOptions) -> Result<Cells, FormatError> {
    let nodata = options.nodata.or(d.meta.nodata);
    let n = d.width * d.height;
    let mut mask = d.mask.unwrap_or_else(|| vec![false; n]);
    let mut assumed = None;
    let (heights, mapping) = match d.samples {
        Samples::Float(values) => {
            if let Some(nd) = nodata {
                // compare at the file's precision: a GDAL_NODATA written as a decimal double
                // rounds to the same f32 the file holds
                let nd32 = f64::from(nd as f32);
                for (m, &v) in mask.iter_mut().zip(&values) {
                    *m |= same_sample(f64::from(v), nd32);
                }
            }
            (values, None)
        }
        Samples::Int { values, full_scale, kind } => {
            if options.mapping.is_none()
                && let Some((min, max)) = d.meta.range
                && !(max >= min && min.is_finite() && max.is_finite())
            {
                // an inverted range turned the terrain upside down before
                return Err(FormatError::Options(format!(
                    "the file's height range {min} to {max} m does not increase: give --min-height and --max-height"
                )));
            }
            assumed = match (options.mapping, kind, d.meta.range, &d.meta.georef) {
                (None, IntKind::Image, None, _) => Some(format!(
                    "no height range in the file: its 0 to {full_scale} read as {} to {} m (say the range: \
                     --min-height and --max-height, or --height-scale)",
                    DEFAULT_IMAGE_RANGE.0, DEFAULT_IMAGE_RANGE.1
                )),
                (None, IntKind::Metres, None, None) => Some(
                    "integer samples with no height metadata or georeference: read as metres, one per unit \
                     (else --height-scale, or --min-height and --max-height)"
                        .into(),
                ),
                _ => None,
            };
            let mapping = options.mapping.unwrap_or(match (kind, d.meta.range) {
                (_, Some((min, max))) => IntMapping::Range { min, max },
                (IntKind::Image, None) => IntMapping::Range { min: DEFAULT_IMAGE_RANGE.0, max: DEFAULT_IMAGE_RANGE.1 },
                (IntKind::Metres, None) => IntMapping::Scale { scale: 1.0, offset: 0.0 },
            });
            let (scale, offset) = match mapping {
                IntMapping::Range { min, max } => ((max - min) / f64::from(full_scale.max(1)), min),
                IntMapping::Scale { scale, offset } => (scale, offset),
            };
            if !(scale.is_finite() && offset.is_finite()) {
                return Err(FormatError::Options(format!("height mapping {mapping:?} is not finite")));
            }
            if let Some(nd) = nodata {
                for (m, &v) in mask.iter_mut().zip(&values) {
                    *m |= same_sample(f64::from(v), nd);
                }
            }
            let heights = values.iter().map(|&v| (offset + f64::from(v) * scale) as f32).collect();
            (heights, Some(mapping))
        }
    };
    let cell_size = options.cell_size.or(d.meta.cell_size).unwrap_or_default();
    if options.cell_size.is_none() && cell_size.check().is_err() {
        return Err(FormatError::Options(format!(
            "the file's georeference or metadata gives cells of {:e} x {:e} m, outside {:e} to {:e} m: give the \
             cell size (--cell-size)",
            cell_size.x,
            cell_size.y,
            erode::CellSize::MIN,
            erode::CellSize::MAX
        )));
    }
    let grid = Grid::from_vec(d.width, d.height, cell_size, heights)?;
    let any = mask.iter().any(|&m| m);
    let info = SourceInfo {
        format,
        sample_type: d.sample_type,
        mapping,
        nodata_value: nodata,
        georef: d.meta.georef,
        assumed,
    };
    Ok((grid, any.then_some(mask), info))
}

/// Quantisation of heights onto `[0, full]` for integer outputs.
pub(crate) struct Quantiser {
    /// Height of sample 0, metres.
    pub min: f64,
    /// Height of the full-scale sample, metres.
    pub max: f64,
    full: f64,
    /// Whether sample 0 is reserved for nodata.
    pub nodata_zero: bool,
}

impl Quantiser {
    /// A quantiser for `map`: the asked range, else the map's. With nodata, sample 0 is reserved
    /// by extending the range one quantum downwards, so valid heights use 1..=full.
    pub fn new(map: &Heightmap, range: Option<(f64, f64)>, full: u32) -> Self {
        let stats = map.stats();
        let (mut min, mut max) = range.unwrap_or((f64::from(stats.min), f64::from(stats.max)));
        if max <= min {
            max = min + 1.0;
        }
        let full = f64::from(full);
        let nodata_zero = map.nodata_count() > 0;
        if nodata_zero {
            min -= (max - min) / (full - 1.0);
        }
        Self { min, max, full, nodata_zero }
    }

    /// The sample for cell `i`.
    pub fn sample(&self, map: &Heightmap, i: usize) -> u32 {
        if self.nodata_zero && map.is_nodata(i) {
            return 0;
        }
        let h = f64::from(map.heights.as_slice()[i]);
        let q = ((h - self.min) / (self.max - self.min) * self.full).round();
        let lo = if self.nodata_zero { 1.0 } else { 0.0 };
        q.clamp(lo, self.full) as u32
    }

    /// The metadata text erode stores with the samples: `key=value` pairs.
    pub fn describe(&self, cell: CellSize) -> Vec<(&'static str, String)> {
        let mut v = vec![
            ("min_height", format!("{:e}", self.min)),
            ("max_height", format!("{:e}", self.max)),
            ("cell_size", format!("{:e}x{:e}", cell.x, cell.y)),
        ];
        if self.nodata_zero {
            v.push(("nodata", "0".into()));
        }
        v
    }
}

/// Reads erode's `key=value` metadata back into `meta`.
pub(crate) fn parse_meta(meta: &mut FileMeta, key: &str, value: &str) {
    let value = value.trim();
    match key {
        "min_height" | "max_height" => {
            if let Ok(v) = value.parse::<f64>() {
                let (lo, hi) = meta.range.unwrap_or((f64::NAN, f64::NAN));
                meta.range = Some(if key == "min_height" { (v, hi) } else { (lo, v) });
            }
        }
        "cell_size" => {
            if let Some((Ok(x), Ok(y))) = value.split_once('x').map(|(x, y)| (x.parse(), y.parse())) {
                meta.cell_size = Some(CellSize { x, y });
            }
        }
        "nodata" => meta.nodata = value.parse().ok(),
        _ => {}
    }
}

/// Drops a range of which only one end was found.
pub(crate) fn complete_meta(meta: &mut FileMeta) {
    if meta.range.is_some_and(|(lo, hi)| !(lo.is_finite() && hi.is_finite())) {
        meta.range = None;
    }
}
