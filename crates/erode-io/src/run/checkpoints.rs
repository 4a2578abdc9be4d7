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

/// A fresh run's claim on the checkpoint folder `dir`. Checkpoints of `model` there written with
/// the same parameters (`fingerprint`) from the same input (`input`; 0: not recorded) are this
/// run's own, started again: they are removed, as the run writes them anew (kept, the newest of
/// them would outlive the run's own and be what `--resume` takes). Those of another run are
/// refused, or with `force` moved into a `replaced-N` folder beside them. Returns a note for the
/// user when something was removed or moved.
pub fn claim(dir: &Path, model: &str, fingerprint: u64, input: u64, force: bool) -> Result<Option<String>, RunError> {
    let found = all(dir, model);
    let Some((_, newest)) = found.last() else { return Ok(None) };
    let other = found.iter().find_map(|(_, p)| {
        let mut head = [0u8; 28];
        let read = std::fs::File::open(p).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head));
        let word = |k: usize| u64::from_le_bytes(head[k..k + 8].try_into().unwrap_or([0; 8]));
        if read.is_err() {
            Some("unreadable")
        } else if word(12) != fingerprint {
            Some("other parameters")
        } else if input != 0 && word(20) != input {
            Some("another input")
        } else {
            None
        }
    });
    let Some(why) = other else {
        for (_, p) in &found {
            std::fs::remove_file(p).map_err(|e| Error::io(p, e))?;
        }
        return Ok(Some(format!(
            "erode: note: a fresh run: the {} checkpoints of this run before in {} are replaced",
            found.len(),
            dir.display()
        )));
    };
    if !force {
        return Err(RunError::OtherRun { folder: dir.to_path_buf(), newest: newest.clone(), why });
    }
    let aside = (1..).map(|k| dir.join(format!("replaced-{k}"))).find(|p| !p.exists()).unwrap_or(dir.join("replaced"));
    std::fs::create_dir_all(&aside).map_err(|e| Error::io(&aside, e))?;
    for (_, p) in &found {
        let to = aside.join(p.file_name().unwrap_or_default());
        std::fs::rename(p, &to).map_err(|e| Error::io(p, e))?;
    }
    Ok(Some(format!("erode: moved {} checkpoints of another {model} run ({why}) to {}", found.len(), aside.display())))
}
