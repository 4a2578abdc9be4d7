//! The SPH model at 003's sizes: the lake (12,528 particles on 9,068 faces) and the tunnel
//! (12,528 particles on 4,706 faces), 1 and 2 threads. Each sample runs iterations on one
//! evolving state (the water falls and the mesh erodes as the bench goes on).

use criterion::{Criterion, criterion_group, criterion_main};
use erode::models::sph::{SceneKind, SphSim, SphState};

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("sph");
    group.sample_size(10);
    for (name, kind) in [("lake_12528p_9068f", SceneKind::Lake), ("tunnel_12528p_4706f", SceneKind::Tunnel)] {
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let scene = kind.build(0, 0).unwrap();
            let min_area = scene.mesh.default_min_area();
            let mut st =
                SphState::new(scene.mesh, scene.spacing, &scene.blocks, scene.max_particles, min_area).unwrap();
            let mut sim = SphSim::new(scene.params, &st).unwrap();
            group.bench_function(format!("{name}/{threads}t"), |b| {
                b.iter(|| pool.install(|| sim.step(&mut st).unwrap()));
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
