//! OpenEXR: first layer, one channel (`Y`, else `R`, else the first) in; float32 `Y` out.

use std::io::Cursor;

use ::exr::prelude::*;
use erode::Heightmap;

use crate::ReadOptions;
use crate::error::{FormatError, corrupt, unsupported};
use crate::samples::{Decoded, FileMeta, Samples, check_size};

const NAME: &str = "OpenEXR";

fn read_error(e: ::exr::error::Error) -> FormatError {
    match e {
        ::exr::error::Error::Io(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            FormatError::Truncated("the EXR ends early".into())
        }
        ::exr::error::Error::NotSupported(what) => unsupported(NAME, what),
        e => corrupt(NAME, e),
    }
}

pub(crate) fn decode(bytes: &[u8], options: &ReadOptions) -> std::result::Result<Decoded, FormatError> {
    // the header first: refuse oversized images before the pixel reader allocates for them
    let meta = MetaData::read_from_buffered(Cursor::new(bytes), false).map_err(read_error)?;
    let header = meta.headers.first().ok_or_else(|| corrupt(NAME, "no layer"))?;
    let size = header.layer_size;
    check_size(size.0 as u64, size.1 as u64, options)?;
    for h in meta.headers.iter() {
        let s = h.layer_size;
        check_size(s.0 as u64, s.1 as u64, options)?;
    }
    let image = read()
        .no_deep_data()
        .largest_resolution_level()
        .all_channels()
        .first_valid_layer()
        .all_attributes()
        .non_parallel()
        .from_buffered(Cursor::new(bytes))
        .map_err(read_error)?;
    let layer = image.layer_data;
    let (width, height) = (layer.size.0, layer.size.1);
    let channels = &layer.channel_data.list;
    let pick = ["Y", "R", "Z"]
        .iter()
        .find_map(|name| channels.iter().find(|c| c.name.eq(name)))
        .or_else(|| channels.first())
        .ok_or_else(|| corrupt(NAME, "no channel"))?;
    let (values, sample_type): (Vec<f32>, _) = match &pick.sample_data {
        FlatSamples::F32(v) => (v.clone(), "float32"),
        FlatSamples::F16(v) => (v.iter().map(|x| x.to_f32()).collect(), "float16"),
        FlatSamples::U32(_) => return Err(unsupported(NAME, "u32 channel; heights must be float")),
    };
    if values.len() != width * height {
        return Err(corrupt(NAME, "channel size does not match the layer"));
    }
    Ok(Decoded { width, height, samples: Samples::Float(values), sample_type, mask: None, meta: FileMeta::default() })
}

pub(crate) fn encode(map: &Heightmap) -> std::result::Result<Vec<u8>, FormatError> {
    let g = &map.heights;
    let data: Vec<f32> = super::raw::float_cells(map, f32::NAN).collect();
    let channel = AnyChannel::new("Y", FlatSamples::F32(data));
    let layer = Layer::new(
        (g.width(), g.height()),
        LayerAttributes::named("height"),
        Encoding::SMALL_LOSSLESS,
        AnyChannels::sort(SmallVec::from_vec(vec![channel])),
    );
    let mut out = Cursor::new(Vec::new());
    Image::from_layer(layer)
        .write()
        .non_parallel()
        .to_buffered(&mut out)
        .map_err(|e| FormatError::Options(format!("EXR encoder: {e}")))?;
    Ok(out.into_inner())
}
