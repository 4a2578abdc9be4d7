//! The window: panels for files, model, backend, parameters and tools around a 3D view. Pointer
//! and keys become [`Action`]s for the world; the view is drawn by [`TerrainRenderer`].

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use eframe::egui;
use erode::gpu::GpuContext;
use erode::models::stream_power;

use crate::brush::{Brush, BrushKind};
use crate::camera::{Camera, Placement, pick};
use crate::render::{FrameSettings, Look, TerrainRenderer};
use crate::runner::{Command, CpuRunner, GpuRunner, Rate, Runner, Snapshot};
use crate::world::{Action, BackendKind, ModelKind, Overlay, World};

/// What the pointer does in the view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// Drag orbits, right-drag pans, scroll zooms.
    Camera,
    /// Drag paints with the brush (right-drag orbits).
    Brush,
    /// Click places a river source, drag moves one, shift-click removes one.
    Sources,
}

/// Headless run: frames to play, then a screenshot and exit.
#[derive(Clone, Debug, Default)]
pub struct Headless {
    /// Frames to run with the model playing.
    pub frames: u64,
    /// Where to save the screenshot.
    pub screenshot: Option<PathBuf>,
    /// The overlay shown first.
    pub overlay: Overlay,
    /// The sun and the ground's look, first.
    pub look: Look,
    /// The model stays paused through the frames (a screenshot of the terrain as it is).
    pub paused: bool,
    /// The camera this many times closer to the terrain's centre than the view of it all.
    pub zoom: f32,
}

/// What a finished run reports.
#[derive(Clone, Debug, Default)]
pub struct ViewReport {
    /// Frames drawn.
    pub frames: u64,
    /// Mean time per frame, ms (after the first few).
    pub mean_frame_ms: f64,
    /// Iterations or droplets run.
    pub progress: u64,
    /// Screenshot result.
    pub screenshot: Option<Result<PathBuf, String>>,
}

/// A small file browser (no system dialog is needed, so it works anywhere the window does).
struct Browser {
    dir: PathBuf,
    name: String,
    purpose: Purpose,
    error: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Purpose {
    Open,
    SaveSession,
    SaveMaps,
}

/// The snapshot (version, progress) and overlay some ranges were taken of, the terrain's range
/// and the overlay's scale (see [`overlay_range`]).
type Ranges = ((u64, u64, Overlay), (f32, f32), Option<(f32, f32, bool)>);

/// The application.
pub struct ViewerApp {
    runner: Option<Runner>,
    snapshot: Snapshot,
    renderer: Option<TerrainRenderer>,
    texture: Option<egui::TextureId>,
    uploaded: (u64, bool),
    camera: Camera,
    exaggeration: f32,
    overlay: Overlay,
    /// The overlay's range in the last frame drawn, and whether values lie above it, for its
    /// legend.
    overlay_range: Option<(f32, f32, bool)>,
    /// The snapshot and overlay the ranges below were taken of: the terrain's, the overlay's.
    ranges: Option<Ranges>,
    show_water: bool,
    look: Look,
    tool: Tool,
    brush: Brush,
    source_rate: f64,
    dragging_source: Option<(usize, (f32, f32))>,
    hover: Option<(f32, f32)>,
    stroke_active: bool,
    param_text: std::collections::HashMap<&'static str, String>,
    param_error: Option<String>,
    browser: Option<Browser>,
    map_format: String,
    message: Option<(String, bool)>,
    gpu_ctx: Option<Arc<GpuContext>>,
    frames: Frames,
    pending_backend: Option<BackendKind>,
    /// The GPU world's progress and version when the view was last drawn.
    drawn_state: (u64, u64),
    water_clock: WaterClock,
}

/// The water's clock: wall time while the model plays (a frame counts at most 0.1 s), still
/// while it is paused, kept within 1,500 s (a whole number of the ripples' periods) so an `f32`
/// holds it finely.
#[derive(Default)]
struct WaterClock {
    seconds: f64,
    last: Option<Instant>,
}

impl WaterClock {
    fn tick(&mut self, playing: bool) -> f32 {
        let now = Instant::now();
        if playing && let Some(last) = self.last {
            self.seconds = (self.seconds + now.duration_since(last).as_secs_f64().min(0.1)) % 1500.0;
        }
        self.last = Some(now);
        self.seconds as f32
    }
}

impl ViewerApp {
    /// The app on `world`, playing from the start when `headless` asks for frames.
    pub fn new(world: World, headless: Headless, report: Arc<Mutex<ViewReport>>, backend: BackendKind) -> Self {
        let playing = headless.frames > 0 && !headless.paused;
        let overlay = headless.overlay;
        let look = headless.look;
        let snapshot = Snapshot::of(&world, overlay, playing, 0.0);
        let mut camera = frame_camera(&snapshot, 1.0);
        camera.distance /= headless.zoom.max(1.0);
        let brush = world.brush;
        Self {
            runner: Some(Runner::Cpu(CpuRunner::start(world, overlay, playing))),
            snapshot,
            renderer: None,
            texture: None,
            uploaded: (u64::MAX, false),
            camera,
            exaggeration: 1.0,
            overlay,
            overlay_range: None,
            ranges: None,
            show_water: true,
            look,
            tool: Tool::Brush,
            brush,
            source_rate: 1.0,
            dragging_source: None,
            hover: None,
            stroke_active: false,
            param_text: Default::default(),
            param_error: None,
            browser: None,
            map_format: "tif".into(),
            message: None,
            gpu_ctx: None,
            frames: Frames::new(headless, report),
            pending_backend: (backend == BackendKind::Gpu).then_some(BackendKind::Gpu),
            drawn_state: (u64::MAX, u64::MAX),
            water_clock: WaterClock::default(),
        }
    }

    fn send(&mut self, c: Command) {
        if let Some(r) = &mut self.runner {
            r.send(c);
        }
    }

    fn act(&mut self, a: Action) {
        self.send(Command::Act(a));
    }

    /// Moves the world to the other backend.
    fn switch_backend(&mut self, to: BackendKind, frame: &eframe::Frame) {
        let Some(runner) = self.runner.take() else { return };
        if runner.kind() == to {
            self.runner = Some(runner);
            return;
        }
        let (world, playing) = match runner {
            Runner::Cpu(r) => {
                let playing = self.snapshot.playing;
                match r.stop() {
                    Some(w) => (w, playing),
                    None => {
                        self.message = Some(("the model thread stopped; reopen the file".into(), true));
                        return;
                    }
                }
            }
            Runner::Gpu(g) => (g.world, g.playing),
        };
        let mut world = world;
        match to {
            BackendKind::Cpu => {
                if let Err(e) = world.set_backend(None) {
                    self.message = Some((e.to_string(), true));
                }
                self.runner = Some(Runner::Cpu(CpuRunner::start(world, self.overlay, playing)));
            }
            BackendKind::Gpu => {
                let ctx = self.gpu_ctx.clone().or_else(|| {
                    frame
                        .wgpu_render_state()
                        .map(|rs| Arc::new(GpuContext::from_device(rs.device.clone(), rs.queue.clone(), &rs.adapter)))
                });
                self.gpu_ctx = ctx.clone();
                match world.set_backend(ctx) {
                    Ok(()) if world.backend() == BackendKind::Gpu => {
                        self.runner = Some(Runner::Gpu(Box::new(GpuRunner {
                            world,
                            playing,
                            overlay: self.overlay,
                            rate: Rate::default(),
                            frames_since_sync: 0,
                            message: Some(("grid model on the GPU".into(), false)),
                        })));
                    }
                    Ok(()) => {
                        self.message = Some(("no GPU device: staying on the CPU".into(), true));
                        self.runner = Some(Runner::Cpu(CpuRunner::start(world, self.overlay, playing)));
                    }
                    Err(e) => {
                        self.message = Some((format!("GPU: {e}; staying on the CPU"), true));
                        let _ = world.set_backend(None);
                        self.runner = Some(Runner::Cpu(CpuRunner::start(world, self.overlay, playing)));
                    }
                }
            }
        }
        self.uploaded = (u64::MAX, false);
    }

    /// Runs the GPU backend's tick and refreshes the snapshot; takes the CPU worker's newest.
    fn advance(&mut self) {
        match &mut self.runner {
            Some(Runner::Cpu(r)) => {
                if let Some(s) = r.take_snapshot() {
                    if s.message.is_some() {
                        self.message = s.message.clone();
                    }
                    self.snapshot = s;
                }
            }
            Some(Runner::Gpu(g)) => {
                if g.playing {
                    let t = Instant::now();
                    match g.world.tick() {
                        Ok(n) => g.rate.add(n, t.elapsed()),
                        Err(e) => {
                            g.playing = false;
                            g.message = Some((e.to_string(), true));
                        }
                    }
                }
                g.frames_since_sync += 1;
                // the view draws from the GPU's buffers; the CPU copy (for picking, overlays and
                // the books) is refreshed a few times a second
                if g.frames_since_sync >= 10 || !g.playing {
                    if g.frames_since_sync >= 10 || self.snapshot.version != g.world.version {
                        if let Err(e) = g.world.sync_view_from_gpu(g.overlay) {
                            g.message = Some((e.to_string(), true));
                        }
                        g.world.version += 1;
                        g.frames_since_sync = 0;
                    }
                    let mut s = Snapshot::of(&g.world, g.overlay, g.playing, g.rate.per_second());
                    s.message = g.message.take();
                    if s.message.is_some() {
                        self.message = s.message.clone();
                    }
                    self.snapshot = s;
                } else {
                    self.snapshot.progress = g.world.progress();
                    self.snapshot.playing = g.playing;
                    self.snapshot.rate = g.rate.per_second();
                }
            }
            None => {}
        }
    }

    /// The GPU world's version (edits), or 0 on the CPU backend.
    fn runner_version(&self) -> u64 {
        match &self.runner {
            Some(Runner::Gpu(g)) => g.world.version,
            _ => 0,
        }
    }

    fn placement(&self) -> Placement {
        Placement {
            width: self.snapshot.width,
            height: self.snapshot.height,
            cell: self.snapshot.cell,
            exaggeration: self.exaggeration,
        }
    }

    /// Draws the 3D view and handles the pointer over it.
    fn view(&mut self, ui: &mut egui::Ui, frame: &eframe::Frame) {
        let size = ui.available_size();
        let ppp = ui.ctx().pixels_per_point();
        let px = ((size.x * ppp).max(16.0) as u32, (size.y * ppp).max(16.0) as u32);
        let Some(rs) = frame.wgpu_render_state() else {
            ui.label("no wgpu renderer");
            return;
        };
        let s = &self.snapshot;
        if self.renderer.as_ref().is_none_or(|r| r.size() != (s.width, s.height)) {
            self.renderer = Some(TerrainRenderer::new(&rs.device, s.width, s.height));
            self.uploaded = (u64::MAX, false);
            if let Some(id) = self.texture.take() {
                rs.renderer.write().free_texture(&id);
            }
        }
        let state = (s.progress, self.runner_version());
        let Some(renderer) = &mut self.renderer else { return };
        let gpu_buffers = match &self.runner {
            Some(Runner::Gpu(g)) => g.world.gpu_sim().map(|sim| sim.field_buffers()),
            _ => None,
        };
        let on_gpu = gpu_buffers.is_some();
        renderer.bind_fields(&rs.device, gpu_buffers);
        // on the GPU the model changes the drawn buffers itself: a tick or an edit since the
        // last frame means the shading pass has work
        if on_gpu && self.drawn_state != state {
            renderer.fields_changed();
        }
        self.drawn_state = state;
        if !on_gpu && self.uploaded != (s.version, false) {
            renderer.upload_fields(&rs.queue, &s.terrain, &s.water, &s.sediment);
        }
        if self.uploaded.0 != s.version || self.uploaded.1 != on_gpu {
            if let Some(o) = &s.overlay {
                if self.overlay.log_scale() {
                    renderer.upload_overlay(&rs.queue, &log_values(o));
                } else {
                    renderer.upload_overlay(&rs.queue, o);
                }
            }
            self.uploaded = (s.version, on_gpu);
        }
        if renderer.ensure_target(&rs.device, px)
            && let Some(t) = renderer.target()
        {
            let mut r = rs.renderer.write();
            match self.texture {
                Some(id) => r.update_egui_texture_from_wgpu_texture(&rs.device, &t.view, wgpu::FilterMode::Linear, id),
                None => self.texture = Some(r.register_native_texture(&rs.device, &t.view, wgpu::FilterMode::Linear)),
            }
        }
        let placement = Placement { width: s.width, height: s.height, cell: s.cell, exaggeration: self.exaggeration };
        // the ranges change with the snapshot or the overlay only: not scanned again each frame
        let key = (s.version, s.progress, self.overlay);
        if self.ranges.as_ref().is_none_or(|r| r.0 != key) {
            let overlay = s.overlay.as_ref().map(|o| overlay_range(self.overlay, o));
            self.ranges = Some((key, range(&s.terrain), overlay));
        }
        let Some((_, (lo, hi), overlay_span)) = self.ranges else { return };
        let overlay_range = overlay_span.map(|(a, b, _)| (a, b));
        let brush_circle = match (self.tool, self.hover) {
            (Tool::Brush, Some((x, y))) => Some((x, y, self.brush.radius)),
            (Tool::Sources, Some((x, y))) => Some((x, y, 2.0)),
            _ => None,
        };
        let settings = FrameSettings {
            camera: self.camera,
            placement,
            height_range: (lo, hi),
            overlay_range,
            brush: brush_circle,
            water: self.show_water && s.model == ModelKind::Grid,
            look: self.look,
            water_clock: self.water_clock.tick(s.playing),
        };
        self.overlay_range = overlay_span;
        renderer.draw(&rs.device, &rs.queue, &settings);
        let Some(tex) = self.texture else { return };
        let response = ui.add(egui::Image::new((tex, size)).sense(egui::Sense::click_and_drag()));
        self.interact(ui, &response);
        self.draw_sources(ui, &response);
    }

    /// Cell under a screen position of the view, if the terrain is there.
    fn cell_at(&self, response: &egui::Response, pos: egui::Pos2) -> Option<(f32, f32)> {
        let r = response.rect;
        let (u, v) = ((pos.x - r.left()) / r.width(), (pos.y - r.top()) / r.height());
        let (o, d) = self.camera.ray(u, v, r.width() / r.height().max(1.0));
        pick(&self.snapshot.terrain, &self.placement(), o, d)
    }

    fn interact(&mut self, ui: &egui::Ui, response: &egui::Response) {
        let input = ui.input(|i| i.clone());
        self.hover = response.hover_pos().and_then(|p| self.cell_at(response, p));
        if response.hovered() {
            let scroll = input.smooth_scroll_delta.y;
            if scroll != 0.0 {
                self.camera.zoom(scroll);
            }
        }
        let delta = response.drag_delta();
        let primary = response.dragged_by(egui::PointerButton::Primary);
        let secondary = response.dragged_by(egui::PointerButton::Secondary);
        let middle = response.dragged_by(egui::PointerButton::Middle);
        match self.tool {
            Tool::Camera => {
                if primary {
                    self.camera.orbit(delta.x, delta.y);
                }
                if secondary || middle {
                    self.camera.pan(delta.x, delta.y, response.rect.height());
                }
            }
            Tool::Brush | Tool::Sources => {
                if secondary {
                    self.camera.orbit(delta.x, delta.y);
                }
                if middle {
                    self.camera.pan(delta.x, delta.y, response.rect.height());
                }
            }
        }
        if self.tool == Tool::Brush {
            let down = input.pointer.primary_down() && response.is_pointer_button_down_on();
            match (down, self.hover, self.stroke_active) {
                (true, Some((x, y)), false) => {
                    self.act(Action::SetBrush(self.brush));
                    self.act(Action::StrokeBegin { x, y });
                    self.stroke_active = true;
                }
                (true, Some((x, y)), true) => self.act(Action::StrokeTo { x, y }),
                (false, _, true) => {
                    self.act(Action::StrokeEnd);
                    self.stroke_active = false;
                }
                _ => {}
            }
        }
        if self.tool == Tool::Sources {
            let nearest = |app: &Self, at: (f32, f32)| -> Option<usize> {
                app.snapshot
                    .sources
                    .iter()
                    .enumerate()
                    .map(|(k, s)| (k, (s.x as f32 - at.0).hypot(s.y as f32 - at.1)))
                    .filter(|(_, d)| *d < 4.0_f32.max(app.snapshot.width as f32 / 100.0))
                    .min_by(|a, b| a.1.total_cmp(&b.1))
                    .map(|(k, _)| k)
            };
            if response.drag_started_by(egui::PointerButton::Primary)
                && let Some(at) = self.hover
            {
                self.dragging_source = nearest(self, at).map(|k| (k, at));
            }
            if let (Some((k, _)), Some(at)) = (self.dragging_source, self.hover)
                && primary
            {
                self.dragging_source = Some((k, at));
            }
            if response.drag_stopped_by(egui::PointerButton::Primary)
                && let Some((index, (x, y))) = self.dragging_source.take()
            {
                self.act(Action::MoveSource { index, x, y });
            }
            if response.clicked_by(egui::PointerButton::Primary)
                && let Some(at) = self.hover
            {
                match (input.modifiers.shift, nearest(self, at)) {
                    (true, Some(index)) => self.act(Action::RemoveSource { index }),
                    (false, None) => self.act(Action::PlaceSource { x: at.0, y: at.1, rate: self.source_rate }),
                    _ => {}
                }
            }
        }
    }

    /// Markers for the river sources, drawn over the view.
    fn draw_sources(&self, ui: &egui::Ui, response: &egui::Response) {
        let r = response.rect;
        let aspect = r.width() / r.height().max(1.0);
        let vp = self.camera.view_proj(aspect);
        let at = self.placement();
        let painter = ui.painter_at(r);
        for (k, s) in self.snapshot.sources.iter().enumerate() {
            let (x, y) = match self.dragging_source {
                Some((d, p)) if d == k => p,
                _ => (s.x as f32, s.y as f32),
            };
            let (c, row) = ((x as usize).min(at.width - 1), (y as usize).min(at.height - 1));
            let h = self.snapshot.terrain.get(row * at.width + c).copied().unwrap_or(0.0);
            let clip = vp * at.world(x, y, h).extend(1.0);
            if clip.w <= 0.0 {
                continue;
            }
            let ndc = clip.truncate() / clip.w;
            let p = egui::pos2(r.left() + (ndc.x * 0.5 + 0.5) * r.width(), r.top() + (0.5 - ndc.y * 0.5) * r.height());
            painter.circle(p, 6.0, egui::Color32::from_rgb(40, 120, 255), egui::Stroke::new(2.0, egui::Color32::WHITE));
            painter.text(
                p + egui::vec2(8.0, -8.0),
                egui::Align2::LEFT_BOTTOM,
                format!("{k}"),
                egui::FontId::monospace(12.0),
                egui::Color32::WHITE,
            );
        }
    }

    fn top_bar(&mut self, ui: &mut egui::Ui, frame: &eframe::Frame) {
        ui.horizontal(|ui| {
            if ui.button("Open…").clicked() {
                self.open_browser(Purpose::Open);
            }
            if ui.button("Save session…").clicked() {
                self.open_browser(Purpose::SaveSession);
            }
            if ui.button("Save maps…").clicked() {
                self.open_browser(Purpose::SaveMaps);
            }
            ui.separator();
            let playing = self.snapshot.playing;
            if ui.button(if playing { "Pause" } else { "Play" }).clicked() {
                self.send(Command::Play(!playing));
                self.snapshot.playing = !playing;
            }
            if ui.button("Step").clicked() {
                self.send(Command::Step);
            }
            ui.separator();
            let (undo, redo) = self.snapshot.history;
            if ui.add_enabled(undo > 0, egui::Button::new("Undo")).clicked() {
                self.act(Action::Undo);
            }
            if ui.add_enabled(redo > 0, egui::Button::new("Redo")).clicked() {
                self.act(Action::Redo);
            }
            ui.separator();
            let s = &self.snapshot;
            let what = s.model.unit().plural();
            let mut hud = format!("{} {what} · {:.0}/s", s.progress, s.rate);
            if let Some(t) = s.simulated_seconds {
                hud += &format!(" · {} simulated", duration(t));
            }
            if s.model == ModelKind::Grid {
                hud += &format!(" · water {}", volume(s.water_volume));
            }
            if let Some(e) = s.eroded {
                hud += &format!(" · eroded {}", volume(e));
            }
            hud += &format!(
                " · {}x{} · {}",
                s.width,
                s.height,
                match self.runner.as_ref().map(Runner::kind) {
                    Some(BackendKind::Gpu) => format!(
                        "GPU {}",
                        frame.wgpu_render_state().map(|r| r.adapter.get_info().name).unwrap_or_default()
                    ),
                    _ => "CPU".to_string(),
                }
            );
            ui.label(hud).on_hover_text(format!(
                "the books: what came in, went out and stayed against what changed, off by a relative {:.1e}",
                s.books_error
            ));
        });
        if let Some((m, err)) = &self.message {
            let colour =
                if *err { egui::Color32::from_rgb(230, 90, 80) } else { egui::Color32::from_rgb(120, 200, 120) };
            ui.colored_label(colour, m);
        }
    }

    fn side_panel(&mut self, ui: &mut egui::Ui) {
        egui::ScrollArea::vertical().show(ui, |ui| {
            ui.heading("Model");
            let s = self.snapshot.clone();
            ui.horizontal(|ui| {
                for m in ModelKind::all() {
                    let label = match m {
                        ModelKind::Grid => "grid (water)",
                        ModelKind::Droplet => "droplets",
                        ModelKind::StreamPower => "stream power (geology)",
                        ModelKind::Made(name) => name,
                    };
                    let pick = ui.selectable_label(s.model == m, label).on_hover_text(m.info().summary);
                    if pick.clicked() && s.model != m {
                        self.act(Action::SetModel(m));
                        self.param_text.clear();
                    }
                }
            });
            ui.horizontal(|ui| {
                ui.label("backend");
                let now = self.runner.as_ref().map_or(BackendKind::Cpu, Runner::kind);
                for (b, label) in [(BackendKind::Cpu, "CPU"), (BackendKind::Gpu, "GPU")] {
                    if ui.selectable_label(now == b, label).clicked() && now != b {
                        self.pending_backend = Some(b);
                    }
                }
            });
            let mut rain = s.rain;
            // the stream-power model's rivers are its drainage area: rain falls everywhere, always
            let rains = matches!(s.model, ModelKind::Grid | ModelKind::Droplet);
            if ui
                .add_enabled(rains, egui::Checkbox::new(&mut rain, "rain"))
                .on_disabled_hover_text("this model has no rain: the stream-power model drains every cell")
                .changed()
            {
                self.act(Action::SetRain(rain));
            }
            let (mut its, mut drops) = s.per_tick;
            if s.model.unit() != erode::contract::Unit::Droplet {
                let text = format!("{}/frame", s.model.unit().plural());
                if ui.add(egui::Slider::new(&mut its, 1..=64).text(text)).changed() {
                    self.act(Action::SetIterationsPerTick(its));
                }
            } else if ui
                .add(egui::Slider::new(&mut drops, 100..=50_000).logarithmic(true).text("droplets/frame"))
                .changed()
            {
                self.act(Action::SetDropletsPerTick(drops));
            }

            ui.separator();
            ui.heading("View");
            egui::ComboBox::from_label("overlay").selected_text(self.overlay.label()).show_ui(ui, |ui| {
                for o in Overlay::ALL {
                    if ui.selectable_label(self.overlay == o, o.label()).clicked() {
                        self.overlay = o;
                        self.send(Command::Overlay(o));
                        if let Some(Runner::Gpu(g)) = &mut self.runner {
                            g.frames_since_sync = 10;
                        }
                    }
                }
            });
            if let (Some((lo, hi, above)), true) = (self.overlay_range, self.overlay != Overlay::None) {
                let unit = self.overlay.unit(self.snapshot.model);
                if self.overlay.log_scale() {
                    legend(ui, 10f32.powf(lo), 10f32.powf(hi), &format!("{unit} (log scale)"), false);
                } else {
                    legend(ui, lo, hi, unit, above);
                }
            }
            ui.checkbox(&mut self.show_water, "water surface");
            egui::ComboBox::from_label("ground")
                .selected_text(if self.look.materials { "materials" } else { "height colours" })
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut self.look.materials, true, "materials").on_hover_text(
                        "rock, scree, soil, grass, sand and snow by slope, height and water; sun shadows and sky light",
                    );
                    ui.selectable_value(&mut self.look.materials, false, "height colours")
                        .on_hover_text("a colour ramp by height, one light");
                });
            ui.add(egui::Slider::new(&mut self.look.sun_azimuth_deg, 0.0..=360.0).suffix("°").text("sun from"))
                .on_hover_text("the sun's azimuth, degrees clockwise from north");
            ui.add(egui::Slider::new(&mut self.look.sun_altitude_deg, 2.0..=90.0).suffix("°").text("sun height"))
                .on_hover_text("the sun's height above the horizon: low for long shadows");
            ui.add(egui::Slider::new(&mut self.exaggeration, 0.1..=10.0).logarithmic(true).text("vertical scale"));
            if ui.button("reset camera").clicked() {
                self.camera = frame_camera(&self.snapshot, self.exaggeration);
            }

            ui.separator();
            ui.heading("Tools");
            ui.horizontal_wrapped(|ui| {
                ui.selectable_value(&mut self.tool, Tool::Camera, "camera");
                ui.selectable_value(&mut self.tool, Tool::Sources, "river sources");
            });
            ui.horizontal_wrapped(|ui| {
                for k in BrushKind::ALL {
                    if ui.selectable_label(self.tool == Tool::Brush && self.brush.kind == k, k.label()).clicked() {
                        self.tool = Tool::Brush;
                        self.brush.kind = k;
                    }
                }
            });
            ui.add(
                egui::Slider::new(&mut self.brush.radius, 1.0..=200.0).logarithmic(true).text("brush radius, cells"),
            );
            if self.brush.kind.strength_in_metres() {
                ui.add(
                    egui::Slider::new(&mut self.brush.strength, 0.001..=100.0)
                        .logarithmic(true)
                        .text("strength, m/dab"),
                );
            } else {
                self.brush.strength = self.brush.strength.clamp(0.0, 1.0);
                ui.add(egui::Slider::new(&mut self.brush.strength, 0.0..=1.0).text("strength, share/dab"));
            }
            if self.brush.kind == BrushKind::Hardness {
                ui.add(
                    egui::Slider::new(&mut self.brush.value, 0.0..=1.0).text("hardness (0 loose soil, 1 erodes least)"),
                );
            } else if self.brush.kind == BrushKind::Rain {
                ui.add(egui::Slider::new(&mut self.brush.value, 0.0..=1.0).text("target value"));
            }
            ui.add(egui::Slider::new(&mut self.source_rate, 0.01..=1000.0).logarithmic(true).text("new source, m³/s"));
            ui.label("right-drag: orbit · middle-drag: pan · wheel: zoom");
            ui.label("sources: click to place, drag to move, shift-click to remove");
            for (k, src) in s.sources.iter().enumerate() {
                ui.horizontal(|ui| {
                    ui.label(format!("{k}: ({:.0}, {:.0})", src.x, src.y));
                    let mut rate = src.rate;
                    if ui.add(egui::DragValue::new(&mut rate).speed(0.1).range(0.0..=1e6).suffix(" m³/s")).changed() {
                        self.act(Action::SetSourceRate { index: k, rate });
                    }
                    if ui.small_button("remove").clicked() {
                        self.act(Action::RemoveSource { index: k });
                    }
                });
            }

            ui.separator();
            ui.heading("Parameters");
            if let Some(e) = &self.param_error {
                ui.colored_label(egui::Color32::from_rgb(230, 90, 80), e);
            }
            let presets = (s.model.info().presets)();
            if !presets.is_empty() {
                let mut chosen = None;
                egui::ComboBox::from_label("preset")
                    .selected_text("choose…")
                    .show_ui(ui, |ui| {
                        for (name, summary) in &presets {
                            if ui.selectable_label(false, *name).on_hover_text(*summary).clicked() {
                                chosen = Some(*name);
                            }
                        }
                    })
                    .response
                    .on_hover_text("every parameter set as `erode params MODEL --preset NAME` gives it");
                if let Some(name) = chosen {
                    match crate::params_ui::preset_action(s.model, name, &s.grid_params.sources) {
                        Ok(a) => {
                            self.param_error = None;
                            self.param_text.clear();
                            self.message = Some((format!("preset {name}"), false));
                            self.act(a);
                        }
                        Err(e) => self.param_error = Some(e),
                    }
                }
            }
            let docs = s.model.info().params;
            let table = match s.model {
                ModelKind::Grid => crate::params_ui::as_table(&s.grid_params),
                ModelKind::Droplet => crate::params_ui::as_table(&s.droplet_params),
                ModelKind::StreamPower => crate::params_ui::as_table(&s.stream_power_params),
                ModelKind::Made(name) => {
                    crate::params_ui::as_table(&s.made_params.get(name).cloned().unwrap_or_default())
                }
            };
            if let Some(set) = crate::params_ui::param_table(ui, "params", docs, &table, &mut self.param_text) {
                self.apply_param(s.model, &s, set);
            }
        });
    }

    /// Validates `key=value` as the CLI's `--set` does and sends the new parameters.
    fn apply_param(&mut self, model: ModelKind, s: &Snapshot, set: String) {
        let sets = [set];
        let result = match model {
            ModelKind::Grid => erode_io::params::apply_sets(&s.grid_params, &sets).map_err(|e| e.to_string()).and_then(
                |p: erode::models::grid::Params| {
                    p.validate().map_err(|e| e.to_string())?;
                    Ok(Action::SetGridParams(Box::new(p)))
                },
            ),
            ModelKind::Droplet => erode_io::params::apply_sets(&s.droplet_params, &sets)
                .map_err(|e| e.to_string())
                .and_then(|p: erode::models::droplet::Params| {
                    p.validate().map_err(|e| e.to_string())?;
                    Ok(Action::SetDropletParams(Box::new(p)))
                }),
            ModelKind::StreamPower => erode_io::params::apply_sets(&s.stream_power_params, &sets)
                .map_err(|e| e.to_string())
                .and_then(|p: stream_power::Params| {
                    p.validate().map_err(|e| e.to_string())?;
                    Ok(Action::SetStreamPowerParams(Box::new(p)))
                }),
            ModelKind::Made(name) => {
                let current = s.made_params.get(name).cloned().unwrap_or_default();
                match model.info().make {
                    Some(maker) => erode_io::params::load_table(&current, None, &sets, maker.read)
                        .map_err(|e| e.to_string())
                        .and_then(|t| {
                            (maker.check)(&t).map_err(|e| e.to_string())?;
                            Ok(Action::SetMadeParams(name, Box::new(t)))
                        }),
                    None => Err(format!("the {name} model has no parameters to set here")),
                }
            }
        };
        match result {
            Ok(a) => {
                self.param_error = None;
                self.act(a);
            }
            Err(e) => self.param_error = Some(e),
        }
        self.param_text.clear();
    }

    fn open_browser(&mut self, purpose: Purpose) {
        let dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let name = match purpose {
            Purpose::Open => String::new(),
            Purpose::SaveSession => "session.erode".into(),
            Purpose::SaveMaps => String::new(),
        };
        self.browser = Some(Browser { dir, name, purpose, error: None });
    }

    fn browser_window(&mut self, ctx: &egui::Context) {
        let Some(mut b) = self.browser.take() else { return };
        let mut open = true;
        let mut done: Option<PathBuf> = None;
        let title = match b.purpose {
            Purpose::Open => "Open heightmap or session",
            Purpose::SaveSession => "Save session",
            Purpose::SaveMaps => "Save maps into folder",
        };
        egui::Window::new(title).open(&mut open).default_width(420.0).show(ctx, |ui| {
            ui.horizontal(|ui| {
                if ui.button("⬆").clicked()
                    && let Some(p) = b.dir.parent()
                {
                    b.dir = p.to_path_buf();
                }
                ui.label(b.dir.display().to_string());
            });
            egui::ScrollArea::vertical().max_height(260.0).show(ui, |ui| {
                let mut entries: Vec<(bool, PathBuf)> = std::fs::read_dir(&b.dir)
                    .map(|rd| rd.filter_map(Result::ok).map(|e| (e.path().is_dir(), e.path())).collect())
                    .unwrap_or_default();
                entries.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
                for (is_dir, path) in entries {
                    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
                    if name.starts_with('.') {
                        continue;
                    }
                    let label = if is_dir { format!("📁 {name}") } else { name.clone() };
                    if ui.selectable_label(false, label).clicked() {
                        if is_dir {
                            b.dir = path;
                        } else {
                            b.name = name;
                        }
                    }
                }
            });
            if b.purpose == Purpose::SaveMaps {
                ui.horizontal(|ui| {
                    ui.label("format");
                    for f in ["tif", "png", "exr", "npy", "r32", "pgm"] {
                        ui.selectable_value(&mut self.map_format, f.to_string(), f);
                    }
                });
            } else {
                ui.horizontal(|ui| {
                    ui.label("file");
                    ui.text_edit_singleline(&mut b.name);
                });
            }
            if let Some(e) = &b.error {
                ui.colored_label(egui::Color32::from_rgb(230, 90, 80), e);
            }
            let label = match b.purpose {
                Purpose::Open => "Open",
                _ => "Save",
            };
            if ui.button(label).clicked() {
                done = Some(if b.purpose == Purpose::SaveMaps { b.dir.clone() } else { b.dir.join(&b.name) });
            }
        });
        match done {
            Some(path) => match b.purpose {
                Purpose::Open => match crate::files::open(&path) {
                    Ok(w) => self.replace_world(w),
                    Err(e) => {
                        b.error = Some(e);
                        self.browser = Some(b);
                    }
                },
                Purpose::SaveSession => self.send(Command::SaveSession(path)),
                Purpose::SaveMaps => self.send(Command::SaveMaps(path, self.map_format.clone())),
            },
            None if open => self.browser = Some(b),
            None => {}
        }
    }

    fn replace_world(&mut self, w: World) {
        self.brush = w.brush;
        self.snapshot = Snapshot::of(&w, self.overlay, false, 0.0);
        self.camera = frame_camera(&self.snapshot, self.exaggeration);
        self.param_text.clear();
        self.send(Command::Replace(Box::new(w)));
        self.uploaded = (u64::MAX, false);
    }

    fn keys(&mut self, ctx: &egui::Context) {
        if ctx.egui_wants_keyboard_input() {
            return;
        }
        let (undo, redo, space, dropped) = ctx.input(|i| {
            let cmd = i.modifiers.command;
            (
                cmd && !i.modifiers.shift && i.key_pressed(egui::Key::Z),
                cmd && (i.key_pressed(egui::Key::Y) || (i.modifiers.shift && i.key_pressed(egui::Key::Z))),
                i.key_pressed(egui::Key::Space),
                i.raw.dropped_files.iter().map(|f| f.path().to_path_buf()).find(|p| !p.as_os_str().is_empty()),
            )
        });
        if undo {
            self.act(Action::Undo);
        }
        if redo {
            self.act(Action::Redo);
        }
        if space {
            let p = !self.snapshot.playing;
            self.send(Command::Play(p));
            self.snapshot.playing = p;
        }
        if let Some(path) = dropped {
            match crate::files::open(&path) {
                Ok(w) => self.replace_world(w),
                Err(e) => self.message = Some((e, true)),
            }
        }
    }

    fn headless_step(&mut self, ctx: &egui::Context) {
        if self.frames.tick(ctx) {
            self.send(Command::Play(false));
            self.frames.finish(ctx, self.snapshot.progress);
        }
    }
}

/// Frames drawn and their times, and a headless run's end: after `headless.frames` frames a
/// screenshot, the report filled, the window closed.
pub(crate) struct Frames {
    headless: Headless,
    report: Arc<Mutex<ViewReport>>,
    count: u64,
    times: Vec<f64>,
    last: Option<Instant>,
    finished: bool,
}

impl Frames {
    pub(crate) fn new(headless: Headless, report: Arc<Mutex<ViewReport>>) -> Self {
        Self { headless, report, count: 0, times: Vec::new(), last: None, finished: false }
    }

    /// Counts a frame; true once, when a headless run has drawn its frames and should
    /// [`Frames::finish`].
    pub(crate) fn tick(&mut self, ctx: &egui::Context) -> bool {
        let now = Instant::now();
        if let Some(last) = self.last {
            self.times.push(now.duration_since(last).as_secs_f64() * 1e3);
        }
        self.last = Some(now);
        self.count += 1;
        if self.headless.frames == 0 {
            return false;
        }
        ctx.request_repaint();
        if self.count >= self.headless.frames && !self.finished {
            self.finished = true;
            return true;
        }
        false
    }

    /// Fills the report (with `progress`, the model's iterations or droplets), takes the
    /// screenshot and closes the window.
    pub(crate) fn finish(&self, ctx: &egui::Context, progress: u64) {
        self.fill_report(progress);
        take_screenshot(ctx, self.headless.screenshot.clone(), self.report.clone());
    }

    /// Fills the report with the frames so far.
    pub(crate) fn fill_report(&self, progress: u64) {
        if let Ok(mut r) = self.report.lock() {
            r.frames = self.count;
            // the first frames build pipelines and targets: leave them out of the mean
            let t: Vec<f64> = self.times.iter().skip(3).copied().collect();
            r.mean_frame_ms = if t.is_empty() { 0.0 } else { t.iter().sum::<f64>() / t.len() as f64 };
            r.progress = progress;
        }
    }
}

/// Saves a screenshot of the next frame to `path` (its result in `report`) and closes the
/// window; with no path, just closes it.
pub(crate) fn take_screenshot(ctx: &egui::Context, path: Option<PathBuf>, report: Arc<Mutex<ViewReport>>) {
    let Some(path) = path else {
        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        return;
    };
    let ctx2 = ctx.clone();
    ctx.request_screenshot(move |image| {
        let [w, h] = image.size;
        let bytes: Vec<u8> = image.pixels.iter().flat_map(|c| c.to_array()).collect();
        let result = crate::files::write_png(&path, w as u32, h as u32, &bytes).map(|_| path.clone());
        if let Ok(mut r) = report.lock() {
            r.screenshot = Some(result);
        }
        ctx2.send_viewport_cmd(egui::ViewportCommand::Close);
        ctx2.request_repaint();
    });
}

/// Shows a parameter value as the user would type it after `key=`.
pub(crate) fn range(v: &[f32]) -> (f32, f32) {
    let (lo, hi) = v.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    if lo.is_finite() && hi.is_finite() { (lo, hi.max(lo + 1e-6)) } else { (0.0, 1.0) }
}

/// A camera that frames the whole terrain.
pub(crate) fn frame_camera(s: &Snapshot, exaggeration: f32) -> Camera {
    let (lo, hi) = range(&s.terrain);
    let centre = glam::Vec3::new(0.0, (lo + hi) * 0.5 * exaggeration, 0.0);
    Camera::framing(s.width as f32 * s.cell.0, s.height as f32 * s.cell.1, centre)
}

impl eframe::App for ViewerApp {
    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        if let Some(b) = self.pending_backend.take() {
            self.switch_backend(b, frame);
        }
        self.advance();
        self.keys(&ctx);
        egui::Panel::top("top").show(ui, |ui| self.top_bar(ui, frame));
        egui::Panel::left("controls").default_size(300.0).show(ui, |ui| self.side_panel(ui));
        egui::CentralPanel::default().frame(egui::Frame::NONE).show(ui, |ui| self.view(ui, frame));
        self.browser_window(&ctx);
        self.headless_step(&ctx);
        if self.snapshot.playing {
            ctx.request_repaint();
        } else {
            ctx.request_repaint_after(std::time::Duration::from_millis(100));
        }
    }

    fn on_exit(&mut self) {
        self.frames.fill_report(self.snapshot.progress);
        if let Some(Runner::Cpu(r)) = self.runner.take() {
            let _ = r.stop();
        }
    }
}

/// An overlay's colour bar: the shader's ramp from `lo` to `hi`, in `unit`.
fn legend(ui: &mut egui::Ui, lo: f32, hi: f32, unit: &str, above: bool) {
    let (rect, _) = ui.allocate_exact_size(egui::vec2(ui.available_width().min(260.0), 12.0), egui::Sense::hover());
    let painter = ui.painter_at(rect);
    let steps = 48;
    for k in 0..steps {
        let t = (k as f32 + 0.5) / steps as f32;
        let x0 = rect.left() + rect.width() * k as f32 / steps as f32;
        let x1 = rect.left() + rect.width() * (k + 1) as f32 / steps as f32;
        let [r, g, b] =
            crate::render::overlay_ramp(t).map(|v| (v.clamp(0.0, 1.0).powf(1.0 / 2.2) * 255.0).round() as u8);
        painter.rect_filled(
            egui::Rect::from_min_max(egui::pos2(x0, rect.top()), egui::pos2(x1, rect.bottom())),
            0.0,
            egui::Color32::from_rgb(r, g, b),
        );
    }
    ui.horizontal(|ui| {
        ui.label(format!("{} {unit}", number(lo)));
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            let label = ui.label(format!("{}{} {unit}", if above { "≥ " } else { "" }, number(hi)));
            if above {
                label.on_hover_text("the top of the scale is the 99th percentile of the cells above the lowest value");
            }
        });
    });
}

/// The colour scale of `overlay` over `values`: (low, high, whether values lie above high).
/// Hardness and rain are 0..1; a log-scaled overlay spans six decades below its largest value;
/// the others run from the lowest value to the 99th percentile of the values above it, so one
/// deep cell does not leave the rest of the map in the lowest colour.
pub(crate) fn overlay_range(overlay: Overlay, values: &[f32]) -> (f32, f32, bool) {
    let (a, b) = range(values);
    if overlay == Overlay::Hardness || overlay == Overlay::Rain {
        return (0.0, 1.0, false);
    }
    if overlay.log_scale() {
        let (lo, hi) = log_range(b);
        return (lo.log10(), hi.log10(), false);
    }
    let mut above: Vec<f32> = values.iter().copied().filter(|&v| v.is_finite() && v > a).collect();
    if above.len() < 100 {
        return (a, b.max(a + 1e-9), false);
    }
    let k = above.len() * 99 / 100;
    let (_, &mut p99, _) = above.select_nth_unstable_by(k, f32::total_cmp);
    let hi = p99.max(a + 1e-9);
    (a, hi, b > hi)
}

/// A value for a legend: three significant digits, exponent form when very small or large.
fn number(v: f32) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e5).contains(&a) {
        format!("{v:.2e}")
    } else {
        format!("{}", (v * 1000.0).round() / 1000.0)
    }
}

/// A span of simulated time: seconds, hours, days or years.
fn duration(seconds: f64) -> String {
    const YEAR: f64 = 365.25 * 86400.0;
    match seconds {
        s if s >= YEAR => format!("{:.3} years", s / YEAR),
        s if s >= 86400.0 => format!("{:.1} days", s / 86400.0),
        s if s >= 3600.0 => format!("{:.1} h", s / 3600.0),
        s => format!("{s:.1} s"),
    }
}

/// A volume in m³, in thousands or millions when large.
fn volume(m3: f64) -> String {
    match m3.abs() {
        v if v >= 1e6 => format!("{:.2} million m³", m3 / 1e6),
        v if v >= 1e4 => format!("{:.0} thousand m³", m3 / 1e3),
        _ => format!("{m3:.1} m³"),
    }
}

/// The range a log-scaled overlay shows: six decades below its largest value `hi` (at least a
/// tiny positive one).
fn log_range(hi: f32) -> (f32, f32) {
    let hi = hi.max(1e-12);
    (hi * 1e-6, hi)
}

/// `values` as their base-10 logarithms, floored six decades below the largest.
fn log_values(values: &[f32]) -> Vec<f32> {
    let hi = values.iter().copied().filter(|v| v.is_finite()).fold(0.0f32, f32::max);
    let (floor, _) = log_range(hi);
    values.iter().map(|&v| v.max(floor).log10()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overlay_scale_tops_at_the_99th_percentile_not_at_one_deep_cell() {
        // 1,000 cells: half untouched, the rest eroded 0.001..0.5 m, one cell 30 m
        let mut v: Vec<f32> = (0..1000).map(|i| if i < 500 { 0.0 } else { (i - 499) as f32 * 0.001 }).collect();
        v[700] = 30.0;
        let (lo, hi, above) = overlay_range(Overlay::Erosion, &v);
        assert_eq!(lo, 0.0);
        assert!(hi > 0.45 && hi < 0.51 && above, "({lo}, {hi}, {above})");
        // hardness is always 0..1, a few values span their own range
        assert_eq!(overlay_range(Overlay::Hardness, &v), (0.0, 1.0, false));
        assert_eq!(overlay_range(Overlay::Erosion, &[0.0, 2.0, 4.0]), (0.0, 4.0, false));
    }
}
