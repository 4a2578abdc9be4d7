//! Where the world lives while the app runs. With the CPU backend a worker thread owns it: the
//! UI sends commands and reads the latest published snapshot without ever waiting for the model.
//! With the GPU backend the UI thread owns it (the device is the window's) and each frame only
//! encodes the model's dispatches.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use erode::models::droplet;
use erode::models::grid::{Params, Source};

use crate::world::{Action, BackendKind, ModelKind, Overlay, World};

/// What the UI asks of the world.
pub enum Command {
    /// An edit or setting.
    Act(Action),
    /// Run ticks continuously or not.
    Play(bool),
    /// One tick.
    Step,
    /// The overlay the snapshots carry.
    Overlay(Overlay),
    /// Save a session to a path.
    SaveSession(PathBuf),
    /// Save the height and maps into a folder in a format (a file extension).
    SaveMaps(PathBuf, String),
    /// Replace the world (a heightmap or session was opened).
    Replace(Box<World>),
}

/// What the UI draws and shows: a copy of the world's visible parts.
#[derive(Clone)]
pub struct Snapshot {
    /// Grid size.
    pub width: usize,
    /// Grid rows.
    pub height: usize,
    /// Cell size, m.
    pub cell: (f32, f32),
    /// Terrain, m (may lag the GPU's by a few frames on that backend).
    pub terrain: Arc<Vec<f32>>,
    /// Water depth, m.
    pub water: Arc<Vec<f32>>,
    /// Suspended sediment, m.
    pub sediment: Arc<Vec<f32>>,
    /// Values of the chosen overlay.
    pub overlay: Option<Arc<Vec<f32>>>,
    /// Counts terrain/water changes.
    pub version: u64,
    /// Model.
    pub model: ModelKind,
    /// Grid parameters.
    pub grid_params: Params,
    /// Droplet parameters.
    pub droplet_params: droplet::Params,
    /// Stream-power parameters.
    pub stream_power_params: erode::models::stream_power::Params,
    /// The parameters of the models the list makes, by name.
    pub made_params: std::collections::BTreeMap<&'static str, erode::models::make::Table>,
    /// River sources.
    pub sources: Vec<Source>,
    /// Rain on.
    pub rain: bool,
    /// Iterations per tick / droplets per tick.
    pub per_tick: (u32, u32),
    /// Undo and redo steps available.
    pub history: (usize, usize),
    /// Iterations or droplets so far.
    pub progress: u64,
    /// Iterations or droplets per second lately.
    pub rate: f64,
    /// Relative error of the books.
    pub books_error: f64,
    /// Seconds simulated so far, for a model with a clock.
    pub simulated_seconds: Option<f64>,
    /// Water on the terrain, m³.
    pub water_volume: f64,
    /// Soil eroded so far, m³, for a model that books it.
    pub eroded: Option<f64>,
    /// Playing.
    pub playing: bool,
    /// The last error or confirmation, and whether it is an error.
    pub message: Option<(String, bool)>,
}

impl Snapshot {
    /// The visible parts of `world`.
    pub fn of(world: &World, overlay: Overlay, playing: bool, rate: f64) -> Self {
        let st = world.state();
        // the books' relative error and the soil eroded so far (m³)
        let (books_error, eroded) = match (world.run(), world.model) {
            (_, ModelKind::Grid) => (st.balance().relative_error, Some(st.books.eroded)),
            (Some(run), _) => {
                let b = run.balance();
                (b.relative_error, b.term("eroded"))
            }
            (None, _) => (0.0, None),
        };
        Self {
            width: st.width,
            height: st.height,
            cell: (st.cell_size.x as f32, st.cell_size.y as f32),
            terrain: Arc::new(st.terrain.clone()),
            water: Arc::new(st.water.clone()),
            sediment: Arc::new(st.sediment.clone()),
            overlay: world.overlay_values(overlay).map(Arc::new),
            version: world.version,
            model: world.model,
            grid_params: world.grid_params.clone(),
            droplet_params: world.droplet_params.clone(),
            stream_power_params: world.stream_power_params.clone(),
            made_params: world.made_params.clone(),
            sources: world.grid_params.sources.clone(),
            rain: world.rain,
            per_tick: (world.iterations_per_tick, world.droplets_per_tick),
            history: world.history_depth(),
            progress: world.progress(),
            rate,
            books_error,
            simulated_seconds: match (world.run(), world.model) {
                (_, ModelKind::Grid) => Some(st.time),
                (Some(run), _) => run.clock().map(|c| c.now),
                (None, _) => None,
            },
            water_volume: st.water.iter().map(|&w| f64::from(w)).sum::<f64>() * st.cell_size.x * st.cell_size.y,
            eroded,
            playing,
            message: None,
        }
    }
}

/// Runs one command on a world; returns a message for the user.
pub fn run_command(world: &mut World, c: Command, playing: &mut bool, overlay: &mut Overlay) -> Option<(String, bool)> {
    let result: Result<Option<String>, String> = match c {
        Command::Act(a) => world.apply(a).map(|_| None).map_err(|e| e.to_string()),
        Command::Play(p) => {
            *playing = p;
            Ok(None)
        }
        Command::Step => world.tick().map(|_| None).map_err(|e| e.to_string()),
        Command::Overlay(o) => {
            *overlay = o;
            Ok(None)
        }
        Command::SaveSession(path) => {
            crate::files::save_session(world, &path).map(|_| Some(format!("saved {}", path.display())))
        }
        Command::SaveMaps(dir, ext) => {
            crate::files::save_maps(world, &dir, &ext).map(|n| Some(format!("wrote {n} files to {}", dir.display())))
        }
        Command::Replace(w) => {
            let backend = world.gpu_context();
            *world = *w;
            *playing = false;
            world.set_backend(backend).map(|_| Some("opened".to_string())).map_err(|e| e.to_string())
        }
    };
    match result {
        Ok(Some(m)) => Some((m, false)),
        Ok(None) => None,
        Err(e) => {
            *playing = false;
            Some((e, true))
        }
    }
}

/// The CPU backend: a worker thread owning the world.
pub struct CpuRunner {
    commands: Sender<Message>,
    latest: Arc<Mutex<Option<Snapshot>>>,
    thread: Option<JoinHandle<World>>,
}

enum Message {
    Command(Command),
    Stop,
}

impl CpuRunner {
    /// Starts the worker on `world`.
    pub fn start(world: World, overlay: Overlay, playing: bool) -> Self {
        let (tx, rx) = channel();
        let latest = Arc::new(Mutex::new(Some(Snapshot::of(&world, overlay, playing, 0.0))));
        let out = latest.clone();
        let thread = std::thread::Builder::new()
            .name("erode model".into())
            .spawn(move || work(world, rx, out, overlay, playing))
            .ok();
        Self { commands: tx, latest, thread }
    }

    /// Sends a command (never waits).
    pub fn send(&self, c: Command) {
        let _ = self.commands.send(Message::Command(c));
    }

    /// The newest snapshot since the last call, if the worker published one and is not writing it.
    pub fn take_snapshot(&self) -> Option<Snapshot> {
        self.latest.try_lock().ok().and_then(|mut s| s.take())
    }

    /// Stops the worker and returns the world.
    pub fn stop(mut self) -> Option<World> {
        let _ = self.commands.send(Message::Stop);
        self.thread.take().and_then(|t| t.join().ok())
    }
}

fn work(
    mut world: World,
    rx: Receiver<Message>,
    out: Arc<Mutex<Option<Snapshot>>>,
    mut overlay: Overlay,
    mut playing: bool,
) -> World {
    let mut rate = Rate::default();
    loop {
        let mut changed = false;
        let mut message = None;
        // paused: sleep until a command comes; playing: take what is there and run
        let first = if playing {
            match rx.try_recv() {
                Ok(m) => Some(m),
                Err(TryRecvError::Empty) => None,
                Err(TryRecvError::Disconnected) => return world,
            }
        } else {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(m) => Some(m),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => None,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return world,
            }
        };
        let mut next = first;
        while let Some(m) = next {
            match m {
                Message::Stop => return world,
                Message::Command(c) => {
                    changed = true;
                    if let Some(m) = run_command(&mut world, c, &mut playing, &mut overlay) {
                        message = Some(m);
                    }
                }
            }
            next = rx.try_recv().ok();
        }
        if playing {
            let t = Instant::now();
            match world.tick() {
                Ok(n) => rate.add(n, t.elapsed()),
                Err(e) => {
                    playing = false;
                    message = Some((e.to_string(), true));
                }
            }
            changed = true;
        }
        if changed {
            let mut snap = Snapshot::of(&world, overlay, playing, rate.per_second());
            snap.message = message;
            if let Ok(mut slot) = out.lock() {
                // keep an unread message
                if snap.message.is_none() {
                    snap.message = slot.as_ref().and_then(|s| s.message.clone());
                }
                *slot = Some(snap);
            }
        }
    }
}

/// Iterations per second over the last second or so.
#[derive(Default)]
pub struct Rate {
    done: u64,
    time: Duration,
    last: f64,
}

impl Rate {
    /// Counts `n` done in `t`.
    pub fn add(&mut self, n: u64, t: Duration) {
        self.done += n;
        self.time += t;
        if self.time > Duration::from_millis(500) {
            self.last = self.done as f64 / self.time.as_secs_f64();
            self.done = 0;
            self.time = Duration::ZERO;
        }
    }

    /// The rate, per second.
    pub fn per_second(&self) -> f64 {
        self.last
    }
}

/// The backend in charge.
pub enum Runner {
    /// A worker thread.
    Cpu(CpuRunner),
    /// The UI thread, on the window's device.
    Gpu(Box<GpuRunner>),
}

/// The GPU backend's world, stepped by the UI thread.
pub struct GpuRunner {
    /// The world (its state synced from the GPU now and then).
    pub world: World,
    /// Playing.
    pub playing: bool,
    /// The overlay shown.
    pub overlay: Overlay,
    /// Rate.
    pub rate: Rate,
    /// Frames since the state was read back.
    pub frames_since_sync: u32,
    /// A message for the user.
    pub message: Option<(String, bool)>,
}

impl Runner {
    /// Which backend.
    pub fn kind(&self) -> BackendKind {
        match self {
            Runner::Cpu(_) => BackendKind::Cpu,
            Runner::Gpu(_) => BackendKind::Gpu,
        }
    }

    /// Sends or runs a command.
    pub fn send(&mut self, c: Command) {
        match self {
            Runner::Cpu(r) => r.send(c),
            Runner::Gpu(g) => {
                if let Some(m) = run_command(&mut g.world, c, &mut g.playing, &mut g.overlay) {
                    g.message = Some(m);
                }
            }
        }
    }
}
