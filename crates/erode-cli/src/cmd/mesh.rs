use std::path::PathBuf;

use anyhow::bail;
use erode::adaptive_mesh::adaptive_mesh;
use erode::surface_mesh::{step_for, surface_mesh};

use crate::input::InputArgs;

/// Write a heightmap's surface as a triangle mesh for engines and 3D tools (.glb, .obj, .ply,
/// .stl): y up, x east, z south, metres; unit normals and UVs; squares touching nodata left out.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  erode mesh out/height.tif -o terrain.glb
  erode mesh out/height.tif -o terrain.obj --max-triangles 2000000   (every n-th cell, to fit)
  erode mesh dem.tif -o dem.stl --step 4
  erode mesh out/height.tif -o terrain.glb --max-error 0.5   (adaptive: within 0.5 m of every cell)")]
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
    let map = a.input.read(&a.heightmap)?.map;
    if let Some(e) = a.max_error {
        let mesh = adaptive_mesh(&map, e).map_err(|err| anyhow::anyhow!("{}: {err}", a.heightmap.display()))?;
        erode_io::surface::write_surface(&a.output, &mesh)?;
        return Ok(());
    }
    let (w, h) = (map.heights.width(), map.heights.height());
    let step = match (a.step, a.max_triangles) {
        (Some(s), _) => s,
        (None, Some(n)) => step_for(w, h, n)
            .ok_or_else(|| anyhow::anyhow!("--max-triangles {n}: even the map's four corners make 2 triangles"))?,
        (None, None) => 1,
    };
    let mesh = surface_mesh(&map, step).map_err(|e| anyhow::anyhow!("{}: {e}", a.heightmap.display()))?;
    erode_io::surface::write_surface(&a.output, &mesh)?;
    Ok(())
}
