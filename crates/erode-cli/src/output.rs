//! The output formats a user lists (`--format`).

use anyhow::bail;
use erode_io::Format;

/// The formats named by `--format`, without repeats.
pub fn formats(names: &[String]) -> anyhow::Result<Vec<Format>> {
    let mut out = Vec::new();
    for n in names {
        let f = match n.trim().to_ascii_lowercase().as_str() {
            "tif" | "tiff" => Format::Tiff,
            "png" | "png16" => Format::Png,
            "exr" => Format::Exr,
            "pgm" => Format::Pgm,
            "npy" => Format::Npy,
            "r16" | "raw" => Format::R16,
            "r32" => Format::R32,
            other => bail!("--format {other}: unknown; use tif, png, exr, pgm, npy, r16 or r32"),
        };
        if !out.contains(&f) {
            out.push(f);
        }
    }
    Ok(out)
}
