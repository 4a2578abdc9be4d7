// One droplet's life per invocation (CPU twin: droplet/cpu.rs `life`), for a batch of droplets
// that all read the terrain as it was at the batch start and add their changes as integer
// quanta with atomics: integer adds commute, so the result does not depend on the order the GPU
// runs them in. `apply_deltas` then adds the batch's changes to the terrain.
// Differences from the CPU: f32 arithmetic, a 32-bit random stream per droplet, quanta of
// `quantum` metres (2^-20 m), and droplets of one batch do not see each other's changes. A
// droplet sees its own recent ones (its last `events` erosions and deposits, kept in a ring and
// added to the heights it samples, without the floor and quantum rounding); without them a
// droplet keeps digging where the CPU's would have levelled the ground, and runs erode many
// times more.

struct LifeUniforms {
    width: u32,
    height: u32,
    // 0 open, 1 closed, 2 wrap
    border: u32,
    // first droplet index of the batch (low 32 bits) and droplets in it
    first: u32,
    count: u32,
    seed_lo: u32,
    seed_hi: u32,
    max_lifetime: u32,
    has_hardness: u32,
    has_spawn: u32,
    // own changes a droplet remembers (<= 32)
    events: u32,
    pad0: u32,
    // share of its heading kept against the gradient per step
    inertia: f32,
    // capacity per metre of drop over a step, per unit speed and water
    capacity: f32,
    // smallest drop over a step used in the capacity, m
    min_drop: f32,
    deposition: f32,
    erosion: f32,
    gravity: f32,
    evaporation: f32,
    // brush radius, cells
    radius: f32,
    // share of speed² kept against friction per step
    speed_kept: f32,
    initial_speed: f32,
    // erosion never digs below this height, m
    floor: f32,
    // metres per quantum
    quantum: f32,
    // drainage area per visit after one droplet, over discharge_area (0: off); a droplet
    // divides it by its index, at least a quarter of the cells (cpu.rs `life`)
    visit_area: f32,
    // capacity × (1 + area)^discharge_exponent
    discharge_exponent: f32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> u: LifeUniforms;
@group(0) @binding(1) var<storage, read> terrain: array<f32>;
// each cell's share of the erosion it yields, from the hardness map (cpu.rs `erodibility`)
@group(0) @binding(2) var<storage, read> erodibility: array<f32>;
// cumulative rain per cell (has_spawn)
@group(0) @binding(3) var<storage, read> spawn: array<f32>;
// this batch's erosion per cell, quanta
@group(0) @binding(4) var<storage, read_write> eroded_delta: array<atomic<i32>>;
// this batch's sediment carried off the map per cell (the droplet's last cell), quanta
@group(0) @binding(5) var<storage, read_write> outflow_delta: array<atomic<i32>>;
// droplet visits per cell
@group(0) @binding(6) var<storage, read_write> flow: array<atomic<u32>>;
// this batch's deposition per cell, quanta
@group(0) @binding(7) var<storage, read_write> deposited_delta: array<atomic<i32>>;
// droplet visits per cell as the batch started (the discharge droplets read)
@group(0) @binding(8) var<storage, read> visits_before: array<u32>;
// the ground one cell beyond the edge, fixed (state.rs `beyond_edge`): row −1, row h (columns
// −1..=w each), column −1, column w (rows 0..h each)
@group(0) @binding(9) var<storage, read> beyond: array<f32>;

const TAU: f32 = 6.28318530717958647692;
const MAX_EVENTS: u32 = 32u;
// most quanta a droplet carries
const MAX_LOAD: i32 = 1073741824;

// the droplet's own recent changes: a brush erosion (kind 0: metres per unit weight around the
// position) or a bilinear change (kind 1: metres, + deposit, − erosion at radius 0)
var<private> event_at: array<vec2<f32>, 32>;
var<private> event_amount: array<f32, 32>;
var<private> event_kind: array<u32, 32>;
var<private> events_seen: u32;

fn remember(at: vec2<f32>, amount: f32, kind: u32) {
    if (u.events == 0u) {
        return;
    }
    // a droplet that lingers (in a pit, on flat ground) changes the same few places again and
    // again: a change within half a cell of a remembered one of its kind adds to it, so the
    // ring keeps all of it instead of forgetting the oldest
    let n = min(events_seen, u.events);
    for (var j = 0u; j < n; j++) {
        if (event_kind[j] == kind && distance(event_at[j], at) < 0.5) {
            event_amount[j] += amount;
            return;
        }
    }
    let k = events_seen % u.events;
    event_at[k] = at;
    event_amount[k] = amount;
    event_kind[k] = kind;
    events_seen += 1u;
}

fn bilinear_weight(ix: i32, iy: i32, at: vec2<f32>) -> f32 {
    let fx = floor(at.x);
    let fy = floor(at.y);
    let fu = at.x - fx;
    let fv = at.y - fy;
    let dx = ix - i32(fx);
    let dy = iy - i32(fy);
    var wx = 0.0;
    if (dx == 0) { wx = 1.0 - fu; } else if (dx == 1) { wx = fu; }
    var wy = 0.0;
    if (dy == 0) { wy = 1.0 - fv; } else if (dy == 1) { wy = fv; }
    return wx * wy;
}

// the droplet's own change at cell (ix, iy), m
fn own(ix: i32, iy: i32) -> f32 {
    var change = 0.0;
    let n = min(events_seen, u.events);
    for (var k = 0u; k < n; k++) {
        if (event_kind[k] == 0u) {
            let d = distance(vec2<f32>(f32(ix), f32(iy)), event_at[k]);
            change -= event_amount[k] * max(u.radius - d, 0.0) * cell_erodibility(cell_index(ix, iy));
        } else {
            change += event_amount[k] * bilinear_weight(ix, iy, event_at[k]);
        }
    }
    return change;
}

// PCG-style 32-bit stream
fn next_u32(state: ptr<function, u32>) -> u32 {
    *state = *state * 747796405u + 2891336453u;
    let s = *state;
    let word = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
    return (word >> 22u) ^ word;
}

fn next_f32(state: ptr<function, u32>) -> f32 {
    return f32(next_u32(state) >> 8u) / 16777216.0;
}

fn mix32(x: u32) -> u32 {
    var h = x;
    h = h ^ (h >> 16u);
    h = h * 0x7feb352du;
    h = h ^ (h >> 15u);
    h = h * 0x846ca68bu;
    h = h ^ (h >> 16u);
    return h;
}

fn cell_index(x: i32, y: i32) -> u32 {
    let w = i32(u.width);
    let h = i32(u.height);
    var cx = x;
    var cy = y;
    if (u.border == 2u) {
        cx = ((x % w) + w) % w;
        cy = ((y % h) + h) % h;
    } else {
        cx = clamp(x, 0, w - 1);
        cy = clamp(y, 0, h - 1);
    }
    return u32(cy) * u.width + u32(cx);
}

// the height at cell (x, y) as a droplet sees it: the terrain and its own recent changes, or,
// one cell beyond an open edge, the ground there (cpu.rs `Map::sample_beyond`)
fn ground(x: i32, y: i32) -> f32 {
    let w = i32(u.width);
    let h = i32(u.height);
    if (u.border == 0u && (x < 0 || y < 0 || x >= w || y >= h)) {
        let row = u.width + 2u;
        if (y < 0) {
            return beyond[u32(x + 1)];
        }
        if (y >= h) {
            return beyond[row + u32(x + 1)];
        }
        if (x < 0) {
            return beyond[2u * row + u32(y)];
        }
        return beyond[2u * row + u.height + u32(y)];
    }
    return terrain[cell_index(x, y)] + own(x, y);
}

struct Sample {
    height: f32,
    gx: f32,
    gy: f32,
}

fn sample(x: f32, y: f32) -> Sample {
    let ix = i32(floor(x));
    let iy = i32(floor(y));
    let fu = x - f32(ix);
    let fv = y - f32(iy);
    let h00 = ground(ix, iy);
    let h10 = ground(ix + 1, iy);
    let h01 = ground(ix, iy + 1);
    let h11 = ground(ix + 1, iy + 1);
    var s: Sample;
    s.gx = (h10 - h00) * (1.0 - fv) + (h11 - h01) * fv;
    s.gy = (h01 - h00) * (1.0 - fu) + (h11 - h10) * fu;
    s.height = h00 * (1.0 - fu) * (1.0 - fv) + h10 * fu * (1.0 - fv) + h01 * (1.0 - fu) * fv + h11 * fu * fv;
    return s;
}

fn cell_erodibility(i: u32) -> f32 {
    if (u.has_hardness == 1u) {
        return erodibility[i];
    }
    return 1.0;
}

// quanta cell `i` yields for `want` metres (cpu.rs `share`)
fn share(want: f32, i: u32) -> i32 {
    let above = terrain[i] - u.floor;
    let can = clamp(min(want * cell_erodibility(i), above), 0.0, 1000.0);
    return i32(floor(can / u.quantum));
}

fn take(i: u32, q: i32) {
    atomicAdd(&eroded_delta[i], q);
}

fn give(i: u32, q: i32) {
    atomicAdd(&deposited_delta[i], q);
}

// the 4 cells around (x, y) and their bilinear weights (cpu.rs `Map::corners`)
struct Corners {
    cells: array<u32, 4>,
    weights: array<f32, 4>,
}

fn corners(x: f32, y: f32) -> Corners {
    let ix = i32(floor(x));
    let iy = i32(floor(y));
    let fu = x - f32(ix);
    let fv = y - f32(iy);
    var c: Corners;
    c.cells = array<u32, 4>(cell_index(ix, iy), cell_index(ix + 1, iy), cell_index(ix, iy + 1), cell_index(ix + 1, iy + 1));
    c.weights = array<f32, 4>((1.0 - fu) * (1.0 - fv), fu * (1.0 - fv), (1.0 - fu) * fv, fu * fv);
    return c;
}

// `q` quanta split bilinearly over the 4 corners, the remainder to the last (cpu.rs `deposit`)
fn deposit(x: f32, y: f32, q: i32) {
    if (q <= 0) {
        return;
    }
    remember(vec2<f32>(x, y), f32(q) * u.quantum, 1u);
    let around = corners(x, y);
    let cells = around.cells;
    let weights = around.weights;
    var left = q;
    for (var k = 0u; k < 4u; k++) {
        var part = left;
        if (k < 3u) {
            part = min(i32(f32(q) * weights[k] + 0.5), left);
        }
        left -= part;
        if (part > 0) {
            give(cells[k], part);
        }
    }
}

// Σ w² of the bilinear weights at (x, y) (cpu.rs `bilinear_self_weight`)
fn bilinear_self_weight(x: f32, y: f32) -> f32 {
    let fu = x - floor(x);
    let fv = y - floor(y);
    return ((1.0 - fu) * (1.0 - fu) + fu * fu) * ((1.0 - fv) * (1.0 - fv) + fv * fv);
}

// up to `want` metres through the circular brush, lowering the droplet's place by at most
// `drop` (cpu.rs `erode`); returns the quanta removed
fn erode(x: f32, y: f32, want: f32, drop: f32) -> i32 {
    let r = u.radius;
    var total = 0.0;
    let y0 = i32(floor(y - r));
    let y1 = i32(floor(y + r)) + 1;
    let x0 = i32(floor(x - r));
    let x1 = i32(floor(x + r)) + 1;
    let wrap = u.border == 2u;
    if (r > 0.0) {
        for (var iy = y0; iy <= y1; iy++) {
            if (!wrap && (iy < 0 || iy >= i32(u.height))) { continue; }
            for (var ix = x0; ix <= x1; ix++) {
                if (!wrap && (ix < 0 || ix >= i32(u.width))) { continue; }
                let dx = f32(ix) - x;
                let dy = f32(iy) - y;
                total += max(r - sqrt(dx * dx + dy * dy), 0.0);
            }
        }
    }
    var removed = 0;
    if (total <= 0.0) {
        let amount = min(want, drop / bilinear_self_weight(x, y));
        let around = corners(x, y);
        let cells = around.cells;
        let weights = around.weights;
        for (var k = 0u; k < 4u; k++) {
            let q = share(amount * weights[k], cells[k]);
            if (q > 0) {
                take(cells[k], q);
                removed += q;
            }
        }
        remember(vec2<f32>(x, y), -f32(removed) * u.quantum, 1u);
        return removed;
    }
    // the centre weighs `r / total` of the brush
    let scale = min(want, drop * total / r) / total;
    remember(vec2<f32>(x, y), scale, 0u);
    for (var iy = y0; iy <= y1; iy++) {
        if (!wrap && (iy < 0 || iy >= i32(u.height))) { continue; }
        for (var ix = x0; ix <= x1; ix++) {
            if (!wrap && (ix < 0 || ix >= i32(u.width))) { continue; }
            let dx = f32(ix) - x;
            let dy = f32(iy) - y;
            let wgt = max(r - sqrt(dx * dx + dy * dy), 0.0);
            if (wgt > 0.0) {
                let i = cell_index(ix, iy);
                let q = share(scale * wgt, i);
                if (q > 0) {
                    take(i, q);
                    removed += q;
                }
            }
        }
    }
    return removed;
}

// where a droplet starts: uniform, or in proportion to the rain (cpu.rs `start`)
fn start(state: ptr<function, u32>) -> vec2<f32> {
    let w = f32(u.width);
    let h = f32(u.height);
    if (u.has_spawn == 0u) {
        return vec2<f32>(next_f32(state) * (w - 1.0), next_f32(state) * (h - 1.0));
    }
    let n = u.width * u.height;
    let target_ = next_f32(state) * spawn[n - 1u];
    var lo = 0u;
    var hi = n - 1u;
    while (lo < hi) {
        let mid = (lo + hi) / 2u;
        if (spawn[mid] <= target_) { lo = mid + 1u; } else { hi = mid; }
    }
    let col = f32(lo % u.width);
    let row = f32(lo / u.width);
    let x = clamp(col + next_f32(state) - 0.5, 0.0, w - 1.001);
    let y = clamp(row + next_f32(state) - 0.5, 0.0, h - 1.001);
    return vec2<f32>(x, y);
}

@compute @workgroup_size(64)
fn life(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= u.count) {
        return;
    }
    let index = u.first + id.x;
    var rng = mix32(index ^ mix32(u.seed_lo ^ mix32(u.seed_hi + 0x9e3779b9u)));
    let w = f32(u.width);
    let h = f32(u.height);
    var p = start(&rng);
    var dir = vec2<f32>(0.0, 0.0);
    var speed = u.initial_speed;
    var water = 1.0;
    var sediment = 0;
    var leaving = false;
    events_seen = 0u;
    for (var step = 0u; step < u.max_lifetime; step++) {
        let here = sample(p.x, p.y);
        dir = dir * u.inertia - vec2<f32>(here.gx, here.gy) * (1.0 - u.inertia);
        let len2 = dot(dir, dir);
        if (len2 < 1e-20) {
            let angle = next_f32(&rng) * TAU;
            dir = vec2<f32>(cos(angle), sin(angle));
        } else {
            dir = dir / sqrt(len2);
        }
        var next = p + dir;
        // an open edge: the droplet takes this last step onto the ground beyond, then leaves
        var leaves = false;
        if (next.x < 0.0 || next.y < 0.0 || next.x >= w - 1.0 || next.y >= h - 1.0) {
            if (u.border == 1u) {
                break;
            }
            if (u.border == 0u) {
                leaves = true;
            } else {
                next = vec2<f32>(next.x - floor(next.x / w) * w, next.y - floor(next.y / h) * h);
            }
        }
        let there = sample(next.x, next.y);
        let dh = there.height - here.height;
        let carried = f32(sediment) * u.quantum;
        var capacity = max(-dh, u.min_drop) * speed * water * u.capacity;
        if (u.visit_area > 0.0) {
            let visits = f32(visits_before[cell_index(i32(floor(p.x)), i32(floor(p.y)))]);
            let per_visit = u.visit_area / max(f32(index), 0.25 * f32(u.width * u.height));
            capacity = capacity * pow(1.0 + visits * per_visit, u.discharge_exponent);
        }
        if (dh > 0.0 || carried > capacity) {
            var amount = (carried - capacity) * u.deposition;
            if (dh > 0.0) {
                // fill the dip it leaves up to the height of the next place
                amount = min(dh / bilinear_self_weight(p.x, p.y), carried);
            }
            let q = clamp(i32(floor(max(amount, 0.0) / u.quantum + 0.5)), 0, sediment);
            deposit(p.x, p.y, q);
            sediment -= q;
        } else {
            // the load stays far from the i32 range (2^30 quanta: 1024 m)
            let room = f32(MAX_LOAD - sediment) * u.quantum;
            let amount = min((capacity - carried) * u.erosion, room);
            sediment += erode(p.x, p.y, amount, -dh);
        }
        if (leaves) {
            leaving = true;
            break;
        }
        speed = sqrt(max((speed * speed - dh * u.gravity) * u.speed_kept, 0.0));
        water = water * (1.0 - u.evaporation);
        p = next;
        atomicAdd(&flow[cell_index(i32(floor(p.x)), i32(floor(p.y)))], 1u);
    }
    if (leaving) {
        // open: the load leaves the map, booked as outflow at the last cell
        if (sediment > 0) {
            atomicAdd(&outflow_delta[cell_index(i32(floor(p.x)), i32(floor(p.y)))], sediment);
        }
    } else if (sediment > 0) {
        // a droplet that dies (lifetime, closed edge) leaves its load where it is
        deposit(p.x, p.y, sediment);
    }
}
