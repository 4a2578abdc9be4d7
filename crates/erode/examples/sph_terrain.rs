//! Runs the SPH model on a generated mountain's scale model and prints, every `EVERY`
//! iterations, the top speed against the scene's bound, how many particles exceed it and where
//! the fastest is, and at the end the books, the share of the erosion in the valleys and the
//! deepest cut: `cargo run --release -p erode-core
//! --example sph_terrain -- [PARTICLES] [FACES] [ITERATIONS] [RELIEF_M] [CELL_M] [key=value]...`
//! (defaults 12528, 9068, 2000, 2000 m, 100 m; a 256² fBm, seed 0, as `erode generate --size
//! 256 --relief 2000 --cell-size 100`).

use erode::grid::CellSize;
use erode::models::sph;
use erode::terrain::{TerrainSpec, generate};

const EVERY: u64 = 500;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let num = |i: usize, d: f64| args.get(i).and_then(|s| s.parse::<f64>().ok()).unwrap_or(d);
    let (particles, faces, iters) = (num(1, 12_528.0) as usize, num(2, 9_068.0) as usize, num(3, 2000.0) as u64);
    let spec =
        TerrainSpec { relief: num(4, 2000.0), cell_size: CellSize::square(num(5, 100.0)), ..TerrainSpec::default() };
    let map = generate(&spec)?;
    let (mut scene, scale) = sph::heightmap_scene(&map, particles, faces)?;
    for set in args.iter().skip(6) {
        let (k, v) = set.split_once('=').ok_or("KEY=VALUE")?;
        let mut json = serde_json::to_value(&scene.params)?;
        json[k] = serde_json::Value::from(v.parse::<f64>()?);
        scene.params = serde_json::from_value(json).map_err(|e| format!("{k}: {e}"))?;
    }
    let (mut st, mut sim) = scene.start()?;
    let start = st.mesh.positions.clone();
    let bound = sim.derived().top_speed_bound;
    println!(
        "{} particles, {} faces, spacing {:.4} m, dt {:.3e} s, bound {bound:.3} m/s, scale {scale:?}",
        st.positions.len(),
        st.mesh.faces.len(),
        st.spacing,
        sim.derived().dt
    );
    let t0 = std::time::Instant::now();
    let mut over_steps = 0u64;
    let mut top_since = 0.0f64;
    for i in 1..=iters {
        sim.step(&mut st)?;
        let speeds: Vec<f64> = st.velocities.iter().map(|v| v.length()).collect();
        let over = speeds.iter().filter(|&&s| s > bound).count();
        over_steps += u64::from(over > 0);
        top_since = speeds.iter().copied().fold(top_since, f64::max);
        if i % EVERY == 0 {
            let (k, top) = speeds.iter().enumerate().fold((0, 0.0), |b, (k, &s)| if s > b.1 { (k, s) } else { b });
            let p = st.positions.get(k).copied().unwrap_or_default();
            println!(
                "it {i:5}  {:6.1} s  top {top:6.2} m/s (since last {top_since:6.2})  over bound {over:4}  fastest at ({:.2}, {:.2}, {:.3}) v {:?}  particles {}",
                t0.elapsed().as_secs_f64(),
                p.x,
                p.y,
                p.z,
                st.velocities.get(k).map(|v| [v.x as f32, v.y as f32, v.z as f32]),
                st.positions.len()
            );
            top_since = 0.0;
        }
    }
    // erosion in the valleys: vertices below the mean of those within 0.25 m around them
    let top: Vec<usize> = (0..start.len()).filter(|&v| start[v].z > -1e-9 && st.eroded[v] > -1.0).collect();
    let below_around = |v: usize| {
        let near: Vec<f64> = top
            .iter()
            .map(|&u| start[u])
            .filter(|u| (u.truncate() - start[v].truncate()).length() < 0.25)
            .map(|u| u.z)
            .collect();
        start[v].z < near.iter().sum::<f64>() / near.len() as f64
    };
    let valleys: Vec<bool> = top.iter().map(|&v| below_around(v)).collect();
    let in_valleys: f64 = top.iter().zip(&valleys).filter(|(_, b)| **b).map(|(&v, _)| st.eroded[v]).sum();
    let all: f64 = top.iter().map(|&v| st.eroded[v]).sum();
    println!(
        "valley vertices {:.0} % of the surface's, their erosion {:.0} % of all",
        100.0 * valleys.iter().filter(|b| **b).count() as f64 / valleys.len() as f64,
        100.0 * in_valleys / all
    );
    let deepest = st.mesh.positions.iter().zip(&start).map(|(a, b)| b.z - a.z).fold(0.0, f64::max);
    let b = st.balance();
    println!(
        "steps with a particle over the bound: {over_steps} of {iters}; top {:.2} m/s; deepest cut {:.4} m model = {:.1} m terrain; eroded {:.3e} m³ model; books {:.1e}",
        st.top_speed,
        deepest,
        deepest / scale.vertical,
        st.books.eroded,
        b.relative_error
    );
    Ok(())
}
