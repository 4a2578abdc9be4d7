// The end of a GPU droplet batch (no CPU twin: the CPU changes the terrain in place): each
// cell's erosion, deposition and outflow, summed in integer quanta by the batch's `life`
// invocations, added to the eroded and deposited maps and to the books, then cleared for the
// next batch; the terrain takes the batch's change as `smooth_change` spread it. Batch by batch, so a run stopped at a batch and resumed adds the
// same f32s in the same order. The books are 64-bit per cell (low and high words), so no cell
// overflows however long the run. One invocation per cell.

struct ApplyUniforms {
    cells: u32,
    pad0: u32,
    pad1: u32,
    // metres per quantum
    quantum: f32,
}

@group(0) @binding(0) var<uniform> u: ApplyUniforms;
@group(0) @binding(1) var<storage, read_write> terrain: array<f32>;
@group(0) @binding(2) var<storage, read_write> eroded_delta: array<i32>;
@group(0) @binding(3) var<storage, read_write> deposited_delta: array<i32>;
@group(0) @binding(4) var<storage, read_write> eroded: array<f32>;
@group(0) @binding(5) var<storage, read_write> deposited: array<f32>;
@group(0) @binding(6) var<storage, read_write> outflow_delta: array<i32>;
// eroded, deposited, outflow quanta per cell as (low, high) words: cell i, book k at 2·(k·n + i)
@group(0) @binding(7) var<storage, read_write> books: array<u32>;
// the batch's terrain change, m (smooth_change)
@group(0) @binding(8) var<storage, read> change: array<f32>;

// adds a non-negative `q` to the 64-bit book `k` of cell `i`
fn book(k: u32, i: u32, q: i32) {
    let at = 2u * (k * u.cells + i);
    let low = books[at] + u32(q);
    if (low < books[at]) {
        books[at + 1u] = books[at + 1u] + 1u;
    }
    books[at] = low;
}

@compute @workgroup_size(256)
fn apply_deltas(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x + id.y * 65535u * 256u;
    if (i >= u.cells) {
        return;
    }
    let taken = eroded_delta[i];
    let given = deposited_delta[i];
    let left = outflow_delta[i];
    let moved = change[i];
    if (moved != 0.0) {
        terrain[i] = terrain[i] + moved;
    }
    if (taken != 0 || given != 0) {
        eroded[i] = eroded[i] + f32(taken) * u.quantum;
        deposited[i] = deposited[i] + f32(given) * u.quantum;
        book(0u, i, taken);
        book(1u, i, given);
        eroded_delta[i] = 0;
        deposited_delta[i] = 0;
    }
    if (left != 0) {
        book(2u, i, left);
        outflow_delta[i] = 0;
    }
}
