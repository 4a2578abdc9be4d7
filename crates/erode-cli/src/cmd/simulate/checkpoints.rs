//! A run's checkpoint files: `OUTDIR/checkpoints/<model>-<count>.ckpt`, written atomically, the
//! two newest kept.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

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
pub fn write(dir: &Path, model: &str, count: u64, bytes: &[u8]) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let path = dir.join(format!("{model}-{count:012}.ckpt"));
    erode_io::write_atomic(&path, bytes)?;
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
    /// The newest checkpoint of `model` in `dir`.
    pub fn read(dir: &Path, model: &str) -> anyhow::Result<Self> {
        let mut all = all(dir, model);
        let Some((_, path)) = all.pop() else {
            bail!("{}: no checkpoint to resume from", dir.display());
        };
        let bytes = std::fs::read(&path).with_context(|| format!("{}: cannot read", path.display()))?;
        Ok(Self { bytes, path, older: all.pop().map(|(_, p)| p) })
    }

    /// The context of an error reading it: its path, and the older one to fall back on.
    pub fn unreadable(&self) -> String {
        match &self.older {
            Some(older) => format!(
                "{} (an older checkpoint, {}, may be intact: remove this one to resume from it)",
                self.path.display(),
                older.display()
            ),
            None => self.path.display().to_string(),
        }
    }
}
