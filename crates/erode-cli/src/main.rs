//! The `erode` command line: parse with clap, validate into a job, run it. Every failure prints
//! one line on stderr and exits with status 2; outputs are written atomically, so a failed run
//! leaves nothing behind.

mod cmd;
mod input;
mod interrupt;
mod memory;
mod output;
mod plot;
mod progress;
mod ranks;
mod recipe;
mod sheet;
mod tiles;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Terrain erosion simulator.
#[derive(Parser)]
#[command(name = "erode", version, about, long_about = None, propagate_version = true)]
struct Cli {
    /// Print no progress bars.
    #[arg(long, short, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Generate(cmd::generate::Args),
    Info(cmd::info::Args),
    Convert(cmd::convert::Args),
    Render(cmd::render::Args),
    Resample(cmd::resample::Args),
    Crop(cmd::crop::Args),
    Mesh(cmd::mesh::Args),
    Masks(cmd::masks::Args),
    Rescale(cmd::rescale::Args),
    Analyze(cmd::analyze::Args),
    Params(cmd::params::Args),
    Simulate(Box<cmd::simulate::Args>),
    Amplify(cmd::amplify::Args),
    Run(cmd::run::Args),
    Demo(cmd::demo::Args),
    /// List the GPU adapters and their limits.
    GpuInfo(cmd::gpu_info::Args),
    /// Time a model on a generated terrain (nothing read or written).
    Bench(cmd::bench::Args),
    View(cmd::view::Args),
}

/// Help and version go to stdout as clap renders them; a usage error is one line, status 2.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        };
    }
    let text = e.render().to_string();
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("invalid arguments");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    // a list of arguments follows its line ("were not provided:"), indented, until a blank line
    let listed: Vec<&str> = if first.ends_with(':') {
        lines.take_while(|l| !l.trim().is_empty()).map(str::trim).collect()
    } else {
        Vec::new()
    };
    let first = if listed.is_empty() { first.to_string() } else { format!("{} {}", first, listed.join(", ")) };
    eprintln!("erode: error: {} (see `erode --help`)", short_digits(&first));
    ExitCode::from(2)
}

/// `text` with every run of more than 16 digits cut to its first 6 and its length: clap echoes
/// a 300-digit number whole.
fn short_digits(text: &str) -> String {
    let mut out = String::new();
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if run.len() > 16 {
            out.push_str(&format!("{}… ({} digits)", &run[..6], run.len()));
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in text.chars() {
        if c.is_ascii_digit() {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// The error and its causes on one line, skipping a cause whose text the line already holds
/// (typed errors often print their source themselves).
fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line.replace('\n', " ")
}

/// `command` and every subcommand under it reading a value that starts with `-` and a digit as
/// a number: `--seed -1` is then a bad seed, not an unknown argument `-1`.
fn negative_numbers(command: clap::Command) -> clap::Command {
    command.allow_negative_numbers(true).mut_subcommands(negative_numbers)
}

/// Mesa's Vulkan device-select layer connects to Wayland to rank GPUs, and without a session
/// (`XDG_RUNTIME_DIR` unset: a server, CI, ssh) prints `XDG_RUNTIME_DIR is invalid` twice on
/// every GPU run, choosing nothing. There it is switched off (`NODEVICE_SELECT`), before any
/// thread exists.
#[allow(unsafe_code)] // set_var: one call, before any thread
fn quiet_vulkan_layers() {
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() && std::env::var_os("NODEVICE_SELECT").is_none() {
        // SAFETY: the first thing main does, while the process has one thread
        unsafe { std::env::set_var("NODEVICE_SELECT", "1") };
    }
}

/// The command line's definition, as `main` parses it (a recipe's steps are checked by it too).
fn cli_command() -> clap::Command {
    use clap::CommandFactory;
    negative_numbers(Cli::command())
}

fn main() -> ExitCode {
    use clap::FromArgMatches;
    quiet_vulkan_layers();
    let parsed = cli_command().try_get_matches().and_then(|mut matches| Cli::from_arg_matches_mut(&mut matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let (role, _mpi) = match ranks::start() {
        Ok(started) => started,
        Err(e) if e.is::<ranks::Quiet>() => return ExitCode::from(2),
        Err(e) => {
            eprintln!("erode: error: {}", one_line(&e));
            return ExitCode::from(2);
        }
    };
    let over_ranks = matches!(&cli.command, Command::Simulate(a) if cmd::simulate::runs_over_ranks(a));
    match role {
        ranks::Role::Alone => {}
        ranks::Role::Follow(_) if !over_ranks => return ExitCode::from(2),
        ranks::Role::Follow(ex) => {
            let rank = ex.rank();
            // a first signal is rank 0's to act on (it stops the run at its next batch and
            // writes a checkpoint with every rank's rows): this rank goes on following it, and
            // stops at once on a second
            interrupt::install();
            interrupt::cooperate();
            let followed = match &cli.command {
                Command::Simulate(a) => cmd::simulate::rank_pool(a)
                    .map_err(|e| erode::SimError::from(erode::models::grid::blocks::BlockError::Message(e.to_string())))
                    .and_then(|pool| {
                        // rank 0 tells the others to write their rows of the outputs; it reports
                        // every rank's failure, each rank why it failed
                        let mut task = |bytes: &[u8], block: &erode::models::grid::blocks::Block| {
                            if let Err(e) = erode_io::run::write_owned_rows(bytes, block, None) {
                                eprintln!("erode: error: rank {rank}: {}", one_line(&anyhow::Error::new(e)));
                            }
                        };
                        // a start from every rank's own rows asks this one to read its rows
                        let mut read = cmd::simulate::read_rows;
                        pool.install(|| erode::models::grid::blocks::follow(ex.clone(), &mut read, &mut task))
                    }),
                _ => Ok(()),
            };
            return match followed {
                // the status rank 0 ends the run with, whether it failed there or here
                Ok(()) => ExitCode::from(ranks::finished(&*ex)),
                Err(e) => {
                    eprintln!("erode: error: rank {rank}: {e}");
                    ExitCode::from(2)
                }
            };
        }
        ranks::Role::Lead if !over_ranks => {
            eprintln!(
                "erode: error: only `erode simulate grid` (without --tiles) runs over MPI ranks: run this command as one process, without mpirun"
            );
            return ExitCode::from(2);
        }
        ranks::Role::Lead => {}
    }
    interrupt::install();
    let result = match cli.command {
        Command::Generate(a) => cmd::generate::run(a),
        Command::Info(a) => cmd::info::run(a),
        Command::GpuInfo(a) => cmd::gpu_info::run(a),
        Command::Bench(a) => cmd::bench::run(a),
        Command::Convert(a) => cmd::convert::run(a),
        Command::Render(a) => cmd::render::run(a),
        Command::Resample(a) => cmd::resample::run(a),
        Command::Crop(a) => cmd::crop::run(a),
        Command::Mesh(a) => cmd::mesh::run(a),
        Command::Masks(a) => cmd::masks::run(a),
        Command::Rescale(a) => cmd::rescale::run(a),
        Command::Analyze(a) => cmd::analyze::run(a),
        Command::Params(a) => cmd::params::run(a),
        Command::Simulate(a) => cmd::simulate::run(*a, cli.quiet),
        Command::Amplify(a) => cmd::amplify::run(a, cli.quiet),
        Command::Run(a) => cmd::run::run(a, cli.quiet),
        Command::Demo(a) => cmd::demo::run(a, cli.quiet),
        Command::View(a) => cmd::view::run(a),
    };
    // rank 0 that stopped before handing out the blocks lets the others go
    ranks::stop_unstarted();
    let code = match result {
        Ok(()) => 0,
        Err(e)
            if matches!(e.downcast_ref(), Some(erode_io::run::RunError::Interrupted { .. }))
                || e.downcast_ref::<cmd::run::Stopped>().is_some() =>
        {
            eprintln!("erode: {e}");
            130
        }
        Err(e) => {
            eprintln!("erode: error: {}", short_digits(&one_line(&e)));
            2
        }
    };
    // the other ranks end with rank 0's status
    ranks::finish(code);
    ExitCode::from(code)
}
