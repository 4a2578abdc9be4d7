//! Droplet model speed: 100,000 droplets at van der Veen's settings on a 100x100 map, and at
//! SebLague-like settings (lifetime 30, radius 3) on a 1024² map, on 1 and 2 threads.
//! `cargo bench -p erode-core --bench droplet`; numbers go to BENCHMARKS.md.

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use erode::models::droplet;
use erode::models::droplet::scene::{bench_terrain, floor_at_lowest};

/// The bench terrain with 4 % of its size in relief, and `params` with the floor at its lowest
/// height (as the CLI sets it).
fn scene(size: usize, params: droplet::Params) -> (droplet::State, droplet::Params) {
    let t = bench_terrain(size, size as f64 * 0.04).expect("terrain");
    (droplet::State::new(&t).expect("state"), floor_at_lowest(params, &t))
}

fn droplets(c: &mut Criterion) {
    let n = 100_000u64;
    let cases = [
        ("beyer_100x100", 100, droplet::Params::beyer()),
        ("seblague_1024x1024", 1024, droplet::Params { max_distance: 30.0, radius: 3.0, ..droplet::Params::beyer() }),
    ];
    let mut group = c.benchmark_group("droplets_100k");
    group.sample_size(10);
    group.throughput(Throughput::Elements(n));
    for (name, size, params) in cases {
        let (state, params) = scene(size, params);
        for threads in [1usize, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
            group.bench_with_input(BenchmarkId::new(name, threads), &threads, |b, _| {
                b.iter_batched(
                    || state.clone(),
                    |mut st| {
                        let mut sim = droplet::CpuSim::new(params.clone(), &st).expect("sim");
                        pool.install(|| sim.run(&mut st, n, &mut |_| {}));
                        st
                    },
                    BatchSize::LargeInput,
                )
            });
        }
    }
    group.finish();
}

criterion_group!(benches, droplets);
criterion_main!(benches);
