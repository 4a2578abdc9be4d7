//! TIFF and GeoTIFF: one band of int8/16/32, uint8/16 or float32/64 in (stripped or tiled, any
//! compression the `tiff` crate knows); float32 out, deflate-compressed, with the georeference and
//! GDAL_NODATA carried through.

use std::io::{Cursor, Read, Seek};
use std::ops::Range;

use ::tiff::decoder::{Decoder, DecodingResult, Limits};
use ::tiff::tags::Tag;
use ::tiff::{ColorType, TiffError, TiffFormatError};
use erode::{HeightStats, Heightmap};

use super::tiff_strips::{self, Strips, Tags, Value};

use crate::error::{FormatError, corrupt, unsupported};
use crate::samples::{Decoded, FileMeta, IntKind, Samples, check_size};
use crate::{GeoRef, ReadOptions, WriteOptions};

const NAME: &str = "TIFF";

fn read_error(e: TiffError) -> FormatError {
    match e {
        TiffError::IoError(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            FormatError::Truncated("the TIFF ends before its data".into())
        }
        TiffError::FormatError(TiffFormatError::TiffSignatureNotFound) => corrupt(NAME, "no TIFF signature"),
        TiffError::UnsupportedError(u) => unsupported(NAME, unsupported_words(&u)),
        TiffError::LimitsExceeded => {
            FormatError::Options("the TIFF exceeds the size limit (raise it with --max-cells)".into())
        }
        e => corrupt(NAME, e),
    }
}

/// What the files erode reads hold, for messages.
const READS: &str = "erode reads one band of 8/16/32-bit integers or 32/64-bit floats";

/// A `tiff` crate's refusal in plain words (its own messages print its types' Debug forms).
fn unsupported_words(u: &::tiff::TiffUnsupportedError) -> String {
    use ::tiff::TiffUnsupportedError as U;
    use ::tiff::tags::SampleFormat;
    match u {
        U::UnsupportedSampleFormat(formats) => {
            let words: Vec<String> = formats
                .iter()
                .map(|f| match f {
                    SampleFormat::Uint => "unsigned integers".into(),
                    SampleFormat::Int => "signed integers".into(),
                    SampleFormat::IEEEFP => "floating point".into(),
                    SampleFormat::Void => "undefined data (SampleFormat 4)".into(),
                    other => format!("SampleFormat {}", other.to_u16()),
                })
                .collect();
            format!("samples of {} ({READS})", words.join(", "))
        }
        U::UnsupportedColorType(c) => colour_words(*c),
        U::UnsupportedBitsPerChannel(bits) | U::UnsupportedSampleDepth(bits) => {
            format!("{bits}-bit samples ({READS})")
        }
        U::UnsupportedCompressionMethod(m) => format!("compression method {} is not supported", m.to_u16()),
        other => other.to_string(),
    }
}

/// Why an image of colour type `c` is no heightmap, in plain words.
fn colour_words(c: ColorType) -> String {
    let (what, bits) = match c {
        ColorType::Gray(b) => return format!("{b}-bit samples ({READS})"),
        ColorType::RGB(b) => ("an RGB image", b),
        ColorType::RGBA(b) => ("an RGBA image", b),
        ColorType::Palette(b) => ("a palette image", b),
        ColorType::GrayA(b) => ("a grey image with alpha", b),
        ColorType::CMYK(b) | ColorType::CMYKA(b) => ("a CMYK image", b),
        ColorType::YCbCr(b) => ("a YCbCr image", b),
        ColorType::Lab(b) => ("a Lab image", b),
        ColorType::Multiband { bit_depth, num_samples } => {
            return format!("{num_samples} bands of {bit_depth} bits: a heightmap has one band");
        }
        _ => ("an image of several bands", 0),
    };
    format!("{what} of {bits}-bit samples: a heightmap has one band")
}

fn tag_f64s<R: Read + Seek>(d: &mut Decoder<R>, tag: Tag) -> Result<Option<Vec<f64>>, FormatError> {
    d.find_tag(tag).map_err(read_error)?.map(|v| v.into_f64_vec().map_err(read_error)).transpose()
}

fn georef<R: Read + Seek>(d: &mut Decoder<R>) -> Result<GeoRef, FormatError> {
    Ok(GeoRef {
        pixel_scale: tag_f64s(d, Tag::ModelPixelScaleTag)?,
        tiepoint: tag_f64s(d, Tag::ModelTiepointTag)?,
        transformation: tag_f64s(d, Tag::ModelTransformationTag)?,
        geokeys: d
            .find_tag(Tag::GeoKeyDirectoryTag)
            .map_err(read_error)?
            .map(|v| v.into_u16_vec().map_err(read_error))
            .transpose()?,
        geo_doubles: tag_f64s(d, Tag::GeoDoubleParamsTag)?,
        geo_ascii: d
            .find_tag(Tag::GeoAsciiParamsTag)
            .map_err(read_error)?
            .map(|v| v.into_string().map_err(read_error))
            .transpose()?,
    })
}

/// Checks the first directory's tag counts against the file's length before the `tiff` crate
/// reads it: it reads the first directory with its default limits, so a tag claiming millions
/// of values in a 10 KB file would have it reserve tens of MB first.
fn check_first_directory(bytes: &[u8]) -> Result<(), FormatError> {
    let le = match bytes.get(..2) {
        Some(b"II") => true,
        Some(b"MM") => false,
        _ => return Ok(()), // the decoder names a bad signature
    };
    let uint = |at: usize, n: usize| -> Option<u64> {
        let b = bytes.get(at..at.checked_add(n)?)?;
        Some(b.iter().enumerate().fold(
            0u64,
            |v, (i, &x)| {
                if le { v | (u64::from(x) << (8 * i)) } else { (v << 8) | u64::from(x) }
            },
        ))
    };
    let big = match uint(2, 2) {
        Some(42) => false,
        Some(43) => true,
        _ => return Ok(()),
    };
    let Some(first) = (if big { uint(8, 8) } else { uint(4, 4) }) else { return Ok(()) };
    let Ok(at) = usize::try_from(first) else { return Ok(()) };
    let (count_size, entry_size, count_at, count_len) = if big { (8, 20, 4, 8) } else { (2, 12, 4, 4) };
    let Some(entries) = uint(at, count_size) else { return Ok(()) };
    for k in 0..entries.min(4096) as usize {
        let entry = at + count_size + k * entry_size;
        let (Some(tag), Some(kind), Some(count)) =
            (uint(entry, 2), uint(entry + 2, 2), uint(entry + count_at, count_len))
        else {
            return Ok(());
        };
        let size: u64 = match kind {
            1 | 2 | 6 | 7 => 1,
            3 | 8 => 2,
            4 | 9 | 11 | 13 => 4,
            5 | 10 | 12 | 16 | 17 | 18 => 8,
            _ => continue,
        };
        if count.saturating_mul(size) > bytes.len() as u64 {
            return Err(corrupt(
                NAME,
                format!("tag {tag} claims {count} values, more than the file's {} bytes hold", bytes.len()),
            ));
        }
    }
    Ok(())
}

/// The decoder's limits for a file of `len` bytes read with `options`.
fn limits(len: u64, options: &ReadOptions) -> Limits {
    let mut limits = Limits::default();
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    limits.decoding_buffer_size = usize::try_from(options.max_cells.saturating_mul(8)).unwrap_or(usize::MAX);
    // no compressed strip or tag value is larger than the file holding it: a header claiming
    // more would make the decoder reserve memory for bytes that are not there
    limits.intermediate_buffer_size = len;
    limits.ifd_value_size = len.min(limits.ifd_value_size);
    limits
}

/// What a TIFF's directory says of the whole map: its size, georeference, nodata, cell size.
struct Header {
    width: usize,
    height: usize,
    meta: FileMeta,
}

/// The directory's header, the map's size checked against `options`' limit when `whole` (a
/// block of rows is checked on its own).
fn header<R: Read + Seek>(d: &mut Decoder<R>, options: &ReadOptions, whole: bool) -> Result<Header, FormatError> {
    let (w, h) = d.dimensions().map_err(read_error)?;
    let unlimited = ReadOptions { max_cells: u64::MAX, ..options.clone() };
    let (width, height) = check_size(u64::from(w), u64::from(h), if whole { options } else { &unlimited })?;
    match d.colortype().map_err(read_error)? {
        ColorType::Gray(_) => {}
        other => return Err(unsupported(NAME, colour_words(other))),
    }
    let geo = georef(d)?;
    geo.check_transformation().map_err(|e| unsupported(NAME, e))?;
    let nodata = match d.find_tag(Tag::GdalNodata).map_err(read_error)? {
        None => None,
        Some(v) => {
            let text = v.into_string().map_err(|_| corrupt(NAME, "GDAL_NODATA is not text"))?;
            let text = text.trim().trim_end_matches('\0').trim();
            // GDAL writes "nan", "-inf" and decimals; anything else would silently mark no cell
            match text.parse::<f64>() {
                Ok(v) => Some(v),
                // the caller's value replaces the file's
                Err(_) if options.nodata.is_some() => None,
                Err(_) => {
                    return Err(corrupt(
                        NAME,
                        format!("GDAL_NODATA {text:?} is not a number (give the nodata value with --nodata)"),
                    ));
                }
            }
        }
    };
    let cell_size = geo.cell_size_metres(height);
    if cell_size.is_none()
        && options.cell_size.is_none()
        && let Some((sx, sy)) = geo.pixel_size()
        && !(sx.abs() > 0.0 && sy.abs() > 0.0 && sx.is_finite() && sy.is_finite())
    {
        // a pixel scale that is no size (NaN, 0, negative both ways) read as 1 m before
        return Err(corrupt(
            NAME,
            format!("the GeoTIFF pixel scale {sx} x {sy} is no cell size (give the cell size with --cell-size)"),
        ));
    }
    let meta = FileMeta { georef: (!geo.is_empty()).then_some(geo), nodata, range: None, cell_size };
    Ok(Header { width, height, meta })
}

/// A decoded image (or a part of one) as samples, with the name of their type.
fn samples_of(image: DecodingResult) -> Result<(Samples, &'static str), FormatError> {
    let int = |values: Vec<i32>, full_scale: u32| Samples::Int { values, full_scale, kind: IntKind::Metres };
    Ok(match image {
        DecodingResult::F32(v) => (Samples::Float(v), "float32"),
        DecodingResult::F64(v) => (Samples::Float(v.into_iter().map(|x| x as f32).collect()), "float64"),
        DecodingResult::I16(v) => (int(v.into_iter().map(i32::from).collect(), 32767), "int16"),
        DecodingResult::U16(v) => (int(v.into_iter().map(i32::from).collect(), 65535), "uint16"),
        DecodingResult::I32(v) => (int(v, i32::MAX as u32), "int32"),
        DecodingResult::U8(v) => (int(v.into_iter().map(i32::from).collect(), 255), "uint8"),
        DecodingResult::I8(v) => (int(v.into_iter().map(i32::from).collect(), 127), "int8"),
        other => {
            let kind = match other {
                DecodingResult::U32(_) => "uint32",
                DecodingResult::U64(_) => "uint64",
                DecodingResult::I64(_) => "int64",
                DecodingResult::F16(_) => "float16",
                _ => "this",
            };
            return Err(unsupported(NAME, format!("{kind} samples ({READS})")));
        }
    })
}

fn samples_len(samples: &Samples) -> usize {
    match samples {
        Samples::Float(v) => v.len(),
        Samples::Int { values, .. } => values.len(),
    }
}

pub(crate) fn decode(bytes: &[u8], options: &ReadOptions) -> Result<Decoded, FormatError> {
    check_first_directory(bytes)?;
    let limits = limits(bytes.len() as u64, options);
    let mut d = Decoder::new(Cursor::new(bytes)).map_err(read_error)?.with_limits(limits.clone());
    let Header { width, height, meta } = header(&mut d, options, true)?;
    let image = match float_strips(bytes, &limits, &mut d, width) {
        Ok(Some(values)) => Ok(DecodingResult::F32(values)),
        Ok(None) => d.read_image(),
        Err(e) => Err(e),
    };
    let image = image.map_err(|e| match e {
        // the size passed the cells' limit above: a strip or tile claims more than the file holds
        TiffError::LimitsExceeded => {
            FormatError::Truncated(format!("the TIFF's strips or tiles claim more bytes than its {} hold", bytes.len()))
        }
        e => read_error(e),
    })?;
    let (samples, sample_type) = samples_of(image)?;
    let len = samples_len(&samples);
    if len != width * height {
        return Err(corrupt(NAME, format!("decoded {len} samples for {width} x {height}")));
    }
    Ok(Decoded { width, height, samples, sample_type, mask: None, meta })
}

/// The size (columns, rows) of the TIFF that `reader` reads (`len` bytes long), from its
/// header alone, held to `options.max_cells` as a whole map is, and the rows of its strips or
/// tiles (what a reader by rows decodes at once).
pub(crate) fn dimensions<R: Read + Seek>(
    reader: R,
    len: u64,
    options: &ReadOptions,
) -> Result<(usize, usize, usize), FormatError> {
    let mut d = Decoder::new(reader).map_err(read_error)?.with_limits(limits(len, options));
    let Header { width, height, .. } = header(&mut d, options, true)?;
    let (_, chunk_rows) = d.chunk_dimensions();
    Ok((width, height, (chunk_rows as usize).clamp(1, height.max(1))))
}

/// Rows `rows` of the TIFF that `reader` reads (`len` bytes long), decoding only the strips or
/// tiles that they cross: what one rank of a run over MPI reads of a map that no rank holds
/// whole. The georeference, nodata value and cell size are the whole map's; the result is the
/// rows as a map of their own, its cells (not the whole map's), and those of each strip or tile
/// decoded for it, held to `options.max_cells`.
pub(crate) fn decode_rows<R: Read + Seek>(
    reader: R,
    len: u64,
    rows: Range<usize>,
    options: &ReadOptions,
) -> Result<Decoded, FormatError> {
    let mut d = Decoder::new(reader).map_err(read_error)?.with_limits(limits(len, options));
    let Header { width, height, meta } = header(&mut d, options, false)?;
    if rows.is_empty() || rows.end > height {
        return Err(FormatError::Options(format!(
            "rows {} to {} of a map of {height} rows",
            rows.start,
            rows.end.saturating_sub(1)
        )));
    }
    check_size(width as u64, rows.len() as u64, options)?;
    let (cw, ch) = d.chunk_dimensions();
    let (cw, ch) = (cw as usize, ch as usize);
    let across = match d.get_chunk_type() {
        ::tiff::decoder::ChunkType::Strip => 1,
        ::tiff::decoder::ChunkType::Tile => width.div_ceil(cw.max(1)),
    };
    if cw == 0 || ch == 0 {
        return Err(corrupt(NAME, "strips or tiles of no size"));
    }
    let n = width * rows.len();
    let raw = RawStrips::of(&mut d, len)?;
    let mut window: Option<(Samples, &'static str)> = None;
    for down in rows.start / ch..=(rows.end - 1) / ch {
        for across_k in 0..across {
            let index = u32::try_from(down * across + across_k).map_err(|_| corrupt(NAME, "too many strips"))?;
            let (x0, y0) = (across_k * cw, down * ch);
            // the strip's or tile's cells within the map (those at its right and bottom edges
            // are cut short)
            let (dw, dh) = (cw.min(width - x0), ch.min(height - y0));
            // an uncompressed strip: only its rows among `rows` are read (a file of one strip,
            // as some writers make them, is not read whole by every rank); the rows of the
            // strip that `samples` holds from here on start at `y0`
            let (samples, kind, y0, dh) = match &raw {
                Some(raw) => {
                    let (from, to) = (y0.max(rows.start), (y0 + dh).min(rows.end));
                    let result = raw.rows(&mut d, index, (from - y0)..(to - y0), dw)?;
                    let (samples, kind) = samples_of(result)?;
                    (samples, kind, from, to - from)
                }
                None => {
                    let (samples, kind) = samples_of(d.read_chunk(index).map_err(read_error)?)?;
                    (samples, kind, y0, dh)
                }
            };
            if samples_len(&samples) != dw * dh {
                return Err(corrupt(NAME, format!("strip or tile {index} holds another number of samples")));
            }
            let (into, _) = window.get_or_insert_with(|| match &samples {
                Samples::Float(_) => (Samples::Float(vec![0.0; n]), kind),
                Samples::Int { full_scale, kind: k, .. } => {
                    (Samples::Int { values: vec![0; n], full_scale: *full_scale, kind: *k }, kind)
                }
            });
            for y in y0.max(rows.start)..(y0 + dh).min(rows.end) {
                let (from, to) = ((y - y0) * dw, (y - rows.start) * width + x0);
                match (&mut *into, &samples) {
                    (Samples::Float(out), Samples::Float(v)) => out[to..to + dw].copy_from_slice(&v[from..from + dw]),
                    (Samples::Int { values: out, .. }, Samples::Int { values: v, .. }) => {
                        out[to..to + dw].copy_from_slice(&v[from..from + dw]);
                    }
                    _ => return Err(corrupt(NAME, "strips or tiles of different sample types")),
                }
            }
        }
    }
    let (samples, sample_type) = window.ok_or_else(|| corrupt(NAME, "no strips or tiles"))?;
    Ok(Decoded { width, height: rows.len(), samples, sample_type, mask: None, meta })
}

/// Where the rows of an uncompressed little-endian TIFF in strips lie, one grey sample a cell:
/// read straight from the file, a strip's rows without the rest of it.
struct RawStrips {
    offsets: Vec<u64>,
    byte_counts: Vec<u64>,
    /// Bytes a sample.
    bytes: usize,
    /// The samples' kind: 1 unsigned, 2 signed, 3 float (TIFF's SampleFormat).
    format: u16,
    /// The file's length, bytes.
    len: u64,
}

impl RawStrips {
    /// The strips of the image `d` decodes (from a file of `len` bytes), or `None` when they
    /// are compressed, tiles, big-endian or of samples the decoder must unpack itself.
    fn of<R: Read + Seek>(d: &mut Decoder<R>, len: u64) -> Result<Option<Self>, FormatError> {
        let tag = |d: &mut Decoder<R>, t: Tag| -> Result<Option<u16>, FormatError> {
            d.find_tag(t).map_err(read_error)?.map(|v| v.into_u16().map_err(read_error)).transpose()
        };
        // an absent tag holds TIFF's default: 1 for each of those read here
        if d.get_chunk_type() != ::tiff::decoder::ChunkType::Strip
            || d.byte_order() != ::tiff::tags::ByteOrder::LittleEndian
            || tag(d, Tag::Compression)?.unwrap_or(1) != 1
            || tag(d, Tag::Predictor)?.unwrap_or(1) != 1
            || tag(d, Tag::SamplesPerPixel)?.unwrap_or(1) != 1
            || tag(d, Tag::FillOrder)?.unwrap_or(1) != 1
        {
            return Ok(None);
        }
        let bits = match d.colortype().map_err(read_error)? {
            ColorType::Gray(b @ (8 | 16 | 32 | 64)) => b,
            _ => return Ok(None),
        };
        let format = tag(d, Tag::SampleFormat)?.unwrap_or(1);
        if !(1..=3).contains(&format) || (format == 3 && bits < 32) {
            return Ok(None);
        }
        let offsets = d.get_tag_u64_vec(Tag::StripOffsets).map_err(read_error)?;
        let byte_counts = d.get_tag_u64_vec(Tag::StripByteCounts).map_err(read_error)?;
        Ok(Some(Self { offsets, byte_counts, bytes: usize::from(bits / 8), format, len }))
    }

    /// Rows `rows` of strip `index`, `width` samples each, read from the file `d` decodes.
    fn rows<R: Read + Seek>(
        &self,
        d: &mut Decoder<R>,
        index: u32,
        rows: Range<usize>,
        width: usize,
    ) -> Result<DecodingResult, FormatError> {
        let k = index as usize;
        let (Some(&offset), Some(&count)) = (self.offsets.get(k), self.byte_counts.get(k)) else {
            return Err(corrupt(NAME, format!("strip {index} has no offset or length")));
        };
        let row_bytes = (width * self.bytes) as u64;
        let (start, end) = (rows.start as u64 * row_bytes, rows.end as u64 * row_bytes);
        if end > count || offset.saturating_add(end) > self.len {
            return Err(FormatError::Truncated(format!(
                "strip {index} ends before its rows {} to {}",
                rows.start, rows.end
            )));
        }
        let mut buffer = vec![0u8; usize::try_from(end - start).map_err(|_| corrupt(NAME, "a strip too large"))?];
        let reader = d.inner();
        reader.seek(std::io::SeekFrom::Start(offset + start)).map_err(|e| read_error(e.into()))?;
        reader.read_exact(&mut buffer).map_err(|e| read_error(e.into()))?;
        macro_rules! le {
            ($t:ty, $variant:ident) => {
                DecodingResult::$variant(
                    buffer
                        .chunks_exact(size_of::<$t>())
                        .map(|b| <$t>::from_le_bytes(b.try_into().unwrap_or_default()))
                        .collect(),
                )
            };
        }
        Ok(match (self.format, self.bytes) {
            (3, 4) => le!(f32, F32),
            (3, _) => le!(f64, F64),
            (1, 1) => DecodingResult::U8(buffer),
            (2, 1) => le!(i8, I8),
            (1, 2) => le!(u16, U16),
            (2, 2) => le!(i16, I16),
            (1, 4) => le!(u32, U32),
            (2, 4) => le!(i32, I32),
            (1, _) => le!(u64, U64),
            _ => le!(i64, I64),
        })
    }
}

/// The cells of a float32 image in strips (what erode and GDAL write), inflated on every thread:
/// each thread decodes a run of strips with a decoder of its own over the same bytes, into its
/// rows of the map. `None` for any other layout (one strip, tiles, other samples), read whole.
fn float_strips(
    bytes: &[u8],
    limits: &Limits,
    d: &mut Decoder<Cursor<&[u8]>>,
    width: usize,
) -> Result<Option<Vec<f32>>, TiffError> {
    use rayon::prelude::*;
    let float = d.find_tag(Tag::SampleFormat)?.map(|v| v.into_u16()).transpose()? == Some(3);
    if !float || d.colortype()? != ColorType::Gray(32) || d.get_chunk_type() != ::tiff::decoder::ChunkType::Strip {
        return Ok(None);
    }
    let (strips, (_, rows)) = (d.strip_count()? as usize, d.chunk_dimensions());
    let (_, height) = d.dimensions()?;
    if strips < 2 || rows == 0 || strips != (height as usize).div_ceil(rows as usize) {
        return Ok(None);
    }
    // runs of strips of ~1 MB or more, so that a decoder's start (reading the directory) is small
    let strip_cells = rows as usize * width;
    let per_run = (1usize << 18).div_ceil(strip_cells).max(1);
    let mut cells = vec![0f32; width * height as usize];
    cells.par_chunks_mut(strip_cells * per_run).enumerate().try_for_each(|(run, out)| {
        let mut d = Decoder::new(Cursor::new(bytes))?.with_limits(limits.clone());
        for (k, out) in out.chunks_mut(strip_cells).enumerate() {
            match d.read_chunk((run * per_run + k) as u32)? {
                DecodingResult::F32(v) if v.len() == out.len() => out.copy_from_slice(&v),
                _ => return Err(TiffError::FormatError(TiffFormatError::InconsistentSizesEncountered)),
            }
        }
        Ok(())
    })?;
    Ok(Some(cells))
}

/// GDAL's text for a float32 nodata value: the value the cells hold, printed so that it reads
/// back as exactly that float32 (a text of an f64 between two float32s is refused or warned about
/// by GDAL's readers).
fn nodata_text(v: f32) -> String {
    let v = f64::from(v);
    if v.is_nan() {
        "nan".into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:e}")
    }
}

pub(crate) fn encode(map: &Heightmap, options: &WriteOptions) -> Result<Vec<u8>, FormatError> {
    let g = &map.heights;
    let nodata = options.nodata_value.unwrap_or(f64::NAN) as f32;
    let data: Vec<f32> = super::raw::float_cells(map, nodata).collect();
    let nodata = (map.nodata_count() > 0 || options.nodata_value.is_some()).then_some(nodata);
    let tags = tags(g.cell_size(), options, nodata, &map.stats());
    tiff_strips::encode(&Strips::new(g.width(), g.height()), &data, &tags)
}

/// The tags a map's file carries besides its image: its georeference (or, without one, its cell
/// size), its nodata value and GDAL's metadata with the heights' `stats`.
pub(crate) fn tags(cell: erode::CellSize, options: &WriteOptions, nodata: Option<f32>, stats: &HeightStats) -> Tags {
    let mut tags: Tags = Vec::new();
    match &options.georef {
        Some(geo) => {
            let doubles = [
                (33550, &geo.pixel_scale),
                (33922, &geo.tiepoint),
                (34264, &geo.transformation),
                (34736, &geo.geo_doubles),
            ];
            for (tag, v) in doubles {
                if let Some(v) = v {
                    tags.push((tag, Value::Double(v.clone())));
                }
            }
            if let Some(v) = &geo.geokeys {
                tags.push((34735, Value::Short(v.clone())));
            }
            if let Some(v) = &geo.geo_ascii {
                tags.push((34737, Value::Ascii(v.clone())));
            }
        }
        None => {
            // no CRS, but keep the cell size: a pixel scale without GeoKeys reads as metres
            tags.push((33550, Value::Double(vec![cell.x, cell.y, 0.0])));
            tags.push((33922, Value::Double(vec![0.0; 6])));
        }
    }
    if let Some(v) = nodata {
        tags.push((GDAL_NODATA, Value::Ascii(nodata_text(v))));
    }
    tags.push((GDAL_METADATA, Value::Ascii(gdal_metadata(stats))));
    tags
}

/// GDAL's nodata tag (a text).
const GDAL_NODATA: u16 = 42113;

/// GDAL's metadata tag (an XML text), where GDAL and QGIS read a band's unit and statistics.
const GDAL_METADATA: u16 = 42112;

/// The band's unit (metres), what it holds, and its heights' range as GDAL's statistics: any
/// GDAL reader (QGIS, Blender's GIS importers, engines' GDAL plugins) finds the range without
/// scanning the cells.
fn gdal_metadata(s: &HeightStats) -> String {
    format!(
        "<GDALMetadata>\n  <Item name=\"DESCRIPTION\" sample=\"0\" role=\"description\">height</Item>\n  \
         <Item name=\"UNITTYPE\" sample=\"0\" role=\"unittype\">metre</Item>\n  \
         <Item name=\"STATISTICS_MINIMUM\" sample=\"0\">{}</Item>\n  \
         <Item name=\"STATISTICS_MAXIMUM\" sample=\"0\">{}</Item>\n  \
         <Item name=\"STATISTICS_MEAN\" sample=\"0\">{}</Item>\n</GDALMetadata>\n",
        s.min, s.max, s.mean
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiled float32 TIFF of `width` x `height` cells in tiles of 16 x 16, uncompressed, each
    /// tile padded to its full size (as TIFF stores them), written the way GDAL lays them out.
    fn tiled(width: usize, height: usize, cells: &[f32]) -> Vec<u8> {
        let (across, down) = (width.div_ceil(16), height.div_ceil(16));
        let mut data = Vec::new();
        let mut offsets = Vec::new();
        for ty in 0..down {
            for tx in 0..across {
                offsets.push(8 + data.len() as u32);
                for y in ty * 16..ty * 16 + 16 {
                    for x in tx * 16..tx * 16 + 16 {
                        let v = if x < width && y < height { cells[y * width + x] } else { 0.0 };
                        data.extend(v.to_le_bytes());
                    }
                }
            }
        }
        let entries: Tags = vec![
            (256, Value::Long(vec![width as u32])),
            (257, Value::Long(vec![height as u32])),
            (258, Value::Short(vec![32])),
            (259, Value::Short(vec![1])),
            (262, Value::Short(vec![1])),
            (277, Value::Short(vec![1])),
            (322, Value::Long(vec![16])),
            (323, Value::Long(vec![16])),
            (324, Value::Long(offsets.clone())),
            (325, Value::Long(vec![16 * 16 * 4; offsets.len()])),
            (339, Value::Short(vec![3])),
        ];
        little_endian_file(data, &entries)
    }

    /// A little-endian TIFF of the image bytes `data` (right after the header) and the
    /// directory `entries` (after them).
    fn little_endian_file(data: Vec<u8>, entries: &Tags) -> Vec<u8> {
        let at = 8 + data.len() as u64;
        let mut file = b"II".to_vec();
        file.extend(42u16.to_le_bytes());
        file.extend((at as u32).to_le_bytes());
        file.extend(data);
        file.extend(super::tiff_strips::directory(entries, at, false).unwrap());
        file
    }

    /// An uncompressed TIFF of `width` x `height` cells in one strip (as tifffile writes one
    /// by default), its samples `bits` wide of kind `format` (TIFF's SampleFormat) from
    /// `sample`'s little-endian bytes.
    fn one_strip(width: usize, height: usize, bits: u16, format: u16, sample: impl Fn(usize) -> Vec<u8>) -> Vec<u8> {
        one_strip_of(width, height, bits, format, sample, None)
    }

    /// [`one_strip`], its strip said to hold `declared` bytes (its own when `None`).
    fn one_strip_of(
        width: usize,
        height: usize,
        bits: u16,
        format: u16,
        sample: impl Fn(usize) -> Vec<u8>,
        declared: Option<u32>,
    ) -> Vec<u8> {
        let data: Vec<u8> = (0..width * height).flat_map(sample).collect();
        let entries: Tags = vec![
            (256, Value::Long(vec![width as u32])),
            (257, Value::Long(vec![height as u32])),
            (258, Value::Short(vec![bits])),
            (259, Value::Short(vec![1])),
            (262, Value::Short(vec![1])),
            (273, Value::Long(vec![8])),
            (277, Value::Short(vec![1])),
            (278, Value::Long(vec![height as u32])),
            (279, Value::Long(vec![declared.unwrap_or(data.len() as u32)])),
            (339, Value::Short(vec![format])),
        ];
        little_endian_file(data, &entries)
    }

    #[test]
    fn rows_of_a_file_in_one_strip_are_read_without_the_rest_of_it() {
        let (w, h) = (60, 50);
        let floats: Vec<f32> = (0..w * h).map(|i| i as f32 * 0.25 - 7.0).collect();
        let float_file = one_strip(w, h, 32, 3, |i| floats[i].to_le_bytes().to_vec());
        let int_file = one_strip(w, h, 16, 1, |i| ((i * 37 % 65536) as u16).to_le_bytes().to_vec());
        let options = ReadOptions { cell_size: Some(erode::CellSize::square(10.0)), ..ReadOptions::default() };
        for file in [&float_file, &int_file] {
            let whole = decode(file, &options).unwrap();
            for rows in [0..50, 0..1, 7..19, 49..50] {
                let part = decode_rows(Cursor::new(&file[..]), file.len() as u64, rows.clone(), &options).unwrap();
                assert_eq!((part.width, part.height, part.sample_type), (w, rows.len(), whole.sample_type));
                let cells = rows.start * w..rows.end * w;
                match (&part.samples, &whole.samples) {
                    (Samples::Float(got), Samples::Float(all)) => assert_eq!(got[..], all[cells], "rows {rows:?}"),
                    (Samples::Int { values: got, .. }, Samples::Int { values: all, .. }) => {
                        assert_eq!(got[..], all[cells], "rows {rows:?}");
                    }
                    _ => panic!("other samples"),
                }
            }
        }
        // a rank's rows of it within a cells' limit far below the strip's: the strip is never
        // decoded whole
        let small = ReadOptions { max_cells: (w * 5) as u64, ..options.clone() };
        let part = decode_rows(Cursor::new(&float_file[..]), float_file.len() as u64, 20..25, &small).unwrap();
        let Samples::Float(got) = &part.samples else { panic!("not floats") };
        assert_eq!(got[..], floats[20 * w..25 * w]);
        // a strip said to end before the rows asked for is refused, not read past its end
        let short = one_strip_of(w, h, 32, 3, |i| floats[i].to_le_bytes().to_vec(), Some((w * 40 * 4) as u32));
        let Err(err) = decode_rows(Cursor::new(&short[..]), short.len() as u64, 45..50, &options) else {
            panic!("rows past the strip's end were read")
        };
        assert!(err.to_string().contains("strip 0 ends before"), "{err}");
        assert!(decode_rows(Cursor::new(&short[..]), short.len() as u64, 30..40, &options).is_ok());
    }

    #[test]
    fn rows_of_a_tiled_file_decode_alone_as_the_whole_file_has_them() {
        let (w, h) = (70, 45);
        let cells: Vec<f32> = (0..w * h).map(|i| i as f32 * 0.5 - 100.0).collect();
        let file = tiled(w, h, &cells);
        let options = ReadOptions { cell_size: Some(erode::CellSize::square(10.0)), ..ReadOptions::default() };
        let whole = decode(&file, &options).unwrap();
        let Samples::Float(all) = &whole.samples else { panic!("not floats") };
        assert_eq!(all, &cells);
        for rows in [0..45, 0..1, 15..17, 16..32, 30..45, 44..45] {
            let part = decode_rows(Cursor::new(&file[..]), file.len() as u64, rows.clone(), &options).unwrap();
            let Samples::Float(got) = &part.samples else { panic!("not floats") };
            assert_eq!((part.width, part.height), (w, rows.len()));
            assert_eq!(got[..], cells[rows.start * w..rows.end * w], "rows {rows:?}");
        }
        assert!(decode_rows(Cursor::new(&file[..]), file.len() as u64, 40..46, &options).is_err());
    }
}
