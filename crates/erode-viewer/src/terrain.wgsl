// Terrain and water surfaces drawn straight from the simulation's per-cell buffers: a grid of
// vertices (every `stride`-th cell) whose heights the vertex shader reads from storage buffers.
// Colours are encoded for a non-sRGB target (egui shows the texture as gamma-space bytes).
//
// The look: a sun (direction from the view's settings) casting shadows marched over the
// heightmap, a sky lighting what the terrain around leaves open (ambient occlusion from the
// horizon in eight directions; both from the shading pass, shade.wgsl), ground materials by slope, height and water (rock, scree, soil,
// grass, sand, snow) with detail noise fixed to the ground, and water tinted by its depth,
// browner with the sediment it carries, with the sun's glint and the sky's reflection growing
// at grazing angles (Schlick's Fresnel).

struct View {
    view_proj: mat4x4<f32>,
    // width, height (cells), stride (cells per vertex), vertices per row
    dims: vec4<u32>,
    // cell size x, y (m), vertical exaggeration, overlay on (0/1)
    cell: vec4<f32>,
    // lowest and highest terrain (m), overlay low and high
    range: vec4<f32>,
    // brush centre x, y (cells), brush radius (cells; 0 = none), water shown (0/1)
    brush: vec4<f32>,
    // direction towards the sun (x east, y up, z south); w: the look (0 materials, 1 height colours)
    light: vec4<f32>,
    // the camera's position (view space, m); w: the water's clock (s), which runs while the model
    // plays
    eye: vec4<f32>,
};

@group(0) @binding(0) var<uniform> view: View;
@group(0) @binding(1) var<storage, read> terrain: array<f32>;
@group(0) @binding(2) var<storage, read> water: array<f32>;
@group(0) @binding(3) var<storage, read> sediment: array<f32>;
@group(0) @binding(4) var<storage, read> overlay: array<f32>;
// per vertex: sunlit share of the ground, sky seen from it, sunlit share of the water's surface
// (the shading pass of shade.wgsl writes them when the terrain or the sun changes)
@group(0) @binding(5) var<storage, read> shade: array<vec4<f32>>;

struct Out {
    @builtin(position) clip: vec4<f32>,
    @location(0) normal: vec3<f32>,
    @location(1) height: f32,
    @location(2) depth: f32,
    @location(3) cells: vec2<f32>,
    @location(4) overlay_value: f32,
    @location(5) concentration: f32,
    // sunlit share (0 in shadow) and sky seen (ambient occlusion), 0..1
    @location(6) shade: vec2<f32>,
    @location(7) world: vec3<f32>,
    // the water's flow (m/s, x east and z south): down the water surface's slope at a speed
    // from Manning's formula
    @location(8) flow: vec2<f32>,
};

fn cell_index(c: i32, r: i32) -> u32 {
    let w = i32(view.dims.x);
    let h = i32(view.dims.y);
    return u32(clamp(r, 0, h - 1) * w + clamp(c, 0, w - 1));
}

fn surface(c: i32, r: i32, with_water: bool) -> f32 {
    let i = cell_index(c, r);
    var y = terrain[i];
    if (with_water) {
        y = y + water[i];
    }
    return y * view.cell.z;
}

fn vertex(vi: u32, with_water: bool) -> Out {
    let per_row = view.dims.w;
    let stride = i32(view.dims.z);
    let c = min(i32(vi % per_row) * stride, i32(view.dims.x) - 1);
    let r = min(i32(vi / per_row) * stride, i32(view.dims.y) - 1);
    let i = cell_index(c, r);
    let y = surface(c, r, with_water);
    let x = (f32(c) + 0.5 - f32(view.dims.x) * 0.5) * view.cell.x;
    let z = (f32(r) + 0.5 - f32(view.dims.y) * 0.5) * view.cell.y;
    let dx = (surface(c + stride, r, with_water) - surface(c - stride, r, with_water)) / (2.0 * f32(stride) * view.cell.x);
    let dz = (surface(c, r + stride, with_water) - surface(c, r - stride, with_water)) / (2.0 * f32(stride) * view.cell.y);
    var o: Out;
    o.clip = view.view_proj * vec4<f32>(x, y, z, 1.0);
    o.normal = normalize(vec3<f32>(-dx, 1.0, -dz));
    o.height = terrain[i];
    o.depth = water[i];
    o.cells = vec2<f32>(f32(c) + 0.5, f32(r) + 0.5);
    o.overlay_value = overlay[i];
    o.concentration = sediment[i] / max(water[i], 1e-3);
    o.world = vec3<f32>(x, y, z);
    o.flow = vec2<f32>(0.0, 0.0);
    if (with_water) {
        // Manning: v = R^(2/3) S^(1/2) / n, R the depth, n = 0.035 (a natural channel), at most
        // 5 m/s; the slope without the view's exaggeration
        let slope = vec2<f32>(dx, dz) / max(view.cell.z, 1e-6);
        let s = length(slope);
        if (s > 1e-6) {
            let speed = min(pow(max(water[i], 0.0), 2.0 / 3.0) * sqrt(s) / 0.035, 5.0);
            o.flow = -slope / s * speed;
        }
    }
    if (view.light.w < 0.5 && with_water) {
        // the water's surface needs the sun's shadow only
        o.shade = vec2<f32>(shade[vi].z, 1.0);
    } else if (view.light.w < 0.5) {
        o.shade = shade[vi].xy;
    } else {
        o.shade = vec2<f32>(1.0, 1.0);
    }
    return o;
}

@vertex
fn terrain_vs(@builtin(vertex_index) vi: u32) -> Out {
    return vertex(vi, false);
}

@vertex
fn water_vs(@builtin(vertex_index) vi: u32) -> Out {
    return vertex(vi, true);
}

fn encode(linear: vec3<f32>) -> vec3<f32> {
    return pow(clamp(linear, vec3<f32>(0.0), vec3<f32>(1.0)), vec3<f32>(1.0 / 2.2));
}

// overlay colour ramp: its four stops (dark blue, cyan, yellow, red) are render.rs's
// OVERLAY_RAMP, written in where `RAMP_STOPS` stands when the module is made (the legend draws
// the same)
fn ramp(t: f32) -> vec3<f32> {
    RAMP_STOPS
    let s = clamp(t, 0.0, 1.0) * 3.0;
    if (s < 1.0) { return mix(a, b, s); }
    if (s < 2.0) { return mix(b, c, s - 1.0); }
    return mix(c, d, s - 2.0);
}

fn brush_ring(cells: vec2<f32>) -> f32 {
    if (view.brush.z <= 0.0) {
        return 0.0;
    }
    let d = distance(cells, view.brush.xy);
    let width = max(view.brush.z * 0.06, 0.6);
    return 1.0 - smoothstep(0.0, width, abs(d - view.brush.z));
}

// Value noise in 0..1 on a lattice of unit spacing.
fn hash2(p: vec2<f32>) -> f32 {
    let q = fract(p * vec2<f32>(0.1031, 0.1030));
    let r = q + dot(q, q.yx + 33.33);
    return fract((r.x + r.y) * r.x);
}

fn noise(p: vec2<f32>) -> f32 {
    let i = floor(p);
    let f = fract(p);
    let u = f * f * (3.0 - 2.0 * f);
    let a = hash2(i);
    let b = hash2(i + vec2<f32>(1.0, 0.0));
    let c = hash2(i + vec2<f32>(0.0, 1.0));
    let d = hash2(i + vec2<f32>(1.0, 1.0));
    return mix(mix(a, b, u.x), mix(c, d, u.x), u.y);
}

// Sunlight, sky light (bluish, from above) and the ground's bounce (warm, from below).
const SUN: vec3<f32> = vec3<f32>(1.0, 0.95, 0.86);
const SKY: vec3<f32> = vec3<f32>(0.42, 0.52, 0.68);
const BOUNCE: vec3<f32> = vec3<f32>(0.16, 0.13, 0.10);

// The ground's colour at a point: rock on steep faces, scree below them, soil and grass on
// gentle ground (drier and browner high up), sand and wet soil where water lies or just left,
// snow on high gentle ground; detail noise at two scales fixed to the ground.
fn material(n: vec3<f32>, t: f32, depth: f32, cells: vec2<f32>, world: vec3<f32>) -> vec3<f32> {
    let metres = world.xz;
    let fine = noise(metres * 0.35) * 0.6 + noise(metres * 1.7) * 0.4;
    let broad = noise(cells * 0.045);
    let grass = mix(vec3<f32>(0.17, 0.27, 0.09), vec3<f32>(0.36, 0.36, 0.18), clamp(t * 1.2 + broad * 0.3 - 0.15, 0.0, 1.0));
    let soil = vec3<f32>(0.33, 0.26, 0.18);
    let rock = mix(vec3<f32>(0.3, 0.28, 0.26), vec3<f32>(0.42, 0.39, 0.35), broad);
    let scree = vec3<f32>(0.38, 0.35, 0.31);
    let sand = vec3<f32>(0.6, 0.53, 0.38);
    let snow = vec3<f32>(0.9, 0.92, 0.95);
    let slope = 1.0 - n.y;
    var albedo = mix(grass, soil, smoothstep(0.35, 0.75, fine + broad * 0.3) * 0.5);
    albedo = mix(albedo, scree, smoothstep(0.08, 0.16, slope + (fine - 0.5) * 0.04));
    albedo = mix(albedo, rock, smoothstep(0.18, 0.3, slope + (fine - 0.5) * 0.05));
    // water: sand under shallow water and along it, darker while wet
    let wet = smoothstep(0.0, 0.02, depth);
    albedo = mix(albedo, sand, wet * smoothstep(0.25, 0.05, slope));
    albedo = albedo * (1.0 - 0.35 * wet);
    // snow on the high ground of a range (none on hills of a few dozen metres)
    let relief = (view.range.y - view.range.x) * view.cell.z;
    let snowy = smoothstep(300.0, 1200.0, relief);
    albedo = mix(albedo, snow, snowy * smoothstep(0.8, 0.92, t + (broad - 0.5) * 0.08) * smoothstep(0.35, 0.2, slope));
    return albedo * (0.82 + 0.36 * fine);
}

// The original look: one colour ramp by height, rock on steep slopes.
fn height_colours(n: vec3<f32>, t: f32) -> vec3<f32> {
    let grass = mix(vec3<f32>(0.22, 0.36, 0.14), vec3<f32>(0.45, 0.42, 0.25), t);
    let rock = vec3<f32>(0.42, 0.38, 0.34);
    let snow = vec3<f32>(0.92, 0.93, 0.95);
    let steep = smoothstep(0.75, 0.55, n.y);
    var albedo = mix(grass, rock, steep);
    return mix(albedo, snow, smoothstep(0.82, 0.95, t) * (1.0 - steep));
}

@fragment
fn terrain_fs(i: Out) -> @location(0) vec4<f32> {
    let n = normalize(i.normal);
    let t = clamp((i.height - view.range.x) / max(view.range.y - view.range.x, 1e-6), 0.0, 1.0);
    let light = normalize(view.light.xyz);
    var lit: vec3<f32>;
    if (view.light.w < 0.5) {
        var albedo = material(n, t, i.depth, i.cells, i.world);
        if (view.cell.w > 0.5) {
            let o = clamp((i.overlay_value - view.range.z) / max(view.range.w - view.range.z, 1e-12), 0.0, 1.0);
            albedo = mix(albedo, ramp(o), 0.75);
        }
        let sun = SUN * max(dot(n, light), 0.0) * i.shade.x;
        let sky = SKY * i.shade.y * (0.6 + 0.4 * n.y);
        let bounce = BOUNCE * (1.0 - n.y) * i.shade.y;
        lit = albedo * (sun + 0.85 * sky + bounce);
    } else {
        var albedo = height_colours(n, t);
        if (view.cell.w > 0.5) {
            let o = clamp((i.overlay_value - view.range.z) / max(view.range.w - view.range.z, 1e-12), 0.0, 1.0);
            albedo = mix(albedo, ramp(o), 0.75);
        }
        lit = albedo * (0.25 + 0.8 * max(dot(n, light), 0.0));
    }
    let ring = brush_ring(i.cells);
    return vec4<f32>(encode(mix(lit, vec3<f32>(1.0, 1.0, 1.0), ring)), 1.0);
}

// The height of small ripples at a point (m of ground), two octaves of value noise, and its
// gradient by central differences.
fn ripple(p: vec2<f32>) -> f32 {
    return noise(p * 1.3) * 0.6 + noise(p * 3.1 + vec2<f32>(17.0, 5.0)) * 0.4;
}

fn ripple_gradient(p: vec2<f32>) -> vec2<f32> {
    let e = 0.05;
    return vec2<f32>(
        ripple(p + vec2<f32>(e, 0.0)) - ripple(p - vec2<f32>(e, 0.0)),
        ripple(p + vec2<f32>(0.0, e)) - ripple(p - vec2<f32>(0.0, e)),
    ) / (2.0 * e);
}

// The water's surface normal with ripples carried along its flow (a flow map: two phases of
// the ripple pattern, each advected for one period and restarted, blended so neither restart
// shows). The ripples are a few cells long whatever the cell size (finer ones would only
// glitter at the distances a terrain is seen from). Still water keeps the plain normal.
fn flowing(n: vec3<f32>, world: vec2<f32>, flow: vec2<f32>) -> vec3<f32> {
    let speed = length(flow);
    let strength = 0.2 * smoothstep(0.05, 0.6, speed);
    if (strength <= 0.0) {
        return n;
    }
    let scale = 0.35 / vec2<f32>(view.cell.x, view.cell.y);
    let p = world * scale;
    let v = flow * scale;
    let period = 1.5;
    let t = view.eye.w / period;
    let a = fract(t);
    let b = fract(t + 0.5);
    let g = mix(ripple_gradient(p - v * a * period), ripple_gradient(p - v * b * period), abs(0.5 - a) * 2.0);
    return normalize(n + vec3<f32>(-g.x, 0.0, -g.y) * strength);
}

@fragment
fn water_fs(i: Out) -> @location(0) vec4<f32> {
    if (view.brush.w < 0.5 || i.depth < 5e-3) {
        discard;
    }
    var n = normalize(i.normal);
    let light = normalize(view.light.xyz);
    if (view.light.w > 0.5) {
        let clear = vec3<f32>(0.1, 0.35, 0.75);
        let muddy = vec3<f32>(0.45, 0.33, 0.18);
        let colour = mix(clear, muddy, clamp(i.concentration * 20.0, 0.0, 0.85));
        let lit = colour * (0.45 + 0.6 * max(dot(n, light), 0.0));
        let alpha = clamp(0.15 + 1.0 - exp(-i.depth * 3.0), 0.0, 0.9);
        return vec4<f32>(encode(lit), alpha);
    }
    let to_eye = normalize(view.eye.xyz - i.world);
    n = flowing(n, i.world.xz, i.flow);
    // the water's body: blue-green, deeper darker, browner with suspended sediment
    let shallow = vec3<f32>(0.12, 0.36, 0.38);
    let deep = vec3<f32>(0.02, 0.09, 0.16);
    var body = mix(shallow, deep, 1.0 - exp(-i.depth * 0.8));
    // sediment tints it, never to the colour of the ground (a river is not a dirt road)
    body = mix(body, vec3<f32>(0.3, 0.25, 0.16), clamp(i.concentration * 8.0, 0.0, 0.45));
    let diffuse = body * (SKY * 0.8 + SUN * max(dot(n, light), 0.0) * i.shade.x * 0.6);
    // the sky's reflection, more at grazing angles, and the sun's glint
    let fresnel = 0.02 + 0.98 * pow(1.0 - max(dot(n, to_eye), 0.0), 5.0);
    let half_way = normalize(light + to_eye);
    let glint = pow(max(dot(n, half_way), 0.0), 120.0) * i.shade.x * 2.5;
    let colour = mix(diffuse, SKY * 1.4, fresnel) + SUN * glint;
    // thin water lets the ground show: opaque within a metre or so
    let alpha = clamp(0.25 + (1.0 - exp(-i.depth * 2.5)) + fresnel * 0.5, 0.0, 0.95);
    return vec4<f32>(encode(colour), alpha);
}
