//! The stream-power model's speed: one step at 1024² on 1 and 2 threads, from the bench plain
//! (white noise: ~116,000 pits, the hardest start for depression filling) and mid-run (the
//! same plain after 60 steps of 10,000 years: a young range, a few hundred pits a step), each
//! step on a fresh copy of its start; and `in_a_run`, consecutive steps from that mid-run state
//! on, as a run makes them, with D8 and with multiple flow directions (`in_a_run_mfd`).
//! `cargo bench -p erode-core --bench stream_power`; numbers go to BENCHMARKS.md, where the 4096²
//! figures come from `examples/stream_power_probe.rs`.

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use erode::models::stream_power::{CpuSim, Params, StartMaps, State};
use erode::terrain::bench::noisy_plain;

fn step(c: &mut Criterion) {
    let mut group = c.benchmark_group("stream_power_step");
    group.sample_size(10);
    let params = Params::default();
    let plain = noisy_plain(1024, 100.0, 1).expect("plain");
    let start = State::with_maps(&plain, StartMaps::default(), params.rock_erodibility).expect("state");
    let mut mid = start.clone();
    CpuSim::new(params.clone(), &mid).expect("sim").run(&mut mid, 60);
    for (name, state) in [("pit_heavy", &start), ("mid_run", &mid)] {
        for threads in [1usize, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
            let mut sim = CpuSim::new(params.clone(), state).expect("sim");
            group.bench_with_input(BenchmarkId::new(format!("1024x1024/{name}"), threads), &threads, |b, _| {
                b.iter_batched_ref(|| state.clone(), |st| pool.install(|| sim.step(st)), BatchSize::LargeInput)
            });
        }
    }
    // mid-run as in a run: consecutive steps of one state (no fresh copy of the state, and its
    // cache misses, before each step); the state goes on from step 60. With multiple flow
    // directions too, from the same (D8) state: its first steps from it reshape little
    let mfd = Params { flow: "mfd".into(), ..params.clone() };
    for (name, p) in [("in_a_run", &params), ("in_a_run_mfd", &mfd)] {
        for threads in [1usize, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
            let mut st = mid.clone();
            let mut sim = CpuSim::new(p.clone(), &st).expect("sim");
            group.bench_with_input(BenchmarkId::new(format!("1024x1024/{name}"), threads), &threads, |b, _| {
                b.iter(|| pool.install(|| sim.step(&mut st)))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, step);
criterion_main!(benches);
