//! Splat maps: layers of ground cover (rock, grass, scree, …), each with the conditions where it
//! lies, painted one over another in order, as a terrain artist stacks layers in Gaea or World
//! Machine. A condition is a band of a mask (or of the relative height) with smooth edges; a
//! layer's cover is the product of its conditions' bands, and a layer covers those before it:
//! the weight of layer i is `cover_i · Π_{j>i} (1 − cover_j)`, normalised so the weights sum to
//! 1 (the first layer takes a cell no layer covers). The albedo is the weights' blend of the
//! layers' colours.
//!
//! Conditions read masks in their 0..1 mapping (see [`super::MASKS`]), except `slope`, read in
//! degrees, and `height`, the height relative to the map's range (0 its lowest cell, 1 its
//! highest).

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::{MASKS, smoothstep};
use crate::TextureError;
use crate::flow::Domain;

/// One layer of ground cover.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    /// Its name (the file stem of its weight map: letters, digits, `_` and `-`).
    pub name: String,
    /// Its colour in the albedo, sRGB.
    pub colour: [u8; 3],
    /// How far each band's edges fade, as a share of the condition's full range (90° for the
    /// slope, 1 for the rest); 0 for hard edges.
    #[serde(default = "default_fade")]
    pub fade: f64,
    /// The bands `[low, high]` of the masks where it lies, by name (`height`, `slope` in degrees,
    /// or a mask's name); none: everywhere.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub when: BTreeMap<String, [f64; 2]>,
}

fn default_fade() -> f64 {
    0.05
}

/// The layers, bottom first.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rules {
    /// The layers, each painted over those before it.
    #[serde(rename = "layer")]
    pub layers: Vec<Layer>,
}

/// The most layers a set of rules may have (four RGBA splat maps).
pub const MAX_LAYERS: usize = 16;

impl Default for Rules {
    /// Rock everywhere; grass on gentle ground below the heights; scree at the angle of repose;
    /// sand and gravel where water gathers on gentle ground; snow on the heights where it holds.
    fn default() -> Self {
        let layer = |name: &str, colour: [u8; 3], when: &[(&str, [f64; 2])]| Layer {
            name: name.to_string(),
            colour,
            fade: default_fade(),
            when: when.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        };
        Self {
            layers: vec![
                layer("rock", [112, 106, 98], &[]),
                layer("grass", [88, 112, 54], &[("slope", [0.0, 28.0]), ("height", [0.0, 0.72])]),
                layer("scree", [156, 146, 132], &[("talus", [0.5, 1.0]), ("height", [0.0, 0.85])]),
                layer("sand", [196, 178, 136], &[("flow", [0.55, 1.0]), ("slope", [0.0, 12.0])]),
                layer("snow", [236, 240, 245], &[("height", [0.8, 1.0]), ("slope", [0.0, 38.0])]),
            ],
        }
    }
}

/// A layer as errors name it.
pub(super) fn layer_label(layer: &Layer, k: usize) -> String {
    if layer.name.is_empty() { format!("{}", k + 1) } else { format!("`{}`", layer.name) }
}

/// The full range of a condition (the unit its fade is a share of).
fn full_range(condition: &str) -> f64 {
    if condition == "slope" { 90.0 } else { 1.0 }
}

impl Rules {
    /// Checks names, colours, bands and conditions.
    pub fn validate(&self) -> Result<(), TextureError> {
        if self.layers.is_empty() || self.layers.len() > MAX_LAYERS {
            return Err(TextureError::Rule {
                layer: "list".into(),
                problem: format!("{} layers; a splat has 1 to {MAX_LAYERS}", self.layers.len()),
            });
        }
        for (k, layer) in self.layers.iter().enumerate() {
            let fail = |problem: String| Err(TextureError::Rule { layer: layer_label(layer, k), problem });
            let name_ok = !layer.name.is_empty()
                && layer.name.len() <= 64
                && layer.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !name_ok {
                return fail("a name of 1 to 64 letters, digits, `_` or `-` (it names a file)".into());
            }
            if self.layers[..k].iter().any(|l| l.name == layer.name) {
                return fail("two layers of this name".into());
            }
            if !(layer.fade.is_finite() && (0.0..=1.0).contains(&layer.fade)) {
                return fail(format!("fade = {}: a share of the range, 0 to 1", layer.fade));
            }
            for (name, [low, high]) in &layer.when {
                let known = name == "height" || MASKS.iter().any(|m| m.name == name);
                if !known {
                    let names: Vec<&str> = std::iter::once("height").chain(MASKS.iter().map(|m| m.name)).collect();
                    return fail(format!("no condition `{name}`; the conditions are {}", names.join(", ")));
                }
                if !(low.is_finite() && high.is_finite() && low <= high) {
                    return fail(format!("{name} = [{low}, {high}]: a band [low, high] with low <= high"));
                }
            }
        }
        Ok(())
    }
}

/// Heights relative to a map's range.
#[derive(Clone)]
pub(super) struct Relative {
    /// The lowest height, m.
    pub(super) low: f64,
    /// The range, m.
    pub(super) span: f64,
}

impl Relative {
    /// `z` in 0..1 of the range (0 on a flat map).
    pub(super) fn of(&self, z: f32) -> f64 {
        if self.span > 0.0 { ((f64::from(z) - self.low) / self.span).clamp(0.0, 1.0) } else { 0.0 }
    }
}

/// A splat: the layers' weights and their blend.
#[derive(Clone, Debug, PartialEq)]
pub struct Splat {
    /// The layers' names, bottom first.
    pub names: Vec<String>,
    /// Each layer's weight a cell, in 0..1 (they sum to 1 at each cell; 0 outside the domain).
    pub weights: Vec<Vec<f32>>,
    /// The albedo: three components in 0..1 a cell (sRGB; 0 outside the domain).
    pub albedo: Vec<f32>,
}

/// A band's weight at `x`: 1 inside `[low, high]`, fading to 0 over `fade` outside it.
fn band(x: f64, [low, high]: [f64; 2], fade: f64) -> f64 {
    smoothstep(low - fade, low, x) * (1.0 - smoothstep(high, high + fade, x))
}

/// Where a condition's values come from.
pub(super) enum Values<'a> {
    /// A mask's values in 0..1 (times `factor`: 90 for the slope in degrees).
    Mask(&'a [f32], f64),
    /// The heights, relative to the map's range.
    Height(&'a [f32], Relative),
}

impl Values<'_> {
    #[inline]
    fn at(&self, i: usize) -> f64 {
        match self {
            Values::Mask(v, factor) => f64::from(v[i]) * factor,
            Values::Height(z, relative) => relative.of(z[i]),
        }
    }
}

/// A condition ready to apply: its values, band and fade (in the values' unit).
pub(super) struct Condition<'a> {
    pub(super) values: Values<'a>,
    pub(super) band: [f64; 2],
    pub(super) fade: f64,
}

/// The conditions of a layer as [`apply`] takes them: each named condition of `layer` with its
/// values from `values(name)`.
pub(super) fn conditions<'a>(layer: &Layer, values: impl Fn(&str) -> Values<'a>) -> Vec<Condition<'a>> {
    layer
        .when
        .iter()
        .map(|(name, band)| Condition { values: values(name), band: *band, fade: layer.fade * full_range(name) })
        .collect()
}

/// The splat of `rules` (validated), each layer's conditions in `conditions`.
pub(super) fn apply(d: &Domain<'_>, rules: &Rules, conditions: &[Vec<Condition<'_>>]) -> Splat {
    let count = rules.layers.len();
    // each cell's weights side by side, then a map per layer
    let mut per_cell = vec![0.0f32; d.len() * count];
    per_cell.par_chunks_mut(count).enumerate().with_min_len(1024).for_each(|(i, out)| {
        if !d.inside(i) {
            return;
        }
        let mut above = 1.0;
        let mut sum = 0.0;
        let mut weights = [0.0f64; MAX_LAYERS];
        for (k, layer) in conditions.iter().enumerate().rev() {
            let cover: f64 = layer.iter().map(|c| band(c.values.at(i), c.band, c.fade)).product();
            weights[k] = cover * above;
            sum += weights[k];
            above *= 1.0 - cover;
        }
        if sum > 0.0 {
            for (o, w) in out.iter_mut().zip(&weights) {
                *o = (w / sum) as f32;
            }
        } else {
            out[0] = 1.0;
        }
    });
    let mut weights = vec![vec![0.0f32; d.len()]; count];
    let mut albedo = vec![0.0f32; d.len() * 3];
    for (i, w) in per_cell.chunks(count).enumerate() {
        for (k, &v) in w.iter().enumerate() {
            weights[k][i] = v;
            for (c, &colour) in rules.layers[k].colour.iter().enumerate() {
                albedo[i * 3 + c] += v * f32::from(colour) / 255.0;
            }
        }
    }
    for v in &mut albedo {
        *v = v.clamp(0.0, 1.0);
    }
    Splat { names: rules.layers.iter().map(|l| l.name.clone()).collect(), weights, albedo }
}
