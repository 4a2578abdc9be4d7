//! A rank's rows of a grid run's inputs (`mpirun -np K erode simulate grid`): rank 0 tells
//! every rank what to read ([`Request`]), and each, rank 0 among them, reads only the rows of its
//! window of the heightmap and the maps: of a TIFF or BigTIFF just the strips or tiles they
//! cross (`erode_io::rows::read_rows`); a file in another format is read whole and cut.
//!
//! A heightmap's nodata cells hold the mean of its valid cells (`erode::Heightmap`), a value
//! of the whole map: rank 0 finds it ([`super::outline`]) and sends it along, so every rank's
//! cells are the bits one process reads.

use std::ops::Range;
use std::path::{Path, PathBuf};

use erode::models::grid::blocks::Window;
use erode::{Grid, SimError};
use erode_io::Format;

use crate::input::InputArgs;

/// What every rank reads: the heightmap with the options rank 0 read it with, and the maps.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Request {
    input: File,
    /// The reading options (`InputArgs`), numbers as their bits (NaN marks nodata).
    min_height: Option<u64>,
    max_height: Option<u64>,
    height_scale: Option<u64>,
    cell_size: Option<String>,
    raw_size: Option<String>,
    nodata: Option<u64>,
    max_cells: u64,
    hardness: Option<File>,
    rain: Option<File>,
    sediment_depth: Option<File>,
}

/// A file to read rows of, and the value its nodata cells hold (the mean of its valid cells).
#[derive(serde::Serialize, serde::Deserialize)]
struct File {
    path: PathBuf,
    /// f32 bits; `None` when no cell is nodata.
    fill: Option<u32>,
}

impl File {
    /// `path`, whose nodata cells rank 0 read as `fill`.
    fn of(path: &Path, fill: Option<f32>) -> Self {
        Self { path: path.to_path_buf(), fill: fill.map(f32::to_bits) }
    }
}

/// The bits of an option's number.
fn bits(v: Option<f64>) -> Option<u64> {
    v.map(f64::to_bits)
}

impl Request {
    /// What every rank reads: the heightmap at `path` with `args`, and the maps' `files`; the
    /// nodata cells of the heights and of the hardness, rain and sediment depth maps hold `fills`
    /// (the mean of their valid cells, which rank 0 found: [`super::outline::Outline`]).
    pub fn new(path: &Path, args: &InputArgs, fills: [Option<f32>; 4], files: super::heightmap::MapFiles<'_>) -> Self {
        let [fill, hardness, rain, depth] = fills;
        let file = |path: Option<&Path>, fill: Option<f32>| path.map(|p| File::of(p, fill));
        Self {
            input: File::of(path, fill),
            min_height: bits(args.min_height),
            max_height: bits(args.max_height),
            height_scale: bits(args.height_scale),
            cell_size: args.cell_size.clone(),
            raw_size: args.raw_size.clone(),
            nodata: bits(args.nodata),
            max_cells: args.max_cells,
            hardness: file(files.hardness, hardness),
            rain: file(files.rain, rain),
            sediment_depth: file(files.sediment_depth, depth),
        }
    }

    /// As bytes for the other ranks.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// The options the heightmap is read with.
    fn args(&self) -> InputArgs {
        let number = |b: Option<u64>| b.map(f64::from_bits);
        InputArgs {
            min_height: number(self.min_height),
            max_height: number(self.max_height),
            height_scale: number(self.height_scale),
            cell_size: self.cell_size.clone(),
            raw_size: self.raw_size.clone(),
            nodata: number(self.nodata),
            max_memory: None,
            max_cells: self.max_cells,
        }
    }
}

fn failed(e: impl std::fmt::Display) -> SimError {
    erode::models::grid::blocks::BlockError::Read(e.to_string()).into()
}

/// This rank's window of the inputs that `request` (a [`Request`]'s bytes) names: rows `rows`.
pub fn read(request: &[u8], rows: &[usize]) -> Result<Window, SimError> {
    let request: Request = serde_json::from_slice(request).map_err(|e| failed(format!("rank 0's request: {e}")))?;
    let options = request.args().options().map_err(failed)?;
    let (terrain, nodata) = rows_of(&request.input, rows, &options)?;
    // the maps as `heightmap::read_map` and `read_depth_map` read them
    let unit = super::heightmap::unit_options();
    let map = |f: &Option<File>, options: &erode_io::ReadOptions| -> Result<Option<Grid<f32>>, SimError> {
        f.as_ref().map(|f| rows_of(f, rows, options).map(|(g, _)| g)).transpose()
    };
    Ok(Window {
        terrain,
        hardness: map(&request.hardness, &unit)?,
        rain: map(&request.rain, &unit)?,
        water: None,
        sediment_depth: map(&request.sediment_depth, &Default::default())?,
        nodata,
    })
}

/// Rows `rows` (they may wrap around the map) of `file` read with `options`, its nodata cells
/// holding its fill, and which they are.
fn rows_of(
    file: &File,
    rows: &[usize],
    options: &erode_io::ReadOptions,
) -> Result<(Grid<f32>, Option<Vec<bool>>), SimError> {
    let path = &file.path;
    let tiff = Format::from_path(path).map_err(failed)? == Format::Tiff;
    let whole = if tiff { None } else { Some(erode_io::read(path, options).map_err(failed)?) };
    let (mut values, mut mask, mut width, mut cell) = (Vec::new(), Vec::new(), 0, erode::CellSize::default());
    for run in runs(rows) {
        let (heights, nodata) = match &whole {
            Some(l) => {
                let (w, cell) = (l.map.heights.width(), l.map.heights.cell_size());
                let cells = run.start * w..run.end * w;
                let heights =
                    l.map.heights.as_slice().get(cells.clone()).ok_or_else(|| failed("rows beyond the map"))?;
                let grid = Grid::from_vec(w, run.len(), cell, heights.to_vec()).map_err(failed)?;
                (grid, l.map.nodata_mask().map(|m| m[cells].to_vec()))
            }
            None => {
                let r = erode_io::rows::read_rows(path, run.clone(), options).map_err(failed)?;
                (r.heights, r.nodata)
            }
        };
        (width, cell) = (heights.width(), heights.cell_size());
        mask.extend(nodata.unwrap_or_else(|| vec![false; heights.len()]));
        values.extend_from_slice(heights.as_slice());
    }
    if let Some(fill) = file.fill.map(f32::from_bits) {
        values.iter_mut().zip(&mask).filter(|(_, o)| **o).for_each(|(v, _)| *v = fill);
    }
    let grid = Grid::from_vec(width, rows.len(), cell, values).map_err(failed)?;
    Ok((grid, mask.contains(&true).then_some(mask)))
}

/// `rows` as runs of consecutive rows.
fn runs(rows: &[usize]) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for &r in rows {
        match out.last_mut() {
            Some(run) if run.end == r => run.end += 1,
            _ => out.push(r..r + 1),
        }
    }
    out
}
