// The books' totals (CPU twin: the CPU sums each pass's amounts in f64, state.rs `Books`): the
// per-cell books of water and soil (not the eroded and deposited maps) gather a few iterations
// in f32, then this adds them, cell by cell, into compensated f32 pairs (hi + lo, Knuth's
// two-sum), one per book and workgroup, and zeroes them. A per-cell f32 adding the same small
// amount every iteration drifts (every cell rounds alike under uniform rain); a partial of a
// few iterations does not, and the pairs carry ~48 bits.

struct FlushUniforms {
    cells: u32,
    // which of the books (see gpu.rs `Book`) are totals: bit b for book b
    totals: u32,
    // 0 (see `rounded`)
    zero: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> u: FlushUniforms;
#fields books 1 read_write
// per workgroup, per book of the nine, (hi, lo)
@group(0) @binding(2) var<storage, read_write> sums: array<f32>;

const BOOKS: u32 = 9u;

// `x` as rounded, hidden from the compiler's algebra: SPIR-V lets a driver reassociate and fuse
// float operations unless told not to (naga does not), which may turn `(d + r) - d` into `r` and
// turn two-sum's error term into 0; the XOR with a uniform 0 it cannot see through
// keeps the rounded value, so a book is the difference of what is stored.
fn rounded(x: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(x) ^ u.zero);
}

// (s, e) with s + e == a + b exactly (Knuth's two-sum; each step as rounded)
fn two_sum(a: f32, b: f32) -> vec2<f32> {
    let s = rounded(a + b);
    let bb = rounded(s - a);
    let e = rounded(a - rounded(s - bb)) + rounded(b - bb);
    return vec2<f32>(s, e);
}

// (hi, lo) + (hi, lo)
fn add_pair(p: vec2<f32>, q: vec2<f32>) -> vec2<f32> {
    let t = two_sum(p.x, q.x);
    return two_sum(t.x, t.y + p.y + q.y);
}

var<workgroup> partial: array<vec2<f32>, 256>;

@compute @workgroup_size(256)
fn flush_books(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let stride = groups.x * 256u;
    for (var b = 0u; b < BOOKS; b++) {
        if ((u.totals & (1u << b)) == 0u) {
            continue;
        }
        var own = vec2<f32>(0.0, 0.0);
        for (var i = id.x; i < u.cells; i += stride) {
            own = add_pair(own, vec2<f32>(books_get(b, i), 0.0));
            books_set(b, i, 0.0);
        }
        partial[lane] = own;
        workgroupBarrier();
        for (var half = 128u; half > 0u; half = half / 2u) {
            if (lane < half) {
                partial[lane] = add_pair(partial[lane], partial[lane + half]);
            }
            workgroupBarrier();
        }
        if (lane == 0u) {
            let at = (group.x * BOOKS + b) * 2u;
            let total = add_pair(vec2<f32>(sums[at], sums[at + 1u]), partial[0]);
            sums[at] = total.x;
            sums[at + 1u] = total.y;
        }
        workgroupBarrier();
    }
}
