//! Every decoder, fed empty, random, truncated, oversized, zero-sized and unsupported files:
//! each is a typed error, never a panic, and never a large allocation (a counting allocator
//! watches the largest single allocation this test binary makes).
#![allow(unsafe_code)] // the counting allocator below

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use erode::rng::SplitMix64;
use erode_io::{Format, FormatError, ReadOptions, WriteOptions, decode, encode};

struct Counting;
static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only records sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const ALL: [Format; 7] = [Format::Png, Format::Tiff, Format::Exr, Format::Pgm, Format::Npy, Format::R16, Format::R32];

fn crc32(bytes: &[u8]) -> u32 {
    let mut c = 0xFFFF_FFFFu32;
    for &b in bytes {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
        }
    }
    !c
}

fn png_chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut v = (data.len() as u32).to_be_bytes().to_vec();
    let mut body = kind.to_vec();
    body.extend_from_slice(data);
    v.extend_from_slice(&body);
    v.extend_from_slice(&crc32(&body).to_be_bytes());
    v
}

/// A PNG of `width x height` 16-bit grey whose IDAT is a few bytes: the 68-byte file of the
/// acceptance list when the size is 100000 x 100000.
pub fn png_claiming(width: u32, height: u32) -> Vec<u8> {
    let mut v = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = width.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[16, 0, 0, 0, 0]);
    v.extend(png_chunk(b"IHDR", &ihdr));
    v.extend(png_chunk(b"IDAT", &[0x78, 0x9c, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01, 0x00]));
    v.extend(png_chunk(b"IEND", &[]));
    v
}

fn tiff_claiming(width: u32, height: u32) -> Vec<u8> {
    // little-endian TIFF, one IFD of 9 entries, 16-bit grey, one strip of 8 bytes at offset 8
    let mut v = b"II*\x00".to_vec();
    v.extend_from_slice(&16u32.to_le_bytes());
    v.extend_from_slice(&[0u8; 8]);
    let entries: [(u16, u16, u32, u32); 9] = [
        (256, 4, 1, width),
        (257, 4, 1, height),
        (258, 3, 1, 16),
        (259, 3, 1, 1),
        (262, 3, 1, 1),
        (273, 4, 1, 8),
        (277, 3, 1, 1),
        (278, 4, 1, height),
        (279, 4, 1, 8),
    ];
    v.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    for (tag, ty, count, value) in entries {
        v.extend_from_slice(&tag.to_le_bytes());
        v.extend_from_slice(&ty.to_le_bytes());
        v.extend_from_slice(&count.to_le_bytes());
        v.extend_from_slice(&value.to_le_bytes());
    }
    v.extend_from_slice(&0u32.to_le_bytes());
    v
}

fn exr_claiming(width: i32, height: i32) -> Vec<u8> {
    let mut bytes = encode(&common::noise_map(), Format::Exr, &WriteOptions::default()).unwrap();
    for name in [&b"dataWindow\0box2i\0"[..], &b"displayWindow\0box2i\0"[..]] {
        let at = bytes.windows(name.len()).position(|w| w == name).unwrap() + name.len() + 4;
        let window = [0i32, 0, width - 1, height - 1];
        for (k, v) in window.iter().enumerate() {
            bytes[at + 4 * k..at + 4 * k + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
    bytes
}

fn npy_claiming(shape: &str, descr: &str) -> Vec<u8> {
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}\n");
    let mut v = b"\x93NUMPY\x01\x00".to_vec();
    v.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    v.extend_from_slice(dict.as_bytes());
    v.extend_from_slice(&[0u8; 64]);
    v
}

fn claiming(format: Format, w: u32, h: u32) -> (Vec<u8>, ReadOptions) {
    let mut opts = ReadOptions::default();
    let bytes = match format {
        Format::Png => png_claiming(w, h),
        Format::Tiff => tiff_claiming(w, h),
        Format::Exr => exr_claiming(w as i32, h as i32),
        Format::Pgm => format!("P5\n{w} {h}\n65535\n").into_bytes().into_iter().chain([0u8; 16]).collect(),
        Format::Npy => npy_claiming(&format!("({h}, {w})"), "<f4"),
        Format::R16 | Format::R32 => {
            opts.raw_size = Some((w as usize, h as usize));
            vec![0u8; 64]
        }
    };
    (bytes, opts)
}

fn unsupported(format: Format) -> Option<Vec<u8>> {
    Some(match format {
        Format::Png => {
            let mut bytes = Vec::new();
            let mut enc = png::Encoder::new(&mut bytes, 2, 2);
            enc.set_color(png::ColorType::Rgb);
            enc.set_depth(png::BitDepth::Eight);
            // colour (an RGB image of equal channels reads as grey)
            enc.write_header().unwrap().write_image_data(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 20, 30]).unwrap();
            bytes
        }
        Format::Tiff => {
            let mut out = std::io::Cursor::new(Vec::new());
            tiff::encoder::TiffEncoder::new(&mut out)
                .unwrap()
                .write_image::<tiff::encoder::colortype::RGB8>(2, 2, &[0u8; 12])
                .unwrap();
            out.into_inner()
        }
        Format::Pgm => b"P6\n2 2\n255\n000000000000".to_vec(),
        Format::Npy => npy_claiming("(2, 2)", "<c8"),
        Format::Exr => return None, // every EXR sample type converts to f32 except u32, hard to craft small
        Format::R16 | Format::R32 => return None, // headerless: no variants
    })
}

fn assert_refused(format: Format, case: &str, bytes: &[u8], opts: &ReadOptions) -> FormatError {
    LARGEST.store(0, Ordering::Relaxed);
    let result = std::panic::catch_unwind(|| decode(bytes, format, opts));
    let largest = LARGEST.load(Ordering::Relaxed);
    let result = result.unwrap_or_else(|_| panic!("{format:?} {case}: panicked"));
    assert!(largest < 64 << 20, "{format:?} {case}: allocated {largest} bytes at once");
    match result {
        Ok(_) => panic!("{format:?} {case}: accepted"),
        Err(e) => e,
    }
}

#[test]
fn empty_files_are_refused() {
    for f in ALL {
        assert!(matches!(assert_refused(f, "empty", &[], &ReadOptions::default()), FormatError::Empty));
    }
}

#[test]
fn random_bytes_are_refused() {
    for f in ALL {
        for seed in 0..20 {
            let mut rng = SplitMix64::new(seed);
            // an odd, non-square length, so RAW files cannot be read as a square either
            let bytes: Vec<u8> = (0..1001).map(|_| rng.next_u64() as u8).collect();
            assert_refused(f, "random", &bytes, &ReadOptions::default());
        }
    }
}

#[test]
fn truncated_files_are_refused() {
    let map = common::noise_map();
    for f in ALL {
        let bytes = encode(&map, f, &WriteOptions::default()).unwrap();
        let opts = ReadOptions { raw_size: Some((67, 41)), ..Default::default() };
        let e = assert_refused(f, "truncated", &bytes[..bytes.len() / 2], &opts);
        eprintln!("{f:?} truncated: {e}");
    }
}

#[test]
fn huge_headers_are_refused_before_allocating() {
    for f in ALL {
        let (bytes, opts) = claiming(f, 100_000, 100_000);
        let e = assert_refused(f, "100000 x 100000", &bytes, &opts);
        assert!(matches!(e, FormatError::TooLarge { .. }), "{f:?}: {e}");
    }
    assert_eq!(png_claiming(100_000, 100_000).len(), 68);
}

#[test]
fn zero_sized_headers_are_refused() {
    for f in ALL {
        let (bytes, opts) = claiming(f, 0, 16);
        assert_refused(f, "zero width", &bytes, &opts);
    }
}

#[test]
fn unsupported_variants_are_refused() {
    for f in ALL {
        if let Some(bytes) = unsupported(f) {
            let e = assert_refused(f, "unsupported", &bytes, &ReadOptions::default());
            assert!(matches!(e, FormatError::Unsupported { .. }), "{f:?}: {e}");
        }
    }
}
