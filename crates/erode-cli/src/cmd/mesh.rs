use std::path::PathBuf;

use anyhow::bail;
use erode::adaptive_mesh::adaptive_mesh_in_chunks;
use erode::mesh_chunks::Chunks;
use erode::surface_mesh::{SurfaceMesh, step_for, surface_mesh};
use rayon::prelude::*;

use crate::input::InputArgs;

/// Write a heightmap's surface as a triangle mesh for engines and 3D tools (.glb, .obj, .ply,
/// .stl): y up, x east, z south, metres; unit normals and UVs; squares touching nodata left out.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  erode mesh out/height.tif -o terrain.glb
  erode mesh out/height.tif -o terrain.obj --max-triangles 2000000   (every n-th cell, to fit)
  erode mesh dem.tif -o dem.stl --step 4
  erode mesh out/height.tif -o terrain.glb --max-error 0.5   (adaptive: within 0.5 m of every cell)
  erode mesh big.tif -o tiles/terrain.glb --chunk 1024        (tiles/terrain_R_C.glb, 1024² cells each,
                                                               and tiles/terrain.chunks.json)")]
pub struct Args {
    /// The heightmap.
    heightmap: PathBuf,
    /// Output mesh; the format follows the extension (.glb, .obj, .ply, .stl).
    #[arg(short, long)]
    output: PathBuf,
    /// Sample every STEP-th row and column (and the last), 1 = every cell.
    #[arg(long, value_name = "STEP", conflicts_with = "max_triangles")]
    step: Option<usize>,
    /// At most this many triangles: the smallest step that fits.
    #[arg(long, value_name = "N", conflicts_with = "max_error")]
    max_triangles: Option<u64>,
    /// An adaptive mesh (a right-triangulated irregular network) whose surface lies within
    /// this many metres of every cell's height: large triangles on even ground, small ones on
    /// ridges and channels.
    #[arg(long, value_name = "METRES", conflicts_with = "step")]
    max_error: Option<f64>,
    /// Cut the mesh into square chunks of this many cells a side, one file each
    /// (`NAME_ROW_COLUMN.EXT` beside the output, row 0 the north) and `NAME.chunks.json` listing
    /// them: they meet without cracks, share UVs over the whole map and sit in the map's frame.
    #[arg(long, value_name = "CELLS")]
    chunk: Option<usize>,
    #[command(flatten)]
    input: InputArgs,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    erode_io::surface::SurfaceFormat::from_path(&a.output)?;
    if a.step == Some(0) {
        bail!("--step 0: sample every STEP-th cell, STEP >= 1");
    }
    erode_io::check_output(&a.output)?;
    erode_io::check_not_input(&a.output, &a.heightmap)?;
    if let Some(e) = a.max_error
        && !(e.is_finite() && e >= 0.0)
    {
        bail!("--max-error {e}: a height in metres, 0 or more");
    }
    if a.chunk == Some(0) {
        bail!("--chunk 0: a chunk is at least 1 cell a side");
    }
    let map = a.input.read(&a.heightmap)?.map;
    let named = |e: erode::surface_mesh::SurfaceMeshError| anyhow::anyhow!("{}: {e}", a.heightmap.display());
    let (w, h) = (map.heights.width(), map.heights.height());
    let mesh = match a.max_error {
        Some(e) => adaptive_mesh_in_chunks(&map, e, a.chunk.unwrap_or(0)).map_err(named)?,
        None => {
            let step = match (a.step, a.max_triangles) {
                (Some(s), _) => s,
                (None, Some(n)) => step_for(w, h, n).ok_or_else(|| {
                    anyhow::anyhow!("--max-triangles {n}: even the map's four corners make 2 triangles")
                })?,
                (None, None) => 1,
            };
            surface_mesh(&map, step).map_err(named)?
        }
    };
    match a.chunk {
        None => erode_io::surface::write_surface(&a.output, &mesh)?,
        Some(cells) => {
            write_chunks(&a, &mesh, Chunks::new(&mesh, map.heights.cell_size(), w, h, cells), cells, (w, h))?
        }
    }
    Ok(())
}

/// Writes each chunk of `mesh` (of a `w` x `h` map) to its file and then the list of them; on a
/// failure, removes the chunks written.
fn write_chunks(
    a: &Args,
    mesh: &SurfaceMesh,
    chunks: Option<Chunks>,
    cells: usize,
    (w, h): (usize, usize),
) -> anyhow::Result<()> {
    let Some(chunks) = chunks else { bail!("--chunk {cells}: at least 1 cell") };
    let stem = a.output.file_stem().map_or("terrain".into(), |s| s.to_string_lossy().to_string());
    let ext = a.output.extension().map_or(String::new(), |e| e.to_string_lossy().to_string());
    let dir = a.output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let digits = |n: usize| (n.max(2) - 1).to_string().len();
    let name = |row: usize, column: usize| {
        format!("{stem}_{row:0rw$}_{column:0cw$}.{ext}", rw = digits(chunks.down), cw = digits(chunks.across))
    };
    for k in 0..chunks.len() {
        let (row, column) = chunks.position(k);
        erode_io::check_not_input(&dir.join(name(row, column)), &a.heightmap)?;
    }
    let written = std::sync::Mutex::new(Vec::new());
    let listed: anyhow::Result<Vec<serde_json::Value>> = (0..chunks.len())
        .into_par_iter()
        .filter_map(|k| chunks.mesh(mesh, k).map(|m| (k, m)))
        .map(|(k, part)| {
            let (row, column) = chunks.position(k);
            let file = name(row, column);
            erode_io::surface::write_surface(&dir.join(&file), &part)?;
            if let Ok(mut w) = written.lock() {
                w.push(dir.join(&file));
            }
            let (c0, r0) = (column * cells, row * cells);
            Ok(serde_json::json!({
                "file": file,
                "row": row,
                "column": column,
                // the first and last column and row of cells it spans (neighbours share their border)
                "cells": [c0, r0, (c0 + cells).min(w - 1), (r0 + cells).min(h - 1)],
                "triangles": part.triangles(),
                "vertices": part.positions.len(),
            }))
        })
        .collect();
    let outcome = listed.and_then(|list| {
        let index = serde_json::json!({
            "heightmap": a.heightmap.display().to_string(),
            "chunk_cells": cells,
            "across": chunks.across,
            "down": chunks.down,
            "frame": "x east, y up, z south, metres, the north-west cell's centre at the origin; UVs over the whole map",
            "chunks": list,
        });
        let path = dir.join(format!("{stem}.chunks.json"));
        erode_io::write_atomic(&path, serde_json::to_string_pretty(&index)?.as_bytes())?;
        Ok(())
    });
    if outcome.is_err() {
        for f in written.into_inner().unwrap_or_default() {
            let _ = std::fs::remove_file(f);
        }
    }
    outcome
}
