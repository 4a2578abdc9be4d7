//! The temporary files and folders this process holds (an atomic write's file, a staging folder,
//! an output folder's lock, a folder made for a run), so that a front end that must stop at once
//! (a second Ctrl-C) removes them first: a process stopped that way leaves nothing partial.
//!
//! One lock guards the list and every step that makes a held path or moves one into place, so a
//! removal never races a file being made or a set being moved: it waits for the step to end.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// What becomes of a held path when the process must stop at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A file: removed.
    File,
    /// A folder and what it holds: removed.
    Tree,
    /// A folder made for a run: removed if it is empty.
    EmptyFolder,
}

static HELD: Mutex<Vec<(u64, PathBuf, Kind)>> = Mutex::new(Vec::new());
static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn held() -> MutexGuard<'static, Vec<(u64, PathBuf, Kind)>> {
    HELD.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A path on the list while this lives (dropping it takes the path off the list; removing the
/// path itself is its owner's job).
#[derive(Debug)]
pub(crate) struct Held(u64);

impl Drop for Held {
    fn drop(&mut self) {
        held().retain(|(id, ..)| *id != self.0);
    }
}

/// Runs `make` (which creates a path) under the lock and puts the path it made on the list.
pub(crate) fn make<T, E>(
    kind: Kind,
    make: impl FnOnce() -> Result<T, E>,
    path: impl Fn(&T) -> PathBuf,
) -> Result<(T, Held), E> {
    let mut list = held();
    let made = make()?;
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    list.push((id, path(&made), kind));
    Ok((made, Held(id)))
}

/// Runs `step` (which moves held paths into place) under the lock: a removal waits for it.
pub(crate) fn settle<R>(step: impl FnOnce() -> R) -> R {
    let _list = held();
    step()
}

/// Removes every held path, then runs `then` (typically the process's exit) still holding the
/// lock, so nothing new is made or moved in between.
pub fn remove_all_then<R>(then: impl FnOnce() -> R) -> R {
    let list = held();
    for (_, path, kind) in list.iter().rev() {
        remove(path, *kind);
    }
    then()
}

fn remove(path: &Path, kind: Kind) {
    let _ = match kind {
        Kind::File => std::fs::remove_file(path),
        Kind::Tree => std::fs::remove_dir_all(path),
        Kind::EmptyFolder => std::fs::remove_dir(path),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(path: &Path) -> bool {
        held().iter().any(|(_, p, _)| p == path)
    }

    #[test]
    fn lists_what_is_held_and_removes_each_kind() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a");
        let folder = dir.path().join("f");
        let (_, held_file) = make(Kind::File, || std::fs::write(&file, b"x"), |_| file.clone()).unwrap();
        let (_, held_folder) = make(
            Kind::Tree,
            || std::fs::create_dir(&folder).and_then(|_| std::fs::write(folder.join("b"), b"y")),
            |_| folder.clone(),
        )
        .unwrap();
        assert!(listed(&file) && listed(&folder));
        // a failed make lists nothing
        let missing = dir.path().join("no/such");
        assert!(make(Kind::File, || std::fs::write(&missing, b"x"), |_| missing.clone()).is_err());
        assert!(!listed(&missing));
        drop(held_file);
        assert!(!listed(&file) && listed(&folder));
        drop(held_folder);
        remove(&file, Kind::File);
        remove(&folder, Kind::Tree);
        assert!(!file.exists() && !folder.exists());
        // an empty folder goes, a full one stays
        let empty = dir.path().join("e");
        std::fs::create_dir(&empty).unwrap();
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("b"), b"y").unwrap();
        remove(&empty, Kind::EmptyFolder);
        remove(&folder, Kind::EmptyFolder);
        assert!(!empty.exists() && folder.exists());
    }
}
