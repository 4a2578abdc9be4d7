//! The droplet model against its contract: exact books, finite everywhere, bounded steps,
//! symmetry, borders, and the same bits for any thread count and across a resume.

use erode::SimError;
use erode::models::droplet::{self, StepKind};
use erode::terrain::{TerrainKind, TerrainSpec, generate};
use erode::{CellSize, Grid};

/// A gentle terrain on 1 m cells (slopes of a few hundredths), as in Beyer's (2015) examples.
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
fn run(params: &droplet::Params, t: &Grid<f32>, n: u64) -> droplet::State {
    let floor = t.as_slice().iter().fold(f32::INFINITY, |a, &b| a.min(b));
    let params = &droplet::Params { min_height: f64::from(floor), ..params.clone() };
    let mut st = droplet::State::new(t).unwrap();
    let mut sim = droplet::CpuSim::new(params.clone(), &st).unwrap();
    sim.run(&mut st, n, &mut |_| {});
    st
}

fn finite(st: &droplet::State) -> bool {
    [&st.terrain, &st.eroded, &st.deposited, &st.flow].iter().all(|f| f.iter().all(|v| v.is_finite()))
}

#[test]
fn books_balance_exactly_for_every_border() {
    let t = terrain(TerrainKind::Ridged, 96, 1, 0.0);
    for border in [droplet::Border::Open, droplet::Border::Closed, droplet::Border::Wrap] {
        let params = droplet::Params { border, ..Default::default() };
        let st = run(&params, &t, 5000);
        let b = &st.books;
        assert!(b.eroded > 0, "{border:?}: nothing eroded");
        assert_eq!(b.eroded, b.deposited + b.outflow, "{border:?}: eroded = deposited + outflow");
        if border != droplet::Border::Open {
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
            let st = run(&droplet::Params { seed, ..Default::default() }, &terrain(kind, 64, seed, base), 2000);
            assert!(finite(&st), "{kind:?} seed {seed}");
        }
    }
    let flat = Grid::from_fn(32, 32, CellSize::default(), |_, _| -12.5).unwrap();
    let st = run(&droplet::Params::default(), &flat, 2000);
    assert!(finite(&st));
    assert!(st.terrain.iter().all(|&h| (h + 12.5).abs() < 1e-3), "flat ground changed");
}

#[test]
fn bands_in_parallel_give_the_same_bits_for_any_thread_count_and_across_a_resume() {
    // lifetime 10, radius 2: a reach of 14 rows, so 192 rows make 6 bands
    let t = terrain(TerrainKind::Fbm, 192, 6, 0.0);
    let params = droplet::Params { max_distance: 10.0, radius: 2.0, batch_size: 700, ..Default::default() };
    let sim = droplet::CpuSim::new(params.clone(), &droplet::State::new(&t).unwrap()).unwrap();
    assert_eq!(sim.parallel_bands(192), 6);
    let in_pool = |threads: usize, n: u64| {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| run(&params, &t, n))
    };
    let one = in_pool(1, 5600);
    assert!(one.books.eroded > 0);
    for threads in [2, 7] {
        assert!(in_pool(threads, 5600) == one, "{threads} threads differ from 1");
    }
    let floor = t.as_slice().iter().fold(f32::INFINITY, |a, &b| a.min(b));
    let params = droplet::Params { min_height: f64::from(floor), ..params };
    let mut st = droplet::State::new(&t).unwrap();
    droplet::CpuSim::new(params.clone(), &st).unwrap().run(&mut st, 2800, &mut |_| {});
    let bytes = st.to_bytes(0);
    let mut st = droplet::State::from_bytes(&bytes, 0, 1 << 20).unwrap();
    droplet::CpuSim::new(params.clone(), &st).unwrap().run(&mut st, 2800, &mut |_| {});
    assert!(st == one, "resumed run differs");
    let (books, field) = st.balance();
    assert_eq!(books, 0.0);
    assert!(field < 1e-5);
}

#[test]
fn same_bits_for_any_thread_count_and_across_a_resume() {
    let t = terrain(TerrainKind::Fbm, 80, 4, 0.0);
    let params = droplet::Params { batch_size: 1, ..Default::default() };
    let in_pool = |threads: usize, n: u64| {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| run(&params, &t, n))
    };
    let one = in_pool(1, 1000);
    for threads in [2, 7] {
        assert!(in_pool(threads, 1000) == one, "{threads} threads differ from 1");
    }
    // 500 then 500 more, with the same floor run() uses
    let floor = t.as_slice().iter().fold(f32::INFINITY, |a, &b| a.min(b));
    let params = droplet::Params { min_height: f64::from(floor), ..params };
    let mut st = droplet::State::new(&t).unwrap();
    let mut sim = droplet::CpuSim::new(params.clone(), &st).unwrap();
    sim.run(&mut st, 500, &mut |_| {});
    let mut sim = droplet::CpuSim::new(params.clone(), &st).unwrap();
    sim.run(&mut st, 500, &mut |_| {});
    assert!(st == one, "resumed run differs");
    // another seed gives another terrain
    assert!(run(&droplet::Params { seed: 9, ..params.clone() }, &t, 1000) != one);
}

#[test]
fn a_cone_erodes_around_its_apex() {
    // uniform droplets on a symmetric cone: the erosion centroid sits on the apex. Tolerance: the
    // one cell; over these 13 seeds (8000 droplets each) the largest offset measured was
    // 0.44 cells (2026-11-22, droplets changing the terrain as they go).
    let size = 65;
    let cone = Grid::from_fn(size, size, CellSize::default(), |r, c| {
        let d = ((r as f64 - 32.0).powi(2) + (c as f64 - 32.0).powi(2)).sqrt();
        (3.0 - d * 0.1).max(0.0) as f32
    })
    .unwrap();
    for seed in 0..13 {
        let st = run(&droplet::Params { seed, radius: 3.0, max_distance: 60.0, ..Default::default() }, &cone, 8000);
        let total: f64 = st.eroded.iter().map(|&e| f64::from(e)).sum();
        let cx: f64 = st.eroded.iter().enumerate().map(|(i, &e)| (i % size) as f64 * f64::from(e)).sum::<f64>() / total;
        let cy: f64 = st.eroded.iter().enumerate().map(|(i, &e)| (i / size) as f64 * f64::from(e)).sum::<f64>() / total;
        assert!((cx - 32.0).abs() < 1.0 && (cy - 32.0).abs() < 1.0, "seed {seed}: centroid ({cx:.2}, {cy:.2})");
    }
}

#[test]
fn border_bands_erode_no_more_than_interior_bands_of_the_same_slope() {
    // a plane sloping along x: every row has the same slope. Compare the edge rows with middle
    // rows, away from the up- and downhill ends. Bound 1.5x; over these 13 seeds the
    // ratio measured 0.48 to 1.04 (edge rows lose droplets through the open edge; 2026-11-22).
    let (w, h) = (96usize, 64usize);
    let ramp = Grid::from_fn(w, h, CellSize::default(), |_, c| (0.03 * (w - c) as f64) as f32).unwrap();
    for seed in 0..13 {
        let st = run(&droplet::Params { seed, radius: 3.0, max_distance: 80.0, ..Default::default() }, &ramp, 6000);
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

#[test]
fn every_step_keeps_erosion_above_the_next_cell_and_uphill_deposits_below_it() {
    // erosion takes at most −Δh through a normalised brush, so the droplet's old position never
    // ends below the next one; an uphill deposit is at most Δh, so it never fills the old
    // position above the next one. Checked on every step of 300 droplets per terrain, within the
    // f32 rounding of the heights (4 ulps of the largest).
    let cone = Grid::from_fn(48, 48, CellSize::default(), |r, c| {
        let d = ((r as f64 - 24.0).powi(2) + (c as f64 - 24.0).powi(2)).sqrt();
        (2.0 - d * 0.08) as f32
    })
    .unwrap();
    let terrains = [
        terrain(TerrainKind::Fbm, 64, 1, 0.0),
        terrain(TerrainKind::Ridged, 64, 2, -300.0),
        terrain(TerrainKind::DiamondSquare, 64, 3, 10.0),
        cone,
    ];
    let (mut erosions, mut uphill) = (0, 0);
    for (k, t) in terrains.iter().enumerate() {
        let top = t.as_slice().iter().fold(0.0f32, |a, &b| a.max(b.abs()));
        let tolerance = 4.0 * f64::from(top) * f64::from(f32::EPSILON) + 1e-9;
        for radius in [0.0, 1.5, 5.0] {
            let params = droplet::Params { radius, seed: k as u64, ..Default::default() };
            let mut st = droplet::State::new(t).unwrap();
            let mut sim = droplet::CpuSim::new(params, &st).unwrap();
            for _ in 0..300 {
                sim.run_traced(&mut st, &mut |s| match s.kind {
                    StepKind::Erode => {
                        erosions += 1;
                        assert!(
                            s.h_from_after >= s.h_to - tolerance && s.h_from_after >= s.h_to_after - tolerance,
                            "terrain {k} radius {radius}: erosion dug the old position to {} below the next {}",
                            s.h_from_after,
                            s.h_to
                        );
                    }
                    StepKind::DepositUphill => {
                        uphill += 1;
                        assert!(
                            s.h_from_after <= s.h_to + tolerance,
                            "terrain {k} radius {radius}: an uphill deposit raised the old position to {} above the \
                             next {}",
                            s.h_from_after,
                            s.h_to
                        );
                    }
                    StepKind::DepositExcess => {}
                });
            }
        }
    }
    assert!(erosions > 10_000 && uphill > 100, "too few steps checked: {erosions} erosions, {uphill} uphill");
}

#[test]
fn hardness_1_erodes_least_and_rain_places_the_droplets() {
    let (w, h) = (64usize, 64usize);
    let t = terrain(TerrainKind::Fbm, 64, 8, 0.0);
    let cell = CellSize::default();
    // unerodable rock (hardness 1 with rock_erodibility 0) on the left half: nothing erodes there
    let hard = Grid::from_fn(w, h, cell, |_, c| if c < w / 2 { 1.0 } else { 0.0 }).unwrap();
    let params = droplet::Params { radius: 2.0, rock_erodibility: 0.0, ..Default::default() };
    let mut st =
        droplet::State::with_maps(&t, droplet::StartMaps { hardness: Some(&hard), rain: None, ..Default::default() })
            .unwrap();
    droplet::CpuSim::new(params.clone(), &st).unwrap().run(&mut st, 3000, &mut |_| {});
    let eroded_in = |st: &droplet::State, cols: std::ops::Range<usize>| -> f64 {
        (0..h).flat_map(|r| cols.clone().map(move |c| r * w + c)).map(|i| f64::from(st.eroded[i])).sum()
    };
    assert_eq!(eroded_in(&st, 0..w / 2), 0.0, "bedrock eroded");
    assert!(eroded_in(&st, w / 2..w) > 0.0);
    assert_eq!(st.balance().0, 0.0);
    // hardness 0.5 everywhere: less erosion than loose soil (no map: hardness 0)
    let soft = run(&params, &t, 3000);
    let half = Grid::from_fn(w, h, cell, |_, _| 0.5).unwrap();
    let mut st =
        droplet::State::with_maps(&t, droplet::StartMaps { hardness: Some(&half), rain: None, ..Default::default() })
            .unwrap();
    let floor = t.as_slice().iter().fold(f32::INFINITY, |a, &b| a.min(b));
    let p = droplet::Params { min_height: f64::from(floor), ..params.clone() };
    droplet::CpuSim::new(p, &st).unwrap().run(&mut st, 3000, &mut |_| {});
    assert!(st.books.eroded < soft.books.eroded, "H = 0.5 eroded {} >= H = 0 {}", st.books.eroded, soft.books.eroded);

    // rain on a 6 x 6 block only; droplets living one step visit cells next to it only
    let rain = Grid::from_fn(w, h, cell, |r, c| if (20..26).contains(&r) && (30..36).contains(&c) { 1.0 } else { 0.0 })
        .unwrap();
    let mut st =
        droplet::State::with_maps(&t, droplet::StartMaps { hardness: None, rain: Some(&rain), ..Default::default() })
            .unwrap();
    let one_step = droplet::Params { max_distance: 1.0, ..params.clone() };
    droplet::CpuSim::new(one_step, &st).unwrap().run(&mut st, 2000, &mut |_| {});
    let mut visits_near = 0.0;
    for (i, &v) in st.flow.iter().enumerate() {
        let (r, c) = (i / w, i % w);
        if (18..28).contains(&r) && (28..38).contains(&c) {
            visits_near += f64::from(v);
        } else {
            assert_eq!(v, 0.0, "a droplet started away from the rain: visit at ({r}, {c})");
        }
    }
    assert_eq!(visits_near, 2000.0);

    // maps that cannot work are refused
    let dry = Grid::from_fn(w, h, cell, |_, _| 0.0).unwrap();
    let err =
        droplet::State::with_maps(&t, droplet::StartMaps { hardness: None, rain: Some(&dry), ..Default::default() })
            .unwrap_err();
    assert!(matches!(err, SimError::NoRain), "{err}");
    let small = Grid::from_fn(8, 8, cell, |_, _| 1.0).unwrap();
    let err =
        droplet::State::with_maps(&t, droplet::StartMaps { hardness: Some(&small), rain: None, ..Default::default() })
            .unwrap_err();
    assert!(err.to_string().contains("hardness map is 8 x 8"), "{err}");
    // the maps go through a checkpoint
    let st = droplet::State::with_maps(
        &t,
        droplet::StartMaps { hardness: Some(&hard), rain: Some(&rain), ..Default::default() },
    )
    .unwrap();
    let back = droplet::State::from_bytes(&st.to_bytes(7), 7, 1 << 20).unwrap();
    assert!(back == st);
}
