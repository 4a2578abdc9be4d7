//! NumPy `.npy` (format versions 1-3): 2-D arrays of f32, f64, i16, u16 or u8 in, f32 out.

use erode::Heightmap;

use crate::ReadOptions;
use crate::error::{FormatError, corrupt, unsupported};
use crate::samples::{Decoded, FileMeta, IntKind, Samples, check_size};

const NAME: &str = "NPY";
const MAGIC: &[u8] = b"\x93NUMPY";

/// The value of `'key':` in the header dict, up to the next top-level comma or brace.
fn field<'a>(dict: &'a str, key: &str) -> Option<&'a str> {
    let start = dict.find(&format!("'{key}'"))? + key.len() + 2;
    let rest = dict[start..].trim_start().strip_prefix(':')?.trim_start();
    let end = if rest.starts_with('(') { rest.find(')')? + 1 } else { rest.find([',', '}'])? };
    Some(rest[..end].trim())
}

pub(crate) fn decode(bytes: &[u8], options: &ReadOptions) -> Result<Decoded, FormatError> {
    if !bytes.starts_with(MAGIC) {
        return Err(corrupt(NAME, "no \\x93NUMPY signature"));
    }
    let major = *bytes.get(6).ok_or_else(|| FormatError::Truncated("no version".into()))?;
    let (len_bytes, header_start) = match major {
        1 => (2, 10),
        2 | 3 => (4, 12),
        v => return Err(unsupported(NAME, format!("format version {v}"))),
    };
    let len_field = bytes.get(8..8 + len_bytes).ok_or_else(|| FormatError::Truncated("no header length".into()))?;
    let header_len = len_field.iter().rev().fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
    let header = bytes
        .get(header_start..header_start + header_len)
        .ok_or_else(|| FormatError::Truncated(format!("header of {header_len} bytes runs past the end")))?;
    let dict = std::str::from_utf8(header).map_err(|_| corrupt(NAME, "header is not text"))?;
    let descr =
        field(dict, "descr").ok_or_else(|| corrupt(NAME, "no 'descr' in the header"))?.trim_matches(['\'', '"']);
    let fortran = match field(dict, "fortran_order") {
        Some("True") => true,
        Some("False") => false,
        _ => return Err(corrupt(NAME, "no 'fortran_order' in the header")),
    };
    let shape = field(dict, "shape").ok_or_else(|| corrupt(NAME, "no 'shape' in the header"))?;
    let dims: Vec<u64> = shape
        .trim_matches(['(', ')'])
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches('L').parse::<u64>().map_err(|_| corrupt(NAME, format!("shape {shape}"))))
        .collect::<Result<_, _>>()?;
    let (rows, cols) = match dims[..] {
        [r, c] => (r, c),
        [r, c, 1] => (r, c),
        _ => return Err(unsupported(NAME, format!("shape {shape}; a heightmap is 2-D"))),
    };
    let (width, height) = check_size(cols, rows, options)?;
    let (little, code) = match descr.as_bytes().first() {
        Some(b'<' | b'|' | b'=') => (true, &descr[1..]),
        Some(b'>') => (false, &descr[1..]),
        _ => (true, descr),
    };
    let data = &bytes[header_start + header_len..];
    let n = width * height;
    let bps = match code {
        "f4" | "i4" => 4,
        "f8" => 8,
        "i2" | "u2" => 2,
        "u1" | "i1" => 1,
        other => return Err(unsupported(NAME, format!("dtype {other}; use f4, f8, i2, u2 or u1"))),
    };
    if data.len() < n * bps {
        return Err(FormatError::Truncated(format!(
            "{rows} x {cols} {code} needs {} bytes of data, the file has {}",
            n * bps,
            data.len()
        )));
    }
    let word = |i: usize| -> [u8; 8] {
        let mut w = [0u8; 8];
        let src = &data[i * bps..(i + 1) * bps];
        if little {
            w[..bps].copy_from_slice(src);
        } else {
            for (k, &b) in src.iter().rev().enumerate() {
                w[k] = b;
            }
        }
        w
    };
    // file order -> row-major
    let src_index = |k: usize| if fortran { (k % width) * height + k / width } else { k };
    let (samples, sample_type) = match code {
        "f4" => (
            Samples::Float(
                (0..n)
                    .map(|k| {
                        let w = word(src_index(k));
                        f32::from_le_bytes([w[0], w[1], w[2], w[3]])
                    })
                    .collect(),
            ),
            "float32",
        ),
        "f8" => (Samples::Float((0..n).map(|k| f64::from_le_bytes(word(src_index(k))) as f32).collect()), "float64"),
        "i4" => {
            let values = (0..n)
                .map(|k| {
                    let w = word(src_index(k));
                    i32::from_le_bytes([w[0], w[1], w[2], w[3]])
                })
                .collect();
            (Samples::Int { values, full_scale: i32::MAX as u32, kind: IntKind::Metres }, "int32")
        }
        "i2" => {
            let values = (0..n)
                .map(|k| {
                    let w = word(src_index(k));
                    i32::from(i16::from_le_bytes([w[0], w[1]]))
                })
                .collect();
            (Samples::Int { values, full_scale: 32767, kind: IntKind::Metres }, "int16")
        }
        "u2" => {
            let values = (0..n)
                .map(|k| {
                    let w = word(src_index(k));
                    i32::from(u16::from_le_bytes([w[0], w[1]]))
                })
                .collect();
            (Samples::Int { values, full_scale: 65535, kind: IntKind::Image }, "uint16")
        }
        "i1" => {
            let values = (0..n).map(|k| i32::from(word(src_index(k))[0] as i8)).collect();
            (Samples::Int { values, full_scale: 127, kind: IntKind::Metres }, "int8")
        }
        _ => {
            let values = (0..n).map(|k| i32::from(word(src_index(k))[0])).collect();
            (Samples::Int { values, full_scale: 255, kind: IntKind::Image }, "uint8")
        }
    };
    Ok(Decoded { width, height, samples, sample_type, mask: None, meta: FileMeta::default() })
}

pub(crate) fn encode(map: &Heightmap) -> Vec<u8> {
    let g = &map.heights;
    let mut dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, {}), }}", g.height(), g.width());
    // pad so that the data starts on a 64-byte boundary, header ends with a newline
    let unpadded = MAGIC.len() + 2 + 2 + dict.len() + 1;
    dict.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    dict.push('\n');
    let mut out = Vec::with_capacity(10 + dict.len() + g.len() * 4);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.extend(super::raw::float_cells(map, f32::NAN).flat_map(f32::to_le_bytes));
    out
}
