//! Which input a run's checkpoints belong to: a fresh run writes a hash of its input (heights and
//! nodata mask, or the mesh file, or the scene's name) beside its checkpoints; `--resume` refuses
//! an input whose hash differs, instead of carrying the old terrain on under a new name.

use std::path::Path;

use anyhow::{Context, bail};
use erode::checkpoint::fnv1a64;

/// File name of the stamp in the checkpoint folder.
const NAME: &str = "input.fnv1a64";

/// The hash of a heightmap: its cells' bits, its nodata mask and its size.
pub fn of_heightmap(map: &erode::Heightmap) -> u64 {
    let g = &map.heights;
    let mut bytes = Vec::with_capacity(g.len() * 4 + 16);
    bytes.extend((g.width() as u64).to_le_bytes());
    bytes.extend((g.height() as u64).to_le_bytes());
    for (i, h) in g.as_slice().iter().enumerate() {
        // nodata cells hold a placeholder: the mask alone says what they are
        let v = if map.is_nodata(i) { f32::NAN } else { *h };
        bytes.extend(v.to_bits().to_le_bytes());
    }
    fnv1a64(&bytes)
}

/// The hash of some bytes (a mesh file, a scene's name).
pub fn of_bytes(bytes: &[u8]) -> u64 {
    fnv1a64(bytes)
}

/// Records that the checkpoints in `dir` come from the input of hash `hash`.
pub fn write(dir: &Path, hash: u64) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    erode_io::write_atomic(&dir.join(NAME), format!("{hash:016x}\n").as_bytes())?;
    Ok(())
}

/// Refuses to resume the checkpoints in `dir` from `input` when they were made from another
/// input. Checkpoints written before stamps existed carry none and are taken as they are.
pub fn check(dir: &Path, hash: u64, input: &str) -> anyhow::Result<()> {
    let Ok(text) = std::fs::read_to_string(dir.join(NAME)) else { return Ok(()) };
    if u64::from_str_radix(text.trim(), 16).ok() != Some(hash) {
        bail!(
            "{input}: not the input the checkpoints in {} were made from (its contents differ); give that input, \
             or start afresh without --resume",
            dir.display()
        );
    }
    Ok(())
}
