//! What a front end knows of each model before it makes one, and the one list of the models
//! that `erode params`, the command line's help, the viewer and the tests iterate.

/// One parameter as a user sees it: its key in a parameter file and in `--set`, what it is,
/// with its unit and range, and, for a number, the slider a front end offers for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamDoc {
    /// Its key.
    pub name: &'static str,
    /// What it is, with unit and range.
    pub doc: &'static str,
    /// The slider for a number: the span people tune it over (not the valid range, which the
    /// model's `validate` checks and `doc` states) and its unit. `None` for a choice, a flag, a
    /// count or a seed, which are typed.
    pub slider: Option<Slider>,
    /// The values a choice takes, as a parameter file writes them (empty for anything else): a
    /// front end offers them as a menu.
    pub choices: &'static [&'static str],
}

/// The span a parameter is tuned over, and its unit as a front end shows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slider {
    /// Lowest value on the slider.
    pub min: f64,
    /// Highest value on the slider.
    pub max: f64,
    /// Spaced by ratios (a rate over decades) rather than by differences.
    pub log: bool,
    /// The unit (SI, as `doc` writes it; "" for a pure number).
    pub unit: &'static str,
}

impl ParamDoc {
    /// `name`, documented as `doc`, typed (no slider).
    pub const fn new(name: &'static str, doc: &'static str) -> Self {
        Self { name, doc, slider: None, choices: &[] }
    }

    /// A choice among `values`.
    pub const fn choices(self, values: &'static [&'static str]) -> Self {
        Self { choices: values, ..self }
    }

    /// With a slider from `min` to `max` in `unit`, spaced evenly.
    pub const fn linear(self, min: f64, max: f64, unit: &'static str) -> Self {
        Self { slider: Some(Slider { min, max, log: false, unit }), ..self }
    }

    /// With a slider from `min` to `max` (> 0) in `unit`, spaced by ratios.
    pub const fn log(self, min: f64, max: f64, unit: &'static str) -> Self {
        Self { slider: Some(Slider { min, max, log: true, unit }), ..self }
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
    /// How a front end makes it from the list alone (see [`super::make`]); `None` for a model
    /// whose front ends are written for it.
    pub make: Option<super::make::Maker>,
}

/// The model called `name`.
pub fn find(name: &str) -> Option<&'static ModelInfo> {
    super::MODELS.iter().find(|m| m.name == name)
}
