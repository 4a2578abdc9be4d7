//! Ctrl-C (SIGINT) and SIGTERM end a simulation cleanly: the run stops at the end of the batch
//! it is in, writes a checkpoint (a write in progress always finishes) and exits with status 130,
//! leaving no output set and no temporary file; `--resume` then goes on as if never stopped. A
//! second signal exits at once (temporaries it leaves are removed by the next run in that
//! folder).

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Catches SIGINT and SIGTERM for the rest of the process (a no-op if it cannot).
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if REQUESTED.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
}

/// Whether a signal asked the run to stop.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}
