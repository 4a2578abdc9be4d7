// Books reduced over each workgroup (gpu.rs `Book` numbers them): an invocation adds its cell's
// amounts with `tally_add`, and the stage's end (`tallies_flush`) sums the workgroup's 256 in
// shared memory, in a fixed tree (the same bits every run), and adds the sum to the workgroup's
// compensated (Kahan) accumulator in `tallies`, the sum and its compensation for each book and
// workgroup, which the read-back sums in f64. Per-cell f32 running sums, as the books were kept
// before, cost 4 bytes a cell a book to keep and to stream every iteration, and round each
// cell's small amounts into an ever larger sum.
// The stage declares `tallies: array<vec2<f32>>` at its own binding.

var<private> tally: array<f32, 9>;
var<workgroup> tally_tree: array<array<f32, 9>, 256>;

fn tally_add(book: u32, v: f32) {
    tally[book] += v;
}

// books `first..=last`, for the workgroup `group` of `groups` (workgroups of 16 x 16): one
// tree for all of them (8 barriers), then one invocation per book updates its accumulator
fn tallies_flush(local: u32, group: vec3<u32>, groups: vec3<u32>, first: u32, last: u32) {
    for (var b = first; b <= last; b++) {
        tally_tree[local][b] = tally[b];
    }
    workgroupBarrier();
    for (var s = 128u; s > 0u; s = s >> 1u) {
        if (local < s) {
            for (var b = first; b <= last; b++) {
                tally_tree[local][b] += tally_tree[local + s][b];
            }
        }
        workgroupBarrier();
    }
    let b = first + local;
    if (b <= last) {
        let k = b * groups.x * groups.y + group.y * groups.x + group.x;
        let acc = tallies[k];
        let y = tally_tree[0][b] - acc.y;
        let t = acc.x + y;
        tallies[k] = vec2<f32>(t, (t - acc.x) - y);
    }
}
