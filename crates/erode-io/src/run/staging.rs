//! An output set written as a whole, and the output folder it goes into.

use std::path::{Path, PathBuf};

use crate::Error;
use crate::temporaries::{self, Held, Kind};

/// Prefix of the folder an output set is written into before it moves into place.
const STAGING_PREFIX: &str = ".erode-staging-";
/// Prefix of [`crate::write_atomic`]'s temporary files.
pub(crate) const TEMPORARY_PREFIX: &str = ".erode-tmp-";

/// The lock file of an output folder.
const LOCK_NAME: &str = ".erode-lock";

/// Makes the output folder `dir` (call it once every check has passed, so a refused run leaves
/// none), checks that files can be made in it, takes its lock (refused while another run holds
/// it) and removes what a killed run left there. The folder is this run's while the returned
/// lock lives.
pub fn create_output_folder(dir: &Path) -> Result<OutputLock, Error> {
    // a folder made here goes again, if still empty, when the process must stop at once
    let made = if dir.is_dir() {
        None
    } else {
        let create = || std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e));
        Some(temporaries::make(Kind::EmptyFolder, create, |_| dir.to_path_buf())?.1)
    };
    crate::check_output(&dir.join("report.json"))?;
    let mut lock = OutputLock::take(dir)?;
    lock.made = made;
    // no other run is in the folder: what temporaries it holds are a killed run's
    remove_stale_temporaries(dir);
    Ok(lock)
}

/// An output folder's lock: `.erode-lock`, locked by the operating system (an advisory lock the
/// system lets go of when the process ends, however it ends) and holding the process id and
/// command line of the run that holds it, for the message of a run refused there. Dropped, it
/// removes the file, then lets go.
pub struct OutputLock {
    file: std::fs::File,
    path: PathBuf,
    /// The lock file on the list of temporaries.
    _held: Held,
    /// The output folder, if this run made it.
    made: Option<Held>,
}

impl OutputLock {
    /// Takes the lock of output folder `dir` (which exists), or says who holds it.
    pub fn take(dir: &Path) -> Result<Self, Error> {
        use std::io::{Read, Seek, Write};
        let path = dir.join(LOCK_NAME);
        let io = |e: std::io::Error| Error::io(&path, e);
        // a run ending removes the file before it lets go: a lock taken on the file it removed
        // is no lock, and the file is opened again
        for _ in 0..100 {
            let open = || std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path);
            let (mut file, held) = temporaries::make(Kind::File, open, |_| path.clone()).map_err(io)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    // another run's file: not this process's to remove
                    drop(held);
                    let mut holder = String::new();
                    let _ = file.read_to_string(&mut holder);
                    let holder = holder.trim();
                    let holder = if holder.is_empty() { "another run".to_string() } else { holder.to_string() };
                    return Err(Error::Output {
                        path: dir.to_path_buf(),
                        reason: format!(
                            "the output folder is in use by {holder}; wait for it to end or choose another folder"
                        ),
                    });
                }
                // a file system without locks (some network and FUSE ones): the run goes on
                // unlocked rather than not at all
                Err(std::fs::TryLockError::Error(e)) if e.kind() == std::io::ErrorKind::Unsupported => {}
                Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
            }
            if !same_file(&file, &path) {
                continue;
            }
            let command: Vec<String> = std::env::args().collect();
            let text = format!("process {} ({})\n", std::process::id(), command.join(" "));
            file.set_len(0).map_err(io)?;
            file.rewind().map_err(io)?;
            file.write_all(text.as_bytes()).map_err(io)?;
            return Ok(Self { file, path, _held: held, made: None });
        }
        Err(io(std::io::Error::other("the lock file keeps being replaced")))
    }
}

/// Whether the open `file` is the one at `path` now.
#[cfg(unix)]
fn same_file(file: &std::fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &std::fs::File, path: &Path) -> bool {
    path.exists()
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

/// Refuses a run whose output set would replace one of its `inputs`: an input (under any name: a
/// link, `..`) that is the file `out/<name>` for a `name` in `names`, the files the run writes
/// there. Call it before the run; the set replaces those files only at its end.
/// The names are asked for only when an input lies in the output folder.
pub fn check_inputs_kept(
    out: &Path,
    inputs: &[std::path::PathBuf],
    names: impl FnOnce() -> Vec<String>,
) -> Result<(), Error> {
    let Ok(folder) = out.canonicalize() else { return Ok(()) };
    let inside: Vec<(&std::path::PathBuf, std::path::PathBuf)> = inputs
        .iter()
        .filter_map(|i| i.canonicalize().ok().map(|real| (i, real)))
        .filter(|(_, real)| real.parent() == Some(folder.as_path()))
        .collect();
    if inside.is_empty() {
        return Ok(());
    }
    let names = names();
    for (input, real) in inside {
        if let Some(name) = names.iter().find(|n| real.file_name().is_some_and(|f| f == n.as_str())) {
            return Err(Error::Output {
                path: out.join(name),
                reason: format!(
                    "it is the input {}, which this run's outputs would replace: write to another folder, or go \
                     on with the run that made it (--resume with a larger count)",
                    input.display()
                ),
            });
        }
    }
    Ok(())
}

/// An output set written as a whole: every file goes into a staging folder inside the output
/// folder; [`Staging::commit`] then removes the old `report.json`, moves the files into place
/// and moves `report.json` last. So a folder with a `report.json` holds a complete set, and a
/// run that fails or is stopped before the commit leaves the previous set as it was (dropping
/// the staging folder removes it).
pub struct Staging {
    dir: PathBuf,
    out: PathBuf,
    /// The staging folder on the list of temporaries.
    _held: Held,
}

impl Staging {
    /// A fresh staging folder in `out`.
    pub fn new(out: &Path) -> Result<Self, Error> {
        let dir = out.join(format!("{STAGING_PREFIX}{}", std::process::id()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        }
        let create = || std::fs::create_dir(&dir).map_err(|e| Error::io(&dir, e));
        let ((), held) = temporaries::make(Kind::Tree, create, |_| dir.clone())?;
        Ok(Self { dir, out: out.to_path_buf(), _held: held })
    }

    /// Where the set's files are written.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// `e` naming the file it will be in the output folder instead of the staging folder's copy
    /// (the user never sees the staging folder).
    pub fn as_placed(&self, e: Error) -> Error {
        let place = |p: PathBuf| p.strip_prefix(&self.dir).map_or(p.clone(), |rest| self.out.join(rest));
        match e {
            Error::Io { path, source } => Error::Io { path: place(path), source },
            Error::Format { path, source } => Error::Format { path: place(path), source },
            Error::Output { path, reason } => Error::Output { path: place(path), reason },
            Error::UnknownFormat { path } => Error::UnknownFormat { path: place(path) },
        }
    }

    /// The names of the files written into the staging folder so far.
    pub fn names(&self) -> Result<Vec<String>, Error> {
        let mut names: Vec<String> = std::fs::read_dir(&self.dir)
            .and_then(|d| d.map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned())).collect())
            .map_err(|e| Error::io(&self.dir, e))?;
        names.sort();
        Ok(names)
    }

    /// Moves the set into the output folder, `report.json` last. The files of the set before
    /// (the `files` its `report.json` lists) that this set does not have are removed, so the
    /// folder holds one set; none of `keep` (the run's inputs) is.
    pub fn commit(self, keep: &[PathBuf]) -> Result<(), Error> {
        // whole: a stop at once waits for the set to be in place
        temporaries::settle(|| self.move_into_place(keep))
    }

    fn move_into_place(&self, keep: &[PathBuf]) -> Result<(), Error> {
        let report = self.out.join("report.json");
        let before: Vec<String> = std::fs::read(&report)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v.get("files").cloned())
            .and_then(|f| serde_json::from_value(f).ok())
            .unwrap_or_default();
        if report.exists() {
            std::fs::remove_file(&report).map_err(|e| Error::io(&report, e))?;
        }
        let mut names = self.names()?;
        // report.json sorts last of all: the set is complete when it appears
        names.sort_by_key(|n| (n == "report.json", n.clone()));
        let kept: Vec<PathBuf> = keep.iter().filter_map(|k| k.canonicalize().ok()).collect();
        for old in before.iter().filter(|o| !names.contains(o)) {
            // a name only, never a path out of the folder
            if old.contains(['/', '\\']) || old == ".." || old == "." {
                continue;
            }
            let path = self.out.join(old);
            if path.canonicalize().is_ok_and(|p| kept.contains(&p)) {
                continue;
            }
            let _ = std::fs::remove_file(&path);
        }
        for name in names {
            let to = self.out.join(&name);
            std::fs::rename(self.dir.join(&name), &to)
                .map_err(|e| Error::Output { path: to.clone(), reason: format!("cannot move into place: {e}") })?;
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Removes what an earlier run in `out` left when it was killed: staging folders and the
/// temporary files of atomic writes, in `out` and its `checkpoints` folder.
pub fn remove_stale_temporaries(out: &Path) {
    for dir in [out.to_path_buf(), super::checkpoints::folder(out)] {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            if name.starts_with(STAGING_PREFIX) {
                let _ = std::fs::remove_dir_all(&path);
            } else if name.starts_with(TEMPORARY_PREFIX) {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}
