//! A heightmap's surface as a triangle mesh for engines and 3D tools, in glTF's axes: x east,
//! y up, z south (right-handed), metres, the north-west cell's centre at the origin. One vertex
//! per sampled cell (every `step`-th row and column, and always the last, so the mesh spans the
//! whole map), two triangles per square of four valid cells, counter-clockwise seen from above;
//! unit normals from central differences of the sampled heights (one-sided at edges and beside
//! nodata); UVs across the map, `(0, 0)` at the north-west corner (glTF's convention: v grows
//! down the image). Squares touching a nodata cell are left out.

use crate::grid::Heightmap;

/// A surface mesh: per-vertex positions (m), normals (unit) and UVs, and triangles as vertex
/// indices.
#[derive(Clone, Debug, PartialEq)]
pub struct SurfaceMesh {
    /// x east, y up (the height), z south, metres.
    pub positions: Vec<[f32; 3]>,
    /// Unit normals, pointing up out of the surface.
    pub normals: Vec<[f32; 3]>,
    /// Texture coordinates: u east, v south, 0..1 across the map.
    pub uvs: Vec<[f32; 2]>,
    /// Three vertex indices a triangle, counter-clockwise seen from above (+y).
    pub indices: Vec<u32>,
}

impl SurfaceMesh {
    /// Triangles.
    pub fn triangles(&self) -> usize {
        self.indices.len() / 3
    }
}

/// The sampled rows or columns of `n`: every `step`-th from 0, and the last.
fn samples(n: usize, step: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).step_by(step.max(1)).collect();
    if v.last() != Some(&(n - 1)) {
        v.push(n - 1);
    }
    v
}

/// The smallest step (>= 1) whose mesh of a `width` x `height` map has at most `triangles`
/// triangles (with no nodata), or `None` when even a 2 x 2 sampling has more.
pub fn step_for(width: usize, height: usize, triangles: u64) -> Option<usize> {
    let count = |step: usize| {
        let (c, r) = (samples(width, step).len() as u64, samples(height, step).len() as u64);
        2 * (c - 1) * (r - 1)
    };
    let top = width.max(height).max(1);
    // triangles fall as the step grows: the first step that fits
    let mut lo = 1;
    if count(lo) <= triangles {
        return Some(lo);
    }
    if count(top) > triangles {
        return None;
    }
    let mut hi = top;
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if count(mid) <= triangles { hi = mid } else { lo = mid }
    }
    Some(hi)
}

/// Why a surface mesh cannot be made.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SurfaceMeshError {
    /// A mesh needs two rows and two columns.
    #[error("a {width} x {height} map has no square of cells to mesh (at least 2 x 2)")]
    TooSmall {
        /// Columns.
        width: usize,
        /// Rows.
        height: usize,
    },
    /// More vertices than 32-bit indices reach.
    #[error("{vertices} vertices is more than 32-bit indices reach; sample coarser (a larger step)")]
    TooManyVertices {
        /// The vertices the sampling asks for.
        vertices: u64,
    },
}

/// The surface of `map`, every `step`-th cell (1: every cell).
pub fn surface_mesh(map: &Heightmap, step: usize) -> Result<SurfaceMesh, SurfaceMeshError> {
    let h = &map.heights;
    let (width, height) = (h.width(), h.height());
    if width < 2 || height < 2 {
        return Err(SurfaceMeshError::TooSmall { width, height });
    }
    let (cols, rows) = (samples(width, step), samples(height, step));
    let (nc, nr) = (cols.len(), rows.len());
    let vertices = (nc * nr) as u64;
    if vertices > u64::from(u32::MAX) {
        return Err(SurfaceMeshError::TooManyVertices { vertices });
    }
    let cell = h.cell_size();
    let at = |r: usize, c: usize| h.as_slice()[r * width + c];
    let valid = |r: usize, c: usize| !map.is_nodata(r * width + c);
    // slope along one axis at sample k of `idx` (rows or columns), from the valid neighbours
    let slope =
        |k: usize, idx: &[usize], spacing: f64, height_at: &dyn Fn(usize) -> f32, ok: &dyn Fn(usize) -> bool| {
            let before = if k > 0 && ok(idx[k - 1]) { idx[k - 1] } else { idx[k] };
            let after = if k + 1 < idx.len() && ok(idx[k + 1]) { idx[k + 1] } else { idx[k] };
            if after == before {
                return 0.0;
            }
            (f64::from(height_at(after)) - f64::from(height_at(before))) / ((after - before) as f64 * spacing)
        };
    let lowest = h
        .as_slice()
        .iter()
        .enumerate()
        .filter(|(i, _)| !map.is_nodata(*i))
        .map(|(_, &v)| v)
        .fold(f32::INFINITY, f32::min);
    let mut mesh = SurfaceMesh {
        positions: Vec::with_capacity(nc * nr),
        normals: Vec::with_capacity(nc * nr),
        uvs: Vec::with_capacity(nc * nr),
        indices: Vec::new(),
    };
    for (kr, &r) in rows.iter().enumerate() {
        for (kc, &c) in cols.iter().enumerate() {
            // a nodata vertex belongs to no triangle; it sits at the lowest valid height
            let y = if valid(r, c) { at(r, c) } else { lowest };
            mesh.positions.push([(c as f64 * cell.x) as f32, y, (r as f64 * cell.y) as f32]);
            let sx = slope(kc, &cols, cell.x, &|cc| at(r, cc), &|cc| valid(r, cc));
            let sz = slope(kr, &rows, cell.y, &|rr| at(rr, c), &|rr| valid(rr, c));
            let len = (sx * sx + 1.0 + sz * sz).sqrt();
            mesh.normals.push([(-sx / len) as f32, (1.0 / len) as f32, (-sz / len) as f32]);
            mesh.uvs.push([c as f32 / (width - 1) as f32, r as f32 / (height - 1) as f32]);
        }
    }
    for kr in 0..nr - 1 {
        for kc in 0..nc - 1 {
            let (r0, r1, c0, c1) = (rows[kr], rows[kr + 1], cols[kc], cols[kc + 1]);
            if !(valid(r0, c0) && valid(r0, c1) && valid(r1, c0) && valid(r1, c1)) {
                continue;
            }
            let v = |kr: usize, kc: usize| (kr * nc + kc) as u32;
            let (a, b, c, d) = (v(kr, kc), v(kr, kc + 1), v(kr + 1, kc), v(kr + 1, kc + 1));
            mesh.indices.extend_from_slice(&[a, c, b, b, c, d]);
        }
    }
    Ok(mesh)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{CellSize, Grid};

    fn map(w: usize, h: usize, cell: f64, f: impl Fn(usize, usize) -> f32) -> Heightmap {
        Heightmap::new(Grid::from_fn(w, h, CellSize::square(cell), f).unwrap()).unwrap()
    }

    fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
        [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    }

    #[test]
    fn a_tilted_plane_meshes_up_facing_with_its_slope_in_the_normals() {
        // rises 0.5 m per 2 m cell eastwards, 0.25 southwards
        let m = map(5, 4, 2.0, |r, c| 0.5 * c as f32 + 0.25 * r as f32);
        let mesh = surface_mesh(&m, 1).unwrap();
        assert_eq!(mesh.positions.len(), 20);
        assert_eq!(mesh.triangles(), 2 * 4 * 3);
        assert_eq!(mesh.positions[5 + 2], [4.0, 1.25, 2.0], "row 1, column 2");
        for t in mesh.indices.chunks(3) {
            let p = |k: usize| mesh.positions[t[k] as usize];
            let sub = |a: [f32; 3], b: [f32; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
            // counter-clockwise seen from above: the face's normal points up
            let n = cross(sub(p(1), p(0)), sub(p(2), p(0)));
            assert!(n[1] > 0.0, "{t:?}: {n:?}");
        }
        let want = {
            let (sx, sz) = (0.25f64, 0.125f64);
            let l = (sx * sx + 1.0 + sz * sz).sqrt();
            [-sx / l, 1.0 / l, -sz / l]
        };
        for n in &mesh.normals {
            for k in 0..3 {
                assert!((f64::from(n[k]) - want[k]).abs() < 1e-6, "{n:?} vs {want:?}");
            }
        }
        assert_eq!(mesh.uvs[0], [0.0, 0.0]);
        assert_eq!(mesh.uvs[19], [1.0, 1.0]);
    }

    #[test]
    fn a_step_samples_every_nth_cell_and_the_last_and_fits_a_budget() {
        let m = map(10, 7, 1.0, |r, c| (r * c) as f32);
        let mesh = surface_mesh(&m, 4).unwrap();
        // columns 0, 4, 8, 9; rows 0, 4, 6
        assert_eq!(mesh.positions.len(), 12);
        assert_eq!(mesh.triangles(), 2 * 3 * 2);
        assert_eq!(mesh.positions[3], [9.0, 0.0, 0.0]);
        assert_eq!(mesh.positions[11], [9.0, 54.0, 6.0]);
        assert_eq!(step_for(10, 7, 1_000), Some(1));
        assert_eq!(step_for(10, 7, 12), Some(3));
        assert_eq!(step_for(10, 7, 11), Some(5));
        assert_eq!(step_for(10, 7, 1), None);
        for budget in [2, 5, 20, 50, 200] {
            let step = step_for(1000, 600, budget).unwrap_or(1000);
            let got = surface_mesh(&map(1000, 600, 1.0, |_, _| 0.0), step).unwrap().triangles();
            assert!(got as u64 <= budget.max(2), "{budget}: {got} at step {step}");
        }
    }

    #[test]
    fn squares_touching_nodata_are_left_out() {
        let heights = Grid::from_fn(4, 4, CellSize::square(1.0), |_, _| 1.0).unwrap();
        let mut mask = vec![false; 16];
        mask[5] = true; // row 1, column 1
        let m = Heightmap::with_nodata(heights, Some(mask)).unwrap();
        let mesh = surface_mesh(&m, 1).unwrap();
        // of 9 squares, the 4 around cell (1, 1) go
        assert_eq!(mesh.triangles(), 2 * 5);
        assert!(mesh.indices.iter().all(|&i| i != 5));
        assert!(mesh.normals.iter().all(|n| (n[0] * n[0] + n[1] * n[1] + n[2] * n[2] - 1.0).abs() < 1e-6));
        assert_eq!(
            surface_mesh(&map(1, 5, 1.0, |_, _| 0.0), 1),
            Err(SurfaceMeshError::TooSmall { width: 1, height: 5 })
        );
    }
}
