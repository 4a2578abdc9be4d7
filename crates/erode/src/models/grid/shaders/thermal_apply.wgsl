// Stage 7, `thermal_apply` (CPU twin: thermal.rs `thermal_apply`): each cell gains what its
// neighbours send and loses what it sends, every move recomputed from the terrain before
// erosion (`terrain`), added to the terrain after erosion (`terrain_next`).

struct ThermalUniforms {
    width: u32,
    height: u32,
    border: u32,
    pad0: u32,
    distance: array<vec4<f32>, 2>,
    rate: f32,
    talus_scale: f32,
    talus_bias: f32,
    pad1: f32,
}

@group(0) @binding(0) var<uniform> u: ThermalUniforms;
@group(0) @binding(1) var<storage, read> terrain: array<f32>;
@group(0) @binding(2) var<storage, read> thermal_share: array<f32>;
@group(0) @binding(3) var<storage, read> talus: array<f32>;
@group(0) @binding(4) var<storage, read_write> terrain_next: array<f32>;

const DR = array<i32, 8>(0, 0, 1, -1, 1, -1, 1, -1);
const DC = array<i32, 8>(1, -1, 0, 0, 1, -1, -1, 1);

fn pick(a: array<vec4<f32>, 2>, e: u32) -> f32 {
    return a[e / 4u][e % 4u];
}

fn neighbour(r: i32, c: i32, e: u32) -> i32 {
    let h = i32(u.height);
    let w = i32(u.width);
    var rr = r + DR[e];
    var cc = c + DC[e];
    if (u.border == 2u) {
        rr = (rr % h + h) % h;
        cc = (cc % w + w) % w;
    } else if (rr < 0 || rr >= h || cc < 0 || cc >= w) {
        return -1;
    }
    return rr * w + cc;
}

// thermal.rs `steep`: the drop if it is steeper than the talus, else 0
fn steep(drop: f32, t: f32, dist: f32) -> f32 {
    if (drop > 0.0 && drop > t * dist) {
        return drop;
    }
    return 0.0;
}

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
