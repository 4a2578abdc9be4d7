//! Texture maps as files: masks, normal maps, splat maps and albedos (values in 0..1, one to four
//! channels) as 8- or 16-bit PNG, the way engines and texture tools import them.

use std::path::Path;

use crate::atomic::write_atomic;
use crate::error::{Error, FormatError};

/// Bits a channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bits {
    /// 0..255.
    Eight,
    /// 0..65535.
    Sixteen,
}

/// An image of values in 0..1, channels interleaved, row-major from the north-west corner.
#[derive(Clone, Copy, Debug)]
pub struct Texture<'a> {
    /// Pixels across.
    pub width: usize,
    /// Pixels down.
    pub height: usize,
    /// Channels a pixel: 1 (grey), 3 (RGB) or 4 (RGBA).
    pub channels: usize,
    /// `width · height · channels` values in 0..1 (outside: clamped).
    pub values: &'a [f32],
}

/// A value in 0..1 as an integer of `max` steps, rounded to the nearest.
#[inline]
pub fn quantise(v: f32, max: u16) -> u16 {
    (f64::from(v).clamp(0.0, 1.0) * f64::from(max)).round() as u16
}

/// The PNG of a texture.
pub fn encode_png(t: &Texture<'_>, bits: Bits) -> Result<Vec<u8>, FormatError> {
    let colour = match t.channels {
        1 => png::ColorType::Grayscale,
        3 => png::ColorType::Rgb,
        4 => png::ColorType::Rgba,
        n => return Err(FormatError::Options(format!("{n} channels: a texture has 1, 3 or 4"))),
    };
    if t.values.len() != t.width * t.height * t.channels {
        return Err(FormatError::Options(format!(
            "{} values for {} x {} pixels of {} channels",
            t.values.len(),
            t.width,
            t.height,
            t.channels
        )));
    }
    let dim = |n: usize| u32::try_from(n).map_err(|_| FormatError::Options(format!("{n} pixels is too wide for PNG")));
    let data: Vec<u8> = match bits {
        Bits::Eight => t.values.iter().map(|&v| quantise(v, 255) as u8).collect(),
        Bits::Sixteen => t.values.iter().flat_map(|&v| quantise(v, 65535).to_be_bytes()).collect(),
    };
    let error = |e: png::EncodingError| FormatError::Options(format!("PNG encoder: {e}"));
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, dim(t.width)?, dim(t.height)?);
        enc.set_compression(png::Compression::Fast);
        enc.set_color(colour);
        enc.set_depth(if bits == Bits::Eight { png::BitDepth::Eight } else { png::BitDepth::Sixteen });
        let mut w = enc.write_header().map_err(error)?;
        w.write_image_data(&data).map_err(error)?;
        w.finish().map_err(error)?;
    }
    Ok(out)
}

/// Writes a texture as PNG, atomically.
pub fn write_png(path: &Path, t: &Texture<'_>, bits: Bits) -> Result<(), Error> {
    let bytes = encode_png(t, bits).map_err(|e| Error::format(path, e))?;
    write_atomic(path, &bytes)
}

/// Splat rules as a commented TOML file (what `--print-rules` shows and `--rules` reads).
pub fn rules_toml(rules: &erode::texture::Rules) -> String {
    let body = toml::to_string(rules).unwrap_or_default();
    let conditions: Vec<&str> = std::iter::once("height").chain(erode::texture::MASKS.iter().map(|m| m.name)).collect();
    format!(
        "# Splat rules: layers of ground cover, bottom first, each painted over those before it.\n\
         # A layer lies where every band of `when` holds: `name = [low, high]` over a condition,\n\
         # one of: {}.\n\
         # `slope` is in degrees, `height` relative to the map's range (0 lowest, 1 highest),\n\
         # the masks in their 0..1 mapping (docs/masks.md); `fade` softens each band's\n\
         # edges by that share of its range (90° for the slope). A layer without `when` lies\n\
         # everywhere. Colours are sRGB.\n\n{body}",
        conditions.join(", ")
    )
}

/// Reads splat rules from a TOML file (errors name the file and line).
pub fn read_rules(path: &Path) -> Result<erode::texture::Rules, crate::params::ParamsError> {
    crate::params::load(Some(path), &[])
}
