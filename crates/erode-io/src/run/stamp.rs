//! Which input a run's checkpoints belong to: a fresh run writes a hash of its input (heights and
//! nodata mask, or the mesh file, or the scene's name) beside its checkpoints; a resumed run
//! refuses an input whose hash differs, instead of carrying the old terrain on under a new name.

use std::path::Path;

use erode::checkpoint::fnv1a64;

use super::RunError;
use crate::Error;

/// File name of the stamp in the checkpoint folder.
const NAME: &str = "input.fnv1a64";

/// Which input a run's checkpoints belong to.
#[derive(Clone, Debug)]
pub struct Stamp {
    /// The input's hash.
    pub hash: u64,
    /// The input as the user named it.
    pub input: String,
}

impl Stamp {
    /// The stamp of a heightmap named `input`: its cells' bits, its nodata mask and its size.
    pub fn of_heightmap(map: &erode::Heightmap, input: impl Into<String>) -> Self {
        let g = &map.heights;
        let mut bytes = Vec::with_capacity(g.len() * 4 + 16);
        bytes.extend((g.width() as u64).to_le_bytes());
        bytes.extend((g.height() as u64).to_le_bytes());
        for (i, h) in g.as_slice().iter().enumerate() {
            // nodata cells hold a placeholder: the mask alone says what they are
            let v = if map.is_nodata(i) { f32::NAN } else { *h };
            bytes.extend(v.to_bits().to_le_bytes());
        }
        Self { hash: fnv1a64(&bytes), input: input.into() }
    }

    /// The stamp of an input named `input` whose contents are `bytes` (a mesh file, a scene's
    /// name).
    pub fn of_bytes(bytes: &[u8], input: impl Into<String>) -> Self {
        Self { hash: fnv1a64(bytes), input: input.into() }
    }

    /// Records that the checkpoints in `dir` come from this input.
    pub(crate) fn write(&self, dir: &Path) -> Result<(), Error> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        crate::write_atomic(&dir.join(NAME), format!("{:016x}\n", self.hash).as_bytes())
    }

    /// Refuses to resume the checkpoints in `dir` when they were made from another input.
    /// Checkpoints written before stamps existed carry none and are taken as they are.
    pub(crate) fn check(&self, dir: &Path) -> Result<(), RunError> {
        let Ok(text) = std::fs::read_to_string(dir.join(NAME)) else { return Ok(()) };
        if u64::from_str_radix(text.trim(), 16).ok() != Some(self.hash) {
            return Err(RunError::OtherInput { input: self.input.clone(), folder: dir.to_path_buf() });
        }
        Ok(())
    }
}
