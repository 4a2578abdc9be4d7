//! The shading pass on the GPU gives what its CPU twin gives.

use erode_viewer::render::Look;
use erode_viewer::shade::{ShadeConstants, ShadePass, shade};
use wgpu::util::DeviceExt;

/// The GPU device, or `None` to skip (`ERODE_REQUIRE_GPU=1` makes a missing adapter fail).
fn gpu() -> Option<erode::gpu::GpuContext> {
    match erode::gpu::GpuContext::headless() {
        Ok(ctx) => Some(ctx),
        Err(e) if std::env::var_os("ERODE_REQUIRE_GPU").is_some_and(|v| v == "1") => {
            panic!("ERODE_REQUIRE_GPU=1 but {e}")
        }
        Err(e) => {
            eprintln!("skipping GPU test: {e}");
            None
        }
    }
}

fn on_gpu(ctx: &erode::gpu::GpuContext, k: &ShadeConstants, terrain: &[f32], water: &[f32]) -> Vec<[f32; 4]> {
    let d = &ctx.device;
    let field = |label: &str, v: &[f32]| {
        d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: bytemuck::cast_slice(v),
            usage: wgpu::BufferUsages::STORAGE,
        })
    };
    let (t, w) = (field("terrain", terrain), field("water", water));
    let pass = ShadePass::new(d, k.vertices());
    let group = pass.bind(d, &t, &w);
    let mut encoder = d.create_command_encoder(&Default::default());
    pass.record(&ctx.queue, &mut encoder, &group, k);
    ctx.queue.submit([encoder.finish()]);
    let v = ctx.read(&pass.output).unwrap_or_else(|e| panic!("read back: {e}"));
    v.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect()
}

#[test]
fn the_shading_pass_gives_what_its_cpu_twin_gives() {
    let Some(ctx) = gpu() else { return };
    let (w, h) = (97, 61);
    let spec = erode::terrain::TerrainSpec {
        kind: erode::terrain::TerrainKind::Ridged,
        width: w,
        height: h,
        seed: 3,
        relief: 40.0,
        feature_size: 40.0,
        ..Default::default()
    };
    let map = erode::terrain::generate(&spec).unwrap_or_else(|e| panic!("{e}"));
    let terrain = map.heights.as_slice().to_vec();
    let water: Vec<f32> = (0..w * h).map(|i| if i % 7 == 0 { 2.0 } else { 0.0 }).collect();
    for (stride, cell, exaggeration, az, alt) in [(1, (1.0, 1.0), 1.0, 225.0, 35.0), (2, (2.0, 3.0), 2.5, 80.0, 12.0)] {
        let sun = Look { sun_azimuth_deg: az, sun_altitude_deg: alt, materials: true }.sun();
        let k = ShadeConstants::new(w, h, stride, cell, exaggeration, sun);
        let cpu = shade(&k, &terrain, &water);
        let gpu = on_gpu(&ctx, &k, &terrain, &water);
        assert_eq!(cpu.len(), gpu.len());
        let diffs: Vec<f32> =
            cpu.iter().zip(&gpu).flat_map(|(a, b)| (0..4).map(move |i| (a[i] - b[i]).abs())).collect();
        let mean = diffs.iter().sum::<f32>() / diffs.len() as f32;
        let off = diffs.iter().filter(|&&d| d > 1e-3).count();
        assert!(
            mean < 1e-4 && off * 1000 <= diffs.len(),
            "stride {stride}: mean difference {mean}, {off} of {} values off by more than 1e-3",
            diffs.len()
        );
        // something to compare: shadows and open sky both occur
        assert!(cpu.iter().any(|s| s[0] < 0.5) && cpu.iter().any(|s| s[0] > 0.99), "stride {stride}: no shadow");
        assert!(cpu.iter().any(|s| s[1] < 0.9), "stride {stride}: no occlusion");
    }
}
