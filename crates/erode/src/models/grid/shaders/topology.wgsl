// Neighbours under each border rule (topology.rs), prepended to every stage that reads its
// neighbours. The stage declares a uniform `u` with `width`, `height` and `border`
// (0 closed, 1 open, 2 wrap).

// E, W, S, N, SE, NW, SW, NE (rows grow southwards): topology.rs DIRS, the neighbour table in
// pipe order (a test compares them); opposite(e) = e ^ 1
const DR = array<i32, 8>(0, 0, 1, -1, 1, -1, 1, -1);
const DC = array<i32, 8>(1, -1, 0, 0, 1, -1, -1, 1);

// Element e of 8 values packed as two vec4s (uniform arrays need a 16-byte stride).
fn pick(a: array<vec4<f32>, 2>, e: u32) -> f32 {
    return a[e / 4u][e % 4u];
}

// topology.rs `neighbour`: the index of the neighbour in direction e, or -1 across a closed or
// open edge.
fn neighbour(r: i32, c: i32, e: u32) -> i32 {
    let h = i32(u.height);
    let w = i32(u.width);
    var rr = r + DR[e];
    var cc = c + DC[e];
    if (u.border == 2u) {
        rr = (rr % h + h) % h;
        cc = (cc % w + w) % w;
    } else if (rr < 0 || rr >= h || cc < 0 || cc >= w) {
        return -1;
    }
    return rr * w + cc;
}

// topology.rs `clamped`: wrapped, or clamped into the grid (for gradients).
fn clamped(r: i32, c: i32) -> u32 {
    let h = i32(u.height);
    let w = i32(u.width);
    if (u.border == 2u) {
        return u32(((r % h + h) % h) * w + (c % w + w) % w);
    }
    return u32(clamp(r, 0, h - 1) * w + clamp(c, 0, w - 1));
}
