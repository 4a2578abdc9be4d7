//! Files the viewer reads and writes: heightmaps in (every format the CLI reads), sessions, and
//! the height and maps out in the CLI's formats and names.

use std::path::Path;

use erode::models::droplet;
use erode::models::grid::Params;
use erode_io::{Format, Heightmap, ReadOptions, WriteOptions};

use crate::world::{ModelKind, World};

/// A world on the heightmap at `path`, with default parameters.
pub fn open_heightmap(path: &Path) -> Result<World, String> {
    let loaded = erode_io::read(path, &ReadOptions::default()).map_err(|e| e.to_string())?;
    let params = Params::default();
    let (heights, holes) = (&loaded.map.heights, loaded.map.nodata_mask());
    World::with_holes(heights, holes, params, droplet::Params::default())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Opens a session (`.erode`) or a heightmap, by extension.
pub fn open(path: &Path) -> Result<World, String> {
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("erode")) {
        crate::session::load(path).map_err(|e| e.to_string())
    } else {
        open_heightmap(path)
    }
}

/// Saves the session (reading the GPU's state back first).
pub fn save_session(world: &mut World, path: &Path) -> Result<(), String> {
    world.sync_from_gpu().map_err(|e| e.to_string())?;
    crate::session::save(world, path).map_err(|e| e.to_string())
}

/// Writes `height`, `water`, `sediment`, `hardness`, `erosion`, `deposition`, `flow` and
/// `velocity` (the CLI's names; the droplet model writes its own erosion, deposition and flow)
/// as `<name>.<ext>` into `dir`, nodata cells marked (NaN). Returns the number of files.
pub fn save_maps(world: &mut World, dir: &Path, ext: &str) -> Result<usize, String> {
    world.sync_from_gpu().map_err(|e| e.to_string())?;
    let format = Format::from_path(&dir.join(format!("x.{ext}"))).map_err(|e| e.to_string())?;
    if !dir.is_dir() {
        return Err(format!("{}: not a folder", dir.display()));
    }
    let st = world.state();
    let (w, h) = (st.width, st.height);
    let mut maps: Vec<(&str, Vec<f32>)> =
        erode::models::grid::INFO.maps.iter().filter_map(|d| Some((d.name, st.output_map(d.name)?))).collect();
    if let (ModelKind::Droplet, Some(run)) = (world.model, world.run()) {
        for (name, values) in run.maps() {
            if let Some(slot) = maps.iter_mut().find(|(n, _)| *n == name && name != "height") {
                slot.1 = values;
            }
        }
    }
    let options = WriteOptions::default();
    let count = maps.len();
    for (name, values) in maps {
        let grid = erode::Grid::from_vec(w, h, st.cell_size, values).map_err(|e| e.to_string())?;
        // nodata cells stay marked, as the CLI writes them
        let map = Heightmap::with_nodata(grid, st.nodata.clone()).map_err(|e| e.to_string())?;
        erode_io::write(&dir.join(format!("{name}.{}", format.extension())), &map, &options)
            .map_err(|e| e.to_string())?;
    }
    Ok(count)
}

/// Writes an RGBA image as PNG, atomically.
pub fn write_png(path: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<(), String> {
    let mut bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut bytes, width, height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().map_err(|e| e.to_string())?;
        writer.write_image_data(rgba).map_err(|e| e.to_string())?;
    }
    erode_io::write_atomic(path, &bytes).map_err(|e| e.to_string())
}
