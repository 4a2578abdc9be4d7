//! Netpbm greymaps: P2 (ASCII) and P5 (binary), 8 or 16 bits; written as 16-bit P5 with erode's
//! range in a comment.

use erode::Heightmap;

use crate::error::{FormatError, corrupt, unsupported};
use crate::samples::{Decoded, FileMeta, IntKind, Quantiser, Samples, check_size, complete_meta, parse_meta};
use crate::{ReadOptions, WriteOptions};

const NAME: &str = "PGM";
const META_PREFIX: &str = "erode:";

/// A cursor over the header's whitespace-separated tokens that keeps the comments.
struct Header<'a> {
    bytes: &'a [u8],
    pos: usize,
    meta: FileMeta,
}

impl Header<'_> {
    fn skip_space_and_comments(&mut self) {
        while let Some(&b) = self.bytes.get(self.pos) {
            if b == b'#' {
                let end =
                    self.bytes[self.pos..].iter().position(|&c| c == b'\n').map_or(self.bytes.len(), |e| self.pos + e);
                let line = String::from_utf8_lossy(&self.bytes[self.pos + 1..end]);
                if let Some(rest) = line.trim().strip_prefix(META_PREFIX) {
                    for kv in rest.split_whitespace() {
                        if let Some((k, v)) = kv.split_once('=') {
                            parse_meta(&mut self.meta, k, v);
                        }
                    }
                }
                self.pos = end;
            } else if b.is_ascii_whitespace() {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    fn number(&mut self, what: &str) -> Result<u64, FormatError> {
        self.skip_space_and_comments();
        let start = self.pos;
        while self.bytes.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        if start == self.pos {
            return Err(if self.pos >= self.bytes.len() {
                FormatError::Truncated(format!("the header ends before the {what}"))
            } else {
                corrupt(
                    NAME,
                    format!("expected the {what}, found byte {:#04x} at offset {}", self.bytes[self.pos], self.pos),
                )
            });
        }
        std::str::from_utf8(&self.bytes[start..self.pos])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| corrupt(NAME, format!("{what} is not a number")))
    }
}

pub(crate) fn decode(bytes: &[u8], options: &ReadOptions) -> Result<Decoded, FormatError> {
    let binary = match bytes.get(..2) {
        Some(b"P5") => true,
        Some(b"P2") => false,
        Some(b"P1" | b"P3" | b"P4" | b"P6") => {
            return Err(unsupported(NAME, "bitmap or colour Netpbm; only greymaps (P2, P5)"));
        }
        _ => return Err(corrupt(NAME, "no P2/P5 signature")),
    };
    let mut h = Header { bytes, pos: 2, meta: FileMeta::default() };
    let width = h.number("width")?;
    let height = h.number("height")?;
    let maxval = h.number("maximum value")?;
    if maxval == 0 || maxval > 65535 {
        return Err(corrupt(NAME, format!("maximum value {maxval} is outside 1..=65535")));
    }
    let (width, height) = check_size(width, height, options)?;
    let n = width * height;
    let values: Vec<i32> = if binary {
        // exactly one whitespace byte separates the header from the samples
        let start = h.pos + 1;
        let bps = if maxval < 256 { 1 } else { 2 };
        let need = n * bps;
        let data = bytes.get(start..).unwrap_or(&[]);
        if data.len() < need {
            return Err(FormatError::Truncated(format!(
                "{width} x {height} needs {need} bytes of samples, the file has {}",
                data.len()
            )));
        }
        if bps == 1 {
            data[..need].iter().map(|&b| i32::from(b)).collect()
        } else {
            data[..need].chunks_exact(2).map(|b| i32::from(u16::from_be_bytes([b[0], b[1]]))).collect()
        }
    } else {
        let mut v = Vec::with_capacity(n);
        for k in 0..n {
            let s = h.number("sample").map_err(|e| match e {
                FormatError::Truncated(_) => FormatError::Truncated(format!("{k} of {n} samples present")),
                e => e,
            })?;
            v.push(i32::try_from(s).unwrap_or(i32::MAX));
        }
        v
    };
    if let Some(pos) = values.iter().position(|&v| v as u64 > maxval) {
        return Err(corrupt(
            NAME,
            format!(
                "sample {} at row {}, column {} exceeds the maximum value {maxval}",
                values[pos],
                pos / width,
                pos % width
            ),
        ));
    }
    let mut meta = h.meta;
    complete_meta(&mut meta);
    Ok(Decoded {
        width,
        height,
        samples: Samples::Int { values, full_scale: maxval as u32, kind: IntKind::Image },
        sample_type: if maxval < 256 { "uint8" } else { "uint16" },
        mask: None,
        meta,
    })
}

pub(crate) fn encode(map: &Heightmap, options: &WriteOptions) -> Result<Vec<u8>, FormatError> {
    let g = &map.heights;
    let q = Quantiser::new(map, options.range, 65535);
    let meta: Vec<String> = q.describe(g.cell_size()).into_iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut out = format!("P5\n# {META_PREFIX} {}\n{} {}\n65535\n", meta.join(" "), g.width(), g.height()).into_bytes();
    out.reserve(g.len() * 2);
    for i in 0..g.len() {
        out.extend_from_slice(&(q.sample(map, i) as u16).to_be_bytes());
    }
    Ok(out)
}
