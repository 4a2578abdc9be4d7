//! What the run of a model made from the models' list writes (see [`erode::models::make`]):
//! its maps, a preview, the parameters it was made from. Such a model has no front of its own.

use erode::contract::Model;
use erode::models::make::Table;
use serde_json::{Map, Value};

use super::{Front, MapSet};
use crate::outputs::{MapOutputs, Wanted};
use crate::{Format, Loaded};

/// The part of a run on the heightmap `input` that a model made from the list leaves to its
/// front: the maps and their preview, and the parameters.
pub struct MadeFront {
    set: MapSet,
    params: Table,
}

impl MadeFront {
    /// The outputs of a run of the parameters `params`, started from preset `preset` on
    /// `input`: the maps `wanted`, in `formats`.
    pub fn new(input: Loaded, formats: Vec<Format>, wanted: Wanted, preset: &str, params: Table) -> Self {
        let outputs = MapOutputs { formats, wanted, overlay: "", log_overlay: false };
        Self { set: MapSet { input: input.into(), outputs, preset: preset.into() }, params }
    }
}

impl Front<Box<dyn Model>> for MadeFront {
    fn map_set(&self) -> Option<&MapSet> {
        Some(&self.set)
    }
    fn params(&self, _model: &Box<dyn Model>) -> Value {
        Value::Object(self.params.clone())
    }
    fn details(&self, _model: &Box<dyn Model>) -> Map<String, Value> {
        Map::new()
    }
}
