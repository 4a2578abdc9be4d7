//! Typed errors of the library. Each carries the data that explains it.

/// A grid could not be built as asked.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum GridError {
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
    /// A cell size that is not a positive finite number of metres.
    #[error("cell size must be positive and finite, got {x} x {y} m")]
    BadCellSize {
        /// Along x, metres.
        x: f64,
        /// Along y, metres.
        y: f64,
    },
    /// Heights that are NaN or infinite where no nodata was declared.
    #[error(
        "{count} height(s) are NaN or infinite, the first at row {row}, column {col} (declare a nodata value if they mark missing data)"
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
    #[error("terrain parameter `{name}` = {value} is out of range: {expected}")]
    Parameter {
        /// Parameter name.
        name: &'static str,
        /// The value given.
        value: f64,
        /// What is accepted.
        expected: &'static str,
    },
}

/// A model parameter is out of range.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[error("parameter `{name}` = {value} is out of range: expected {expected}")]
pub struct ParamError {
    /// Parameter name (the TOML key).
    pub name: &'static str,
    /// The value given.
    pub value: f64,
    /// What is accepted.
    pub expected: &'static str,
}

/// A simulation could not be set up or continued.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum SimError {
    /// A parameter is out of range.
    #[error(transparent)]
    Param(#[from] ParamError),
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
    /// A mode needs a map that was not given.
    #[error("{0}")]
    MissingMap(&'static str),
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
    /// The GPU backend failed (no adapter, a limit, validation).
    #[error("GPU: {0}")]
    Gpu(String),
    /// An option the GPU backend does not run yet.
    #[error("not on the GPU yet: {0} (use --backend cpu)")]
    NotOnGpu(&'static str),
    /// A rain map with no cell above 0: no droplet can start.
    #[error("the rain map has no cell above 0, so no droplet can start")]
    NoRain,
    /// A checkpoint could not be decoded.
    #[error("checkpoint: {0}")]
    Checkpoint(String),
}
