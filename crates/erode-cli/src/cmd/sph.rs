//! `erode simulate sph`: fluid particles eroding a triangle mesh (Skorkovská et al.).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use erode::models::sph::{
    FluidBlock, HeightmapMesh, Refine, SceneKind, SphParams, SphSim, SphStage, SphState, TriMesh, checkpoint, scenes,
};
use erode_io::mesh::{VertexValues, read_mesh, write_mesh, write_particles};
use serde_json::json;

use crate::cmd::simulate::{newest_checkpoint, write_checkpoint};
use crate::progress;

/// What `simulate sph` was asked for.
pub struct SphJob<'a> {
    pub input: Option<&'a Path>,
    pub scene: Option<&'a str>,
    pub particles: usize,
    pub faces: usize,
    pub iterations: u64,
    pub snapshot_every: u64,
    pub checkpoint_every: u64,
    pub resume: bool,
    pub output: &'a Path,
    pub params_file: Option<&'a Path>,
    pub sets: &'a [String],
    pub threads: Option<usize>,
    pub input_args: &'a crate::input::InputArgs,
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

fn setup(job: &SphJob) -> anyhow::Result<Setup> {
    let builtin = match job.scene {
        Some("lake") => Some(SceneKind::Lake),
        Some("tunnel") => Some(SceneKind::Tunnel),
        Some("tank") => Some(SceneKind::Tank),
        _ => None,
    };
    if let Some(kind) = builtin {
        if let Some(input) = job.input {
            bail!(
                "{}: the built-in scene `{}` brings its own mesh; put your mesh in a scene file (see `erode simulate --help`)",
                input.display(),
                job.scene.unwrap_or("")
            );
        }
        let s = kind.build(job.particles, job.faces)?;
        return Ok(Setup {
            name: job.scene.unwrap_or("").to_string(),
            mesh: s.mesh,
            spacing: s.spacing,
            blocks: s.blocks,
            max_particles: s.max_particles,
            params: s.params,
        });
    }
    let particles = if job.particles > 0 { job.particles } else { 12_528 };
    let faces = if job.faces > 0 { job.faces } else { 9_068 };
    let (name, mesh, blocks, spacing, max_particles, params) = match job.scene {
        Some(file) => {
            let path = PathBuf::from(file);
            if path.extension().and_then(|e| e.to_str()) != Some("toml") {
                bail!("--scene {file}: use lake, tunnel, tank or a scene file ending in .toml");
            }
            let scene = erode_io::scene::load_scene(&path)?;
            let faces = scene.faces.unwrap_or(faces);
            let mesh = match (job.input, &scene.mesh, &scene.heightmap) {
                (Some(p), _, _) => load_mesh(p, job.input_args, faces)?,
                (None, Some(m), _) => load_mesh(m, job.input_args, faces)?,
                (None, None, Some(h)) => heightmap_mesh(h, job.input_args, faces)?,
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
            let Some(input) = job.input else {
                bail!("simulate sph needs a mesh or heightmap, or --scene lake|tunnel|tank|FILE.toml");
            };
            let mesh = load_mesh(input, job.input_args, faces)?;
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

pub fn run(job: SphJob, quiet: bool) -> anyhow::Result<()> {
    // 1. validate everything before any long work
    let s = setup(&job)?;
    let params: SphParams = match job.params_file {
        Some(f) => erode_io::params::load(Some(f), job.sets)?,
        None => erode_io::params::apply_sets(&s.params, job.sets)?,
    };
    params.validate()?;
    let ckpt_dir = job.output.join("checkpoints");
    let fingerprint = checkpoint::params_fingerprint(&params);
    // the input: a mesh or heightmap file's bytes, or the scene's name
    let input_stamp = match job.input {
        Some(p) => crate::stamp::of_bytes(&std::fs::read(p).with_context(|| format!("{}", p.display()))?),
        None => crate::stamp::of_bytes(s.name.as_bytes()),
    };
    // the state: fresh, or the newest checkpoint's (which holds the mesh and particles)
    let (mut st, mut sim) = if job.resume {
        let (bytes, path) = newest_checkpoint(&ckpt_dir, "sph-")?;
        let (st, frame) = checkpoint::from_bytes(&bytes, fingerprint)
            .with_context(|| crate::cmd::simulate::unreadable_checkpoint(&ckpt_dir, "sph-", &path))?;
        crate::stamp::check(&ckpt_dir, input_stamp, &s.name)?;
        if st.iteration > job.iterations {
            bail!(
                "{}: the checkpoint is at iteration {}, past --iterations {}; ask for at least that many, or start \
                 afresh without --resume",
                path.display(),
                st.iteration,
                job.iterations
            );
        }
        let sim = SphSim::with_frame(params.clone(), &st, frame)?;
        (st, sim)
    } else {
        let min_area = s.mesh.default_min_area();
        let st = SphState::new(s.mesh, s.spacing, &s.blocks, s.max_particles, min_area)
            .with_context(|| format!("{}: the mesh", s.name))?;
        if st.positions.is_empty() {
            bail!("{}: the fluid blocks hold no particle (they lie inside the solid?)", s.name);
        }
        let sim = SphSim::new(params.clone(), &st)?;
        (st, sim)
    };
    let snapshots = job.output.join("snapshots");
    let pool = crate::cmd::simulate::thread_pool(job.threads)?;
    let threads = pool.current_num_threads();
    // everything is checked: only now is the output folder made
    crate::cmd::simulate::create_output_folder(job.output)?;
    if !job.resume {
        crate::stamp::write(&ckpt_dir, input_stamp)?;
    }
    if !job.resume {
        write_mesh(&job.output.join("start.ply"), &st.mesh, VertexValues::default())?;
    }

    // 2. run: the mesh written after each snapshot is the last consistent one; checkpoints
    // every --checkpoint-every iterations and at the end
    let start_iteration = st.iteration;
    let todo = job.iterations.saturating_sub(st.iteration);
    let bar = progress::bar(job.iterations, "it", quiet);
    bar.set_position(st.iteration);
    bar.set_message("sph");
    let t0 = Instant::now();
    let save = |st: &SphState, sim: &SphSim| {
        write_checkpoint(&ckpt_dir, "sph-", st.iteration, &checkpoint::to_bytes(st, &sim.frame(), fingerprint))
    };
    let outcome = pool.install(|| -> anyhow::Result<()> {
        for _ in 0..todo {
            sim.step(&mut st)?;
            bar.inc(1);
            if job.checkpoint_every > 0 && st.iteration.is_multiple_of(job.checkpoint_every) {
                save(&st, &sim)?;
            }
            if job.snapshot_every > 0 && st.iteration.is_multiple_of(job.snapshot_every) {
                std::fs::create_dir_all(&snapshots)?;
                write_particles(
                    &snapshots.join(format!("particles-{:08}.ply", st.iteration)),
                    &st.positions,
                    &st.velocities,
                    &st.sediment,
                )?;
                write_results(job.output, &st)?;
            }
            if crate::interrupt::requested() && st.iteration < job.iterations {
                bar.finish_and_clear();
                let checkpoint = save(&st, &sim)?;
                return Err(
                    crate::interrupt::Interrupted { at: format!("iteration {}", st.iteration), checkpoint }.into()
                );
            }
        }
        Ok(())
    });
    if outcome.as_ref().is_err_and(|e| e.downcast_ref::<crate::interrupt::Interrupted>().is_some()) {
        return outcome;
    }
    let seconds = t0.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let ran = st.iteration - start_iteration;
    if outcome.is_ok() && (job.checkpoint_every == 0 || !st.iteration.is_multiple_of(job.checkpoint_every)) {
        save(&st, &sim)?;
    }

    // 3. outputs, also when the run stopped (the state holds the last consistent mesh)
    let finite = st.positions.iter().chain(&st.velocities).chain(&st.mesh.positions).all(|v| v.is_finite());
    if !finite {
        bail!("the run produced non-finite values at iteration {}", st.iteration);
    }
    let staging = crate::output::Staging::new(job.output)?;
    write_results(staging.path(), &st)?;
    let balance = st.balance();
    let stage_seconds: serde_json::Map<String, serde_json::Value> = SphStage::ALL
        .iter()
        .zip(sim.stage_times())
        .map(|(stage, t)| (stage.name().to_string(), json!(t.as_secs_f64())))
        .collect();
    let report = json!({
        "model": "sph",
        "scene": s.name,
        "threads": threads,
        "iterations": st.iteration,
        "resumed_from": if job.resume { Some(start_iteration) } else { None },
        "stopped": outcome.as_ref().err().map(|e| format!("{e:#}")),
        "seconds": seconds,
        "ms_per_iteration": if ran > 0 { 1e3 * seconds / ran as f64 } else { 0.0 },
        "simulated_seconds": st.time,
        "particles": { "start": st.start_particles, "now": st.positions.len(), "left_domain": st.books.particles_lost },
        "faces": st.mesh.faces.len(),
        "vertices": st.mesh.positions.len(),
        "spacing": st.spacing,
        "top_speed": st.top_speed,
        "derived": sim.derived(),
        "mass_balance": {
            "relative_error": balance.relative_error,
            "eroded_m3": st.books.eroded,
            "deposited_m3": st.books.deposited,
            "carried_m3": balance.carried,
            "outflow_m3": st.books.outflow,
            "pending_m3": balance.pending,
            "mesh_volume_change_m3": balance.mesh_volume_change,
            "mesh_volume_start_m3": st.start_volume,
        },
        "finite": finite,
        "stage_seconds": stage_seconds,
        "params": params,
    });
    erode_io::write_atomic(&staging.path().join("report.json"), serde_json::to_string_pretty(&report)?.as_bytes())?;
    staging.commit()?;
    outcome.with_context(|| format!("the last consistent mesh is in {}", job.output.display()))
}
