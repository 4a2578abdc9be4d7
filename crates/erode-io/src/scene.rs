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
//! [[emitters]]                 # water entering while the run goes (blocks optional then)
//! centre = [0.5, 0.5, 2.0]
//! velocity = [0.0, 0.0, -2.0]  # m/s; the opening faces along it
//! radius = 0.1                 # or: size = [0.2, 0.1] (width, height), metres
//! rate = 0.01                  # m³/s; 0 or left out: area x speed, the most it may
//! [[sinks]]                    # boxes that take out every particle entering them
//! min = [0.9, 0.0, 0.0]
//! max = [1.0, 1.0, 0.5]
//! particle_cap = 20000         # particles alive at most (default 4x the start, >= 10,000)
//! [params]                     # as `erode params sph` prints them
//! erosion_rate = 5e-4
//! ```

use std::path::{Path, PathBuf};

use erode::models::sph::{self, Emitter, FluidBlock, Inflow, Sink};

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
    /// Where water enters while the run goes.
    #[serde(default)]
    pub emitters: Vec<Emitter>,
    /// Boxes that take out every particle entering them.
    #[serde(default)]
    pub sinks: Vec<Sink>,
    /// Particles alive at most (0 or left out: 4x the start, at least 10,000).
    #[serde(default)]
    pub particle_cap: usize,
    /// The model's parameters.
    #[serde(default)]
    pub params: sph::Params,
}

/// An emitter or sink written as a TOML inline table, as in a scene file:
/// `{ centre = [0.2, 0, 0], velocity = [2, 0, -3], radius = 0.1 }`; `flag` names it in errors.
pub fn inline_table<T: serde::de::DeserializeOwned>(flag: &str, text: &str) -> Result<T, ParamsError> {
    #[derive(serde::Deserialize)]
    struct Wrap<T> {
        v: T,
    }
    toml::from_str::<Wrap<T>>(&format!("v = {text}"))
        .map(|w| w.v)
        .map_err(|e| ParamsError::Set { set: format!("{flag} {text}"), message: e.message().to_string() })
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
    if scene.blocks.is_empty() && scene.emitters.is_empty() {
        return Err(ParamsError::File {
            path: path.to_path_buf(),
            message: "no [[blocks]] of fluid and no [[emitters]]".into(),
        });
    }
    Ok(scene)
}

/// What an SPH run starts from: a surface mesh, where the fluid starts and the parameters.
#[derive(Clone, Debug)]
pub struct SphSetup {
    /// The scene's name (a built-in scene, a scene file or the input file).
    pub name: String,
    /// The surface (closed, outward).
    pub mesh: erode::models::sph::TriMesh,
    /// Particle spacing, metres.
    pub spacing: f64,
    /// Boxes filled with fluid.
    pub blocks: Vec<FluidBlock>,
    /// Particles at most at the start.
    pub max_particles: usize,
    /// Water entering and leaving while the run goes.
    pub inflow: Inflow,
    /// The model's parameters (the scene's own, before any override).
    pub params: sph::Params,
    /// How the scene's previews see it.
    pub view: erode::mesh_preview::View,
    /// A heightmap run as a scale model: how its metres map to the terrain's (outputs are
    /// written in the terrain's); `None` for meshes and scene files.
    pub scale: Option<sph::ModelScale>,
}

impl SphSetup {
    /// The run's starting state: the mesh (checked), the fluid on its lattice, the inflow
    /// (checked against the mesh).
    pub fn state(&self) -> Result<sph::State, erode::SimError> {
        let min_area = self.mesh.default_min_area();
        sph::State::new(self.mesh.clone(), self.spacing, &self.blocks, self.max_particles, min_area)?
            .with_inflow(self.inflow.clone())
    }

    /// The run's input hash (what a checkpoint must have been made from).
    pub fn input_hash(&self) -> u64 {
        sph::input_hash(&self.mesh, self.spacing, &self.blocks, self.max_particles, &self.inflow)
    }
}

/// Where an SPH run's mesh and fluid come from, as the front ends take them.
#[derive(Clone, Copy, Debug)]
pub struct SphSource<'a> {
    /// A mesh (OBJ, PLY, STL) or heightmap file.
    pub input: Option<&'a Path>,
    /// A built-in scene (lake, tunnel, tank) or a scene file (`.toml`).
    pub scene: Option<&'a str>,
    /// Particles (0: the scene's).
    pub particles: usize,
    /// About this many faces for a built-in scene or a heightmap (0: the scene's).
    pub faces: usize,
    /// How to read a heightmap.
    pub read: &'a crate::ReadOptions,
}

/// Why an SPH scene cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    /// A built-in scene was given a mesh too.
    #[error("{}: the built-in scene `{scene}` brings its own mesh; put your mesh in a scene file", input.display())]
    OwnMesh {
        /// The mesh given.
        input: PathBuf,
        /// The scene.
        scene: String,
    },
    /// Not a built-in scene nor a scene file.
    #[error("--scene {0}: use lake, tunnel, tank or a scene file ending in .toml")]
    Unknown(String),
    /// A scene file without a surface, and none given.
    #[error("{0}: names no mesh or heightmap, and none was given")]
    NoSurface(String),
    /// Neither a surface nor a scene.
    #[error("needs a mesh or heightmap, or --scene lake|tunnel|tank|FILE.toml")]
    Nothing,
    /// A heightmap too small to mesh.
    #[error("{}: a heightmap of {width} x {height} cells has no area to mesh (SPH needs at least 2 x 2)", path.display())]
    TooSmall {
        /// The heightmap.
        path: PathBuf,
        /// Its columns.
        width: usize,
        /// Its rows.
        height: usize,
    },
    /// A mesh file that is not a closed, outward, simple surface.
    #[error("{}: {source}", path.display())]
    Mesh {
        /// The mesh file.
        path: PathBuf,
        /// What is wrong with it.
        source: erode::MeshError,
    },
    /// A heightmap that could not be meshed, or fluid that does not fit.
    #[error("{what}: {source}")]
    Build {
        /// The file or scene, and what was being done.
        what: String,
        /// Why.
        source: erode::TerrainError,
    },
    /// A file that could not be read.
    #[error(transparent)]
    File(#[from] crate::Error),
    /// A scene file that could not be read.
    #[error(transparent)]
    Params(#[from] ParamsError),
}

/// Particles when neither the command nor the scene says: Skorkovská et al.'s lake.
const DEFAULT_PARTICLES: usize = 12_528;
/// Faces when neither the command nor the scene says: Skorkovská et al.'s lake.
const DEFAULT_FACES: usize = 9_068;

/// The setup of an SPH run: a built-in scene, a scene file (with `input` as its surface if
/// given) or a surface alone (with water over its middle and default parameters).
pub fn sph_setup(source: SphSource<'_>) -> Result<SphSetup, SceneError> {
    use erode::models::sph::{SceneKind, scenes};
    let builtin = match source.scene {
        Some("lake") => Some(SceneKind::Lake),
        Some("tunnel") => Some(SceneKind::Tunnel),
        Some("tank") => Some(SceneKind::Tank),
        _ => None,
    };
    if let (Some(kind), Some(name)) = (builtin, source.scene) {
        if let Some(input) = source.input {
            return Err(SceneError::OwnMesh { input: input.to_path_buf(), scene: name.to_string() });
        }
        let s = kind
            .build(source.particles, source.faces)
            .map_err(|e| SceneError::Build { what: format!("scene {name}"), source: e })?;
        return Ok(SphSetup {
            name: name.to_string(),
            mesh: s.mesh,
            spacing: s.spacing,
            blocks: s.blocks,
            max_particles: s.max_particles,
            inflow: s.inflow,
            params: s.params,
            view: kind.view(),
            scale: None,
        });
    }
    let particles = if source.particles > 0 { source.particles } else { DEFAULT_PARTICLES };
    let faces = if source.faces > 0 { source.faces } else { DEFAULT_FACES };
    match source.scene {
        Some(file) => {
            let path = PathBuf::from(file);
            if path.extension().and_then(|e| e.to_str()) != Some("toml") {
                return Err(SceneError::Unknown(file.to_string()));
            }
            let scene = load_scene(&path)?;
            let faces = scene.faces.unwrap_or(faces);
            let mesh = match (source.input, &scene.mesh, &scene.heightmap) {
                (Some(p), _, _) => surface(p, source.read, faces)?,
                (None, Some(m), _) => surface(m, source.read, faces)?,
                (None, None, Some(h)) => heightmap_mesh(h, source.read, faces)?,
                (None, None, None) => return Err(SceneError::NoSurface(file.to_string())),
            };
            let max = if source.particles > 0 { source.particles } else { scene.particles.unwrap_or(particles) };
            let spacing = match scene.spacing {
                Some(s) => s,
                None if scene.blocks.is_empty() => {
                    return Err(SceneError::Params(ParamsError::File {
                        path,
                        message: "with emitters and no [[blocks]], give the particle `spacing` (metres)".into(),
                    }));
                }
                None => scenes::spacing_for(&mesh, &scene.blocks, max)
                    .map_err(|e| SceneError::Build { what: file.to_string(), source: e })?,
            };
            let inflow = Inflow { emitters: scene.emitters, sinks: scene.sinks, particle_cap: scene.particle_cap };
            Ok(SphSetup {
                name: file.to_string(),
                mesh,
                spacing,
                blocks: scene.blocks,
                max_particles: max,
                inflow,
                params: scene.params,
                view: erode::mesh_preview::View::oblique(),
                scale: None,
            })
        }
        None => {
            let input = source.input.ok_or(SceneError::Nothing)?;
            if !is_mesh(input) {
                return scale_model(input, source.read, particles, faces);
            }
            let mesh = surface(input, source.read, faces)?;
            let block = water_over_the_middle(&mesh);
            let spacing = scenes::spacing_for(&mesh, &[block], particles).map_err(|e| SceneError::Build {
                what: format!("{}: no room for water above the mesh", input.display()),
                source: e,
            })?;
            Ok(SphSetup {
                name: input.display().to_string(),
                mesh,
                spacing,
                blocks: vec![block],
                max_particles: particles,
                inflow: Inflow::default(),
                params: sph::Params::default(),
                view: erode::mesh_preview::View::oblique(),
                scale: None,
            })
        }
    }
}

/// A heightmap alone: its scale model with a sheet of water on it ([`sph::heightmap_scene`]).
fn scale_model(path: &Path, read: &crate::ReadOptions, particles: usize, faces: usize) -> Result<SphSetup, SceneError> {
    let loaded = crate::read(path, read)?;
    let h = &loaded.map.heights;
    if h.width() < 2 || h.height() < 2 {
        return Err(SceneError::TooSmall { path: path.to_path_buf(), width: h.width(), height: h.height() });
    }
    let (scene, scale) = sph::heightmap_scene(&loaded.map, particles, faces)
        .map_err(|e| SceneError::Build { what: format!("{}: its scale model", path.display()), source: e })?;
    Ok(SphSetup {
        name: path.display().to_string(),
        mesh: scene.mesh,
        spacing: scene.spacing,
        blocks: scene.blocks,
        max_particles: scene.max_particles,
        inflow: scene.inflow,
        params: scene.params,
        view: erode::mesh_preview::View::oblique(),
        scale: Some(scale),
    })
}

/// Whether a file is a mesh (by its extension), not a heightmap.
pub fn is_mesh(p: &Path) -> bool {
    crate::mesh::MeshFormat::from_path(p).is_some()
}

/// A mesh file (checked: closed, outward, no degenerate face, no two faces crossing) or a
/// heightmap's mesh.
fn surface(path: &Path, read: &crate::ReadOptions, faces: usize) -> Result<erode::models::sph::TriMesh, SceneError> {
    if !is_mesh(path) {
        return heightmap_mesh(path, read, faces);
    }
    let mesh = crate::mesh::read_mesh(path)?;
    erode::models::sph::check_mesh(&mesh, mesh.default_min_area())
        .and_then(|()| mesh.check_outward())
        .map_err(|e| SceneError::Mesh { path: path.to_path_buf(), source: e })?;
    Ok(mesh)
}

/// A heightmap's closed mesh with about `faces` faces; nodata cells become a walled shaft
/// through the solid (water reaching one falls out of the domain, booked as outflow).
fn heightmap_mesh(
    path: &Path,
    read: &crate::ReadOptions,
    faces: usize,
) -> Result<erode::models::sph::TriMesh, SceneError> {
    use erode::models::sph::{HeightmapMesh, Refine};
    let loaded = crate::read(path, read)?;
    let h = &loaded.map.heights;
    if h.width() < 2 || h.height() < 2 {
        return Err(SceneError::TooSmall { path: path.to_path_buf(), width: h.width(), height: h.height() });
    }
    let stats = loaded.map.stats();
    let aspect = (h.width() - 1) as f64 * h.cell_size().x / ((h.height() - 1) as f64 * h.cell_size().y);
    let rows = ((faces as f64 / (2.0 * aspect)).sqrt().round() as usize).clamp(1, h.height() - 1);
    let columns = ((rows as f64 * aspect).round() as usize).clamp(1, h.width() - 1);
    let depth = (0.05 * f64::from(stats.max - stats.min)).max(h.cell_size().x);
    let spec = HeightmapMesh { columns, rows, levels: 0, refine: Refine::None, base_depth: depth };
    spec.build_with_holes(h, loaded.map.nodata_mask())
        .map_err(|e| SceneError::Build { what: format!("{}: meshing", path.display()), source: e })
}

/// Water over the middle of a mesh: a block over half its width and depth, its top fifth.
fn water_over_the_middle(mesh: &erode::models::sph::TriMesh) -> FluidBlock {
    let (lo, hi) = mesh.bounds();
    let (c, e) = ((lo + hi) * 0.5, hi - lo);
    FluidBlock {
        min: [c.x - e.x / 4.0, c.y - e.y / 4.0, hi.z - e.z / 5.0],
        max: [c.x + e.x / 4.0, c.y + e.y / 4.0, hi.z + e.z / 10.0],
        velocity: [0.0; 3],
        depth: 0.0,
    }
}
