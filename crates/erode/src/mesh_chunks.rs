//! A surface mesh cut into square chunks of cells, for engines that stream, cull or level-of-detail
//! a large terrain piece by piece (and for files that glTF's 4 GB would not hold whole). Each
//! triangle goes to the chunk its centroid lies in, and each chunk keeps the vertices its
//! triangles use, as they are: the chunks meet without cracks, with the same normals on both
//! sides of a border, and their UVs still span the whole map (one texture over all of them).
//! Positions stay in the map's frame ([`crate::surface_mesh`]), so chunks imported together sit
//! where they belong.

use std::collections::HashMap;

use crate::grid::CellSize;
use crate::surface_mesh::SurfaceMesh;

/// A mesh's triangles sorted into square chunks of cells.
#[derive(Clone, Debug)]
pub struct Chunks {
    /// Chunks across (west to east).
    pub across: usize,
    /// Chunks down (north to south).
    pub down: usize,
    /// A chunk's side, cells.
    pub cells: usize,
    /// Each chunk's triangles (indices into the mesh's triangles), row by row from the north-west.
    triangles: Vec<Vec<u32>>,
}

impl Chunks {
    /// The chunks of `cells` x `cells` cells of `mesh`, the surface of a `width` x `height` map
    /// of cells `cell`; `None` when `cells` is 0.
    pub fn new(mesh: &SurfaceMesh, cell: CellSize, width: usize, height: usize, cells: usize) -> Option<Self> {
        if cells == 0 {
            return None;
        }
        // the map spans width - 1 squares across; a last partial chunk takes the rest
        let across = (width.saturating_sub(1)).div_ceil(cells).max(1);
        let down = (height.saturating_sub(1)).div_ceil(cells).max(1);
        let mut triangles = vec![Vec::new(); across * down];
        for (t, tri) in mesh.indices.chunks_exact(3).enumerate() {
            let (mut x, mut z) = (0.0f64, 0.0f64);
            for &v in tri {
                let p = mesh.positions[v as usize];
                x += f64::from(p[0]);
                z += f64::from(p[2]);
            }
            let column = ((x / 3.0 / cell.x) / cells as f64).floor().clamp(0.0, (across - 1) as f64) as usize;
            let row = ((z / 3.0 / cell.y) / cells as f64).floor().clamp(0.0, (down - 1) as f64) as usize;
            triangles[row * across + column].push(t as u32);
        }
        Some(Self { across, down, cells, triangles })
    }

    /// The number of chunks, empty ones included.
    pub fn len(&self) -> usize {
        self.triangles.len()
    }

    /// Whether there are none (never: a map has at least one chunk).
    pub fn is_empty(&self) -> bool {
        self.triangles.is_empty()
    }

    /// Chunk `k`'s (row, column), from the north-west.
    pub fn position(&self, k: usize) -> (usize, usize) {
        (k / self.across, k % self.across)
    }

    /// The triangles of chunk `k`.
    pub fn triangles(&self, k: usize) -> usize {
        self.triangles.get(k).map_or(0, Vec::len)
    }

    /// Chunk `k` of `mesh` (the mesh these chunks were made from) as a mesh of its own: its
    /// triangles, in their order, and the vertices they use, in the order first used. `None`
    /// when no triangle falls in it (all nodata).
    pub fn mesh(&self, mesh: &SurfaceMesh, k: usize) -> Option<SurfaceMesh> {
        let tris = self.triangles.get(k).filter(|t| !t.is_empty())?;
        let mut out = SurfaceMesh { positions: Vec::new(), normals: Vec::new(), uvs: Vec::new(), indices: Vec::new() };
        let mut index: HashMap<u32, u32> = HashMap::with_capacity(tris.len());
        for &t in tris {
            for &v in &mesh.indices[t as usize * 3..t as usize * 3 + 3] {
                let i = *index.entry(v).or_insert_with(|| {
                    let i = out.positions.len() as u32;
                    out.positions.push(mesh.positions[v as usize]);
                    out.normals.push(mesh.normals[v as usize]);
                    out.uvs.push(mesh.uvs[v as usize]);
                    i
                });
                out.indices.push(i);
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adaptive_mesh::adaptive_mesh_in_chunks;
    use crate::grid::{Grid, Heightmap};
    use crate::surface_mesh::surface_mesh;

    fn hills(w: usize, h: usize) -> Heightmap {
        let g = Grid::from_fn(w, h, CellSize { x: 2.0, y: 3.0 }, |r, c| {
            (r as f32 * 0.37).sin() * 4.0 + (c as f32 * 0.21).cos() * 3.0 + (r * c) as f32 * 0.01
        })
        .unwrap();
        Heightmap::new(g).unwrap()
    }

    /// Each chunk's triangles as position triples, all chunks together, sorted.
    fn triangles_of(meshes: &[SurfaceMesh]) -> Vec<[[u32; 3]; 3]> {
        let mut all: Vec<[[u32; 3]; 3]> = meshes
            .iter()
            .flat_map(|m| {
                m.indices.chunks(3).map(move |t| std::array::from_fn(|k| m.positions[t[k] as usize].map(f32::to_bits)))
            })
            .collect();
        all.sort();
        all
    }

    #[test]
    fn chunks_hold_every_triangle_once_with_the_whole_meshs_vertices() {
        let map = hills(37, 29);
        let whole = surface_mesh(&map, 1).unwrap();
        let chunks = Chunks::new(&whole, map.heights.cell_size(), 37, 29, 16).unwrap();
        // 36 squares across in chunks of 16: 3; 28 down: 2
        assert_eq!((chunks.across, chunks.down, chunks.len()), (3, 2, 6));
        let parts: Vec<SurfaceMesh> = (0..chunks.len()).filter_map(|k| chunks.mesh(&whole, k)).collect();
        assert_eq!(parts.len(), 6);
        assert_eq!(triangles_of(&parts), triangles_of(std::slice::from_ref(&whole)));
        // a vertex on a border is the same in both chunks: position, normal and UV
        let key = |m: &SurfaceMesh, i: usize| {
            (m.positions[i].map(f32::to_bits), m.normals[i].map(f32::to_bits), m.uvs[i].map(f32::to_bits))
        };
        let all: std::collections::HashSet<_> = (0..whole.positions.len()).map(|i| key(&whole, i)).collect();
        for p in &parts {
            assert!((0..p.positions.len()).all(|i| all.contains(&key(p, i))));
        }
        // chunk (0, 1) spans cells 16..=32 across and 0..=16 down
        let (row, column) = chunks.position(1);
        assert_eq!((row, column), (0, 1));
        let xs: Vec<f32> = parts[1].positions.iter().map(|p| p[0] / 2.0).collect();
        let zs: Vec<f32> = parts[1].positions.iter().map(|p| p[2] / 3.0).collect();
        assert_eq!(xs.iter().copied().fold(f32::INFINITY, f32::min), 16.0);
        assert_eq!(xs.iter().copied().fold(0.0, f32::max), 32.0);
        assert_eq!(zs.iter().copied().fold(0.0, f32::max), 16.0);
    }

    #[test]
    fn an_adaptive_mesh_in_chunks_has_no_triangle_across_a_border() {
        let map = hills(65, 65);
        let mesh = adaptive_mesh_in_chunks(&map, 0.5, 16).unwrap();
        for t in mesh.indices.chunks(3) {
            let cells = |k: usize, axis: usize, size: f32| mesh.positions[t[k] as usize][axis] / size;
            for (axis, size) in [(0, 2.0), (2, 3.0)] {
                let lo = (0..3).map(|k| cells(k, axis, size)).fold(f32::INFINITY, f32::min);
                let hi = (0..3).map(|k| cells(k, axis, size)).fold(0.0, f32::max);
                let first_line = ((lo / 16.0).floor() + 1.0) * 16.0;
                assert!(first_line >= hi, "a triangle from {lo} to {hi} crosses the border at {first_line}");
            }
        }
        // without chunks, the flat-enough middle gets triangles larger than a chunk
        let free = crate::adaptive_mesh::adaptive_mesh(&map, 0.5).unwrap();
        assert!(free.triangles() <= mesh.triangles());
        let chunks = Chunks::new(&mesh, map.heights.cell_size(), 65, 65, 16).unwrap();
        let parts: Vec<SurfaceMesh> = (0..chunks.len()).filter_map(|k| chunks.mesh(&mesh, k)).collect();
        assert_eq!(parts.len(), 16);
        assert_eq!(parts.iter().map(SurfaceMesh::triangles).sum::<usize>(), mesh.triangles());
    }
}
