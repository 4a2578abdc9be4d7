//! Maps in, maps out: the small steps a terrain chain needs between models. Resampling to another
//! size ([`resample()`]), cutting a window ([`crop()`]) or shared-edge tiles ([`Tiles`]) and
//! rescaling heights ([`rescale()`]), each keeping the nodata mask and stating the new cell size,
//! so the heights stay metres and the cells metres at every step.

mod crop;
mod resample;
mod rescale;
mod tiles;

pub use crop::{Window, crop};
pub use resample::{Across, ByRows, Filter, resample};
pub use rescale::{MAX_HEIGHT, Rescale, rescale};
pub use tiles::{MAX_TILE, Tiles};
