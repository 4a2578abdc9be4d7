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

/// Writes `map` to `path` as the input described by `info` was written: its nodata value and
/// the given georeference (the input's, moved or scaled to the new raster), the cells the size
/// that georeference gives (a crop of a geographic map has its own centre latitude). When the
/// user gave the cell size (`cell_given`, from `--cell-size`) and it is not the georeference's,
/// the map is no longer where the georeference places it: it is written without one, with a note.
pub fn write_like_input(
    path: &std::path::Path,
    map: erode::Heightmap,
    info: &erode_io::SourceInfo,
    georef: Option<erode_io::GeoRef>,
    cell_given: bool,
) -> anyhow::Result<()> {
    write_like_input_in_range(path, map, info, georef, cell_given, None)
}

/// [`write_like_input`] with integer samples spanning `range` metres (low, high) rather than the
/// map's own: tiles of one map share one range, so their seams hold the same samples.
pub fn write_like_input_in_range(
    path: &std::path::Path,
    mut map: erode::Heightmap,
    info: &erode_io::SourceInfo,
    georef: Option<erode_io::GeoRef>,
    cell_given: bool,
    range: Option<(f64, f64)>,
) -> anyhow::Result<()> {
    let cell = map.heights.cell_size();
    let implied = georef.as_ref().and_then(|g| g.cell_size_metres(map.heights.height()));
    let near = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs();
    let georef = match implied {
        Some(c) if cell_given && !(near(c.x, cell.x) && near(c.y, cell.y)) => {
            eprintln!(
                "erode: note: cells of {} x {} m are not the input georeference's: {} is written without one",
                cell.x,
                cell.y,
                path.display()
            );
            None
        }
        Some(c) => {
            map.heights.set_cell_size(c)?;
            georef
        }
        None => georef,
    };
    let options = erode_io::WriteOptions { range, georef, nodata_value: info.nodata_value };
    erode_io::write(path, &map, &options)?;
    Ok(())
}
