//! What a stream-power run writes: its maps, a preview with the river network, the report's
//! fields.

use std::path::Path;

use erode::contract::StreamPowerRun;
use serde_json::{Map, Value, json};

use super::{Front, MapSet, RunError, Watch};
use crate::outputs::{MapOutputs, Wanted, note_nodata};
use crate::{Format, Loaded};

/// The stream-power model's part of a run on the heightmap `input`.
pub struct StreamPowerFront {
    set: MapSet,
}

impl StreamPowerFront {
    /// The outputs of a run started from preset `preset` on `input`: the maps `wanted`, in `formats`.
    pub fn new(input: Loaded, formats: Vec<Format>, wanted: Wanted, preset: &str) -> Self {
        let outputs = MapOutputs { formats, wanted, overlay: "drainage_area", log_overlay: true };
        Self { set: MapSet { input: input.into(), outputs, preset: preset.into() } }
    }
}

impl Front<StreamPowerRun> for StreamPowerFront {
    fn begin(&mut self, _model: &StreamPowerRun, _out: &Path, _fresh: bool, watch: &dyn Watch) -> Result<(), RunError> {
        note_nodata(&self.set.input, true, watch);
        Ok(())
    }
    fn map_set(&self) -> Option<&MapSet> {
        Some(&self.set)
    }
    fn params(&self, model: &StreamPowerRun) -> Value {
        json!(model.params())
    }
    fn details(&self, model: &StreamPowerRun) -> Map<String, Value> {
        let st = model.state();
        let r = model.sim().routing();
        let (lo, hi) = st
            .terrain
            .iter()
            .enumerate()
            .filter(|&(i, _)| st.inside(i))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (_, &z)| (lo.min(z), hi.max(z)));
        let details = json!({
            "years": st.years,
            "relief_m": hi - lo,
            "last_step": { "pits": r.pits, "unresolved_cells": r.unresolved },
        });
        details.as_object().cloned().unwrap_or_default()
    }
}
