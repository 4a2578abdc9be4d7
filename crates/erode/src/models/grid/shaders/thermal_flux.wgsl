// Stage 4, `thermal_flux` (CPU twin: thermal.rs `thermal_flux`): each cell's share per metre of
// drop and its talus, from the terrain before erosion (Jákó & Tóth eqs. 14-15, bshishov's talus).
// (topology.wgsl and thermal_common.wgsl are prepended: gpu.rs)

@group(0) @binding(0) var<uniform> u: ThermalUniforms;
@group(0) @binding(1) var<storage, read> terrain: array<f32>;
// hardness (field 0), then the sediment layer's depth (field 1)
#fields ground 2 read
@group(0) @binding(3) var<storage, read_write> thermal_share: array<f32>;
@group(0) @binding(4) var<storage, read_write> talus: array<f32>;

@compute @workgroup_size(TILE_X, TILE_Y)
fn thermal_flux(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= u.width || id.y >= u.height) {
        return;
    }
    let i = id.y * u.width + id.x;
    let bed = terrain[i];
    let hard = ground_get(0u, i);
    let loose = ground_get(1u, i);
    // loose material slides at its angle of repose, bare bedrock at its hardness's talus
    let has_loose = loose > 0.0;
    var t = u.talus_scale * hard + u.talus_bias;
    if (has_loose) {
        t = u.repose;
    }
    var biggest = 0.0;
    var total = 0.0;
    for (var e = 0u; e < 8u; e++) {
        let j = neighbour(i32(id.y), i32(id.x), e);
        if (j < 0) {
            continue;
        }
        let drop = bed - terrain[u32(j)];
        biggest = max(biggest, drop);
        total += steep(drop, t, pick(u.distance, e));
    }
    var amount = u.rate * (1.0 - hard * u.erodibility_loss) * biggest * 0.5;
    if (has_loose) {
        amount = min(u.rate * biggest * 0.5, loose);
    }
    var share = 0.0;
    if (total > 0.0 && biggest > 0.0) {
        share = amount / total;
    }
    thermal_share[i] = share;
    talus[i] = t;
}
