//! A heightmap's surface as an adaptive triangle mesh within a height error: a right-triangulated
//! irregular network (RTIN; Evans, Kirkpatrick & Townsend 2001), built as Martini does (Mapbox,
//! Agafonkin 2019). The map is seen as a square of 2^k + 1 vertices split recursively along
//! hypotenuses; each split's error is how far the hypotenuse's midpoint lies from the straight
//! line between its ends, and a triangle's error the largest in it. Triangles split while their
//! error passes the bound: flat ground gets few large triangles, ridges and channels many small
//! ones, and the mesh stays crack-free because the two triangles sharing a hypotenuse read the
//! same error.
//!
//! A split's error looks only at its midpoint against its hypotenuse, so a large triangle can
//! stray further from cells inside it than any of its splits did; each kept triangle is checked
//! against every cell it covers, and one that strays past the bound is forced to split (its
//! midpoint's error set infinite and the hierarchy summed again, which keeps the mesh
//! crack-free), until none does: every cell lies within the bound of the mesh.
//!
//! Any size: the map is padded to the next 2^k + 1 (heights repeated from the edge), every
//! triangle that straddles the map's last row or column (or touches a cell without data) splits
//! down to cells, and only triangles on the map (with data at every corner) are kept. Axes,
//! normals and UVs are [`crate::surface_mesh`]'s.

use rayon::prelude::*;

use crate::grid::Heightmap;
use crate::surface_mesh::{SurfaceMesh, SurfaceMeshError};

/// Errors of every split point of the padded square (side `size` = 2^k + 1), m: the RTIN
/// hierarchy's errors, each the largest of its own and its children's.
/// With `chunk` cells (0: none), no triangle straddles a line of a multiple of `chunk`: the
/// mesh cuts into square chunks along straight borders.
fn errors(map: &Heightmap, size: usize, forced: &[bool], chunk: usize) -> Vec<f32> {
    let g = &map.heights;
    let (w, h) = (g.width(), g.height());
    let z = |x: usize, y: usize| g.as_slice()[y.min(h - 1) * w + x.min(w - 1)];
    let off = |x: usize, y: usize| x >= w || y >= h;
    let hole = |x: usize, y: usize| !off(x, y) && map.is_nodata(y * w + x);
    let tile = size - 1;
    let count = tile * tile * 2 - 2;
    let parents = count - tile * tile;
    let mut err = vec![0.0f32; size * size];
    for i in (0..count).rev() {
        let (ax, ay, bx, by, cx, cy) = corners(i + 2, tile);
        let (mx, my) = ((ax + bx) / 2, (ay + by) / 2);
        let m = my * size + mx;
        // the map's last column or row through the triangle, or a corner without data: split
        // down to cells, so the kept triangles end on the map's edge and beside nodata
        let straddles = |a: usize, b: usize, c: usize, edge: usize| a.min(b).min(c) < edge && a.max(b).max(c) > edge;
        // a chunk's border through the triangle: the first multiple of `chunk` past its least
        // coordinate lies before its greatest
        let crosses =
            |a: usize, b: usize, c: usize| chunk > 0 && (a.min(b).min(c) / chunk + 1) * chunk < a.max(b).max(c);
        let forced = straddles(ax, bx, cx, w - 1)
            || crosses(ax, bx, cx)
            || crosses(ay, by, cy)
            || straddles(ay, by, cy, h - 1)
            || hole(ax, ay)
            || hole(bx, by)
            || hole(cx, cy)
            || hole(mx, my)
            || forced[m];
        let own = if forced {
            f32::INFINITY
        } else {
            let line = (f64::from(z(ax, ay)) + f64::from(z(bx, by))) / 2.0;
            (line - f64::from(z(mx, my))).abs() as f32
        };
        let mut e = err[m].max(own);
        if i < parents {
            let left = ((ay + cy) / 2) * size + (ax + cx) / 2;
            let right = ((by + cy) / 2) * size + (bx + cx) / 2;
            e = e.max(err[left]).max(err[right]);
        }
        err[m] = e;
    }
    err
}

/// The corners (a, b: the hypotenuse's ends; c: the right angle) of the RTIN triangle `id`
/// in a square of side `tile`: from 2, the bits below the leading one read from the top, the
/// first the square's half and each next one which child at the next level (Martini reads them
/// from the bottom; from the top, neighbouring ids are neighbouring triangles, which read the
/// heights in order: `erode mesh` of a 4096² map within 0.5 m took 13.5 s against 24.7, the same
/// bytes). A child's id is larger than
/// its parent's, so children come first counting down.
fn corners(id: usize, tile: usize) -> (usize, usize, usize, usize, usize, usize) {
    let depth = usize::BITS - 1 - id.leading_zeros();
    let (mut ax, mut ay, mut bx, mut by, mut cx, mut cy) = (0, 0, 0, 0, 0, 0);
    if (id >> (depth - 1)) & 1 == 1 {
        (bx, by, cx) = (tile, tile, tile);
    } else {
        (ax, ay, cy) = (tile, tile, tile);
    }
    for level in (0..depth - 1).rev() {
        let (mx, my) = ((ax + bx) / 2, (ay + by) / 2);
        if (id >> level) & 1 == 1 {
            (bx, by, ax, ay) = (ax, ay, cx, cy);
        } else {
            (ax, ay, bx, by) = (bx, by, cx, cy);
        }
        (cx, cy) = (mx, my);
    }
    (ax, ay, bx, by, cx, cy)
}

/// The surface of `map` as an adaptive mesh whose height differs from every cell's by at most
/// `max_error` metres (0: exactly the cells' surface, with large triangles only where it is
/// flat).
pub fn adaptive_mesh(map: &Heightmap, max_error: f64) -> Result<SurfaceMesh, SurfaceMeshError> {
    adaptive_mesh_in_chunks(map, max_error, 0)
}

/// [`adaptive_mesh`] with no triangle across the borders of square chunks of `chunk` cells
/// (0: no chunks), so that [`crate::mesh_chunks::Chunks`] cuts it along straight lines.
pub fn adaptive_mesh_in_chunks(map: &Heightmap, max_error: f64, chunk: usize) -> Result<SurfaceMesh, SurfaceMeshError> {
    let g = &map.heights;
    let (w, h) = (g.width(), g.height());
    if w < 2 || h < 2 {
        return Err(SurfaceMeshError::TooSmall { width: w, height: h });
    }
    let size = (w.max(h) - 1).next_power_of_two() + 1;
    if (size as u64) * (size as u64) > u64::from(u32::MAX) {
        return Err(SurfaceMeshError::TooManyVertices { vertices: (size as u64) * (size as u64) });
    }
    let bound = max_error.max(0.0);
    let mut forced = vec![false; size * size];
    loop {
        let err = errors(map, size, &forced, chunk);
        let kept = extract(map, &err, size, bound as f32);
        let strays: Vec<usize> =
            kept.par_iter().filter(|&&(tri, _)| stray(map, tri) > bound).map(|&(_, mid)| mid).collect();
        for &mid in &strays {
            forced[mid] = true;
        }
        if strays.is_empty() {
            let cells: Vec<[usize; 3]> = kept.iter().map(|&(t, _)| t).collect();
            return Ok(build(map, &cells));
        }
    }
}

/// The triangles the errors keep within `bound`, as cell indices, with their hypotenuse's
/// midpoint (in the padded square).
fn extract(map: &Heightmap, err: &[f32], size: usize, bound: f32) -> Vec<([usize; 3], usize)> {
    let (w, h) = (map.heights.width(), map.heights.height());
    let tile = size - 1;
    let mut kept = Vec::new();
    let mut stack = vec![(0, 0, tile, tile, tile, 0), (tile, tile, 0, 0, 0, tile)];
    while let Some((ax, ay, bx, by, cx, cy)) = stack.pop() {
        let (mx, my) = ((ax + bx) / 2, (ay + by) / 2);
        if ax.abs_diff(cx) + ay.abs_diff(cy) > 1 && err[my * size + mx] > bound {
            stack.push((cx, cy, ax, ay, mx, my));
            stack.push((bx, by, cx, cy, mx, my));
            continue;
        }
        let on_map = [(ax, ay), (bx, by), (cx, cy)].iter().all(|&(x, y)| x < w && y < h && !map.is_nodata(y * w + x));
        if on_map {
            kept.push(([ay * w + ax, by * w + bx, cy * w + cx], my * size + mx));
        }
    }
    kept
}

/// The largest distance, m, between a triangle's plane (through its three cells' heights) and a
/// cell it covers.
fn stray(map: &Heightmap, tri: [usize; 3]) -> f64 {
    let w = map.heights.width();
    let z = map.heights.as_slice();
    let p: Vec<(f64, f64, f64)> = tri.iter().map(|&i| ((i % w) as f64, (i / w) as f64, f64::from(z[i]))).collect();
    let d = (p[1].1 - p[2].1) * (p[0].0 - p[2].0) + (p[2].0 - p[1].0) * (p[0].1 - p[2].1);
    let (x0, x1) = (p.iter().map(|q| q.0).fold(f64::INFINITY, f64::min), p.iter().map(|q| q.0).fold(0.0, f64::max));
    let (y0, y1) = (p.iter().map(|q| q.1).fold(f64::INFINITY, f64::min), p.iter().map(|q| q.1).fold(0.0, f64::max));
    let mut worst = 0.0f64;
    for y in y0 as usize..=y1 as usize {
        for x in x0 as usize..=x1 as usize {
            let (px, py) = (x as f64, y as f64);
            let l0 = ((p[1].1 - p[2].1) * (px - p[2].0) + (p[2].0 - p[1].0) * (py - p[2].1)) / d;
            let l1 = ((p[2].1 - p[0].1) * (px - p[2].0) + (p[0].0 - p[2].0) * (py - p[2].1)) / d;
            let l2 = 1.0 - l0 - l1;
            if l0 >= -1e-9 && l1 >= -1e-9 && l2 >= -1e-9 {
                let plane = l0 * p[0].2 + l1 * p[1].2 + l2 * p[2].2;
                worst = worst.max((plane - f64::from(z[y * w + x])).abs());
            }
        }
    }
    worst
}

/// The mesh of the triangles `kept` (cell indices), each vertex once.
fn build(map: &Heightmap, kept: &[[usize; 3]]) -> SurfaceMesh {
    let g = &map.heights;
    let (w, h) = (g.width(), g.height());
    let cell = g.cell_size();
    let z = g.as_slice();
    let mut index = vec![u32::MAX; w * h];
    let mut mesh = SurfaceMesh { positions: Vec::new(), normals: Vec::new(), uvs: Vec::new(), indices: Vec::new() };
    let valid = |i: usize| !map.is_nodata(i);
    // the slope along one axis at a cell, from its valid neighbours (one-sided at edges)
    let slope = |i: usize, before: Option<usize>, after: Option<usize>, spacing: f64| {
        let b = before.filter(|&j| valid(j)).unwrap_or(i);
        let a = after.filter(|&j| valid(j)).unwrap_or(i);
        let steps = usize::from(b != i) + usize::from(a != i);
        if steps == 0 { 0.0 } else { (f64::from(z[a]) - f64::from(z[b])) / (steps as f64 * spacing) }
    };
    for tri in kept {
        let p: Vec<[f64; 2]> = tri.iter().map(|&i| [(i % w) as f64, (i / w) as f64]).collect();
        // counter-clockwise seen from above (+y): the cross product's y, x east and z south
        let cross = (p[1][1] - p[0][1]) * (p[2][0] - p[0][0]) - (p[1][0] - p[0][0]) * (p[2][1] - p[0][1]);
        let order = if cross > 0.0 { [tri[0], tri[1], tri[2]] } else { [tri[0], tri[2], tri[1]] };
        for i in order {
            if index[i] == u32::MAX {
                index[i] = mesh.positions.len() as u32;
                let (r, c) = (i / w, i % w);
                mesh.positions.push([(c as f64 * cell.x) as f32, z[i], (r as f64 * cell.y) as f32]);
                let sx = slope(i, (c > 0).then(|| i - 1), (c + 1 < w).then(|| i + 1), cell.x);
                let sz = slope(i, (r > 0).then(|| i - w), (r + 1 < h).then(|| i + w), cell.y);
                let len = (sx * sx + 1.0 + sz * sz).sqrt();
                mesh.normals.push([(-sx / len) as f32, (1.0 / len) as f32, (-sz / len) as f32]);
                mesh.uvs.push([c as f32 / (w - 1) as f32, r as f32 / (h - 1) as f32]);
            }
            mesh.indices.push(index[i]);
        }
    }
    mesh
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{CellSize, Grid};

    fn map(w: usize, h: usize, f: impl Fn(usize, usize) -> f32) -> Heightmap {
        Heightmap::new(Grid::from_fn(w, h, CellSize::square(2.0), f).unwrap()).unwrap()
    }

    fn rough(w: usize, h: usize) -> Heightmap {
        map(w, h, |r, c| {
            let (x, y) = (c as f32, r as f32);
            (x * 0.3).sin() * 4.0 + (y * 0.2).cos() * 3.0 + ((r * 31 + c * 17) % 11) as f32 * 0.05
        })
    }

    /// The mesh's height at cell (r, c): the triangle holding its position, by barycentric
    /// weights; `None` where no triangle holds it.
    fn height_at(mesh: &SurfaceMesh, cell: f64, r: usize, c: usize) -> Option<f64> {
        let (px, pz) = (c as f64 * cell, r as f64 * cell);
        for t in mesh.indices.chunks(3) {
            let v: Vec<[f64; 3]> = t.iter().map(|&i| mesh.positions[i as usize].map(f64::from)).collect();
            let d = (v[1][2] - v[2][2]) * (v[0][0] - v[2][0]) + (v[2][0] - v[1][0]) * (v[0][2] - v[2][2]);
            let l0 = ((v[1][2] - v[2][2]) * (px - v[2][0]) + (v[2][0] - v[1][0]) * (pz - v[2][2])) / d;
            let l1 = ((v[2][2] - v[0][2]) * (px - v[2][0]) + (v[0][0] - v[2][0]) * (pz - v[2][2])) / d;
            let l2 = 1.0 - l0 - l1;
            if l0 >= -1e-9 && l1 >= -1e-9 && l2 >= -1e-9 {
                return Some(l0 * v[0][1] + l1 * v[1][1] + l2 * v[2][1]);
            }
        }
        None
    }

    #[test]
    fn every_cell_lies_within_the_bound_and_the_mesh_has_no_cracks() {
        for (w, h) in [(33, 33), (40, 27), (17, 50)] {
            let m = rough(w, h);
            for bound in [0.0, 0.25, 1.0] {
                let mesh = adaptive_mesh(&m, bound).unwrap();
                for r in 0..h {
                    for c in 0..w {
                        let got =
                            height_at(&mesh, 2.0, r, c).unwrap_or_else(|| panic!("{w}x{h}: cell {r},{c} uncovered"));
                        let want = f64::from(m.heights.as_slice()[r * w + c]);
                        assert!(
                            (got - want).abs() <= bound + 1e-4,
                            "{w}x{h} bound {bound}: cell {r},{c}: {got} vs {want}"
                        );
                    }
                }
                // an edge used once lies on the map's rim: no T-junction inside
                let mut edges = std::collections::HashMap::new();
                for t in mesh.indices.chunks(3) {
                    for k in 0..3 {
                        let (a, b) = (t[k], t[(k + 1) % 3]);
                        *edges.entry((a.min(b), a.max(b))).or_insert(0) += 1;
                    }
                }
                let rim = |p: [f32; 3]| {
                    p[0] == 0.0 || p[2] == 0.0 || p[0] == (2 * (w - 1)) as f32 || p[2] == (2 * (h - 1)) as f32
                };
                for (&(a, b), &n) in &edges {
                    assert!(n <= 2, "an edge of three triangles");
                    let (pa, pb) = (mesh.positions[a as usize], mesh.positions[b as usize]);
                    let same_side = (pa[0] == pb[0] || pa[2] == pb[2]) && rim(pa) && rim(pb);
                    assert!(n == 2 || same_side, "{w}x{h} bound {bound}: a crack at {pa:?}-{pb:?}");
                }
                // counter-clockwise from above: every normal of a triangle points up
                for t in mesh.indices.chunks(3) {
                    let p: Vec<[f32; 3]> = t.iter().map(|&i| mesh.positions[i as usize]).collect();
                    let (a, b) = ([p[1][0] - p[0][0], p[1][2] - p[0][2]], [p[2][0] - p[0][0], p[2][2] - p[0][2]]);
                    assert!(a[1] * b[0] - a[0] * b[1] > 0.0, "a triangle faces down");
                }
            }
        }
    }

    #[test]
    fn a_plane_takes_two_triangles_and_rough_ground_many() {
        let plane = map(65, 65, |r, c| r as f32 * 0.5 + c as f32 * 0.25);
        assert_eq!(adaptive_mesh(&plane, 0.01).unwrap().triangles(), 2);
        let m = rough(65, 65);
        let (fine, coarse) = (adaptive_mesh(&m, 0.0).unwrap(), adaptive_mesh(&m, 1.0).unwrap());
        assert_eq!(fine.triangles(), 2 * 64 * 64);
        assert!(coarse.triangles() * 3 < fine.triangles(), "{} against {}", coarse.triangles(), fine.triangles());
    }

    #[test]
    fn nodata_cells_are_left_out() {
        let g = Grid::from_fn(20, 20, CellSize::square(1.0), |r, c| (r + c) as f32).unwrap();
        let mask: Vec<bool> = (0..400).map(|i| (5..8).contains(&(i / 20)) && (5..8).contains(&(i % 20))).collect();
        let m = Heightmap::with_nodata(g, Some(mask.clone())).unwrap();
        let mesh = adaptive_mesh(&m, 0.5).unwrap();
        for p in &mesh.positions {
            let i = p[2] as usize * 20 + p[0] as usize;
            assert!(!mask[i], "a vertex on a nodata cell");
        }
        assert!(mesh.triangles() > 2);
    }
}
