//! Progress bars: shown on a terminal, silent otherwise or with `--quiet`.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` steps, hidden when stderr is not a terminal or `quiet` is set.
pub fn bar(len: u64, unit: &str, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let template = format!("{{msg:>12}} [{{bar:40}}] {{pos}}/{{len}} {unit} ({{per_sec}}, eta {{eta}})");
    let style = ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar());
    ProgressBar::new(len).with_style(style.progress_chars("=> "))
}

/// What the user sees of a simulation run: its bar, its notes (unless quiet), and Ctrl-C as a
/// request to stop at the next batch.
pub struct RunWatch {
    bar: std::sync::OnceLock<ProgressBar>,
    quiet: bool,
    /// Ctrl-C asks the run to stop at its next batch, with a checkpoint to resume from; else it
    /// stops the command at once, as every command that cannot be resumed.
    resumable: bool,
}

impl RunWatch {
    /// A watch that shows nothing but errors when `quiet`.
    pub fn new(quiet: bool) -> Self {
        Self { bar: std::sync::OnceLock::new(), quiet, resumable: true }
    }

    /// The same for a run that cannot be resumed: Ctrl-C stops it at once, leaving nothing.
    pub fn at_once(quiet: bool) -> Self {
        Self { resumable: false, ..Self::new(quiet) }
    }
}

impl erode_io::run::Watch for RunWatch {
    fn begin(&self, model: &'static str, total: u64, unit: &'static str, at: u64) {
        // the run loop checks for a stop between batches: a signal now stops it there, with a
        // checkpoint
        if self.resumable {
            crate::interrupt::cooperate();
        }
        let label = match unit {
            "droplet" => "droplets",
            "iteration" => "it",
            other => other,
        };
        let b = bar(total, label, self.quiet);
        b.set_position(at);
        b.set_message(model);
        let _ = self.bar.set(b);
    }
    fn progress(&self, at: u64) {
        if let Some(b) = self.bar.get() {
            b.set_position(at);
        }
    }
    fn note(&self, text: &str) {
        if self.quiet {
            return;
        }
        match self.bar.get() {
            Some(b) => b.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }
    fn stop_requested(&self) -> bool {
        crate::interrupt::requested()
    }
    fn end(&self) {
        if let Some(b) = self.bar.get() {
            b.finish_and_clear();
        }
    }
}
