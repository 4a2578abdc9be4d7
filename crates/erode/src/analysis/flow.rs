//! Flow routing on a filled surface (see [`super::fill`]): D8 (O'Callaghan & Mark 1984: all of
//! a cell's water to its steepest lower neighbour) and multiple flow directions (Freeman 1991:
//! to every lower neighbour in proportion to `slope^1.1`), and the drainage area each gives.
//!
//! A cell with no lower neighbour is an outlet (only edge cells and cells beside nodata can be,
//! after ε-filling): its water leaves the domain. Accumulation visits cells in a topological
//! order (every donor before its receiver, Kahn's algorithm), so it is O(n) and its sums run in
//! a fixed order: the same bits on any thread count.

use rayon::prelude::*;

use super::domain::Domain;

/// `NONE` as a receiver: the cell is an outlet (or outside the domain).
pub const NONE: u32 = u32::MAX;

/// D8 flow directions.
#[derive(Clone, Debug, PartialEq)]
pub struct D8 {
    /// The cell each cell drains to, or [`NONE`].
    pub receiver: Vec<u32>,
    /// Distance to the receiver, m (0 for outlets).
    pub length: Vec<f32>,
    /// Cells inside the domain, every donor before its receiver.
    pub order: Vec<u32>,
}

/// Steepest-descent receivers of every cell of `domain` on the `routed` surface, and their order.
pub fn d8(domain: &Domain<'_>, routed: &[f64]) -> D8 {
    let n = domain.len();
    let dist = domain.distances();
    let inv: [f64; 8] = dist.map(|d| 1.0 / d);
    let (receiver, length): (Vec<u32>, Vec<f32>) = (0..n)
        .into_par_iter()
        .with_min_len(4096)
        .map(|i| {
            if !domain.inside(i) {
                return (NONE, 0.0);
            }
            let mut best = (NONE, 0.0f64, 0.0f32);
            for k in 0..8 {
                let Some(j) = domain.neighbour(i, k) else { continue };
                if !domain.inside(j) {
                    continue;
                }
                let drop = routed[i] - routed[j];
                if drop > 0.0 {
                    let s = drop * inv[k];
                    if s > best.1 {
                        best = (j as u32, s, dist[k] as f32);
                    }
                }
            }
            (best.0, best.2)
        })
        .unzip();
    let order = topological_order(domain, |i, visit| {
        let r = receiver[i];
        if r != NONE {
            visit(r as usize);
        }
    });
    D8 { receiver, length, order }
}

/// Cells inside the domain in an order where each comes before every cell `downstream` lists for
/// it (Kahn's algorithm, ties by index).
fn topological_order(domain: &Domain<'_>, downstream: impl Fn(usize, &mut dyn FnMut(usize))) -> Vec<u32> {
    let n = domain.len();
    let mut donors = vec![0u8; n];
    for i in 0..n {
        if domain.inside(i) {
            downstream(i, &mut |j| donors[j] += 1);
        }
    }
    let mut order: Vec<u32> = (0..n).filter(|&i| domain.inside(i) && donors[i] == 0).map(|i| i as u32).collect();
    let mut head = 0;
    while head < order.len() {
        let i = order[head] as usize;
        head += 1;
        downstream(i, &mut |j| {
            donors[j] -= 1;
            if donors[j] == 0 {
                order.push(j as u32);
            }
        });
    }
    order
}

/// D8 drainage area of every cell, m² (its own cell included; 0 outside the domain).
pub fn d8_area(domain: &Domain<'_>, flow: &D8) -> Vec<f64> {
    let a = domain.cell.area();
    d8_accumulate(domain, flow, |_| a)
}

/// The sum of `own(i)` over every cell that drains through each cell, itself included (0
/// outside the domain): with `own` a cell's area, its drainage area; with its inflow, its
/// steady discharge.
pub fn d8_accumulate(domain: &Domain<'_>, flow: &D8, own: impl Fn(usize) -> f64) -> Vec<f64> {
    let mut total: Vec<f64> = (0..domain.len()).map(|i| if domain.inside(i) { own(i) } else { 0.0 }).collect();
    for &i in &flow.order {
        let r = flow.receiver[i as usize];
        if r != NONE {
            total[r as usize] += total[i as usize];
        }
    }
    total
}

/// Exponent of the slope in Freeman's (1991) multiple flow direction split.
pub const MFD_EXPONENT: f64 = 1.1;

/// Multiple-flow-direction drainage area (Freeman 1991) of every cell, m², on the `routed`
/// surface.
pub fn mfd_area(domain: &Domain<'_>, routed: &[f64]) -> Vec<f64> {
    let n = domain.len();
    let dist = domain.distances();
    let lower = |i: usize, visit: &mut dyn FnMut(usize, usize)| {
        for k in 0..8 {
            if let Some(j) = domain.neighbour(i, k)
                && domain.inside(j)
                && routed[j] < routed[i]
            {
                visit(j, k);
            }
        }
    };
    let order = topological_order(domain, |i, visit| lower(i, &mut |j, _| visit(j)));
    let a = domain.cell.area();
    let mut area: Vec<f64> = (0..n).map(|i| if domain.inside(i) { a } else { 0.0 }).collect();
    let mut share = [(0usize, 0.0f64); 8];
    for &i in &order {
        let i = i as usize;
        let mut count = 0;
        let mut total = 0.0;
        lower(i, &mut |j, k| {
            let w = ((routed[i] - routed[j]) / dist[k]).powf(MFD_EXPONENT);
            share[count] = (j, w);
            count += 1;
            total += w;
        });
        if total > 0.0 {
            let own = area[i];
            for &(j, w) in &share[..count] {
                area[j] += own * w / total;
            }
        }
    }
    area
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fill::priority_flood;
    use crate::grid::CellSize;

    /// A plane tilted towards the east edge, 2 m cells.
    fn ramp(w: usize, h: usize) -> Vec<f32> {
        (0..w * h).map(|i| (w - i % w) as f32).collect()
    }

    #[test]
    fn on_a_ramp_every_row_drains_east_and_the_last_column_holds_its_row() {
        let (w, h) = (7, 4);
        let d = Domain { width: w, height: h, cell: CellSize::square(2.0), nodata: None };
        let f = priority_flood(&d, &ramp(w, h));
        let flow = d8(&d, &f.routed);
        assert_eq!(flow.order.len(), w * h);
        let area = d8_area(&d, &flow);
        for r in 0..h {
            assert_eq!(area[r * w + w - 1], 4.0 * w as f64, "row {r}");
            assert_eq!(flow.receiver[r * w], (r * w + 1) as u32);
        }
        // MFD on a plane: same totals at the outlet column (the water of the whole map)
        let mfd = mfd_area(&d, &f.routed);
        let total: f64 = (0..h).map(|r| mfd[r * w + w - 1]).sum();
        assert!((total - 4.0 * (w * h) as f64).abs() < 1e-9, "{total}");
    }

    #[test]
    fn areas_conserve_the_domain_on_noise() {
        use crate::terrain::{TerrainSpec, generate};
        let map = generate(&TerrainSpec { width: 40, height: 30, seed: 5, ..Default::default() }).unwrap();
        let mask: Vec<bool> = (0..1200).map(|i| (400..420).contains(&i)).collect();
        let d = Domain { width: 40, height: 30, cell: CellSize::square(1.0), nodata: Some(&mask) };
        let f = priority_flood(&d, map.heights.as_slice());
        let flow = d8(&d, &f.routed);
        let area = d8_area(&d, &flow);
        let mfd = mfd_area(&d, &f.routed);
        // the water of every valid cell leaves through outlets exactly once
        let outlets = |a: &[f64]| -> f64 {
            (0..1200)
                .filter(|&i| {
                    d.inside(i)
                        && !(0..8).any(|k| d.neighbour(i, k).is_some_and(|j| d.inside(j) && f.routed[j] < f.routed[i]))
                })
                .map(|i| a[i])
                .sum()
        };
        assert!((outlets(&area) - 1180.0).abs() < 1e-9);
        assert!((outlets(&mfd) - 1180.0).abs() < 1e-6);
        assert!(area.iter().enumerate().all(|(i, &a)| if mask[i] { a == 0.0 } else { a >= 1.0 }));
    }
}
