//! Atomic output: a file appears complete or not at all.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::temporaries::{self, Kind};

/// The folder a file will be written into (`.` for a bare file name).
fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Refuses an output `path` that is the file `input` (the same file under any name): writing it
/// would replace what is being read.
pub fn check_not_input(path: &Path, input: &Path) -> Result<(), Error> {
    let (Ok(input), Ok(folder)) = (input.canonicalize(), parent_of(path).canonicalize()) else { return Ok(()) };
    let same = path.file_name().is_some_and(|name| folder.join(name) == input)
        || path.canonicalize().is_ok_and(|p| p == input);
    if same {
        return Err(Error::Output {
            path: path.to_path_buf(),
            reason: "it is the input file: choose another output name".into(),
        });
    }
    Ok(())
}

/// Checks, before any long work, that `path` can be written: its folder exists, is a folder, and
/// accepts a new file; `path` itself is not a folder.
pub fn check_output(path: &Path) -> Result<(), Error> {
    let out = |reason: String| Error::Output { path: path.to_path_buf(), reason };
    if path.is_dir() {
        return Err(out("it is a folder".into()));
    }
    let dir = parent_of(path);
    if !dir.exists() {
        return Err(out(format!("folder {} does not exist", dir.display())));
    }
    if !dir.is_dir() {
        return Err(out(format!("{} is not a folder", dir.display())));
    }
    let probe = || tempfile::Builder::new().prefix(crate::run::TEMPORARY_PREFIX).tempfile_in(&dir);
    temporaries::make(Kind::File, probe, |t| t.path().to_path_buf())
        .map(drop)
        .map_err(|e| out(format!("cannot create files in {}: {e}", dir.display())))
}

/// Writes `bytes` to `path` atomically: into a temporary file in the same folder, synced, then
/// renamed over `path`. On any failure the temporary file is removed and `path` is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// [`write_atomic`] of what `write` writes, piece by piece (nothing of it held whole).
pub fn write_atomic_with(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<(), Error> {
    let mut tmp = Temporary::new(path)?;
    {
        let mut buffered = std::io::BufWriter::with_capacity(1 << 20, tmp.file.as_file_mut());
        write(&mut buffered).map_err(|e| io_error(path, e))?;
        buffered.flush().map_err(|e| io_error(path, e))?;
    }
    tmp.persist()
}

/// A temporary file in the folder of `path` that becomes `path` when [`Temporary::persist`]ed
/// and is removed if dropped first (or if the process must stop at once).
pub(crate) struct Temporary {
    file: tempfile::NamedTempFile,
    path: PathBuf,
    _held: temporaries::Held,
}

impl Temporary {
    pub(crate) fn new(path: &Path) -> Result<Self, Error> {
        let dir = parent_of(path);
        let create = || tempfile::Builder::new().prefix(crate::run::TEMPORARY_PREFIX).tempfile_in(&dir);
        let (file, held) =
            temporaries::make(Kind::File, create, |t| t.path().to_path_buf()).map_err(|e| io_error(path, e))?;
        Ok(Self { file, path: path.to_path_buf(), _held: held })
    }

    /// The temporary file's own path.
    pub(crate) fn path(&self) -> &Path {
        self.file.path()
    }

    fn error(&self, e: std::io::Error) -> Error {
        io_error(&self.path, e)
    }

    /// Syncs the file and renames it over its path.
    pub(crate) fn persist(self) -> Result<(), Error> {
        // tempfile creates 0600; an output is an ordinary file (0644 less the umask would need libc)
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            self.file.as_file().set_permissions(std::fs::Permissions::from_mode(0o644)).map_err(|e| self.error(e))?;
        }
        self.file.as_file().sync_all().map_err(|e| self.error(e))?;
        let path = self.path.clone();
        temporaries::settle(|| self.file.persist(&path)).map_err(|e| io_error(&path, e.error))?;
        Ok(())
    }
}

/// The error of the file as the user will find it: tempfile's errors name the temporary
/// (tempfile appends ` at path <temporary>` to the system's message).
fn io_error(path: &Path, e: std::io::Error) -> Error {
    let text = e.to_string();
    let plain = text.split(" at path ").next().unwrap_or(&text).to_string();
    Error::io(path, std::io::Error::new(e.kind(), plain))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_missing_folder_and_path_under_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain");
        std::fs::write(&file, b"x").unwrap();
        assert!(check_output(&dir.path().join("missing/out.png")).is_err());
        assert!(check_output(&file.join("out.png")).is_err());
        assert!(check_output(dir.path()).is_err());
        assert!(check_output(&dir.path().join("ok.png")).is_ok());
        assert!(write_atomic(&file.join("out.png"), b"data").is_err());
        // nothing but the plain file is left behind
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn replaces_existing_file_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.bin");
        write_atomic(&p, b"first").unwrap();
        write_atomic(&p, b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
