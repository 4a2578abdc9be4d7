//! The water of the grid model against what it must do: stay at rest, keep its volume, stay
//! stable under the derived time step, travel at the predicted speed, and bound a dam break.

use crate::common;

use common::*;
use erode::models::grid::{Border, CpuSim, CrossSection, FluxForm, Params, StartMaps, State};

#[test]
fn lake_at_rest_stays_at_rest_with_erosion_on() {
    let (w, h) = (48, 40);
    let bed = bumpy_bed_with_island(w, h);
    let level = 10.0f32;
    let water = bed.map(|&b| (level - b).max(0.0));
    for (form, section) in [
        (FluxForm::OneWay, CrossSection::Constant),
        (FluxForm::Signed, CrossSection::Constant),
        (FluxForm::OneWay, CrossSection::Depth),
        (FluxForm::Signed, CrossSection::Depth),
    ] {
        for pipes in [4, 8] {
            let params = Params {
                rain_rate: 0.0,
                evaporation: 0.0,
                flux_form: form,
                pipes,
                cross_section: section,
                ..Params::classic()
            };
            let st = run(&params, &bed, Some(&water), 2000);
            let heights = st.heights();
            let worst = heights
                .iter()
                .zip(&st.water)
                .filter(|&(_, &d)| d > 0.0)
                .map(|(&b, &d)| ((b + d) - level).abs())
                .fold(0.0f32, f32::max);
            assert!(worst <= 1e-6 * level, "{form:?}/{pipes}: surface moved by {worst}");
            assert_eq!(heights, bed.as_slice(), "{form:?}/{pipes}: terrain changed");
            assert!(st.water.iter().zip(bed.as_slice()).any(|(&d, &b)| d == 0.0 && b > level), "no island");
        }
    }
}

#[test]
fn sloshing_box_keeps_its_water() {
    let (w, h) = (40, 24);
    let bed = grid(w, h, 1.0, |_, _| 0.0);
    let water = grid(w, h, 1.0, |r, c| 1.0 + 0.8 * c as f32 / w as f32 + 0.2 * r as f32 / h as f32);
    for (form, section) in [(FluxForm::OneWay, CrossSection::Constant), (FluxForm::Signed, CrossSection::Depth)] {
        for pipes in [4, 8] {
            let params = Params { flux_form: form, pipes, cross_section: section, friction: 0.03, ..still() };
            let mut st = State::new(&bed, &params, StartMaps { water: Some(&water), ..Default::default() }).unwrap();
            let start = st.water_volume();
            let mut sim = CpuSim::new(params, &st).unwrap();
            for _ in 0..5000 {
                sim.step(&mut st);
                assert!(st.water.iter().all(|&d| d >= 0.0));
            }
            let rel = (st.water_volume() - start).abs() / start;
            assert!(rel <= 1e-6, "{form:?}/{pipes}: volume drifted by {rel}");
            // it really sloshed
            assert!(st.velocity_x.iter().any(|v| v.abs() > 1e-3));
        }
    }
}

/// Runs a small-noise water field and returns (mean checkerboard measure over the second half,
/// largest surface deviation at the end).
fn noise_run(params: &Params, forced_substeps: Option<u32>) -> (f64, f32) {
    let (w, h) = (128, 128);
    let bed = grid(w, h, 1.0, |_, _| 0.0);
    let mut rng = erode::rng::SplitMix64::new(5);
    let water = grid(w, h, 1.0, |_, _| 1.0 + 1e-3 * (rng.next_f32() - 0.5));
    let mut st = State::new(&bed, params, StartMaps { water: Some(&water), ..Default::default() }).unwrap();
    let mut sim = CpuSim::new(params.clone(), &st).unwrap();
    if let Some(n) = forced_substeps {
        sim.force_substeps(n);
    }
    let (steps, mut sum, mut count) = (1500, 0.0, 0.0);
    let surface = |st: &State| -> Vec<f32> { st.terrain.iter().zip(&st.water).map(|(b, d)| b + d).collect() };
    for k in 0..steps {
        sim.step(&mut st);
        if k >= steps / 2 {
            sum += checkerboard(&surface(&st), w);
            count += 1.0;
        }
    }
    let spread = surface(&st).iter().map(|&v| (v - 1.0).abs()).fold(0.0f32, f32::max);
    (sum / count, spread)
}

#[test]
fn small_noise_stays_bounded_at_09_of_the_limit_and_substeps_past_it() {
    // The checkerboard measure of a random field is about 1/N; it fluctuates as energy moves
    // between modes, so the bound is on its time mean over the second half of the run.
    let cell = erode::CellSize::square(1.0);
    for form in [FluxForm::OneWay, FluxForm::Signed] {
        for pipes in [4, 8] {
            let probe = Params { flux_form: form, pipes, ..still() };
            let limit = probe.stable_dt(cell);
            for factor in [0.9, 1.8] {
                let params = Params { dt: factor * limit, ..probe.clone() };
                assert_eq!(params.substeps(cell), if factor < 1.0 { 1 } else { 2 }, "{form:?}/{pipes} x{factor}");
                let (e, spread) = noise_run(&params, None);
                assert!(e < 1e-3, "{form:?}/{pipes} x{factor}: checkerboard measure {e}");
                assert!(spread < 4e-3, "{form:?}/{pipes} x{factor}: grew to {spread}");
            }
        }
    }
}

#[test]
fn past_the_limit_without_substeps_the_water_turns_into_a_checkerboard() {
    // what the sub-steps prevent: one step of 1.2x the limit, forced
    let cell = erode::CellSize::square(1.0);
    for form in [FluxForm::OneWay, FluxForm::Signed] {
        let probe = Params { flux_form: form, ..still() };
        let params = Params { dt: 1.2 * probe.stable_dt(cell), ..probe };
        let (e, spread) = noise_run(&params, Some(1));
        assert!(e > 1e-2 && spread > 0.1, "{form:?}: no instability past the limit ({e}, {spread})");
    }
}

/// Fundamental seiche period of the signed pipe model in a closed 1-D basin of `n` cells,
/// including the time discretisation: `ω² = A·g/(lx·ly·l)·2(1 − cos(π/n))`, `sin(ω_d·Δt/2) = ω·Δt/2`.
fn predicted_period(params: &Params, n: usize, cell: f64, rate: f64) -> f64 {
    let a = params.pipe_cross_section(erode::CellSize::square(cell), 0, 1.0);
    let omega2 =
        rate * a * params.gravity / (cell * cell * cell) * 2.0 * (1.0 - (std::f64::consts::PI / n as f64).cos());
    let dt = params.dt;
    let omega_d = 2.0 / dt * (omega2.sqrt() * dt / 2.0).asin();
    2.0 * std::f64::consts::PI / omega_d
}

/// Times of upward zero crossings of `η − mean` at the basin's first cell.
fn measured_period(params: &Params, n: usize, cell: f64, steps: u64) -> Vec<f64> {
    let bed = grid(n, 1, cell, |_, _| 0.0);
    let water = grid(n, 1, cell, |_, c| 1.0 + 1e-3 * (std::f32::consts::PI * (c as f32 + 0.5) / n as f32).cos());
    let mut st = State::new(&bed, params, StartMaps { water: Some(&water), ..Default::default() }).unwrap();
    let mut sim = CpuSim::new(params.clone(), &st).unwrap();
    let mut crossings = Vec::new();
    let mut prev = f64::from(st.water[0]) - 1.0;
    for k in 1..=steps {
        sim.step(&mut st);
        let now = f64::from(st.water[0]) - 1.0;
        if prev < 0.0 && now >= 0.0 {
            // linear interpolation of the crossing time
            crossings.push((k as f64 - 1.0 + prev / (prev - now)) * params.dt);
        }
        prev = now;
    }
    crossings.windows(2).map(|w| w[1] - w[0]).collect()
}

#[test]
fn seiche_period_matches_the_flux_forms_prediction() {
    let (n, cell) = (16, 1.0);
    let signed = Params { flux_form: FluxForm::Signed, dt: 0.02, ..still() };
    let expected = predicted_period(&signed, n, cell, 1.0);
    let periods = measured_period(&signed, n, cell, 3000);
    assert!(periods.len() >= 3, "too few periods");
    for p in &periods {
        assert!((p / expected - 1.0).abs() < 0.01, "signed: period {p}, predicted {expected}");
    }
    // one-way pipes: once both pipes of an interface carry water the net flux responds twice as
    // fast, so after the first half-wave the period is the signed one with doubled ω²: 1/sqrt(2)
    let one_way = Params { flux_form: FluxForm::OneWay, dt: 0.02, ..still() };
    let expected = predicted_period(&one_way, n, cell, 2.0);
    let periods = measured_period(&one_way, n, cell, 3000);
    for p in &periods[1..] {
        assert!((p / expected - 1.0).abs() < 0.01, "one-way: period {p}, predicted {expected}");
    }
    // depth cross-section: A = h·ly, the same prediction with A = h·l; for a long basin this is
    // the shallow-water seiche 2L/sqrt(g·h)
    let depth = Params { flux_form: FluxForm::Signed, cross_section: CrossSection::Depth, dt: 0.02, ..still() };
    let as_constant = Params { cross_section: CrossSection::Constant, pipe_area: 1.0 * cell, ..depth.clone() };
    let expected = predicted_period(&as_constant, n, cell, 1.0);
    for p in &measured_period(&depth, n, cell, 3000) {
        assert!((p / expected - 1.0).abs() < 0.01, "depth: period {p}, predicted {expected}");
    }
    let long = 2.0 * n as f64 * cell / (depth.gravity * 1.0).sqrt();
    assert!((expected / long - 1.0).abs() < 0.01, "{expected} vs 2L/sqrt(gh) = {long}");
}

#[test]
fn dam_break_is_bounded_by_ritters_front() {
    // 1-D channel, dam in the middle, dry downstream; pipe cross-section set so that the pipe
    // model's wave speed equals sqrt(g·h0) (A = h0·ly with l = lx).
    let (n, cell, h0) = (400usize, 1.0, 1.0f32);
    let params = Params {
        flux_form: FluxForm::Signed,
        pipe_area: f64::from(h0) * cell,
        dt: 0.02,
        border: Border::Closed,
        ..still()
    };
    dam_break(params, n, cell, h0);
    // the depth cross-section is shallow water proper
    let params = Params { flux_form: FluxForm::Signed, cross_section: CrossSection::Depth, dt: 0.02, ..still() };
    dam_break(params, n, cell, h0);
}

fn dam_break(params: Params, n: usize, cell: f64, h0: f32) {
    let g = params.gravity;
    let bed = grid(n, 1, cell, |_, _| 0.0);
    let dam = n / 2;
    let water = grid(n, 1, cell, |_, c| if c < dam { h0 } else { 0.0 });
    let mut st = State::new(&bed, &params, StartMaps { water: Some(&water), ..Default::default() }).unwrap();
    let mut sim = CpuSim::new(params.clone(), &st).unwrap();
    let c0 = (g * f64::from(h0)).sqrt();
    let steps = 250u64; // t = 5 s: the waves stay inside the channel
    for k in 1..=steps {
        sim.step(&mut st);
        let t = k as f64 * params.dt;
        let front = st.water.iter().rposition(|&d| d > 1e-3 * h0).unwrap_or(0);
        let distance = (front as f64 + 0.5 - dam as f64) * cell;
        assert!(distance <= 2.0 * c0 * t + cell, "front at {distance} m after {t} s");
    }
    let t = steps as f64 * params.dt;
    let ritter = |x: f64| -> f64 {
        let xi = x / t;
        if xi <= -c0 {
            f64::from(h0)
        } else if xi >= 2.0 * c0 {
            0.0
        } else {
            (2.0 * c0 - xi).powi(2) / (9.0 * g)
        }
    };
    let (mut diff, mut total) = (0.0, 0.0);
    for (c, &d) in st.water.iter().enumerate() {
        let x = (c as f64 + 0.5 - dam as f64) * cell;
        let exact = ritter(x);
        diff += (f64::from(d) - exact).abs();
        total += exact;
    }
    let l1 = diff / total;
    assert!(l1 <= 0.2, "{:?}: relative L1 against Ritter: {l1}", params.cross_section);
}
