//! The eroded surface: a triangle mesh, positions in metres, faces wound counter-clockwise seen
//! from the side the fluid is on (normals point out of the solid, into the fluid).

use glam::DVec3;

use crate::error::MeshError;

/// A triangle mesh. The solid is on the side opposite the normals; a closed mesh's signed volume
/// (divergence theorem) is the solid's volume, negative when the solid is the outside (a tank).
#[derive(Clone, Debug, PartialEq)]
pub struct TriMesh {
    /// Vertex positions, metres.
    pub positions: Vec<DVec3>,
    /// Faces: three vertex indices each, counter-clockwise seen from the fluid side.
    pub faces: Vec<[u32; 3]>,
}

/// Which faces use each vertex (compressed rows: faces of vertex `v` are
/// `faces[start[v]..start[v + 1]]`).
#[derive(Clone, Debug, Default)]
pub struct VertexFaces {
    start: Vec<u32>,
    faces: Vec<u32>,
}

impl VertexFaces {
    /// The faces around vertex `v`, in face order.
    pub fn of(&self, v: usize) -> &[u32] {
        &self.faces[self.start[v] as usize..self.start[v + 1] as usize]
    }
}

impl TriMesh {
    /// A mesh from positions and faces, checked for indices in range and finite coordinates.
    pub fn new(positions: Vec<DVec3>, faces: Vec<[u32; 3]>) -> Result<Self, MeshError> {
        if faces.is_empty() {
            return Err(MeshError::Empty);
        }
        if let Some(vertex) = positions.iter().position(|p| !p.is_finite()) {
            return Err(MeshError::NonFinite { vertex });
        }
        for (face, f) in faces.iter().enumerate() {
            if let Some(&index) = f.iter().find(|&&i| i as usize >= positions.len()) {
                return Err(MeshError::IndexOutOfRange { face, index: u64::from(index), vertices: positions.len() });
            }
        }
        Ok(Self { positions, faces })
    }

    /// The corners of face `f`.
    #[inline]
    pub fn corners(&self, f: usize) -> [DVec3; 3] {
        let [a, b, c] = self.faces[f];
        [self.positions[a as usize], self.positions[b as usize], self.positions[c as usize]]
    }

    /// Twice the area times the unit normal of face `f` (the cross product of its edges).
    #[inline]
    pub fn area_vector2(&self, f: usize) -> DVec3 {
        let [a, b, c] = self.corners(f);
        (b - a).cross(c - a)
    }

    /// Area of face `f`, m².
    pub fn area(&self, f: usize) -> f64 {
        0.5 * self.area_vector2(f).length()
    }

    /// Unit normal of face `f` (zero for a degenerate face).
    pub fn normal(&self, f: usize) -> DVec3 {
        self.area_vector2(f).normalize_or_zero()
    }

    /// Signed volume enclosed, m³ (divergence theorem: the sum of `a·(b×c)/6` over faces), in a
    /// fixed order so it is the same bits every time. Exact books need a closed mesh.
    pub fn signed_volume(&self) -> f64 {
        // about the first vertex, so large coordinates do not cancel
        let o = self.positions.first().copied().unwrap_or(DVec3::ZERO);
        self.faces
            .iter()
            .map(|&[a, b, c]| {
                let (a, b, c) =
                    (self.positions[a as usize] - o, self.positions[b as usize] - o, self.positions[c as usize] - o);
                a.dot(b.cross(c)) / 6.0
            })
            .sum()
    }

    /// Total surface area, m².
    pub fn surface_area(&self) -> f64 {
        (0..self.faces.len()).map(|f| self.area(f)).sum()
    }

    /// Smallest and largest corner of the bounding box, metres.
    pub fn bounds(&self) -> (DVec3, DVec3) {
        self.positions.iter().fold((DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)), |(lo, hi), p| {
            (lo.min(*p), hi.max(*p))
        })
    }

    /// The faces around each vertex.
    pub fn vertex_faces(&self) -> VertexFaces {
        let mut count = vec![0u32; self.positions.len() + 1];
        for f in &self.faces {
            for &v in f {
                count[v as usize + 1] += 1;
            }
        }
        for i in 1..count.len() {
            count[i] += count[i - 1];
        }
        let mut fill = count.clone();
        let mut faces = vec![0u32; self.faces.len() * 3];
        for (fi, f) in self.faces.iter().enumerate() {
            for &v in f {
                faces[fill[v as usize] as usize] = fi as u32;
                fill[v as usize] += 1;
            }
        }
        VertexFaces { start: count, faces }
    }

    /// The smallest face area accepted for this mesh by default: a millionth of the mean face
    /// area, m².
    pub fn default_min_area(&self) -> f64 {
        1e-6 * self.surface_area() / self.faces.len().max(1) as f64
    }

    /// Checks what the model relies on: no face below `min_area` (m²), every edge shared by at
    /// most two faces that run along it in opposite directions (consistent orientation), and,
    /// if `closed`, by exactly two. The first problem found is returned, naming the face or edge.
    pub fn validate(&self, closed: bool, min_area: f64) -> Result<(), MeshError> {
        for face in 0..self.faces.len() {
            let area = self.area(face);
            if area.is_nan() || area < min_area || area == 0.0 {
                return Err(MeshError::Degenerate { face, area, min_area });
            }
        }
        let mut edges: Vec<(u32, u32, u32, bool)> = Vec::with_capacity(self.faces.len() * 3);
        for (fi, f) in self.faces.iter().enumerate() {
            for k in 0..3 {
                let (a, b) = (f[k], f[(k + 1) % 3]);
                edges.push((a.min(b), a.max(b), fi as u32, a < b));
            }
        }
        edges.sort_unstable();
        let mut i = 0;
        while i < edges.len() {
            let mut j = i + 1;
            while j < edges.len() && edges[j].0 == edges[i].0 && edges[j].1 == edges[i].1 {
                j += 1;
            }
            let (a, b) = (edges[i].0 as usize, edges[i].1 as usize);
            match j - i {
                1 if closed => return Err(MeshError::OpenEdge { a, b, face: edges[i].2 as usize }),
                1 => {}
                2 if edges[i].3 == edges[i + 1].3 => {
                    return Err(MeshError::Orientation {
                        face_a: edges[i].2 as usize,
                        face_b: edges[i + 1].2 as usize,
                        a,
                        b,
                    });
                }
                2 => {}
                count => return Err(MeshError::NonManifoldEdge { a, b, count }),
            }
            i = j;
        }
        Ok(())
    }

    /// Refuses a closed, consistently oriented mesh whose faces wind inwards (negative
    /// enclosed volume), for a mesh that is read as a solid: the tank scene is the other way
    /// round on purpose (the fluid inside, the solid around it).
    pub fn check_outward(&self) -> Result<(), MeshError> {
        let volume = self.signed_volume();
        if volume < 0.0 {
            return Err(MeshError::InsideOut { volume });
        }
        Ok(())
    }

    /// Turns every face so that neighbours agree with the first face of each connected part, then
    /// each part so that its signed volume is positive (normals out of a solid). For the mesh
    /// builders; a loaded mesh is validated, never silently changed.
    pub(crate) fn orient_outward(&mut self) {
        let n = self.faces.len();
        let mut by_edge: std::collections::HashMap<(u32, u32), Vec<u32>> = std::collections::HashMap::new();
        for (fi, f) in self.faces.iter().enumerate() {
            for k in 0..3 {
                let (a, b) = (f[k], f[(k + 1) % 3]);
                by_edge.entry((a.min(b), a.max(b))).or_default().push(fi as u32);
            }
        }
        let has = |f: &[u32; 3], a: u32, b: u32| (0..3).any(|k| f[k] == a && f[(k + 1) % 3] == b);
        let mut seen = vec![false; n];
        for root in 0..n {
            if seen[root] {
                continue;
            }
            seen[root] = true;
            let mut part = vec![root];
            let mut stack = vec![root];
            while let Some(fi) = stack.pop() {
                let f = self.faces[fi];
                for k in 0..3 {
                    let (a, b) = (f[k], f[(k + 1) % 3]);
                    for &g in &by_edge[&(a.min(b), a.max(b))] {
                        let g = g as usize;
                        if seen[g] {
                            continue;
                        }
                        if has(&self.faces[g], a, b) {
                            self.faces[g].swap(1, 2);
                        }
                        seen[g] = true;
                        part.push(g);
                        stack.push(g);
                    }
                }
            }
            let o = self.positions[self.faces[root][0] as usize];
            let volume: f64 = part
                .iter()
                .map(|&fi| {
                    let [a, b, c] = self.corners(fi);
                    (a - o).dot((b - o).cross(c - o))
                })
                .sum();
            if volume < 0.0 {
                for &fi in &part {
                    self.faces[fi].swap(1, 2);
                }
            }
        }
    }

    /// Every face turned over (normals the other way): the solid becomes the outside.
    pub fn flipped(mut self) -> Self {
        for f in &mut self.faces {
            f.swap(1, 2);
        }
        self
    }
}

/// Point-in-triangle prism test and distance: if the line through `x` along the unit normal `n`
/// of triangle `abc` crosses the triangle (edges included, with a relative tolerance of 1e-9 so
/// a point on a shared edge belongs to both faces), the signed distance of `x` from its plane
/// (positive on the normal's side).
#[inline]
pub fn distance_along_normal(x: DVec3, a: DVec3, b: DVec3, c: DVec3, n: DVec3) -> Option<f64> {
    let d = (x - a).dot(n);
    let p = x - n * d;
    // barycentric signs of the foot point, edge by edge, against the face's winding
    let e0 = (b - a).cross(p - a).dot(n);
    let e1 = (c - b).cross(p - b).dot(n);
    let e2 = (a - c).cross(p - c).dot(n);
    let tol = -1e-9 * (b - a).length_squared().max((c - a).length_squared());
    (e0 >= tol && e1 >= tol && e2 >= tol).then_some(d)
}

/// The point of triangle `abc` closest to `p` (Ericson's regions), and whether it lies inside
/// the triangle (rather than on an edge or corner).
pub fn closest_point(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> (DVec3, bool) {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, false);
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return (b, false);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return (a + ab * (d1 / (d1 - d3)), false);
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return (c, false);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return (a + ac * (d2 / (d2 - d6)), false);
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return (b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6))), false);
    }
    let denom = 1.0 / (va + vb + vc);
    (a + ab * (vb * denom) + ac * (vc * denom), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cube() -> TriMesh {
        let p = (0..8).map(|i| DVec3::new((i & 1) as f64, ((i >> 1) & 1) as f64, ((i >> 2) & 1) as f64)).collect();
        let f = vec![
            [0, 2, 1],
            [1, 2, 3],
            [4, 5, 6],
            [5, 7, 6],
            [0, 1, 4],
            [1, 5, 4],
            [2, 6, 3],
            [3, 6, 7],
            [0, 4, 2],
            [2, 4, 6],
            [1, 3, 5],
            [3, 7, 5],
        ];
        TriMesh::new(p, f).unwrap()
    }

    #[test]
    fn cube_is_closed_with_unit_volume() {
        let m = cube();
        m.validate(true, 1e-9).unwrap();
        assert!((m.signed_volume() - 1.0).abs() < 1e-12);
        assert!((m.clone().flipped().signed_volume() + 1.0).abs() < 1e-12);
    }

    #[test]
    fn validation_names_the_problem() {
        let mut m = cube();
        m.faces[3].swap(1, 2);
        assert!(matches!(m.validate(true, 1e-9), Err(MeshError::Orientation { .. })));
        let mut fixed = m.clone();
        fixed.orient_outward();
        fixed.validate(true, 1e-9).unwrap();
        assert!((fixed.signed_volume() - 1.0).abs() < 1e-12);
        let mut open = cube();
        open.faces.pop();
        assert!(matches!(open.validate(true, 1e-9), Err(MeshError::OpenEdge { .. })));
        open.validate(false, 1e-9).unwrap();
        let mut flat = cube();
        flat.positions[7] = flat.positions[6];
        assert!(matches!(flat.validate(true, 1e-9), Err(MeshError::Degenerate { .. })));
        assert!(matches!(
            TriMesh::new(vec![DVec3::ZERO; 2], vec![[0, 1, 2]]),
            Err(MeshError::IndexOutOfRange { face: 0, index: 2, vertices: 2 })
        ));
    }
}
