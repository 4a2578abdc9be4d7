//! The one run every model goes through, over the library's model contract: the last checks,
//! the output folder, the loop with progress, checkpoints, snapshots and interrupts, then the
//! outputs and `report.json`, written as one set.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::bail;
use erode::contract::{Backend, Model};
use indicatif::ProgressBar;
use serde_json::{Map, Value, json};

use super::checkpoints;
use crate::progress;

/// Where a run stops.
pub enum Until {
    /// When the model has done this many units in total.
    Count(u64),
    /// When this many seconds have been simulated (`text` as the user gave it).
    Seconds { total: f64, text: String },
}

/// Which input a run's checkpoints belong to (see `crate::stamp`).
#[derive(Clone)]
pub struct Stamp {
    /// The input's hash.
    pub hash: u64,
    /// The input as the user named it.
    pub input: String,
}

/// What one model's front end adds to the run of its model `M`: notes, snapshots, outputs and
/// report fields.
pub trait Front<M: Model>: Send + Sync {
    /// Once the output folder exists, before the first step (`fresh`: not resumed).
    fn begin(&mut self, _model: &M, _out: &Path, _fresh: bool, _quiet: bool) -> anyhow::Result<()> {
        Ok(())
    }
    /// Units between two snapshots (0: none).
    fn snapshot_every(&self) -> u64 {
        0
    }
    /// Writes a snapshot into the output folder.
    fn snapshot(&mut self, _model: &M, _out: &Path) -> anyhow::Result<()> {
        Ok(())
    }
    /// After each advance: a note on how the run goes.
    fn after_advance(&mut self, _model: &M, _bar: &ProgressBar, _quiet: bool) {}
    /// Writes the results into `dir`.
    fn write_outputs(&self, model: &M, dir: &Path) -> anyhow::Result<()>;
    /// The model's own fields of `report.json`.
    fn report(&self, model: &M) -> Map<String, Value>;
    /// The model's own fields of `report.json`'s `mass_balance`.
    fn books(&self, _model: &M) -> Map<String, Value> {
        Map::new()
    }
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
    /// Units between checkpoints (0: only at the end).
    pub checkpoint_every: u64,
    /// The checkpoint resumed from, if any.
    pub resumed: Option<PathBuf>,
    /// The input the checkpoints belong to.
    pub stamp: Stamp,
    /// The worker threads.
    pub pool: rayon::ThreadPool,
}

/// Most iterations a `--duration` may stand for (more means a time step far below the usual:
/// gravity or cells out of scale).
const MAX_DURATION_ITERATIONS: f64 = 1e8;

/// Wall time an advance aims at, s: a few progress updates and interrupt checks a second.
const ADVANCE_SECONDS: f64 = 0.25;

/// Makes the output folder (once every check has passed, so a refused run leaves none) and
/// checks that files can be made in it.
pub fn create_output_folder(dir: &Path) -> anyhow::Result<()> {
    use anyhow::Context;
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create the output folder", dir.display()))?;
    erode_io::check_output(&dir.join("report.json"))?;
    crate::output::remove_stale_temporaries(dir);
    Ok(())
}

/// Runs `job` to its end: checks, runs with progress and checkpoints, writes outputs and report.
pub fn run<M: Model, F: Front<M>>(mut job: Job<M, F>, quiet: bool) -> anyhow::Result<()> {
    let name = job.model.name();
    let unit = job.model.unit().name();
    let ckpt_dir = checkpoints::folder(&job.output);
    let start = job.model.done();

    // 1. the last checks, then the output folder
    if let Some(path) = &job.resumed {
        crate::stamp::check(&ckpt_dir, job.stamp.hash, &job.stamp.input)?;
        if let Until::Count(n) = job.until
            && start > n
        {
            bail!(
                "{}: the checkpoint is at {unit} {start}, past the {n} asked for; ask for at least that many, or \
                 start afresh without --resume",
                path.display()
            );
        }
    }
    if let Until::Seconds { total, text } = &job.until {
        let Some(clock) = job.model.clock() else { bail!("--duration: the {name} model has no clock") };
        let iterations = (total - clock.now) / clock.step;
        if iterations.is_nan() || iterations > MAX_DURATION_ITERATIONS {
            bail!(
                "--duration {text}: about {iterations:.2e} iterations of {:.3e} s each (more than \
                 {MAX_DURATION_ITERATIONS:.0e}); check gravity and the cell size, or give --iterations",
                clock.step
            );
        }
    }
    create_output_folder(&job.output)?;
    if job.resumed.is_none() {
        crate::stamp::write(&ckpt_dir, job.stamp.hash)?;
    }
    job.front.begin(&job.model, &job.output, job.resumed.is_none(), quiet)?;

    // 2. the run: advances of about ADVANCE_SECONDS, in whole granules, never past a checkpoint
    // or snapshot
    let granule = job.model.granule().max(1);
    let every = job.checkpoint_every.div_ceil(granule) * granule;
    if every != job.checkpoint_every && !quiet {
        eprintln!("checkpoints every {every} {unit}s: a multiple of the model's batch ({granule})");
    }
    let snapshot_every = job.front.snapshot_every();
    let bar = match &job.until {
        Until::Count(n) => {
            let bar = progress::bar(*n, if unit == "droplet" { "droplets" } else { "it" }, quiet);
            bar.set_position(start);
            bar
        }
        Until::Seconds { total, .. } => {
            let bar = progress::bar(total.ceil() as u64, "s", quiet);
            bar.set_position(job.model.clock().map_or(0.0, |c| c.now) as u64);
            bar
        }
    };
    bar.set_message(name);
    let save = |model: &mut M| -> anyhow::Result<PathBuf> {
        model.sync()?;
        checkpoints::write(&ckpt_dir, name, model.done(), &model.checkpoint())
    };
    let t0 = Instant::now();
    let threads = job.pool.current_num_threads();
    let (model, front, until, output) = (&mut job.model, &mut job.front, &job.until, &job.output);
    let outcome = job.pool.install(|| -> anyhow::Result<()> {
        let mut batch = 1;
        loop {
            let done = model.done();
            let left = match until {
                Until::Count(n) if done >= *n => break,
                Until::Count(n) => n - done,
                Until::Seconds { total, .. } => {
                    let clock = model.clock().unwrap_or(erode::contract::Clock { now: *total, step: 1.0 });
                    if clock.now >= *total {
                        break;
                    }
                    ((total - clock.now) / clock.step.max(1e-9)).ceil().max(1.0) as u64
                }
            };
            // advances end on multiples of the granule counted from the start (a resumed run
            // may start between two)
            let mut n = ((done + batch).div_ceil(granule) * granule - done).min(left);
            for period in [every, snapshot_every] {
                if period > 0 {
                    n = n.min(period - done % period);
                }
            }
            let started = Instant::now();
            let by_time = matches!(until, Until::Seconds { .. });
            model.advance(n, &mut |d| {
                if !by_time {
                    bar.set_position(d)
                }
            })?;
            if let Some(clock) = model.clock().filter(|_| by_time) {
                bar.set_position(clock.now as u64);
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
            front.after_advance(model, &bar, quiet);
            if snapshot_every > 0 && done.is_multiple_of(snapshot_every) {
                model.sync()?;
                front.snapshot(model, output)?;
            }
            if crate::interrupt::requested() && !finished {
                bar.finish_and_clear();
                let checkpoint = save(model)?;
                return Err(crate::interrupt::Interrupted { at: format!("{unit} {done}"), checkpoint }.into());
            }
        }
        Ok(())
    });
    if outcome.as_ref().is_err_and(|e| e.downcast_ref::<crate::interrupt::Interrupted>().is_some()) {
        return outcome;
    }
    let seconds = t0.elapsed().as_secs_f64();
    bar.finish_and_clear();

    // 3. outputs and report, also when a step failed (the state holds the last consistent one)
    let model = &mut job.model;
    if let Err(e) = model.sync() {
        return Err(outcome.err().unwrap_or_else(|| e.into()));
    }
    let done = model.done();
    let last_checkpoint = outcome.is_ok() && (every == 0 || !done.is_multiple_of(every));
    if !model.is_finite() {
        if last_checkpoint {
            save(model)?;
        }
        bail!("the run produced non-finite values at {unit} {done}; the checkpoint holds the state for inspection");
    }
    let staging = crate::output::Staging::new(&job.output)?;
    let (model, front) = (&job.model, &job.front);
    let (checkpoint, outputs) = rayon::join(
        || {
            if last_checkpoint {
                checkpoints::write(&ckpt_dir, name, model.done(), &model.checkpoint()).map(drop)
            } else {
                Ok(())
            }
        },
        || front.write_outputs(model, staging.path()),
    );
    checkpoint?;
    outputs?;
    let balance = model.balance();
    let mut books = Map::new();
    books.insert("relative_error".into(), json!(balance.relative_error));
    for t in &balance.terms {
        books.insert(t.name.into(), json!(t.value));
    }
    books.extend(front.books(model));
    let stage_seconds: Map<String, Value> =
        model.stage_times().into_iter().map(|(s, t)| (s.to_string(), json!(t.as_secs_f64()))).collect();
    let ran = done - start;
    let (backend, adapter) = match model.backend() {
        Backend::Cpu => ("cpu", None),
        Backend::Gpu { adapter } => ("gpu", Some(adapter)),
    };
    let mut report = Map::new();
    for (key, value) in [
        ("model", json!(name)),
        ("backend", json!(backend)),
        ("adapter", json!(adapter)),
        ("threads", json!(threads)),
        (&format!("{unit}s"), json!(done)),
        (&format!("{unit}s_this_run"), json!(ran)),
        ("resumed_from", json!(job.resumed.as_ref().map(|_| start))),
        ("seconds", json!(seconds)),
        (&format!("{unit}s_per_second"), json!(if seconds > 0.0 { ran as f64 / seconds } else { 0.0 })),
        ("stopped", json!(outcome.as_ref().err().map(|e| format!("{e:#}")))),
        ("mass_balance", Value::Object(books)),
        ("finite", json!(true)),
        ("stage_seconds", Value::Object(stage_seconds)),
    ] {
        report.insert(key.to_string(), value);
    }
    report.extend(front.report(model));
    erode_io::write_atomic(&staging.path().join("report.json"), serde_json::to_string_pretty(&report)?.as_bytes())?;
    staging.commit()?;
    outcome.map_err(|e| e.context(format!("the last consistent state is in {}", job.output.display())))
}
