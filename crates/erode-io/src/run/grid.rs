//! What a grid-model run writes: its maps, a preview with the water, the report's fields.

use std::path::Path;

use erode::contract::{GridRun, Model, TiledGridRun};
use erode::models::grid;
use serde_json::{Map, Value, json};

use super::{Front, MapSet, RowsTask, RunError, Watch, write_owned_rows};
use crate::outputs::{MapOutputs, Wanted, note_nodata};
use crate::{Format, Loaded};

/// The grid model's part of a run on the heightmap `input`.
pub struct GridFront {
    set: MapSet,
    /// The time step and sub-steps at the start.
    first: grid::Derived,
    /// The most sub-steps per iteration so far.
    most_substeps: u32,
}

impl GridFront {
    /// The outputs of `model`, started from preset `preset` on `input`: the maps `wanted`, in `formats`.
    pub fn new(
        model: &GridRun,
        input: impl Into<crate::Footprint>,
        formats: Vec<Format>,
        wanted: Wanted,
        preset: &str,
    ) -> Self {
        let outputs = MapOutputs { formats, wanted, overlay: "water", log_overlay: false };
        let set = MapSet { input: input.into(), outputs, preset: preset.into() };
        Self { set, first: model.derived().clone(), most_substeps: 0 }
    }
}

impl Front<GridRun> for GridFront {
    fn begin(&mut self, model: &GridRun, _out: &Path, _fresh: bool, watch: &dyn Watch) -> Result<(), RunError> {
        note_nodata(&self.set.input, model.params().nodata_border == grid::NodataBorder::Open, watch);
        Ok(())
    }
    fn after_advance(&mut self, model: &GridRun, watch: &dyn Watch) {
        // the sub-steps follow the deepest water, so a storm that builds up slows the run
        let most = model.substep_tally().max;
        if most > self.most_substeps {
            if self.most_substeps > 0 {
                watch.note(&format!(
                    "erode: deeper water: {most} sub-steps per iteration now (was {}); the run slows",
                    self.most_substeps
                ));
            }
            self.most_substeps = most;
        }
    }
    fn map_set(&self) -> Option<&MapSet> {
        Some(&self.set)
    }
    fn write_outputs(&self, model: &GridRun, dir: &Path) -> Result<(), RunError> {
        if model.ranks() == 1 {
            return super::write_map_set(&self.set, model, dir);
        }
        // over ranks, each writes its own rows of the maps
        let names: Vec<&str> = super::map_names(model)
            .into_iter()
            .enumerate()
            .filter(|(k, n)| self.set.outputs.wanted.has(*k, n))
            .map(|(_, n)| n)
            .collect();
        let task = RowsTask::new(dir, &self.set.outputs, &self.set.input, &names).to_bytes();
        match model.ranks_task(&task) {
            Some(block) => Ok(write_owned_rows(&task, block, Some(&self.set.input))?),
            None => Err(RunError::Other("the ranks are gone".into())),
        }
    }
    fn params(&self, model: &GridRun) -> Value {
        json!(model.params())
    }
    fn details(&self, model: &GridRun) -> Map<String, Value> {
        let tally = model.substep_tally();
        let details = json!({
            "terrain_seconds": model.terrain_time(),
            "dt": model.params().dt,
            "substeps": { "first": self.first.substeps, "max": tally.max, "mean": tally.mean() },
            "stable_dt": self.first.stable_dt,
        });
        let mut details = details.as_object().cloned().unwrap_or_default();
        if model.ranks() > 1 {
            // MPI ranks, each stepping a block of the rows
            details.insert("ranks".into(), json!(model.ranks()));
            // and each band of rows' columns in this many parts (tiles)
            details.insert("rank_columns".into(), json!(model.rank_parts()));
        }
        details
    }
}

/// The grid model's part of a run tile by tile ([`erode::contract::TiledGridRun`]): the same
/// maps and preview as one run, the tiles in the report.
pub struct TiledGridFront {
    set: MapSet,
}

impl TiledGridFront {
    /// The outputs of a tiled run started from preset `preset` on `input`: the maps `wanted`, in
    /// `formats`.
    pub fn new(input: Loaded, formats: Vec<Format>, wanted: Wanted, preset: &str) -> Self {
        let outputs = MapOutputs { formats, wanted, overlay: "water", log_overlay: false };
        Self { set: MapSet { input: input.into(), outputs, preset: preset.into() } }
    }

    /// The maps a run writing `wanted` must blend: those and the preview's overlay.
    pub fn blended_maps(wanted: &Wanted) -> Vec<&'static str> {
        let names: Vec<&'static str> = grid::INFO.maps.iter().map(|m| m.name).collect();
        let outputs = MapOutputs { formats: Vec::new(), wanted: wanted.clone(), overlay: "water", log_overlay: false };
        outputs.read_maps(&names)
    }
}

impl Front<TiledGridRun> for TiledGridFront {
    fn begin(&mut self, model: &TiledGridRun, _out: &Path, _fresh: bool, watch: &dyn Watch) -> Result<(), RunError> {
        note_nodata(&self.set.input, model.tiled().params().nodata_border == grid::NodataBorder::Open, watch);
        let layout = model.tiled().layout();
        let (down, across) = layout.grid();
        watch.note(&format!(
            "erode: {} tiles ({down} down, {across} across), each run {} iterations with {} cells of overlap",
            layout.len(),
            model.tiled().iterations(),
            layout.overlap()
        ));
        Ok(())
    }
    fn map_set(&self) -> Option<&MapSet> {
        Some(&self.set)
    }
    fn params(&self, model: &TiledGridRun) -> Value {
        json!(model.tiled().params())
    }
    fn details(&self, model: &TiledGridRun) -> Map<String, Value> {
        let t = model.tiled();
        let layout = t.layout();
        let (down, across) = layout.grid();
        let core = layout.core(0);
        let details = json!({
            "tiles": {
                "count": layout.len(),
                "down": down,
                "across": across,
                "core": { "width": core.width(), "height": core.height() },
                "overlap": layout.overlap(),
                "done": t.done(),
                "iterations_each": t.iterations(),
                "blended": t.names(),
            },
            "substeps": { "max": t.most_substeps() },
        });
        details.as_object().cloned().unwrap_or_default()
    }
}
