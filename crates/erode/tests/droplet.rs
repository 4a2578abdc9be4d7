//! The droplet model against its contract: exact books, finite everywhere, bounded steps,
//! symmetry, borders, and the same bits for any thread count and across a resume.

use erode::models::droplet::{DropletBorder, DropletParams, DropletSim, DropletState};
use erode::terrain::{TerrainKind, TerrainSpec, generate};
use erode::{CellSize, Grid};

/// A terrain as gentle as 002's (slopes of a few hundredths of a metre per cell: the droplet
/// model works in cells, so its parameters assume such slopes).
fn terrain(kind: TerrainKind, size: usize, seed: u64, base: f64) -> Grid<f32> {
    let spec = TerrainSpec {
        kind,
        width: size,
        height: size,
        seed,
        relief: size as f64 * 0.04,
        base,
        feature_size: size as f64 / 2.0,
        ..Default::default()
    };
    generate(&spec).unwrap().heights
}

/// Runs with the floor at the terrain's lowest height, as the CLI does.
fn run(params: &DropletParams, t: &Grid<f32>, n: u64) -> DropletState {
    let floor = t.as_slice().iter().fold(f32::INFINITY, |a, &b| a.min(b));
    let params = &DropletParams { min_height: f64::from(floor), ..params.clone() };
    let mut st = DropletState::new(t).unwrap();
    let mut sim = DropletSim::new(params.clone(), &st).unwrap();
    sim.run(&mut st, n, &mut |_| {});
    st
}

fn finite(st: &DropletState) -> bool {
    [&st.terrain, &st.eroded, &st.deposited, &st.flow].iter().all(|f| f.iter().all(|v| v.is_finite()))
}

#[test]
fn books_balance_exactly_for_every_border() {
    let t = terrain(TerrainKind::Ridged, 96, 1, 0.0);
    for border in [DropletBorder::Open, DropletBorder::Closed, DropletBorder::Wrap] {
        let params = DropletParams { border, ..Default::default() };
        let st = run(&params, &t, 5000);
        let b = &st.books;
        assert!(b.eroded > 0, "{border:?}: nothing eroded");
        assert_eq!(b.eroded, b.deposited + b.outflow, "{border:?}: eroded = deposited + outflow");
        if border != DropletBorder::Open {
            assert_eq!(b.outflow, 0);
        }
        let (books, field) = st.balance();
        assert_eq!(books, 0.0);
        assert!(field < 1e-5, "{border:?}: terrain change vs books {field}");
        assert!(finite(&st));
    }
}

#[test]
fn finite_on_random_flat_and_below_sea_level_terrains() {
    for (kind, base) in [(TerrainKind::Fbm, 0.0), (TerrainKind::Ridged, -300.0), (TerrainKind::DiamondSquare, -5.0)] {
        for seed in 0..3 {
            let st = run(&DropletParams { seed, ..Default::default() }, &terrain(kind, 64, seed, base), 2000);
            assert!(finite(&st), "{kind:?} seed {seed}");
        }
    }
    let flat = Grid::from_fn(32, 32, CellSize::default(), |_, _| -12.5).unwrap();
    let st = run(&DropletParams::default(), &flat, 2000);
    assert!(finite(&st));
    assert!(st.terrain.iter().all(|&h| (h + 12.5).abs() < 1e-3), "flat ground changed");
}

#[test]
fn same_bits_for_any_thread_count_and_across_a_resume() {
    let t = terrain(TerrainKind::Fbm, 80, 4, 0.0);
    let params = DropletParams { batch_size: 1, ..Default::default() };
    let in_pool = |threads: usize, n: u64| {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| run(&params, &t, n))
    };
    let one = in_pool(1, 1000);
    for threads in [2, 7] {
        assert!(in_pool(threads, 1000) == one, "{threads} threads differ from 1");
    }
    // 500 then 500 more, with the same floor run() uses
    let floor = t.as_slice().iter().fold(f32::INFINITY, |a, &b| a.min(b));
    let params = DropletParams { min_height: f64::from(floor), ..params };
    let mut st = DropletState::new(&t).unwrap();
    let mut sim = DropletSim::new(params.clone(), &st).unwrap();
    sim.run(&mut st, 500, &mut |_| {});
    let mut sim = DropletSim::new(params.clone(), &st).unwrap();
    sim.run(&mut st, 500, &mut |_| {});
    assert!(st == one, "resumed run differs");
    // another seed gives another terrain
    assert!(run(&DropletParams { seed: 9, ..params.clone() }, &t, 1000) != one);
}

#[test]
fn a_cone_erodes_around_its_apex() {
    // uniform droplets on a symmetric cone: the erosion centroid sits on the apex. Tolerance: the
    // issue's one cell; over these 13 seeds (8000 droplets each) the largest offset measured was
    // 0.33 cells, so one cell is three times the observed spread.
    let size = 65;
    let cone = Grid::from_fn(size, size, CellSize::default(), |r, c| {
        let d = ((r as f64 - 32.0).powi(2) + (c as f64 - 32.0).powi(2)).sqrt();
        (3.0 - d * 0.1).max(0.0) as f32
    })
    .unwrap();
    for seed in 0..13 {
        let st = run(&DropletParams { seed, radius: 3.0, max_lifetime: 60, ..Default::default() }, &cone, 8000);
        let total: f64 = st.eroded.iter().map(|&e| f64::from(e)).sum();
        let cx: f64 = st.eroded.iter().enumerate().map(|(i, &e)| (i % size) as f64 * f64::from(e)).sum::<f64>() / total;
        let cy: f64 = st.eroded.iter().enumerate().map(|(i, &e)| (i / size) as f64 * f64::from(e)).sum::<f64>() / total;
        assert!((cx - 32.0).abs() < 1.0 && (cy - 32.0).abs() < 1.0, "seed {seed}: centroid ({cx:.2}, {cy:.2})");
    }
}

#[test]
fn border_bands_erode_no_more_than_interior_bands_of_the_same_slope() {
    // a plane sloping along x: every row has the same slope. Compare the edge rows with middle
    // rows, away from the up- and downhill ends. Bound 1.5x (issue 4); over these 13 seeds the
    // ratio measured 0.49 to 1.05 (edge rows lose droplets through the open edge).
    let (w, h) = (96usize, 64usize);
    let ramp = Grid::from_fn(w, h, CellSize::default(), |_, c| (0.03 * (w - c) as f64) as f32).unwrap();
    for seed in 0..13 {
        let st = run(&DropletParams { seed, radius: 3.0, max_lifetime: 80, ..Default::default() }, &ramp, 6000);
        let band = |rows: std::ops::Range<usize>| -> f64 {
            let mut sum = 0.0;
            let mut n = 0.0;
            for r in rows {
                for c in 16..w - 16 {
                    sum += f64::from(st.eroded[r * w + c]);
                    n += 1.0;
                }
            }
            sum / n
        };
        let edge = (band(0..4) + band(h - 4..h)) / 2.0;
        let interior = band(h / 2 - 4..h / 2 + 4);
        assert!(interior > 0.0, "seed {seed}: no interior erosion");
        let ratio = edge / interior;
        assert!(ratio <= 1.5, "seed {seed}: border band erodes {ratio:.2}x the interior band");
    }
}
