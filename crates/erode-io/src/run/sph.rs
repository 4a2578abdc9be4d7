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
}

impl SphFront {
    /// The outputs of a run of scene `scene`, with a snapshot every `snapshot_every` iterations
    /// (0: none), its previews seen as `view`.
    pub fn new(scene: &str, snapshot_every: u64, view: View) -> Self {
        Self { scene: scene.into(), snapshot_every, view }
    }
}

/// Previews are this many pixels across and down.
const PREVIEW_SIZE: (usize, usize) = (1200, 800);

/// The mesh seen as `view`, coloured by the surface's change.
fn preview(st: &sph::State, view: View) -> erode::preview::Rgb8Image {
    let change = mesh_preview::vertex_change(&st.mesh, &st.eroded, &st.deposited);
    mesh_preview::render(&st.mesh, &change, 0.0, view, PREVIEW_SIZE.0, PREVIEW_SIZE.1)
}

fn write_results(out: &Path, st: &sph::State, view: View) -> Result<(), Error> {
    let values = VertexValues { erosion: Some(&st.eroded), deposition: Some(&st.deposited) };
    for ext in ["obj", "ply", "glb"] {
        write_mesh(&out.join(format!("mesh.{ext}")), &st.mesh, values)?;
    }
    crate::write_rgb_png(&out.join("preview.png"), &preview(st, view))?;
    write_particles(&out.join("particles.ply"), &st.positions, &st.velocities, &st.sediment)
}

impl Front<SphRun> for SphFront {
    fn begin(&mut self, model: &SphRun, out: &Path, fresh: bool, _watch: &dyn Watch) -> Result<(), RunError> {
        if fresh {
            write_mesh(&out.join("start.ply"), &model.state().mesh, VertexValues::default())?;
            crate::write_rgb_png(&out.join("start.png"), &preview(model.state(), self.view))?;
        }
        Ok(())
    }
    fn snapshot_every(&self) -> u64 {
        self.snapshot_every
    }
    fn snapshot(&mut self, model: &SphRun, out: &Path) -> Result<(), RunError> {
        // the mesh written with each snapshot is the last consistent one
        let st = model.state();
        let snapshots = out.join("snapshots");
        std::fs::create_dir_all(&snapshots).map_err(|e| Error::io(&snapshots, e))?;
        let file = snapshots.join(format!("particles-{:08}.ply", st.iteration));
        write_particles(&file, &st.positions, &st.velocities, &st.sediment)?;
        // one picture per snapshot: an image sequence to make a video of
        let picture = snapshots.join(format!("mesh-{:08}.png", st.iteration));
        crate::write_rgb_png(&picture, &preview(st, self.view))?;
        Ok(write_results(out, st, self.view)?)
    }
    fn write_outputs(&self, model: &SphRun, dir: &Path) -> Result<(), RunError> {
        Ok(write_results(dir, model.state(), self.view)?)
    }
    fn report(&self, model: &SphRun) -> Map<String, Value> {
        let st = model.state();
        let report = json!({
            "scene": self.scene,
            "simulated_seconds": st.time,
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
            "params": model.params(),
        });
        report.as_object().cloned().unwrap_or_default()
    }
}
