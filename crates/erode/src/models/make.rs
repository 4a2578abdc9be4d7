//! How a front end makes a heightmap model it knows only from the models' list: its parameters
//! from a preset and a parameter file's keys, a start from a heightmap and its input maps, a
//! resume from a checkpoint. A model whose [`ModelInfo`](super::ModelInfo) carries a [`Maker`]
//! runs in every front end (`erode simulate NAME`, `erode params NAME`, Python's
//! `erode.Model("NAME", …)`) without a line of its own there.
//!
//! Parameters cross as a [`Table`] (keys to values, what a parameter file holds); the model
//! reads its typed `Params` from it ([`Make::Params`]) and checks their ranges, so each
//! parameter is still defined once, in its `Params`' field and `PARAM_DOCS`.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::info::ParamDoc;
use crate::contract::{Model, Unit};
use crate::{Grid, SimError};

/// Parameters as front ends hold them before a model reads them: keys to values, as in a
/// parameter file.
pub type Table = serde_json::Map<String, serde_json::Value>;

/// A model a front end made, or why it could not.
pub type Made = Result<Box<dyn Model>, SimError>;

/// What a heightmap model starts from.
#[derive(Clone, Copy)]
pub struct Inputs<'a> {
    /// The heights, m, with their cell size.
    pub terrain: &'a Grid<f32>,
    /// Cells outside the domain (nodata), row-major; `None`: every cell is inside.
    pub nodata: Option<&'a [bool]>,
    /// The input maps given, by the names of [`Maker::maps`], each the terrain's size.
    pub maps: &'a [(&'static str, &'a Grid<f32>)],
}

impl<'a> Inputs<'a> {
    /// The map called `name`, if given.
    pub fn map(&self, name: &str) -> Option<&'a Grid<f32>> {
        self.maps.iter().find(|m| m.0 == name).map(|m| m.1)
    }

    /// The hash of these inputs that the run's checkpoints carry (see
    /// [`crate::checkpoint::inputs_hash`]): a resume from other inputs is refused.
    pub fn hash(&self) -> u64 {
        let maps: Vec<(&str, Option<&Grid<f32>>)> = self.maps.iter().map(|&(n, g)| (n, Some(g))).collect();
        crate::checkpoint::inputs_hash(self.terrain, self.nodata, &maps)
    }
}

/// A heightmap model that front ends make from the list alone: its typed parameters and how it
/// starts and resumes. [`Maker::of`] turns it into the [`Maker`] its `INFO` carries.
pub trait Make: Model + Sized + 'static {
    /// Its parameters (read from a [`Table`] by their field names; `Default` the values its
    /// field docs state).
    type Params: Serialize + DeserializeOwned + Default;
    /// The preset called `name`.
    fn preset(name: &str) -> Result<Self::Params, SimError>;
    /// Checks every parameter's range.
    fn check(params: &Self::Params) -> Result<(), SimError>;
    /// A run of `params` (checked here too) from `inputs`.
    fn start(params: Self::Params, inputs: &Inputs) -> Result<Self, SimError>;
    /// A run of `params` from checkpoint `bytes` (written with the same parameters; at most
    /// `max_cells` cells).
    fn resume(params: Self::Params, bytes: &[u8], max_cells: u64) -> Result<Self, SimError>;
}

/// How front ends make one heightmap model, with no type of its own in sight.
#[derive(Clone, Copy)]
pub struct Maker {
    /// What [`Model::advance`] counts.
    pub unit: Unit,
    /// Peak bytes per cell of a run (what the memory check multiplies the cells by).
    pub bytes_per_cell: u64,
    /// The input maps it reads besides the heights (name, what it holds and its range): the
    /// command line's `--NAME-map`, Python's keyword.
    pub maps: &'static [ParamDoc],
    /// The preset called `name`, as a table.
    pub preset: fn(&str) -> Result<Table, SimError>,
    /// `Params::default()` as a table (what the field docs state, which a test holds them to).
    pub defaults: fn() -> Table,
    /// Reads `table` as the parameters, without checking ranges: the message of a key that
    /// is unknown or of the wrong type.
    pub read: fn(&Table) -> Result<(), String>,
    /// Reads `table` as the parameters and checks their ranges: what a front end does once
    /// every key is in, before it reads any input.
    pub check: fn(&Table) -> Result<(), SimError>,
    /// A run of the parameters `table` from `inputs`.
    pub start: fn(&Table, &Inputs) -> Made,
    /// A run of the parameters `table` from checkpoint bytes, of at most so many cells.
    pub resume: fn(&Table, &[u8], u64) -> Made,
}

impl Maker {
    /// The maker of model `M`, which counts `unit`s, needs `bytes_per_cell` and reads the
    /// input `maps`.
    pub const fn of<M: Make>(unit: Unit, bytes_per_cell: u64, maps: &'static [ParamDoc]) -> Self {
        Self {
            unit,
            bytes_per_cell,
            maps,
            preset: preset_table::<M>,
            defaults: || as_table(&M::Params::default()).unwrap_or_default(),
            read: |t| typed::<M>(t).map(|_| ()).map_err(|e| e.to_string()),
            check: |t| M::check(&typed::<M>(t)?),
            start: |t, inputs| Ok(Box::new(M::start(typed::<M>(t)?, inputs)?)),
            resume: |t, bytes, max_cells| Ok(Box::new(M::resume(typed::<M>(t)?, bytes, max_cells)?)),
        }
    }
}

impl std::fmt::Debug for Maker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Maker")
            .field("unit", &self.unit)
            .field("bytes_per_cell", &self.bytes_per_cell)
            .field("maps", &self.maps)
            .finish_non_exhaustive()
    }
}

/// `params` as a table, if they serialise to one.
fn as_table(params: &impl Serialize) -> Option<Table> {
    match serde_json::to_value(params) {
        Ok(serde_json::Value::Object(table)) => Some(table),
        _ => None,
    }
}

/// The preset `name` of `M` as a table.
fn preset_table<M: Make>(name: &str) -> Result<Table, SimError> {
    as_table(&M::preset(name)?)
        .ok_or_else(|| SimError::Params(format!("the {name} preset is not a table of parameters")))
}

/// `table` read as `M`'s parameters.
fn typed<M: Make>(table: &Table) -> Result<M::Params, SimError> {
    serde_json::from_value(serde_json::Value::Object(table.clone())).map_err(|e| SimError::Params(e.to_string()))
}
