// Stage 2, `water_flux` (CPU twin: water.rs `water_flux`): pipe fluxes from the water surface,
// limited so no cell sends more than it holds (Jákó & Tóth eq. 3), and each cell's sediment share for
// transport. One invocation per cell. The signed form writes each cell's limit instead and
// `scale_by_donor` applies it (the donor of a net flux is known only per interface).
// (topology.wgsl and flux_uniforms.wgsl are prepended: gpu.rs)


@group(0) @binding(0) var<uniform> u: FluxUniforms;
@group(0) @binding(1) var<storage, read> terrain: array<f32>;
@group(0) @binding(2) var<storage, read> water: array<f32>;
// one field per pipe, flux_get(e, i) (gpu.rs splits the group across bindings as the device needs)
#fields flux 3 read_write
@group(0) @binding(4) var<storage, read_write> share: array<f32>;
// the signed form's per-cell limit K (a 1-element dummy for one-way pipes)
@group(0) @binding(5) var<storage, read_write> limit: array<f32>;

// One pipe's new flux (water.rs `pipe`).
fn pipe(eta: f32, bed: f32, eta_j: f32, bed_j: f32, f: f32, gain: f32, width: f32) -> f32 {
    let top = max(eta, eta_j);
    let floor_ = max(bed, bed_j);
    let h = min(max(top - floor_, 0.0), u.depth_cap);
    var g = gain;
    if (u.depth_scaled == 1u) {
        g = gain * h;
    }
    var q = f + g * (eta - eta_j);
    let r = u.friction * abs(f);
    if (h > 0.0) {
        q = q - q * r / (width * h * h + r);
    }
    if (u.signed == 1u) {
        return q;
    }
    return max(q, 0.0);
}

@compute @workgroup_size(TILE_X, TILE_Y)
fn water_flux(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= u.width || id.y >= u.height) {
        return;
    }
    let i = id.y * u.width + id.x;
    let bed = terrain[i];
    let d = water[i];
    let eta = bed + d;
    var new_flux = array<f32, 8>(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    var sum = 0.0;
    for (var e = 0u; e < u.pipes; e++) {
        let j = neighbour(i32(id.y), i32(id.x), e);
        var eta_j = 0.0;
        var bed_j = 0.0;
        if (j >= 0) {
            bed_j = terrain[u32(j)];
            eta_j = bed_j + water[u32(j)];
        } else if (u.border == 1u && e < 4u) {
            // the outside of an open edge is dry ground at this cell's level
            eta_j = bed;
            bed_j = bed;
        } else {
            continue;
        }
        new_flux[e] = pipe(eta, bed, eta_j, bed_j, flux_get(e, i), pick(u.gain, e), pick(u.pipe_width, e));
        sum += max(new_flux[e], 0.0);
    }
    // eq. 3: the share of the new outflow the cell can afford
    let held = d * u.volume_per_dt;
    var k = 1.0;
    if (sum > held) {
        k = held / sum;
    }
    if (u.signed == 1u) {
        for (var e = 0u; e < u.pipes; e++) {
            flux_set(e, i, new_flux[e]);
        }
        limit[i] = k;
        return;
    }
    var gross = 0.0;
    for (var e = 0u; e < u.pipes; e++) {
        let f = new_flux[e] * k;
        flux_set(e, i, f);
        gross += max(f, 0.0);
    }
    // water.rs `sediment_share`
    let volume = d * u.area;
    let sent = min(gross * u.dt, volume);
    var s = 0.0;
    if (gross > 0.0 && volume > 0.0) {
        s = (sent / volume) / gross;
    }
    share[i] = s;
}
