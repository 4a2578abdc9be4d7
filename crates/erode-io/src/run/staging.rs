//! An output set written as a whole, and the output folder it goes into.

use std::path::{Path, PathBuf};

use crate::Error;

/// Prefix of the folder an output set is written into before it moves into place.
const STAGING_PREFIX: &str = ".erode-staging-";
/// Prefix of [`crate::write_atomic`]'s temporary files.
pub(crate) const TEMPORARY_PREFIX: &str = ".erode-tmp-";

/// Makes the output folder `dir` (call it once every check has passed, so a refused run leaves
/// none), checks that files can be made in it and removes what a killed run left there.
pub fn create_output_folder(dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    crate::check_output(&dir.join("report.json"))?;
    remove_stale_temporaries(dir);
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
}

impl Staging {
    /// A fresh staging folder in `out`.
    pub fn new(out: &Path) -> Result<Self, Error> {
        let dir = out.join(format!("{STAGING_PREFIX}{}", std::process::id()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        }
        std::fs::create_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        Ok(Self { dir, out: out.to_path_buf() })
    }

    /// Where the set's files are written.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Moves the set into the output folder, `report.json` last.
    pub fn commit(self) -> Result<(), Error> {
        let report = self.out.join("report.json");
        if report.exists() {
            std::fs::remove_file(&report).map_err(|e| Error::io(&report, e))?;
        }
        let mut names: Vec<std::ffi::OsString> = std::fs::read_dir(&self.dir)
            .and_then(|d| d.map(|e| e.map(|e| e.file_name())).collect())
            .map_err(|e| Error::io(&self.dir, e))?;
        // report.json sorts last of all: the set is complete when it appears
        names.sort_by_key(|n| (n == "report.json", n.clone()));
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
