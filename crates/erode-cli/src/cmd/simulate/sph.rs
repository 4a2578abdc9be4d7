//! `erode simulate sph`: fluid particles eroding a triangle mesh (Skorkovská et al.).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use erode::contract::SphRun;
use erode::models::sph::{FluidBlock, HeightmapMesh, Refine, SceneKind, SphParams, SphState, TriMesh, scenes};
use erode_io::mesh::{VertexValues, read_mesh, write_mesh, write_particles};
use serde_json::{Map, Value, json};

use super::run::{Front, Job, Stamp, Until};

/// Fluid particles eroding a triangle mesh (Skorkovská et al.): caves, tunnels, overhangs.
#[derive(clap::Args)]
#[command(after_help = "Outputs in OUTDIR: mesh.obj, mesh.ply, mesh.glb (eroded, per-vertex erosion/deposition),
start.ply, particles.ply, snapshots/particles-N.ply (--snapshot-every), report.json; checkpoints in
OUTDIR/checkpoints.

Examples:
  erode simulate sph --scene tunnel --iterations 2000 -o out
  erode simulate sph --scene lake --particles 12528 --faces 9068 --iterations 500 -o out
  erode simulate sph cave.obj --scene cave.toml --iterations 5000 -o out
  erode simulate sph dem.tif --faces 4000 --particles 3000 -o out
  erode simulate sph --scene lake --iterations 4000 --checkpoint-every 1000 -o out   (then --resume)")]
pub struct Args {
    /// A mesh (.obj, .ply, .stl: closed, outward) or a heightmap; optional with --scene.
    input_file: Option<PathBuf>,
    /// lake, tunnel, tank, or a scene file (TOML: mesh, fluid blocks, parameters).
    #[arg(long)]
    scene: Option<String>,
    /// Iterations in total (with --resume, including those already done).
    #[arg(long, default_value_t = 1000)]
    iterations: u64,
    /// Particles (0: the scene's; lake and tunnel default to Skorkovská et al.'s 12,528).
    #[arg(long, default_value_t = 0)]
    particles: usize,
    /// About this many faces for a built-in scene or a heightmap (0: the scene's).
    #[arg(long, default_value_t = 0)]
    faces: usize,
    /// Write particles and the mesh every N iterations (0: only at the end).
    #[arg(long, default_value_t = 0)]
    snapshot_every: u64,
    #[command(flatten)]
    run: super::RunArgs,
}

/// The mesh, the fluid and the parameters of a run.
struct Setup {
    name: String,
    mesh: TriMesh,
    spacing: f64,
    blocks: Vec<FluidBlock>,
    max_particles: usize,
    params: SphParams,
}

fn is_mesh(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref(),
        Some("obj" | "ply" | "stl")
    )
}

/// A heightmap's closed mesh with about `faces` faces, open where the heightmap has no data.
fn heightmap_mesh(path: &Path, args: &crate::input::InputArgs, faces: usize) -> anyhow::Result<TriMesh> {
    let loaded = erode_io::read(path, &args.options()?)?;
    let h = &loaded.map.heights;
    if h.width() < 2 || h.height() < 2 {
        bail!(
            "{}: a heightmap of {} x {} cells has no area to mesh (SPH needs at least 2 x 2)",
            path.display(),
            h.width(),
            h.height()
        );
    }
    let stats = loaded.map.stats();
    let aspect = (h.width() - 1) as f64 * h.cell_size().x / ((h.height() - 1) as f64 * h.cell_size().y);
    let rows = ((faces as f64 / (2.0 * aspect)).sqrt().round() as usize).clamp(1, h.height() - 1);
    let columns = ((rows as f64 * aspect).round() as usize).clamp(1, h.width() - 1);
    let depth = (0.05 * f64::from(stats.max - stats.min)).max(h.cell_size().x);
    let spec = HeightmapMesh { columns, rows, levels: 0, refine: Refine::None, base_depth: depth };
    // nodata cells become a walled shaft through the solid (water reaching one falls out of
    // the domain, booked as outflow)
    spec.build_with_holes(h, loaded.map.nodata_mask()).with_context(|| format!("{}: meshing", path.display()))
}

/// A mesh file (validated: closed, oriented, no degenerate face) or a heightmap's mesh.
fn load_mesh(path: &Path, args: &crate::input::InputArgs, faces: usize) -> anyhow::Result<TriMesh> {
    if !is_mesh(path) {
        return heightmap_mesh(path, args, faces);
    }
    let mesh = read_mesh(path)?;
    // closed, outward, no degenerate face, no two faces crossing (overlapping parts)
    erode::models::sph::check_mesh(&mesh, mesh.default_min_area())
        .and_then(|()| mesh.check_outward())
        .with_context(|| format!("{}", path.display()))?;
    Ok(mesh)
}

/// Water over the middle of a mesh: a block over half its width and depth, its top fifth.
fn default_block(mesh: &TriMesh) -> FluidBlock {
    let (lo, hi) = mesh.bounds();
    let (c, e) = ((lo + hi) * 0.5, hi - lo);
    FluidBlock {
        min: [c.x - e.x / 4.0, c.y - e.y / 4.0, hi.z - e.z / 5.0],
        max: [c.x + e.x / 4.0, c.y + e.y / 4.0, hi.z + e.z / 10.0],
        velocity: [0.0; 3],
    }
}

fn setup(job: &Args) -> anyhow::Result<Setup> {
    let builtin = match job.scene.as_deref() {
        Some("lake") => Some(SceneKind::Lake),
        Some("tunnel") => Some(SceneKind::Tunnel),
        Some("tank") => Some(SceneKind::Tank),
        _ => None,
    };
    if let Some(kind) = builtin {
        if let Some(input) = job.input_file.as_deref() {
            bail!(
                "{}: the built-in scene `{}` brings its own mesh; put your mesh in a scene file (see `erode simulate --help`)",
                input.display(),
                job.scene.as_deref().unwrap_or("")
            );
        }
        let s = kind.build(job.particles, job.faces)?;
        return Ok(Setup {
            name: job.scene.as_deref().unwrap_or("").to_string(),
            mesh: s.mesh,
            spacing: s.spacing,
            blocks: s.blocks,
            max_particles: s.max_particles,
            params: s.params,
        });
    }
    let particles = if job.particles > 0 { job.particles } else { 12_528 };
    let faces = if job.faces > 0 { job.faces } else { 9_068 };
    let (name, mesh, blocks, spacing, max_particles, params) = match job.scene.as_deref() {
        Some(file) => {
            let path = PathBuf::from(file);
            if path.extension().and_then(|e| e.to_str()) != Some("toml") {
                bail!("--scene {file}: use lake, tunnel, tank or a scene file ending in .toml");
            }
            let scene = erode_io::scene::load_scene(&path)?;
            let faces = scene.faces.unwrap_or(faces);
            let mesh = match (job.input_file.as_deref(), &scene.mesh, &scene.heightmap) {
                (Some(p), _, _) => load_mesh(p, &job.run.input, faces)?,
                (None, Some(m), _) => load_mesh(m, &job.run.input, faces)?,
                (None, None, Some(h)) => heightmap_mesh(h, &job.run.input, faces)?,
                (None, None, None) => bail!("{file}: names no mesh or heightmap, and none was given"),
            };
            let max = if job.particles > 0 { job.particles } else { scene.particles.unwrap_or(particles) };
            let spacing = match scene.spacing {
                Some(s) => s,
                None => scenes::spacing_for(&mesh, &scene.blocks, max).with_context(|| file.to_string())?,
            };
            (file.to_string(), mesh, scene.blocks, spacing, max, scene.params)
        }
        None => {
            let Some(input) = job.input_file.as_deref() else {
                bail!("simulate sph needs a mesh or heightmap, or --scene lake|tunnel|tank|FILE.toml");
            };
            let mesh = load_mesh(input, &job.run.input, faces)?;
            let block = default_block(&mesh);
            let spacing = scenes::spacing_for(&mesh, &[block], particles)
                .with_context(|| format!("{}: no room for water above the mesh", input.display()))?;
            (input.display().to_string(), mesh, vec![block], spacing, particles, SphParams::default())
        }
    };
    Ok(Setup { name, mesh, spacing, blocks, max_particles, params })
}

fn write_results(out: &Path, st: &SphState) -> anyhow::Result<()> {
    let values = VertexValues { erosion: Some(&st.eroded), deposition: Some(&st.deposited) };
    for ext in ["obj", "ply", "glb"] {
        write_mesh(&out.join(format!("mesh.{ext}")), &st.mesh, values)?;
    }
    write_particles(&out.join("particles.ply"), &st.positions, &st.velocities, &st.sediment)?;
    Ok(())
}

/// The SPH model's part of a run.
pub struct SphFront {
    scene: String,
    snapshot_every: u64,
}

/// Validates `a` into a job: the mesh, the fluid, the parameters, the checkpoint.
pub fn job(a: Args) -> anyhow::Result<Job<SphRun, SphFront>> {
    let s = setup(&a)?;
    let params: SphParams = match &a.run.params {
        Some(f) => erode_io::params::load(Some(f), &a.run.sets)?,
        None => erode_io::params::apply_sets(&s.params, &a.run.sets)?,
    };
    params.validate()?;
    // the input: a mesh or heightmap file's bytes, or the scene's name
    let hash = match &a.input_file {
        Some(p) => crate::stamp::of_bytes(&std::fs::read(p).with_context(|| format!("{}", p.display()))?),
        None => crate::stamp::of_bytes(s.name.as_bytes()),
    };
    let checkpoint = a.run.checkpoint("sph")?;
    let model = match &checkpoint {
        // the checkpoint holds the mesh and the particles
        Some(c) => SphRun::resume(params, &c.bytes).with_context(|| c.unreadable())?,
        None => {
            let min_area = s.mesh.default_min_area();
            let st = SphState::new(s.mesh, s.spacing, &s.blocks, s.max_particles, min_area)
                .with_context(|| format!("{}: the mesh", s.name))?;
            if st.positions.is_empty() {
                bail!("{}: the fluid blocks hold no particle (they lie inside the solid?)", s.name);
            }
            SphRun::new(params, st)?
        }
    };
    let front = SphFront { scene: s.name.clone(), snapshot_every: a.snapshot_every };
    a.run.job(model, front, Until::Count(a.iterations), checkpoint, Stamp { hash, input: s.name })
}

impl Front<SphRun> for SphFront {
    fn begin(&mut self, model: &SphRun, out: &Path, fresh: bool, _quiet: bool) -> anyhow::Result<()> {
        if fresh {
            write_mesh(&out.join("start.ply"), &model.state().mesh, VertexValues::default())?;
        }
        Ok(())
    }
    fn snapshot_every(&self) -> u64 {
        self.snapshot_every
    }
    fn snapshot(&mut self, model: &SphRun, out: &Path) -> anyhow::Result<()> {
        // the mesh written with each snapshot is the last consistent one
        let st = model.state();
        let snapshots = out.join("snapshots");
        std::fs::create_dir_all(&snapshots).with_context(|| format!("{}: cannot create", snapshots.display()))?;
        let file = snapshots.join(format!("particles-{:08}.ply", st.iteration));
        write_particles(&file, &st.positions, &st.velocities, &st.sediment)?;
        write_results(out, st)
    }
    fn write_outputs(&self, model: &SphRun, dir: &Path) -> anyhow::Result<()> {
        write_results(dir, model.state())
    }
    fn report(&self, model: &SphRun) -> Map<String, Value> {
        let st = model.state();
        let report = json!({
            "scene": self.scene,
            "simulated_seconds": st.time,
            "particles": { "start": st.start_particles, "now": st.positions.len(), "left_domain": st.books.particles_lost },
            "faces": st.mesh.faces.len(),
            "vertices": st.mesh.positions.len(),
            "spacing": st.spacing,
            "top_speed": st.top_speed,
            "derived": model.derived(),
            "params": model.params(),
        });
        report.as_object().cloned().unwrap_or_default()
    }
}
