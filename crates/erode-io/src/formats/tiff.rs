//! TIFF and GeoTIFF: one band of int8/16/32, uint8/16 or float32/64 in (stripped or tiled, any
//! compression the `tiff` crate knows); float32 out, deflate-compressed, with the georeference and
//! GDAL_NODATA carried through.

use std::io::Cursor;

use ::tiff::decoder::{Decoder, DecodingResult, Limits};
use ::tiff::encoder::TiffEncoder;
use ::tiff::tags::Tag;
use ::tiff::{ColorType, TiffError, TiffFormatError};
use erode::Heightmap;

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

fn tag_f64s(d: &mut Decoder<Cursor<&[u8]>>, tag: Tag) -> Result<Option<Vec<f64>>, FormatError> {
    d.find_tag(tag).map_err(read_error)?.map(|v| v.into_f64_vec().map_err(read_error)).transpose()
}

fn georef(d: &mut Decoder<Cursor<&[u8]>>) -> Result<GeoRef, FormatError> {
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

pub(crate) fn decode(bytes: &[u8], options: &ReadOptions) -> Result<Decoded, FormatError> {
    check_first_directory(bytes)?;
    let mut limits = Limits::default();
    limits.decoding_buffer_size = usize::try_from(options.max_cells.saturating_mul(8)).unwrap_or(usize::MAX);
    // no compressed strip or tag value is larger than the file holding it: a header claiming
    // more would make the decoder reserve memory for bytes that are not there
    limits.intermediate_buffer_size = bytes.len();
    limits.ifd_value_size = bytes.len().min(limits.ifd_value_size);
    let mut d = Decoder::new(Cursor::new(bytes)).map_err(read_error)?.with_limits(limits.clone());
    let (w, h) = d.dimensions().map_err(read_error)?;
    let (width, height) = check_size(u64::from(w), u64::from(h), options)?;
    match d.colortype().map_err(read_error)? {
        ColorType::Gray(_) => {}
        other => return Err(unsupported(NAME, colour_words(other))),
    }
    let geo = georef(&mut d)?;
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
    let n = width * height;
    let int = |values: Vec<i32>, full_scale: u32| Samples::Int { values, full_scale, kind: IntKind::Metres };
    let (samples, sample_type) = match image {
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
    };
    let len = match &samples {
        Samples::Float(v) => v.len(),
        Samples::Int { values, .. } => values.len(),
    };
    if len != n {
        return Err(corrupt(NAME, format!("decoded {len} samples for {width} x {height}")));
    }
    Ok(Decoded {
        width,
        height,
        samples,
        sample_type,
        mask: None,
        meta: FileMeta { georef: (!geo.is_empty()).then_some(geo), nodata, range: None, cell_size },
    })
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

fn write_error(e: TiffError) -> FormatError {
    FormatError::Options(format!("TIFF encoder: {e}"))
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
    let (w, h) = (
        u32::try_from(g.width()).map_err(|_| FormatError::Options("too wide for TIFF".into()))?,
        u32::try_from(g.height()).map_err(|_| FormatError::Options("too tall for TIFF".into()))?,
    );
    let nodata = options.nodata_value.unwrap_or(f64::NAN) as f32;
    let data: Vec<f32> = super::raw::float_cells(map, nodata).collect();
    let rows = strip_rows(g.width());
    let strips = deflate_strips(&data, rows * g.width()).map_err(|e| FormatError::Options(format!("deflate: {e}")))?;
    let mut out = Cursor::new(Vec::new());
    {
        let mut enc = TiffEncoder::new(&mut out).map_err(write_error)?;
        let mut dir = enc.image_directory().map_err(write_error)?;
        // the strips first, then the directory that points at them (as the tiff crate lays out)
        let mut offsets = Vec::with_capacity(strips.len());
        for strip in &strips {
            let at = dir.write_data(&strip[..]).map_err(write_error)?;
            offsets.push(u32::try_from(at).map_err(|_| FormatError::Options("over 4 GB: too large for TIFF".into()))?);
        }
        let counts: Vec<u32> = strips.iter().map(|s| s.len() as u32).collect();
        dir.write_tag(Tag::ImageWidth, w).map_err(write_error)?;
        dir.write_tag(Tag::ImageLength, h).map_err(write_error)?;
        dir.write_tag(Tag::BitsPerSample, 32u16).map_err(write_error)?;
        dir.write_tag(Tag::Compression, ::tiff::tags::CompressionMethod::Deflate.to_u16()).map_err(write_error)?;
        dir.write_tag(Tag::PhotometricInterpretation, ::tiff::tags::PhotometricInterpretation::BlackIsZero.to_u16())
            .map_err(write_error)?;
        dir.write_tag(Tag::StripOffsets, &offsets[..]).map_err(write_error)?;
        dir.write_tag(Tag::SamplesPerPixel, 1u16).map_err(write_error)?;
        dir.write_tag(Tag::RowsPerStrip, rows as u32).map_err(write_error)?;
        dir.write_tag(Tag::StripByteCounts, &counts[..]).map_err(write_error)?;
        dir.write_tag(Tag::SampleFormat, ::tiff::tags::SampleFormat::IEEEFP.to_u16()).map_err(write_error)?;
        let cell = g.cell_size();
        match &options.georef {
            Some(geo) => {
                if let Some(v) = &geo.pixel_scale {
                    dir.write_tag(Tag::ModelPixelScaleTag, &v[..]).map_err(write_error)?;
                }
                if let Some(v) = &geo.tiepoint {
                    dir.write_tag(Tag::ModelTiepointTag, &v[..]).map_err(write_error)?;
                }
                if let Some(v) = &geo.transformation {
                    dir.write_tag(Tag::ModelTransformationTag, &v[..]).map_err(write_error)?;
                }
                if let Some(v) = &geo.geokeys {
                    dir.write_tag(Tag::GeoKeyDirectoryTag, &v[..]).map_err(write_error)?;
                }
                if let Some(v) = &geo.geo_doubles {
                    dir.write_tag(Tag::GeoDoubleParamsTag, &v[..]).map_err(write_error)?;
                }
                if let Some(v) = &geo.geo_ascii {
                    dir.write_tag(Tag::GeoAsciiParamsTag, v.as_str()).map_err(write_error)?;
                }
            }
            None => {
                // no CRS, but keep the cell size: a pixel scale without GeoKeys reads as metres
                dir.write_tag(Tag::ModelPixelScaleTag, &[cell.x, cell.y, 0.0][..]).map_err(write_error)?;
                dir.write_tag(Tag::ModelTiepointTag, &[0.0f64; 6][..]).map_err(write_error)?;
            }
        }
        if map.nodata_count() > 0 || options.nodata_value.is_some() {
            dir.write_tag(Tag::GdalNodata, nodata_text(nodata).as_str()).map_err(write_error)?;
        }
        dir.write_tag(Tag::Unknown(GDAL_METADATA), gdal_metadata(map).as_str()).map_err(write_error)?;
        dir.finish().map_err(write_error)?;
    }
    Ok(out.into_inner())
}

/// GDAL's metadata tag (an XML text), where GDAL and QGIS read a band's unit and statistics.
const GDAL_METADATA: u16 = 42112;

/// The band's unit (metres), what it holds, and its heights' range as GDAL's statistics: any
/// GDAL reader (QGIS, Blender's GIS importers, engines' GDAL plugins) finds the range without
/// scanning the cells.
fn gdal_metadata(map: &Heightmap) -> String {
    let s = map.stats();
    format!(
        "<GDALMetadata>\n  <Item name=\"DESCRIPTION\" sample=\"0\" role=\"description\">height</Item>\n  \
         <Item name=\"UNITTYPE\" sample=\"0\" role=\"unittype\">metre</Item>\n  \
         <Item name=\"STATISTICS_MINIMUM\" sample=\"0\">{}</Item>\n  \
         <Item name=\"STATISTICS_MAXIMUM\" sample=\"0\">{}</Item>\n  \
         <Item name=\"STATISTICS_MEAN\" sample=\"0\">{}</Item>\n</GDALMetadata>\n",
        s.min, s.max, s.mean
    )
}

/// Rows in a strip of `width` float32 cells: about 1 MiB a strip, as the tiff crate cuts them.
fn strip_rows(width: usize) -> usize {
    ((1 << 20) / (4 * width.max(1))).max(1)
}

/// `cells` cut into strips of `strip` cells, each compressed (zlib, TIFF's "Adobe deflate", at
/// the fastest level: float heights compress little more at higher levels, and writing the maps
/// is much of a short run's wall time) on its own thread.
fn deflate_strips(cells: &[f32], strip: usize) -> std::io::Result<Vec<Vec<u8>>> {
    use rayon::prelude::*;
    use std::io::Write;
    cells
        .par_chunks(strip.max(1))
        .map(|c| {
            let bytes: Vec<u8> = c.iter().flat_map(|v| v.to_le_bytes()).collect();
            let mut z =
                flate2::write::ZlibEncoder::new(Vec::with_capacity(bytes.len() / 2), flate2::Compression::fast());
            z.write_all(&bytes)?;
            z.finish()
        })
        .collect()
}
