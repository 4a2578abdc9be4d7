//! What a front end knows of each model before it makes one, and the one list of the models
//! that `erode params`, the command line's help, the viewer and the tests iterate.

use super::{droplet, grid, sph, stream_power};

/// One parameter as a user sees it: its key in a parameter file and in `--set`, and what it is,
/// with its unit and range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamDoc {
    /// Its key.
    pub name: &'static str,
    /// What it is, with unit and range.
    pub doc: &'static str,
}

impl ParamDoc {
    /// `name`, documented as `doc`.
    pub const fn new(name: &'static str, doc: &'static str) -> Self {
        Self { name, doc }
    }
}

/// A model as front ends list it.
#[derive(Clone, Copy, Debug)]
pub struct ModelInfo {
    /// Its name on the command line, in checkpoints and in `report.json`.
    pub name: &'static str,
    /// What it does and after whom, in a line.
    pub summary: &'static str,
    /// Every parameter, in the order of its `Params`' fields.
    pub params: &'static [ParamDoc],
    /// Its presets, the default first: (name, what it is for); none for a model without.
    pub presets: fn() -> Vec<(&'static str, &'static str)>,
    /// The maps a run gives ([`crate::contract::Model::maps`], in that order; the height
    /// first), each with what it holds and its unit: what `--outputs` chooses from. None for a
    /// model whose result is a mesh.
    pub maps: &'static [ParamDoc],
}

/// Every model, in the order front ends show them.
pub static MODELS: [ModelInfo; 4] = [grid::INFO, droplet::INFO, stream_power::INFO, sph::INFO];

/// The model called `name`.
pub fn find(name: &str) -> Option<&'static ModelInfo> {
    MODELS.iter().find(|m| m.name == name)
}
