//! Grid model speed, run in batches as `erode simulate` runs them: one iteration of the classic
//! model (Jákó & Tóth 2011 as written) at 256², 1024² and 2048², and of the default preset
//! (rivers: 8 pipes, shear capacity) on the mountain bench terrain at 1024², on 1 and 2 threads.
//! `cargo bench -p erode-core --bench grid`; numbers go to BENCHMARKS.md.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use erode::CellSize;
use erode::models::grid::{CpuSim, Params, StartMaps, State};
use erode::terrain::{TerrainKind, TerrainSpec, generate};

/// The benchmark terrain: ridged noise, 5 m cells, a quarter of the extent in relief, after 200
/// iterations so water is flowing everywhere.
fn scene(size: usize, params: &Params) -> (State, CpuSim) {
    let spec = TerrainSpec {
        kind: TerrainKind::Ridged,
        width: size,
        height: size,
        cell_size: CellSize::square(5.0),
        seed: 1,
        relief: size as f64 * 5.0 * 0.25,
        feature_size: size as f64 / 2.0,
        ..Default::default()
    };
    let map = generate(&spec).expect("terrain");
    let mut st = State::new(&map.heights, params, StartMaps::default()).expect("state");
    let mut sim = CpuSim::new(params.clone(), &st).expect("sim");
    sim.run(&mut st, 200);
    (st, sim)
}

fn grid_step(c: &mut Criterion) {
    let params = Params::classic();
    let mut group = c.benchmark_group("grid_classic_iteration");
    group.sample_size(10);
    for size in [256usize, 1024, 2048] {
        let (state, _) = scene(size, &params);
        group.throughput(Throughput::Elements((size * size) as u64));
        for threads in [1usize, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
            let mut st = state.clone();
            let mut sim = CpuSim::new(params.clone(), &st).expect("sim");
            // `run`, as `erode simulate` calls it: the velocity output is written on the last
            // iteration of each measured batch
            group.bench_with_input(BenchmarkId::new(format!("{size}x{size}"), threads), &threads, |b, _| {
                b.iter_custom(|iterations| {
                    let t0 = std::time::Instant::now();
                    pool.install(|| sim.run(&mut st, iterations));
                    t0.elapsed()
                })
            });
        }
    }
    group.finish();
}

/// The default preset on the mountain bench (30 m cells), as `erode simulate grid` runs it.
fn rivers_step(c: &mut Criterion) {
    let params = Params::default();
    let map = erode::terrain::bench::bench(erode::terrain::bench::Bench::Mountain, 1024).expect("terrain");
    let mut state = State::new(&map.heights, &params, StartMaps::default()).expect("state");
    CpuSim::new(params.clone(), &state).expect("sim").run(&mut state, 100);
    let mut group = c.benchmark_group("grid_rivers_iteration");
    group.sample_size(10);
    group.throughput(Throughput::Elements(1024 * 1024));
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
        let mut st = state.clone();
        let mut sim = CpuSim::new(params.clone(), &st).expect("sim");
        group.bench_with_input(BenchmarkId::new("mountain 1024x1024", threads), &threads, |b, _| {
            b.iter_custom(|iterations| {
                let t0 = std::time::Instant::now();
                pool.install(|| sim.run(&mut st, iterations));
                t0.elapsed()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, grid_step, rivers_step);
criterion_main!(benches);
