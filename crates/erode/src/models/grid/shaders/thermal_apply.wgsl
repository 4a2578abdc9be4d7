// Stage 7, `thermal_apply` (CPU twin: thermal.rs `thermal_apply`): each cell gains what its
// neighbours send and loses what it sends, every move recomputed from the terrain before
// erosion (`terrain`), added to the terrain after erosion (`terrain_next`).
// (topology.wgsl and thermal_common.wgsl are prepended: gpu.rs)

@group(0) @binding(0) var<uniform> u: ThermalUniforms;
@group(0) @binding(1) var<storage, read> terrain: array<f32>;
@group(0) @binding(2) var<storage, read> thermal_share: array<f32>;
@group(0) @binding(3) var<storage, read> talus: array<f32>;
@group(0) @binding(4) var<storage, read_write> terrain_next: array<f32>;
// hardness (field 0), then the sediment layer's depth (field 1)
#fields ground 5 read_write

@compute @workgroup_size(TILE_X, TILE_Y)
fn thermal_apply(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= u.width || id.y >= u.height) {
        return;
    }
    let i = id.y * u.width + id.x;
    let here = terrain[i];
    var change = 0.0;
    var sent = 0.0;
    var received = 0.0;
    for (var e = 0u; e < 8u; e++) {
        let j = neighbour(i32(id.y), i32(id.x), e);
        if (j < 0) {
            continue;
        }
        let there = terrain[u32(j)];
        let dist = pick(u.distance, e);
        let mine = thermal_share[i] * steep(here - there, talus[i], dist);
        let theirs = thermal_share[u32(j)] * steep(there - here, talus[u32(j)], dist);
        change -= mine;
        change += theirs;
        sent += mine;
        received += theirs;
    }
    terrain_next[i] += change;
    // thermal.rs `layer_after`: what the cell sent leaves its layer, what it received joins it
    if (u.layer == 1u) {
        ground_set(1u, i, max(ground_get(1u, i) - sent, 0.0) + received);
    }
}
