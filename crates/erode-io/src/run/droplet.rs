//! What a droplet-model run writes: its maps, a preview with the flow, the report's fields.

use std::path::Path;

use erode::contract::{DropletRun, Model};
use erode::models::droplet;
use serde_json::{Map, Value, json};

use super::{Front, RunError, Watch};
use crate::outputs::{MapOutputs, note_nodata};
use crate::{Format, Loaded};

/// The droplet model's part of a run on the heightmap `input`.
pub struct DropletFront {
    input: Loaded,
    outputs: MapOutputs,
    preset: String,
}

impl DropletFront {
    /// The outputs of a run started from preset `preset` on `input`, in `formats`.
    pub fn new(input: Loaded, formats: Vec<Format>, preset: &str) -> Self {
        Self { input, outputs: MapOutputs { formats, overlay: "flow", log_overlay: false }, preset: preset.into() }
    }
}

impl Front<DropletRun> for DropletFront {
    fn begin(&mut self, model: &DropletRun, _out: &Path, _fresh: bool, watch: &dyn Watch) -> Result<(), RunError> {
        note_nodata(&self.input.map, model.params().nodata_border == droplet::NodataBorder::Open, watch);
        Ok(())
    }
    fn write_outputs(&self, model: &DropletRun, dir: &Path) -> Result<(), RunError> {
        Ok(self.outputs.write(dir, &self.input, model.maps())?)
    }
    fn file_names(&self, model: &DropletRun) -> Vec<String> {
        self.outputs.file_names(erode::contract::Model::maps(model).iter().map(|(n, _)| *n))
    }
    fn preset(&self) -> Option<&str> {
        Some(&self.preset)
    }
    fn params(&self, model: &DropletRun) -> Value {
        json!(model.params())
    }
    fn heightmap(&self) -> Option<&erode::Heightmap> {
        Some(&self.input.map)
    }
    fn details(&self, model: &DropletRun) -> Map<String, Value> {
        Map::from_iter([
            ("parallel_bands".to_string(), json!(model.parallel_bands())),
            // the books in whole quanta, as the model keeps them (exact: they balance to 0)
            ("books_quanta".to_string(), json!(model.state().books)),
        ])
    }
}
