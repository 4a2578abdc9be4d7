// The smoothing of a batch's terrain change (CPU twin: droplet/smooth.rs `smooth_change`):
// `change = (1 − share)·Δ + share·blur(Δ)` with Δ = deposited − eroded of the batch and the
// binomial 3 x 3 kernel ([1 2 1]/4 along each axis), whose share that would leave the map stays
// in its cell (or wraps), so the volume is kept. `apply_deltas` adds `change` to the terrain.
// One invocation per cell; it only reads the batch's deltas.

struct SmoothUniforms {
    width: u32,
    height: u32,
    // 1: the map wraps
    wrap: u32,
    // share of the change spread
    share: f32,
    // metres per quantum
    quantum: f32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> u: SmoothUniforms;
@group(0) @binding(1) var<storage, read> eroded_delta: array<i32>;
@group(0) @binding(2) var<storage, read> deposited_delta: array<i32>;
@group(0) @binding(3) var<storage, read_write> change: array<f32>;

fn delta(x: u32, y: u32) -> f32 {
    let i = y * u.width + x;
    return f32(deposited_delta[i] - eroded_delta[i]) * u.quantum;
}

// the neighbour of k along a line of n, or k itself where the kernel's share stays home
fn before(k: u32, n: u32) -> u32 {
    if (k > 0u) { return k - 1u; }
    if (u.wrap == 1u) { return n - 1u; }
    return k;
}

fn after(k: u32, n: u32) -> u32 {
    if (k + 1u < n) { return k + 1u; }
    if (u.wrap == 1u) { return 0u; }
    return k;
}

// [1 2 1]/4 along the row y at column x
fn across(x: u32, y: u32) -> f32 {
    return 0.5 * delta(x, y) + 0.25 * delta(before(x, u.width), y) + 0.25 * delta(after(x, u.width), y);
}

@compute @workgroup_size(256)
fn smooth_change(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x + id.y * 65535u * 256u;
    if (i >= u.width * u.height) {
        return;
    }
    let x = i % u.width;
    let y = i / u.width;
    let blurred = 0.5 * across(x, y) + 0.25 * across(x, before(y, u.height)) + 0.25 * across(x, after(y, u.height));
    change[i] = (1.0 - u.share) * delta(x, y) + u.share * blurred;
}
