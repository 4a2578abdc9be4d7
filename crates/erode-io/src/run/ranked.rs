//! A run over ranks writes its maps where they are: each rank its own rows of every TIFF output
//! ([`crate::rows::write_rows`]: the file one process writes), so no rank gathers the maps. The
//! preview is drawn on rank 0 from rows each rank shrank across first (a map larger than the
//! preview never comes whole to one rank); maps in other formats are gathered on rank 0 and
//! written there as one process writes them. Rank 0 hands the others the task ([`RowsTask`])
//! through the grid model's leader ([`erode::models::grid::blocks::Leader::task`]); every rank
//! then carries it out with its block ([`write_owned_rows`]).

use std::path::Path;

use erode::Grid;
use erode::models::grid::blocks::Block;
use erode::transform::{Across, ByRows, Filter};
use serde::{Deserialize, Serialize};

use crate::outputs::{MapOutputs, draw_preview, preview_error};
use crate::{Error, Footprint, Format, FormatError, WriteOptions};

/// What every rank writes: the maps, their formats and the preview, into one folder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RowsTask {
    /// The folder, as the bytes of its path (every rank runs on the same kind of system).
    dir: Vec<u8>,
    /// The maps written, the height first.
    maps: Vec<String>,
    /// The formats, by extension.
    formats: Vec<String>,
    /// The input's georeference.
    georef: Option<crate::GeoRef>,
    /// The input's nodata value, as the bits of an f64 (a NaN kept).
    nodata_bits: Option<u64>,
    /// The map drawn over the preview, and whether as its logarithm.
    overlay: String,
    log_overlay: bool,
}

impl RowsTask {
    /// The task of writing `maps` (the height first) of a run on `input` into `dir` as
    /// `outputs` says.
    pub fn new(dir: &Path, outputs: &MapOutputs, input: &Footprint, maps: &[&str]) -> Self {
        Self {
            dir: dir.as_os_str().as_encoded_bytes().to_vec(),
            maps: maps.iter().map(|m| m.to_string()).collect(),
            formats: outputs.formats.iter().map(|f| f.extension().to_string()).collect(),
            georef: input.info.georef.clone(),
            nodata_bits: input.info.nodata_value.map(f64::to_bits),
            overlay: outputs.overlay.to_string(),
            log_overlay: outputs.log_overlay,
        }
    }

    /// The bytes rank 0 sends.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// The task rank 0 sent.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("a task rank 0 did not send: {e}"))
    }
}

/// Carries out the task `bytes` ([`RowsTask::to_bytes`]) with this rank's `block`, every rank
/// together: its rows of every TIFF written into the one file, the other formats gathered on
/// rank 0 and written there, the preview drawn there from the rows each rank shrank across
/// ([`erode::transform::ByRows`]). `input` is the footprint of the heightmap the run began from,
/// on rank 0 (the others give `None`). Every rank goes through the same exchanges whatever fails, and fails
/// with the others.
pub fn write_owned_rows(bytes: &[u8], block: &Block, input: Option<&Footprint>) -> Result<(), Error> {
    let task = RowsTask::from_bytes(bytes);
    let dir = crate::rows::path_of(task.as_ref().map_or(&[][..], |t| &t.dir));
    let task = task.map_err(|e| Error::format(&dir, FormatError::Options(e)))?;
    let ex = block.exchange();
    let parts = block.parts();
    let owned = block.owned();
    let st = block.state();
    let (width, height, cell) = (st.width, parts.last().map_or(0, |p| p.end), st.cell_size);
    let options =
        WriteOptions { range: None, georef: task.georef.clone(), nodata_value: task.nodata_bits.map(f64::from_bits) };
    let formats: Vec<Format> =
        task.formats.iter().map(|e| Format::from_path(Path::new(&format!("map.{e}")))).collect::<Result<_, _>>()?;
    let nodata = block.owned_nodata();
    let nodata = nodata.as_deref();
    let mut errors = Vec::new();
    // the preview's maps: the height and the overlay, shrunk by rows where the map is larger
    let shrink = erode::preview::fit_size(width, height, erode::preview::PREVIEW_MAX_SIDE)
        .filter(|_| !task.log_overlay)
        .map(|(w, h)| ByRows::new((width, height, cell), w, h, Filter::Box));
    let shrink = match shrink.transpose() {
        Ok(s) => s,
        Err(e) => {
            errors.push(preview_error(&dir, e));
            None
        }
    };
    let mut preview: Vec<(String, Vec<f32>)> = Vec::new();
    let mut shrunk: Vec<(String, Across)> = Vec::new();
    let first = task.maps.first().cloned().unwrap_or_default();
    let mut names: Vec<&String> = task.maps.iter().collect();
    if !task.overlay.is_empty() && !names.contains(&&task.overlay) {
        names.push(&task.overlay);
    }
    for name in names {
        let written = task.maps.contains(name);
        let in_preview = *name == first || *name == task.overlay;
        let Some(values) = block.owned_map(name) else { continue };
        if written {
            // a block's own rows of its own map: the same shape on every rank
            match Grid::from_vec(width, owned.len(), cell, values.clone()) {
                Ok(grid) => {
                    for f in formats.iter().filter(|f| **f == Format::Tiff) {
                        let path = dir.join(format!("{name}.{}", f.extension()));
                        errors.extend(crate::rows::write_rows(&path, &grid, nodata, &parts, &options, ex).err());
                    }
                }
                Err(e) => errors.push(Error::format(&dir, FormatError::Grid(e))),
            }
        }
        let others = written && formats.iter().any(|f| *f != Format::Tiff);
        if others || (in_preview && shrink.is_none()) {
            let counts: Vec<usize> = parts.iter().map(|p| p.len() * width * 4).collect();
            if let Some(whole) = ex.gather(&f32_bytes(&values), &counts).map(|b| f32s(&b)) {
                if let (true, Some(input)) = (others, input) {
                    let formats: Vec<Format> = formats.iter().copied().filter(|f| *f != Format::Tiff).collect();
                    errors.extend(crate::outputs::write_map(&dir, name, &formats, input, whole.clone()).err());
                }
                if in_preview && shrink.is_none() {
                    preview.push((name.clone(), whole));
                }
            }
        }
        if let (true, Some(by_rows)) = (in_preview, &shrink) {
            // the height with the nodata cells, the overlay without (as the preview draws them)
            let masked = nodata.filter(|_| *name == first);
            let across = by_rows.across(owned.clone(), &values, masked);
            let mut all = Across { wide: Vec::new(), nearest: Vec::new() };
            for field in &across.wide {
                let counts: Vec<usize> = parts.iter().map(|p| p.len() * by_rows.width() * 4).collect();
                all.wide.extend(ex.gather(&f32_bytes(field), &counts).map(|b| f32s(&b)));
            }
            let counts: Vec<usize> =
                parts.iter().map(|p| by_rows.nearest_len(p.clone(), masked.is_some()) * 4).collect();
            all.nearest = ex.gather(&f32_bytes(&across.nearest), &counts).map(|b| f32s(&b)).unwrap_or_default();
            shrunk.push((name.clone(), all));
        }
    }
    // the preview, on rank 0
    if let Some(input) = input {
        let drawn = match &shrink {
            None => preview.iter().find(|(n, _)| *n == first).map(|(_, height)| {
                let overlay = preview.iter().find(|(n, _)| *n == task.overlay).map(|(_, v)| v.clone());
                let outputs = MapOutputs {
                    formats: Vec::new(),
                    wanted: crate::outputs::Wanted::All,
                    overlay: "",
                    log_overlay: task.log_overlay,
                };
                outputs.write_preview(&dir, input, height.clone(), overlay)
            }),
            Some(by_rows) => shrunk.iter().find(|(n, _)| *n == first).map(|(_, height)| {
                let terrain = by_rows.down(&height.wide, &height.nearest).map_err(|e| preview_error(&dir, e))?;
                let overlay = shrunk.iter().find(|(n, _)| *n == task.overlay && *n != first);
                let overlay = match overlay {
                    Some((_, o)) => {
                        Some(by_rows.down(&o.wide, &o.nearest).map_err(|e| preview_error(&dir, e))?.heights)
                    }
                    None => None,
                };
                draw_preview(&dir, &terrain, overlay.as_ref())
            }),
        };
        errors.extend(drawn.and_then(Result::err));
    }
    errors.into_iter().next().map_or(Ok(()), Err)
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.as_chunks::<4>().0.iter().map(|c| f32::from_le_bytes(*c)).collect()
}
