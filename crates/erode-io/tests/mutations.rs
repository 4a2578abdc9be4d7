//! The fuzz targets' property on stable Rust, for a bounded time in every test run: every
//! decoder, given valid files of its format mutated at random (bytes flipped, overwritten with
//! extreme values, inserted, removed; files truncated and spliced), returns a heightmap or a
//! typed error: it never panics, and never allocates more than the size limit allows. Seeded:
//! a failure names the seed and case, and writes the input to `target/mutations-failure.bin`.
//! The same holds for the mesh readers (OBJ, PLY, STL), their memory bounded by the bytes they
//! are given. (`fuzz/` runs the same properties under libFuzzer on nightly for longer.)
//
// A counting allocator is the only way to see a decoder's allocations from outside it.
#![allow(unsafe_code)]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{map_with_hole, noise_map};
use erode::rng::SplitMix64;
use erode_io::{Format, ReadOptions, WriteOptions, decode, encode};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call goes to the system allocator unchanged; only sizes are counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: the caller's layout is passed on as it came
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Cells the decoders are allowed, as the fuzz targets set it.
const MAX_CELLS: u64 = 1 << 20;
/// Most bytes one decode may hold at once: eight bytes per allowed cell, twice over (samples
/// and heights), and room for a decoder's buffers.
const MAX_BYTES: usize = 2 * 8 * (MAX_CELLS as usize) + (16 << 20);
/// Mutated inputs per format.
const CASES: usize = 5000;

fn mutate(rng: &mut SplitMix64, good: &[Vec<u8>]) -> Vec<u8> {
    let pick = |rng: &mut SplitMix64, n: usize| (rng.next_u64() % n.max(1) as u64) as usize;
    let mut bytes = good[pick(rng, good.len())].clone();
    for _ in 0..1 + pick(rng, 4) {
        let len = bytes.len();
        match pick(rng, 6) {
            // flip a few bits, most often in the header
            0 => {
                let at = if pick(rng, 2) == 0 { pick(rng, len.min(128)) } else { pick(rng, len) };
                if at < len {
                    bytes[at] ^= 1 << pick(rng, 8);
                }
            }
            // overwrite a run with an extreme value (sizes, counts, offsets)
            1 => {
                let at = pick(rng, len.min(256));
                let value = [0x00, 0xff, 0x7f, 0x80][pick(rng, 4)];
                for b in bytes.iter_mut().skip(at).take(1 + pick(rng, 8)) {
                    *b = value;
                }
            }
            // truncate
            2 => bytes.truncate(pick(rng, len)),
            // insert random bytes
            3 => {
                let at = pick(rng, len + 1);
                let extra: Vec<u8> = (0..1 + pick(rng, 16)).map(|_| rng.next_u64() as u8).collect();
                bytes.splice(at..at, extra);
            }
            // remove a run
            4 => {
                let at = pick(rng, len);
                let end = (at + 1 + pick(rng, 64)).min(len);
                bytes.drain(at..end);
            }
            // splice the tail of another valid file
            _ => {
                let other = &good[pick(rng, good.len())];
                let at = pick(rng, len);
                let from = pick(rng, other.len());
                bytes.truncate(at);
                bytes.extend_from_slice(&other[from..]);
            }
        }
    }
    bytes
}

/// Runs `decode` on the mutated `bytes`: it must neither panic nor hold more than
/// [`MAX_BYTES`]; a failure names the case (`what`) and writes its input to
/// `target/mutations-failure.bin`.
fn within_limit(what: &str, bytes: &[u8], decode: impl FnOnce() + std::panic::UnwindSafe) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let outcome = std::panic::catch_unwind(decode);
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(before);
    if outcome.is_err() || peak > MAX_BYTES {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mutations-failure.bin");
        let _ = std::fs::write(&path, bytes);
        panic!(
            "{what}: {} (input in {})",
            if outcome.is_err() { "panicked".to_string() } else { format!("held {peak} bytes") },
            path.display()
        );
    }
}

#[test]
fn mutated_files_of_every_format_give_a_map_or_an_error_within_the_size_limit() {
    let maps = [noise_map(), map_with_hole()];
    let formats = [Format::Png, Format::Tiff, Format::Exr, Format::Pgm, Format::Npy, Format::R16, Format::R32];
    for (k, format) in formats.into_iter().enumerate() {
        let good: Vec<Vec<u8>> = maps.iter().map(|m| encode(m, format, &WriteOptions::default()).unwrap()).collect();
        let options = ReadOptions { max_cells: MAX_CELLS, nodata: Some(f64::NAN), ..Default::default() };
        let seed = 0x5eed_0000 + k as u64;
        let mut rng = SplitMix64::new(seed);
        for case in 0..CASES {
            let bytes = mutate(&mut rng, &good);
            within_limit(&format!("{format:?}, seed {seed:#x}, case {case}"), &bytes, || {
                let _ = decode(&bytes, format, &options);
            });
        }
    }
}

#[test]
fn mutated_tiffs_read_by_rows_give_the_rows_or_an_error_within_the_size_limit() {
    let maps = [noise_map(), map_with_hole()];
    let good: Vec<Vec<u8>> = maps.iter().map(|m| encode(m, Format::Tiff, &WriteOptions::default()).unwrap()).collect();
    let options = ReadOptions { max_cells: MAX_CELLS, nodata: Some(f64::NAN), ..Default::default() };
    // the valid files read by rows
    for (bytes, map) in good.iter().zip(&maps) {
        let h = map.heights.height();
        assert_eq!(erode_io::rows::decode_rows(bytes, h / 3..h, &options).unwrap().heights.height(), h - h / 3);
    }
    let seed = 0x5eed_7000;
    let mut rng = SplitMix64::new(seed);
    for case in 0..CASES {
        let bytes = mutate(&mut rng, &good);
        // rows within the maps' 41 (a mutated header may say fewer)
        let start = (rng.next_u64() % 24) as usize;
        let rows = start..start + 1 + (rng.next_u64() % 16) as usize;
        within_limit(&format!("TIFF by rows {rows:?}, seed {seed:#x}, case {case}"), &bytes, || {
            let _ = erode_io::rows::decode_rows(&bytes, rows.clone(), &options);
        });
    }
}

/// Most bytes one mesh decode may hold at once for an input of `len` bytes: its claims are
/// checked against its length, so what it holds grows with the bytes it has (vertices, faces,
/// the weld's and the mesh check's tables), never with what a header says.
fn mesh_bytes_allowed(len: usize) -> usize {
    (4 << 20) + 400 * len
}

/// Valid files of every mesh format erode reads: a closed tube block as OBJ and binary PLY
/// (as erode writes them), text PLY, binary and text STL.
fn good_meshes() -> Vec<(erode_io::mesh::MeshFormat, Vec<u8>)> {
    use erode_io::mesh::{MeshFormat, VertexValues, write_mesh};
    let mesh = erode::models::sph::build::tube_block(2.0, 1.0, 0.4, 8, 2).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let written = |ext: &str| {
        let p = dir.path().join(format!("m.{ext}"));
        write_mesh(&p, &mesh, VertexValues::default()).unwrap();
        std::fs::read(p).unwrap()
    };
    let mut text_ply = format!(
        "ply\nformat ascii 1.0\nelement vertex {}\nproperty float x\nproperty float y\nproperty float z\n\
         element face {}\nproperty list uchar int vertex_indices\nend_header\n",
        mesh.positions.len(),
        mesh.faces.len()
    );
    for p in &mesh.positions {
        text_ply += &format!("{} {} {}\n", p.x, p.y, p.z);
    }
    for f in &mesh.faces {
        text_ply += &format!("3 {} {} {}\n", f[0], f[1], f[2]);
    }
    let mut stl = vec![0u8; 80];
    stl.extend_from_slice(&(mesh.faces.len() as u32).to_le_bytes());
    let mut text_stl = String::from("solid m\n");
    for f in 0..mesh.faces.len() {
        stl.extend_from_slice(&[0u8; 12]);
        text_stl += "facet normal 0 0 0\nouter loop\n";
        for c in mesh.corners(f) {
            for x in [c.x, c.y, c.z] {
                stl.extend_from_slice(&(x as f32).to_le_bytes());
            }
            text_stl += &format!("vertex {} {} {}\n", c.x, c.y, c.z);
        }
        stl.extend_from_slice(&[0, 0]);
        text_stl += "endloop\nendfacet\n";
    }
    text_stl += "endsolid m\n";
    vec![
        (MeshFormat::Obj, written("obj")),
        (MeshFormat::Ply, written("ply")),
        (MeshFormat::Ply, text_ply.into_bytes()),
        (MeshFormat::Stl, stl),
        (MeshFormat::Stl, text_stl.into_bytes()),
    ]
}

#[test]
fn mutated_meshes_of_every_format_give_a_mesh_or_an_error_within_their_size() {
    let all = good_meshes();
    for (k, format) in
        [erode_io::mesh::MeshFormat::Obj, erode_io::mesh::MeshFormat::Ply, erode_io::mesh::MeshFormat::Stl]
            .into_iter()
            .enumerate()
    {
        let good: Vec<Vec<u8>> = all.iter().filter(|(f, _)| *f == format).map(|(_, b)| b.clone()).collect();
        // the valid files read
        for bytes in &good {
            erode_io::mesh::decode_mesh(bytes, format).unwrap();
        }
        let seed = 0x3e5b_0000 + k as u64;
        let mut rng = SplitMix64::new(seed);
        for case in 0..CASES / 5 {
            let bytes = mutate(&mut rng, &good);
            let before = LIVE.load(Ordering::Relaxed);
            PEAK.store(before, Ordering::Relaxed);
            let outcome = std::panic::catch_unwind(|| {
                let _ = erode_io::mesh::decode_mesh(&bytes, format);
            });
            let peak = PEAK.load(Ordering::Relaxed).saturating_sub(before);
            if outcome.is_err() || peak > mesh_bytes_allowed(bytes.len()) {
                let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mutations-failure.bin");
                let _ = std::fs::write(&path, &bytes);
                panic!(
                    "{format:?}, seed {seed:#x}, case {case}: {} (input of {} bytes in {})",
                    if outcome.is_err() { "panicked".to_string() } else { format!("held {peak} bytes") },
                    bytes.len(),
                    path.display()
                );
            }
        }
    }
}
