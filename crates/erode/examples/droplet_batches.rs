//! How batched droplets differ from a strictly serial run, and how fast each runs.
//! `cargo run --release -p erode-core --example droplet_batches -- [size] [droplets] [lifetime] [radius] [relief]`
//!
//! For batch sizes 1 (serial) to 16384, and a serial run with another seed for scale: seconds, droplets/s, eroded volume
//! against the serial run's, and the RMS of the height difference to the serial run (m), on an
//! fBm terrain of `relief` metres (default 4% of the size, the gentle slopes the model's
//! parameters assume).
use erode::models::droplet;
use erode::models::droplet::scene::{bench_terrain, floor_at_lowest};

fn main() {
    let args: Vec<f64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let size = args.first().copied().unwrap_or(256.0) as usize;
    let droplets = args.get(1).copied().unwrap_or(100_000.0) as u64;
    let lifetime = args.get(2).copied().unwrap_or(30.0);
    let radius = args.get(3).copied().unwrap_or(3.0);
    let relief = args.get(4).copied().unwrap_or(size as f64 * 0.04);
    let t = bench_terrain(size, relief).expect("terrain");
    let threads = rayon::current_num_threads();
    println!(
        "{size}x{size}, {droplets} droplets, lifetime {lifetime}, radius {radius}, relief {relief} m, {threads} threads"
    );
    println!("batch | seconds | droplets/s | ns/step | eroded vs serial | height RMS vs serial (m)");
    let mut serial: Option<droplet::State> = None;
    // the last row: a serial run with another seed, for scale (two equally valid runs)
    for (batch, seed) in [(1u32, 0u64), (4, 0), (16, 0), (64, 0), (256, 0), (1024, 0), (4096, 0), (16384, 0), (1, 1)] {
        let params = floor_at_lowest(
            droplet::Params { max_distance: lifetime, radius, batch_size: batch, seed, ..droplet::Params::beyer() },
            &t,
        );
        let mut st = droplet::State::new(&t).expect("state");
        let mut sim = droplet::CpuSim::new(params, &st).expect("sim");
        let t0 = std::time::Instant::now();
        sim.run(&mut st, droplets, &mut |_| {});
        let secs = t0.elapsed().as_secs_f64();
        let (ratio, rms) = match &serial {
            None => (1.0, 0.0),
            Some(s) => {
                let sq: f64 =
                    st.terrain.iter().zip(&s.terrain).map(|(&a, &b)| (f64::from(a) - f64::from(b)).powi(2)).sum();
                (st.books.eroded as f64 / s.books.eroded as f64, (sq / st.terrain.len() as f64).sqrt())
            }
        };
        println!(
            "{batch}{} | {secs:.3} | {:.0} | {:.0} | {ratio:.4} | {rms:.5}",
            if seed > 0 { " (serial, seed 1)" } else { "" },
            droplets as f64 / secs,
            secs * 1e9 / st.books.steps as f64
        );
        if serial.is_none() {
            serial = Some(st);
        }
    }
}
