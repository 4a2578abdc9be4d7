// The light each drawn vertex gets from the sun and the sky, computed once per change of the
// terrain or the sun (not in every frame's vertex shader): the sun's shadow marched over the
// heightmap, and the sky's occlusion from the horizon in eight directions. `shade.rs` has the
// CPU twin of `shade`, with the same names, that the tests compare with this one.

struct ShadeConstants {
    // width, height (cells), stride (cells per vertex), vertices per row
    dims: vec4<u32>,
    // cell size x, y (m), vertical exaggeration; w unused
    cell: vec4<f32>,
    // direction towards the sun (x east, y up, z south); w unused
    light: vec4<f32>,
    // rows of vertices, vertices; zw unused
    count: vec4<u32>,
};

@group(0) @binding(0) var<uniform> k: ShadeConstants;
@group(0) @binding(1) var<storage, read> terrain: array<f32>;
@group(0) @binding(2) var<storage, read> water: array<f32>;
// per vertex: sunlit share of the ground, sky seen from the ground, sunlit share of the water's
// surface; w unused
@group(0) @binding(3) var<storage, read_write> shade_out: array<vec4<f32>>;

fn cell_index(c: i32, r: i32) -> u32 {
    let w = i32(k.dims.x);
    let h = i32(k.dims.y);
    return u32(clamp(r, 0, h - 1) * w + clamp(c, 0, w - 1));
}

// The terrain's height (m, exaggerated) at a point in cells, read from the nearest cell.
fn ground_at(p: vec2<f32>) -> f32 {
    return terrain[cell_index(i32(floor(p.x)), i32(floor(p.y)))] * k.cell.z;
}

// How much of the sun a point at cell (c, r) and height y sees: the ray towards the sun marched
// over the heightmap in growing steps; the closest pass over the ground (as a slope) gives a
// soft edge.
fn sunlit(c: i32, r: i32, y: f32) -> f32 {
    let l = normalize(k.light.xyz);
    let flat = length(l.xz);
    if (flat < 1e-4) {
        return 1.0;
    }
    // per metre along the ground: cells moved and metres risen
    let dir = vec2<f32>(l.x / k.cell.x, l.z / k.cell.y) / flat;
    let rise = l.y / flat;
    let start = vec2<f32>(f32(c) + 0.5, f32(r) + 0.5);
    let metre = min(k.cell.x, k.cell.y);
    var along = metre;
    var open = 1.0;
    for (var i = 0; i < 40; i = i + 1) {
        let p = start + dir * along;
        if (p.x < 0.0 || p.y < 0.0 || p.x >= f32(k.dims.x) || p.y >= f32(k.dims.y)) {
            break;
        }
        let above = y + 0.02 * metre + rise * along - ground_at(p);
        open = min(open, clamp(above / (0.08 * along) + 0.5, 0.0, 1.0));
        if (open <= 0.0) {
            break;
        }
        along = along + metre * (1.0 + f32(i) * 0.35);
    }
    return open;
}

// The share of the sky a point sees: in eight directions, the steepest rise of the ground
// within a few dozen cells, as the sine of the horizon's elevation.
fn sky_seen(c: i32, r: i32, y: f32) -> f32 {
    var blocked = 0.0;
    let start = vec2<f32>(f32(c) + 0.5, f32(r) + 0.5);
    for (var d = 0; d < 8; d = d + 1) {
        let a = f32(d) * 0.78539816; // pi / 4
        let step = vec2<f32>(cos(a), sin(a));
        var horizon = 0.0;
        var dist = 1.0;
        for (var i = 0; i < 6; i = i + 1) {
            let p = start + step * dist;
            let metres = dist * length(step * vec2<f32>(k.cell.x, k.cell.y));
            let tangent = (ground_at(p) - y) / metres;
            horizon = max(horizon, tangent / sqrt(1.0 + tangent * tangent));
            dist = dist * 2.0;
        }
        blocked = blocked + horizon;
    }
    return clamp(1.0 - blocked / 8.0, 0.0, 1.0);
}

@compute @workgroup_size(64)
fn shade(@builtin(global_invocation_id) id: vec3<u32>) {
    let vi = id.x + id.y * 64u * 1024u;
    if (vi >= k.count.y) {
        return;
    }
    let per_row = k.dims.w;
    let stride = i32(k.dims.z);
    let c = min(i32(vi % per_row) * stride, i32(k.dims.x) - 1);
    let r = min(i32(vi / per_row) * stride, i32(k.dims.y) - 1);
    let i = cell_index(c, r);
    let ground = terrain[i] * k.cell.z;
    let surface = (terrain[i] + water[i]) * k.cell.z;
    shade_out[vi] = vec4<f32>(sunlit(c, r, ground), sky_seen(c, r, ground), sunlit(c, r, surface), 1.0);
}
