// The iteration's time step from the deepest water, on the GPU (CPU twin: derived.rs
// `Params::derived`, which rounds the deepest water up to its rung of the depth ladder): the rung
// of `deepest` (max_depth's f32 bits) picks a row of `table`, the uniforms of every stage as the
// CPU derived them for that rung's depth, and this copies them into the stages' uniform buffers.
// So an iteration is encoded without reading the depth back. `tally` keeps the last row taken
// (element 0) and how many iterations took each row (element 1 + row), for the simulated time.

struct StepUniforms {
    // the first and last rung of the table
    lowest: u32,
    highest: u32,
    // low mantissa bits a rung drops
    shift: u32,
    // words of one row
    row: u32,
    // words of each stage's uniforms, in row order
    increment: u32,
    flux: u32,
    update: u32,
    thermal: u32,
}

@group(0) @binding(0) var<uniform> u: StepUniforms;
@group(0) @binding(1) var<storage, read> deepest: array<u32>;
@group(0) @binding(2) var<storage, read> table: array<u32>;
@group(0) @binding(3) var<storage, read_write> increment: array<u32>;
@group(0) @binding(4) var<storage, read_write> flux: array<u32>;
@group(0) @binding(5) var<storage, read_write> update: array<u32>;
@group(0) @binding(6) var<storage, read_write> thermal: array<u32>;
@group(0) @binding(7) var<storage, read_write> tally: array<u32>;

@compute @workgroup_size(64)
fn time_step(@builtin(local_invocation_index) lane: u32) {
    let bits = deepest[0];
    let mask = (1u << u.shift) - 1u;
    let above = (bits >> u.shift) + select(0u, 1u, (bits & mask) != 0u);
    let row = clamp(above, u.lowest, u.highest) - u.lowest;
    var at = row * u.row;
    for (var w = lane; w < u.increment; w += 64u) {
        increment[w] = table[at + w];
    }
    at += u.increment;
    for (var w = lane; w < u.flux; w += 64u) {
        flux[w] = table[at + w];
    }
    at += u.flux;
    for (var w = lane; w < u.update; w += 64u) {
        update[w] = table[at + w];
    }
    at += u.update;
    for (var w = lane; w < u.thermal; w += 64u) {
        thermal[w] = table[at + w];
    }
    if (lane == 0u) {
        tally[0] = row;
        tally[1u + row] += 1u;
    }
}
