//! Runs the stream-power model on the bench plain and prints each stage's time per step, the
//! pits and the books: `cargo run --release -p erode-core --example stream_power_probe -- SIZE STEPS
//! [CELL_M] [DT_YEARS] [DIFFUSIVITY] [FLOW]` (FLOW `d8` or `mfd`).

use erode::models::stream_power::{CpuSim, Params, STAGES, Stage, StartMaps, State};
use erode::terrain::bench::noisy_plain;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: f64| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (size, steps) = (arg(0, 1024.0) as usize, arg(1, 10.0) as u64);
    let cell = arg(2, 100.0);
    let flow = args.get(5).cloned().unwrap_or_else(|| "d8".into());
    let params = Params { dt_years: arg(3, 1e4), diffusivity: arg(4, 0.01), flow, ..Params::default() };
    let plain = noisy_plain(size, cell, 1).expect("plain");
    let mut st = State::with_maps(&plain, StartMaps::default(), params.rock_erodibility).expect("state");
    let mut sim = CpuSim::new(params, &st).expect("sim");
    let t0 = std::time::Instant::now();
    let mut prev = [std::time::Duration::ZERO; STAGES];
    let mut second_half = 0.0;
    for s in 0..steps {
        let t = std::time::Instant::now();
        sim.step(&mut st);
        let dt = t.elapsed();
        if s >= steps / 2 {
            second_half += dt.as_secs_f64();
        }
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
    // cells left without a lower neighbour (edges excluded): the surface should drain
    let w = size;
    let mut stuck = 0;
    for r in 1..w - 1 {
        for c in 1..w - 1 {
            let i = r * w + c;
            let lower = erode::flow::neighbours::STEPS.iter().any(|&(dr, dc)| {
                st.terrain[(r as isize + dr) as usize * w + (c as isize + dc) as usize] < st.terrain[i]
            });
            stuck += usize::from(!lower);
            if !lower && stuck < 4 {
                let rt = sim.routing();
                let j = rt.receiver[i] as usize;
                println!(
                    "stuck {r},{c}: z {} dir {} receiver {j} z_r {} count {}",
                    st.terrain[i],
                    rt.direction[i],
                    st.terrain[j],
                    sim.drainage_cells(i)
                );
            }
        }
    }
    println!("cells with no lower neighbour at the end: {stuck}");
    let hash = st.terrain.iter().fold(0u64, |h, z| h.rotate_left(5) ^ z.to_bits());
    println!("terrain hash {hash:016x}");
    println!("mean step over the second half: {:.1} ms", second_half / (steps - steps / 2) as f64 * 1e3);
    println!(
        "{steps} steps in {total:.2} s: {:.1} ms per step; books relative error {:.2e}; {:?}",
        total / steps as f64 * 1e3,
        st.relative_error(),
        st.books
    );
}
