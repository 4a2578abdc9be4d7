//! Runs an SPH scene and prints ms per iteration, per-stage times and the books:
//! `cargo run --release -p erode-core --example sph_probe -- lake|lake-full|tunnel|tank [PARTICLES]
//! [FACES] [ITERATIONS] [key=value]...` (0 for a scene's default count; `lake-full` is the lake
//! with its basin full to the brim from the start, all 12,528 particles in it: the per-iteration
//! benchmark at the paper's size). For the tank it settles the
//! water first (`SETTLE` iterations, default 1500) and prints the hydrostatic pressure error and
//! the top speed. `RAYON_NUM_THREADS` sets the threads. The checksum covers the particles and
//! the mesh (for A/B runs: the same bits or not). For the lake and the tunnel it prints the
//! visible change their scene is for (the outlet lowered, the wall receded) and the iteration
//! and seconds at which it reached its target (checked every 50 iterations). Parameters are set
//! by their names, as the CLI's `--set`.

use erode::models::sph::{self, SceneKind};
use glam::DVec3;

/// The visible change a scene is for, as a share of its size, and the share to reach: how far
/// the tunnel's wall receded (of its 0.35 m radius; target 5 %), how far the lake's outlet was
/// lowered (where the basin's rim meets the valley down the slope, x = 1.6 m, y = 1 m; of the
/// valley's 0.05 m depth there; target 10 %).
fn visible(kind: SceneKind, st: &sph::State, start: &[DVec3]) -> Option<(&'static str, f64, f64)> {
    let pairs = st.mesh.positions.iter().zip(start);
    match kind {
        SceneKind::Tunnel => {
            let radial = |x: DVec3| x.y.hypot(x.z);
            let receded =
                pairs.filter(|(_, b)| radial(**b) < 0.36).map(|(a, b)| radial(*a) - radial(*b)).fold(0.0, f64::max);
            Some(("tube wall receded (largest), share of the radius", receded / 0.35, 0.05))
        }
        SceneKind::Lake => {
            let lowered = pairs
                .filter(|(_, b)| (1.45..=1.85).contains(&b.x) && (b.y - 1.0).abs() < 0.25 && b.z > 0.2)
                .map(|(a, b)| b.z - a.z)
                .fold(0.0, f64::max);
            Some(("outlet lowered (largest), share of its depth", lowered / 0.05, 0.10))
        }
        SceneKind::Tank => None,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let kind = match args.get(1).map(String::as_str) {
        Some("tunnel") => SceneKind::Tunnel,
        Some("tank") => SceneKind::Tank,
        _ => SceneKind::Lake,
    };
    let num = |i: usize, d: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (particles, faces, iters) = (num(2, 0), num(3, 0), num(4, 200));
    let mut scene = match args.get(1).map(String::as_str) {
        Some("lake-full") => sph::scenes::lake_full(particles, faces)?,
        _ => kind.build(particles, faces)?,
    };
    for set in args.iter().skip(5) {
        // any parameter by its name, as the CLI's --set
        let (k, v) = set.split_once('=').ok_or("KEY=VALUE")?;
        let mut json = serde_json::to_value(&scene.params)?;
        json[k] = serde_json::Value::from(v.parse::<f64>()?);
        scene.params = serde_json::from_value(json).map_err(|e| format!("{k}: {e}"))?;
    }
    let (mut st, mut sim) = scene.start()?;
    let start_mesh = st.mesh.positions.clone();
    println!(
        "{kind:?}: {} particles, {} faces, spacing {:.4} m, dt {:.3e} s",
        st.positions.len(),
        st.mesh.faces.len(),
        st.spacing,
        sim.derived().dt
    );
    if kind == SceneKind::Tank {
        sim.start_hydrostatic(&mut st);
        let n = std::env::var("SETTLE").ok().and_then(|s| s.parse().ok()).unwrap_or(1500);
        sim.settle(&mut st, n, 0.02);
    }
    let t0 = std::time::Instant::now();
    let mut reached = None;
    for _ in 0..iters {
        sim.step(&mut st)?;
        if reached.is_none()
            && st.iteration % 50 == 0
            && visible(kind, &st, &start_mesh).is_some_and(|(_, share, target)| share >= target)
        {
            reached = Some((st.iteration, t0.elapsed().as_secs_f64()));
        }
    }
    let seconds = t0.elapsed().as_secs_f64();
    let top = st.velocities.iter().map(|v| v.length()).fold(0.0, f64::max);
    let b = st.balance();
    println!(
        "{} iterations, {:.3} s simulated, top speed {top:.3} m/s, eroded {:.3e} m³, deposited {:.3e} m³, books {:.1e}",
        st.iteration, st.time, st.books.eroded, st.books.deposited, b.relative_error
    );
    println!(
        "particles now {}, let in {}, taken out {}, inflow held back {:.3e} m³, water books off by {} particles",
        st.positions.len(),
        st.books.particles_emitted,
        st.books.particles_lost,
        st.books.inflow_held,
        b.particles_unaccounted
    );
    let moved = st.mesh.positions.iter().zip(&start_mesh).map(|(a, b)| (*a - *b).length()).fold(0.0, f64::max);
    println!("largest vertex move {:.2} mm", 1e3 * moved);
    if let Some((what, share, target)) = visible(kind, &st, &start_mesh) {
        println!("{what}: {:.1} % (target {:.0} %)", 100.0 * share, 100.0 * target);
        match reached {
            Some((i, t)) => println!("target reached at iteration {i}, {t:.1} s into the run"),
            None => println!("target not reached"),
        }
    }
    // a checksum of the particles and the mesh, to see whether a change moved any bit
    let sum = st
        .positions
        .iter()
        .chain(&st.velocities)
        .chain(&st.mesh.positions)
        .fold(0u64, |h, v| v.to_array().iter().fold(h, |h, c| h.rotate_left(5) ^ c.to_bits()));
    println!(
        "{:.2} ms per iteration ({} threads), checksum {sum:016x}",
        1e3 * seconds / iters as f64,
        rayon::current_num_threads()
    );
    for (s, t) in sph::Stage::ALL.iter().zip(sim.stage_times()) {
        println!("  {:14} {:7.3} ms", s.name(), 1e3 * t.as_secs_f64() / iters as f64);
    }
    if kind == SceneKind::Tank {
        let (rho0, g) = (sim.params().rest_density, sim.params().gravity);
        let height = st.positions.len() as f64 * sim.derived().mass / rho0 / (0.4 * 0.4);
        let error =
            st.positions.iter().zip(&st.pressure).map(|(x, p)| (p - rho0 * g * (height - x.z)).abs()).sum::<f64>()
                / st.positions.len() as f64;
        println!(
            "water {height:.4} m deep: mean |p − ρ0·g·depth| = {:.4} of ρ0·g·H; top speed {:.2} x 0.01·√(gH)",
            error / (rho0 * g * height),
            top / (0.01 * (g * height).sqrt())
        );
    }
    Ok(())
}
