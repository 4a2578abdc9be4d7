// Stage 7, `thermal_apply` (CPU twin: thermal.rs `thermal_apply`): each cell gains what its
// neighbours send and loses what it sends, every move recomputed from the terrain before
// erosion (`terrain`), added to the terrain after erosion (`terrain_next`).
// (topology.wgsl and thermal_common.wgsl are prepended: gpu.rs)

@group(0) @binding(0) var<uniform> u: ThermalUniforms;
@group(0) @binding(1) var<storage, read> terrain: array<f32>;
@group(0) @binding(2) var<storage, read> thermal_share: array<f32>;
@group(0) @binding(3) var<storage, read> talus: array<f32>;
@group(0) @binding(4) var<storage, read_write> terrain_next: array<f32>;

@compute @workgroup_size(16, 16)
fn thermal_apply(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= u.width || id.y >= u.height) {
        return;
    }
    let i = id.y * u.width + id.x;
    let here = terrain[i];
    var change = 0.0;
    for (var e = 0u; e < 8u; e++) {
        let j = neighbour(i32(id.y), i32(id.x), e);
        if (j < 0) {
            continue;
        }
        let there = terrain[u32(j)];
        let dist = pick(u.distance, e);
        change -= thermal_share[i] * steep(here - there, talus[i], dist);
        change += thermal_share[u32(j)] * steep(there - here, talus[u32(j)], dist);
    }
    terrain_next[i] += change;
}
