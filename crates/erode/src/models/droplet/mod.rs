//! The droplet model: particle erosion after Beyer (2015), as told in 002 and read as
//! `shared/MODEL.md` section 2 says.
//!
//! Each droplet starts at a random position (cells), and for up to `max_lifetime` steps: reads the
//! bilinear height and gradient, turns `dir = dir·inertia − grad·(1 − inertia)` (a random
//! direction on flat ground), moves one cell, and compares heights `Δh = h(new) − h(old)`.
//! Uphill it drops `min(Δh, sediment)` at the old position; downhill its capacity is
//! `max(−Δh, min_slope)·speed·water·capacity`: above capacity it drops `(sediment − capacity)·
//! deposition`, below it erodes `min((capacity − sediment)·erosion, −Δh)` through a circular
//! brush of `radius` cells centred on the true position (weights `max(0, r − dist)`, normalised).
//! Deposits split bilinearly over the 4 corners. Then `speed = sqrt(max(0, speed² − Δh·g))`,
//! `water *= 1 − evaporation`. A droplet that dies deposits its load; one leaving an open edge
//! takes it away (booked as outflow).
//!
//! # Determinism
//!
//! Droplet `i` draws from `SplitMix64::keyed(seed, i)`. Droplets run in batches of `batch_size`
//! against the terrain as it was when the batch started; every change is an integer number of
//! quanta (2⁻³² m) added with atomic integer adds, which commute, so a batch gives the same
//! bits whatever the number of threads and whatever order the droplets run in. Batches are merged
//! in order. Difference from a strictly serial run (`batch_size = 1`): a droplet does not see what
//! the other droplets of its batch (nor itself) changed.
//!
//! # Books
//!
//! Eroded, deposited and outflow volumes are exact integer sums of quanta: eroded = deposited +
//! outflow holds to the quantum once every droplet has died.

pub mod cpu;
pub mod params;
pub mod state;

pub use cpu::DropletSim;
pub use params::{DROPLET_PARAM_DOCS, DropletBorder, DropletParams};
pub use state::{DropletBooks, DropletState, droplet_params_fingerprint};
