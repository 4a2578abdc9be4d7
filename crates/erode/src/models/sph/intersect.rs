//! Where the surface passes through itself: a uniform grid over the faces and a
//! triangle-triangle test (an edge of one piercing the other).

use glam::DVec3;
use rayon::prelude::*;

use super::mesh::TriMesh;

/// Faces binned into the cells of a uniform grid that their bounding box, grown by `reach`,
/// overlaps: every face within `reach` of a point is listed in the point's cell.
#[derive(Clone, Debug, Default)]
pub struct FaceGrid {
    origin: DVec3,
    cell: f64,
    dims: [usize; 3],
    start: Vec<u32>,
    items: Vec<u32>,
    /// The reach the faces were grown by, metres.
    pub reach: f64,
}

/// Cells a grid may have; coarser cells are used beyond it.
const MAX_CELLS: usize = 1 << 21;

impl FaceGrid {
    /// Bins `mesh`'s faces into cells of about `cell` metres, each face grown by `reach`.
    pub fn build(mesh: &TriMesh, cell: f64, reach: f64) -> Self {
        let (lo, hi) = mesh.bounds();
        let origin = lo - DVec3::splat(reach + cell);
        let span = hi - lo + DVec3::splat(2.0 * (reach + cell));
        let mut cell = cell.max(1e-9);
        let mut dims;
        loop {
            dims = [0, 1, 2].map(|k| ((span[k] / cell).ceil() as usize).max(1));
            if dims.iter().product::<usize>() <= MAX_CELLS {
                break;
            }
            cell *= 1.26;
        }
        let mut grid = Self { origin, cell, dims, start: Vec::new(), items: Vec::new(), reach };
        let ranges: Vec<[[usize; 2]; 3]> = (0..mesh.faces.len())
            .map(|f| {
                let [a, b, c] = mesh.corners(f);
                grid.cell_range(a.min(b).min(c) - DVec3::splat(reach), a.max(b).max(c) + DVec3::splat(reach))
            })
            .collect();
        let n = dims[0] * dims[1] * dims[2];
        let mut count = vec![0u32; n + 1];
        for r in &ranges {
            grid.for_cells(r, |i| count[i + 1] += 1);
        }
        for i in 1..count.len() {
            count[i] += count[i - 1];
        }
        let mut fill = count.clone();
        let mut items = vec![0u32; count[n] as usize];
        for (f, r) in ranges.iter().enumerate() {
            grid.for_cells(r, |i| {
                items[fill[i] as usize] = f as u32;
                fill[i] += 1;
            });
        }
        grid.start = count;
        grid.items = items;
        grid
    }

    fn cell_of(&self, p: DVec3) -> [usize; 3] {
        [0, 1, 2].map(|k| (((p[k] - self.origin[k]) / self.cell).floor().max(0.0) as usize).min(self.dims[k] - 1))
    }

    fn cell_range(&self, lo: DVec3, hi: DVec3) -> [[usize; 2]; 3] {
        let (a, b) = (self.cell_of(lo), self.cell_of(hi));
        [[a[0], b[0]], [a[1], b[1]], [a[2], b[2]]]
    }

    fn for_cells(&self, r: &[[usize; 2]; 3], mut f: impl FnMut(usize)) {
        for z in r[2][0]..=r[2][1] {
            for y in r[1][0]..=r[1][1] {
                for x in r[0][0]..=r[0][1] {
                    f((z * self.dims[1] + y) * self.dims[0] + x);
                }
            }
        }
    }

    /// The faces that may lie within `reach` of `p`, in face order.
    #[inline]
    pub fn near(&self, p: DVec3) -> &[u32] {
        if self.start.is_empty() {
            return &[];
        }
        let c = self.cell_of(p);
        let i = (c[2] * self.dims[1] + c[1]) * self.dims[0] + c[0];
        &self.items[self.start[i] as usize..self.start[i + 1] as usize]
    }

    /// Calls `f` with every face listed in a cell overlapping the box `lo..hi` (a face may come
    /// more than once).
    pub fn in_box(&self, lo: DVec3, hi: DVec3, mut f: impl FnMut(u32)) {
        if self.start.is_empty() {
            return;
        }
        let r = self.cell_range(lo, hi);
        self.for_cells(&r, |i| {
            for &face in &self.items[self.start[i] as usize..self.start[i + 1] as usize] {
                f(face);
            }
        });
    }
}

/// Whether segment `p..q` crosses triangle `abc`: strictly between its ends (an end touching
/// the triangle within a relative `1e-9` does not count), anywhere on the triangle, its edges
/// included (a segment through the shared edge of two faces crosses the surface there, and
/// would count for neither face if edges were left out).
fn segment_crosses(p: DVec3, q: DVec3, a: DVec3, b: DVec3, c: DVec3) -> bool {
    const EPS: f64 = 1e-9;
    let d = q - p;
    let (e1, e2) = (b - a, c - a);
    let h = d.cross(e2);
    let det = e1.dot(h);
    let scale = e1.length() * e2.length() * d.length();
    if det.abs() <= 1e-12 * scale {
        return false; // parallel (coplanar overlaps are not detected)
    }
    let inv = 1.0 / det;
    let s = p - a;
    let u = s.dot(h) * inv;
    if !(-EPS..=1.0 + EPS).contains(&u) {
        return false;
    }
    let qv = s.cross(e1);
    let v = d.dot(qv) * inv;
    if v < -EPS || u + v > 1.0 + EPS {
        return false;
    }
    let t = e2.dot(qv) * inv;
    t > EPS && t < 1.0 - EPS
}

/// Whether two triangles cross (an edge of one pierces the other). Triangles that only touch are
/// not counted; coplanar overlaps are not detected.
pub fn triangles_cross(t: [DVec3; 3], u: [DVec3; 3]) -> bool {
    let (tlo, thi) = (t[0].min(t[1]).min(t[2]), t[0].max(t[1]).max(t[2]));
    let (ulo, uhi) = (u[0].min(u[1]).min(u[2]), u[0].max(u[1]).max(u[2]));
    if tlo.cmpgt(uhi).any() || ulo.cmpgt(thi).any() {
        return false;
    }
    (0..3).any(|k| segment_crosses(t[k], t[(k + 1) % 3], u[0], u[1], u[2]))
        || (0..3).any(|k| segment_crosses(u[k], u[(k + 1) % 3], t[0], t[1], t[2]))
}

/// The first pair of faces (lowest first face, then lowest second) that share no vertex and
/// cross, among pairs with at least one face in `faces` (all faces when `None`).
pub fn find_crossing(mesh: &TriMesh, grid: &FaceGrid, faces: Option<&[u32]>) -> Option<(usize, usize)> {
    let all: Vec<u32>;
    let faces = match faces {
        Some(f) => f,
        None => {
            all = (0..mesh.faces.len() as u32).collect();
            &all
        }
    };
    // each face's lowest crossing pair, in parallel; the lowest of those (the same for any
    // thread count)
    faces
        .par_iter()
        .with_min_len(64)
        .filter_map(|&f| {
            let tf = mesh.corners(f as usize);
            let vf = mesh.faces[f as usize];
            let (lo, hi) = (tf[0].min(tf[1]).min(tf[2]), tf[0].max(tf[1]).max(tf[2]));
            let mut found: Option<(usize, usize)> = None;
            grid.in_box(lo, hi, |g| {
                let pair = (f.min(g) as usize, f.max(g) as usize);
                if g == f || found.is_some_and(|best| best <= pair) {
                    return;
                }
                let tg = mesh.corners(g as usize);
                let (glo, ghi) = (tg[0].min(tg[1]).min(tg[2]), tg[0].max(tg[1]).max(tg[2]));
                if glo.cmpgt(hi).any() || lo.cmpgt(ghi).any() || vf.iter().any(|v| mesh.faces[g as usize].contains(v)) {
                    return;
                }
                if triangles_cross(tf, tg) {
                    found = Some(pair);
                }
            });
            found
        })
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crossing_and_touching_triangles() {
        let t = [DVec3::new(0.0, 0.0, 0.0), DVec3::new(1.0, 0.0, 0.0), DVec3::new(0.0, 1.0, 0.0)];
        let pierce = [DVec3::new(0.2, 0.2, -1.0), DVec3::new(0.3, 0.2, 1.0), DVec3::new(0.2, 0.4, 1.0)];
        assert!(triangles_cross(t, pierce));
        let above = pierce.map(|p| p + DVec3::new(0.0, 0.0, 1.5));
        assert!(!triangles_cross(t, above));
        let far = pierce.map(|p| p + DVec3::new(5.0, 0.0, 0.0));
        assert!(!triangles_cross(t, far));
    }

    #[test]
    fn grid_search_agrees_with_all_pairs() {
        let mut m = super::super::build::tube_block(2.0, 1.0, 0.5, 16, 6).unwrap();
        let grid = FaceGrid::build(&m, 0.3, 0.0);
        assert_eq!(find_crossing(&m, &grid, None), None);
        // push one inner vertex through the block's side
        let v = 3 * 16 + 4; // ring 3, quarter turn: the tube's top
        m.positions[v].z += 1.2;
        let grid = FaceGrid::build(&m, 0.3, 0.0);
        let found = find_crossing(&m, &grid, None).expect("a crossing");
        let mut brute = None;
        'outer: for a in 0..m.faces.len() {
            for b in a + 1..m.faces.len() {
                let shares = m.faces[a].iter().any(|v| m.faces[b].contains(v));
                if !shares && triangles_cross(m.corners(a), m.corners(b)) {
                    brute = Some((a, b));
                    break 'outer;
                }
            }
        }
        assert_eq!(Some(found), brute);
    }
}
