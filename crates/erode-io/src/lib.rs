//! # erode-io
//!
//! Heightmap file formats for erode. Every decoder checks the size a header claims before it
//! allocates anything, and every writer is atomic (a temporary file in the destination folder,
//! synced, renamed into place).
//!
//! | format | extension | read | write |
//! | --- | --- | --- | --- |
//! | PNG | `.png` | 8/16-bit grey (+alpha: alpha 0 is nodata) | 16-bit grey |
//! | TIFF / GeoTIFF | `.tif` `.tiff` | int8/16/32, uint8/16, float32/64; stripped or tiled; LZW, deflate, PackBits | float32, deflate, GeoTIFF tags and GDAL_NODATA kept |
//! | OpenEXR | `.exr` | first layer, first channel (`Y`, else `R`, else the first), f16/f32 | float32 `Y` channel |
//! | PGM | `.pgm` | P2 and P5, 8/16-bit | P5 16-bit |
//! | NumPy | `.npy` | f32, f64, i16, u16, u8 (C or Fortran order, either byte order) | f32 |
//! | RAW | `.r16` `.raw` | u16 little-endian | u16 little-endian |
//! | RAW | `.r32` | f32 little-endian | f32 little-endian |
//!
//! ## Heights of integer samples
//!
//! Float samples are metres. Integer samples are mapped to metres by an [`IntMapping`]:
//! - image formats (PNG, PGM, RAW `.r16`, NPY `u8`/`u16`) map `[0, full scale]` to
//!   `[min_height, max_height]`: from the options if given, else from the range erode stored in the
//!   file when it wrote it, else `[0, 100]` m ([`DEFAULT_IMAGE_RANGE`]);
//! - DEM formats (TIFF, NPY `i16`) hold metres as stored (scale 1), as GDAL reads them.
//!
//! Meshes (the SPH model's surfaces) are in [`mesh`]: OBJ, PLY, STL in; OBJ, PLY, glTF out.
//!
//! Writing an integer format quantises `[min, max]` of the map (or the range asked for) onto the
//! full 16-bit scale and, where the format can carry text (PNG, PGM), stores that range so that
//! reading the file back gives metres again within one quantum.
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod atomic;
pub mod engine;
pub mod error;
mod footprint;
mod formats;
mod geotiff;
pub mod mesh;
pub mod outputs;
pub mod params;
pub mod rows;
pub mod run;
mod samples;
pub mod scene;
pub mod surface;
mod temporaries;
pub mod texture;

use std::path::Path;

pub use atomic::{check_not_input, check_output, write_atomic, write_atomic_with};
pub use erode::{CellSize, Heightmap};
pub use error::{Error, FormatError};
pub use footprint::Footprint;
pub use geotiff::{CrsKind, GeoRef};
pub use temporaries::remove_all_then as remove_temporaries_then;

/// Largest grid a reader accepts by default: 2^28 cells (16384 x 16384), 1 GiB as f32.
pub const DEFAULT_MAX_CELLS: u64 = 1 << 28;

/// Height range, metres, that an image format's full scale maps to when neither the options nor
/// the file say otherwise.
pub const DEFAULT_IMAGE_RANGE: (f64, f64) = (0.0, 100.0);

/// A heightmap file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// PNG, 16-bit grey out, 8/16-bit grey in.
    Png,
    /// TIFF or GeoTIFF.
    Tiff,
    /// OpenEXR.
    Exr,
    /// Netpbm greymap.
    Pgm,
    /// NumPy array file.
    Npy,
    /// Headerless u16 little-endian.
    R16,
    /// Headerless f32 little-endian.
    R32,
}

impl Format {
    /// The extensions erode knows, for messages.
    pub const EXTENSIONS: &'static str = ".png .tif .tiff .exr .pgm .npy .r16 .raw .r32";

    /// The format a path's extension names.
    pub fn from_path(path: &Path) -> Result<Self, Error> {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        Ok(match ext.as_deref() {
            Some("png") => Self::Png,
            Some("tif" | "tiff") => Self::Tiff,
            Some("exr") => Self::Exr,
            Some("pgm") => Self::Pgm,
            Some("npy") => Self::Npy,
            Some("r16" | "raw") => Self::R16,
            Some("r32") => Self::R32,
            _ => return Err(Error::UnknownFormat { path: path.to_path_buf() }),
        })
    }

    /// The usual extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Png => "png",
            Self::Tiff => "tif",
            Self::Exr => "exr",
            Self::Pgm => "pgm",
            Self::Npy => "npy",
            Self::R16 => "r16",
            Self::R32 => "r32",
        }
    }

    /// True when the format stores integers (heights are quantised on writing).
    pub fn is_integer(self) -> bool {
        matches!(self, Self::Png | Self::Pgm | Self::R16)
    }
}

/// How integer samples become metres.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub enum IntMapping {
    /// `[0, full scale]` maps linearly onto `[min, max]` metres.
    Range {
        /// Height of sample 0, metres.
        min: f64,
        /// Height of the full-scale sample, metres.
        max: f64,
    },
    /// `height = offset + sample * scale` metres.
    Scale {
        /// Metres per sample unit.
        scale: f64,
        /// Metres added.
        offset: f64,
    },
}

/// Options for reading. `Default` reads any file as its format intends.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadOptions {
    /// Largest number of cells accepted. Default [`DEFAULT_MAX_CELLS`].
    pub max_cells: u64,
    /// Override of the integer mapping. Default: per format, see the crate docs.
    pub mapping: Option<IntMapping>,
    /// Width and height of a RAW file. Default: a square from the file length.
    pub raw_size: Option<(usize, usize)>,
    /// Override of the cell size, metres. Default: from the GeoTIFF tags or erode's metadata,
    /// else 1 m.
    pub cell_size: Option<CellSize>,
    /// Sample value that marks missing data (NaN allowed). Default: the file's (GDAL_NODATA,
    /// erode's metadata), else none.
    pub nodata: Option<f64>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self { max_cells: DEFAULT_MAX_CELLS, mapping: None, raw_size: None, cell_size: None, nodata: None }
    }
}

/// What a file said besides the heights.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SourceInfo {
    /// The format read.
    pub format: Format,
    /// Sample type, e.g. `"uint16"`, `"float32"`.
    pub sample_type: &'static str,
    /// The integer mapping used, for integer samples.
    pub mapping: Option<IntMapping>,
    /// The nodata sample value, if one was declared.
    pub nodata_value: Option<f64>,
    /// GeoTIFF georeference, if the file had one.
    pub georef: Option<GeoRef>,
    /// What the reading assumed for want of metadata (integer samples with no height range or
    /// scale in the file or the options), said so a front end can tell the user.
    pub assumed: Option<String>,
}

/// A heightmap read from a file.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    /// Heights in metres, cell size, nodata mask.
    pub map: Heightmap,
    /// What else the file said.
    pub info: SourceInfo,
}

/// Options for writing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WriteOptions {
    /// Height range, metres, that integer formats' full scale stands for. Default: the map's
    /// min and max.
    pub range: Option<(f64, f64)>,
    /// Georeference to write into TIFF outputs (e.g. the input's). Default: none; the cell size is
    /// still written as a pixel scale.
    pub georef: Option<GeoRef>,
    /// Sample value written at nodata cells of TIFF outputs and declared there as GDAL_NODATA
    /// (as float32). Default: NaN. EXR, NPY and R32 have nowhere to declare a value, so their
    /// nodata cells are always NaN.
    pub nodata_value: Option<f64>,
}

/// Reads a heightmap, choosing the format from the extension.
pub fn read(path: &Path, options: &ReadOptions) -> Result<Loaded, Error> {
    let format = Format::from_path(path)?;
    // no heightmap of `max_cells` cells takes more than 16 bytes a cell (four f32 channels) and
    // its headers; a raw file holds exactly its samples
    let most = match format {
        Format::R16 => options.max_cells.saturating_mul(2),
        Format::R32 => options.max_cells.saturating_mul(4),
        _ => options.max_cells.saturating_mul(16).saturating_add(16 << 20),
    };
    let bytes = read_file(path, most, |len| {
        format!(
            "{len} bytes, more than a {format:?} heightmap of at most {} cells takes (raise --max-cells if this is \
             intended)",
            options.max_cells
        )
    })?;
    if matches!(format, Format::R16 | Format::R32) {
        let side = raw_sidecar(path);
        if side.is_file() {
            return read_raw_with_sidecar(&bytes, format, options, &side).map_err(|e| Error::format(path, e));
        }
    }
    decode(&bytes, format, options).map_err(|e| Error::format(path, e))
}

/// The sidecar erode writes beside a raw heightmap: the file's name with `.json` added
/// (`height.r16.json`). It holds the size, cell size, height range and nodata sample that a
/// headerless file cannot.
pub fn raw_sidecar(path: &Path) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".json");
    std::path::PathBuf::from(name)
}

/// A raw file read with what its sidecar says (the options still win: a size, range, cell size
/// or nodata given is used).
fn read_raw_with_sidecar(
    bytes: &[u8],
    format: Format,
    options: &ReadOptions,
    side: &Path,
) -> Result<Loaded, FormatError> {
    let text = std::fs::read_to_string(side)
        .map_err(|e| FormatError::Options(format!("its sidecar {}: {e}", side.display())))?;
    let sidecar: formats::raw::Sidecar = serde_json::from_str(&text)
        .map_err(|e| FormatError::Options(format!("its sidecar {}: {e}", side.display())))?;
    let want = if format == Format::R16 { "r16" } else { "r32" };
    if sidecar.format != want || sidecar.byte_order != "little" {
        return Err(FormatError::Options(format!(
            "its sidecar {} describes {} {}-endian samples, the file's extension says {want}",
            side.display(),
            sidecar.format,
            sidecar.byte_order
        )));
    }
    let options =
        ReadOptions { raw_size: options.raw_size.or(Some((sidecar.width, sidecar.height))), ..options.clone() };
    if bytes.is_empty() {
        return Err(FormatError::Empty);
    }
    let mut decoded = match format {
        Format::R16 => formats::raw::decode_r16(bytes, &options)?,
        _ => formats::raw::decode_r32(bytes, &options)?,
    };
    decoded.meta = sidecar.meta();
    samples::finish(decoded, format, &options)
}

/// The bytes of `path`, a regular file (a FIFO or device would block or never end) of at most
/// `most` bytes (else `too_large` of its length says why), checked before anything is read.
pub(crate) fn read_file(path: &Path, most: u64, too_large: impl FnOnce(u64) -> String) -> Result<Vec<u8>, Error> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        let what = if meta.is_dir() { "a folder" } else { "not a regular file (a FIFO, socket or device)" };
        return Err(Error::format(path, FormatError::Options(format!("{what}: erode reads files"))));
    }
    if meta.len() > most {
        return Err(Error::format(path, FormatError::Options(too_large(meta.len()))));
    }
    std::fs::read(path).map_err(|e| Error::io(path, e))
}

/// Decodes a heightmap from bytes of a known format.
pub fn decode(bytes: &[u8], format: Format, options: &ReadOptions) -> Result<Loaded, FormatError> {
    if bytes.is_empty() {
        return Err(FormatError::Empty);
    }
    let decoded = match format {
        Format::Png => formats::png::decode(bytes, options)?,
        Format::Tiff => formats::tiff::decode(bytes, options)?,
        Format::Exr => formats::exr::decode(bytes, options)?,
        Format::Pgm => formats::pgm::decode(bytes, options)?,
        Format::Npy => formats::npy::decode(bytes, options)?,
        Format::R16 => formats::raw::decode_r16(bytes, options)?,
        Format::R32 => formats::raw::decode_r32(bytes, options)?,
    };
    samples::finish(decoded, format, options)
}

/// Encodes a heightmap in a format, in memory.
pub fn encode(map: &Heightmap, format: Format, options: &WriteOptions) -> Result<Vec<u8>, FormatError> {
    match format {
        Format::Png => formats::png::encode(map, options),
        Format::Tiff => formats::tiff::encode(map, options),
        Format::Exr => formats::exr::encode(map),
        Format::Pgm => formats::pgm::encode(map, options),
        Format::Npy => Ok(formats::npy::encode(map)),
        Format::R16 => Ok(formats::raw::encode_r16(map, options)),
        Format::R32 => Ok(formats::raw::encode_r32(map)),
    }
}

/// The heights (low, high), metres, that sample 0 and the full-scale sample of an integer format
/// stand for when `map` is written with `options` (with nodata, sample 0 is kept for it: the
/// range reaches one step lower).
pub fn sample_range(map: &Heightmap, options: &WriteOptions) -> (f64, f64) {
    let q = samples::Quantiser::new(map, options.range, 65535);
    (q.min, q.max)
}

/// Writes a heightmap atomically, choosing the format from the extension. A raw file (r16,
/// r32) gets its sidecar beside it ([`raw_sidecar`]), written first.
pub fn write(path: &Path, map: &Heightmap, options: &WriteOptions) -> Result<(), Error> {
    let format = Format::from_path(path)?;
    let bytes = encode(map, format, options).map_err(|e| Error::format(path, e))?;
    if matches!(format, Format::R16 | Format::R32) {
        let sidecar = formats::raw::Sidecar::of(map, format == Format::R16, options);
        let text = serde_json::to_string_pretty(&sidecar)
            .map_err(|e| Error::format(path, FormatError::Options(format!("its sidecar: {e}"))))?;
        write_atomic(&raw_sidecar(path), text.as_bytes())?;
    }
    write_atomic(path, &bytes)
}

/// Writes an 8-bit RGB image (a preview) as PNG, atomically.
pub fn write_rgb_png(path: &Path, image: &erode::preview::Rgb8Image) -> Result<(), Error> {
    let bytes = formats::png::encode_rgb8(image).map_err(|e| Error::format(path, e))?;
    write_atomic(path, &bytes)
}
