//! Whether a still tank stays still: the test's tank (3375 particles, 0.39 m deep), started
//! hydrostatic, settled with damping, then free; every 100 iterations the top speed against
//! the still-tank bound `0.01·√(gH)` (where and how fast), the 99th percentile and median speeds,
//! and the mean pressure error against `ρ0·g·depth` (share of `ρ0·g·H`).
//! `cargo run --release -p erode-core --example sph_tank_still -- [key=value]...` with keys
//! `mirror` (0/1: `mirror_walls`), `delta` (`density_diffusion`), `wall_friction`, `viscosity`,
//! `cfl`, `jitter` (random displacements, spacings) and `kick` (random velocities, times the
//! bound) before settling; `SETTLE` (damped iterations, default 1500) and `ITERS` (free ones,
//! default 1500) from the environment.
use erode::models::sph::{self, SceneKind};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut scene = SceneKind::Tank.build(3375, 0).unwrap();
    let mut jitter = 0.0;
    let mut kick = 0.0;
    for set in args.iter().skip(1) {
        let (k, v) = set.split_once('=').unwrap();
        let v: f64 = v.parse().unwrap();
        match k {
            "wall_friction" => scene.params.wall_friction = v,
            "viscosity" => scene.params.viscosity = v,
            "cfl" => scene.params.cfl = v,
            "mirror" => scene.params.mirror_walls = v,
            "delta" => scene.params.density_diffusion = v,
            "jitter" => jitter = v,
            "kick" => kick = v,
            _ => panic!("unknown key {k}"),
        }
    }
    let (mut st, mut sim) = scene.start().unwrap();
    sim.start_hydrostatic(&mut st);
    let mut seed = 0x9e3779b97f4a7c15u64;
    let mut rnd = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
    };
    let sp = st.spacing;
    for x in &mut st.positions {
        *x += glam::DVec3::new(rnd(), rnd(), rnd()) * (jitter * sp);
    }
    let vb = 0.01 * (9.81f64 * 0.39).sqrt();
    for v in &mut st.velocities {
        *v += glam::DVec3::new(rnd(), rnd(), rnd()) * (2.0 * kick * vb);
    }
    let settle: u32 = std::env::var("SETTLE").ok().and_then(|s| s.parse().ok()).unwrap_or(1500);
    let g = 9.81;
    let height = st.positions.len() as f64 * sim.derived().mass / 1000.0 / (0.4 * 0.4);
    let bound = 0.01 * (g * height).sqrt();
    let report = |st: &sph::State, label: String| {
        let (k, top) = st
            .velocities
            .iter()
            .map(|v| v.length())
            .enumerate()
            .fold((0, 0.0), |a, (k, s)| if s > a.1 { (k, s) } else { a });
        let mut speeds: Vec<f64> = st.velocities.iter().map(|v| v.length()).collect();
        speeds.sort_by(|a, b| a.total_cmp(b));
        let n = speeds.len();
        let perr =
            st.positions.iter().zip(&st.pressure).map(|(x, p)| (p - 1000.0 * g * (height - x.z)).abs()).sum::<f64>()
                / n as f64
                / (1000.0 * g * height);
        println!(
            "{label}: top {:.2}x at {:.3?} v {:.3?}, p99 {:.2}x, median {:.2}x, perr {:.4}",
            top / bound,
            st.positions[k],
            st.velocities[k],
            speeds[n * 99 / 100] / bound,
            speeds[n / 2] / bound,
            perr
        );
    };
    for k in 0..(settle / 500).max(1) {
        sim.settle(&mut st, settle.min(500), 0.02);
        report(&st, format!("settle {}", (k + 1) * 500));
    }
    let total: usize = std::env::var("ITERS").ok().and_then(|s| s.parse().ok()).unwrap_or(1500);
    for it in 0..=total {
        if it % 100 == 0 {
            report(&st, format!("it {it}"));
        }
        if it < total {
            sim.step(&mut st).unwrap();
        }
    }
}
