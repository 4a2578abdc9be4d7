//! The droplet model: particle erosion after Beyer (2015), as told in 002 and read as
//! `shared/MODEL.md` section 2 says.
//!
//! Each droplet starts at a random position (cells), and for up to `max_lifetime` steps: reads the
//! bilinear height and gradient, turns `dir = dir·inertia − grad·(1 − inertia)` (a random
//! direction on flat ground), moves one cell, and compares heights `Δh = h(new) − h(old)`.
//! Uphill it drops `min(Δh, sediment)` at the old position; downhill its capacity is
//! `max(−Δh, min_slope)·speed·water·capacity`: above capacity it drops `(sediment − capacity)·
//! deposition`, below it erodes `min((capacity − sediment)·erosion, −Δh)` through a circular
//! brush of `radius` cells centred on the true position (weights `max(0, r − dist)`, normalised;
//! distances in f32, weights rounded to 2⁻²⁰ cell).
//! Deposits split bilinearly over the 4 corners. Then `speed = sqrt(max(0, speed² − Δh·g))`,
//! `water *= 1 − evaporation`. A droplet that dies deposits its load; one leaving an open edge
//! takes it away (booked as outflow).
//!
//! Every droplet changes the terrain as it goes and sees what came before it, itself included.
//! A hardness map scales what each cell yields to the brush (000's `R`: 1 soft, 0 bedrock); a
//! rain map makes droplets start in a cell with probability proportional to its rain.
//!
//! # Determinism and parallelism
//!
//! Droplet `i` draws from `SplitMix64::keyed(seed, i)`. Droplets run in batches of `batch_size`;
//! within a batch they are grouped by the band of rows they start in, with bands at least two
//! reaches tall (a droplet never moves further than its lifetime, so it never touches a row more
//! than `reach = max_lifetime + ⌈radius⌉ + 2` away). The even bands' droplets run in parallel,
//! each band's in droplet order, then the odd bands': no two droplets running at the same time
//! touch the same cell, and the result is the same bits for any thread count. Against a strictly
//! serial run (`batch_size = 1`, or a map shorter than eight reaches) only the order of droplets
//! in a batch differs; `examples/droplet_batches.rs` measures the difference (BENCHMARKS.md): it
//! is about the size of the difference between two serial runs with different seeds.
//!
//! # Books
//!
//! Every change is a whole number of quanta (2⁻³² m); eroded, deposited and outflow are exact
//! integer sums of them: eroded = deposited + outflow holds to the quantum once every droplet
//! has died. The f32 terrain carries the changes with its own rounding (the report compares it
//! with the books).

mod brush;
pub mod cpu;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod params;
pub mod scene;
mod smooth;
pub mod state;

pub use cpu::{DropletSim, StepKind, StepRecord};
pub use params::{DROPLET_PARAM_DOCS, DROPLET_PRESETS, DropletBorder, DropletParams, StepRule, droplet_preset};
pub use state::{DropletBooks, DropletMaps, DropletState, droplet_params_fingerprint};
