//! What a droplet-model run writes: its maps, a preview with the flow, the report's fields.

use std::path::Path;

use erode::contract::DropletRun;
use erode::models::droplet;
use serde_json::{Map, Value, json};

use super::{Front, MapSet, RunError, Watch};
use crate::outputs::{MapOutputs, Wanted, note_nodata};
use crate::{Format, Loaded};

/// The droplet model's part of a run on the heightmap `input`.
pub struct DropletFront {
    set: MapSet,
}

impl DropletFront {
    /// The outputs of a run started from preset `preset` on `input`: the maps `wanted`, in `formats`.
    pub fn new(input: Loaded, formats: Vec<Format>, wanted: Wanted, preset: &str) -> Self {
        let outputs = MapOutputs { formats, wanted, overlay: "flow", log_overlay: false };
        Self { set: MapSet { input: input.into(), outputs, preset: preset.into() } }
    }
}

impl Front<DropletRun> for DropletFront {
    fn begin(&mut self, model: &DropletRun, _out: &Path, _fresh: bool, watch: &dyn Watch) -> Result<(), RunError> {
        note_nodata(&self.set.input, model.params().nodata_border == droplet::NodataBorder::Open, watch);
        Ok(())
    }
    fn map_set(&self) -> Option<&MapSet> {
        Some(&self.set)
    }
    fn params(&self, model: &DropletRun) -> Value {
        json!(model.params())
    }
    fn details(&self, model: &DropletRun) -> Map<String, Value> {
        Map::from_iter([
            ("parallel_bands".to_string(), json!(model.parallel_bands())),
            // the books in whole quanta, as the model keeps them (exact: they balance to 0)
            ("books_quanta".to_string(), json!(model.state().books)),
        ])
    }
}
