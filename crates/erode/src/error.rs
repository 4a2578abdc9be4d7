//! Typed errors of the library. Each carries the data that explains it.

/// A grid could not be built as asked.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum GridError {
    /// Zero width or height, or fewer than a model needs.
    #[error("a grid of {width} x {height} cells is too small: this needs at least {min} x {min}")]
    TooSmall {
        /// Columns.
        width: usize,
        /// Rows.
        height: usize,
        /// Least columns and rows.
        min: usize,
    },
    /// Zero width or height.
    #[error("grid is empty ({width} x {height} cells)")]
    Empty {
        /// Columns asked for.
        width: usize,
        /// Rows asked for.
        height: usize,
    },
    /// `width * height` overflows.
    #[error("grid of {width} x {height} cells is too large")]
    TooLarge {
        /// Columns asked for.
        width: usize,
        /// Rows asked for.
        height: usize,
    },
    /// The data does not hold `width * height` values.
    #[error("grid of {width} x {height} cells needs {} values, got {len}", width * height)]
    LengthMismatch {
        /// Columns.
        width: usize,
        /// Rows.
        height: usize,
        /// Values given.
        len: usize,
    },
    /// A cell size outside [`crate::CellSize::MIN`] to [`crate::CellSize::MAX`] metres (or not
    /// a number).
    #[error("cells of {x:e} x {y:e} m: a cell side must be 1e-4 to 1e7 m")]
    BadCellSize {
        /// Along x, metres.
        x: f64,
        /// Along y, metres.
        y: f64,
    },
    /// Heights that are NaN or infinite where no nodata was declared.
    #[error(
        "{count} {} NaN or infinite, the first at row {row}, column {col} (declare a nodata value if they mark missing data)",
        if *count == 1 { "height is" } else { "heights are" }
    )]
    NonFinite {
        /// How many cells.
        count: usize,
        /// Row of the first one.
        row: usize,
        /// Column of the first one.
        col: usize,
    },
    /// Every cell is nodata.
    #[error("every cell is nodata")]
    AllNodata,
}

/// A terrain generator was asked for something it cannot make.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum TerrainError {
    /// The grid shape or cell size is invalid.
    #[error(transparent)]
    Grid(#[from] GridError),
    /// A generator parameter is out of range.
    #[error("terrain parameter `{name}` = {} is out of range: {expected}", short_number(*.value))]
    Parameter {
        /// Parameter name.
        name: &'static str,
        /// The value given.
        value: f64,
        /// What is accepted.
        expected: &'static str,
    },
    /// Every square of a mesh over a heightmap reads a nodata cell: nothing is left to mesh.
    #[error("every square of the mesh reads a nodata cell ({nodata} of {cells} cells are nodata): no terrain to mesh")]
    AllNodata {
        /// Nodata cells.
        nodata: usize,
        /// Cells of the map.
        cells: usize,
    },
}

/// A model parameter is out of range.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[error("parameter `{name}`{} expected {expected}", given(*.value))]
pub struct ParamError {
    /// Parameter name (the TOML key).
    pub name: &'static str,
    /// The value given (NaN for a text parameter's value, or no number).
    pub value: f64,
    /// What is accepted.
    pub expected: &'static str,
}

/// The value in a [`ParamError`]'s message: NaN stands for a value that is no number (a text
/// parameter's, or a NaN), which the message does not echo.
fn given(value: f64) -> String {
    if value.is_nan() { " is not accepted:".into() } else { format!(" = {} is out of range:", short_number(value)) }
}

/// A number for a message: as Rust writes it when that is short (0.25, 1500, -3), else in short
/// scientific form (1e300, 2.5e-7, 1.235e8), never hundreds of digits.
pub fn short_number(v: f64) -> String {
    let plain = format!("{v}");
    if plain.len() <= 12 || !v.is_finite() {
        return plain;
    }
    let sci = format!("{v:.3e}");
    match sci.split_once('e') {
        Some((mantissa, exponent)) => {
            let mantissa =
                if mantissa.contains('.') { mantissa.trim_end_matches('0').trim_end_matches('.') } else { mantissa };
            format!("{mantissa}e{exponent}")
        }
        None => sci,
    }
}

/// A simulation could not be set up or continued.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum SimError {
    /// A parameter is out of range.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// Parameters that do not read as the model's: an unknown key or a value of the wrong type
    /// (the reader's message names the key).
    #[error("parameters: {0}")]
    Params(String),
    /// A preset name the model does not have.
    #[error(transparent)]
    Preset(#[from] crate::models::presets::UnknownPreset),
    /// A grid is invalid.
    #[error(transparent)]
    Grid(#[from] GridError),
    /// A map given to the model does not match the terrain.
    #[error("the {what} map is {got_w} x {got_h} cells, the terrain {want_w} x {want_h}")]
    MapShape {
        /// Which map.
        what: &'static str,
        /// Its width.
        got_w: usize,
        /// Its height.
        got_h: usize,
        /// The terrain's width.
        want_w: usize,
        /// The terrain's height.
        want_h: usize,
    },
    /// A map given to the model holds a value it cannot mean.
    #[error("the {what} map holds {} at row {row}, column {col}; expected {expected}", short_number(*.value))]
    MapValue {
        /// Which map.
        what: &'static str,
        /// The first value out of range.
        value: f64,
        /// Its row.
        row: usize,
        /// Its column.
        col: usize,
        /// What is accepted.
        expected: &'static str,
    },
    /// A mode needs a map that was not given.
    #[error("{0}")]
    MissingMap(&'static str),
    /// A map was given that the parameters leave unused.
    #[error("a {map} map needs {needs}")]
    MapNotUsed {
        /// The map, e.g. "sediment depth".
        map: &'static str,
        /// The parameter setting that would use it.
        needs: &'static str,
    },
    /// A source lies outside the map.
    #[error("source {index} at ({x}, {y}) lies outside the map")]
    SourceOutside {
        /// Position in the list.
        index: usize,
        /// Its x.
        x: f64,
        /// Its y.
        y: f64,
    },
    /// A source lies in a nodata hole (every cell it would water is outside the domain).
    #[error("source {index} at ({x}, {y}) lies in a nodata hole")]
    SourceInHole {
        /// Position in the list.
        index: usize,
        /// Its x.
        x: f64,
        /// Its y.
        y: f64,
    },
    /// The GPU backend failed (no adapter, a limit, validation).
    #[error("GPU: {0}")]
    Gpu(String),
    /// A hardness map given with `hardness_mode = "noise"`, which makes its own hardness.
    #[error("hardness_mode = \"noise\" makes its own hardness; a hardness map needs \"uniform\" or \"map\"")]
    HardnessMapWithNoise,
    /// A rain map given with a rain mode that has no rain for it to scale.
    #[error("rain_mode = \"{0}\" has no even rain for a rain map to scale; a rain map needs \"uniform\" or \"map\"")]
    RainMapWithMode(&'static str),
    /// An option the GPU backend does not run yet.
    #[error("not on the GPU yet: {0} (use --backend cpu)")]
    NotOnGpu(&'static str),
    /// The parameters ask for more work per step than a run can do (the estimate says how much
    /// and which parameter drives it), refused before any of it starts.
    #[error("parameter `{name}` = {}: {why}", short_number(*.value))]
    TooMuchWork {
        /// The parameter (TOML key) to change.
        name: &'static str,
        /// Its value.
        value: f64,
        /// The estimate and the limit.
        why: String,
    },
    /// A rain map with no cell above 0: no droplet can start.
    #[error("the rain map has no cell above 0, so no droplet can start")]
    NoRain,
    /// The stream-power model's domain has nowhere for rivers to end.
    #[error(
        "the domain has no base level: every edge is closed (open_edges), no cell is at or below sea_level and there \
         is no nodata hole; open an edge or set a sea level"
    )]
    NoBaseLevel,
    /// A checkpoint could not be decoded.
    #[error("checkpoint: {0}")]
    Checkpoint(#[from] crate::checkpoint::CheckpointError),
    /// A map cannot be cut into the tiles asked for.
    #[error("tiles: {0}")]
    Tiles(#[from] crate::models::grid::tiled::LayoutError),
    /// A map cannot be cut into blocks for a decomposed run (too many ranks, a configuration that
    /// reads beyond the halo).
    #[error(transparent)]
    Blocks(#[from] crate::models::grid::blocks::BlockError),
    /// A resample, crop or rescale between steps failed.
    #[error(transparent)]
    Transform(#[from] TransformError),
    /// A mesh is invalid (on load) or became inconsistent (during a run; the state keeps the
    /// last consistent mesh).
    #[error(transparent)]
    Mesh(#[from] MeshError),
    /// The erosion left the mesh inconsistent at this iteration; the state keeps the mesh as it
    /// was after the iteration before.
    #[error("iteration {iteration}: the eroded mesh became inconsistent: {source}; the last consistent mesh is kept")]
    MeshInconsistent {
        /// The iteration that failed (1-based).
        iteration: u64,
        /// What was found.
        source: MeshError,
    },
}

/// A triangle mesh is not one the SPH model can erode. Faces and vertices are 0-based indices.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum MeshError {
    /// No faces.
    #[error("the mesh has no faces")]
    Empty,
    /// A face names a vertex that does not exist.
    #[error("face {face} names vertex {index}, but the mesh has {vertices} vertices")]
    IndexOutOfRange {
        /// The face.
        face: usize,
        /// The vertex index it names.
        index: u64,
        /// Vertices in the mesh.
        vertices: usize,
    },
    /// A vertex with a NaN or infinite coordinate.
    #[error("vertex {vertex} has a non-finite coordinate")]
    NonFinite {
        /// The vertex.
        vertex: usize,
    },
    /// A face with (nearly) no area: repeated vertices or all three on a line.
    #[error("face {face} is degenerate: area {area:.3e} m² is below the minimum {min_area:.3e} m²")]
    Degenerate {
        /// The face.
        face: usize,
        /// Its area, m².
        area: f64,
        /// The smallest area accepted, m².
        min_area: f64,
    },
    /// An edge used by one face only: the mesh has a hole there.
    #[error("the mesh is not closed: edge {a}-{b} belongs to one face only (face {face})")]
    OpenEdge {
        /// One end.
        a: usize,
        /// The other end.
        b: usize,
        /// The face.
        face: usize,
    },
    /// An edge shared by more than two faces.
    #[error("edge {a}-{b} is shared by {count} faces (non-manifold)")]
    NonManifoldEdge {
        /// One end.
        a: usize,
        /// The other end.
        b: usize,
        /// How many faces use it.
        count: usize,
    },
    /// Two faces run along their shared edge the same way: one of them is flipped.
    #[error("faces {face_a} and {face_b} disagree on orientation across edge {a}-{b} (one is flipped)")]
    Orientation {
        /// One face.
        face_a: usize,
        /// The other.
        face_b: usize,
        /// One end of the shared edge.
        a: usize,
        /// The other end.
        b: usize,
    },
    /// A closed, consistently oriented mesh whose faces wind inwards.
    #[error(
        "the mesh is inside out: its faces enclose {volume:.6} m³ (negative: their normals point inwards); flip the faces' winding"
    )]
    InsideOut {
        /// The signed volume the faces enclose, m³.
        volume: f64,
    },
    /// Two faces that share no vertex cross each other.
    #[error("faces {face_a} and {face_b} intersect (the surface passes through itself)")]
    SelfIntersection {
        /// One face.
        face_a: usize,
        /// The other.
        face_b: usize,
    },
    /// A face turned over (its normal reversed) in one move of the mesh.
    #[error("face {face} turned over in one move of the mesh")]
    Flipped {
        /// The face.
        face: usize,
    },
}

/// A terrain analysis could not be made.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum AnalysisError {
    /// Every cell is nodata: there is no terrain to analyse.
    #[error("every cell is nodata: nothing to analyse")]
    NoData,
    /// An option is out of range.
    #[error("analysis option `{name}` = {} is out of range: expected {expected}", short_number(*.value))]
    Option {
        /// Option name.
        name: &'static str,
        /// The value given.
        value: f64,
        /// What is accepted.
        expected: &'static str,
    },
    /// Two maps to compare do not cover the same land at a whole ratio of cell counts.
    #[error("maps of {coarse:?} and {fine:?} cells: the fine map needs k x k cells per coarse cell")]
    Mismatch {
        /// Coarse map's columns and rows.
        coarse: (usize, usize),
        /// Fine map's columns and rows.
        fine: (usize, usize),
    },
}

/// A resample, crop or rescale could not be done as asked.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum TransformError {
    /// The result would not be a valid grid (empty, too large, all nodata).
    #[error(transparent)]
    Grid(#[from] GridError),
    /// A window that is empty or leaves the map.
    #[error(
        "the window of {} x {} cells at column {}, row {} {} the {map_width} x {map_height} map",
        window.width,
        window.height,
        window.col,
        window.row,
        if window.width == 0 || window.height == 0 { "is empty: it holds no cell of" } else { "does not lie inside" }
    )]
    Window {
        /// The window asked for.
        window: crate::transform::Window,
        /// Columns of the map.
        map_width: usize,
        /// Rows of the map.
        map_height: usize,
    },
    /// A relief asked of a map with one height everywhere.
    #[error("the map is flat (every cell at {height} m): it has no relief to rescale")]
    Flat {
        /// The one height, metres.
        height: f64,
    },
    /// A number out of its range.
    #[error("{name} {}: expected {expected}", short_number(*.value))]
    Parameter {
        /// What it is (`relief`, `factor`, `base`).
        name: &'static str,
        /// The value given.
        value: f64,
        /// What is accepted.
        expected: &'static str,
    },
    /// Rescaled heights beyond what a terrain holds.
    #[error("the rescaled heights would span {low:.4e} to {high:.4e} m, beyond ±{limit:e} m")]
    OutOfRange {
        /// Lowest height afterwards, metres.
        low: f64,
        /// Highest height afterwards, metres.
        high: f64,
        /// The limit, metres.
        limit: f64,
    },
}

#[cfg(test)]
mod tests {
    use super::short_number;

    #[test]
    fn numbers_in_messages_are_short() {
        assert_eq!(short_number(0.25), "0.25");
        assert_eq!(short_number(1500.0), "1500");
        assert_eq!(short_number(-3.0), "-3");
        assert_eq!(short_number(1e300), "1e300");
        assert_eq!(short_number(-2.5e-9), "-2.5e-9");
        assert_eq!(short_number(123_456_789.123), "1.235e8");
        assert_eq!(short_number(f64::INFINITY), "inf");
    }
}

/// Texture maps (masks, normal map, splat) could not be baked as asked.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum TextureError {
    /// Every cell is nodata: there is no surface to bake.
    #[error("every cell is nodata: nothing to bake")]
    NoData,
    /// An option is out of range.
    #[error("texture option `{name}` = {} is out of range: expected {expected}", short_number(*.value))]
    Option {
        /// Option name.
        name: &'static str,
        /// The value given.
        value: f64,
        /// What is accepted.
        expected: &'static str,
    },
    /// A run's map of another size than the heightmap.
    #[error("the run's `{map}` map is {got:?} cells (columns, rows), the heightmap {want:?}")]
    Shape {
        /// The map's name.
        map: String,
        /// Its columns and rows.
        got: (usize, usize),
        /// The heightmap's.
        want: (usize, usize),
    },
    /// A run's map no mask is made from.
    #[error("no mask is made from a run's `{name}` map; the run maps are erosion, deposition and sediment_depth")]
    UnknownRunMap {
        /// The name given.
        name: String,
    },
    /// A mask that is made from a run's map, asked for without that map.
    #[error("the `{mask}` mask is made from a run's `{map}` map, and none was given")]
    NeedsRunMap {
        /// The mask.
        mask: &'static str,
        /// The run's map it needs.
        map: &'static str,
    },
    /// A splat rule that cannot be applied.
    #[error("splat layer {layer}: {problem}")]
    Rule {
        /// The layer (its name, or its number from 1 where it has none).
        layer: String,
        /// What is wrong.
        problem: String,
    },
}
