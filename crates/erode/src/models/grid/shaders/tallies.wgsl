// Books reduced over each workgroup (gpu.rs `Book` numbers them): an invocation adds its cell's
// amounts with `tally_add`, and the stage's end (`tallies_flush`) sums the workgroup's 256 in
// shared memory, in a fixed tree (the same bits every run), and adds the sum to the workgroup's
// compensated (Kahan) accumulator in `tallies`, the sum and its compensation for each book and
// workgroup, which the read-back sums in f64. A per-cell f32 running sum, as the books were
// kept before, rounds a cell's tiny rain at every one of thousands of iterations the same way
// and drifts (3.2e-4 of the books after 20,000 iterations at 1024² on an H200).
// The stage declares `tallies: array<vec2<f32>>` at its own binding.

var<private> tally: array<f32, 9>;
var<workgroup> tally_tree: array<f32, 256>;

fn tally_add(book: u32, v: f32) {
    tally[book] += v;
}

// books `first..=last`, for the workgroup `group` of `groups` (workgroups of 16 x 16)
fn tallies_flush(local: u32, group: vec3<u32>, groups: vec3<u32>, first: u32, last: u32) {
    let count = groups.x * groups.y;
    let wg = group.y * groups.x + group.x;
    for (var b = first; b <= last; b++) {
        tally_tree[local] = tally[b];
        workgroupBarrier();
        for (var s = 128u; s > 0u; s = s >> 1u) {
            if (local < s) {
                tally_tree[local] += tally_tree[local + s];
            }
            workgroupBarrier();
        }
        if (local == 0u) {
            let k = b * count + wg;
            let acc = tallies[k];
            let y = tally_tree[0] - acc.y;
            let t = acc.x + y;
            tallies[k] = vec2<f32>(t, (t - acc.x) - y);
        }
        workgroupBarrier();
    }
}
