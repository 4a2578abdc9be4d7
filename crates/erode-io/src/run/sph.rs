//! What an SPH run writes: the eroded mesh (OBJ, PLY, glTF, with erosion and deposition per
//! vertex) and its picture, the particles, the starting mesh and its picture, snapshots (with a
//! picture each: an image sequence), the report's fields.

use std::path::Path;

use erode::contract::SphRun;
use erode::mesh_preview::{self, View};
use erode::models::sph;
use serde_json::{Map, Value, json};

use super::{Front, RunError, Watch};
use crate::Error;
use crate::mesh::{VertexValues, write_mesh, write_particles};

/// The SPH model's part of a run.
pub struct SphFront {
    scene: String,
    snapshot_every: u64,
    view: View,
    scale: Option<sph::ModelScale>,
    /// The top speed was said to pass the scene's bound.
    spray_noted: bool,
    /// Where the starting mesh and its picture are kept during the run.
    start_dir: Option<std::path::PathBuf>,
}

/// The starting mesh and its picture.
const START_NAMES: [&str; 2] = ["start.ply", "start.png"];

impl SphFront {
    /// The outputs of a run of scene `scene`, with a snapshot every `snapshot_every` iterations
    /// (0: none), its previews seen as `view`.
    pub fn new(scene: &str, snapshot_every: u64, view: View) -> Self {
        Self { scene: scene.into(), snapshot_every, view, scale: None, spray_noted: false, start_dir: None }
    }

    /// The same, for a heightmap's scale model: meshes and particles are written in the
    /// terrain's metres, and the report gives the scale.
    pub fn scaled(self, scale: Option<sph::ModelScale>) -> Self {
        Self { scale, ..self }
    }
}

/// The mesh, per-vertex volumes and particles as written: in the terrain's units for a scale
/// model, else as simulated.
struct Written {
    mesh: sph::TriMesh,
    eroded: Vec<f64>,
    deposited: Vec<f64>,
    positions: Vec<glam::DVec3>,
    velocities: Vec<glam::DVec3>,
    sediment: Vec<f64>,
}

impl Written {
    fn of(st: &sph::State, scale: Option<sph::ModelScale>) -> Self {
        let mut w = Written {
            mesh: st.mesh.clone(),
            eroded: st.eroded.clone(),
            deposited: st.deposited.clone(),
            positions: st.positions.clone(),
            velocities: st.velocities.clone(),
            sediment: st.sediment.clone(),
        };
        if let Some(s) = scale {
            w.mesh.positions.iter_mut().for_each(|p| *p = s.to_terrain(*p));
            for v in w.eroded.iter_mut().chain(&mut w.deposited).chain(&mut w.sediment) {
                *v = s.volume_to_terrain(*v);
            }
            w.positions.iter_mut().for_each(|p| *p = s.to_terrain(*p));
            w.velocities.iter_mut().for_each(|v| *v = s.velocity_to_terrain(*v));
        }
        w
    }
}

/// Previews are this many pixels across and down.
const PREVIEW_SIZE: (usize, usize) = (1200, 800);

/// The mesh seen as `view`, coloured by the surface's change.
fn preview(st: &sph::State, view: View) -> erode::preview::Rgb8Image {
    let change = mesh_preview::vertex_change(&st.mesh, &st.eroded, &st.deposited);
    mesh_preview::render(&st.mesh, &change, 0.0, view, PREVIEW_SIZE.0, PREVIEW_SIZE.1)
}

fn write_results(out: &Path, st: &sph::State, view: View, scale: Option<sph::ModelScale>) -> Result<(), Error> {
    let w = Written::of(st, scale);
    let values = VertexValues { erosion: Some(&w.eroded), deposition: Some(&w.deposited) };
    for ext in ["obj", "ply", "glb"] {
        write_mesh(&out.join(format!("mesh.{ext}")), &w.mesh, values)?;
    }
    crate::write_rgb_png(&out.join("preview.png"), &preview(st, view))?;
    write_particles(&out.join("particles.ply"), &w.positions, &w.velocities, &w.sediment)
}

impl Front<SphRun> for SphFront {
    /// The particles are the run's result beside its mesh preview: the viewer opens the output
    /// folder where the run ended, from its last checkpoint.
    fn keeps_final_state(&self) -> bool {
        true
    }
    fn begin(&mut self, model: &SphRun, out: &Path, fresh: bool, _watch: &dyn Watch) -> Result<(), RunError> {
        // the starting mesh and its picture are kept with the checkpoints (the run's own, until
        // its output set is written; a resumed run finds them there)
        let dir = super::checkpoints::folder(out);
        if fresh {
            std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
            let start = Written::of(model.state(), self.scale);
            write_mesh(&dir.join(START_NAMES[0]), &start.mesh, VertexValues::default())?;
            crate::write_rgb_png(&dir.join(START_NAMES[1]), &preview(model.state(), self.view))?;
        }
        self.start_dir = Some(dir);
        Ok(())
    }
    fn after_advance(&mut self, model: &SphRun, watch: &dyn Watch) {
        // faster than falling from the highest water allows: spray thrown by impacts, which
        // the sound speed (10x the bound) was not set for
        let (top, bound) = (model.state().top_speed, model.derived().top_speed_bound);
        if top > bound && !self.spray_noted {
            self.spray_noted = true;
            watch.note(&format!(
                "erode: particles reached {top:.3} m/s at iteration {}, past the {bound:.3} m/s the water can reach by falling (spray: the sound speed was set for the bound; the run goes on, see report.json's top_speed)",
                model.state().iteration
            ));
        }
    }
    fn snapshot_every(&self) -> u64 {
        self.snapshot_every
    }
    fn snapshot(&mut self, model: &SphRun, out: &Path) -> Result<(), RunError> {
        // the output set's files come with its report only: a snapshot writes its own
        let st = model.state();
        let snapshots = out.join("snapshots");
        std::fs::create_dir_all(&snapshots).map_err(|e| Error::io(&snapshots, e))?;
        let file = snapshots.join(format!("particles-{:08}.ply", st.iteration));
        let w = Written::of(st, self.scale);
        write_particles(&file, &w.positions, &w.velocities, &w.sediment)?;
        // one picture per snapshot: an image sequence to make a video of
        let picture = snapshots.join(format!("mesh-{:08}.png", st.iteration));
        Ok(crate::write_rgb_png(&picture, &preview(st, self.view))?)
    }
    fn write_outputs(&self, model: &SphRun, dir: &Path) -> Result<(), RunError> {
        write_results(dir, model.state(), self.view, self.scale)?;
        // the starting mesh, if this run (or the one it resumes) began in this folder
        for name in START_NAMES {
            let Some(from) = self.start_dir.as_ref().map(|d| d.join(name)).filter(|p| p.is_file()) else { continue };
            let to = dir.join(name);
            std::fs::copy(&from, &to).map_err(|e| Error::io(&to, e))?;
        }
        Ok(())
    }
    fn file_names(&self, _model: &SphRun) -> Vec<String> {
        ["mesh.obj", "mesh.ply", "mesh.glb", "preview.png", "particles.ply", "start.ply", "start.png"]
            .map(String::from)
            .to_vec()
    }
    fn preset(&self) -> Option<&str> {
        None
    }
    fn params(&self, model: &SphRun) -> Value {
        json!(model.params())
    }
    fn details(&self, model: &SphRun) -> Map<String, Value> {
        let st = model.state();
        let report = json!({
            "scene": self.scene,
            // the surface changed as in this long (the morphological factor times the time)
            "morphological_seconds": st.time * model.params().morphological_factor,
            "particles": {
                "start": st.start_particles,
                "now": st.positions.len(),
                "let_in": st.books.particles_emitted,
                "left_domain": st.books.particles_lost,
                "unaccounted": st.balance().particles_unaccounted,
            },
            "faces": st.mesh.faces.len(),
            "vertices": st.mesh.positions.len(),
            "spacing": st.spacing,
            "top_speed": st.top_speed,
            "derived": model.derived(),
        });
        let mut report = report.as_object().cloned().unwrap_or_default();
        if let Some(s) = self.scale {
            // what the model's books and clock mean at the terrain's size
            let books = &st.books;
            report.insert(
                "scale_model".into(),
                json!({
                    "horizontal": s.horizontal,
                    "vertical": s.vertical,
                    "exaggeration": s.exaggeration(),
                    "base_m": s.base,
                    "terrain_seconds": s.seconds_to_terrain(st.time),
                    "terrain_morphological_seconds": s.seconds_to_terrain(st.time * model.params().morphological_factor),
                    "terrain_eroded_m3": s.volume_to_terrain(books.eroded),
                    "terrain_deposited_m3": s.volume_to_terrain(books.deposited),
                }),
            );
        }
        report
    }
}
