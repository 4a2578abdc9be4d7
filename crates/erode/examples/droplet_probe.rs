//! Times droplet runs, for A/B comparisons of the CPU droplet simulator.
//! `cargo run --release -p erode-core --example droplet_probe -- [size] [droplets] [lifetime] [radius] [runs]`
//!
//! The scene is the droplet bench's: fBm terrain with 4 % of its size in relief, floor at its
//! lowest height, the other parameters Beyer's (`droplet::Params::beyer`, 1 m cells: a lifetime
//! of N steps is a path of N m). Prints seconds per run, droplet steps, ns per step
//! and a checksum of the terrain (to see whether a change moved any bit).
use erode::models::droplet;
use erode::models::droplet::scene::{bench_terrain, floor_at_lowest};

fn main() {
    let args: Vec<f64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let size = args.first().copied().unwrap_or(100.0) as usize;
    let droplets = args.get(1).copied().unwrap_or(100_000.0) as u64;
    let lifetime = args.get(2).copied().unwrap_or(300.0);
    let radius = args.get(3).copied().unwrap_or(5.0);
    let runs = args.get(4).copied().unwrap_or(3.0) as usize;
    let t = bench_terrain(size, size as f64 * 0.04).expect("terrain");
    let params = floor_at_lowest(droplet::Params { max_distance: lifetime, radius, ..droplet::Params::beyer() }, &t);
    println!(
        "{size}x{size}, {droplets} droplets, lifetime {lifetime}, radius {radius}, {} threads",
        rayon::current_num_threads()
    );
    for _ in 0..runs {
        let mut st = droplet::State::new(&t).expect("state");
        let mut sim = droplet::CpuSim::new(params.clone(), &st).expect("sim");
        let t0 = std::time::Instant::now();
        sim.run(&mut st, droplets, &mut |_| {});
        let secs = t0.elapsed().as_secs_f64();
        let sum = st.terrain.iter().fold(0u64, |h, v| h.rotate_left(5) ^ u64::from(v.to_bits()));
        println!(
            "{secs:.3} s | {} steps | {:.1} ns/step | eroded {} | checksum {sum:016x}",
            st.books.steps,
            secs * 1e9 / st.books.steps as f64,
            st.books.eroded
        );
    }
}
