//! Maps written the way a run on a heightmap writes them: in every format asked for, with the
//! input's nodata cells and georeference, and a preview.

use std::path::Path;

use erode::Heightmap;
use erode::preview::{PreviewStyle, render};

use crate::{Error, Footprint, Format, WriteOptions};

/// Writes `field` (row-major, the input's shape) as `dir/<name>.<ext>` in every format, with the
/// nodata cells and georeference of `input`, the heightmap's footprint. Returns the map written.
pub fn write_map(
    dir: &Path,
    name: &str,
    formats: &[Format],
    input: &Footprint,
    field: Vec<f32>,
) -> Result<Heightmap, Error> {
    let options =
        WriteOptions { range: None, georef: input.info.georef.clone(), nodata_value: input.info.nodata_value };
    let map = input.map_of(field).map_err(|e| Error::format(dir, crate::FormatError::Grid(e)))?;
    for f in formats {
        crate::write(&dir.join(format!("{name}.{}", f.extension())), &map, &options)?;
    }
    Ok(map)
}

/// Writes a model's maps as `<name>.<ext>` in every format (the input's nodata and georeference
/// kept) and `preview.png`: the first map hillshaded, with the map named `overlay` (if the model
/// gives one) in blue. The
/// first map (the height) is always written, the others when `wanted`.
pub struct MapOutputs {
    /// The formats asked for.
    pub formats: Vec<Format>,
    /// The maps written besides the first.
    pub wanted: Wanted,
    /// The map drawn over the preview.
    pub overlay: &'static str,
    /// Draw the overlay's logarithm from 100 times its smallest value up (for a drainage area:
    /// channels draining 100 cells or more, small ones beside large).
    pub log_overlay: bool,
}

/// Which maps a run writes besides its first (the height, always written).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wanted {
    /// Every map.
    All,
    /// These, by name.
    Named(Vec<String>),
}

impl Wanted {
    /// Whether the map `name` at position `k` of the run's maps is written.
    pub fn has(&self, k: usize, name: &str) -> bool {
        k == 0
            || match self {
                Wanted::All => true,
                Wanted::Named(names) => names.iter().any(|n| n == name),
            }
    }
}

impl MapOutputs {
    /// The maps of `names` (a model's, the height first) [`MapOutputs::write`] reads: the wanted
    /// ones and the preview's overlay.
    pub fn read_maps(&self, names: &[&'static str]) -> Vec<&'static str> {
        names
            .iter()
            .enumerate()
            .filter(|(k, n)| self.wanted.has(*k, n) || **n == self.overlay)
            .map(|(_, n)| *n)
            .collect()
    }

    /// The files [`MapOutputs::write`] writes for maps named `maps`.
    pub fn file_names<'a>(&self, maps: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        let mut names: Vec<String> = maps
            .into_iter()
            .enumerate()
            .filter(|(k, m)| self.wanted.has(*k, m))
            .flat_map(|(_, m)| self.formats.iter().map(move |f| format!("{m}.{}", f.extension())))
            .collect();
        names.push("preview.png".into());
        names
    }

    /// Writes the maps of the run on `input` into `dir`: of `names` (the model's, in order) those
    /// wanted, each made by `map` when its turn comes, compressed and written on its own thread
    /// beside the preview.
    pub fn write(
        &self,
        dir: &Path,
        input: &Footprint,
        names: &[&'static str],
        map: &(dyn Fn(&str) -> Option<Vec<f32>> + Sync),
    ) -> Result<(), Error> {
        use rayon::prelude::*;
        let wanted: Vec<&str> =
            names.iter().enumerate().filter(|(k, n)| self.wanted.has(*k, n)).map(|(_, n)| *n).collect();
        let (maps, preview) = rayon::join(
            || {
                wanted.par_iter().try_for_each(|name| match map(name) {
                    Some(field) => write_map(dir, name, &self.formats, input, field).map(drop),
                    None => Ok(()),
                })
            },
            || match names.first().and_then(|name| map(name)) {
                Some(height) => self.write_preview(dir, input, height, map(self.overlay)),
                None => Ok(()),
            },
        );
        maps.and(preview)
    }

    /// `preview.png`: `height` hillshaded, with the `overlay` map (if the model gives one) in blue.
    pub(crate) fn write_preview(
        &self,
        dir: &Path,
        input: &Footprint,
        height: Vec<f32>,
        mut overlay: Option<Vec<f32>>,
    ) -> Result<(), Error> {
        if self.log_overlay
            && let Some(o) = &mut overlay
        {
            // log of the value over 100 times its smallest positive one, growing with each decade
            let low = 100.0 * o.iter().copied().filter(|&v| v > 0.0).fold(f32::INFINITY, f32::min);
            for v in o.iter_mut() {
                *v = if *v > low { (*v / low).ln() } else { 0.0 };
            }
        }
        let bad = |e| Error::format(dir, crate::FormatError::Grid(e));
        let terrain = input.map_of(height).map_err(bad)?;
        let overlay = overlay.map(|v| input.grid_of(v).map_err(bad)).transpose()?;
        let (terrain, overlay) = erode::preview::fit(&terrain, overlay.as_ref(), erode::preview::PREVIEW_MAX_SIDE)
            .map_err(|e| preview_error(dir, e))?;
        draw_preview(dir, &terrain, overlay.as_ref())
    }
}

/// Why `dir`'s preview could not be made.
pub(crate) fn preview_error(dir: &Path, e: impl std::fmt::Display) -> Error {
    Error::Output { path: dir.join("preview.png"), reason: e.to_string() }
}

/// `dir/preview.png`: `terrain` (at the preview's size) hillshaded, `overlay` in blue.
pub(crate) fn draw_preview(dir: &Path, terrain: &Heightmap, overlay: Option<&erode::Grid<f32>>) -> Result<(), Error> {
    let image = render(terrain, None, overlay, &PreviewStyle::default());
    crate::write_rgb_png(&dir.join("preview.png"), &image)
}

/// Notes how the nodata cells of `input` (the heightmap's footprint) take part in a run: outside the domain, with their edges
/// open or closed (`nodata_border`).
pub fn note_nodata(input: &Footprint, open: bool, watch: &dyn crate::run::Watch) {
    let n = input.nodata_count();
    if n > 0 {
        let edges = if open { "open: what flows into them leaves, booked as outflow" } else { "closed" };
        watch.note(&format!(
            "erode: note: {n} nodata cells are outside the domain; their edges are {edges} (nodata_border)"
        ));
    }
}
