// The signed form's second half of `water_flux` (CPU twin: water.rs `scale_by_donor`): each net
// flux scaled by its donor's limit (this cell's when it sends, the neighbour's when it
// receives), then the cell's sediment share for transport. One invocation per cell.
// (topology.wgsl and flux_uniforms.wgsl are prepended: gpu.rs)

@group(0) @binding(0) var<uniform> u: FluxUniforms;
@group(0) @binding(1) var<storage, read> water: array<f32>;
#fields flux 2 read_write
@group(0) @binding(3) var<storage, read> limit: array<f32>;
@group(0) @binding(4) var<storage, read_write> share: array<f32>;

@compute @workgroup_size(TILE_X, TILE_Y)
fn scale_by_donor(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= u.width || id.y >= u.height) {
        return;
    }
    let i = id.y * u.width + id.x;
    var gross = 0.0;
    for (var e = 0u; e < u.pipes; e++) {
        let f = flux_get(e, i);
        var k = limit[i];
        if (!(f > 0.0)) {
            let j = neighbour(i32(id.y), i32(id.x), e);
            k = 1.0;
            if (j >= 0) {
                k = limit[u32(j)];
            }
        }
        let scaled = f * k;
        flux_set(e, i, scaled);
        gross += max(scaled, 0.0);
    }
    // water.rs `sediment_share`
    let volume = water[i] * u.area;
    let sent = min(gross * u.dt, volume);
    var s = 0.0;
    if (gross > 0.0 && volume > 0.0) {
        s = (sent / volume) / gross;
    }
    share[i] = s;
}
