//! Droplet model speed: 100,000 droplets at 002's settings on a 100x100 map, and at
//! SebLague-like settings (lifetime 30, radius 3) on a 1024² map, on 1 and 2 threads.
//! `cargo bench -p erode --bench droplet`; numbers go to BENCHMARKS.md.

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use erode::models::droplet::{DropletParams, DropletSim, DropletState};
use erode::terrain::{TerrainKind, TerrainSpec, generate};

/// fBm terrain with a relief of 4% of its size (the gentle slopes of 002's examples), and the
/// parameters with the floor at its lowest height (as the CLI sets it).
fn scene(size: usize, params: DropletParams) -> (DropletState, DropletParams) {
    let spec = TerrainSpec {
        kind: TerrainKind::Fbm,
        width: size,
        height: size,
        seed: 2,
        relief: size as f64 * 0.04,
        feature_size: size as f64 / 2.0,
        ..Default::default()
    };
    let t = generate(&spec).expect("terrain").heights;
    let floor = t.as_slice().iter().fold(f32::INFINITY, |a, &b| a.min(b));
    (DropletState::new(&t).expect("state"), DropletParams { min_height: f64::from(floor), ..params })
}

fn droplets(c: &mut Criterion) {
    let n = 100_000u64;
    let cases = [
        ("002_100x100", 100, DropletParams::default()),
        ("seblague_1024x1024", 1024, DropletParams { max_lifetime: 30, radius: 3.0, ..Default::default() }),
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
                        let mut sim = DropletSim::new(params.clone(), &st).expect("sim");
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
