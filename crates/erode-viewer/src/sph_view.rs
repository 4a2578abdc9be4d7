//! The SPH model in the viewer (Skorkovská, Kolingerová & Beneš): the surface mesh shaded and
//! coloured by what eroded (orange) and what was deposited (green) at each vertex, the particles
//! as blue points (lighter the faster they run); play, pause, step; every parameter live, edited
//! as the CLI's `--set`; a snapshot of mesh and particles; a session; a headless screenshot.
//!
//! The model runs under the library's contract ([`erode::contract::SphRun`]) on the UI thread,
//! as many steps a frame as fit in `STEP_BUDGET` (at least one). The mesh is drawn with egui's
//! painter, faces and particles sorted far to near, faces turned away culled (a closed tank shows
//! its inside, a terrain block its top), so no GPU pipeline is needed for it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use eframe::egui;
use erode::contract::{Model, SphRun};
use erode::models::sph;
use glam::{DVec3, Vec3};

use crate::app::{Frames, Headless, ViewReport};
use crate::camera::Camera;

/// Wall time the model takes per frame while playing (one step at least): four times what the
/// rest of the frame (drawing, the panel) took, so the model has about 80 % of the time, within
/// these bounds (25 ms: 40 frames a second where drawing is quick; 250 ms: 4 where it is slow,
/// as on a software renderer).
const STEP_BUDGET: (Duration, Duration) = (Duration::from_millis(25), Duration::from_millis(250));

/// The clear colour of the view (as the terrain view's).
const SKY: egui::Color32 = egui::Color32::from_rgb(140, 173, 209);

/// An SPH scene to open: a built-in scene, a scene file or a mesh (see
/// [`erode_io::scene::sph_setup`]).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SphScene {
    /// A mesh or heightmap file.
    pub input: Option<PathBuf>,
    /// lake, tunnel, tank or a scene file (`.toml`).
    pub scene: Option<String>,
    /// Particles (0: the scene's).
    pub particles: usize,
    /// About this many faces (0: the scene's).
    pub faces: usize,
    /// The parameters, when changed in the viewer (none: the scene's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Box<sph::Params>>,
    /// A checkpoint of this scene to go on from (a saved session's).
    #[serde(skip)]
    pub checkpoint: Option<PathBuf>,
}

/// The files of a saved SPH session, in its folder: the scene and the state.
const SESSION_SCENE: &str = "sph-session.toml";
const SESSION_STATE: &str = "sph-state.ckpt";

/// Whether `dir` holds a saved SPH session.
pub fn is_session(dir: &std::path::Path) -> bool {
    dir.join(SESSION_SCENE).is_file()
}

/// Saves `run` of `scene` as a session in `dir` (the scene, and the state as a checkpoint), to
/// open again with `erode view DIR`.
pub fn save_session(dir: &std::path::Path, scene: &SphScene, run: &SphRun) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut scene = scene.clone();
    // paths as absolute, so the session opens from anywhere
    scene.input = scene.input.map(|p| std::path::absolute(&p).unwrap_or(p));
    if let Some(file) = scene.scene.as_deref().filter(|s| s.ends_with(".toml")) {
        scene.scene = Some(std::path::absolute(file).map_or(file.to_string(), |p| p.display().to_string()));
    }
    let text = toml::to_string(&scene).map_err(|e| e.to_string())?;
    erode_io::write_atomic(&dir.join(SESSION_STATE), &run.checkpoint()).map_err(|e| e.to_string())?;
    erode_io::write_atomic(&dir.join(SESSION_SCENE), text.as_bytes()).map_err(|e| e.to_string())
}

/// The scene of the session saved in `dir`, set to go on from its state.
pub fn open_session(dir: &std::path::Path) -> Result<SphScene, String> {
    let path = dir.join(SESSION_SCENE);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut scene: SphScene = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    scene.checkpoint = Some(dir.join(SESSION_STATE));
    Ok(scene)
}

/// Whether `dir` is the output folder of an `erode simulate sph` run (its report).
pub fn is_sph_output(dir: &std::path::Path) -> bool {
    std::fs::read_to_string(dir.join("report.json"))
        .is_ok_and(|t| serde_json::from_str::<serde_json::Value>(&t).is_ok_and(|r| r["model"] == "sph"))
}

/// The run in `dir`, the output folder of `erode simulate sph`, set to go on from its newest
/// checkpoint with the parameters its report names.
pub fn open_output(dir: &std::path::Path) -> Result<SphScene, String> {
    let path = dir.join("report.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let report: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let params: sph::Params =
        serde_json::from_value(report["params"].clone()).map_err(|e| format!("{}: params: {e}", path.display()))?;
    let newest = erode_io::run::Newest::read(dir, "sph").map_err(|e| e.to_string())?;
    Ok(SphScene {
        scene: report["details"]["scene"].as_str().map(String::from),
        params: Some(Box::new(params)),
        checkpoint: Some(newest.path),
        ..Default::default()
    })
}

impl SphScene {
    /// The run of this scene at its start (or at its checkpoint), and the scene's name.
    pub fn start(&self) -> Result<(SphRun, String), String> {
        // a checkpoint holds mesh and particles: with its parameters known, the scene need not
        // be built again (nor its files be where they were)
        if let (Some(file), Some(params)) = (&self.checkpoint, &self.params) {
            let bytes = erode_io::run::read_frame(file).map_err(|e| e.to_string())?;
            let run =
                SphRun::resume(params.as_ref().clone(), &bytes).map_err(|e| format!("{}: {e}", file.display()))?;
            let name = self.scene.clone().or_else(|| self.input.as_ref().map(|p| p.display().to_string()));
            return Ok((run, name.unwrap_or_else(|| "sph".into())));
        }
        let read = erode_io::ReadOptions::default();
        let source = erode_io::scene::SphSource {
            input: self.input.as_deref(),
            scene: self.scene.as_deref(),
            particles: self.particles,
            faces: self.faces,
            read: &read,
        };
        let s = erode_io::scene::sph_setup(source).map_err(|e| e.to_string())?;
        let params = self.params.as_deref().cloned().unwrap_or_else(|| s.params.clone());
        params.validate().map_err(|e| format!("{}: {e}", s.name))?;
        if let Some(file) = &self.checkpoint {
            let bytes = erode_io::run::read_frame(file).map_err(|e| e.to_string())?;
            let run = SphRun::resume(params, &bytes).map_err(|e| format!("{}: {e}", file.display()))?;
            return Ok((run, s.name));
        }
        let st = s.state().map_err(|e| format!("{}: {e}", s.name))?;
        if st.positions.is_empty() && st.inflow.emitters.is_empty() {
            return Err(format!("{}: the fluid blocks hold no particle (they lie inside the solid?)", s.name));
        }
        let run = SphRun::new(params, st).map_err(|e| e.to_string())?;
        Ok((run, s.name))
    }
}

/// Applies `set` (`key=value`) to the parameters of `run` as the CLI's `--set` does (validated;
/// an error names the parameter) and keeps them in `scene`, so a saved session goes on with them.
pub fn set_param(run: &mut SphRun, scene: &mut SphScene, set: &str) -> Result<(), String> {
    let params: sph::Params =
        erode_io::params::apply_sets(run.params(), &[set.to_string()]).map_err(|e| e.to_string())?;
    run.set_params(params.clone()).map_err(|e| e.to_string())?;
    scene.params = Some(Box::new(params));
    Ok(())
}

/// World space of the view (y up) from the model's (z up): a rotation about x.
fn world(p: DVec3, centre: DVec3) -> Vec3 {
    let q = p - centre;
    Vec3::new(q.x as f32, q.z as f32, -q.y as f32)
}

/// The SPH viewer.
pub struct SphApp {
    run: SphRun,
    scene: SphScene,
    name: String,
    centre: DVec3,
    camera: Camera,
    playing: bool,
    show_particles: bool,
    /// The surface drawn half transparent, to see water inside a solid (a tunnel).
    see_through: bool,
    stopped: Option<String>,
    folder: String,
    message: Option<(String, bool)>,
    /// The parameter fields being edited.
    param_text: std::collections::HashMap<&'static str, String>,
    frames: Frames,
    /// When the last frame's stepping began and how long it took.
    last_frame: Option<(Instant, Duration)>,
    /// This frame's time for the model.
    budget: Duration,
}

impl SphApp {
    /// The app on `run` (of `scene`, named `name`), playing from the start when `headless` asks
    /// for frames.
    pub fn new(run: SphRun, scene: SphScene, name: String, headless: Headless, report: Arc<Mutex<ViewReport>>) -> Self {
        let tunnel = name == "tunnel" || name.ends_with(".toml");
        let (lo, hi) = run.state().mesh.bounds();
        let centre = (lo + hi) * 0.5;
        let extent = hi - lo;
        let mut camera = Camera::framing(extent.x as f32, extent.y as f32, Vec3::ZERO);
        camera.distance = (extent.max_element() as f32 * 1.9).max(1e-2);
        camera.pitch = 0.6;
        Self {
            run,
            scene,
            name,
            centre,
            camera,
            playing: headless.frames > 0 && !headless.paused,
            show_particles: true,
            see_through: tunnel,
            stopped: None,
            folder: "sph-snapshot".into(),
            message: None,
            param_text: Default::default(),
            frames: Frames::new(headless, report),
            last_frame: None,
            budget: STEP_BUDGET.0,
        }
    }

    /// Runs steps for up to the frame's budget (one when `once`).
    fn advance(&mut self, once: bool) {
        let t0 = Instant::now();
        if let Some((start, stepped)) = self.last_frame {
            let rest = t0.duration_since(start).saturating_sub(stepped);
            self.budget = (rest * 4).clamp(STEP_BUDGET.0, STEP_BUDGET.1);
        }
        let budget = self.budget;
        self.step_for(once, t0, budget);
        self.last_frame = Some((t0, t0.elapsed()));
    }

    fn step_for(&mut self, once: bool, t0: Instant, budget: Duration) {
        loop {
            if let Err(e) = self.run.advance(1, &mut |_| {}) {
                // the state keeps the last consistent mesh
                self.stopped = Some(e.to_string());
                self.playing = false;
                return;
            }
            if once || t0.elapsed() >= budget {
                return;
            }
        }
    }

    /// Writes the mesh (with per-vertex erosion and deposition) and the particles as PLY into
    /// the snapshot folder.
    fn save_snapshot(&self) -> Result<PathBuf, String> {
        let dir = PathBuf::from(self.folder.trim());
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let st = self.run.state();
        let values = erode_io::mesh::VertexValues { erosion: Some(&st.eroded), deposition: Some(&st.deposited) };
        let mesh = dir.join(format!("mesh-{:08}.ply", st.iteration));
        erode_io::mesh::write_mesh(&mesh, &st.mesh, values).map_err(|e| e.to_string())?;
        let particles = dir.join(format!("particles-{:08}.ply", st.iteration));
        erode_io::mesh::write_particles(&particles, &st.positions, &st.velocities, &st.sediment)
            .map_err(|e| e.to_string())?;
        Ok(dir)
    }

    fn side_panel(&mut self, ui: &mut egui::Ui) {
        let st = self.run.state();
        let books = self.run.balance();
        ui.heading(format!("SPH: {}", self.name));
        ui.label(format!("iteration {}, {:.3} s simulated", st.iteration, st.time));
        ui.label(format!(
            "particles {} (start {}, let in {}, left {})",
            st.positions.len(),
            st.start_particles,
            st.books.particles_emitted,
            st.books.particles_lost
        ));
        ui.label(format!("faces {}, vertices {}", st.mesh.faces.len(), st.mesh.positions.len()));
        ui.label(format!("eroded {:.3e} m³, deposited {:.3e} m³", st.books.eroded, st.books.deposited));
        // erosion takes thousands of iterations to show: say so, and how to see it sooner
        let factor = self.run.params().morphological_factor;
        ui.label(format!(
            "erosion applied {factor}x (morphological_factor); the lake's outlet lowers visibly after \
             ~8,000 iterations at 100x (~100 s on 2 cores): raise it to see change sooner"
        ))
        .on_hover_text("the CLI's scene runs these same parameters (erode simulate sph --scene NAME)");
        ui.label(format!("books {:.1e}", books.relative_error));
        ui.label(format!("top speed {:.2} m/s", st.top_speed));
        ui.separator();
        ui.horizontal(|ui| {
            let label = if self.playing { "Pause" } else { "Play" };
            if ui.button(label).clicked() && self.stopped.is_none() {
                self.playing = !self.playing;
            }
            if ui.button("Step").clicked() && self.stopped.is_none() {
                self.playing = false;
                self.advance(true);
            }
        });
        ui.checkbox(&mut self.show_particles, "particles");
        ui.checkbox(&mut self.see_through, "see-through surface");
        ui.separator();
        ui.label("Snapshot folder");
        ui.text_edit_singleline(&mut self.folder);
        if ui.button("Save mesh and particles (PLY)").clicked() {
            self.message = Some(match self.save_snapshot() {
                Ok(dir) => (format!("saved into {}", dir.display()), false),
                Err(e) => (e, true),
            });
        }
        if ui.button("Save session").clicked() {
            let dir = PathBuf::from(self.folder.trim());
            self.message = Some(match save_session(&dir, &self.scene, &self.run) {
                Ok(()) => (format!("session saved in {} (erode view {0})", dir.display()), false),
                Err(e) => (e, true),
            });
        }
        if let Some(e) = &self.stopped {
            ui.colored_label(egui::Color32::RED, format!("stopped: {e}"));
        }
        if let Some((m, bad)) = &self.message {
            let colour = if *bad { egui::Color32::RED } else { ui.visuals().text_color() };
            ui.colored_label(colour, m);
        }
        ui.separator();
        ui.heading("Parameters");
        let table = crate::params_ui::as_table(self.run.params());
        if let Some(set) =
            crate::params_ui::param_table(ui, "sph-params", sph::PARAM_DOCS, &table, &mut self.param_text)
        {
            self.message = set_param(&mut self.run, &mut self.scene, &set).err().map(|e| (e, true));
            self.param_text.clear();
        }
        ui.separator();
        ui.label("orange: eroded, green: deposited, blue: water (lighter: faster)");
        ui.label("drag: orbit, right-drag: pan, wheel: zoom, space: play/pause");
    }

    fn view(&mut self, ui: &mut egui::Ui) {
        let rect = ui.available_rect_before_wrap();
        let response = ui.allocate_rect(rect, egui::Sense::click_and_drag());
        if response.dragged_by(egui::PointerButton::Primary) {
            let d = response.drag_delta();
            self.camera.orbit(d.x, d.y);
        }
        if response.dragged_by(egui::PointerButton::Secondary) {
            let d = response.drag_delta();
            self.camera.pan(d.x, d.y, rect.height());
        }
        if response.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 {
                self.camera.zoom(scroll);
            }
        }
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 0.0, SKY);
        painter.add(egui::Shape::mesh(self.scene_mesh(rect)));
    }

    /// The mesh and particles as one egui mesh, far to near.
    fn scene_mesh(&self, rect: egui::Rect) -> egui::Mesh {
        let st = self.run.state();
        let vp = self.camera.view_proj(rect.width() / rect.height().max(1.0));
        let project = |p: DVec3| -> Option<(egui::Pos2, f32)> {
            let clip = vp * world(p, self.centre).extend(1.0);
            if clip.w <= 1e-6 {
                return None;
            }
            let (x, y) = (clip.x / clip.w, clip.y / clip.w);
            let pos =
                egui::pos2(rect.left() + (x + 1.0) * 0.5 * rect.width(), rect.top() + (1.0 - y) * 0.5 * rect.height());
            Some((pos, clip.w))
        };
        let screen: Vec<Option<(egui::Pos2, f32)>> = st.mesh.positions.iter().map(|&p| project(p)).collect();
        // each vertex's net change, scaled by the largest
        let change: Vec<f64> = st.deposited.iter().zip(&st.eroded).map(|(d, e)| d - e).collect();
        let scale = change.iter().fold(0.0f64, |m, c| m.max(c.abs())).max(1e-15);
        let light = Vec3::new(0.4, 1.0, 0.3).normalize();
        let eye = self.camera.eye();
        enum Item {
            Face(usize, f32),
            Particle(usize),
        }
        let mut items: Vec<(f32, Item)> = Vec::with_capacity(st.mesh.faces.len() + st.positions.len());
        for (f, face) in st.mesh.faces.iter().enumerate() {
            let [a, b, c] = face.map(|v| screen[v as usize]);
            let (Some(a), Some(b), Some(c)) = (a, b, c) else { continue };
            let [pa, pb, pc] = face.map(|v| world(st.mesh.positions[v as usize], self.centre));
            let normal = (pb - pa).cross(pc - pa).normalize_or_zero();
            // faces turned away are the solid's far side: culled, so a tank shows its inside
            if !self.see_through && normal.dot(eye - (pa + pb + pc) / 3.0) < 0.0 {
                continue;
            }
            let shade = 0.35 + 0.65 * normal.dot(light).abs();
            items.push(((a.1 + b.1 + c.1) / 3.0, Item::Face(f, shade)));
        }
        if self.show_particles {
            for (i, &p) in st.positions.iter().enumerate() {
                if let Some((_, depth)) = project(p) {
                    items.push((depth, Item::Particle(i)));
                }
            }
        }
        items.sort_by(|a, b| b.0.total_cmp(&a.0));
        let alpha = if self.see_through { 70 } else { 255 };
        let tint = |v: usize, shade: f32| -> egui::Color32 {
            let t = (change[v] / scale).clamp(-1.0, 1.0) as f32;
            let base = [190.0, 180.0, 160.0];
            let target = if t < 0.0 { [235.0, 110.0, 30.0] } else { [60.0, 175.0, 80.0] };
            let k = t.abs().sqrt();
            let c: Vec<u8> =
                (0..3).map(|i| ((base[i] + (target[i] - base[i]) * k) * shade).clamp(0.0, 255.0) as u8).collect();
            egui::Color32::from_rgba_unmultiplied(c[0], c[1], c[2], alpha)
        };
        // water blue, lighter where it runs fast (the fastest particle of the frame white-blue)
        let fastest = st.velocities.iter().fold(0.0f64, |m, v| m.max(v.length())).max(1e-9);
        let water = |i: usize| -> egui::Color32 {
            let k = (st.velocities[i].length() / fastest).sqrt() as f32;
            let mix = |a: f32, b: f32| (a + (b - a) * k) as u8;
            egui::Color32::from_rgb(mix(25.0, 175.0), mix(75.0, 215.0), mix(200.0, 255.0))
        };
        let radius = (rect.width() / 500.0).clamp(1.2, 3.0);
        let mut mesh = egui::Mesh::default();
        for (_, item) in &items {
            match *item {
                Item::Face(f, shade) => {
                    let base = mesh.vertices.len() as u32;
                    for v in st.mesh.faces[f] {
                        if let Some((pos, _)) = screen[v as usize] {
                            mesh.colored_vertex(pos, tint(v as usize, shade));
                        }
                    }
                    mesh.add_triangle(base, base + 1, base + 2);
                }
                Item::Particle(i) => {
                    if let Some((pos, _)) = project(st.positions[i]) {
                        let r = egui::Rect::from_center_size(pos, egui::vec2(2.0 * radius, 2.0 * radius));
                        mesh.add_colored_rect(r, water(i));
                    }
                }
            }
        }
        mesh
    }

    fn headless_step(&mut self, ctx: &egui::Context) {
        if self.frames.tick(ctx) {
            self.playing = false;
            self.frames.finish(ctx, self.run.done());
        }
    }
}

impl eframe::App for SphApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        if self.playing {
            self.advance(false);
        }
        if ctx.input(|i| i.key_pressed(egui::Key::Space)) && self.stopped.is_none() {
            self.playing = !self.playing;
        }
        egui::Panel::left("controls")
            .default_size(300.0)
            .show(ui, |ui| egui::ScrollArea::vertical().show(ui, |ui| self.side_panel(ui)));
        egui::CentralPanel::default().frame(egui::Frame::NONE).show(ui, |ui| self.view(ui));
        self.headless_step(&ctx);
        if self.playing {
            ctx.request_repaint();
        } else {
            ctx.request_repaint_after(Duration::from_millis(100));
        }
    }

    fn on_exit(&mut self) {
        self.frames.fill_report(self.run.done());
    }
}
