//! `erode analyze`'s speed: every figure of the mountain bench terrain at 1024² and 4096² on 1
//! and 2 threads. `cargo bench -p erode-core --bench analysis`; numbers go to BENCHMARKS.md.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use erode::analysis::{Options, analyze};
use erode::terrain::bench::{Bench, at_cell_size};

fn figures(c: &mut Criterion) {
    let mut group = c.benchmark_group("analyze");
    group.sample_size(10);
    for size in [1024usize, 4096] {
        // the mountain bench's land: 30 m cells at 1024², the same 30 m cells over 4x the extent
        let map = at_cell_size(Bench::Mountain, size, 30.0).expect("terrain");
        for threads in [1usize, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
            group.bench_with_input(BenchmarkId::new(format!("{size}x{size}"), threads), &threads, |b, _| {
                b.iter(|| pool.install(|| analyze(&map, &Options::default()).expect("figures")))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, figures);
criterion_main!(benches);
