//! PNG: 8/16-bit grey (alpha 0 marks nodata; RGB with equal channels read as grey) in, 16-bit grey
//! out with erode's range in `tEXt`.

use std::io::Cursor;

use erode::Heightmap;
use erode::preview::Rgb8Image;

use crate::error::{FormatError, corrupt, unsupported};
use crate::samples::{Decoded, FileMeta, IntKind, Quantiser, Samples, check_size, complete_meta, parse_meta};
use crate::{ReadOptions, WriteOptions};

const NAME: &str = "PNG";
const KEY_PREFIX: &str = "erode:";

pub(crate) fn decode(bytes: &[u8], options: &ReadOptions) -> Result<Decoded, FormatError> {
    let mut decoder = png::Decoder::new(Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::IDENTITY);
    // the checked size below is what matters; this keeps the decoder's own buffers bounded too
    decoder
        .set_limits(png::Limits { bytes: usize::try_from(options.max_cells.saturating_mul(8)).unwrap_or(usize::MAX) });
    let mut reader = decoder.read_info().map_err(|e| match e {
        png::DecodingError::IoError(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            FormatError::Truncated("the PNG ends inside its header".into())
        }
        png::DecodingError::LimitsExceeded => {
            FormatError::Options("the PNG exceeds the size limit (raise it with --max-cells)".into())
        }
        e => corrupt(NAME, e),
    })?;
    let info = reader.info();
    let (width, height) = check_size(u64::from(info.width), u64::from(info.height), options)?;
    let (color, depth) = (info.color_type, info.bit_depth);
    // grey, or RGB whose three channels are equal (grey saved as colour by an image editor)
    let (channels, colour) = match color {
        png::ColorType::Grayscale => (1, false),
        png::ColorType::GrayscaleAlpha => (2, false),
        png::ColorType::Rgb => (3, true),
        png::ColorType::Rgba => (4, true),
        other => return Err(unsupported(NAME, format!("{other:?} colour; heightmaps must be greyscale"))),
    };
    let bytes_per_sample = match depth {
        png::BitDepth::Eight => 1,
        png::BitDepth::Sixteen => 2,
        other => return Err(unsupported(NAME, format!("{other:?}-bit samples; use 8 or 16 bits"))),
    };
    let mut meta = FileMeta::default();
    for t in &info.uncompressed_latin1_text {
        if let Some(key) = t.keyword.strip_prefix(KEY_PREFIX) {
            parse_meta(&mut meta, key, &t.text);
        }
    }
    complete_meta(&mut meta);
    let size = reader.output_buffer_size().ok_or_else(|| corrupt(NAME, "image too large"))?;
    let expected = width * height * channels * bytes_per_sample;
    if size != expected {
        return Err(corrupt(NAME, format!("frame of {size} bytes for {width} x {height}")));
    }
    let mut buf = vec![0u8; size];
    reader.next_frame(&mut buf).map_err(|e| match e {
        png::DecodingError::IoError(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            FormatError::Truncated("the image data ends early".into())
        }
        e => corrupt(NAME, e),
    })?;
    let stride = channels * bytes_per_sample;
    let sample = |px: &[u8], k: usize| -> i32 {
        if bytes_per_sample == 2 { i32::from(u16::from_be_bytes([px[2 * k], px[2 * k + 1]])) } else { i32::from(px[k]) }
    };
    if colour
        && let Some(k) =
            buf.chunks_exact(stride).position(|px| sample(px, 1) != sample(px, 0) || sample(px, 2) != sample(px, 0))
    {
        return Err(unsupported(
            NAME,
            format!(
                "an RGB image whose channels differ (first at row {}, column {}); heightmaps are greyscale",
                k / width,
                k % width
            ),
        ));
    }
    let values: Vec<i32> = buf.chunks_exact(stride).map(|px| sample(px, 0)).collect();
    let alpha = [None, None, Some(1), None, Some(3)][channels];
    let mask = alpha.map(|a| buf.chunks_exact(stride).map(|px| sample(px, a) == 0).collect());
    let full_scale = if bytes_per_sample == 2 { 65535 } else { 255 };
    Ok(Decoded {
        width,
        height,
        samples: Samples::Int { values, full_scale, kind: IntKind::Image },
        sample_type: if bytes_per_sample == 2 { "uint16" } else { "uint8" },
        mask,
        meta,
    })
}

fn encoder_error(e: png::EncodingError) -> FormatError {
    FormatError::Options(format!("PNG encoder: {e}"))
}

pub(crate) fn encode(map: &Heightmap, options: &WriteOptions) -> Result<Vec<u8>, FormatError> {
    let g = &map.heights;
    let q = Quantiser::new(map, options.range, 65535);
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, dim(g.width())?, dim(g.height())?);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(png::BitDepth::Sixteen);
        for (k, v) in q.describe(g.cell_size()) {
            enc.add_text_chunk(format!("{KEY_PREFIX}{k}"), v).map_err(encoder_error)?;
        }
        let mut w = enc.write_header().map_err(encoder_error)?;
        let mut data = Vec::with_capacity(g.len() * 2);
        for i in 0..g.len() {
            data.extend_from_slice(&(q.sample(map, i) as u16).to_be_bytes());
        }
        w.write_image_data(&data).map_err(encoder_error)?;
        w.finish().map_err(encoder_error)?;
    }
    Ok(out)
}

fn dim(n: usize) -> Result<u32, FormatError> {
    u32::try_from(n).map_err(|_| FormatError::Options(format!("{n} pixels is too wide for PNG")))
}

pub(crate) fn encode_rgb8(image: &Rgb8Image) -> Result<Vec<u8>, FormatError> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, dim(image.width)?, dim(image.height)?);
        // previews and renders: encoding time is the user's wait, a few per cent of size is not
        enc.set_compression(png::Compression::Fast);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().map_err(encoder_error)?;
        w.write_image_data(&image.pixels).map_err(encoder_error)?;
        w.finish().map_err(encoder_error)?;
    }
    Ok(out)
}
