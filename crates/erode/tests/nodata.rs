//! Nodata cells are outside the domain: no model moves water, sediment or soil into them except
//! as booked outflow, no stencil reads them as terrain, and they keep their height.

use crate::common;

use common::grid;
use erode::models::droplet;
use erode::models::grid::{Border, CpuSim, NodataBorder, Params, StartMaps, State};
use erode::rng::SplitMix64;
use erode::{Grid, Heightmap};

/// A 64² ramp rising 0.3 m per column with, optionally, a 10 × 10 block of nodata in the middle.
fn ramp(hole: bool) -> Heightmap {
    let g = grid(64, 64, 1.0, |_, c| 0.3 * c as f32 + 100.0);
    let mask = hole.then(|| (0..64 * 64).map(|i| in_hole(i / 64, i % 64)).collect());
    Heightmap::with_nodata(g, mask).unwrap()
}

fn in_hole(r: usize, c: usize) -> bool {
    (27..37).contains(&r) && (27..37).contains(&c)
}

/// The cells around the hole (within 2 cells of it, not in it).
fn ring() -> Vec<usize> {
    (0..64 * 64)
        .filter(|&i| {
            let (r, c) = (i / 64, i % 64);
            !in_hole(r, c) && (25..39).contains(&r) && (25..39).contains(&c)
        })
        .collect()
}

fn grid_run(map: &Heightmap, params: &Params, iterations: u64, stage_by_stage: bool) -> State {
    let maps = StartMaps { nodata: map.nodata_mask(), ..Default::default() };
    let mut st = State::new(&map.heights, params, maps).unwrap();
    let mut sim = CpuSim::new(params.clone(), &st).unwrap();
    for _ in 0..iterations {
        if stage_by_stage {
            sim.step_stage_by_stage(&mut st);
        } else {
            sim.step(&mut st);
        }
    }
    st
}

fn change(before: &Grid<f32>, after: &[f32], cells: &[usize]) -> (f64, f64) {
    let d: Vec<f64> = cells.iter().map(|&i| f64::from(after[i] - before.as_slice()[i]).abs()).collect();
    (d.iter().sum::<f64>() / d.len() as f64, d.iter().copied().fold(0.0, f64::max))
}

#[test]
fn a_hole_in_a_ramp_changes_its_neighbours_no_more_than_the_ramp_does() {
    let params = Params::default();
    let (plain, holed) = (ramp(false), ramp(true));
    let a = grid_run(&plain, &params, 300, false);
    let b = grid_run(&holed, &params, 300, false);
    let cells = ring();
    let (mean_a, max_a) = change(&plain.heights, &a.heights(), &cells);
    let (mean_b, max_b) = change(&holed.heights, &b.heights(), &cells);
    println!("beside the hole: mean |dh| {mean_b:.4} m, max {max_b:.4} m; without it {mean_a:.4} m, {max_a:.4} m");
    assert!(max_b <= 2.0 * max_a + 1e-4 && mean_b <= 2.0 * mean_a + 1e-5, "the hole acts as terrain");
    // the hole itself: untouched terrain, no water, no sediment
    let filled = holed.heights.as_slice();
    for i in (0..64 * 64).filter(|&i| in_hole(i / 64, i % 64)) {
        assert_eq!(b.heights()[i], filled[i], "a nodata cell changed height");
        assert_eq!((b.water[i], b.sediment[i]), (0.0, 0.0), "water or sediment entered a nodata cell");
    }
    let balance = b.balance();
    assert!(balance.relative_error < 1e-6, "books: {balance:?}");
}

/// A mask of random blobs (about a fifth of the cells) on a noisy terrain.
fn blobs(w: usize, h: usize, seed: u64) -> Vec<bool> {
    let mut rng = SplitMix64::new(seed);
    let mut mask = vec![false; w * h];
    for _ in 0..12 {
        let (cr, cc) = (rng.below(h as u64) as isize, rng.below(w as u64) as isize);
        let rad = 1 + rng.below(5) as isize;
        for r in (cr - rad).max(0)..(cr + rad + 1).min(h as isize) {
            for c in (cc - rad).max(0)..(cc + rad + 1).min(w as isize) {
                if (r - cr).pow(2) + (c - cc).pow(2) <= rad * rad {
                    mask[r as usize * w + c as usize] = true;
                }
            }
        }
    }
    // and single cells, which have no interior span around them
    for _ in 0..20 {
        mask[rng.below((w * h) as u64) as usize] = true;
    }
    mask
}

fn hills(w: usize, h: usize) -> Grid<f32> {
    grid(w, h, 2.0, |r, c| {
        let (x, y) = (c as f32, r as f32);
        6.0 + 2.0 * (x * 0.21).sin() * (y * 0.17).cos() + 0.04 * x + ((r * 7 + c * 13) % 5) as f32 * 0.02
    })
}

#[test]
fn random_holes_keep_the_grid_books_and_stay_empty() {
    let (w, h) = (48, 41);
    for (seed, border, nodata_border, pipes, thermal) in [
        (1, Border::Closed, NodataBorder::Closed, 4, 2e-6),
        (2, Border::Open, NodataBorder::Open, 8, 3e-6),
        (3, Border::Wrap, NodataBorder::Open, 4, 0.0),
        (4, Border::Closed, NodataBorder::Open, 8, 1e-6),
    ] {
        let mask = blobs(w, h, seed);
        let map = Heightmap::with_nodata(hills(w, h), Some(mask.clone())).unwrap();
        let params =
            Params { border, nodata_border, pipes, thermal_rate: thermal, rain_rate: 0.01, ..Params::default() };
        let swept = grid_run(&map, &params, 60, false);
        let staged = grid_run(&map, &params, 60, true);
        assert_eq!(swept.to_bytes(0), staged.to_bytes(0), "seed {seed}: the sweep and the passes differ with holes");
        let threads = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let three = threads.install(|| grid_run(&map, &params, 60, false));
        assert_eq!(swept.to_bytes(0), three.to_bytes(0), "seed {seed}: thread count changed the result");
        let heights = swept.heights();
        for i in (0..w * h).filter(|&i| mask[i]) {
            assert_eq!(heights[i], map.heights.as_slice()[i], "seed {seed}: nodata cell {i} changed height");
            assert_eq!((swept.water[i], swept.sediment[i]), (0.0, 0.0), "seed {seed}: water in nodata cell {i}");
        }
        let balance = swept.balance();
        assert!(balance.relative_error < 1e-5, "seed {seed}: books {balance:?}");
        let b = &swept.books;
        if nodata_border == NodataBorder::Open {
            assert!(b.water_outflow > 0.0, "seed {seed}: open holes took no water");
        } else if border == Border::Closed {
            assert_eq!((b.water_outflow, b.sediment_outflow), (0.0, 0.0), "seed {seed}: closed holes leaked");
        }
        // a checkpoint keeps the holes
        let back = State::from_bytes(&swept.to_bytes(7), 7, u64::MAX).unwrap();
        assert_eq!(back.nodata.as_deref(), Some(&mask[..]));
    }
}

fn droplet_run(map: &Heightmap, params: &droplet::Params, droplets: u64) -> droplet::State {
    let maps = droplet::StartMaps { nodata: map.nodata_mask(), ..Default::default() };
    let mut st = droplet::State::with_maps(&map.heights, maps).unwrap();
    let lowest = map.heights.as_slice().iter().fold(f32::INFINITY, |a, &b| a.min(b));
    let params = droplet::Params { min_height: f64::from(lowest), ..params.clone() };
    let mut sim = droplet::CpuSim::new(params, &st).unwrap();
    sim.run(&mut st, droplets, &mut |_| {});
    st
}

#[test]
fn droplets_neither_enter_nor_change_a_hole_in_a_ramp() {
    let params = droplet::Params { batch_size: 4096, ..Default::default() };
    let (plain, holed) = (ramp(false), ramp(true));
    let a = droplet_run(&plain, &params, 64 * 64 * 4);
    let b = droplet_run(&holed, &params, 64 * 64 * 4);
    let cells = ring();
    let (mean_a, max_a) = change(&plain.heights, &a.terrain, &cells);
    let (mean_b, max_b) = change(&holed.heights, &b.terrain, &cells);
    println!(
        "droplets beside the hole: mean |dh| {mean_b:.4} m, max {max_b:.4} m; without it {mean_a:.4} m, {max_a:.4} m"
    );
    assert!(max_b <= 2.0 * max_a + 1e-4 && mean_b <= 2.0 * mean_a + 1e-5, "the hole acts as terrain");
    for i in (0..64 * 64).filter(|&i| in_hole(i / 64, i % 64)) {
        assert_eq!(b.terrain[i], holed.heights.as_slice()[i], "a nodata cell changed height");
        assert_eq!(b.flow[i], 0.0, "a droplet visited a nodata cell");
    }
    let (books, terrain) = b.balance();
    assert!(books < 1e-12 && terrain < 1e-5, "books {books:e}, terrain {terrain:e}");
    assert!(b.books.outflow > 0, "no droplet left into the open hole");
}

#[test]
fn random_holes_keep_the_droplet_books_for_any_thread_count() {
    let (w, h) = (160, 150);
    for (seed, border, nodata_border) in
        [(5, droplet::Border::Open, NodataBorder::Open), (6, droplet::Border::Closed, NodataBorder::Closed)]
    {
        let mask = blobs(w, h, seed);
        let map = Heightmap::with_nodata(hills(w, h), Some(mask.clone())).unwrap();
        let params = droplet::Params {
            border,
            nodata_border,
            max_distance: 20.0,
            radius: 2.0,
            batch_size: 5000,
            ..Default::default()
        };
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let three = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let a = one.install(|| droplet_run(&map, &params, 20_000));
        let b = three.install(|| droplet_run(&map, &params, 20_000));
        assert_eq!(a.to_bytes(0), b.to_bytes(0), "seed {seed}: thread count changed the result");
        for i in (0..w * h).filter(|&i| mask[i]) {
            assert_eq!(a.terrain[i], map.heights.as_slice()[i], "seed {seed}: nodata cell {i} changed");
            assert_eq!(a.flow[i], 0.0, "seed {seed}: a droplet visited nodata cell {i}");
        }
        let (books, terrain) = a.balance();
        assert!(books < 1e-12 && terrain < 1e-5, "seed {seed}: books {books:e}, terrain {terrain:e}");
        if nodata_border == NodataBorder::Closed {
            assert_eq!(a.books.outflow, 0, "seed {seed}: sediment left through closed holes");
        }
        let back = droplet::State::from_bytes(&a.to_bytes(3), 3, u64::MAX).unwrap();
        assert_eq!(back.nodata.as_deref(), Some(&mask[..]));
    }
}

#[test]
fn a_heightmap_mesh_has_a_walled_shaft_where_the_data_is_missing() {
    use erode::models::sph::{build::HeightmapMesh, build::Refine, check_mesh};
    let spec = HeightmapMesh { columns: 21, rows: 21, levels: 0, refine: Refine::None, base_depth: 2.0 };
    let holed = ramp(true);
    let whole = spec.build(&holed.heights).unwrap();
    let mesh = spec.build_with_holes(&holed.heights, holed.nodata_mask()).unwrap();
    check_mesh(&mesh, mesh.default_min_area()).unwrap();
    mesh.check_outward().unwrap();
    // no surface vertex lies over a nodata cell (x east, y north from row 63)
    for p in &mesh.positions {
        let (c, r) = (p.x, 63.0 - p.y);
        assert!(
            !(c > 26.0 && c < 37.0 && r > 26.0 && r < 37.0),
            "a vertex at ({:.2}, {:.2}, {:.2}) lies over the hole",
            p.x,
            p.y,
            p.z
        );
    }
    // the shaft takes at least the hole's 10 x 10 m column out of the solid, at most 16 x 16 m
    let taken = whole.signed_volume() - mesh.signed_volume();
    let column = |side: f64| side * side * (0.3 * 32.0 + 100.0 - (100.0 - 2.0));
    assert!(taken > column(10.0) * 0.9 && taken < column(16.0) * 1.1, "the shaft took {taken:.0} m^3");
    // refinement and holes do not mix
    let refined = HeightmapMesh { levels: 2, ..spec };
    assert!(refined.build_with_holes(&holed.heights, holed.nodata_mask()).is_err());
}

#[test]
fn heightmap_meshes_with_random_holes_are_closed_and_outward() {
    use erode::models::sph::{build::HeightmapMesh, build::Refine, check_mesh};
    let (w, h) = (48, 41);
    for seed in 1..=6 {
        let mask = blobs(w, h, seed);
        let map = Heightmap::with_nodata(hills(w, h), Some(mask)).unwrap();
        for squares in [(47, 40), (20, 17), (9, 8)] {
            let spec =
                HeightmapMesh { columns: squares.0, rows: squares.1, levels: 0, refine: Refine::None, base_depth: 3.0 };
            let mesh = spec.build_with_holes(&map.heights, map.nodata_mask()).unwrap();
            let at = format!("seed {seed}, {} x {} squares", squares.0, squares.1);
            check_mesh(&mesh, mesh.default_min_area()).unwrap_or_else(|e| panic!("{at}: {e}"));
            mesh.check_outward().unwrap_or_else(|e| panic!("{at}: {e}"));
            assert!(mesh.signed_volume() > 0.0, "{at}");
        }
    }
}
