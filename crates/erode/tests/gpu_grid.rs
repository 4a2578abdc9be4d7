//! The grid model's ported stages on the GPU against their CPU twins, on Mesa's software Vulkan
//! in CI (`ERODE_REQUIRE_GPU=1` makes a missing adapter fail instead of skipping).

mod common;

use std::sync::{Arc, OnceLock};

use common::grid;
use erode::gpu::GpuContext;
use erode::models::grid::gpu::GpuSim;
use erode::models::grid::topology::Topology;
use erode::models::grid::{Border, Params, RainMode, Source, Stage, StartMaps, State, Units, water};

/// One device per test binary (device setup costs 50–300 ms).
fn context() -> Option<Arc<GpuContext>> {
    static CONTEXT: OnceLock<Option<Arc<GpuContext>>> = OnceLock::new();
    CONTEXT
        .get_or_init(|| match GpuContext::headless() {
            Ok(ctx) => {
                eprintln!("GPU: {}", ctx.adapter);
                Some(Arc::new(ctx))
            }
            Err(e) if std::env::var_os("ERODE_REQUIRE_GPU").is_some_and(|v| v == "1") => {
                panic!("ERODE_REQUIRE_GPU=1 but {e}")
            }
            Err(e) => {
                eprintln!("skipping GPU tests: {e}");
                None
            }
        })
        .clone()
}

/// Hills with water standing in their hollows, so every pipe direction carries flow.
fn scene(params: &Params, w: usize, h: usize) -> State {
    let terrain = grid(w, h, 2.0, |r, c| {
        let (x, y) = (c as f32, r as f32);
        3.0 + 1.2 * (x * 0.37).sin() * (y * 0.29).cos() + 0.02 * x
    });
    let water = grid(w, h, 2.0, |r, c| (0.3 + 0.25 * ((r * 7 + c * 3) % 11) as f32 / 11.0).max(0.0));
    let rain = grid(w, h, 2.0, |r, c| ((r + 2 * c) % 5) as f32 * 0.25);
    State::new(&terrain, params, StartMaps { water: Some(&water), rain: Some(&rain), ..Default::default() }).unwrap()
}

fn max_abs(a: &[f32]) -> f32 {
    a.iter().fold(0.0f32, |m, &v| m.max(v.abs()))
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).fold(0.0f32, |m, (&x, &y)| m.max((x - y).abs()))
}

#[test]
fn water_increment_and_flux_match_the_cpu() {
    let Some(ctx) = context() else { return };
    let mut checked = 0;
    for border in [Border::Closed, Border::Open, Border::Wrap] {
        for pipes in [4u32, 8] {
            let params = Params {
                border,
                pipes,
                rain_mode: if pipes == 8 { RainMode::Map } else { RainMode::Uniform },
                rain_rate: 0.02,
                sources: vec![Source { x: 5.0, y: 4.0, radius: 2.0, rate: 0.5, units: Units::Cells }],
                ..Default::default()
            };
            let (w, h) = (45, 37);
            let start = scene(&params, w, h);
            let mut gpu = GpuSim::new(ctx.clone(), &params, &start).unwrap();
            let max_depth = start.water.iter().fold(0.0f32, |a, &b| a.max(b));
            let dv = params.derived(start.cell_size, f64::from(max_depth));
            let topo = Topology { width: w, height: h, border };
            let mut cpu = start.clone();
            let rates = erode::models::grid::cpu_source_rates(&params, &cpu).unwrap();
            // three rounds of increment then flux, compared after each stage
            for round in 0..3 {
                water::water_increment(&mut cpu, &params, &dv, &rates, 0, true);
                gpu.run_stage(Stage::WaterIncrement).unwrap();
                let mut got = cpu.clone();
                gpu.read_into(&mut got).unwrap();
                // rain·map + d may be fused on the GPU: within 2 ulps of the depth
                let tol = 2.0 * f32::EPSILON * max_abs(&cpu.water);
                let what = format!("{border:?} {pipes} pipes round {round}");
                assert!(max_diff(&got.water, &cpu.water) <= tol, "{what}: water_increment differs");

                let (mut limit, mut share) = (vec![0.0; w * h], vec![0.0; w * h]);
                water::water_flux(&mut cpu, &params, &dv, &topo, &mut limit, &mut share);
                gpu.run_stage(Stage::WaterFlux).unwrap();
                gpu.read_into(&mut got).unwrap();
                // WGSL allows 2.5 ulps per division: 1e-5 of the largest flux
                let scale = cpu.flux.iter().map(|f| max_abs(f)).fold(0.0f32, f32::max);
                assert!(scale > 0.0, "{what}: no flow");
                for e in 0..pipes as usize {
                    let d = max_diff(&got.flux[e], &cpu.flux[e]);
                    assert!(d <= 1e-5 * scale, "{what}: pipe {e} differs by {d} (largest flux {scale})");
                }
                let gpu_share = gpu.read_share().unwrap();
                let d = max_diff(&gpu_share, &share);
                assert!(d <= 1e-5 * max_abs(&share), "{what}: sediment share differs by {d}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 18);
}

#[test]
fn stages_not_on_the_gpu_are_refused_by_name() {
    let Some(ctx) = context() else { return };
    let params = Params::default();
    let st = scene(&params, 16, 16);
    let mut gpu = GpuSim::new(ctx.clone(), &params, &st).unwrap();
    let err = gpu.run_stage(Stage::ErosionDeposition).unwrap_err();
    assert!(err.to_string().contains("erosion_deposition"), "{err}");
    let signed = Params { flux_form: erode::models::grid::FluxForm::Signed, ..Default::default() };
    let err = GpuSim::new(ctx, &signed, &scene(&signed, 16, 16)).err().unwrap();
    assert!(err.to_string().contains("signed"), "{err}");
}
