// Stages 3, 5 and 8 as one pass, `update_and_erode` (CPU twin: fused.rs `update_and_erode`):
// depth and velocity from the net flow (Jákó & Tóth eqs. 5-7), capacity, dissolving or deposition with
// hardness and softening (eqs. 8-11), then evaporation (eq. 13). One invocation per cell; the
// terrain after erosion goes to `terrain_next` (gradients read the terrain before it).
// (topology.wgsl is prepended: gpu.rs)

struct UpdateUniforms {
    width: u32,
    height: u32,
    pipes: u32,
    // 0 closed, 1 open, 2 wrap
    border: u32,
    // 0 mei (Jákó & Tóth), 1 sine (McLeod et al.), 2 shear
    capacity_model: u32,
    // 1: the signed form (the flux is already the net flow out)
    signed: u32,
    pad1: u32,
    pad2: u32,
    unit_x: array<vec4<f32>, 2>,
    unit_y: array<vec4<f32>, 2>,
    dt: f32,
    inv_area: f32,
    inv_lx: f32,
    inv_ly: f32,
    velocity_epsilon: f32,
    inv2x: f32,
    inv2y: f32,
    evaporate: f32,
    dissolve: f32,
    deposit: f32,
    softening: f32,
    capacity: f32,
    min_tilt: f32,
    per_max_depth: f32,
    // 1 - rock_erodibility: hardness is resistance
    erodibility_loss: f32,
    floor_height: f32,
    cf_over_g: f32,
    critical_shear: f32,
    water_per_soil: f32,
    bed_step: f32,
    bed_unlimited: f32,
    // the deepest water the bed change limit counts, m (params.rs `max_flow_depth`)
    depth_cap: f32,
    // 1 with a sediment layer (deposits join it), 0 without
    layer: f32,
    // 0 (see `rounded`)
    zero: u32,
}

@group(0) @binding(0) var<uniform> u: UpdateUniforms;
@group(0) @binding(1) var<storage, read> terrain: array<f32>;
#fields flux 2 read
@group(0) @binding(3) var<storage, read_write> terrain_next: array<f32>;
@group(0) @binding(4) var<storage, read_write> water: array<f32>;
// velocity x, velocity y, discharge integral: fields 0, 1, 2
#fields velocity 5 read_write
@group(0) @binding(6) var<storage, read_write> sediment: array<f32>;
// hardness (field 0), then the sediment layer's depth (field 1)
#fields ground 7 read_write
// the books per cell (see gpu.rs `Book`): this stage adds eroded (2), deposited (3), evaporated
// (4), water removed by deposition (5), water leaving open edges (6, m³) and water added by
// dissolving (8)
#fields books 8 read_write

// `x` as rounded, hidden from the compiler's algebra: SPIR-V lets a driver reassociate and fuse
// float operations unless told not to (naga does not), which may turn `(d + r) - d` into `r` and
// book rain a cell's depth was too deep to keep; the XOR with a uniform 0 it cannot see through
// keeps the rounded value, so a book is the difference of what is stored.
fn rounded(x: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(x) ^ u.zero);
}

// erosion.rs `capacity`
fn capacity(bx: f32, by: f32, vx: f32, vy: f32, d: f32) -> f32 {
    let speed = sqrt(vx * vx + vy * vy);
    let norm = sqrt(1.0 + bx * bx + by * by);
    var cap = 0.0;
    if (u.capacity_model == 0u) {
        let along = max(-(bx * vx + by * vy) / (speed * norm), u.min_tilt);
        let lmax = clamp(1.0 - d * u.per_max_depth, 0.0, 1.0);
        cap = u.capacity * along * speed * lmax;
    } else if (u.capacity_model == 1u) {
        let tilt = max(sqrt(bx * bx + by * by) / norm, u.min_tilt);
        cap = u.capacity * tilt * speed * min(d, 1.0);
    } else {
        // excess bed shear over rho·g from the friction law
        cap = u.capacity * max(u.cf_over_g * speed * speed - u.critical_shear, 0.0);
    }
    if (speed > 0.0) {
        return cap;
    }
    return 0.0;
}

@compute @workgroup_size(TILE_X, TILE_Y)
fn update_and_erode(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= u.width || id.y >= u.height) {
        return;
    }
    let r = i32(id.y);
    let c = i32(id.x);
    let i = id.y * u.width + id.x;
    // water.rs `update_cell`: net outflow per pipe
    var net = 0.0;
    var wx = 0.0;
    var wy = 0.0;
    var outflow = 0.0;
    for (var e = 0u; e < u.pipes; e++) {
        let j = neighbour(r, c, e);
        var back = 0.0;
        if (j >= 0) {
            if (u.signed == 0u) {
                back = flux_get(e ^ 1u, u32(j));
            }
        } else if (u.border == 1u && e < 4u) {
            outflow += max(flux_get(e, i), 0.0) * u.dt;
        }
        let q = flux_get(e, i) - back;
        net += q;
        wx += q * pick(u.unit_x, e);
        wy += q * pick(u.unit_y, e);
    }
    let d1 = water[i];
    let d2 = rounded(max(d1 - u.dt * net * u.inv_area, 0.0));
    wx = 0.5 * wx;
    wy = 0.5 * wy;
    let mean = 0.5 * (d1 + d2);
    var vx = 0.0;
    var vy = 0.0;
    if (mean > u.velocity_epsilon) {
        vx = wx * (1.0 / mean) * u.inv_ly;
        vy = wy * (1.0 / mean) * u.inv_lx;
    }
    velocity_add(2u, i, sqrt(wx * wx + wy * wy) * u.dt);
    velocity_set(0u, i, vx);
    velocity_set(1u, i, vy);
    // erosion.rs `erode_cell`
    let bx = (terrain[clamped(r, c + 1)] - terrain[clamped(r, c - 1)]) * u.inv2x;
    let by = (terrain[clamped(r + 1, c)] - terrain[clamped(r - 1, c)]) * u.inv2y;
    let b = terrain[i];
    let s = sediment[i];
    let hard = ground_get(0u, i);
    let loose = ground_get(1u, i);
    let cap = capacity(bx, by, vx, vy, d2);
    var b_new = b;
    var s_new = s;
    var d_new = d2;
    // the bed moves at most `bed_change_limit·d` per sub-step (d at most `max_flow_depth`)
    let most = u.bed_step * min(d2, u.depth_cap) + u.bed_unlimited;
    if (cap > s) {
        // the flow's pull within the limit: loose material first, all of it, then bedrock,
        // whose hardness is resistance: it yields its erodibility's share (1 at hardness 0,
        // rock_erodibility at 1)
        let pull = min(u.dt * u.dissolve * (cap - s), most);
        let from_loose = min(pull, loose);
        let want = from_loose + (1.0 - hard * u.erodibility_loss) * (pull - from_loose);
        let dissolved = min(want, max(b - u.floor_height, 0.0));
        ground_set(1u, i, max(loose - dissolved, 0.0));
        b_new = b - dissolved;
        s_new = s + dissolved;
        // the books take what the depth gained, not the product (rounding may lose it)
        d_new = rounded(d2 + dissolved * u.water_per_soil);
        books_add(2u, i, dissolved);
        books_add(8u, i, d_new - d2);
    } else {
        let deposited = min(min(u.dt * u.deposit * (s - cap), s), most);
        b_new = b + deposited;
        s_new = s - deposited;
        let water_out = min(deposited * u.water_per_soil, d2);
        d_new = rounded(d2 - water_out);
        books_add(5u, i, d2 - d_new);
        // softening: fresh deposits are looser
        ground_set(0u, i, max(hard - u.softening * deposited, 0.0));
        ground_set(1u, i, loose + u.layer * deposited);
        books_add(3u, i, deposited);
    }
    terrain_next[i] = b_new;
    sediment[i] = s_new;
    // evaporation (eq. 13) as a difference, so the book is the depth lost however the
    // multiply-add rounds
    let kept = rounded(d_new - d_new * u.evaporate);
    water[i] = kept;
    books_add(4u, i, d_new - kept);
    books_add(6u, i, outflow);
}
