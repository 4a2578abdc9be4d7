//! Named test scenes for the grid model, shared by its tests.
#![allow(dead_code)]

use erode::models::grid::{CpuSim, CrossSection, Params, StartMaps, State};
use erode::{CellSize, Grid};

/// A grid from a function of (row, col).
pub fn grid(w: usize, h: usize, cell: f64, f: impl FnMut(usize, usize) -> f32) -> Grid<f32> {
    Grid::from_fn(w, h, CellSize::square(cell), f).unwrap()
}

/// The documents' pipe model alone (constant cross-section, no friction), every source and sink
/// of water off.
pub fn still() -> Params {
    Params {
        rain_rate: 0.0,
        evaporation: 0.0,
        capacity: 0.0,
        thermal_rate: 0.0,
        cross_section: CrossSection::Constant,
        friction: 0.0,
        ..Params::classic()
    }
}

/// Runs `n` iterations from `terrain` and `water`.
pub fn run(params: &Params, terrain: &Grid<f32>, water: Option<&Grid<f32>>, n: u64) -> State {
    let mut st = State::new(terrain, params, StartMaps { water, ..Default::default() }).unwrap();
    let mut sim = CpuSim::new(params.clone(), &st).unwrap();
    sim.run(&mut st, n);
    st
}

/// A bumpy bed with heights on a 1/1024 m lattice (so `bed + depth` is exact in f32), a dry
/// island in the middle, gentle enough for the talus.
pub fn bumpy_bed_with_island(w: usize, h: usize) -> Grid<f32> {
    grid(w, h, 1.0, |r, c| {
        let (x, y) = (c as f32, r as f32);
        let bumps = 2.0 + 1.0 * (x * 0.2).sin() * (y * 0.25).cos();
        let (dx, dy) = (x - w as f32 / 2.0, y - h as f32 / 2.0);
        let island = (14.0 - 0.5 * (dx * dx + dy * dy).sqrt()).max(0.0);
        ((bumps + island) * 1024.0).round() / 1024.0
    })
}

/// The checkerboard measure: the share of the variance in the (−1)^(i+j) mode.
pub fn checkerboard(field: &[f32], w: usize) -> f64 {
    let n = field.len() as f64;
    let mean = field.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
    let (mut num, mut den) = (0.0, 0.0);
    for (i, &v) in field.iter().enumerate() {
        let dev = f64::from(v) - mean;
        let sign = if (i / w + i % w).is_multiple_of(2) { 1.0 } else { -1.0 };
        num += sign * dev;
        den += dev * dev;
    }
    num * num / (n * den)
}

/// Bytes of every evolving field, for bit-identity checks.
pub fn fingerprint(st: &State) -> Vec<u8> {
    st.to_bytes(0)
}

/// A V valley on 2 m cells, 48 wide, running down the rows: the floor falls 0.03 a cell, the
/// sides rise 0.15 a cell away from the middle column. `rows` long, cut from a valley `long`
/// rows long (the floor at 0 m after the last of those).
pub fn valley(rows: usize, long: usize) -> Grid<f32> {
    let w = 48usize;
    grid(w, rows, 2.0, |r, c| {
        let across = (c as f64 - (w as f64 - 1.0) / 2.0).abs();
        (2.0 * (0.03 * (long - r) as f64 + 0.15 * across)) as f32
    })
}

/// The deepest lowering (m, > 0 for a cut) among the columns of row `row`.
fn deepest(before: &[f32], after: &[f32], w: usize, row: usize) -> f64 {
    (0..w).map(|c| f64::from(before[row * w + c] - after[row * w + c])).fold(0.0, f64::max)
}

/// An open edge against the terrain going on: the deepest cut in the last row of a [`valley`]
/// `rows` long, and the deepest within 2 rows of the same row in the valley twice as long, m,
/// for the heights `after(terrain)` a run leaves.
pub fn edge_against_long(rows: usize, after: impl Fn(&Grid<f32>) -> Vec<f32>) -> (f64, f64) {
    let (short, long) = (valley(rows, 2 * rows), valley(2 * rows, 2 * rows));
    let w = short.width();
    let (s, l) = (after(&short), after(&long));
    let edge = deepest(short.as_slice(), &s, w, rows - 1);
    let inside = (rows - 3..rows + 2).map(|r| deepest(long.as_slice(), &l, w, r)).fold(0.0, f64::max);
    (edge, inside)
}
