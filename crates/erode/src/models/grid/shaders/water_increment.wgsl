// Stage 1, `water_increment` (CPU twin: water.rs `water_increment` without buckets): rain,
// uniform or from a map, and sources add depth. One invocation per cell.

struct IncrementUniforms {
    width: u32,
    height: u32,
    // 1: scale the rain by rain_map
    has_map: u32,
    // 1: add source_rate·dt
    has_sources: u32,
    // rain depth per sub-step, m
    rain: f32,
    dt: f32,
    // 0 (see `rounded`)
    zero: u32,
    pad1: f32,
}

@group(0) @binding(0) var<uniform> u: IncrementUniforms;
@group(0) @binding(1) var<storage, read_write> water: array<f32>;
@group(0) @binding(2) var<storage, read> rain_map: array<f32>;
@group(0) @binding(3) var<storage, read> source_rate: array<f32>;
// the books per cell (see gpu.rs `Book`): rain is book 0, sources book 1
#fields books 4 read_write

// `x` as rounded, hidden from the compiler's algebra: SPIR-V lets a driver reassociate and fuse
// float operations unless told not to (naga does not), which may turn `(d + r) - d` into `r` and
// book rain a cell's depth was too deep to keep; the XOR with a uniform 0 it cannot see through
// keeps the rounded value, so a book is the difference of what is stored.
fn rounded(x: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(x) ^ u.zero);
}

@compute @workgroup_size(TILE_X, TILE_Y)
fn water_increment(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= u.width || id.y >= u.height) {
        return;
    }
    let i = id.y * u.width + id.x;
    var d = water[i];
    if (u.rain > 0.0) {
        let before = d;
        if (u.has_map == 1u) {
            d = rounded(d + u.rain * rain_map[i]);
        } else {
            d = rounded(d + u.rain);
        }
        books_add(0u, i, d - before);
    }
    if (u.has_sources == 1u) {
        let before = d;
        d = rounded(d + source_rate[i] * u.dt);
        books_add(1u, i, d - before);
    }
    water[i] = d;
}
