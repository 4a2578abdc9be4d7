//! Runs an SPH scene and prints ms per iteration, per-stage times and the books:
//! `cargo run --release -p erode --example sph_probe -- lake|tunnel|tank [PARTICLES] [FACES]
//! [ITERATIONS] [key=value]...` (0 for a scene's default count). For the tank it settles the
//! water first (`SETTLE` iterations, default 1500) and prints the hydrostatic pressure error and
//! the top speed. `RAYON_NUM_THREADS` sets the threads. The checksum covers the particles and
//! the mesh (for A/B runs: the same bits or not).

use erode::models::sph::{self, SceneKind};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let kind = match args.get(1).map(String::as_str) {
        Some("tunnel") => SceneKind::Tunnel,
        Some("tank") => SceneKind::Tank,
        _ => SceneKind::Lake,
    };
    let num = |i: usize, d: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (particles, faces, iters) = (num(2, 0), num(3, 0), num(4, 200));
    let mut scene = kind.build(particles, faces)?;
    for set in args.iter().skip(5) {
        let (k, v) = set.split_once('=').ok_or("KEY=VALUE")?;
        let v: f64 = v.parse()?;
        let p = &mut scene.params;
        match k {
            "viscosity" => p.viscosity = v,
            "kinematic_viscosity" => p.kinematic_viscosity = v,
            "erosion_rate" => p.erosion_rate = v,
            "critical_shear" => p.critical_shear = v,
            "smoothing_ratio" => p.smoothing_ratio = v,
            "sound_speed" => p.sound_speed = v,
            "cfl" => p.cfl = v,
            "contact_ratio" => p.contact_ratio = v,
            "wall_friction" => p.wall_friction = v,
            "mirror_walls" => p.mirror_walls = v,
            "density_diffusion" => p.density_diffusion = v,
            _ => return Err(format!("unknown {k}").into()),
        }
    }
    let (mut st, mut sim) = scene.start()?;
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
    for _ in 0..iters {
        sim.step(&mut st)?;
    }
    let seconds = t0.elapsed().as_secs_f64();
    let top = st.velocities.iter().map(|v| v.length()).fold(0.0, f64::max);
    let b = st.balance();
    println!(
        "{} iterations, {:.3} s simulated, top speed {top:.3} m/s, eroded {:.3e} m³, deposited {:.3e} m³, books {:.1e}",
        st.iteration, st.time, st.books.eroded, st.books.deposited, b.relative_error
    );
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
