//! A model's run into an output folder, the same for every model through the library's model
//! contract ([`erode::contract::Model`]): the last checks, the output folder, advances with
//! progress, checkpoints, snapshots and a way to stop, then the outputs and `report.json`,
//! written as one set ([`Staging`]). A front end gives the model, a [`Front`] (what the model adds:
//! notes, snapshots, outputs, report fields) and a [`Watch`] (progress, notes, stop requests).

mod checkpoints;
mod droplet;
mod grid;
mod made;
mod ranked;
mod sph;
mod staging;
mod stamp;
mod stream_power;

use std::path::PathBuf;
use std::time::Instant;

pub use checkpoints::{Newest, open_frame, read_frame};
pub use droplet::DropletFront;
use erode::contract::{Backend, Clock, Model};
pub use grid::{GridFront, TiledGridFront};
pub use made::MadeFront;
pub use ranked::{RowsTask, write_owned_rows};
use serde_json::{Map, Value, json};
pub use sph::SphFront;
pub(crate) use staging::TEMPORARY_PREFIX;
pub use staging::{OutputLock, Staging, check_inputs_kept, create_output_folder, remove_stale_temporaries};
pub use stamp::Stamp;
pub use stream_power::StreamPowerFront;

/// Why a run could not start or did not finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A file could not be read or written.
    #[error(transparent)]
    File(#[from] crate::Error),
    /// The model refused its parameters or failed a step.
    #[error(transparent)]
    Model(#[from] erode::SimError),
    /// Resuming, but the output folder has no checkpoint of the model.
    #[error("{}: no checkpoint to resume from (a finished run keeps its state only when it was run with \
             --checkpoint-every N: run it so to go on from its end later)", folder.display())]
    NoCheckpoint {
        /// The checkpoint folder.
        folder: PathBuf,
    },
    /// The newest checkpoint cannot be resumed.
    #[error("{}{}: {source}", path.display(), older.as_ref().map(|o| format!(
        " (an older checkpoint, {}, may be intact: remove this one to resume from it)", o.display())).unwrap_or_default())]
    Unreadable {
        /// The checkpoint.
        path: PathBuf,
        /// An older one beside it.
        older: Option<PathBuf>,
        /// Why.
        source: erode::SimError,
    },
    /// A fresh run in a folder holding the checkpoints of another run of the model.
    #[error("{}: holds the checkpoints of another run ({why}; the newest is {}): resume that run with --resume, \
             choose another output folder, or give --force to move them aside", folder.display(), newest.display())]
    OtherRun {
        /// The checkpoint folder.
        folder: PathBuf,
        /// Its newest checkpoint of the model.
        newest: PathBuf,
        /// How they differ: "other parameters", "another input", "unreadable".
        why: &'static str,
    },
    /// The checkpoints were made from other inputs (heightmap, maps).
    #[error("{input}: not the inputs the checkpoint {} was made from (the heightmap or a map differs, or a map \
             was added or left out); give those it began with, or start afresh without --resume", checkpoint.display())]
    OtherInput {
        /// The input given now.
        input: String,
        /// The checkpoint.
        checkpoint: PathBuf,
    },
    /// The checkpoint is past the count asked for.
    #[error("{}: the checkpoint is at {unit} {at}, past the {asked} asked for; ask for at least that many, or \
             start afresh without --resume", path.display())]
    PastTheEnd {
        /// The checkpoint.
        path: PathBuf,
        /// The model's unit.
        unit: &'static str,
        /// Its count.
        at: u64,
        /// The count asked for.
        asked: u64,
    },
    /// A run by simulated time of a model without a clock.
    #[error("--duration: the {model} model has no clock")]
    NoClock {
        /// The model.
        model: &'static str,
    },
    /// A run by simulated time that would take implausibly many iterations.
    #[error(
        "--duration {text}: about {iterations:.2e} iterations of {step:.3e} s each (more than \
             {MAX_DURATION_ITERATIONS:.0e}); check gravity and the cell size, or give --iterations"
    )]
    TooLong {
        /// The duration as given.
        text: String,
        /// Iterations it would take.
        iterations: f64,
        /// Seconds per iteration.
        step: f64,
    },
    /// The state went non-finite.
    #[error("the run produced non-finite values at {unit} {at}{}", checkpoint.as_ref().map(|c| format!(
        "; the state is in {} for inspection", c.display())).unwrap_or_default())]
    NonFinite {
        /// The model's unit.
        unit: &'static str,
        /// The count reached.
        at: u64,
        /// The checkpoint written there, when the run keeps checkpoints.
        checkpoint: Option<PathBuf>,
    },
    /// The front end asked the run to stop; the checkpoint holds where it was.
    #[error("interrupted at {at}; the state is in {}: run the same command with --resume to go on", checkpoint.display())]
    Interrupted {
        /// Where it stopped, e.g. "iteration 1200".
        at: String,
        /// The checkpoint written there.
        checkpoint: PathBuf,
    },
    /// A step failed; the outputs of the last consistent state were written.
    #[error("the last consistent state is in {}: {source}", output.display())]
    Stopped {
        /// The output folder.
        output: PathBuf,
        /// Why the step failed.
        source: Box<RunError>,
    },
    /// Something else a front end refused.
    #[error("{0}")]
    Other(String),
}

/// Where a run stops.
#[derive(Clone, Debug)]
pub enum Until {
    /// When the model has done this many units in total.
    Count(u64),
    /// When this many seconds have been simulated (`text` as the user gave it).
    Seconds {
        /// Seconds in total.
        total: f64,
        /// As the user gave it.
        text: String,
    },
}

/// What a front end sees of a run: progress, notes, and whether to stop. Every method has a
/// silent default.
pub trait Watch: Sync {
    /// The run begins: `total` units (or seconds, when `unit` is "s") in all, `at` done.
    fn begin(&self, _model: &'static str, _total: u64, _unit: &'static str, _at: u64) {}
    /// Units (or seconds) done so far.
    fn progress(&self, _at: u64) {}
    /// A note for the user.
    fn note(&self, _text: &str) {}
    /// Whether the user asked the run to stop (it then writes a checkpoint and returns
    /// [`RunError::Interrupted`]).
    fn stop_requested(&self) -> bool {
        false
    }
    /// The loop has ended.
    fn end(&self) {}
}

/// What one model's front end adds to the run of its model `M`: notes, snapshots, outputs and
/// report fields.
pub trait Front<M: Model>: Send + Sync {
    /// Once the output folder exists, before the first step (`fresh`: not resumed).
    fn begin(&mut self, _model: &M, _out: &std::path::Path, _fresh: bool, _watch: &dyn Watch) -> Result<(), RunError> {
        Ok(())
    }
    /// Whether the model's final state is part of its output, kept as a checkpoint even when
    /// none was asked for (see [`keeps_final_state`]).
    fn keeps_final_state(&self) -> bool {
        false
    }
    /// Units between two snapshots (0: none).
    fn snapshot_every(&self) -> u64 {
        0
    }
    /// Writes a snapshot into the output folder.
    fn snapshot(&mut self, _model: &M, _out: &std::path::Path) -> Result<(), RunError> {
        Ok(())
    }
    /// After each advance: a note on how the run goes.
    fn after_advance(&mut self, _model: &M, _watch: &dyn Watch) {}
    /// A heightmap model's input, maps and preset: the methods below default to them (a model
    /// without, like SPH's mesh, gives its own).
    fn map_set(&self) -> Option<&MapSet> {
        None
    }
    /// Writes the results into `dir`: a heightmap model's maps in every format asked for and
    /// its preview.
    fn write_outputs(&self, model: &M, dir: &std::path::Path) -> Result<(), RunError> {
        match self.map_set() {
            Some(set) => write_map_set(set, model, dir),
            None => Ok(()),
        }
    }
    /// The maps [`Front::write_outputs`] reads (`None`: it may read the whole state).
    fn read_maps(&self, model: &M) -> Option<Vec<&'static str>> {
        self.map_set().map(|set| set.outputs.read_maps(&map_names(model)))
    }
    /// The names of the files [`Front::write_outputs`] and [`Front::begin`] write in the output
    /// folder (`report.json` aside).
    fn file_names(&self, model: &M) -> Vec<String> {
        self.map_set().map_or_else(Vec::new, |set| set.outputs.file_names(map_names(model)))
    }
    /// The preset the parameters started from (`None` for a model without presets).
    fn preset(&self) -> Option<&str> {
        self.map_set().map(|set| set.preset.as_str())
    }
    /// The footprint of the heightmap the model erodes, if it erodes one (its size goes into
    /// `report.json`).
    fn footprint(&self) -> Option<&crate::Footprint> {
        self.map_set().map(|set| &set.input)
    }
    /// The parameters the run uses, as `report.json` gives them.
    fn params(&self, model: &M) -> Value;
    /// What only this model reports: `report.json`'s `details`.
    fn details(&self, model: &M) -> Map<String, Value>;
}

/// What a heightmap model's run writes and reports of its input: the footprint of the heightmap
/// read (its nodata and georeference go to every map written; the run holds the heights), the
/// maps' formats and preview, the preset.
pub struct MapSet {
    /// The footprint of the heightmap the run began from.
    pub input: crate::Footprint,
    /// The formats and preview of the maps.
    pub outputs: crate::outputs::MapOutputs,
    /// The preset the parameters started from.
    pub preset: String,
}

/// A validated run.
pub struct Job<M, F> {
    /// The model, started or resumed.
    pub model: M,
    /// Its front end.
    pub front: F,
    /// The output folder.
    pub output: PathBuf,
    /// Where to stop.
    pub until: Until,
    /// Units between checkpoints (0: none on the way). See [`keeps_final_state`] for the one at
    /// the end.
    pub checkpoint_every: u64,
    /// The checkpoint resumed from, if any.
    pub resumed: Option<PathBuf>,
    /// The input the checkpoints belong to.
    pub stamp: Stamp,
    /// Every file the run reads (its outputs may not replace one).
    pub inputs: Vec<PathBuf>,
    /// A fresh run moves another run's checkpoints aside instead of refusing.
    pub force: bool,
    /// The worker threads.
    pub pool: rayon::ThreadPool,
    /// The command that asked for the run, as given (for the report; empty when none).
    pub command: Vec<String>,
}

/// Most iterations a duration may stand for (more means a time step far below the usual:
/// gravity or cells out of scale).
const MAX_DURATION_ITERATIONS: f64 = 1e8;

/// Wall time an advance aims at, s: a few progress updates and stop checks a second.
const ADVANCE_SECONDS: f64 = 0.25;

/// Whether a finished run writes its final state as a checkpoint, to go on from later with a
/// resume: when checkpoints were asked for (`every` > 0), when it resumed one (its checkpoints
/// then stay current, never older than its outputs), or when its front keeps the state as part of
/// its output (SPH: the viewer opens the folder where the run ended). Otherwise the outputs are
/// the result and the final state, larger than all of them (72 bytes a cell for the grid model),
/// is not written. A run stopped by the user always writes one, so `--resume` can go on; one gone
/// non-finite writes one for inspection under the same rule as a finished run.
pub fn keeps_final_state(every: u64, resumed: bool, front_keeps: bool) -> bool {
    every > 0 || resumed || front_keeps
}

/// Writes the maps of `set` from `model` into `dir` (see [`Front::write_outputs`]).
fn write_map_set<M: Model>(set: &MapSet, model: &M, dir: &std::path::Path) -> Result<(), RunError> {
    Ok(set.outputs.write(dir, &set.input, &map_names(model), &|name| model.map(name))?)
}

/// The names of `model`'s output maps, in order (its `ModelInfo::maps`).
fn map_names<M: Model>(model: &M) -> Vec<&'static str> {
    erode::models::info::find(model.name()).map_or_else(Vec::new, |m| m.maps.iter().map(|d| d.name).collect())
}

/// Runs `job` to its end: checks, runs with progress and checkpoints, writes outputs and report.
pub fn run<M: Model, F: Front<M>>(mut job: Job<M, F>, watch: &dyn Watch) -> Result<(), RunError> {
    let name = job.model.name();
    let unit = job.model.unit().name();
    let ckpt_dir = checkpoints::folder(&job.output);
    let start = job.model.done();

    // 1. the last checks, then the output folder, this run's while the lock lives
    check(&job)?;
    staging::check_inputs_kept(&job.output, &job.inputs, || {
        let mut names = job.front.file_names(&job.model);
        names.push("report.json".into());
        names
    })?;
    let _lock = create_output_folder(&job.output)?;
    if job.resumed.is_none()
        && let Some(note) = checkpoints::claim(&ckpt_dir, name, job.model.fingerprint(), job.stamp.hash, job.force)?
    {
        watch.note(&note);
    }
    job.front.begin(&job.model, &job.output, job.resumed.is_none(), watch)?;

    // 2. the run: advances of about ADVANCE_SECONDS, in whole granules, never past a checkpoint
    // or snapshot
    let granule = job.model.granule().max(1);
    let every = job.checkpoint_every.div_ceil(granule) * granule;
    if every != job.checkpoint_every {
        watch.note(&format!("checkpoints every {every} {unit}s: a multiple of the model's batch ({granule})"));
    }
    let snapshot_every = job.front.snapshot_every();
    match &job.until {
        Until::Count(n) => watch.begin(name, *n, unit, start),
        Until::Seconds { total, .. } => {
            watch.begin(name, total.ceil() as u64, "s", job.model.clock().map_or(0.0, |c| c.now) as u64)
        }
    }
    let save = |model: &mut M| -> Result<PathBuf, RunError> {
        model.sync_checkpoint()?;
        Ok(checkpoints::write(&ckpt_dir, name, model.done(), |sink| model.write_checkpoint(sink))?)
    };
    let t0 = Instant::now();
    let threads = job.pool.current_num_threads();
    let (model, front, until, output) = (&mut job.model, &mut job.front, &job.until, &job.output);
    let outcome = job.pool.install(|| -> Result<(), RunError> {
        let mut batch = 1;
        loop {
            let done = model.done();
            let left = match until {
                Until::Count(n) if done >= *n => break,
                Until::Count(n) => n - done,
                Until::Seconds { total, .. } => {
                    let clock = model.clock().unwrap_or(Clock { now: *total, step: 1.0 });
                    if clock.now >= *total {
                        break;
                    }
                    ((total - clock.now) / clock.step.max(1e-9)).ceil().max(1.0) as u64
                }
            };
            let mut n = erode::contract::advance_len(done, batch, granule, left);
            for period in [every, snapshot_every] {
                if period > 0 {
                    n = n.min(period - done % period);
                }
            }
            let started = Instant::now();
            let by_time = matches!(until, Until::Seconds { .. });
            model.advance(n, &mut |d| {
                if !by_time {
                    watch.progress(d)
                }
            })?;
            if let Some(clock) = model.clock().filter(|_| by_time) {
                watch.progress(clock.now as u64);
            }
            let per_unit = started.elapsed().as_secs_f64() / n as f64;
            batch = ((ADVANCE_SECONDS / per_unit.max(1e-9)) as u64).clamp(1, 1 << 20);
            let done = model.done();
            let finished = match until {
                Until::Count(total) => done >= *total,
                Until::Seconds { total, .. } => model.clock().is_none_or(|c| c.now >= *total),
            };
            if every > 0 && done.is_multiple_of(every) {
                save(model)?;
            }
            front.after_advance(model, watch);
            if snapshot_every > 0 && done.is_multiple_of(snapshot_every) {
                model.sync()?;
                front.snapshot(model, output)?;
            }
            if watch.stop_requested() && !finished {
                watch.end();
                let checkpoint = save(model)?;
                return Err(RunError::Interrupted { at: format!("{unit} {done}"), checkpoint });
            }
        }
        Ok(())
    });
    if let Err(e @ RunError::Interrupted { .. }) = outcome {
        return Err(e);
    }
    let seconds = t0.elapsed().as_secs_f64();
    watch.end();

    // 3. outputs and report, also when a step failed (the state holds the last consistent one):
    // the whole state when it is kept, else what the outputs read
    let model = &mut job.model;
    let done = model.done();
    let keep = keeps_final_state(every, job.resumed.is_some(), job.front.keeps_final_state());
    let last_checkpoint = keep && outcome.is_ok() && (every == 0 || !done.is_multiple_of(every));
    // over ranks, the checkpoint is gathered as it is written and the outputs are written by
    // every rank: they take turns, and the maps stay on the ranks
    let alone = model.ranks() == 1;
    let synced = match job.front.read_maps(model) {
        Some(maps) if !last_checkpoint || !alone => model.sync_maps(&maps),
        _ => model.sync(),
    };
    let synced = synced.and_then(|()| if last_checkpoint { model.sync_checkpoint() } else { Ok(()) });
    if let Err(e) = synced {
        return Err(outcome.err().unwrap_or_else(|| e.into()));
    }
    if !model.is_finite() {
        let checkpoint = if last_checkpoint { Some(save(model)?) } else { None };
        return Err(RunError::NonFinite { unit, at: done, checkpoint });
    }
    let staging = Staging::new(&job.output)?;
    let (model, front) = (&job.model, &job.front);
    let write_checkpoint = || {
        if last_checkpoint {
            checkpoints::write(&ckpt_dir, name, model.done(), |sink| model.write_checkpoint(sink)).map(drop)
        } else {
            Ok(())
        }
    };
    let write_outputs = || front.write_outputs(model, staging.path());
    let (checkpoint, outputs) =
        if alone { rayon::join(write_checkpoint, write_outputs) } else { (write_checkpoint(), write_outputs()) };
    checkpoint?;
    outputs.map_err(|e| match e {
        RunError::File(e) => RunError::File(staging.as_placed(e)),
        e => e,
    })?;
    let progress = Progress { start, done, resumed: job.resumed.is_some(), seconds };
    let stopped = outcome.as_ref().err().map(|e| e.to_string());
    let report = report(model, front, &job, progress, threads, stopped, staging.names()?);
    let text = serde_json::to_string_pretty(&report).map_err(|e| RunError::Other(format!("report.json: {e}")))?;
    crate::write_atomic(&staging.path().join("report.json"), text.as_bytes()).map_err(|e| staging.as_placed(e))?;
    staging.commit(&job.inputs)?;
    outcome.map_err(|e| RunError::Stopped { output: job.output.clone(), source: Box::new(e) })
}

/// Refuses a job that cannot run as asked: a checkpoint of another input or past the end, a
/// duration a model cannot be run to.
fn check<M: Model, F>(job: &Job<M, F>) -> Result<(), RunError> {
    let unit = job.model.unit().name();
    let start = job.model.done();
    if let Some(path) = &job.resumed {
        job.stamp.check(&job.model, path)?;
        if let Until::Count(n) = job.until
            && start > n
        {
            return Err(RunError::PastTheEnd { path: path.clone(), unit, at: start, asked: n });
        }
    }
    if let Until::Seconds { total, text } = &job.until {
        let Some(clock) = job.model.clock() else { return Err(RunError::NoClock { model: job.model.name() }) };
        let iterations = (total - clock.now) / clock.step;
        if iterations.is_nan() || iterations > MAX_DURATION_ITERATIONS {
            return Err(RunError::TooLong { text: text.clone(), iterations, step: clock.step });
        }
    }
    Ok(())
}

/// How far a run went: units done before it and at its end, and its wall time.
struct Progress {
    start: u64,
    done: u64,
    resumed: bool,
    seconds: f64,
}

/// `report.json`, one shape for every model: provenance, the model and its parameters, where it
/// ran, how far, the books (each term once, with its unit), the stages' wall times, then what
/// only this model reports (`details`) and the files written.
fn report<M: Model, F: Front<M>>(
    model: &M,
    front: &F,
    job: &Job<M, F>,
    progress: Progress,
    threads: usize,
    stopped: Option<String>,
    files: Vec<String>,
) -> Value {
    let balance = model.balance();
    let terms: Map<String, Value> =
        balance.terms.iter().map(|t| (t.name.to_string(), json!({ "value": t.value, "unit": t.unit }))).collect();
    // a stage that never ran (the default schedule fuses several into one sweep) is left out
    let stage_seconds: Map<String, Value> = model
        .stage_times()
        .into_iter()
        .filter(|(_, t)| !t.is_zero())
        .map(|(s, t)| (s.to_string(), json!(t.as_secs_f64())))
        .collect();
    let (backend, adapter) = match model.backend() {
        Backend::Cpu => ("cpu", None),
        Backend::Gpu { adapter } => ("gpu", Some(adapter)),
    };
    let map = front.footprint().map(
        |m| json!({ "width": m.width, "height": m.height, "cell_size": { "x": m.cell_size.x, "y": m.cell_size.y } }),
    );
    let Progress { start, done, resumed, seconds } = progress;
    json!({
        "report": REPORT_VERSION,
        "erode": env!("CARGO_PKG_VERSION"),
        "command": job.command,
        "input": { "given": job.stamp.input, "hash": format!("{:016x}", job.stamp.hash) },
        "model": model.name(),
        "preset": front.preset(),
        "params": front.params(model),
        "backend": backend,
        "adapter": adapter,
        "threads": threads,
        "map": map,
        "progress": {
            "unit": model.unit().name(),
            "done": done,
            "this_run": done - start,
            "resumed_from": resumed.then_some(start),
            "per_second": if seconds > 0.0 { (done - start) as f64 / seconds } else { 0.0 },
        },
        "simulated_seconds": model.clock().map(|c| c.now),
        "seconds": seconds,
        "stopped": stopped,
        "finite": true,
        "books": { "relative_error": balance.relative_error, "terms": terms },
        "stage_seconds": stage_seconds,
        "details": front.details(model),
        "files": files,
    })
}

/// The shape of `report.json` (raised when a key moves or changes its meaning).
pub const REPORT_VERSION: u32 = 2;
