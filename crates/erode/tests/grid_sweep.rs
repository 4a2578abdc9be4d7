//! The sweep (all stages in one pass over bands of rows) against the stage-by-stage passes:
//! the same bits for every border, pipe count and option it covers, on grids down to one row,
//! at any thread count (which changes the bands).

use crate::common;

use common::{fingerprint, grid};
use erode::models::grid::{Border, CpuSim, HardnessMode, Params, RainMode, Source, StartMaps, State, Units};

/// Hills with a cliff down the middle (across every row, so thermal moves cross every band
/// edge): water pools, flows and erodes within a few steps.
fn hills(w: usize, h: usize) -> erode::Grid<f32> {
    grid(w, h, 2.0, |r, c| {
        let (x, y) = (c as f32, r as f32);
        let cliff = if 2 * c > w { 3.0 } else { 0.0 };
        4.0 + 1.5 * (x * 0.31).sin() * (y * 0.23).cos() + 0.05 * x - 0.03 * y
            + cliff
            + ((r * 7 + c * 13) % 5) as f32 * 0.01
    })
}

fn run_both(params: &Params, w: usize, h: usize, steps: u64, threads: usize) -> (Vec<u8>, Vec<u8>, String, String) {
    let terrain = hills(w, h);
    let rain = grid(w, h, 2.0, |r, c| ((r + 2 * c) % 3) as f32 * 0.5);
    let maps = StartMaps { rain: (params.rain_mode == RainMode::Map).then_some(&rain), ..Default::default() };
    let mut swept = State::new(&terrain, params, maps).unwrap();
    let mut staged = swept.clone();
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| {
        let mut a = CpuSim::new(params.clone(), &swept).unwrap();
        let mut b = CpuSim::new(params.clone(), &staged).unwrap();
        for _ in 0..steps {
            a.step(&mut swept);
            b.step_stage_by_stage(&mut staged);
        }
    });
    (fingerprint(&swept), fingerprint(&staged), format!("{:?}", swept.books), format!("{:?}", staged.books))
}

#[test]
fn the_sweep_gives_the_bits_of_the_stage_by_stage_passes() {
    let sizes = [(40, 37), (9, 1), (1, 9), (5, 3), (17, 8), (23, 19)];
    let mut checked = 0;
    for border in [Border::Closed, Border::Open, Border::Wrap] {
        for pipes in [4, 8] {
            for thermal in [0.0, 0.2] {
                let params = Params {
                    border,
                    pipes,
                    thermal_rate: thermal,
                    rain_mode: match (pipes, thermal > 0.0) {
                        (8, _) => RainMode::Map,
                        (_, false) => RainMode::Uniform,
                        (_, true) => RainMode::Buckets,
                    },
                    bucket_count: 3,
                    bucket_radius: 2.0,
                    rain_rate: 0.02,
                    evaporation: 0.01,
                    hardness_mode: HardnessMode::Noise,
                    softening: 0.5,
                    sources: vec![Source { x: 0.0, y: 0.0, radius: 1.5, rate: 0.3, units: Units::Cells }],
                    ..Params::classic()
                };
                for (i, &(w, h)) in sizes.iter().enumerate() {
                    let threads = 1 + i % 3;
                    let (a, b, books_a, books_b) = run_both(&params, w, h, 30, threads);
                    let what = format!("{border:?} {pipes} pipes thermal {thermal} {w}x{h} {threads} threads");
                    assert!(a == b, "{what}: the fields differ");
                    assert_eq!(books_a, books_b, "{what}: the books differ");
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 72);
}

/// `run(n)` skips the velocity maps until its last iteration: the state it leaves (velocity
/// included) is still that of `n` single steps, bit for bit, with and without sub-steps.
#[test]
fn a_run_leaves_the_state_of_as_many_steps() {
    for (w, h, substeps) in [(40, 37, None), (23, 19, Some(3))] {
        let params = Params { rain_rate: 0.02, thermal_rate: 0.2, ..Params::classic() };
        let terrain = hills(w, h);
        let mut stepped = State::new(&terrain, &params, StartMaps::default()).unwrap();
        let mut ran = stepped.clone();
        let mut a = CpuSim::new(params.clone(), &stepped).unwrap();
        let mut b = CpuSim::new(params.clone(), &ran).unwrap();
        if let Some(n) = substeps {
            a.force_substeps(n);
            b.force_substeps(n);
        }
        for _ in 0..25 {
            a.step(&mut stepped);
        }
        b.run(&mut ran, 10);
        b.run(&mut ran, 15);
        assert!(stepped.velocity_x.iter().any(|&u| u != 0.0), "{w}x{h}: the water moves");
        assert!(fingerprint(&stepped) == fingerprint(&ran), "{w}x{h}: the states differ");
        assert_eq!(format!("{:?}", stepped.books), format!("{:?}", ran.books));
    }
}
