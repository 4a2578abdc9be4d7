//! Ctrl-C (SIGINT), SIGTERM, SIGHUP and (on Unix) SIGUSR1, which Open MPI's `mpirun` passes
//! on to every rank and Slurm's `--signal` sends ahead of a job's time limit. Every command
//! stops at once: the temporaries the process holds
//! (an atomic write's file, a staging folder, the output folder's lock, a folder it made and
//! left empty) are removed first, a set being moved into place is let finish, and the process
//! exits with status 130, leaving nothing partial.
//!
//! A simulation's run loop asks for more ([`cooperate`]): there the first signal stops the run at
//! the end of the batch it is in, writes a checkpoint (a write in progress always finishes) and
//! exits with status 130, leaving no output set; `--resume` then goes on as if never stopped. A
//! second signal stops it at once, as above.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);
static COOPERATING: AtomicBool = AtomicBool::new(false);
/// The erode processes this one runs (`erode run`'s steps), which a signal reaches through it.
static CHILDREN: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// Catches SIGINT, SIGTERM, SIGHUP and SIGUSR1 for the rest of the process (a no-op for those
/// it cannot).
pub fn install() {
    let _ = ctrlc::set_handler(on_signal);
    #[cfg(unix)]
    if let Ok(mut usr1) = signal_hook::iterator::Signals::new([signal_hook::consts::SIGUSR1]) {
        std::thread::spawn(move || usr1.forever().for_each(|_| on_signal()));
    }
}

/// A signal came: the run asked to stop at its next batch, or, for a second signal or outside a
/// run, the process stopped at once.
fn on_signal() {
    if COOPERATING.load(Ordering::SeqCst) && !REQUESTED.swap(true, Ordering::SeqCst) {
        return;
    }
    // a second signal: the steps running stop at once too
    if let Ok(children) = CHILDREN.lock() {
        for &pid in children.iter() {
            signal(pid);
        }
    }
    erode_io::remove_temporaries_then(|| {
        eprintln!("erode: interrupted: stopped at once, nothing partial left");
        std::process::exit(130)
    });
}

/// From now on a signal asks the run to stop at its next batch ([`requested`]) instead of
/// stopping the process at once.
pub fn cooperate() {
    COOPERATING.store(true, Ordering::SeqCst);
}

/// Whether a signal asked the run to stop.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// Process `pid` runs for this one (a recipe's step in a process group of its own, which a
/// terminal's Ctrl-C does not reach): the first signal is passed to it by its runner (see
/// [`signal`]), a second one here.
pub fn adopt(pid: u32) {
    if let Ok(mut c) = CHILDREN.lock() {
        c.push(pid);
    }
}

/// Process `pid` has ended.
pub fn release(pid: u32) {
    if let Ok(mut c) = CHILDREN.lock() {
        c.retain(|&p| p != pid);
    }
}

/// Sends SIGINT to process `pid` (through `kill`, as a process of its own): a recipe's step then
/// stops as a command run by hand does on Ctrl-C.
pub fn signal(pid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}
