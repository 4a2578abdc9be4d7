//! `erode simulate MODEL`: each model's flags, validated into a job that the library's one run
//! ([`erode_io::run`]) takes to its end.

mod droplet;
mod grid;
mod heightmap;
mod made;
mod outline;
mod rows;
mod sph;
mod stream_power;

use std::path::PathBuf;

use anyhow::{Context, bail};
use erode_io::run::{Job, Newest, Stamp, Until};

/// Erode a terrain with a model and write the results into a folder.
#[derive(clap::Args)]
#[command(after_help = "Every model writes report.json into OUTDIR and its checkpoints into OUTDIR/checkpoints
(--checkpoint-every, --resume); see `erode simulate MODEL --help` for each model's outputs.

Examples:
  erode simulate grid t.tif -o out --iterations 1000
  erode simulate droplet t.tif -o out --preset gentle
  erode simulate sph --scene tunnel --iterations 2000 -o out
  erode simulate stream-power plain.tif -o range --years 2e6")]
pub struct Args {
    #[command(subcommand)]
    model: ModelCommand,
}

/// Whether `a` runs over MPI ranks when launched among several: the grid model without
/// `--tiles` (the decomposition of `erode::models::grid::blocks`).
pub fn runs_over_ranks(a: &Args) -> bool {
    matches!(&a.model, ModelCommand::Grid(g) if g.tiles.is_none())
}

pub use rows::read as read_rows;

/// The worker threads a rank other than 0 steps its block with: `--threads` as rank 0 reads it.
pub fn rank_pool(a: &Args) -> anyhow::Result<rayon::ThreadPool> {
    match &a.model {
        ModelCommand::Grid(g) => thread_pool(g.run.threads),
        _ => thread_pool(None),
    }
}

/// One subcommand per model of the models' list, in its order: those with a command of their
/// own, and every other through its `Maker` ([`made`]).
enum ModelCommand {
    Grid(grid::Args),
    Droplet(droplet::Args),
    Sph(sph::Args),
    StreamPower(stream_power::Args),
    Made(made::Run),
}

impl clap::FromArgMatches for ModelCommand {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        use erode::models::{droplet as d, grid as g, sph as s, stream_power as p};
        let Some((name, sub)) = matches.subcommand() else {
            return Err(clap::Error::new(clap::error::ErrorKind::MissingSubcommand));
        };
        Ok(match name {
            g::NAME => Self::Grid(grid::Args::from_arg_matches(sub)?),
            d::NAME => Self::Droplet(droplet::Args::from_arg_matches(sub)?),
            s::NAME => Self::Sph(sph::Args::from_arg_matches(sub)?),
            p::NAME => Self::StreamPower(stream_power::Args::from_arg_matches(sub)?),
            other => match erode::models::info::find(other) {
                Some(info) => Self::Made(made::Run::from_matches(info, sub)?),
                None => return Err(clap::Error::new(clap::error::ErrorKind::InvalidSubcommand)),
            },
        })
    }
    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Subcommand for ModelCommand {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        use clap::Args as _;
        use erode::models::{droplet as d, grid as g, sph as s, stream_power as p};
        erode::models::MODELS.iter().fold(cmd, |cmd, info| {
            let own = clap::Command::new(info.name).about(info.summary);
            cmd.subcommand(match info.name {
                g::NAME => grid::Args::augment_args(own),
                d::NAME => droplet::Args::augment_args(own),
                s::NAME => sph::Args::augment_args(own),
                p::NAME => stream_power::Args::augment_args(own),
                _ => made::command(info),
            })
        })
    }
    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }
    fn has_subcommand(name: &str) -> bool {
        erode::models::info::find(name).is_some()
    }
}

/// Flags every model takes.
#[derive(clap::Args)]
pub struct RunArgs {
    /// Output folder (created if missing).
    #[arg(short, long)]
    output: PathBuf,
    /// Parameter file (TOML; see `erode params MODEL`).
    #[arg(long)]
    params: Option<PathBuf>,
    /// Override a parameter, `key=value` (repeatable), applied after --params.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Worker threads (default: one per core). Results are identical for any count.
    #[arg(long)]
    threads: Option<usize>,
    /// Keep the state as a checkpoint every N iterations or droplets and at the end, to go on
    /// from with --resume (0: none, except when stopped with Ctrl-C; a resumed run keeps its
    /// checkpoints current).
    #[arg(long, default_value_t = 0)]
    checkpoint_every: u64,
    /// Continue from the newest checkpoint in OUTDIR up to the total asked for.
    #[arg(long)]
    resume: bool,
    /// A fresh run in a folder holding another run's checkpoints (other parameters or input)
    /// moves them into `checkpoints/replaced-N` instead of refusing.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    input: crate::input::InputArgs,
}

impl RunArgs {
    /// The newest checkpoint of `model` in the output folder, when resuming.
    fn checkpoint(&self, model: &str) -> anyhow::Result<Option<Newest>> {
        Ok(if self.resume { Some(Newest::read(&self.output, model)?) } else { None })
    }

    /// The newest checkpoint of `model` in the output folder, when resuming, found but not read
    /// (a run over ranks reads it as it hands it out: see [`Newest::resume_streamed`]).
    fn checkpoint_unread(&self, model: &str) -> anyhow::Result<Option<Newest>> {
        Ok(if self.resume { Some(Newest::find(&self.output, model)?) } else { None })
    }

    /// The job of `model` and its `front`, to run `until`, from `checkpoint` when resuming;
    /// `files` are what it reads besides the parameter file.
    fn job<M, F>(
        self,
        model: M,
        front: F,
        until: Until,
        checkpoint: Option<Newest>,
        stamp: Stamp,
        files: &[Option<&std::path::Path>],
    ) -> anyhow::Result<Job<M, F>> {
        let inputs = files.iter().flatten().map(|p| p.to_path_buf()).chain(self.params.clone()).collect();
        Ok(Job {
            model,
            front,
            output: self.output,
            until,
            checkpoint_every: self.checkpoint_every,
            resumed: checkpoint.map(|c| c.path),
            stamp,
            inputs,
            force: self.force,
            pool: thread_pool(self.threads)?,
            command: std::env::args().collect(),
        })
    }
}

/// Where the grid and droplet models run.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq)]
enum Backend {
    /// Rayon on the CPU (every option).
    Cpu,
    /// wgpu compute shaders (see `erode gpu-info`; the grid model without semi-Lagrangian
    /// transport, buckets or smoothing).
    Gpu,
    /// The GPU when there is one and it runs these options, else the CPU (and the CPU for
    /// droplets on maps too small for many to run at once).
    Auto,
}

impl Backend {
    /// Moves `run` onto the GPU when the backend asks for it; with `auto`, leaves it on the CPU
    /// (with a note) when it cannot be.
    fn place<R>(
        self,
        run: &mut R,
        quiet: bool,
        use_gpu: impl FnOnce(&mut R, std::sync::Arc<erode::gpu::GpuContext>) -> Result<(), erode::SimError>,
    ) -> anyhow::Result<()> {
        if self == Backend::Cpu {
            return Ok(());
        }
        let placed = erode::gpu::GpuContext::headless()
            .map_err(anyhow::Error::from)
            .and_then(|ctx| use_gpu(run, std::sync::Arc::new(ctx)).map_err(Into::into));
        match placed {
            Err(e) if self == Backend::Auto => {
                if !quiet {
                    eprintln!("erode: running on the CPU: {e}");
                }
                Ok(())
            }
            placed => placed,
        }
    }
}

/// Says on stderr, in one line, when the map's cells do not suit the model's parameters, and
/// what to use instead. The run goes ahead.
fn say_scale(note: Option<erode::models::ScaleNote>) {
    let Some(note) = note else { return };
    let instead = note.instead.map_or(String::new(), |m| format!("use `erode simulate {m}`, or "));
    eprintln!("erode: note: {note}: {instead}resample the map (`erode resample --resolution {}`)", note.nearest_fit());
}

/// The worker threads of a run (`--threads`, default one per core).
pub fn thread_pool(threads: Option<usize>) -> anyhow::Result<rayon::ThreadPool> {
    let mut b = rayon::ThreadPoolBuilder::new();
    if let Some(n) = threads {
        if n == 0 {
            bail!("--threads must be at least 1");
        }
        // results are the same for any count: threads beyond the cores only cost memory
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        let most = (4 * cores).max(16);
        if n > most {
            bail!("--threads {n}: at most {most} on this machine ({cores} cores; results are the same for any count)");
        }
        b = b.num_threads(n);
    }
    b.build().context("starting worker threads")
}

pub fn run(a: Args, quiet: bool) -> anyhow::Result<()> {
    let watch = crate::progress::RunWatch::new(quiet);
    // reading the input and preparing the run (the steady start's flood and routing) take the
    // threads the run is given, as the run does
    let threads = match &a.model {
        ModelCommand::Grid(a) => a.run.threads,
        ModelCommand::Droplet(a) => a.run.threads,
        ModelCommand::Sph(a) => a.run.threads,
        ModelCommand::StreamPower(a) => a.run.threads,
        ModelCommand::Made(r) => r.args.run.threads,
    };
    thread_pool(threads)?.install(|| {
        match a.model {
            ModelCommand::Grid(a) => match a.tiles {
                Some(tile) => erode_io::run::run(grid::tiled_job(a, tile)?, &watch)?,
                None => erode_io::run::run(grid::job(a, quiet)?, &watch)?,
            },
            ModelCommand::Droplet(a) => erode_io::run::run(droplet::job(a, quiet)?, &watch)?,
            ModelCommand::Sph(a) => erode_io::run::run(sph::job(a)?, &watch)?,
            ModelCommand::StreamPower(a) => erode_io::run::run(stream_power::job(a)?, &watch)?,
            ModelCommand::Made(r) => erode_io::run::run(made::job(r)?, &watch)?,
        }
        Ok(())
    })
}
