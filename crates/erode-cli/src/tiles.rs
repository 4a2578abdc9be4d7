//! Writing a map as shared-edge tiles (`erode convert --tile`): one file a tile, every tile's
//! integer samples over the whole map's height range so neighbours' shared borders hold the same
//! samples, a `NAME.tiles.json` listing them; on a failure, the tiles written are removed.

use std::path::{Path, PathBuf};

use anyhow::Context;
use erode::Heightmap;
use erode::transform::{Tiles, crop};

/// Where the tiles go and what they came from.
pub struct TileJob<'a> {
    /// The output as the user named it: `DIR/STEM.EXT` gives `DIR/STEM_R_C.EXT`.
    pub output: &'a Path,
    /// The input, named in the list and never overwritten.
    pub input: &'a Path,
    /// What the input file said (nodata value).
    pub info: &'a erode_io::SourceInfo,
    /// The map's georeference, moved to each tile's corner.
    pub georef: Option<erode_io::GeoRef>,
    /// Whether the user gave the cell size.
    pub cell_given: bool,
}

/// The file of tile `(row, column)` of `tiles` for `output`, rows and columns zero-padded alike.
fn tile_path(output: &Path, tiles: &Tiles, row: usize, column: usize) -> PathBuf {
    let stem = output.file_stem().map_or("terrain".into(), |s| s.to_string_lossy().to_string());
    let ext = output.extension().map_or(String::new(), |e| e.to_string_lossy().to_string());
    let digits = |n: usize| (n.max(2) - 1).to_string().len();
    let name = format!("{stem}_{row:0rw$}_{column:0cw$}.{ext}", rw = digits(tiles.down), cw = digits(tiles.across));
    output.with_file_name(name)
}

/// Writes `map` (its size `Tiles::new` accepts) as `tiles`, all over one height range: returns
/// the range (metres) and the first tile's map (for an engine's import settings).
pub fn write_tiles(job: &TileJob, map: &Heightmap, tiles: &Tiles) -> anyhow::Result<((f64, f64), Heightmap)> {
    let range = erode_io::sample_range(map, &erode_io::WriteOptions::default());
    for (row, column) in (0..tiles.down).flat_map(|r| (0..tiles.across).map(move |c| (r, c))) {
        erode_io::check_not_input(&tile_path(job.output, tiles, row, column), job.input)?;
    }
    let mut written: Vec<PathBuf> = Vec::new();
    let outcome = (|| -> anyhow::Result<Heightmap> {
        let mut listed = Vec::new();
        let mut first = None;
        let cell = map.heights.cell_size();
        for row in 0..tiles.down {
            for column in 0..tiles.across {
                let window = tiles.window(row, column);
                let tile = crop(map, window)?;
                let path = tile_path(job.output, tiles, row, column);
                let georef = job.georef.as_ref().map(|g| g.window(window.col as f64, window.row as f64, (1.0, 1.0)));
                crate::output::write_like_input_in_range(
                    &path,
                    tile.clone(),
                    job.info,
                    georef,
                    job.cell_given,
                    Some(range),
                )
                .with_context(|| format!("tile {row}, {column}"))?;
                if matches!(erode_io::Format::from_path(&path)?, erode_io::Format::R16 | erode_io::Format::R32) {
                    written.push(erode_io::raw_sidecar(&path));
                }
                written.push(path.clone());
                listed.push(serde_json::json!({
                    "file": path.file_name().map(|f| f.to_string_lossy().to_string()),
                    "row": row,
                    "column": column,
                    // the first and last column and row of samples it holds (neighbours share a border)
                    "samples": [window.col, window.row, window.col + window.width - 1, window.row + window.height - 1],
                    // its north-west sample from the map's, metres east and south
                    "offset_m": [window.col as f64 * cell.x, window.row as f64 * cell.y],
                }));
                first.get_or_insert(tile);
            }
        }
        let index = serde_json::json!({
            "heightmap": job.input.display().to_string(),
            "tile_samples": tiles.size,
            "across": tiles.across,
            "down": tiles.down,
            "cell_size_m": [cell.x, cell.y],
            "height_range_m": [range.0, range.1],
            "frame": "row 0 the north edge; each tile shares its last row and column with the next tile's first",
            "tiles": listed,
        });
        let list = job.output.with_file_name(format!(
            "{}.tiles.json",
            job.output.file_stem().map_or("terrain".into(), |s| s.to_string_lossy().to_string())
        ));
        erode_io::write_atomic(&list, serde_json::to_string_pretty(&index)?.as_bytes())?;
        first.context("no tile")
    })();
    match outcome {
        Ok(first) => Ok((range, first)),
        Err(e) => {
            for f in written {
                let _ = std::fs::remove_file(f);
            }
            Err(e)
        }
    }
}
