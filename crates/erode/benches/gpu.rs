//! Grid model on the GPU: one iteration of the default model at 1024² and 2048² (the adapter
//! wgpu picks; lavapipe here), submitted and waited for. `cargo bench -p erode-core --features gpu
//! --bench gpu`; numbers go to BENCHMARKS.md.

use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use erode::CellSize;
use erode::gpu::GpuContext;
use erode::models::grid::gpu::GpuSim;
use erode::models::grid::{CrossSection, Params, StartMaps, State};
use erode::terrain::{TerrainKind, TerrainSpec, generate};

fn gpu_step(c: &mut Criterion) {
    let ctx = match GpuContext::headless() {
        Ok(ctx) => Arc::new(ctx),
        Err(e) => {
            eprintln!("no GPU: {e}");
            return;
        }
    };
    eprintln!("adapter: {}", ctx.adapter);
    let mut group = c.benchmark_group("grid_gpu_iteration");
    group.sample_size(10);
    for size in [1024usize, 2048] {
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
        group.throughput(Throughput::Elements((size * size) as u64));
        // the default (depth cross-section: the time step is re-derived from a read-back of the
        // depth every iteration) and a constant cross-section (no read-back)
        for (name, params) in [
            ("default", Params::classic()),
            ("constant", Params { cross_section: CrossSection::Constant, ..Params::classic() }),
        ] {
            let st = State::new(&map.heights, &params, StartMaps::default()).expect("state");
            let mut sim = GpuSim::new(ctx.clone(), &params, &st).expect("sim");
            group.bench_with_input(BenchmarkId::new(format!("{name}_{size}x{size}"), size), &size, |b, _| {
                b.iter(|| {
                    sim.step().expect("step");
                    sim.finish().expect("finish");
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, gpu_step);
criterion_main!(benches);
