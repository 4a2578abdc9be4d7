//! Writing maps the way every command does: the formats a user lists, the input's nodata and
//! georeference kept.

use std::path::Path;

use anyhow::bail;
use erode::Heightmap;
use erode_io::{Format, WriteOptions};

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

/// Writes `field` (row-major, the input's shape) as `dir/<name>.<ext>` in every format, with the
/// input's nodata cells and georeference. Returns the map written.
pub fn write_map(
    dir: &Path,
    name: &str,
    formats: &[Format],
    input: &erode_io::Loaded,
    field: Vec<f32>,
) -> anyhow::Result<Heightmap> {
    let g = &input.map.heights;
    let mask = input.map.nodata_mask().map(<[bool]>::to_vec);
    let options =
        WriteOptions { range: None, georef: input.info.georef.clone(), nodata_value: input.info.nodata_value };
    let map = Heightmap::with_nodata(erode::Grid::from_vec(g.width(), g.height(), g.cell_size(), field)?, mask)?;
    for f in formats {
        erode_io::write(&dir.join(format!("{name}.{}", f.extension())), &map, &options)?;
    }
    Ok(map)
}
