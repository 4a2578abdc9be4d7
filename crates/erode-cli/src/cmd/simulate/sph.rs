//! `erode simulate sph`: fluid particles eroding a triangle mesh (Skorkovská et al.).

use std::path::PathBuf;

use anyhow::{Context, bail};
use erode::contract::SphRun;
use erode::models::sph;
use erode_io::scene::{SphSource, inline_table, sph_setup};

use erode_io::run::{Job, SphFront, Stamp, Until};

/// Fluid particles eroding a triangle mesh (Skorkovská et al.): caves, tunnels, overhangs.
#[derive(clap::Args)]
#[command(after_help = "Outputs in OUTDIR: mesh.obj, mesh.ply, mesh.glb (eroded, per-vertex erosion/deposition),
preview.png (the eroded mesh: eroded red, deposited blue), start.ply and start.png, particles.ply,
snapshots/particles-N.ply and snapshots/mesh-N.png (--snapshot-every: an image sequence for a
video), report.json; checkpoints in OUTDIR/checkpoints.

Examples:
  erode simulate sph --scene tunnel --iterations 5000 -o out
  erode simulate sph --scene tank --emitter '{ centre = [0.2, 0.2, 0.5], velocity = [0, 0, -1.5], radius = 0.1 }' -o out
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
    /// Water entering while the run goes, as a scene file's `[[emitters]]` (added to the scene's):
    /// '{ centre = [x, y, z], velocity = [vx, vy, vz], radius = R }' (or size = [W, H];
    /// rate = m³/s, default area x speed).
    #[arg(long = "emitter", value_name = "TABLE")]
    emitters: Vec<String>,
    /// A box taking out every particle entering it (added to the scene's):
    /// '{ min = [x, y, z], max = [x, y, z] }'.
    #[arg(long = "sink", value_name = "TABLE")]
    sinks: Vec<String>,
    /// Particles alive at most; emitters wait at the cap (0: the scene's, else 4x the start,
    /// at least 10,000).
    #[arg(long, default_value_t = 0)]
    particle_cap: usize,
    /// Write particles and the mesh every N iterations (0: only at the end).
    #[arg(long, default_value_t = 0)]
    snapshot_every: u64,
    #[command(flatten)]
    pub(super) run: super::RunArgs,
}

/// Validates `a` into a job: the mesh, the fluid, the parameters, the checkpoint.
pub fn job(a: Args) -> anyhow::Result<Job<SphRun, SphFront>> {
    let read = a.run.input.options()?;
    let limit = a.run.input.max_memory;
    if let Some(file) = a.input_file.as_deref().filter(|f| erode_io::scene::is_mesh(f)) {
        crate::memory::check_mesh_file(file, limit)?;
    }
    let source = SphSource {
        input: a.input_file.as_deref(),
        scene: a.scene.as_deref(),
        particles: a.particles,
        faces: a.faces,
        read: &read,
    };
    let mut s = sph_setup(source).context("simulate sph")?;
    for e in &a.emitters {
        s.inflow.emitters.push(inline_table("--emitter", e)?);
    }
    for e in &a.sinks {
        s.inflow.sinks.push(inline_table("--sink", e)?);
    }
    if a.particle_cap > 0 {
        s.inflow.particle_cap = a.particle_cap;
    }
    // the most particles the run may hold: those it starts with, or the inflow's cap
    let most = if s.inflow.emitters.is_empty() {
        s.max_particles
    } else if s.inflow.particle_cap > 0 {
        s.inflow.particle_cap.max(s.max_particles)
    } else {
        (4 * s.max_particles).max(10_000)
    };
    crate::memory::check_sph(most, s.mesh.faces.len(), limit)?;
    let params: sph::Params = match &a.run.params {
        Some(f) => erode_io::params::load(Some(f), &a.run.sets)?,
        None => erode_io::params::apply_sets(&s.params, &a.run.sets)?,
    };
    params.validate()?;
    let stamp = Stamp { hash: s.input_hash(), input: s.name.clone() };
    let checkpoint = a.run.checkpoint(SphRun::NAME)?;
    let model = match &checkpoint {
        // the checkpoint holds the mesh and the particles
        Some(c) => c.resume(|bytes| SphRun::resume(params, bytes))?,
        None => {
            let st = s.state().with_context(|| format!("{}: the mesh or the inflow", s.name))?;
            if st.positions.is_empty() && st.inflow.emitters.is_empty() {
                bail!("{}: the fluid blocks hold no particle (they lie inside the solid?)", s.name);
            }
            SphRun::new(params, st)?
        }
    };
    let front = SphFront::new(&s.name, a.snapshot_every, s.view).scaled(s.scale);
    // a scene named by a file (not one of the built-in scenes)
    let scene_file = a.scene.as_deref().map(std::path::Path::new).filter(|p| p.is_file());
    let files = [a.input_file.as_deref(), scene_file];
    a.run.job(model, front, Until::Count(a.iterations), checkpoint, stamp, &files)
}
