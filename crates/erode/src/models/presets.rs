//! What every model's presets share: the error for a name that is not one of them.

/// A preset name that is not one of a model's presets.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[error("unknown preset `{name}`: the {model} model has {known}")]
pub struct UnknownPreset {
    /// The model asked.
    pub model: &'static str,
    /// The name asked for.
    pub name: String,
    /// The known names, comma-separated.
    pub known: String,
}
