//! The talus mask: ground at the angle of repose of loose rock, where scree rests (angles of
//! repose of scree and talus run from ~30° to ~38°; steeper ground sheds it, gentler ground is
//! rarely scree). A band of the slope's angle with smooth edges.

use rayon::prelude::*;

use super::smoothstep;

/// The band, degrees: 0 below `RISE.0`, 1 from `RISE.1` to `FALL.0`, 0 above `FALL.1`.
pub(super) const RISE: (f64, f64) = (25.0, 30.0);
/// See [`RISE`].
pub(super) const FALL: (f64, f64) = (38.0, 45.0);

/// The band's weight of each cell's slope (m/m).
pub(super) fn mask(slope: &[f32]) -> Vec<f32> {
    slope
        .par_iter()
        .map(|&s| {
            let angle = f64::from(s).atan().to_degrees();
            (smoothstep(RISE.0, RISE.1, angle) * (1.0 - smoothstep(FALL.0, FALL.1, angle))) as f32
        })
        .collect()
}
