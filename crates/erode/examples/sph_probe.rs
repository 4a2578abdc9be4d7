//! Runs an SPH scene and prints ms per iteration, per-stage times and the books:
//! `cargo run --release -p erode --example sph_probe -- lake|tunnel|tank [PARTICLES] [FACES] [ITERS]`

use erode::models::sph::{SceneKind, SphSim, SphStage, SphState};

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
            "gravity" => p.gravity = v,
            "viscosity" => p.viscosity = v,
            "kinematic_viscosity" => p.kinematic_viscosity = v,
            "erosion_rate" => p.erosion_rate = v,
            "critical_shear" => p.critical_shear = v,
            "smoothing_ratio" => p.smoothing_ratio = v,
            "penalty_stiffness" => p.penalty_stiffness = v,
            "penalty_damping" => p.penalty_damping = v,
            "sound_speed" => p.sound_speed = v,
            "cfl" => p.cfl = v,
            "contact_ratio" => p.contact_ratio = v,
            _ => return Err(format!("unknown {k}").into()),
        }
    }
    let min_area = scene.mesh.default_min_area();
    let mut st = SphState::new(scene.mesh, scene.spacing, &scene.blocks, scene.max_particles, min_area)?;
    let mut sim = SphSim::new(scene.params, &st)?;
    if kind == SceneKind::Tank {
        sim.start_hydrostatic(&mut st);
        let n: u32 = std::env::var("SETTLE").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
        sim.settle(&mut st, n, 0.02);
    }
    println!(
        "{kind:?}: {} particles, {} faces, spacing {:.4} m, {:?}",
        st.positions.len(),
        st.mesh.faces.len(),
        st.spacing,
        sim.derived()
    );
    if std::env::var("SPH_DEBUG").is_ok() {
        sim.step(&mut st)?;
        let mut rows: Vec<(f64, f64, f64, f64)> = st
            .positions
            .iter()
            .zip(&st.density)
            .zip(&st.velocities)
            .map(|((x, r), v)| (x.z, x.x, *r, v.length()))
            .collect();
        rows.sort_by(|a, b| a.partial_cmp(b).unwrap());
        for r in rows.iter().step_by(97) {
            println!("z {:.4} x {:.4} rho {:.2} v {:.4}", r.0, r.1, r.2, r.3);
        }
    }
    let t0 = std::time::Instant::now();
    for i in 0..iters {
        sim.step(&mut st)?;
        if std::env::var("SPH_TRACE").is_ok() {
            let lo = st.positions.iter().fold(glam::DVec3::splat(9.0), |a, b| a.min(*b));
            let hi = st.positions.iter().fold(glam::DVec3::splat(-9.0), |a, b| a.max(*b));
            let rmax = st.density.iter().copied().fold(0.0, f64::max);
            let pmax = st.pressure.iter().copied().fold(0.0, f64::max);
            let at = st.density.iter().position(|&r| r == rmax).unwrap_or(0);
            println!(
                "{i} lo {lo:.4} hi {hi:.4} rho max {rmax:.2} p max {pmax:.0} at {:.4} v {:.4}",
                st.positions[at], st.velocities[at]
            );
        }
        if (i + 1) % (iters / 10).max(1) == 0 {
            let top = st.velocities.iter().map(|v| v.length()).fold(0.0, f64::max);
            let fast = st.velocities.iter().position(|v| v.length() == top).unwrap_or(0);
            let mean = st.velocities.iter().map(|v| v.length()).sum::<f64>() / st.velocities.len().max(1) as f64;
            let rmax = st.density.iter().copied().fold(0.0, f64::max);
            let rmin = st.density.iter().copied().fold(f64::INFINITY, f64::min);
            let m = sim.derived().mass;
            let ke: f64 = st.velocities.iter().map(|v| 0.5 * m * v.length_squared()).sum();
            let pe: f64 = st.positions.iter().map(|x| m * sim.params().gravity * x.z).sum();
            let rmean = st.density.iter().sum::<f64>() / st.density.len() as f64;
            let zmax = st.positions.iter().map(|x| x.z).fold(0.0, f64::max);
            let lo = st.positions.iter().fold(glam::DVec3::splat(9.0), |a, b| a.min(*b));
            println!("   KE {ke:.5e} PE {pe:.6e} mean rho {rmean:.3} top z {zmax:.4} lo {lo:.4}");
            println!("   mean speed {mean:.4}  fastest at {:?}  density {rmin:.1}..{rmax:.1}", st.positions.get(fast));
            let b = st.balance();
            println!(
                "it {:6} t {:.3} s  particles {}  top speed {:.3}  eroded {:.3e} dep {:.3e} err {:.2e}",
                st.iteration,
                st.time,
                st.positions.len(),
                top,
                st.books.eroded,
                st.books.deposited,
                b.relative_error
            );
        }
    }
    let dt = t0.elapsed().as_secs_f64();
    if std::env::var("FASTEST").is_ok() {
        let mut idx: Vec<usize> = (0..st.positions.len()).collect();
        idx.sort_by(|&a, &b| st.velocities[b].length().total_cmp(&st.velocities[a].length()));
        for &i in idx.iter().take(std::env::var("TAKE").ok().and_then(|s| s.parse().ok()).unwrap_or(25)) {
            println!("fast x {:.4} v {:.4} rho {:.1}", st.positions[i], st.velocities[i], st.density[i]);
        }
    }
    println!("{:.2} ms per iteration ({} threads)", 1e3 * dt / iters as f64, rayon::current_num_threads());
    for (s, t) in SphStage::ALL.iter().zip(sim.stage_times()) {
        println!("  {:18} {:7.3} ms", s.name(), 1e3 * t.as_secs_f64() / iters as f64);
    }
    if kind == SceneKind::Tank {
        let rho0 = sim.params().rest_density;
        let g = sim.params().gravity;
        let area = if std::env::var("ROUND").is_ok() { std::f64::consts::PI * 0.04 } else { 0.4 * 0.4 };
        let height = st.positions.len() as f64 * sim.derived().mass / rho0 / area;
        let mean_err: f64 =
            st.positions.iter().zip(&st.pressure).map(|(x, p)| (p - rho0 * g * (height - x.z)).abs()).sum::<f64>()
                / st.positions.len() as f64;
        let mut layers = vec![(0.0, 0.0, 0usize); 40];
        for (x, p) in st.positions.iter().zip(&st.pressure) {
            let k = ((x.z / st.spacing) as usize).min(39);
            layers[k].0 += p;
            layers[k].1 += x.z;
            layers[k].2 += 1;
        }
        for (k, l) in layers.iter().enumerate().filter(|l| l.1.2 > 0) {
            let z = l.1 / l.2 as f64;
            println!(
                "layer {k:2} z {z:.4} n {:4} p {:8.1} hydrostatic {:8.1}",
                l.2,
                l.0 / l.2 as f64,
                rho0 * g * (height - z)
            );
        }
        println!("height {height:.4} m, mean |p - rho g depth| / (rho g H) = {:.4}", mean_err / (rho0 * g * height));
    }
    Ok(())
}
