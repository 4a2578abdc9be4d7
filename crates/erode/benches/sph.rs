//! The SPH model at Skorkovská et al.'s sizes: the lake (12,528 particles on 9,068 faces, its
//! basin full from the start: `scenes::lake_full`) and the tunnel (12,528 particles on 4,706
//! faces), 1 and 2 threads. Each sample runs iterations on one
//! evolving state (the water falls and the mesh erodes as the bench goes on).

use criterion::{Criterion, criterion_group, criterion_main};
use erode::models::sph::{SceneKind, scenes};

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("sph");
    group.sample_size(10);
    for name in ["lake_12528p_9068f", "tunnel_12528p_4706f"] {
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let scene = if name.starts_with("lake") { scenes::lake_full(0, 0) } else { SceneKind::Tunnel.build(0, 0) };
            let (mut st, mut sim) = scene.unwrap().start().unwrap();
            group.bench_function(format!("{name}/{threads}t"), |b| {
                b.iter(|| pool.install(|| sim.step(&mut st).unwrap()));
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
