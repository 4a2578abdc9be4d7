//! McLeod, Chen & Hu's smoothing pass, made conservative: at a local extremum (higher or lower than all of its
//! existing 4 neighbours) whose difference to their mean exceeds `smoothing_threshold`, the
//! share `smoothing_strength` of the excess is moved to (or taken from) those neighbours equally.

use super::params::Params;
use super::state::State;
use super::topology::Topology;
use crate::par;

/// Runs the pass with scratch `share`. Returns the volume moved, m³.
pub fn smoothing(st: &mut State, p: &Params, topo: &Topology, area: f64, share: &mut [f32]) -> f64 {
    if p.smoothing_strength <= 0.0 {
        return 0.0;
    }
    let w = st.width;
    let (threshold, strength) = (p.smoothing_threshold as f32, p.smoothing_strength as f32);
    let b = &st.terrain;
    let neighbours = |r: usize, c: usize| (0..4).filter_map(move |e| topo.neighbour(r, c, e));
    let sums = topo.rows(&mut [share], w, |r, cols, out| {
        let mut moved = 0.0f64;
        for c in cols {
            let i = r * w + c;
            let (mut n, mut sum, mut above, mut below) = (0u32, 0.0f32, true, true);
            for j in neighbours(r, c) {
                n += 1;
                sum += b[j];
                above &= b[i] > b[j];
                below &= b[i] < b[j];
            }
            out[0][c] = 0.0;
            if n == 0 || !(above || below) {
                continue;
            }
            let dev = b[i] - sum / n as f32;
            let excess = dev.abs() - threshold;
            if excess > 0.0 {
                let t = strength * excess * dev.signum() * 0.5;
                out[0][c] = t / n as f32;
                moved += f64::from(t.abs());
            }
        }
        [moved, 0.0, 0.0, 0.0]
    });
    let share = &*share;
    par::rows(&mut [&mut st.terrain], w, |r, out| {
        for c in 0..w {
            let i = r * w + c;
            let mut change = 0.0f32;
            for j in neighbours(r, c) {
                change += share[j] - share[i];
            }
            out[0][c] += change;
        }
        [0.0; 4]
    });
    sums[0] * area
}
