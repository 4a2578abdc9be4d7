//! Ctrl-C (SIGINT) and SIGTERM. Every command stops at once: the temporaries the process holds
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

/// Catches SIGINT and SIGTERM for the rest of the process (a no-op if it cannot).
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if COOPERATING.load(Ordering::SeqCst) && !REQUESTED.swap(true, Ordering::SeqCst) {
            return;
        }
        erode_io::remove_temporaries_then(|| {
            eprintln!("erode: interrupted: stopped at once, nothing partial left");
            std::process::exit(130)
        });
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
