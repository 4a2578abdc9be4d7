// Stage 6, `sediment_transport`, conservative form (CPU twin: transport.rs
// `sediment_transport`): every pipe carries the sediment of the water it moved; what one cell
// sends is what its neighbour receives.
// (topology.wgsl is prepended: gpu.rs)

struct TransportUniforms {
    width: u32,
    height: u32,
    pipes: u32,
    border: u32,
}

@group(0) @binding(0) var<uniform> u: TransportUniforms;
#fields flux 1 read
@group(0) @binding(2) var<storage, read> sediment: array<f32>;
@group(0) @binding(3) var<storage, read> share: array<f32>;
@group(0) @binding(4) var<storage, read_write> sediment_next: array<f32>;
// the books per cell (see gpu.rs `Book`): sediment leaving open edges is book 7
#fields books 5 read_write

@compute @workgroup_size(TILE_X, TILE_Y)
fn sediment_transport(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= u.width || id.y >= u.height) {
        return;
    }
    let i = id.y * u.width + id.x;
    var value = sediment[i];
    let per_flux = sediment[i] * share[i];
    var lost = 0.0;
    for (var e = 0u; e < u.pipes; e++) {
        let sent = per_flux * max(flux_get(e, i), 0.0);
        value -= sent;
        let j = neighbour(i32(id.y), i32(id.x), e);
        if (j >= 0) {
            let k = u32(j);
            value += sediment[k] * share[k] * max(flux_get(e ^ 1u, k), 0.0);
        } else if (u.border == 1u) {
            lost += sent;
        }
    }
    sediment_next[i] = max(value, 0.0);
    books_add(7u, i, lost);
}
