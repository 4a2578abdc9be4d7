//! Texture maps for engines and 3D tools, baked from a heightmap (and a run's maps): masks, each
//! a value in 0..1 a cell by a fixed, documented mapping of a physical quantity (never scaled to
//! the map's own minimum and maximum, so the same ground gives the same grey on any map); a
//! tangent-space normal map; splat maps (layer weights by rules) and an albedo.
//!
//! One algorithm a file: `slope.rs`, `curvature.rs`, `flow.rs` (drainage and wetness on the one
//! flow graph), `occlusion.rs` (sky-view factor), `talus.rs`, `ground.rs` (a run's erosion,
//! deposition and loose layer), `normal.rs`, `splat.rs`. [`MASKS`] lists the masks with their
//! mappings: the front ends iterate it (names, help, the sidecar a bake writes).

mod curvature;
mod flow;
mod ground;
mod normal;
mod occlusion;
mod slope;
pub mod splat;
mod talus;

use std::sync::OnceLock;

pub use normal::NormalConvention;
pub use splat::{Layer, Rules, Splat};

use crate::TextureError;
use crate::flow::Domain;
use crate::grid::{Grid, Heightmap};

/// A mask: one value in 0..1 a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mask {
    /// Steepness.
    Slope,
    /// Convex (ridges) against concave (valleys) at the cell's scale.
    Curvature,
    /// Drainage area, log-scaled.
    Flow,
    /// Topographic wetness index.
    Wetness,
    /// Sky-view factor.
    Occlusion,
    /// Ground at the angle of repose of loose rock.
    Talus,
    /// Ground a run removed.
    Erosion,
    /// Ground a run laid down.
    Deposition,
    /// A run's loose layer over bedrock.
    Sediment,
}

/// What front ends show and write of a mask.
#[derive(Clone, Copy, Debug)]
pub struct MaskInfo {
    /// The mask.
    pub mask: Mask,
    /// Its name (file stem, `--only` value, splat condition).
    pub name: &'static str,
    /// What it shows.
    pub summary: &'static str,
    /// How a cell's value in 0..1 follows from the physical quantity.
    pub mapping: &'static str,
    /// The run's map it is made from (`None`: from the heightmap alone).
    pub run_map: Option<&'static str>,
}

/// Every mask, in the order front ends list them.
pub const MASKS: &[MaskInfo] = &[
    MaskInfo {
        mask: Mask::Slope,
        name: "slope",
        summary: "steepness (Horn 1981)",
        mapping: "the slope's angle / 90°: 0 flat, 0.5 at 45°, 1 vertical",
        run_map: None,
    },
    MaskInfo {
        mask: Mask::Curvature,
        name: "curvature",
        summary: "convex (ridges, edges: bright) against concave (valleys, hollows: dark): the Laplacian seen at a radius",
        mapping: "0.5 − 0.5·tanh(σ·∇²z / s): ∇²z = 2·(Gaussian blur of σ − z)/σ², σ the curvature radius (default 2 cells) in m, σ·∇²z the change of slope across it, s the curvature scale (m/m, default 0.5): 0.5 on a plane",
        run_map: None,
    },
    MaskInfo {
        mask: Mask::Flow,
        name: "flow",
        summary: "where water gathers: the drainage area over multiple flow directions (Freeman 1991) on the filled surface",
        mapping: "log10(cells draining through the cell) / 6, clamped: 0 for one cell, 0.5 for 1,000, 1 for 10⁶ and more",
        run_map: None,
    },
    MaskInfo {
        mask: Mask::Wetness,
        name: "wetness",
        summary: "topographic wetness index ln(a / tan β) (Beven & Kirkby 1979): damp hollows and valley floors",
        mapping: "(ln(a / tan β) − 2) / 16, clamped; a the drainage area per metre of contour (m), tan β the slope (at least 0.001)",
        run_map: None,
    },
    MaskInfo {
        mask: Mask::Occlusion,
        name: "occlusion",
        summary: "ambient occlusion: the sky-view factor (Zakšek, Oštir & Kokalj 2011) over 16 directions",
        mapping: "the share of the sky seen, 1 − mean over directions of sin(horizon angle): 1 on open ground, lower in valleys",
        run_map: None,
    },
    MaskInfo {
        mask: Mask::Talus,
        name: "talus",
        summary: "scree: ground at the angle of repose of loose rock",
        mapping: "0 below 25°, rising to 1 at 30°, 1 to 38°, falling to 0 at 45° (smoothstep edges)",
        run_map: None,
    },
    MaskInfo {
        mask: Mask::Erosion,
        name: "erosion",
        summary: "ground a run removed",
        mapping: "1 − exp(−d / D), d the depth removed (m), D the depth scale (m, default 1): 0.63 at D",
        run_map: Some("erosion"),
    },
    MaskInfo {
        mask: Mask::Deposition,
        name: "deposition",
        summary: "ground a run laid down",
        mapping: "1 − exp(−d / D), d the depth laid down (m), D the depth scale (m, default 1)",
        run_map: Some("deposition"),
    },
    MaskInfo {
        mask: Mask::Sediment,
        name: "sediment",
        summary: "a run's loose layer over bedrock (deposits and debris)",
        mapping: "1 − exp(−d / D), d the layer's depth (m), D the depth scale (m, default 1)",
        run_map: Some("sediment_depth"),
    },
];

impl Mask {
    /// Its entry in [`MASKS`].
    pub fn info(self) -> &'static MaskInfo {
        MASKS.iter().find(|m| m.mask == self).unwrap_or(&MASKS[0])
    }

    /// The mask of a name in [`MASKS`].
    pub fn from_name(name: &str) -> Option<Self> {
        MASKS.iter().find(|m| m.name == name).map(|m| m.mask)
    }

    fn index(self) -> usize {
        MASKS.iter().position(|m| m.mask == self).unwrap_or(0)
    }
}

/// The scales of the mappings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// The change of slope across the curvature radius (σ·∇²z) that maps to 0.5 ∓ 0.38 (tanh 1),
    /// m/m.
    pub curvature_scale: f64,
    /// The scale the curvature is measured at: the σ of its Gaussian, cells.
    pub curvature_radius: f64,
    /// How far the occlusion looks for the horizon, cells.
    pub occlusion_radius: usize,
    /// Depth of erosion, deposition or loose layer that maps to 0.63 (1 − 1/e), m.
    pub depth_scale: f64,
}

impl Default for Options {
    fn default() -> Self {
        Self { curvature_scale: 0.5, curvature_radius: 2.0, occlusion_radius: 32, depth_scale: 1.0 }
    }
}

impl Options {
    /// Checks every scale.
    pub fn validate(&self) -> Result<(), TextureError> {
        let positive = |name: &'static str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(TextureError::Option { name, value: v, expected: "a positive number" })
            }
        };
        positive("curvature_scale", self.curvature_scale)?;
        positive("depth_scale", self.depth_scale)?;
        if !(self.curvature_radius.is_finite() && (0.5..=256.0).contains(&self.curvature_radius)) {
            return Err(TextureError::Option {
                name: "curvature_radius",
                value: self.curvature_radius,
                expected: "0.5 to 256 cells",
            });
        }
        if !(1..=4096).contains(&self.occlusion_radius) {
            return Err(TextureError::Option {
                name: "occlusion_radius",
                value: self.occlusion_radius as f64,
                expected: "1 to 4096 cells",
            });
        }
        Ok(())
    }
}

/// Bakes texture maps of one heightmap, each computed once when first asked for (the masks a
/// splat reads included).
pub struct Baker<'a> {
    map: &'a Heightmap,
    options: Options,
    /// The run's maps by name (`erosion`, `deposition`, `sediment_depth`), m.
    run: Vec<(&'static str, &'a Grid<f32>)>,
    /// Each mask of [`MASKS`], once made.
    masks: [OnceLock<Vec<f32>>; 9],
    /// Slope (Horn), m/m.
    slope: OnceLock<Vec<f32>>,
    /// Cells draining through each cell (multiple flow directions).
    cells: OnceLock<Vec<f64>>,
}

impl<'a> Baker<'a> {
    /// A baker of `map` (heights in metres) with the mappings' scales.
    pub fn new(map: &'a Heightmap, options: Options) -> Result<Self, TextureError> {
        options.validate()?;
        if map.nodata_count() == map.heights.len() {
            return Err(TextureError::NoData);
        }
        Ok(Self {
            map,
            options,
            run: Vec::new(),
            masks: Default::default(),
            slope: OnceLock::new(),
            cells: OnceLock::new(),
        })
    }

    /// Adds a run's map (`erosion`, `deposition` or `sediment_depth`, metres) of the heightmap's
    /// size; a name no mask reads is refused.
    pub fn with_run_map(mut self, name: &str, map: &'a Grid<f32>) -> Result<Self, TextureError> {
        let Some(known) = MASKS.iter().filter_map(|m| m.run_map).find(|&m| m == name) else {
            return Err(TextureError::UnknownRunMap { name: name.to_string() });
        };
        let h = &self.map.heights;
        if !map.same_shape(h) {
            return Err(TextureError::Shape {
                map: name.to_string(),
                got: (map.width(), map.height()),
                want: (h.width(), h.height()),
            });
        }
        self.run.retain(|(n, _)| *n != known);
        self.run.push((known, map));
        Ok(self)
    }

    /// The masks this baker can make: those from the heightmap, and those whose run map it has.
    pub fn available(&self) -> Vec<Mask> {
        MASKS.iter().filter(|m| m.run_map.is_none_or(|r| self.run_map(r).is_some())).map(|m| m.mask).collect()
    }

    fn run_map(&self, name: &str) -> Option<&'a Grid<f32>> {
        self.run.iter().find(|(n, _)| *n == name).map(|(_, g)| *g)
    }

    fn domain(&self) -> Domain<'a> {
        let g = &self.map.heights;
        Domain { width: g.width(), height: g.height(), cell: g.cell_size(), nodata: self.map.nodata_mask() }
    }

    /// The mask, one value in 0..1 a cell, row-major (0 on nodata cells).
    pub fn mask(&self, mask: Mask) -> Result<&[f32], TextureError> {
        let info = mask.info();
        let run = match info.run_map {
            Some(name) => Some(self.run_map(name).ok_or(TextureError::NeedsRunMap { mask: info.name, map: name })?),
            None => None,
        };
        let made = self.masks[mask.index()].get_or_init(|| {
            let d = self.domain();
            let z = self.map.heights.as_slice();
            let values = match mask {
                Mask::Slope => slope::mask(self.slope()),
                Mask::Curvature => curvature::mask(&d, z, self.options.curvature_radius, self.options.curvature_scale),
                Mask::Flow => flow::flow_mask(self.cells()),
                Mask::Wetness => flow::wetness_mask(&d, self.cells(), self.slope()),
                Mask::Occlusion => occlusion::mask(&d, z, self.options.occlusion_radius),
                Mask::Talus => talus::mask(self.slope()),
                Mask::Erosion | Mask::Deposition | Mask::Sediment => {
                    ground::mask(run.map_or(&[][..], |g| g.as_slice()), self.options.depth_scale)
                }
            };
            outside_to_zero(&d, values)
        });
        Ok(made)
    }

    /// The tangent-space normal map: three values in 0..1 a cell (x east, y north or south by
    /// the convention, z up; each component `n·0.5 + 0.5`), heights times `strength`.
    pub fn normal_map(&self, convention: NormalConvention, strength: f64) -> Result<Vec<f32>, TextureError> {
        if !(strength.is_finite() && strength > 0.0) {
            return Err(TextureError::Option {
                name: "normal_strength",
                value: strength,
                expected: "a positive number",
            });
        }
        Ok(normal::encoded(&self.domain(), self.map.heights.as_slice(), convention, strength))
    }

    /// The splat of `rules`: each layer's weight a cell (they sum to 1) and the albedo.
    pub fn splat(&self, rules: &Rules) -> Result<Splat, TextureError> {
        rules.validate()?;
        for (k, layer) in rules.layers.iter().enumerate() {
            for name in layer.when.keys() {
                if let Some(mask) = Mask::from_name(name)
                    && let Err(e) = self.mask(mask)
                {
                    return Err(TextureError::Rule { layer: splat::layer_label(layer, k), problem: e.to_string() });
                }
            }
        }
        let stats = self.map.stats();
        let relative = splat::Relative { low: f64::from(stats.min), span: f64::from(stats.max - stats.min) };
        let z = self.map.heights.as_slice();
        let values = |name: &str| match Mask::from_name(name) {
            Some(m) => {
                let factor = if m == Mask::Slope { 90.0 } else { 1.0 };
                // every condition's mask was made above (an error returned there), so this is
                // the cached slice; the empty fallback is never indexed
                splat::Values::Mask(self.mask(m).unwrap_or(&[]), factor)
            }
            None => splat::Values::Height(z, relative.clone()),
        };
        let conditions: Vec<_> = rules.layers.iter().map(|layer| splat::conditions(layer, values)).collect();
        Ok(splat::apply(&self.domain(), rules, &conditions))
    }

    /// Slope (Horn), m/m.
    fn slope(&self) -> &[f32] {
        self.slope.get_or_init(|| slope::slope(&self.domain(), self.map.heights.as_slice()))
    }

    /// Cells draining through each cell.
    fn cells(&self) -> &[f64] {
        self.cells.get_or_init(|| flow::cells(&self.domain(), self.map.heights.as_slice()))
    }
}

/// `values` with 0 on every cell outside the domain.
fn outside_to_zero(d: &Domain<'_>, mut values: Vec<f32>) -> Vec<f32> {
    if let Some(mask) = d.nodata {
        for (v, &out) in values.iter_mut().zip(mask) {
            if out {
                *v = 0.0;
            }
        }
    }
    values
}

/// Hermite smoothstep of `x` between `a` (0) and `b` (1); a step at `a` when `b <= a`.
pub(crate) fn smoothstep(a: f64, b: f64, x: f64) -> f64 {
    if b <= a {
        return if x >= a { 1.0 } else { 0.0 };
    }
    let t = ((x - a) / (b - a)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}
