//! Runs the stream-power model on the bench plain and prints each stage's time per step, the
//! pits and the books: `cargo run --release -p erode --example stream_power_probe -- SIZE STEPS
//! [CELL_M] [DT_YEARS] [DIFFUSIVITY]`.

use erode::models::stream_power::{CpuSim, Params, STAGES, Stage, StartMaps, State};
use erode::terrain::bench::noisy_plain;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: f64| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (size, steps) = (arg(0, 1024.0) as usize, arg(1, 10.0) as u64);
    let cell = arg(2, 100.0);
    let params = Params { dt_years: arg(3, 1e4), diffusivity: arg(4, 0.01), ..Params::default() };
    let plain = noisy_plain(size, cell, 1).expect("plain");
    let mut st = State::with_maps(&plain, StartMaps::default(), params.rock_erodibility).expect("state");
    let mut sim = CpuSim::new(params, &st).expect("sim");
    let t0 = std::time::Instant::now();
    let mut prev = [std::time::Duration::ZERO; STAGES];
    for s in 0..steps {
        let t = std::time::Instant::now();
        sim.step(&mut st);
        let dt = t.elapsed();
        let times = sim.stage_times();
        let split: Vec<String> = Stage::ALL
            .iter()
            .map(|&g| format!("{} {:.1}", g.name(), (times[g as usize] - prev[g as usize]).as_secs_f64() * 1e3))
            .collect();
        prev = times;
        if s < 3 || s + 1 == steps || s % 50 == 0 {
            println!(
                "step {s}: {:.1} ms ({}), pits {}, relief {:.1} m",
                dt.as_secs_f64() * 1e3,
                split.join(", "),
                sim.routing().pits,
                st.terrain.iter().cloned().fold(f64::MIN, f64::max)
            );
        }
    }
    let total = t0.elapsed().as_secs_f64();
    println!(
        "{steps} steps in {total:.2} s: {:.1} ms per step; books relative error {:.2e}; {:?}",
        total / steps as f64 * 1e3,
        st.relative_error(),
        st.books
    );
}
