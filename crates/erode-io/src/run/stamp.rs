//! Which input a run's checkpoints belong to: every checkpoint's header carries the hash of the
//! input its run began from (`erode::checkpoint::Header`); a resumed run refuses an input whose
//! hash differs, instead of carrying the old terrain on under a new name.

use std::path::Path;

use erode::contract::Model;

use super::RunError;

/// Which input a run's checkpoints belong to.
#[derive(Clone, Debug)]
pub struct Stamp {
    /// The input's hash.
    pub hash: u64,
    /// The input as the user named it.
    pub input: String,
}

impl Stamp {
    /// The stamp of a heightmap named `input`: its cells' bits, its nodata mask and its size
    /// (`erode::checkpoint::heightmap_hash`, as the grid and droplet models record it).
    pub fn of_heightmap(map: &erode::Heightmap, input: impl Into<String>) -> Self {
        Self { hash: erode::checkpoint::heightmap_hash(&map.heights, map.nodata_mask()), input: input.into() }
    }

    /// The stamp of this heightmap run with maps: `hash` the model's hash of its inputs (its
    /// `StartMaps::input_hash`), `maps` the options and files of those given, for the message.
    pub fn with_maps<'a>(self, hash: u64, maps: impl IntoIterator<Item = (&'a str, Option<&'a Path>)>) -> Self {
        let mut input = self.input;
        for (option, file) in maps {
            if let Some(file) = file {
                input += &format!(" {option} {}", file.display());
            }
        }
        Self { hash, input }
    }

    /// Refuses `model`, resumed from `checkpoint`, when its run began from another input.
    /// Checkpoints written before they recorded their input are taken as they are.
    pub(crate) fn check(&self, model: &impl Model, checkpoint: &Path) -> Result<(), RunError> {
        let recorded = model.input_hash();
        if recorded != 0 && recorded != self.hash {
            return Err(RunError::OtherInput { input: self.input.clone(), checkpoint: checkpoint.to_path_buf() });
        }
        Ok(())
    }
}
