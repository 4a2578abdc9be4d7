//! Headerless RAW heightmaps: `.r16`/`.raw` (u16 LE) and `.r32` (f32 LE). The size comes from the
//! options, or is a square from the file length.

use erode::Heightmap;

use crate::error::FormatError;
use crate::samples::{Decoded, FileMeta, IntKind, Quantiser, Samples, check_size};
use crate::{ReadOptions, WriteOptions};

fn shape(len: usize, bytes_per_cell: usize, options: &ReadOptions) -> Result<(usize, usize), FormatError> {
    if !len.is_multiple_of(bytes_per_cell) {
        return Err(FormatError::Truncated(format!(
            "{len} bytes is not a whole number of {bytes_per_cell}-byte samples"
        )));
    }
    let cells = len / bytes_per_cell;
    let (w, h) = match options.raw_size {
        Some(size) => size,
        None => {
            let side = (cells as f64).sqrt().round() as usize;
            if side * side != cells {
                return Err(FormatError::Options(format!(
                    "{cells} samples is not a square; give the size with --raw-size WIDTHxHEIGHT"
                )));
            }
            (side, side)
        }
    };
    let (w, h) = check_size(w as u64, h as u64, options)?;
    if w * h != cells {
        return Err(FormatError::Truncated(format!(
            "{w} x {h} needs {} bytes, the file has {len}",
            w * h * bytes_per_cell
        )));
    }
    Ok((w, h))
}

pub(crate) fn decode_r16(bytes: &[u8], options: &ReadOptions) -> Result<Decoded, FormatError> {
    let (width, height) = shape(bytes.len(), 2, options)?;
    let values = bytes.chunks_exact(2).map(|b| i32::from(u16::from_le_bytes([b[0], b[1]]))).collect();
    Ok(Decoded {
        width,
        height,
        samples: Samples::Int { values, full_scale: 65535, kind: IntKind::Image },
        sample_type: "uint16",
        mask: None,
        meta: FileMeta::default(),
    })
}

pub(crate) fn decode_r32(bytes: &[u8], options: &ReadOptions) -> Result<Decoded, FormatError> {
    let (width, height) = shape(bytes.len(), 4, options)?;
    let values = bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    Ok(Decoded {
        width,
        height,
        samples: Samples::Float(values),
        sample_type: "float32",
        mask: None,
        meta: FileMeta::default(),
    })
}

pub(crate) fn encode_r16(map: &Heightmap, options: &WriteOptions) -> Vec<u8> {
    let q = Quantiser::new(map, options.range, 65535);
    (0..map.heights.len()).flat_map(|i| (q.sample(map, i) as u16).to_le_bytes()).collect()
}

/// Float cells; nodata cells hold `nodata`.
pub(crate) fn float_cells(map: &Heightmap, nodata: f32) -> impl Iterator<Item = f32> + '_ {
    map.heights.as_slice().iter().enumerate().map(move |(i, &h)| if map.is_nodata(i) { nodata } else { h })
}

/// Nodata cells are NaN: a headerless file cannot say which value means none.
pub(crate) fn encode_r32(map: &Heightmap) -> Vec<u8> {
    float_cells(map, f32::NAN).flat_map(f32::to_le_bytes).collect()
}

/// The sidecar erode writes beside a raw file (`FILE.r16.json`): what a headerless file cannot
/// say. Read back when present, so a raw file round-trips to the same metres, size, cell size
/// and nodata; any reader (an engine's import script, a person) finds the height range in it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Sidecar {
    /// `"r16"` (u16) or `"r32"` (f32).
    pub format: String,
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Always `"little"`.
    pub byte_order: String,
    /// Cell size (x, y), metres.
    pub cell_size: [f64; 2],
    /// Height of sample 0, metres (r16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_height: Option<f64>,
    /// Height of sample 65535, metres (r16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_height: Option<f64>,
    /// The sample that marks cells without data (r16: 0 when the map has any; r32: NaN, not
    /// written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodata: Option<f64>,
    /// How to read the samples, for a person.
    #[serde(default)]
    pub note: String,
}

impl Sidecar {
    /// The sidecar of `map` written as `format` with `options`.
    pub(crate) fn of(map: &Heightmap, r16: bool, options: &WriteOptions) -> Self {
        let cell = map.heights.cell_size();
        let (width, height) = (map.heights.width(), map.heights.height());
        if r16 {
            let q = Quantiser::new(map, options.range, 65535);
            Self {
                format: "r16".into(),
                width,
                height,
                byte_order: "little".into(),
                cell_size: [cell.x, cell.y],
                min_height: Some(q.min),
                max_height: Some(q.max),
                nodata: q.nodata_zero.then_some(0.0),
                note: format!(
                    "u16 little-endian, row-major from the north-west corner; height = {} + sample / 65535 x {} m{}",
                    q.min,
                    q.max - q.min,
                    if q.nodata_zero { "; sample 0 marks cells without data" } else { "" }
                ),
            }
        } else {
            Self {
                format: "r32".into(),
                width,
                height,
                byte_order: "little".into(),
                cell_size: [cell.x, cell.y],
                min_height: None,
                max_height: None,
                nodata: None,
                note: "f32 little-endian metres, row-major from the north-west corner; NaN marks cells without data"
                    .into(),
            }
        }
    }

    /// What the sidecar says, as the file's metadata (an r32's NaN cells are nodata: JSON has
    /// no NaN to write).
    pub(crate) fn meta(&self) -> FileMeta {
        FileMeta {
            georef: None,
            nodata: if self.format == "r32" { Some(f64::NAN) } else { self.nodata },
            range: self.min_height.zip(self.max_height),
            cell_size: Some(erode::CellSize { x: self.cell_size[0], y: self.cell_size[1] }),
        }
    }
}
