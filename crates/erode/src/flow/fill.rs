//! Depression filling by Priority-Flood (Barnes, Lehman & Mulla 2014), plain and "+ε" in one
//! flood: cells are visited from the domain's edge inwards in order of their spill height, so
//! each one is reached from the neighbour through which water would leave it.
//!
//! - `spill`: every cell raised to the height at which water standing on it would spill out of
//!   the domain (the plain fill); `spill − z` is the depth of the closed depression it lies in.
//! - `routed`: the same, but a filled cell (or a flat one) is raised to the next representable
//!   f64 above the neighbour it was reached from (Barnes et al.'s ε), so every cell has a
//!   strictly lower neighbour or is an outlet on the edge, and flow routing needs no flat
//!   resolution. The ε is ~1e-13 m at 1000 m: invisible, and never counted as slope (the
//!   slope–area fit leaves out filled cells).

use std::collections::VecDeque;

use super::domain::Domain;
use super::height_queue::HeightQueue;

/// Heights after filling.
#[derive(Clone, Debug, PartialEq)]
pub struct Filled {
    /// Heights with closed depressions filled to their spill height, m.
    pub spill: Vec<f32>,
    /// `spill` with an ε gradient over filled and flat cells, m (see the module docs).
    pub routed: Vec<f64>,
}

/// A key whose unsigned order is the total order of `f64` (negative heights included), for
/// priority queues of heights.
#[inline]
pub(crate) fn key(v: f64) -> u64 {
    let bits = v.to_bits();
    if bits >> 63 == 1 { !bits } else { bits | (1 << 63) }
}

/// The next f64 above `v` (finite `v`).
#[inline]
fn next_up(v: f64) -> f64 {
    v.next_up()
}

/// Fills the closed depressions of `z` (heights in metres) in `domain`. Cells outside the
/// domain keep their height in both outputs. Deterministic: ties go to the lower cell index.
pub fn priority_flood(domain: &Domain<'_>, z: &[f32]) -> Filled {
    let n = domain.len();
    // a cell's three words side by side: the flood reads and writes them at the front, which
    // meanders over the whole map, so one cache line a neighbour rather than three
    let mut cells: Vec<Cell> =
        (0..n).map(|i| Cell { routed: f64::from(z[i]), spill: z[i], done: !domain.inside(i) }).collect();
    // the open cells by spill height, then index: the key's high word, then its low one
    let (low, high) = (0..n)
        .filter(|&i| domain.inside(i))
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), i| (l.min(z[i]), h.max(z[i])));
    let mut open = HeightQueue::new(f64::from(low), f64::from(high), n);
    let entry = |height: f64, i: usize| u128::from(key(height)) << 32 | i as u128;
    let mut pit: VecDeque<u32> = VecDeque::new();
    // the seeds: cells on the map's edge, and (with nodata) cells next to a nodata cell
    let (w0, h0) = (domain.width, domain.height);
    let on_edge = |i: usize| {
        let (r, c) = (i / w0, i % w0);
        r == 0 || c == 0 || r + 1 == h0 || c + 1 == w0
    };
    let seed = |i: usize, cells: &mut [Cell], open: &mut HeightQueue| {
        if !cells[i].done && domain.is_edge(i) {
            cells[i].done = true;
            open.push(cells[i].routed, entry(cells[i].routed, i));
        }
    };
    if domain.nodata.is_some() {
        for i in 0..n {
            seed(i, &mut cells, &mut open);
        }
    } else {
        for i in (0..n).filter(|&i| on_edge(i)) {
            seed(i, &mut cells, &mut open);
        }
    }
    let (w, h) = (domain.width as isize, domain.height as isize);
    loop {
        let c = if let Some(c) = pit.pop_front() {
            c as usize
        } else if let Some(k) = open.pop() {
            k as u32 as usize
        } else {
            break;
        };
        let (r, col) = ((c / domain.width) as isize, (c % domain.width) as isize);
        let (above, spill) = (next_up(cells[c].routed), cells[c].spill);
        for (dr, dc) in super::neighbours::STEPS {
            let (nr, nc) = (r + dr, col + dc);
            if nr < 0 || nc < 0 || nr >= h || nc >= w {
                continue;
            }
            let j = nr as usize * domain.width + nc as usize;
            let cell = &mut cells[j];
            if cell.done {
                continue;
            }
            cell.done = true;
            cell.spill = cell.spill.max(spill);
            if cell.routed <= above {
                cell.routed = above;
                pit.push_back(j as u32);
            } else {
                open.push(cell.routed, entry(cell.routed, j));
            }
        }
    }
    Filled { spill: cells.iter().map(|c| c.spill).collect(), routed: cells.iter().map(|c| c.routed).collect() }
}

/// A cell during the flood.
#[derive(Clone, Copy)]
struct Cell {
    /// Its `Filled::routed` height once reached, m.
    routed: f64,
    /// Its `Filled::spill` height once reached, m.
    spill: f32,
    /// In the closed set (reached), or outside the domain.
    done: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::CellSize;

    fn domain(w: usize, h: usize, nodata: Option<&[bool]>) -> Domain<'_> {
        Domain { width: w, height: h, cell: CellSize::square(1.0), nodata }
    }

    #[test]
    fn keys_order_like_the_heights() {
        let v = [-1e9, -3.5, -0.0, 0.0, 1e-300, 2.0, 7.25, 1e12];
        for p in v.windows(2) {
            assert!(key(p[0]) <= key(p[1]), "{} {}", p[0], p[1]);
        }
    }

    #[test]
    fn a_pit_fills_to_its_rim_and_every_cell_has_a_way_out() {
        // a 5 x 5 bowl: rim 10 except one notch at 6, centre 1, ring 5
        #[rustfmt::skip]
        let z = [
            10.0, 10.0, 10.0, 10.0, 10.0,
            10.0,  5.0,  5.0,  5.0, 10.0,
            10.0,  5.0,  1.0,  5.0,  6.0,
            10.0,  5.0,  5.0,  5.0, 10.0,
            10.0, 10.0, 10.0, 10.0, 10.0f32,
        ];
        let f = priority_flood(&domain(5, 5, None), &z);
        for i in [6, 7, 8, 11, 12, 13, 16, 17, 18] {
            assert_eq!(f.spill[i], 6.0, "cell {i}");
            assert!(f.routed[i] > 6.0 && f.routed[i] < 6.0 + 1e-12, "cell {i}: {}", f.routed[i]);
        }
        assert_eq!(f.spill[0], 10.0);
        // every inner cell has a strictly lower neighbour
        let d = domain(5, 5, None);
        for i in 0..25 {
            if d.is_edge(i) {
                continue;
            }
            let lower = (0..8).filter_map(|k| d.neighbour(i, k)).any(|j| f.routed[j] < f.routed[i]);
            assert!(lower, "cell {i} has no way out");
        }
    }

    #[test]
    fn nodata_is_an_outlet_and_keeps_its_value() {
        // a pit next to a nodata cell drains into it: nothing is filled
        let z = [5.0, 5.0, 5.0, 5.0, 1.0, -9999.0, 5.0, 5.0, 5.0f32];
        let mask = [false, false, false, false, false, true, false, false, false];
        let f = priority_flood(&domain(3, 3, Some(&mask)), &z);
        assert_eq!(f.spill[4], 1.0);
        assert_eq!(f.routed[4], 1.0);
        assert_eq!(f.spill[5], -9999.0);
    }
}
