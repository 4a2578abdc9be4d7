//! Errors of the file formats. A [`FormatError`] says what is wrong with some bytes; an
//! [`Error`] adds the path it came from.

use std::path::PathBuf;

/// What is wrong with a file's content, or with the options given for it.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// Zero bytes.
    #[error("the file is empty")]
    Empty,
    /// The file ends before its header says it should.
    #[error("the file is truncated: {0}")]
    Truncated(String),
    /// The bytes are not a valid file of the format.
    #[error("not a valid {format} file: {reason}")]
    Corrupt {
        /// Format name.
        format: &'static str,
        /// What the decoder found.
        reason: String,
    },
    /// A valid file of a variant erode does not read.
    #[error("unsupported {format} file: {what}")]
    Unsupported {
        /// Format name.
        format: &'static str,
        /// The variant.
        what: String,
    },
    /// The header claims more cells than the configured cap.
    #[error(
        "the header claims {width} x {height} cells, more than the limit of {max_cells} cells (raise it with --max-cells if this is intended)"
    )]
    TooLarge {
        /// Claimed columns.
        width: u64,
        /// Claimed rows.
        height: u64,
        /// The cap.
        max_cells: u64,
    },
    /// Zero width or height in the header.
    #[error("the header claims a zero-sized image ({width} x {height})")]
    ZeroSize {
        /// Claimed columns.
        width: u64,
        /// Claimed rows.
        height: u64,
    },
    /// The options given for the file do not fit it (a raw file's size, a height range).
    #[error("{0}")]
    Options(String),
    /// The decoded grid is not a valid heightmap (e.g. NaN heights without a nodata value).
    #[error(transparent)]
    Grid(#[from] erode::GridError),
}

/// A heightmap could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file's content or options are wrong.
    #[error("{}: {source}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        source: FormatError,
    },
    /// The operating system refused a read or write.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The extension names no format erode knows.
    #[error("{}: unknown heightmap format; use one of {}", path.display(), crate::Format::EXTENSIONS)]
    UnknownFormat {
        /// The file.
        path: PathBuf,
    },
    /// An output cannot be written where asked.
    #[error("{}: cannot write here: {reason}", path.display())]
    Output {
        /// The target.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

impl Error {
    pub(crate) fn format(path: &std::path::Path, source: FormatError) -> Self {
        Self::Format { path: path.to_path_buf(), source }
    }

    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        Self::Io { path: path.to_path_buf(), source }
    }
}

/// Shorthand for a corrupt-file error.
pub(crate) fn corrupt(format: &'static str, reason: impl std::fmt::Display) -> FormatError {
    FormatError::Corrupt { format, reason: reason.to_string() }
}

/// Shorthand for an unsupported-variant error.
pub(crate) fn unsupported(format: &'static str, what: impl std::fmt::Display) -> FormatError {
    FormatError::Unsupported { format, what: what.to_string() }
}
