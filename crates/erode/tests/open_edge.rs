//! A river leaving the map by an open edge leaves as if the terrain went on: the map's last row is
//! lowered no more than the same row of a map twice as long, where the valley does go on (the
//! same drainage area there). Both water models, at their defaults. Before the droplets stepped
//! onto the ground beyond the edge (`droplet::state::beyond_edge`) they cut the edge row 16 m
//! with one droplet a cell and 41.5 km with two (nothing below stopped them; three overflowed the
//! books), against 0.6–0.75 m in the long valley; now 0.46–0.52 m (2026-11-26). The grid holds its
//! edge (its water leaves onto level ground): 0.02 m against 5 m.

use crate::common;

use common::edge_against_long;
use erode::models::{droplet, grid};

#[test]
fn droplets_leave_an_open_edge_as_if_the_valley_went_on() {
    for seed in 0..3 {
        let (edge, inside) = edge_against_long(96, |t| {
            // no floor (the library's default): the CLI's, the input's lowest height, is the
            // short valley's outlet and would stop a notch there
            let params = droplet::Params { seed, ..Default::default() };
            let mut st = droplet::State::new(t).unwrap();
            let mut sim = droplet::CpuSim::new(params, &st).unwrap();
            // 2 droplets a cell
            sim.run(&mut st, 2 * t.len() as u64, &mut |_| {});
            st.terrain
        });
        assert!(inside > 0.05, "seed {seed}: the long valley was not cut ({inside:.3} m)");
        assert!(
            edge <= 1.5 * inside,
            "seed {seed}: the edge row is cut {edge:.2} m, the long valley's same row {inside:.2} m"
        );
    }
}

#[test]
fn grid_water_leaves_an_open_edge_as_if_the_valley_went_on() {
    let params = grid::Params::default();
    let (edge, inside) = edge_against_long(96, |t| common::run(&params, t, None, 1000).heights());
    assert!(inside > 0.05, "the long valley was not cut ({inside:.3} m)");
    assert!(edge <= 1.5 * inside, "the edge row is cut {edge:.2} m, the long valley's same row {inside:.2} m");
}
