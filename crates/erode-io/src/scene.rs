//! SPH scene files (TOML): the mesh (or a heightmap to mesh), where the fluid starts, how many
//! particles, and the model's parameters.
//!
//! ```toml
//! mesh = "cave.obj"            # or: heightmap = "dem.tif"  (paths relative to this file)
//! particles = 8000             # or: spacing = 0.02 (metres)
//! faces = 9000                 # heightmap only: about this many faces
//! [[blocks]]                   # boxes filled with fluid where the space is not solid
//! min = [0.0, 0.0, 1.0]
//! max = [1.0, 1.0, 1.5]
//! velocity = [0.0, 0.0, 0.0]   # m/s
//! [params]                     # as `erode params sph` prints them
//! erosion_rate = 5e-4
//! ```

use std::path::{Path, PathBuf};

use erode::models::sph::{FluidBlock, SphParams};

use crate::params::ParamsError;

/// A scene file as written.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneFile {
    /// A mesh file (OBJ, PLY, STL), relative to the scene file.
    pub mesh: Option<PathBuf>,
    /// A heightmap to mesh, relative to the scene file.
    pub heightmap: Option<PathBuf>,
    /// Particles at most.
    pub particles: Option<usize>,
    /// Particle spacing, metres (else derived from `particles`).
    pub spacing: Option<f64>,
    /// About this many faces for a heightmap's mesh.
    pub faces: Option<usize>,
    /// Where the fluid starts.
    #[serde(default)]
    pub blocks: Vec<FluidBlock>,
    /// The model's parameters.
    #[serde(default)]
    pub params: SphParams,
}

/// Reads a scene file; its paths become relative to the current folder.
pub fn load_scene(path: &Path) -> Result<SceneFile, ParamsError> {
    let text = std::fs::read_to_string(path).map_err(|source| ParamsError::Io { path: path.to_path_buf(), source })?;
    let mut scene: SceneFile =
        toml::from_str(&text).map_err(|e| ParamsError::File { path: path.to_path_buf(), message: e.to_string() })?;
    let dir = path.parent().unwrap_or(Path::new("."));
    for p in [&mut scene.mesh, &mut scene.heightmap].into_iter().flatten() {
        if p.is_relative() {
            *p = dir.join(&*p);
        }
    }
    if scene.blocks.is_empty() {
        return Err(ParamsError::File { path: path.to_path_buf(), message: "no [[blocks]] of fluid".into() });
    }
    Ok(scene)
}
