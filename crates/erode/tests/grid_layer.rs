//! The grid model's sediment layer: loose material over bedrock (after Cordonnier et al. 2017's
//! layered terrain). Bedrock stands up to its hardness's talus, loose material slides at its
//! angle of repose and never takes bedrock with it, the flow takes loose material first, and
//! deposits join the layer.

use crate::common;

use common::*;
use erode::models::grid::{CpuSim, Params, StartMaps, State};
use erode::terrain::{TerrainKind, TerrainSpec, generate};

/// A plane rising `slope` per metre eastwards, 1 m cells.
fn ramp(w: usize, h: usize, slope: f32) -> erode::Grid<f32> {
    grid(w, h, 1.0, |_, c| slope * c as f32)
}

/// Thermal erosion alone (no water), with the layer and the default's taluses: bedrock of
/// hardness 0.5 stands to tan 1.4, loose material to tan 0.7.
fn thermal_only() -> Params {
    let rivers = Params::default();
    Params {
        thermal_rate: 4.0,
        dt: 0.05,
        hardness: 0.5,
        sediment_layer: true,
        repose_slope: rivers.repose_slope,
        talus_scale: rivers.talus_scale,
        talus_bias: rivers.talus_bias,
        ..still()
    }
}

fn total(v: &[f32]) -> f64 {
    v.iter().map(|&x| f64::from(x)).sum()
}

#[test]
fn bedrock_stands_past_the_angle_of_repose_and_loose_material_slides_off_it() {
    // a 45° slope: steeper than loose material stands (tan 0.7), gentler than the bedrock's talus
    let (w, h) = (40, 12);
    let terrain = ramp(w, h, 1.0);
    let params = thermal_only();
    assert!(params.repose_slope < 1.0 && params.talus_scale * params.hardness + params.talus_bias > 1.0);

    // bare bedrock does not move at all
    let mut bare = State::new(&terrain, &params, StartMaps::default()).unwrap();
    let mut sim = CpuSim::new(params.clone(), &bare).unwrap();
    sim.run(&mut bare, 500);
    assert_eq!(bare.terrain, State::new(&terrain, &params, StartMaps::default()).unwrap().terrain);
    assert_eq!(bare.books.thermal_moved, 0.0);
    assert!(bare.sediment_depth.iter().all(|&d| d == 0.0));

    // half a metre of loose material on the upper half slides down and leaves the bedrock as it was
    let mut st = State::new(&terrain, &params, StartMaps::default()).unwrap();
    for r in 0..h {
        for c in w / 2..w {
            st.terrain[r * w + c] += 0.5;
            st.sediment_depth[r * w + c] = 0.5;
        }
    }
    let bedrock = |s: &State| -> Vec<f32> { s.terrain.iter().zip(&s.sediment_depth).map(|(t, d)| t - d).collect() };
    let rock_before = bedrock(&st);
    let (loose_before, soil_before) = (total(&st.sediment_depth), total(&st.terrain));
    let mut sim = CpuSim::new(params.clone(), &st).unwrap();
    sim.run(&mut st, 3000);
    assert!(st.books.thermal_moved > 0.0, "nothing moved");
    assert!(st.sediment_depth.iter().all(|&d| d.is_finite() && d >= 0.0));
    let worst = bedrock(&st).iter().zip(&rock_before).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    assert!(worst <= 1e-3, "the bedrock moved by {worst} m under sliding loose material");
    // thermal moves keep the layer's volume and the terrain's
    let loose_after = total(&st.sediment_depth);
    assert!((loose_after - loose_before).abs() <= 1e-4 * loose_before, "layer {loose_before} -> {loose_after}");
    assert!((total(&st.terrain) - soil_before).abs() <= 1e-4 * soil_before);
    // most of it left the slope for its foot (the closed western edge)
    let foot: f64 =
        (0..h).flat_map(|r| (0..w / 4).map(move |c| r * w + c)).map(|i| f64::from(st.sediment_depth[i])).sum();
    assert!(foot >= 0.5 * loose_before, "only {foot} of {loose_before} reached the foot");
}

#[test]
fn the_flow_takes_loose_material_first_and_bedrock_more_slowly() {
    let spec =
        TerrainSpec { kind: TerrainKind::Ridged, width: 48, height: 48, seed: 3, relief: 15.0, ..Default::default() };
    let terrain = generate(&spec).unwrap().heights;
    let params = Params { thermal_rate: 0.0, ..Params::default() };
    let eroded = |loose: f32| {
        let mut st = State::new(&terrain, &params, StartMaps::default()).unwrap();
        st.sediment_depth.iter_mut().for_each(|d| *d = loose);
        st.terrain.iter_mut().for_each(|t| *t += loose);
        let mut sim = CpuSim::new(params.clone(), &st).unwrap();
        sim.run(&mut st, 30);
        assert!(st.sediment_depth.iter().all(|&d| d.is_finite() && d >= 0.0));
        st.books.eroded
    };
    let (bare, covered) = (eroded(0.0), eroded(5.0));
    // loose material erodes with 1, bedrock of hardness 0.5 with 1 − 0.5·(1 − 0.1) = 0.55
    assert!(covered > 1.5 * bare, "eroded {covered} m³ under loose material, {bare} m³ from bare bedrock");
}

#[test]
fn deposits_join_the_layer_and_the_books_still_balance() {
    let spec =
        TerrainSpec { kind: TerrainKind::Ridged, width: 64, height: 64, seed: 5, relief: 20.0, ..Default::default() };
    let terrain = generate(&spec).unwrap().heights;
    for layer in [true, false] {
        let params = Params { sediment_layer: layer, ..Params::default() };
        let start = State::new(&terrain, &params, StartMaps::default()).unwrap();
        let st = run(&params, &terrain, None, 200);
        assert!(st.books.deposited > 0.0, "nothing deposited");
        let area = st.cell_size.area();
        let layer_volume = total(&st.sediment_depth) * area;
        if layer {
            assert!(st.sediment_depth.iter().all(|&d| d.is_finite() && d >= 0.0));
            assert!(layer_volume > 0.0, "no layer formed");
            // the layer holds only the soil it started with and what was deposited or slid,
            // never bedrock the water left in place
            let soil = total(&start.sediment_depth) * area;
            assert!(soil > 0.0, "no soil at the start");
            let came = soil + st.books.deposited + st.books.thermal_moved;
            assert!(
                layer_volume <= came * (1.0 + 1e-4),
                "layer {layer_volume} m³ > soil, deposited and slid {came} m³"
            );
        } else {
            assert_eq!(layer_volume, 0.0, "a layer without sediment_layer");
        }
        let b = st.balance();
        assert!(b.soil_imbalance_per_moved < 1e-3, "{layer}: soil books off by {b:?}");
    }
}

#[test]
fn a_run_goes_on_from_a_former_runs_sediment_depth_map() {
    let spec =
        TerrainSpec { kind: TerrainKind::Ridged, width: 40, height: 32, seed: 9, relief: 15.0, ..Default::default() };
    let terrain = generate(&spec).unwrap().heights;
    let params = Params::default();
    let start = State::new(&terrain, &params, StartMaps::default()).unwrap();
    let first = run(&params, &terrain, None, 100);
    let heights = first.grid(&first.heights());
    let depth = first.grid(&first.sediment_depth);
    assert!(first.sediment_depth != start.sediment_depth, "the layer never changed");
    let maps = StartMaps { sediment_depth: Some(&depth), ..Default::default() };
    let next = State::new(&heights, &params, maps).unwrap();
    assert_eq!(next.sediment_depth, first.sediment_depth);
    // without a layer the map means nothing: refused, as is a depth below 0
    let off = Params { sediment_layer: false, ..params.clone() };
    assert!(State::new(&heights, &off, maps).is_err());
    let mut bad = depth.clone();
    bad.as_mut_slice()[5] = -1.0;
    let err =
        State::new(&heights, &params, StartMaps { sediment_depth: Some(&bad), ..Default::default() }).unwrap_err();
    assert!(err.to_string().contains("sediment depth map holds -1"), "{err}");
}

#[test]
fn hard_rock_starts_with_thin_soil() {
    let terrain = ramp(8, 4, 0.1);
    let (w, h) = (terrain.width(), terrain.height());
    let map = grid(w, h, 1.0, |_, c| c as f32 / (w - 1) as f32);
    let params = Params { hardness_mode: erode::models::grid::HardnessMode::Map, ..Params::default() };
    let st = State::new(&terrain, &params, StartMaps { hardness: Some(&map), ..Default::default() }).unwrap();
    for (i, (&d, &hh)) in st.sediment_depth.iter().zip(&st.hardness).enumerate() {
        let want = params.soil_depth as f32 * (1.0 - hh);
        assert!((d - want).abs() <= 1e-6, "cell {i}: soil {d} m on hardness {hh}, want {want}");
    }
    assert_eq!(st.sediment_depth[w - 1], 0.0, "hardness 1 is bare rock");
    // the default's uniform hardness 0.5: half of soil_depth everywhere
    let st = State::new(&terrain, &Params::default(), StartMaps::default()).unwrap();
    assert!(st.sediment_depth.iter().all(|&d| d == 2.5));
}
