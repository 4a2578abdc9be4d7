//! One file per format: `decode(bytes, options)` and `encode(map, options)`.

pub(crate) mod exr;
pub(crate) mod npy;
pub(crate) mod pgm;
pub(crate) mod png;
pub(crate) mod raw;
pub(crate) mod tiff;
pub(crate) mod tiff_strips;
