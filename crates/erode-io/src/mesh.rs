//! Triangle meshes: read OBJ, PLY (ASCII and binary) and STL (ASCII and binary); write OBJ, PLY
//! (binary, with per-vertex `erosion` and `deposition` in m³) and glTF (`.glb`, the same two as
//! custom attributes `_EROSION`, `_DEPOSITION`, and vertex normals; turned from the simulation's
//! z up to glTF's y up, `(x, y, z) -> (x, z, -y)`, so engines import it standing). Polygons are split into fans; STL's separate
//! triangles are welded where corners coincide exactly. What is read is checked by
//! [`erode::models::sph::TriMesh::new`] (indices, finite coordinates); the caller validates the
//! rest (closed, oriented, no degenerate face) for its use.

use std::collections::HashMap;
use std::path::Path;

use erode::models::sph::TriMesh;
use glam::DVec3;

use crate::error::{Error, FormatError, corrupt, unsupported};

/// Mesh formats by extension.
pub const MESH_EXTENSIONS: &str = ".obj, .ply, .stl (read); .obj, .ply, .glb (write)";

/// Most vertices or faces a file may claim.
const MAX_ELEMENTS: u64 = 50_000_000;

/// Longest mesh file read, bytes: room for `MAX_ELEMENTS` faces in a binary STL (50 bytes
/// each) or vertices and faces in a text OBJ or PLY (about 40 bytes a line).
pub const MAX_MESH_BYTES: u64 = 4 << 30;

/// The mesh formats erode reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeshFormat {
    /// Wavefront OBJ (text; polygons fanned into triangles).
    Obj,
    /// PLY, text or binary.
    Ply,
    /// STL, text or binary (separate triangles, welded).
    Stl,
}

impl MeshFormat {
    /// The format a file's extension names, if it is one erode reads.
    pub fn from_path(path: &Path) -> Option<Self> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "obj" => Some(Self::Obj),
            "ply" => Some(Self::Ply),
            "stl" => Some(Self::Stl),
            _ => None,
        }
    }
}

/// Reads a mesh, the format chosen by the extension.
pub fn read_mesh(path: &Path) -> Result<TriMesh, Error> {
    let Some(format) = MeshFormat::from_path(path) else {
        return Err(Error::Output {
            path: path.to_path_buf(),
            reason: format!("unknown mesh format; use {MESH_EXTENSIONS}"),
        });
    };
    let bytes = crate::read_file(path, MAX_MESH_BYTES, |len| {
        format!(
            "the file is {len} bytes, more than a mesh of at most {MAX_ELEMENTS} vertices and faces takes \
             ({MAX_MESH_BYTES} bytes)"
        )
    })?;
    decode_mesh(&bytes, format).map_err(|e| Error::format(path, e))
}

/// Decodes a mesh from the bytes of a file of `format`: every header's claims are checked
/// against the bytes before anything is allocated for them.
pub fn decode_mesh(bytes: &[u8], format: MeshFormat) -> Result<TriMesh, FormatError> {
    let (positions, faces) = match format {
        MeshFormat::Obj => decode_obj(bytes)?,
        MeshFormat::Ply => decode_ply(bytes)?,
        MeshFormat::Stl => decode_stl(bytes)?,
    };
    TriMesh::new(positions, faces).map_err(|e| corrupt("mesh", e))
}

/// Per-vertex values written with a mesh, m³.
#[derive(Clone, Copy, Debug, Default)]
pub struct VertexValues<'a> {
    /// Volume eroded at each vertex.
    pub erosion: Option<&'a [f64]>,
    /// Volume deposited at each vertex.
    pub deposition: Option<&'a [f64]>,
}

/// Writes a mesh atomically, the format chosen by the extension (`.obj`, `.ply`, `.glb`).
pub fn write_mesh(path: &Path, mesh: &TriMesh, values: VertexValues) -> Result<(), Error> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    let bytes = match ext.as_str() {
        "obj" => encode_obj(mesh, values),
        "ply" => encode_ply(mesh, values),
        "glb" => encode_glb(mesh, values),
        _ => {
            return Err(Error::Output {
                path: path.to_path_buf(),
                reason: format!("unknown mesh format; use {MESH_EXTENSIONS}"),
            });
        }
    };
    crate::write_atomic(path, &bytes)
}

/// Writes particles as a PLY point cloud: position (m), velocity (m/s), carried sediment (m³).
pub fn write_particles(path: &Path, positions: &[DVec3], velocities: &[DVec3], sediment: &[f64]) -> Result<(), Error> {
    let mut out = format!(
        "ply\nformat binary_little_endian 1.0\ncomment erode SPH particles\nelement vertex {}\nproperty float x\nproperty float y\nproperty float z\nproperty float vx\nproperty float vy\nproperty float vz\nproperty float sediment\nend_header\n",
        positions.len()
    )
    .into_bytes();
    for ((p, v), s) in positions.iter().zip(velocities).zip(sediment) {
        for x in [p.x, p.y, p.z, v.x, v.y, v.z, *s] {
            out.extend_from_slice(&(x as f32).to_le_bytes());
        }
    }
    crate::write_atomic(path, &out)
}

type Decoded = (Vec<DVec3>, Vec<[u32; 3]>);

fn fan(poly: &[u32], faces: &mut Vec<[u32; 3]>) {
    for k in 1..poly.len().saturating_sub(1) {
        faces.push([poly[0], poly[k], poly[k + 1]]);
    }
}

fn decode_obj(bytes: &[u8]) -> Result<Decoded, FormatError> {
    if bytes.is_empty() {
        return Err(FormatError::Empty);
    }
    let text = std::str::from_utf8(bytes).map_err(|e| corrupt("OBJ", e))?;
    let (mut positions, mut faces) = (Vec::new(), Vec::new());
    for (no, line) in text.lines().enumerate() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("v") => {
                let c: Vec<f64> = words
                    .take(3)
                    .map(str::parse)
                    .collect::<Result<_, _>>()
                    .map_err(|e| corrupt("OBJ", format!("line {}: {e}", no + 1)))?;
                if c.len() != 3 {
                    return Err(corrupt("OBJ", format!("line {}: a vertex needs x y z", no + 1)));
                }
                positions.push(DVec3::new(c[0], c[1], c[2]));
            }
            Some("f") => {
                let mut poly = Vec::new();
                for w in words {
                    let first = w.split('/').next().unwrap_or("");
                    let i: i64 = first.parse().map_err(|e| corrupt("OBJ", format!("line {}: {e}", no + 1)))?;
                    let idx = if i > 0 { i - 1 } else { positions.len() as i64 + i };
                    if idx < 0 || idx >= positions.len() as i64 {
                        return Err(corrupt("OBJ", format!("line {}: vertex {i} does not exist (yet)", no + 1)));
                    }
                    poly.push(idx as u32);
                }
                if poly.len() < 3 {
                    return Err(corrupt("OBJ", format!("line {}: a face needs 3 vertices", no + 1)));
                }
                fan(&poly, &mut faces);
            }
            _ => {}
        }
        if positions.len() as u64 > MAX_ELEMENTS || faces.len() as u64 > MAX_ELEMENTS {
            return Err(corrupt("OBJ", format!("more than {MAX_ELEMENTS} vertices or faces")));
        }
    }
    Ok((positions, faces))
}

fn weld(triangles: Vec<[DVec3; 3]>) -> Decoded {
    let mut index: HashMap<[u64; 3], u32> = HashMap::new();
    let mut positions = Vec::new();
    let faces = triangles
        .into_iter()
        .map(|t| {
            t.map(|p| {
                *index.entry([p.x.to_bits(), p.y.to_bits(), p.z.to_bits()]).or_insert_with(|| {
                    positions.push(p);
                    (positions.len() - 1) as u32
                })
            })
        })
        .collect();
    (positions, faces)
}

fn decode_stl(bytes: &[u8]) -> Result<Decoded, FormatError> {
    if bytes.is_empty() {
        return Err(FormatError::Empty);
    }
    // binary: 80-byte header, count, 50 bytes per triangle (an ASCII file never matches the size)
    if bytes.len() >= 84 {
        let count = u64::from(u32::from_le_bytes([bytes[80], bytes[81], bytes[82], bytes[83]]));
        if 84 + 50 * count == bytes.len() as u64 {
            if count > MAX_ELEMENTS {
                return Err(corrupt("STL", format!("{count} triangles is more than {MAX_ELEMENTS}")));
            }
            let f = |o: usize| f64::from(f32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]));
            let tris = (0..count as usize)
                .map(|t| {
                    let o = 84 + 50 * t + 12;
                    [0, 1, 2].map(|k| DVec3::new(f(o + 12 * k), f(o + 12 * k + 4), f(o + 12 * k + 8)))
                })
                .collect();
            return Ok(weld(tris));
        }
    }
    let binary_size = |what: &str| -> FormatError {
        let count = u32::from_le_bytes([bytes[80], bytes[81], bytes[82], bytes[83]]);
        let want = 84 + 50 * u64::from(count);
        FormatError::Truncated(format!(
            "{what}: a binary STL of {count} triangles (its count) is {want} bytes, the file {}",
            bytes.len()
        ))
    };
    let ascii = bytes.trim_ascii_start().starts_with(b"solid");
    let Ok(text) = std::str::from_utf8(bytes) else {
        // not text: a binary file whose count does not fit its length
        return Err(if bytes.len() >= 84 && !ascii {
            binary_size("not ASCII")
        } else {
            corrupt("STL", "neither a binary STL of the right size nor ASCII")
        });
    };
    if !ascii {
        return Err(if bytes.len() >= 84 {
            binary_size("not an ASCII STL (it would start with `solid`)")
        } else {
            corrupt("STL", "an ASCII STL starts with `solid`")
        });
    }
    let mut corners = Vec::new();
    for (no, line) in text.lines().enumerate() {
        let mut w = line.split_whitespace();
        if w.next() == Some("vertex") {
            let c: Vec<f64> = w
                .take(3)
                .map(str::parse)
                .collect::<Result<_, _>>()
                .map_err(|e| corrupt("STL", format!("line {}: {e}", no + 1)))?;
            if c.len() != 3 {
                return Err(corrupt("STL", format!("line {}: a vertex needs x y z", no + 1)));
            }
            corners.push(DVec3::new(c[0], c[1], c[2]));
        }
    }
    if corners.len() % 3 != 0 {
        return Err(corrupt("STL", format!("{} vertices is not a whole number of triangles", corners.len())));
    }
    Ok(weld(corners.chunks(3).map(|c| [c[0], c[1], c[2]]).collect()))
}

#[derive(Clone, Copy, PartialEq)]
enum Encoding {
    Ascii,
    Little,
    Big,
}

fn scalar_size(t: &str) -> Option<usize> {
    Some(match t {
        "char" | "uchar" | "int8" | "uint8" => 1,
        "short" | "ushort" | "int16" | "uint16" => 2,
        "int" | "uint" | "float" | "int32" | "uint32" | "float32" => 4,
        "double" | "float64" => 8,
        _ => return None,
    })
}

enum Property {
    Scalar { name: String, ty: String },
    List { name: String, count: String, item: String },
}

struct Element {
    name: String,
    count: u64,
    properties: Vec<Property>,
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    enc: Encoding,
    words: std::str::SplitWhitespace<'a>,
}

impl Reader<'_> {
    fn next(&mut self, ty: &str) -> Result<f64, FormatError> {
        if self.enc == Encoding::Ascii {
            let w = self.words.next().ok_or_else(|| FormatError::Truncated("PLY data ends early".into()))?;
            return w.parse::<f64>().map_err(|e| corrupt("PLY", format!("`{w}`: {e}")));
        }
        let size = scalar_size(ty).ok_or_else(|| unsupported("PLY", format!("property type {ty}")))?;
        let b = self
            .bytes
            .get(self.pos..self.pos + size)
            .ok_or_else(|| FormatError::Truncated("PLY data ends early".into()))?;
        self.pos += size;
        let mut a = [0u8; 8];
        a[..size].copy_from_slice(b);
        if self.enc == Encoding::Big {
            a[..size].reverse();
        }
        Ok(match ty {
            "char" | "int8" => f64::from(a[0] as i8),
            "uchar" | "uint8" => f64::from(a[0]),
            "short" | "int16" => f64::from(i16::from_le_bytes([a[0], a[1]])),
            "ushort" | "uint16" => f64::from(u16::from_le_bytes([a[0], a[1]])),
            "int" | "int32" => f64::from(i32::from_le_bytes([a[0], a[1], a[2], a[3]])),
            "uint" | "uint32" => f64::from(u32::from_le_bytes([a[0], a[1], a[2], a[3]])),
            "float" | "float32" => f64::from(f32::from_le_bytes([a[0], a[1], a[2], a[3]])),
            _ => f64::from_le_bytes(a),
        })
    }
}

fn decode_ply(bytes: &[u8]) -> Result<Decoded, FormatError> {
    if bytes.is_empty() {
        return Err(FormatError::Empty);
    }
    let end = bytes.windows(10).position(|w| w == b"end_header").ok_or_else(|| corrupt("PLY", "no end_header"))?;
    let header = std::str::from_utf8(&bytes[..end]).map_err(|e| corrupt("PLY", e))?;
    let mut body = end + 10;
    while body < bytes.len() && (bytes[body] == b'\r' || bytes[body] == b'\n') {
        body += 1;
        if bytes[body - 1] == b'\n' {
            break;
        }
    }
    let mut lines = header.lines();
    if lines.next().map(str::trim) != Some("ply") {
        return Err(corrupt("PLY", "the file does not start with `ply`"));
    }
    let mut enc = None;
    let mut elements: Vec<Element> = Vec::new();
    for line in lines {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["format", f, _] => {
                enc = Some(match *f {
                    "ascii" => Encoding::Ascii,
                    "binary_little_endian" => Encoding::Little,
                    "binary_big_endian" => Encoding::Big,
                    other => return Err(unsupported("PLY", format!("format {other}"))),
                })
            }
            ["element", name, count] => {
                let count: u64 = count.parse().map_err(|e| corrupt("PLY", format!("element {name}: {e}")))?;
                if count > MAX_ELEMENTS {
                    return Err(corrupt(
                        "PLY",
                        format!("element {name} claims {count} items, more than {MAX_ELEMENTS}"),
                    ));
                }
                elements.push(Element { name: name.to_string(), count, properties: Vec::new() });
            }
            ["property", "list", count, item, name] => elements
                .last_mut()
                .ok_or_else(|| corrupt("PLY", "property before element"))?
                .properties
                .push(Property::List { name: name.to_string(), count: count.to_string(), item: item.to_string() }),
            ["property", ty, name] => elements
                .last_mut()
                .ok_or_else(|| corrupt("PLY", "property before element"))?
                .properties
                .push(Property::Scalar { name: name.to_string(), ty: ty.to_string() }),
            _ => {}
        }
    }
    let enc = enc.ok_or_else(|| corrupt("PLY", "no format line"))?;
    // the counts against the file before anything is allocated: every item of an element
    // takes at least its properties' bytes (binary; a list at least its count) or a character
    // and a space each (ASCII), so a header claiming more than the file holds is refused here
    // (forty `element vertex 50000000` lines in 992 bytes asked for 12.9 GB)
    let left = bytes.len().saturating_sub(body) as u64;
    let mut needed = 0u64;
    for el in &elements {
        if el.count > 0 && el.properties.is_empty() {
            return Err(corrupt("PLY", format!("element {} claims {} items with no properties", el.name, el.count)));
        }
        let per_item: u64 = el
            .properties
            .iter()
            .map(|p| {
                let ty = match p {
                    Property::Scalar { ty, .. } => ty,
                    Property::List { count, .. } => count,
                };
                if enc == Encoding::Ascii { 2 } else { scalar_size(ty).unwrap_or(1) as u64 }
            })
            .sum();
        needed = needed.saturating_add(el.count.saturating_mul(per_item));
    }
    // (an ASCII file's last value needs no space after it)
    if needed > left + u64::from(enc == Encoding::Ascii) {
        return Err(FormatError::Truncated(format!(
            "the header's elements need at least {needed} bytes, the file holds {left} after it"
        )));
    }
    let text =
        if enc == Encoding::Ascii { std::str::from_utf8(&bytes[body..]).map_err(|e| corrupt("PLY", e))? } else { "" };
    let mut r = Reader { bytes, pos: body, enc, words: text.split_whitespace() };
    let (mut positions, mut faces) = (Vec::new(), Vec::new());
    for el in &elements {
        for _ in 0..el.count {
            let mut p = DVec3::ZERO;
            for prop in &el.properties {
                match prop {
                    Property::Scalar { name, ty } => {
                        let v = r.next(ty)?;
                        match name.as_str() {
                            "x" => p.x = v,
                            "y" => p.y = v,
                            "z" => p.z = v,
                            _ => {}
                        }
                    }
                    Property::List { name, count, item } => {
                        let n = r.next(count)?;
                        if !(0.0..=1024.0).contains(&n) {
                            return Err(corrupt("PLY", format!("a list of {n} items")));
                        }
                        let items: Vec<f64> = (0..n as usize).map(|_| r.next(item)).collect::<Result<_, _>>()?;
                        if el.name == "face" && (name == "vertex_indices" || name == "vertex_index") {
                            if items.len() < 3 || items.iter().any(|&i| i < 0.0 || i > f64::from(u32::MAX)) {
                                return Err(corrupt("PLY", format!("face {} has bad vertex indices", faces.len())));
                            }
                            let poly: Vec<u32> = items.iter().map(|&i| i as u32).collect();
                            fan(&poly, &mut faces);
                        }
                    }
                }
            }
            if el.name == "vertex" {
                positions.push(p);
            }
        }
    }
    Ok((positions, faces))
}

fn scaled(values: Option<&[f64]>, n: usize) -> Vec<f64> {
    values.map_or_else(|| vec![0.0; n], <[f64]>::to_vec)
}

fn encode_obj(mesh: &TriMesh, values: VertexValues) -> Vec<u8> {
    use std::fmt::Write;
    let n = mesh.positions.len();
    let (ero, dep) = (scaled(values.erosion, n), scaled(values.deposition, n));
    let top = ero.iter().chain(&dep).copied().fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let mut s = String::from("# erode mesh; vertex colours: red = erosion, blue = deposition (of the largest)\n");
    for (i, p) in mesh.positions.iter().enumerate() {
        let (r, b) = (ero[i] / top, dep[i] / top);
        let _ = writeln!(
            s,
            "v {} {} {} {:.4} {:.4} {:.4}",
            p.x,
            p.y,
            p.z,
            0.6 + 0.4 * r - 0.6 * b,
            0.6 - 0.6 * (r + b).min(1.0),
            0.6 + 0.4 * b - 0.6 * r
        );
    }
    for f in &mesh.faces {
        let _ = writeln!(s, "f {} {} {}", f[0] + 1, f[1] + 1, f[2] + 1);
    }
    s.into_bytes()
}

fn encode_ply(mesh: &TriMesh, values: VertexValues) -> Vec<u8> {
    let n = mesh.positions.len();
    let (ero, dep) = (scaled(values.erosion, n), scaled(values.deposition, n));
    let mut out = format!(
        "ply\nformat binary_little_endian 1.0\ncomment erode mesh; erosion and deposition in m3 per vertex\nelement vertex {n}\nproperty double x\nproperty double y\nproperty double z\nproperty double erosion\nproperty double deposition\nelement face {}\nproperty list uchar int vertex_indices\nend_header\n",
        mesh.faces.len()
    )
    .into_bytes();
    for (i, p) in mesh.positions.iter().enumerate() {
        for x in [p.x, p.y, p.z, ero[i], dep[i]] {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    for f in &mesh.faces {
        out.push(3);
        for &v in f {
            out.extend_from_slice(&(v as i32).to_le_bytes());
        }
    }
    out
}

/// A z-up point or direction in glTF's y-up axes.
fn y_up(p: DVec3) -> DVec3 {
    DVec3::new(p.x, p.z, -p.y)
}

/// Unit vertex normals: the area-weighted normals of the faces around each vertex (z up).
fn vertex_normals(mesh: &TriMesh) -> Vec<DVec3> {
    let mut normals = vec![DVec3::ZERO; mesh.positions.len()];
    for (f, face) in mesh.faces.iter().enumerate() {
        let [a, b, c] = mesh.corners(f);
        let n = (b - a).cross(c - a);
        for &v in face {
            normals[v as usize] += n;
        }
    }
    normals.iter().map(|n| n.try_normalize().unwrap_or(DVec3::Z)).collect()
}

fn encode_glb(mesh: &TriMesh, values: VertexValues) -> Vec<u8> {
    let n = mesh.positions.len();
    let (ero, dep) = (scaled(values.erosion, n), scaled(values.deposition, n));
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    let mut bin = Vec::new();
    for p in &mesh.positions {
        let p = y_up(*p);
        (lo, hi) = (lo.min(p), hi.max(p));
        for x in [p.x, p.y, p.z] {
            bin.extend_from_slice(&(x as f32).to_le_bytes());
        }
    }
    let normal_at = bin.len();
    for v in vertex_normals(mesh) {
        let v = y_up(v);
        for x in [v.x, v.y, v.z] {
            bin.extend_from_slice(&(x as f32).to_le_bytes());
        }
    }
    let ero_at = bin.len();
    for x in &ero {
        bin.extend_from_slice(&(*x as f32).to_le_bytes());
    }
    let dep_at = bin.len();
    for x in &dep {
        bin.extend_from_slice(&(*x as f32).to_le_bytes());
    }
    let idx_at = bin.len();
    for f in &mesh.faces {
        for &v in f {
            bin.extend_from_slice(&v.to_le_bytes());
        }
    }
    let f32s = |v: DVec3| [v.x as f32, v.y as f32, v.z as f32];
    let json = serde_json::json!({
        "asset": { "version": "2.0", "generator": "erode" },
        "scene": 0,
        "scenes": [{ "nodes": [0] }],
        "nodes": [{ "mesh": 0 }],
        "meshes": [{ "primitives": [{
            "attributes": { "POSITION": 0, "NORMAL": 4, "_EROSION": 1, "_DEPOSITION": 2 },
            "indices": 3,
        }]}],
        "buffers": [{ "byteLength": bin.len() }],
        "bufferViews": [
            { "buffer": 0, "byteOffset": 0, "byteLength": normal_at, "target": 34962 },
            { "buffer": 0, "byteOffset": ero_at, "byteLength": dep_at - ero_at, "target": 34962 },
            { "buffer": 0, "byteOffset": dep_at, "byteLength": idx_at - dep_at, "target": 34962 },
            { "buffer": 0, "byteOffset": idx_at, "byteLength": bin.len() - idx_at, "target": 34963 },
            { "buffer": 0, "byteOffset": normal_at, "byteLength": ero_at - normal_at, "target": 34962 },
        ],
        "accessors": [
            { "bufferView": 0, "componentType": 5126, "count": n, "type": "VEC3", "min": f32s(lo), "max": f32s(hi) },
            { "bufferView": 1, "componentType": 5126, "count": n, "type": "SCALAR" },
            { "bufferView": 2, "componentType": 5126, "count": n, "type": "SCALAR" },
            { "bufferView": 3, "componentType": 5125, "count": mesh.faces.len() * 3, "type": "SCALAR" },
            { "bufferView": 4, "componentType": 5126, "count": n, "type": "VEC3" },
        ],
    });
    let mut text = json.to_string().into_bytes();
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let total = 12 + 8 + text.len() + 8 + bin.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&text);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&bin);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_meshes_read_back() {
        let mesh = erode::models::sph::build::tube_block(2.0, 1.0, 0.4, 16, 4).unwrap();
        let dir = tempfile::tempdir().unwrap();
        for ext in ["obj", "ply"] {
            let p = dir.path().join(format!("m.{ext}"));
            write_mesh(&p, &mesh, VertexValues::default()).unwrap();
            let back = read_mesh(&p).unwrap();
            assert_eq!(back.faces, mesh.faces, "{ext}");
            for (a, b) in back.positions.iter().zip(&mesh.positions) {
                assert!((*a - *b).length() < 1e-9, "{ext}");
            }
            back.validate(true, 1e-9).unwrap();
        }
        // binary STL: separate triangles, welded back into a closed mesh
        let mut stl = vec![0u8; 80];
        stl.extend_from_slice(&(mesh.faces.len() as u32).to_le_bytes());
        for f in 0..mesh.faces.len() {
            stl.extend_from_slice(&[0u8; 12]);
            for c in mesh.corners(f) {
                for x in [c.x, c.y, c.z] {
                    stl.extend_from_slice(&(x as f32).to_le_bytes());
                }
            }
            stl.extend_from_slice(&[0, 0]);
        }
        let p = dir.path().join("m.stl");
        std::fs::write(&p, &stl).unwrap();
        let back = read_mesh(&p).unwrap();
        assert_eq!(back.faces.len(), mesh.faces.len());
        assert_eq!(back.positions.len(), mesh.positions.len());
        back.validate(true, 1e-9).unwrap();
        // glb: valid glTF, turned y up, with unit normals pointing out of the solid
        let p = dir.path().join("m.glb");
        write_mesh(&p, &mesh, VertexValues::default()).unwrap();
        let b = std::fs::read(&p).unwrap();
        assert_eq!(&b[..4], b"glTF");
        assert_eq!(u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize, b.len());
        let glb = gltf::Gltf::from_slice(&b).unwrap();
        let prim = glb.meshes().next().unwrap().primitives().next().unwrap();
        let reader = prim.reader(|_| glb.blob.as_deref());
        let positions: Vec<[f32; 3]> = reader.read_positions().unwrap().collect();
        let normals: Vec<[f32; 3]> = reader.read_normals().unwrap().collect();
        for ((got, p), n) in positions.iter().zip(&mesh.positions).zip(&normals) {
            let want = [p.x, p.z, -p.y].map(|x| x as f32);
            assert_eq!(*got, want);
            let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
            assert!((len - 1.0).abs() < 1e-5, "{n:?}");
        }
        // the block's top face (z = 1 before, y = 1 now) faces +y
        let top = positions.iter().zip(&normals).filter(|(p, _)| p[1] > 0.99).map(|(_, n)| n[1]);
        assert!(top.clone().count() > 0 && top.clone().all(|ny| ny > 0.0));
    }

    #[test]
    fn bad_meshes_name_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.obj");
        std::fs::write(&p, "v 0 0 0\nv 1 0 0\nf 1 2 7\n").unwrap();
        let e = read_mesh(&p).unwrap_err().to_string();
        assert!(e.contains("bad.obj") && e.contains("line 3"), "{e}");
        let p = dir.path().join("bad.ply");
        std::fs::write(&p, "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nend_header\n0 0 0\n1 0\n").unwrap();
        let e = read_mesh(&p).unwrap_err().to_string();
        assert!(e.contains("bad.ply") && e.contains("truncated"), "{e}");
        let p = dir.path().join("m.xyz");
        std::fs::write(&p, "x").unwrap();
        assert!(read_mesh(&p).unwrap_err().to_string().contains("unknown mesh format"));
    }
}
