//! A heightmap's surface mesh ([`erode::surface_mesh`]) written for engines and 3D tools, the
//! format by extension: glTF binary (`.glb`: positions, normals, UVs, 32-bit indices), Wavefront
//! OBJ (`v`, `vt`, `vn`, faces `a/a/a`), binary PLY (x y z, nx ny nz, s t, faces) and binary
//! STL (a facet normal per triangle). All in glTF's axes, y up, metres: Blender, Godot, Unity
//! and three.js import them standing (Blender turns y-up glTF and OBJ into its z-up).

use std::io::Write;
use std::path::Path;

use erode::surface_mesh::SurfaceMesh;

use crate::error::Error;

/// Surface mesh formats by extension.
pub const SURFACE_EXTENSIONS: &str = ".glb, .obj, .ply, .stl";

/// The formats a surface mesh is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SurfaceFormat {
    /// glTF 2.0 binary.
    Glb,
    /// Wavefront OBJ.
    Obj,
    /// PLY, binary little-endian.
    Ply,
    /// STL, binary.
    Stl,
}

impl SurfaceFormat {
    /// The format `path`'s extension names, or an error that lists them.
    pub fn from_path(path: &Path) -> Result<Self, Error> {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
        Ok(match ext.as_str() {
            "glb" => Self::Glb,
            "obj" => Self::Obj,
            "ply" => Self::Ply,
            "stl" => Self::Stl,
            _ => {
                return Err(Error::Output {
                    path: path.to_path_buf(),
                    reason: format!("unknown mesh format; use {SURFACE_EXTENSIONS}"),
                });
            }
        })
    }
}

/// Writes `mesh` to `path` atomically, in the format its extension names.
pub fn write_surface(path: &Path, mesh: &SurfaceMesh) -> Result<(), Error> {
    let format = SurfaceFormat::from_path(path)?;
    crate::write_atomic_with(path, |w| match format {
        SurfaceFormat::Glb => glb(w, mesh),
        SurfaceFormat::Obj => obj(w, mesh),
        SurfaceFormat::Ply => ply(w, mesh),
        SurfaceFormat::Stl => stl(w, mesh),
    })
}

fn floats(w: &mut dyn Write, values: &[f32]) -> std::io::Result<()> {
    for v in values {
        w.write_all(&v.to_le_bytes())?;
    }
    Ok(())
}

/// glTF 2.0 binary: one mesh, one node; positions, normals, UVs and indices in one buffer.
fn glb(w: &mut dyn Write, mesh: &SurfaceMesh) -> std::io::Result<()> {
    let n = mesh.positions.len();
    let (pos_len, nrm_len, uv_len, idx_len) = (12 * n, 12 * n, 8 * n, 4 * mesh.indices.len());
    let bin_len = pos_len + nrm_len + uv_len + idx_len;
    let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
    for p in &mesh.positions {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let json = serde_json::json!({
        "asset": { "version": "2.0", "generator": "erode" },
        "scene": 0,
        "scenes": [{ "nodes": [0] }],
        "nodes": [{ "mesh": 0, "name": "terrain" }],
        "meshes": [{ "name": "terrain", "primitives": [{
            "attributes": { "POSITION": 0, "NORMAL": 1, "TEXCOORD_0": 2 },
            "indices": 3,
            "mode": 4,
        }]}],
        "buffers": [{ "byteLength": bin_len }],
        "bufferViews": [
            { "buffer": 0, "byteOffset": 0, "byteLength": pos_len, "target": 34962 },
            { "buffer": 0, "byteOffset": pos_len, "byteLength": nrm_len, "target": 34962 },
            { "buffer": 0, "byteOffset": pos_len + nrm_len, "byteLength": uv_len, "target": 34962 },
            { "buffer": 0, "byteOffset": pos_len + nrm_len + uv_len, "byteLength": idx_len, "target": 34963 },
        ],
        "accessors": [
            { "bufferView": 0, "componentType": 5126, "count": n, "type": "VEC3", "min": lo, "max": hi },
            { "bufferView": 1, "componentType": 5126, "count": n, "type": "VEC3" },
            { "bufferView": 2, "componentType": 5126, "count": n, "type": "VEC2" },
            { "bufferView": 3, "componentType": 5125, "count": mesh.indices.len(), "type": "SCALAR" },
        ],
    });
    let mut text = json.to_string().into_bytes();
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    // every part is a multiple of 4 bytes
    let total = 12 + 8 + text.len() + 8 + bin_len;
    let too_big = || std::io::Error::other(format!("{total} bytes: a .glb holds at most 4 GiB; sample coarser"));
    let total32 = u32::try_from(total).map_err(|_| too_big())?;
    w.write_all(b"glTF")?;
    w.write_all(&2u32.to_le_bytes())?;
    w.write_all(&total32.to_le_bytes())?;
    w.write_all(&(text.len() as u32).to_le_bytes())?;
    w.write_all(b"JSON")?;
    w.write_all(&text)?;
    w.write_all(&(bin_len as u32).to_le_bytes())?;
    w.write_all(b"BIN\0")?;
    floats(w, mesh.positions.as_flattened())?;
    floats(w, mesh.normals.as_flattened())?;
    floats(w, mesh.uvs.as_flattened())?;
    for i in &mesh.indices {
        w.write_all(&i.to_le_bytes())?;
    }
    Ok(())
}

/// Wavefront OBJ: OBJ's texture v grows up the image, so `vt` carries 1 − v.
fn obj(w: &mut dyn Write, mesh: &SurfaceMesh) -> std::io::Result<()> {
    writeln!(w, "# erode terrain: x east, y up, z south, metres")?;
    for p in &mesh.positions {
        writeln!(w, "v {} {} {}", p[0], p[1], p[2])?;
    }
    for t in &mesh.uvs {
        writeln!(w, "vt {} {}", t[0], 1.0 - t[1])?;
    }
    for n in &mesh.normals {
        writeln!(w, "vn {} {} {}", n[0], n[1], n[2])?;
    }
    for f in mesh.indices.chunks_exact(3) {
        let (a, b, c) = (f[0] + 1, f[1] + 1, f[2] + 1);
        writeln!(w, "f {a}/{a}/{a} {b}/{b}/{b} {c}/{c}/{c}")?;
    }
    Ok(())
}

/// Binary PLY with normals and texture coordinates (s, t as Blender and MeshLab read them).
fn ply(w: &mut dyn Write, mesh: &SurfaceMesh) -> std::io::Result<()> {
    write!(
        w,
        "ply\nformat binary_little_endian 1.0\ncomment erode terrain: x east, y up, z south, metres\nelement vertex {}\n\
         property float x\nproperty float y\nproperty float z\nproperty float nx\nproperty float ny\nproperty float nz\n\
         property float s\nproperty float t\nelement face {}\nproperty list uchar uint vertex_indices\nend_header\n",
        mesh.positions.len(),
        mesh.triangles()
    )?;
    for ((p, n), t) in mesh.positions.iter().zip(&mesh.normals).zip(&mesh.uvs) {
        floats(w, p)?;
        floats(w, n)?;
        floats(w, &[t[0], 1.0 - t[1]])?;
    }
    for f in mesh.indices.chunks_exact(3) {
        w.write_all(&[3])?;
        for i in f {
            w.write_all(&i.to_le_bytes())?;
        }
    }
    Ok(())
}

/// Binary STL: separate triangles, each with its unit facet normal.
fn stl(w: &mut dyn Write, mesh: &SurfaceMesh) -> std::io::Result<()> {
    let mut header = [b' '; 80];
    let text = b"erode terrain: x east, y up, z south, metres";
    header[..text.len()].copy_from_slice(text);
    w.write_all(&header)?;
    let count = u32::try_from(mesh.triangles())
        .map_err(|_| std::io::Error::other("more triangles than a binary STL counts; sample coarser"))?;
    w.write_all(&count.to_le_bytes())?;
    for f in mesh.indices.chunks_exact(3) {
        let [a, b, c] = [0, 1, 2].map(|k| mesh.positions[f[k] as usize]);
        let (u, v) = ([b[0] - a[0], b[1] - a[1], b[2] - a[2]], [c[0] - a[0], c[1] - a[1], c[2] - a[2]]);
        let n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
        let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt().max(f32::MIN_POSITIVE);
        floats(w, &n.map(|x| x / len))?;
        for p in [a, b, c] {
            floats(w, &p)?;
        }
        w.write_all(&[0, 0])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use erode::grid::{CellSize, Grid};
    use erode::surface_mesh::surface_mesh;

    fn hill() -> SurfaceMesh {
        let g = Grid::from_fn(9, 7, CellSize::square(2.0), |r, c| {
            let (x, y) = (c as f32 - 4.0, r as f32 - 3.0);
            10.0 - 0.3 * (x * x + y * y)
        })
        .unwrap();
        surface_mesh(&erode::Heightmap::new(g).unwrap(), 1).unwrap()
    }

    #[test]
    fn a_glb_validates_as_gltf_with_y_up_and_unit_normals() {
        let mesh = hill();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.glb");
        write_surface(&p, &mesh).unwrap();
        let glb = gltf::Gltf::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        let prim = glb.meshes().next().unwrap().primitives().next().unwrap();
        let reader = prim.reader(|_| glb.blob.as_deref());
        let positions: Vec<[f32; 3]> = reader.read_positions().unwrap().collect();
        let normals: Vec<[f32; 3]> = reader.read_normals().unwrap().collect();
        let uvs: Vec<[f32; 2]> = reader.read_tex_coords(0).unwrap().into_f32().collect();
        let indices: Vec<u32> = reader.read_indices().unwrap().into_u32().collect();
        assert_eq!(
            (positions, normals.clone(), uvs, indices),
            (mesh.positions.clone(), mesh.normals.clone(), mesh.uvs.clone(), mesh.indices.clone())
        );
        // y up: the hill's top (10 m) is the largest y, at the centre
        let bounds = prim.bounding_box();
        assert_eq!(bounds.max[1], 10.0);
        assert_eq!((bounds.max[0], bounds.max[2]), (16.0, 12.0));
        for n in &normals {
            let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
            assert!((len - 1.0).abs() < 1e-5 && n[1] > 0.0, "{n:?}");
        }
    }

    #[test]
    fn obj_ply_and_stl_read_back_as_the_same_surface() {
        let mesh = hill();
        let dir = tempfile::tempdir().unwrap();
        for ext in ["obj", "ply", "stl"] {
            let p = dir.path().join(format!("t.{ext}"));
            write_surface(&p, &mesh).unwrap();
            let back = crate::mesh::read_mesh(&p).unwrap();
            assert_eq!(back.faces.len(), mesh.triangles(), "{ext}");
            assert_eq!(back.positions.len(), mesh.positions.len(), "{ext}");
            // STL's separate triangles are welded back in the order they come
            let key = |v: [f64; 3]| v.map(|x| (x * 1e4).round() as i64);
            let mut got: Vec<_> = back.positions.iter().map(|p| key([p.x, p.y, p.z])).collect();
            let mut want: Vec<_> = mesh.positions.iter().map(|p| key(p.map(f64::from))).collect();
            if ext == "stl" {
                got.sort_unstable();
                want.sort_unstable();
            } else {
                let faces: Vec<u32> = back.faces.iter().flatten().copied().collect();
                assert_eq!(faces, mesh.indices, "{ext}");
            }
            assert_eq!(got, want, "{ext}");
        }
        let err = write_surface(&dir.path().join("t.fbx"), &mesh).unwrap_err().to_string();
        assert!(err.contains("t.fbx") && err.contains(".glb, .obj, .ply, .stl"), "{err}");
    }
}
