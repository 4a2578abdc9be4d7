// The deepest water (CPU twin: cpu.rs `max_depth`), for the depth cross-section's time step:
// each invocation takes the maximum over a stride of cells, each workgroup reduces its own, and
// one atomic max per workgroup lands in `deepest`. Depths are >= 0, whose f32 bits order like
// the numbers as u32, so the atomic works on the bits; the result does not depend on the order.

struct DepthUniforms {
    cells: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> u: DepthUniforms;
@group(0) @binding(1) var<storage, read> water: array<f32>;
@group(0) @binding(2) var<storage, read_write> deepest: atomic<u32>;

var<workgroup> partial: array<f32, 256>;

@compute @workgroup_size(256)
fn max_depth(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    var m = 0.0;
    let stride = groups.x * 256u;
    for (var i = id.x; i < u.cells; i += stride) {
        m = max(m, water[i]);
    }
    partial[lane] = m;
    workgroupBarrier();
    for (var half = 128u; half > 0u; half = half / 2u) {
        if (lane < half) {
            partial[lane] = max(partial[lane], partial[lane + half]);
        }
        workgroupBarrier();
    }
    if (lane == 0u) {
        atomicMax(&deepest, bitcast<u32>(max(partial[0], 0.0)));
    }
}
