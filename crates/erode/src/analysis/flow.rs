//! Drainage on a filled surface (see [`crate::flow::fill`]), for `erode analyze` and the grid
//! model's steady start: the flow graph's D8 receivers and stack ([`crate::flow::routing`];
//! O'Callaghan & Mark 1984: all of a cell's water to its steepest lower neighbour) and its
//! multiple flow directions ([`crate::flow::multiple`]; Freeman 1991: to every lower neighbour
//! in proportion to `slope^1.1`), the same routing the stream-power model erodes along.
//!
//! A cell with no lower neighbour is an outlet (only edge cells and cells beside nodata can be,
//! after ε-filling): its water leaves the domain. Accumulation visits each cell after its donors
//! in the stack's order, so it is O(n) and its sums run in a fixed order: the same bits on any
//! thread count.

use crate::flow::Domain;
use crate::flow::multiple::MultipleFlow;
use crate::flow::routing::{ACTIVE, Cells, NO_DIRECTION, OUTSIDE, Routing};

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

/// The flow graph of `domain` on the `routed` surface: every cell inside it routed (no base
/// level but the cells without a lower neighbour), its D8 receivers and stack built.
fn graph(domain: &Domain<'_>, routed: &[f64]) -> (Cells, Routing) {
    let kind = (0..domain.len()).map(|i| if domain.inside(i) { ACTIVE } else { OUTSIDE }).collect();
    let cells = Cells::new(domain.width, domain.height, kind, domain.distances(), f64::NEG_INFINITY);
    let mut routing = Routing::default();
    routing.receivers(&cells, routed);
    // read in the stack's order only: no links
    routing.build_stack(&cells, false);
    (cells, routing)
}

/// Steepest-descent receivers of every cell of `domain` on the `routed` surface, and their order
/// (what the steady start and the analysis share; the catchments' counts, which the start does
/// not need, are [`d8_counts`]).
pub fn d8(domain: &Domain<'_>, routed: &[f64]) -> D8 {
    let (cells, mut routing) = graph(domain, routed);
    // the routing's own buffers become the answer's (no copies: analyze's and the steady
    // start's peak memory)
    let length = routing
        .direction
        .iter()
        .map(|&k| if k == NO_DIRECTION { 0.0 } else { cells.distance[k as usize] as f32 })
        .collect();
    let mut receiver = std::mem::take(&mut routing.receiver);
    for (r, &k) in receiver.iter_mut().zip(&routing.direction) {
        if k == NO_DIRECTION {
            *r = NONE;
        }
    }
    let mut order = std::mem::take(&mut routing.stack);
    order.reverse();
    D8 { receiver, length, order }
}

/// Cells that drain through each cell of `domain`, itself included (0 outside the domain):
/// counted in integers along the flow's order, exactly.
pub fn d8_counts(domain: &Domain<'_>, flow: &D8) -> Vec<u32> {
    let mut count: Vec<u32> = (0..domain.len()).map(|i| u32::from(domain.inside(i))).collect();
    for &i in &flow.order {
        let r = flow.receiver[i as usize];
        if r != NONE {
            count[r as usize] += count[i as usize];
        }
    }
    count
}

/// D8 drainage area of every cell, m² (its own cell included; 0 outside the domain): the cells
/// that drain through it, counted exactly ([`d8_counts`]), times a cell's area, so an area of
/// `k` cells is never rounded below `k` cells' area.
pub fn d8_area(domain: &Domain<'_>, flow: &D8) -> Vec<f64> {
    let a = domain.cell.area();
    d8_counts(domain, flow).into_iter().map(|c| f64::from(c) * a).collect()
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
    let (cells, routing) = graph(domain, routed);
    let mut mfd = MultipleFlow::default();
    mfd.route(&cells, &routing, routed, MFD_EXPONENT);
    mfd.accumulate(&cells, &routing);
    let a = domain.cell.area();
    (0..domain.len()).map(|i| mfd.area(i) * a).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::fill::priority_flood;
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
