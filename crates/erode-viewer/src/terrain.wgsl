// Terrain and water surfaces drawn straight from the simulation's per-cell buffers: a grid of
// vertices (every `stride`-th cell) whose heights the vertex shader reads from storage buffers.
// Colours are encoded for a non-sRGB target (egui shows the texture as gamma-space bytes).

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
    // light direction (towards the light)
    light: vec4<f32>,
};

@group(0) @binding(0) var<uniform> view: View;
@group(0) @binding(1) var<storage, read> terrain: array<f32>;
@group(0) @binding(2) var<storage, read> water: array<f32>;
@group(0) @binding(3) var<storage, read> sediment: array<f32>;
@group(0) @binding(4) var<storage, read> overlay: array<f32>;

struct Out {
    @builtin(position) clip: vec4<f32>,
    @location(0) normal: vec3<f32>,
    @location(1) height: f32,
    @location(2) depth: f32,
    @location(3) cells: vec2<f32>,
    @location(4) overlay_value: f32,
    @location(5) concentration: f32,
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

// overlay colour ramp: dark blue, cyan, yellow, red
fn ramp(t: f32) -> vec3<f32> {
    let a = vec3<f32>(0.05, 0.1, 0.5);
    let b = vec3<f32>(0.1, 0.8, 0.9);
    let c = vec3<f32>(1.0, 0.9, 0.2);
    let d = vec3<f32>(0.9, 0.1, 0.05);
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

@fragment
fn terrain_fs(i: Out) -> @location(0) vec4<f32> {
    let n = normalize(i.normal);
    let t = clamp((i.height - view.range.x) / max(view.range.y - view.range.x, 1e-6), 0.0, 1.0);
    // material: grass low, rock on steep slopes, snow high
    let grass = mix(vec3<f32>(0.22, 0.36, 0.14), vec3<f32>(0.45, 0.42, 0.25), t);
    let rock = vec3<f32>(0.42, 0.38, 0.34);
    let snow = vec3<f32>(0.92, 0.93, 0.95);
    let steep = smoothstep(0.75, 0.55, n.y);
    var albedo = mix(grass, rock, steep);
    albedo = mix(albedo, snow, smoothstep(0.82, 0.95, t) * (1.0 - steep));
    if (view.cell.w > 0.5) {
        let o = clamp((i.overlay_value - view.range.z) / max(view.range.w - view.range.z, 1e-12), 0.0, 1.0);
        albedo = mix(albedo, ramp(o), 0.75);
    }
    let light = normalize(view.light.xyz);
    let lit = albedo * (0.25 + 0.8 * max(dot(n, light), 0.0));
    let ring = brush_ring(i.cells);
    return vec4<f32>(encode(mix(lit, vec3<f32>(1.0, 1.0, 1.0), ring)), 1.0);
}

@fragment
fn water_fs(i: Out) -> @location(0) vec4<f32> {
    if (view.brush.w < 0.5 || i.depth < 5e-3) {
        discard;
    }
    let n = normalize(i.normal);
    let light = normalize(view.light.xyz);
    let clear = vec3<f32>(0.1, 0.35, 0.75);
    let muddy = vec3<f32>(0.45, 0.33, 0.18);
    let colour = mix(clear, muddy, clamp(i.concentration * 20.0, 0.0, 0.85));
    let lit = colour * (0.45 + 0.6 * max(dot(n, light), 0.0));
    let alpha = clamp(0.15 + 1.0 - exp(-i.depth * 3.0), 0.0, 0.9);
    return vec4<f32>(encode(lit), alpha);
}
