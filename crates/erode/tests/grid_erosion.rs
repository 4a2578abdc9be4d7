//! Erosion, books, thermal relaxation, determinism and extreme parameters of the grid model.

use crate::common;

use common::*;
use erode::models::grid::{
    Border, CpuSim, FluxForm, HardnessMode, Params, RainMode, Source, StartMaps, State, Transport, Units,
};
use erode::terrain::{TerrainKind, TerrainSpec, generate};

fn noise_terrain(size: usize, seed: u64) -> erode::Grid<f32> {
    let spec = TerrainSpec {
        kind: TerrainKind::Ridged,
        width: size,
        height: size,
        seed,
        relief: size as f64 * 0.3,
        feature_size: size as f64 / 2.0,
        ..Default::default()
    };
    generate(&spec).unwrap().heights
}

#[test]
fn closed_books_balance_with_rain_evaporation_and_erosion() {
    let terrain = noise_terrain(64, 1);
    for transport in [Transport::Conservative, Transport::SemiLagrangian] {
        for (form, pipes) in [(FluxForm::OneWay, 4), (FluxForm::Signed, 8)] {
            let params = Params { transport, flux_form: form, pipes, rain_rate: 0.01, ..Params::classic() };
            let st = run(&params, &terrain, None, 2000);
            let b = st.balance();
            assert!(st.books.eroded > 1.0 && st.books.deposited > 1.0, "nothing eroded: {:?}", st.books);
            assert!(
                b.water_relative_error < 1e-5,
                "{transport:?}/{form:?}: water books off by {}",
                b.water_relative_error
            );
            assert!(
                b.soil_relative_error < 1e-5,
                "{transport:?}/{form:?}: soil books off by {}",
                b.soil_relative_error
            );
            if transport == Transport::Conservative {
                // terrain + suspended sediment itself is conserved, not just booked
                let rel = (st.soil_volume() - st.start_soil).abs() / st.start_soil;
                assert!(rel < 1e-5, "{form:?}: soil volume changed by {rel}");
                assert_eq!(st.books.transport_drift, 0.0);
            } else {
                assert!(st.books.transport_drift != 0.0, "semi-Lagrangian transport reported no drift");
            }
        }
    }
}

/// Erosion's small per-step changes must not be rounded away at altitude: the books balance as
/// well on a DEM at 2000 m (or below sea level) as at 0 m. With absolute f32 heights the soil
/// books drifted ~1e-4 here (the f32 step at 2000 m is 1.2e-4 m).
#[test]
fn books_balance_at_any_altitude() {
    let base = noise_terrain(64, 1);
    for offset in [0.0f32, 2000.0, -400.0] {
        let terrain = base.map(|&h| h + offset);
        let params = Params { rain_rate: 0.01, ..Params::classic() };
        let st = run(&params, &terrain, None, 4000);
        let b = st.balance();
        assert!(st.books.eroded > 1.0, "nothing eroded at {offset} m");
        assert!(b.soil_relative_error < 1e-5, "at {offset} m: soil books off by {}", b.soil_relative_error);
        assert!(b.soil_imbalance_per_moved < 1e-3, "at {offset} m: {} of what moved", b.soil_imbalance_per_moved);
        let lowest = st.heights().iter().fold(f32::INFINITY, |a, &v| a.min(v));
        assert!(lowest >= terrain.as_slice().iter().fold(f32::INFINITY, |a, &v| a.min(v)) - 1e-3);
    }
}

#[test]
fn open_borders_book_what_leaves() {
    let terrain = grid(48, 32, 1.0, |_, c| 20.0 - 0.3 * c as f32);
    let params = Params {
        border: Border::Open,
        rain_rate: 0.02,
        sources: vec![Source { x: 2.0, y: 16.0, radius: 2.0, rate: 0.5, units: Units::Cells }],
        ..Params::classic()
    };
    let st = run(&params, &terrain, None, 1500);
    assert!(st.books.water_outflow > 0.0 && st.books.sediment_outflow > 0.0, "{:?}", st.books);
    assert!(st.books.sources > 0.0);
    let b = st.balance();
    assert!(b.relative_error < 1e-5, "{b:?}");
}

#[test]
fn rain_modes_and_sources_add_what_they_promise() {
    let terrain = grid(40, 40, 2.0, |_, _| 0.0);
    let dt = 0.05;
    let steps = 100u64;
    let area = 40.0 * 40.0 * 4.0;
    for mode in [RainMode::Uniform, RainMode::Buckets] {
        let params = Params { rain_mode: mode, rain_rate: 0.001, dt, ..still() };
        let st = run(&params, &terrain, None, steps);
        let expected = 0.001 * dt * steps as f64 * area;
        assert!((st.books.rain / expected - 1.0).abs() < 1e-4, "{mode:?}: {} vs {expected}", st.books.rain);
        assert!((st.water_volume() / expected - 1.0).abs() < 1e-4);
    }
    let params = Params {
        rain_mode: RainMode::Off,
        sources: vec![Source { x: 40.0, y: 40.0, radius: 6.0, rate: 0.3, units: Units::Metres }],
        dt,
        ..still()
    };
    let st = run(&params, &terrain, None, steps);
    assert!((st.books.sources / (0.3 * dt * steps as f64) - 1.0).abs() < 1e-4);
    // the water arrived around (20, 20) cells: its centroid is there
    let total: f64 = st.water.iter().map(|&d| f64::from(d)).sum();
    let cx: f64 = st.water.iter().enumerate().map(|(i, &d)| (i % 40) as f64 * f64::from(d)).sum::<f64>() / total;
    let cy: f64 = st.water.iter().enumerate().map(|(i, &d)| (i / 40) as f64 * f64::from(d)).sum::<f64>() / total;
    assert!((cx - 20.0).abs() < 1.0 && (cy - 20.0).abs() < 1.0, "centroid at ({cx}, {cy})");
}

#[test]
fn thermal_never_raises_the_max_nor_lowers_the_min_and_reaches_the_talus() {
    let size = 41;
    let spec = TerrainSpec { kind: TerrainKind::Cone, width: size, height: size, relief: 40.0, ..Default::default() };
    let cone = generate(&spec).unwrap().heights;
    let params = Params { thermal_rate: 4.0, dt: 0.05, ..still() };
    let mut st = State::new(&cone, &params, StartMaps::default()).unwrap();
    let mut sim = CpuSim::new(params.clone(), &st).unwrap();
    let (mut hi, mut lo) = (f32::NEG_INFINITY, f32::INFINITY);
    for &v in &st.terrain {
        hi = hi.max(v);
        lo = lo.min(v);
    }
    for _ in 0..3000 {
        sim.step(&mut st);
        let (h, l) = st.terrain.iter().fold((f32::NEG_INFINITY, f32::INFINITY), |(a, b), &v| (a.max(v), b.min(v)));
        assert!(h <= hi && l >= lo, "max {h} > {hi} or min {l} < {lo}");
        hi = h;
        lo = l;
    }
    let talus = (params.talus_scale * params.hardness + params.talus_bias) as f32;
    let topo = erode::models::grid::topology::Topology::new(size, size, Border::Closed);
    let dist = |e: usize| erode::models::grid::topology::pipe_length(cone.cell_size(), e) as f32;
    let mut worst = 0.0f32;
    for r in 0..size {
        for c in 0..size {
            for e in 0..8 {
                if let Some(j) = topo.neighbour(r, c, e) {
                    worst = worst.max((st.terrain[r * size + c] - st.terrain[j]) / dist(e));
                }
            }
        }
    }
    assert!(worst <= talus + 1e-3, "steepest slope {worst} above the talus {talus}");
    // the relaxed cone is round: where it falls below half its height, along an axis and a diagonal
    let centre = size / 2;
    let half = st.terrain[centre * size + centre] / 2.0;
    let axis = (0..=centre).find(|&k| st.terrain[centre * size + centre + k] < half).unwrap() as f32;
    let diag =
        (0..=centre).find(|&k| st.terrain[(centre + k) * size + centre + k] < half).unwrap() as f32 * 2f32.sqrt();
    assert!((axis / diag - 1.0).abs() <= 0.1, "axis radius {axis}, diagonal radius {diag}");
}

/// `f` on a pool of `threads` workers.
fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
}

#[test]
fn any_thread_count_gives_the_same_bits_and_resume_equals_a_straight_run() {
    let terrain = noise_terrain(48, 2);
    let params = Params {
        rain_mode: RainMode::Buckets,
        rain_rate: 0.01,
        pipes: 8,
        softening: 0.5,
        sources: vec![Source { x: 10.0, y: 10.0, radius: 2.0, rate: 0.2, units: Units::Cells }],
        ..Params::classic()
    };
    let straight = |threads: usize, n: u64| in_pool(threads, || run(&params, &terrain, None, n));
    let one = straight(1, 200);
    for threads in [2, 7] {
        assert!(fingerprint(&straight(threads, 200)) == fingerprint(&one), "{threads} threads differ from 1");
    }
    // checkpoint at 100 (1 thread), reload, continue to 200 with 2 threads
    let half = straight(1, 100);
    let fp = erode::models::grid::params_fingerprint(&params);
    let bytes = half.to_bytes(fp);
    let mut resumed = State::from_bytes(&bytes, fp, 1 << 28).unwrap();
    assert!(resumed == half);
    in_pool(2, || CpuSim::new(params.clone(), &resumed).unwrap().run(&mut resumed, 100));
    assert!(fingerprint(&resumed) == fingerprint(&one), "resumed run differs from the straight run");
}

/// The presets run as a user runs them: books, the same bits on any thread count, resume.
#[test]
fn every_preset_keeps_its_books_its_bits_on_any_thread_count_and_resumes_exactly() {
    let terrain = noise_terrain(48, 5).map(|&h| h * 4.0);
    for preset in erode::models::grid::PRESETS {
        let params = (preset.params)();
        let name = preset.name;
        let straight = |threads: usize, n: u64| in_pool(threads, || run(&params, &terrain, None, n));
        let one = straight(1, 120);
        let b = one.balance();
        assert!(b.water_relative_error < 1e-5, "{name}: water books off by {}", b.water_relative_error);
        assert!(b.soil_relative_error < 1e-5, "{name}: soil books off by {}", b.soil_relative_error);
        assert!(one.books.thermal_moved + one.books.eroded > 0.0, "{name}: nothing moved");
        assert!(fingerprint(&straight(2, 120)) == fingerprint(&one), "{name}: 2 threads differ from 1");
        let half = straight(1, 60);
        let fp = erode::models::grid::params_fingerprint(&params);
        let mut resumed = State::from_bytes(&half.to_bytes(fp), fp, 1 << 28).unwrap();
        in_pool(2, || CpuSim::new(params.clone(), &resumed).unwrap().run(&mut resumed, 60));
        assert!(fingerprint(&resumed) == fingerprint(&one), "{name}: resumed run differs from the straight run");
    }
}

/// Hardness is the bedrock's resistance: 1 erodes least (water and thermal), fresh deposits get
/// softer, and McLeod et al.'s depth gain makes low ground harder. (Bare bedrock: no soil on it.)
#[test]
fn hardness_1_erodes_least_deposits_soften_and_low_ground_is_harder() {
    let terrain = noise_terrain(48, 7).map(|&h| h * 4.0);
    let eroded = |hardness: f64, thermal: bool| {
        let params = Params {
            hardness,
            thermal_rate: if thermal { 3e-6 } else { 0.0 },
            capacity: if thermal { 0.0 } else { 1.0 },
            talus_scale: 0.0,
            talus_bias: 0.3,
            soil_depth: 0.0,
            ..Params::default()
        };
        let st = run(&params, &terrain, None, 150);
        if thermal { st.books.thermal_moved } else { st.books.eroded }
    };
    for thermal in [false, true] {
        let (soft, mid, hard) = (eroded(0.0, thermal), eroded(0.5, thermal), eroded(1.0, thermal));
        assert!(
            soft > mid && mid > hard && hard > 0.0,
            "thermal {thermal}: hardness 0, 0.5, 1 moved {soft}, {mid}, {hard}"
        );
    }
    // a hardness map: the hard half loses less than the soft half
    let (w, h) = (terrain.width(), terrain.height());
    let map = grid(w, h, 1.0, |_, c| if c < w / 2 { 1.0 } else { 0.0 });
    let params = Params { hardness_mode: HardnessMode::Map, soil_depth: 0.0, ..Params::default() };
    let mut st = State::new(&terrain, &params, StartMaps { hardness: Some(&map), ..Default::default() }).unwrap();
    CpuSim::new(params, &st).unwrap().run(&mut st, 150);
    let half = |cols: std::ops::Range<usize>| -> f64 {
        (0..h).flat_map(|r| cols.clone().map(move |c| r * w + c)).map(|i| f64::from(st.eroded[i])).sum()
    };
    assert!(half(0..w / 2) < 0.5 * half(w / 2..w), "hard half {} vs soft half {}", half(0..w / 2), half(w / 2..w));
    // softening: where sediment settled, the ground is softer than it started
    let params = Params { softening: 2.0, hardness: 0.8, ..Params::default() };
    let st = run(&params, &terrain, None, 150);
    let softened =
        st.deposited.iter().zip(&st.hardness).filter(|&(&d, _)| d > 1e-4).map(|(_, &hh)| hh).collect::<Vec<_>>();
    let kept = softened.iter().filter(|&&hh| hh >= 0.8).count();
    assert!(!softened.is_empty() && kept == 0, "{kept} of {} deposits kept their hardness", softened.len());
    // depth gain: the lowest cells are harder than the highest
    let params = Params {
        hardness_mode: HardnessMode::Noise,
        hardness_noise: 0.0,
        hardness_depth_gain: 0.5,
        ..Params::default()
    };
    let st = State::new(&terrain, &params, StartMaps::default()).unwrap();
    let (lo, hi) = terrain.as_slice().iter().enumerate().fold((0, 0), |(lo, hi), (i, &v)| {
        (if v < terrain.as_slice()[lo] { i } else { lo }, if v > terrain.as_slice()[hi] { i } else { hi })
    });
    assert!(st.hardness[lo] > st.hardness[hi] + 0.4, "lowest {} vs highest {}", st.hardness[lo], st.hardness[hi]);
}

#[test]
fn corrupt_or_foreign_checkpoints_are_refused() {
    let terrain = noise_terrain(16, 3);
    let params = Params::classic();
    let st = run(&params, &terrain, None, 3);
    let fp = erode::models::grid::params_fingerprint(&params);
    let mut bytes = st.to_bytes(fp);
    assert!(State::from_bytes(&bytes, fp ^ 1, 1 << 28).is_err(), "other parameters accepted");
    assert!(State::from_bytes(&bytes[..bytes.len() / 2], fp, 1 << 28).is_err(), "truncated accepted");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    assert!(State::from_bytes(&bytes, fp, 1 << 28).is_err(), "corrupt accepted");
    assert!(State::from_bytes(b"not a checkpoint at all", fp, 1 << 28).is_err());
}

/// Every numeric parameter at the ends of its documented range.
#[test]
fn extreme_parameters_stay_finite_or_are_refused() {
    let terrain = noise_terrain(24, 4);
    let base = Params { rain_rate: 0.01, ..Params::classic() };
    let dt = base.dt;
    let cases: Vec<(&str, Params)> = vec![
        ("dt tiny", Params { dt: 1e-6, ..base.clone() }),
        (
            "dt huge",
            Params { dt: 5.0, dissolve: 0.0, deposit: 0.0, evaporation: 0.0, thermal_rate: 0.0, ..base.clone() },
        ),
        ("gravity tiny", Params { gravity: 1e-6, ..base.clone() }),
        ("gravity huge", Params { gravity: 1e4, ..base.clone() }),
        ("pipe_area huge", Params { pipe_area: 1e3, ..base.clone() }),
        ("friction at its bound", Params { friction: erode::models::grid::MAX_FRICTION, ..base.clone() }),
        ("rain huge", Params { rain_rate: 10.0, ..base.clone() }),
        ("evaporation max", Params { evaporation: 0.999 / dt, ..base.clone() }),
        ("capacity huge", Params { capacity: 1e3, ..base.clone() }),
        ("min_tilt 1", Params { min_tilt: 1.0, ..base.clone() }),
        ("max_erosion_depth tiny", Params { max_erosion_depth: 1e-6, ..base.clone() }),
        ("dissolve max", Params { dissolve: 1.0 / dt, ..base.clone() }),
        ("deposit max", Params { deposit: 1.0 / dt, ..base.clone() }),
        ("deposit 0", Params { deposit: 0.0, ..base.clone() }),
        ("softening huge", Params { softening: 1e3, ..base.clone() }),
        ("hardness 1, unerodable", Params { hardness: 1.0, rock_erodibility: 0.0, ..base.clone() }),
        ("thermal max", Params { thermal_rate: 1.0 / dt, ..base.clone() }),
        ("talus steep", Params { talus_scale: 0.0, talus_bias: 50.0, ..base.clone() }),
        ("talus flat", Params { talus_scale: 0.0, talus_bias: 1e-4, ..base.clone() }),
        ("smoothing max", Params { smoothing_strength: 1.0, smoothing_threshold: 0.0, ..base.clone() }),
        ("velocity_epsilon huge", Params { velocity_epsilon: 1e3, ..base.clone() }),
        ("floor deep", Params { floor_depth: 1e6, ..base.clone() }),
        ("buckets", Params { rain_mode: RainMode::Buckets, bucket_count: 1000, bucket_radius: 1e3, ..base.clone() }),
        ("signed 8 open", Params { flux_form: FluxForm::Signed, pipes: 8, border: Border::Open, ..base.clone() }),
        ("wrap", Params { border: Border::Wrap, transport: Transport::SemiLagrangian, ..base.clone() }),
    ];
    for (name, params) in cases {
        match params.validate() {
            Err(e) => panic!("{name}: documented value refused: {e}"),
            Ok(()) => {
                let st = run(&params, &terrain, None, 1000);
                let finite = [
                    &st.terrain,
                    &st.water,
                    &st.sediment,
                    &st.hardness,
                    &st.velocity_x,
                    &st.velocity_y,
                    &st.eroded,
                    &st.deposited,
                    &st.discharge_integral,
                ]
                .iter()
                .all(|f| f.iter().all(|v| v.is_finite()));
                assert!(finite, "{name}: non-finite values");
                assert!(
                    st.water.iter().all(|&d| d >= 0.0) && st.sediment.iter().all(|&s| s >= 0.0),
                    "{name}: negative"
                );
            }
        }
    }
    // just outside the ranges: typed errors naming the parameter
    for (name, params) in [
        ("evaporation", Params { evaporation: 1.0 / dt, ..base.clone() }),
        ("dissolve", Params { dissolve: 1.01 / dt, ..base.clone() }),
        ("dt", Params { dt: -1.0, ..base.clone() }),
        ("pipes", Params { pipes: 6, ..base.clone() }),
        ("rain_rate", Params { rain_rate: -1.0, ..base.clone() }),
        ("talus_bias", Params { talus_scale: 0.0, talus_bias: -0.1, ..base.clone() }),
        ("hardness", Params { hardness: 1.5, ..base.clone() }),
    ] {
        let e = params.validate().unwrap_err();
        assert_eq!(e.name, name);
    }
}

#[test]
fn maps_with_values_they_cannot_mean_are_refused_with_the_first_one() {
    let terrain = grid(8, 6, 1.0, |r, c| (r + c) as f32);
    let hard = grid(8, 6, 1.0, |r, c| if (r, c) == (2, 5) { 1.5 } else { 0.5 });
    let wet = grid(8, 6, 1.0, |r, c| if (r, c) == (4, 1) { -0.1 } else { 0.0 });
    let params =
        Params { hardness_mode: HardnessMode::Map, rain_mode: RainMode::Map, soil_depth: 0.0, ..Params::default() };
    let err = State::new(&terrain, &params, StartMaps { hardness: Some(&hard), ..Default::default() }).unwrap_err();
    assert!(matches!(err, erode::SimError::MapValue { what: "hardness", row: 2, col: 5, .. }), "{err}");
    let ok = grid(8, 6, 1.0, |_, _| 0.5);
    let err = State::new(&terrain, &params, StartMaps { hardness: Some(&ok), rain: Some(&wet), ..Default::default() })
        .unwrap_err();
    assert!(matches!(err, erode::SimError::MapValue { what: "rain", row: 4, col: 1, .. }), "{err}");
    let drops = erode::models::droplet::StartMaps { hardness: Some(&hard), rain: None, ..Default::default() };
    let err = erode::models::droplet::State::with_maps(&terrain, drops).unwrap_err();
    assert!(matches!(err, erode::SimError::MapValue { what: "hardness", .. }), "{err}");
}

/// Rain at its bound (10 m/s, a thousand times any storm) stays finite; past it, refused (1e308
/// overflowed the f32 depths).
#[test]
fn rain_at_its_bound_stays_finite() {
    use erode::models::grid::params::MAX_RAIN_RATE;
    let params = Params { rain_rate: MAX_RAIN_RATE, ..Params::default() };
    let st = run(&params, &noise_terrain(48, 2), None, 200);
    assert!(st.terrain.iter().chain(&st.water).all(|v| v.is_finite()), "not finite at rain_rate = 10 m/s");
    assert!(Params { rain_rate: 1e308, ..Params::default() }.validate().is_err());
}
