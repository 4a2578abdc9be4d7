//! `analysis` against outside references: a stream-power landscape built to `S = ks·A^−θ`
//! (the fit must recover θ), noise (it must not), and the inputs that break naive code.

use erode::analysis::{Options, analyze, flow};
use erode::flow::fill;
use erode::terrain::{TerrainSpec, generate};
use erode::{CellSize, Grid, Heightmap};

/// A landscape whose every channel obeys `S = ks·A^−θ` exactly: heights built up from the
/// outlets along the D8 tree of a noise terrain, each cell `ks·A^−θ·length` above its receiver,
/// re-routed until the tree stops changing (a steady-state stream-power landscape).
fn stream_power(size: usize, theta: f64) -> Heightmap {
    let cell = CellSize::square(10.0);
    let noise = generate(&TerrainSpec {
        width: size,
        height: size,
        seed: 11,
        relief: 50.0,
        cell_size: cell,
        ..Default::default()
    })
    .unwrap();
    let domain = erode::analysis::Domain { width: size, height: size, cell, nodata: None };
    let mut z: Vec<f32> = noise.heights.as_slice().to_vec();
    for _ in 0..8 {
        let filled = fill::priority_flood(&domain, &z);
        let d8 = flow::d8(&domain, &filled.routed);
        let area = flow::d8_area(&domain, &d8);
        let mut built = vec![0.0f64; size * size];
        for &i in d8.order.iter().rev() {
            let i = i as usize;
            let r = d8.receiver[i];
            if r != flow::NONE {
                built[i] = built[r as usize] + 2.0 * area[i].powf(-theta) * f64::from(d8.length[i]);
            }
        }
        z = built.iter().map(|&v| v as f32).collect();
    }
    Heightmap::new(Grid::from_vec(size, size, cell, z).unwrap()).unwrap()
}

#[test]
fn a_stream_power_landscape_gives_back_its_concavity_and_noise_does_not() {
    for theta in [0.35, 0.5] {
        let f = analyze(&stream_power(160, theta), &Options::default()).unwrap().figures;
        let fit = f.slope_area.expect("a fit");
        assert!((fit.theta - theta).abs() < 0.03, "built with θ {theta}, measured {}", fit.theta);
        assert!(fit.r_squared > 0.95, "R² {}", fit.r_squared);
        assert_eq!(f.depressions.count, 0, "a graded landscape has no pits");
    }
    let noise = generate(&TerrainSpec {
        width: 256,
        height: 256,
        seed: 2,
        relief: 300.0,
        cell_size: CellSize::square(30.0),
        octaves: 8,
        ..Default::default()
    })
    .unwrap();
    let f = analyze(&noise, &Options::default()).unwrap().figures;
    let fit = f.slope_area.unwrap();
    assert!(fit.theta < 0.2, "noise measured θ {}", fit.theta);
    assert!(f.depressions.count > 0);
}

#[test]
fn flat_thin_and_holey_maps_give_defined_figures_and_all_nodata_is_an_error() {
    let json = |m: &Heightmap| serde_json::to_string(&analyze(m, &Options::default()).unwrap().figures).unwrap();
    // flat: no slope, no fit, no pits, no NaN
    let flat = Heightmap::new(Grid::from_vec(32, 32, CellSize::square(1.0), vec![5.0; 1024]).unwrap()).unwrap();
    let f = analyze(&flat, &Options::default()).unwrap().figures;
    assert!(f.slope_area.is_none() && f.hypsometric_integral.is_none() && f.depressions.count == 0);
    assert!(!json(&flat).contains("NaN") && !json(&flat).contains("null, null"));
    // 1 x N and 1 x 1
    for (w, h) in [(1, 40), (40, 1), (1, 1)] {
        let m = Heightmap::new(Grid::from_fn(w, h, CellSize::square(2.0), |r, c| (r + c) as f32).unwrap()).unwrap();
        let text = json(&m);
        assert!(!text.contains("NaN") && !text.contains("inf"), "{w}x{h}: {text}");
    }
    // a hole of nodata in a bowl: the bowl drains into the hole instead of filling
    let bowl = Grid::from_fn(21, 21, CellSize::square(1.0), |r, c| {
        let (x, y) = (c as f32 - 10.0, r as f32 - 10.0);
        x * x + y * y
    })
    .unwrap();
    let filled = analyze(&Heightmap::new(bowl.clone()).unwrap(), &Options::default()).unwrap().figures;
    assert_eq!(filled.depressions.count, 1, "the bowl is one closed depression");
    let mut mask = vec![false; 441];
    mask[10 * 21 + 10] = true;
    let holed = Heightmap::with_nodata(bowl, Some(mask)).unwrap();
    let f = analyze(&holed, &Options::default()).unwrap().figures;
    assert_eq!(f.depressions.count, 0, "flow leaves through the nodata cell");
    assert_eq!(f.valid_cells, 440);
    // every cell nodata: refused by the heightmap itself, and by the analysis
    assert!(
        Heightmap::with_nodata(Grid::from_vec(2, 2, CellSize::square(1.0), vec![0.0; 4]).unwrap(), Some(vec![true; 4]))
            .is_err()
    );
}

#[test]
fn options_out_of_range_are_named() {
    let m = Heightmap::new(Grid::from_vec(4, 4, CellSize::square(1.0), vec![1.0; 16]).unwrap()).unwrap();
    let err = analyze(&m, &Options { min_area_cells: 0.0, ..Default::default() }).unwrap_err();
    assert!(err.to_string().contains("min_area_cells"), "{err}");
}

#[test]
fn any_thread_count_gives_the_same_figures() {
    let map = generate(&TerrainSpec { width: 300, height: 200, seed: 4, relief: 200.0, ..Default::default() }).unwrap();
    let in_pool = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let a = pool.install(|| analyze(&map, &Options { maps: true, ..Default::default() }).unwrap());
        (serde_json::to_string(&a.figures).unwrap(), a.maps.unwrap())
    };
    let (one, maps_one) = in_pool(1);
    for threads in [2, 5] {
        let (other, maps) = in_pool(threads);
        assert_eq!(one, other, "{threads} threads");
        assert!(maps == maps_one, "{threads} threads: maps differ");
    }
}
