//! What evolves in the thermal model: heights (f64, m), where the run began, the books.

use crate::checkpoint::{CheckpointError, Header, Reader, Writer, map_cells};
use crate::models::inputs::{check_shape, check_values};
use crate::models::make::Inputs;
use crate::{CellSize, SimError};

/// The books, m³: what slid off cells and what arrived on others (equal up to rounding: no
/// material leaves the domain).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Books {
    /// Volume that left cells steeper than their angle of repose.
    pub eroded: f64,
    /// Volume that arrived on their lower neighbours.
    pub deposited: f64,
}

/// The thermal model's state.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Cell size, m.
    pub cell_size: CellSize,
    /// Heights, m, row-major (0 at nodata cells).
    pub terrain: Vec<f64>,
    /// The heights the run began from, m.
    pub start: Vec<f32>,
    /// Hardness 0..1 per cell, if a map was given.
    pub hardness: Option<Vec<f32>>,
    /// Cells outside the domain, if any.
    pub nodata: Option<Vec<bool>>,
    /// Iterations done.
    pub iterations: u64,
    /// The books.
    pub books: Books,
    /// Volume at the start, m³ (above 0 m).
    pub start_volume: f64,
    /// The hash of the inputs the run began from.
    pub input: u64,
}

impl State {
    /// The state at the start of a run on `inputs` (its `hardness` map read if given).
    pub fn new(inputs: &Inputs) -> Result<Self, SimError> {
        let t = inputs.terrain;
        let (width, height) = (t.width(), t.height());
        let nodata = inputs.nodata.map(<[bool]>::to_vec);
        let inside = |i: usize| nodata.as_ref().is_none_or(|m| !m[i]);
        if let Some(i) = (0..t.len()).find(|&i| inside(i) && !t.as_slice()[i].is_finite()) {
            return Err(SimError::MapValue {
                what: "height",
                value: f64::from(t.as_slice()[i]),
                row: i / width,
                col: i % width,
                expected: "a finite height (or nodata)",
            });
        }
        let hardness = match inputs.map("hardness") {
            Some(h) => {
                check_shape("hardness", h, t)?;
                check_values("hardness", h, 0.0, 1.0, "0 to 1")?;
                Some(h.as_slice().to_vec())
            }
            None => None,
        };
        let terrain: Vec<f64> =
            t.as_slice().iter().enumerate().map(|(i, &z)| if inside(i) { f64::from(z) } else { 0.0 }).collect();
        let mut st = Self {
            width,
            height,
            cell_size: t.cell_size(),
            start: terrain.iter().map(|&z| z as f32).collect(),
            terrain,
            hardness,
            nodata,
            iterations: 0,
            books: Books::default(),
            start_volume: 0.0,
            input: inputs.hash(),
        };
        st.start_volume = st.volume();
        Ok(st)
    }

    /// Whether cell `i` is inside the domain.
    pub fn inside(&self, i: usize) -> bool {
        self.nodata.as_ref().is_none_or(|m| !m[i])
    }

    /// Volume above 0 m of the cells inside the domain, m³ (summed by row, rows in order).
    pub fn volume(&self) -> f64 {
        let area = self.cell_size.x * self.cell_size.y;
        self.terrain
            .chunks(self.width.max(1))
            .enumerate()
            .map(|(r, row)| {
                row.iter().enumerate().filter(|&(c, _)| self.inside(r * self.width + c)).map(|(_, &z)| z).sum::<f64>()
            })
            .sum::<f64>()
            * area
    }

    /// Relative error of the books: the volume's change against what arrived less what left,
    /// over what left (0 before anything moved).
    pub fn relative_error(&self) -> f64 {
        let change = self.volume() - self.start_volume;
        let booked = self.books.deposited - self.books.eroded;
        let scale = self.books.eroded.max(self.start_volume.abs() * f64::EPSILON);
        if scale > 0.0 { (change - booked).abs() / scale } else { 0.0 }
    }
}

const MAGIC: &[u8; 8] = b"ERODETHM";
const VERSION: u32 = 1;

impl State {
    /// The whole state as bytes: versioned, with a checksum and the parameters' fingerprint.
    pub fn to_bytes(&self, params_fingerprint: u64) -> Vec<u8> {
        let header = Header { params: params_fingerprint, input: self.input };
        let mut w = Writer::new(MAGIC, VERSION, header, 128 + self.terrain.len() * 17);
        for v in [self.width as u64, self.height as u64, self.iterations] {
            w.u64(v);
        }
        for v in [self.cell_size.x, self.cell_size.y, self.books.eroded, self.books.deposited, self.start_volume] {
            w.f64(v);
        }
        w.u64(u64::from(self.hardness.is_some()) | u64::from(self.nodata.is_some()) << 1);
        w.f64s(&self.terrain);
        w.f32s(&self.start);
        if let Some(h) = &self.hardness {
            w.f32s(h);
        }
        if let Some(m) = &self.nodata {
            w.mask(m);
        }
        w.finish()
    }

    /// Reads [`State::to_bytes`] back, checking magic, version, checksum, size and parameters.
    pub fn from_bytes(bytes: &[u8], params_fingerprint: u64, max_cells: u64) -> Result<Self, SimError> {
        let mut r = Reader::open(bytes, MAGIC, super::NAME)?;
        r.expect_version(&[VERSION], |_| "")?;
        let head = r.header(params_fingerprint, 1)?;
        let (w, h, iterations) = (r.u64()?, r.u64()?, r.u64()?);
        let n = map_cells(w, h, max_cells)?;
        let f = r.f64_array::<5>()?;
        let flags = r.u64()?;
        let need = n * (12 + 4 * (flags & 1) as usize) + if flags & 2 != 0 { n } else { 0 };
        if r.remaining() < need {
            return Err(CheckpointError::Truncated.into());
        }
        let terrain = r.f64s(n)?;
        let start = r.f32s(n)?;
        let hardness = if flags & 1 != 0 { Some(r.f32s(n)?) } else { None };
        let nodata = if flags & 2 != 0 { Some(r.mask(n)?) } else { None };
        r.finish()?;
        let cell_size = CellSize { x: f[0], y: f[1] };
        cell_size.check().map_err(|e| CheckpointError::Invalid(format!("cell size: {e}")))?;
        Ok(Self {
            width: w as usize,
            height: h as usize,
            cell_size,
            terrain,
            start,
            hardness,
            nodata,
            iterations,
            books: Books { eroded: f[2], deposited: f[3] },
            start_volume: f[4],
            input: head.input,
        })
    }
}

/// A fingerprint of the parameters: equal parameters give equal fingerprints.
pub fn params_fingerprint(params: &super::Params) -> u64 {
    crate::checkpoint::fnv1a64(format!("{params:?}").as_bytes())
}
