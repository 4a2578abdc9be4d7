//! A run's checkpoint files: `OUTDIR/checkpoints/<model>-<count>.ckpt`, written atomically, the
//! two newest kept.

use std::path::{Path, PathBuf};

use super::RunError;
use crate::Error;

/// The checkpoint folder of an output folder.
pub fn folder(out: &Path) -> PathBuf {
    out.join("checkpoints")
}

/// Checkpoint files of `model` in `dir` with their counts, oldest first.
fn all(dir: &Path, model: &str) -> Vec<(u64, PathBuf)> {
    let prefix = format!("{model}-");
    let mut v: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            let name = p.file_name()?.to_str()?;
            let count = name.strip_prefix(&prefix)?.strip_suffix(".ckpt")?.parse().ok()?;
            Some((count, p))
        })
        .collect();
    v.sort();
    v
}

/// Writes `bytes` as `model`'s checkpoint at `count` in `dir`, atomically, keeping the two newest
/// (the new one and the one before, in case the new one is damaged later).
pub fn write(dir: &Path, model: &str, count: u64, bytes: &[u8]) -> Result<PathBuf, Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let path = dir.join(format!("{model}-{count:012}.ckpt"));
    crate::write_atomic(&path, bytes)?;
    let all = all(dir, model);
    for (_, old) in all.iter().take(all.len().saturating_sub(2)) {
        let _ = std::fs::remove_file(old);
    }
    Ok(path)
}

/// The newest checkpoint of a model, read to resume from.
pub struct Newest {
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Its file.
    pub path: PathBuf,
    /// An older one beside it.
    older: Option<PathBuf>,
}

impl Newest {
    /// The newest checkpoint of `model` in the checkpoint folder of output folder `out`.
    pub fn read(out: &Path, model: &str) -> Result<Self, RunError> {
        let dir = folder(out);
        let mut all = all(&dir, model);
        let Some((_, path)) = all.pop() else { return Err(RunError::NoCheckpoint { folder: dir }) };
        let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        Ok(Self { bytes, path, older: all.pop().map(|(_, p)| p) })
    }

    /// The model `resume` makes of these bytes; an error names this file and the older one to
    /// fall back on.
    pub fn resume<M>(&self, resume: impl FnOnce(&[u8]) -> Result<M, erode::SimError>) -> Result<M, RunError> {
        resume(&self.bytes).map_err(|source| RunError::Unreadable {
            path: self.path.clone(),
            older: self.older.clone(),
            source,
        })
    }
}
