//! Progress bars: shown on a terminal; elsewhere (a batch job's log) a plain line a minute;
//! nothing with `--quiet`.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

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
    /// Where stderr is no terminal: the lines said so far.
    lines: std::sync::OnceLock<Lines>,
    quiet: bool,
    /// Ctrl-C asks the run to stop at its next batch, with a checkpoint to resume from; else it
    /// stops the command at once, as every command that cannot be resumed.
    resumable: bool,
}

impl RunWatch {
    /// A watch that shows nothing but errors when `quiet`.
    pub fn new(quiet: bool) -> Self {
        Self { bar: std::sync::OnceLock::new(), lines: std::sync::OnceLock::new(), quiet, resumable: true }
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
        if !self.quiet && !std::io::stderr().is_terminal() {
            let now = Instant::now();
            let _ = self.lines.set(Lines { model, label, total, from: at, start: now, last: Mutex::new(now) });
        }
    }
    fn progress(&self, at: u64) {
        if let Some(b) = self.bar.get() {
            b.set_position(at);
        }
        if let Some(lines) = &self.lines.get() {
            lines.progress(at);
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

/// Progress as plain lines where stderr is no terminal (a Slurm job's log, a redirect): one
/// every [`Lines::EVERY`] at most, with the rate and the time left at that rate.
struct Lines {
    model: &'static str,
    label: &'static str,
    total: u64,
    /// Where the run started (a resumed run's rate counts this run's steps only).
    from: u64,
    start: Instant,
    last: Mutex<Instant>,
}

impl Lines {
    const EVERY: Duration = Duration::from_secs(60);

    fn progress(&self, at: u64) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if last.elapsed() < Self::EVERY {
            return;
        }
        *last = Instant::now();
        let seconds = self.start.elapsed().as_secs_f64();
        let rate = at.saturating_sub(self.from) as f64 / seconds.max(1e-9);
        let left = if rate > 0.0 {
            format!(", about {} left", clock(self.total.saturating_sub(at) as f64 / rate))
        } else {
            String::new()
        };
        eprintln!(
            "erode: {} {at}/{} {} ({:.1} %), {rate:.3} {}/s after {}{left}",
            self.model,
            self.total,
            self.label,
            100.0 * at as f64 / self.total.max(1) as f64,
            self.label,
            clock(seconds)
        );
    }
}

/// `seconds` as hours, minutes and seconds ("1 h 02 min", "3 min 05 s", "42 s").
fn clock(seconds: f64) -> String {
    let s = seconds.round().max(0.0) as u64;
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s} s"),
        (0, m, s) => format!("{m} min {s:02} s"),
        (h, m, _) => format!("{h} h {m:02} min"),
    }
}

#[cfg(test)]
mod tests {
    use super::clock;

    #[test]
    fn times_left_read_as_hours_minutes_and_seconds() {
        assert_eq!(clock(42.4), "42 s");
        assert_eq!(clock(185.0), "3 min 05 s");
        assert_eq!(clock(3720.0), "1 h 02 min");
    }
}
