//! What evolves in the droplet model.

use crate::checkpoint::{CheckpointError, Header, Reader, Writer};
use crate::error::SimError;
use crate::grid::{CellSize, Grid};

/// Quanta per metre of the fixed-point books and deltas.
pub const QUANTA_PER_METRE: f64 = 4_294_967_296.0;

/// Integer books, in quanta of height (2⁻³² m) summed over cells; multiply by the cell area and
/// divide by [`QUANTA_PER_METRE`] for m³.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Books {
    /// Soil eroded into droplets.
    pub eroded: i64,
    /// Sediment deposited onto the terrain.
    pub deposited: i64,
    /// Sediment carried off the map by droplets leaving an open edge.
    pub outflow: i64,
    /// Droplet steps taken.
    pub steps: u64,
}

/// Terrain and maps of a droplet run.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Cell size, m: the step length and the area a droplet drains.
    pub cell_size: CellSize,
    /// Terrain heights, m.
    pub terrain: Vec<f32>,
    /// Total eroded per cell, m.
    pub eroded: Vec<f32>,
    /// Total deposited per cell, m.
    pub deposited: Vec<f32>,
    /// Droplet visits per cell (the path map; the droplets read it as discharge).
    pub flow: Vec<f32>,
    /// Droplets run so far.
    pub droplets: u64,
    /// The books.
    pub books: Books,
    /// Terrain volume at the start, m³ above the reference.
    pub start_volume: f64,
    /// Lowest input height, m: the reference of the volume.
    pub reference_height: f64,
    /// Hardness `H` per cell (0..1): resistance, 1 erodes least (see
    /// `Params::rock_erodibility`), 0 is loose soil. `None`: 0 everywhere.
    pub hardness: Option<Vec<f32>>,
    /// Rain per cell (>= 0): droplets start in a cell with probability proportional to it.
    /// `None`: uniform.
    pub rain: Option<Vec<f32>>,
    /// Cells outside the domain (`true` = nodata), if any: no droplet starts in, crosses or
    /// changes them (see `Params::nodata_border`).
    pub nodata: Option<Vec<bool>>,
    /// Hash of the inputs (heights, nodata mask, maps) the run began from (see
    /// [`crate::checkpoint::Header`]): checkpoints carry it (0: not recorded).
    pub input: u64,
    /// The ground one cell beyond the map's edge, m ([`beyond_edge`]): what a droplet leaving an
    /// open edge steps down onto. Fixed through the run.
    pub beyond: Vec<f32>,
}

/// Where cell `(x, y)`, one cell outside a `w` x `h` map, is kept in [`State::beyond`]: row −1
/// (columns −1 to `w`), row `h` (columns −1 to `w`), column −1 (rows 0 to `h` − 1), column `w`
/// (the same rows). `None` for a cell inside the map or further out.
#[inline]
pub fn beyond_index(w: usize, h: usize, x: isize, y: isize) -> Option<usize> {
    let (wi, hi) = (w as isize, h as isize);
    if !(-1..=wi).contains(&x) || !(-1..=hi).contains(&y) {
        return None;
    }
    let row = w + 2;
    if y == -1 {
        Some((x + 1) as usize)
    } else if y == hi {
        Some(row + (x + 1) as usize)
    } else if x == -1 {
        Some(2 * row + y as usize)
    } else if x == wi {
        Some(2 * row + h + y as usize)
    } else {
        None
    }
}

/// The ground one cell beyond the edge of the `w` x `h` map `terrain` (m; row-major, at least
/// 2 x 2), laid out as [`beyond_index`] says: each edge cell's height continued by its slope
/// across the edge, `2·z(edge) − z(inner)` (a corner with the diagonal's slope). Taken from the
/// input and kept, it holds the edge at the height the terrain had there, as if it went on: a
/// droplet that lowered the edge below the next place beyond fills the dip it leaves, as it does
/// inside the map, where before the edge cell was only ever lowered and the river leaving the map
/// cut a notch to the floor. Stream-power models hold their edge at a fixed base level the same
/// way (Braun & Willett 2013).
pub fn beyond_edge(terrain: &[f32], w: usize, h: usize) -> Vec<f32> {
    let z = |x: usize, y: usize| f64::from(terrain[y * w + x]);
    // the edge cell nearest (x, y) and the cell as far inside it as (x, y) is outside
    let near = |v: isize, n: usize| -> (usize, usize) {
        if v < 0 {
            (0, 1.min(n - 1))
        } else if v >= n as isize {
            (n - 1, n.saturating_sub(2))
        } else {
            (v as usize, v as usize)
        }
    };
    let mut ring = vec![0.0f32; 2 * (w + 2) + 2 * h];
    let mut put = |x: isize, y: isize| {
        let ((ex, ix), (ey, iy)) = (near(x, w), near(y, h));
        if let Some(k) = beyond_index(w, h, x, y) {
            ring[k] = (2.0 * z(ex, ey) - z(ix, iy)) as f32;
        }
    };
    for x in -1..=w as isize {
        put(x, -1);
        put(x, h as isize);
    }
    for y in 0..h as isize {
        put(-1, y);
        put(w as isize, y);
    }
    ring
}

/// Maps a droplet run can use besides the terrain.
#[derive(Clone, Copy, Debug, Default)]
pub struct StartMaps<'a> {
    /// Hardness `H` (0..1, resistance; values outside are clamped).
    pub hardness: Option<&'a Grid<f32>>,
    /// Rain (>= 0; negative and non-finite values count as 0).
    pub rain: Option<&'a Grid<f32>>,
    /// Cells outside the domain (`true` = nodata; see [`crate::Heightmap::nodata_mask`]).
    pub nodata: Option<&'a [bool]>,
}

impl StartMaps<'_> {
    /// The hash of a run's inputs, `terrain` and these maps ([`crate::checkpoint::inputs_hash`]):
    /// what its checkpoints record, so a resume with other inputs is refused.
    pub fn input_hash(&self, terrain: &Grid<f32>) -> u64 {
        crate::checkpoint::inputs_hash(terrain, self.nodata, &[("hardness", self.hardness), ("rain", self.rain)])
    }
}

impl State {
    /// A run on `terrain` (metres). Refuses non-finite heights.
    pub fn new(terrain: &Grid<f32>) -> Result<Self, SimError> {
        Self::with_maps(terrain, StartMaps::default())
    }

    /// A run on `terrain` with a hardness and/or rain map of the same size. Refuses non-finite
    /// heights, maps of another size and a rain map without rain.
    pub fn with_maps(terrain: &Grid<f32>, maps: StartMaps<'_>) -> Result<Self, SimError> {
        use crate::models::inputs::{check_shape, check_values};
        use crate::models::nodata::nodata_mask;
        let hardness = match maps.hardness {
            Some(m) => {
                check_shape("hardness", m, terrain)?;
                check_values("hardness", m, 0.0, 1.0, "0 to 1")?;
                Some(m.as_slice().to_vec())
            }
            None => None,
        };
        let rain: Option<Vec<f32>> = match maps.rain {
            Some(m) => {
                check_shape("rain", m, terrain)?;
                check_values("rain", m, 0.0, f32::MAX, "a finite rate >= 0")?;
                let r: Vec<f32> = m.as_slice().to_vec();
                if !r.iter().any(|&v| v > 0.0) {
                    return Err(SimError::NoRain);
                }
                Some(r)
            }
            None => None,
        };
        let (w, h) = (terrain.width(), terrain.height());
        if let Some(i) = terrain.as_slice().iter().position(|v| !v.is_finite()) {
            return Err(crate::error::GridError::NonFinite { count: 1, row: i / w, col: i % w }.into());
        }
        let reference = terrain.as_slice().iter().fold(f32::INFINITY, |a, &b| a.min(b));
        let n = terrain.len();
        let nodata = nodata_mask(maps.nodata, terrain)?;
        let mut st = Self {
            input: maps.input_hash(terrain),
            width: w,
            height: h,
            cell_size: terrain.cell_size(),
            terrain: terrain.as_slice().to_vec(),
            eroded: vec![0.0; n],
            deposited: vec![0.0; n],
            flow: vec![0.0; n],
            droplets: 0,
            books: Books::default(),
            start_volume: 0.0,
            reference_height: f64::from(reference),
            hardness,
            rain,
            nodata,
            beyond: beyond_edge(terrain.as_slice(), w, h),
        };
        st.start_volume = st.volume();
        Ok(st)
    }

    /// [`State::beyond`], or, in a state built without it (its length does not fit the map),
    /// the ground beyond the present terrain's edge.
    pub fn ground_beyond(&self) -> Vec<f32> {
        if self.beyond.len() == 2 * (self.width + 2) + 2 * self.height {
            self.beyond.clone()
        } else {
            beyond_edge(&self.terrain, self.width, self.height)
        }
    }

    /// Terrain volume above the reference height, m³.
    pub fn volume(&self) -> f64 {
        let sum: f64 = self.terrain.iter().map(|&v| f64::from(v) - self.reference_height).sum();
        sum * self.cell_size.area()
    }

    /// A book entry in m³.
    pub fn cubic_metres(&self, quanta: i64) -> f64 {
        quanta as f64 / QUANTA_PER_METRE * self.cell_size.area()
    }

    /// Relative errors: (books: |eroded − deposited − outflow| / eroded, terrain: |ΔV + eroded −
    /// deposited| / eroded), the second from the f32 fields.
    pub fn balance(&self) -> (f64, f64) {
        let b = &self.books;
        let scale = self.cubic_metres(b.eroded).max(f64::MIN_POSITIVE);
        let books = self.cubic_metres(b.eroded - b.deposited - b.outflow).abs() / scale;
        let change = self.volume() - self.start_volume;
        let terrain = (change + self.cubic_metres(b.eroded) - self.cubic_metres(b.deposited)).abs() / scale;
        (books, terrain)
    }
}

const MAGIC: &[u8; 8] = b"ERODEDRP";
// 3: the hardness map is resistance (1 erodes least), not the erodibility of Jákó & Tóth's equations
// 4: the nodata mask, a byte per cell after the fields (version 3 reads as without one)
// 5: the input's hash in the header
// 6: the ground beyond the edge after the fields (earlier versions take it from their heights)
const VERSION: u32 = 6;
/// Words after magic, version and the header's parameter fingerprint (and input hash).
const HEADER_WORDS: usize = 13;

impl State {
    /// The whole state as bytes: versioned, with a checksum and the parameters' fingerprint.
    pub fn to_bytes(&self, params_fingerprint: u64) -> Vec<u8> {
        let header = Header { params: params_fingerprint, input: self.input };
        let mut w = Writer::new(MAGIC, VERSION, header, 128 + self.terrain.len() * 16);
        for v in [
            self.width as u64,
            self.height as u64,
            self.cell_size.x.to_bits(),
            self.cell_size.y.to_bits(),
            self.droplets,
            self.books.eroded as u64,
            self.books.deposited as u64,
            self.books.outflow as u64,
            self.books.steps,
            self.start_volume.to_bits(),
            self.reference_height.to_bits(),
            u64::from(self.hardness.is_some()),
            u64::from(self.rain.is_some()) | u64::from(self.nodata.is_some()) << 1,
        ] {
            w.u64(v);
        }
        let maps = self.hardness.iter().chain(self.rain.iter());
        for field in [&self.terrain, &self.eroded, &self.deposited, &self.flow].into_iter().chain(maps) {
            w.f32s(field);
        }
        if let Some(mask) = &self.nodata {
            w.mask(mask);
        }
        w.f32s(&self.beyond);
        w.finish()
    }

    /// Reads [`State::to_bytes`] back, checking magic, version, checksum, size and
    /// parameters.
    pub fn from_bytes(bytes: &[u8], params_fingerprint: u64, max_cells: u64) -> Result<Self, SimError> {
        let mut r = Reader::open(bytes, MAGIC, "droplet")?;
        r.expect_version(&[3, 4, 5, VERSION], |v| {
            if v == 2 { " (hardness as resistance; version 2 held it as erodibility): start the run again" } else { "" }
        })?;
        let head = r.header(params_fingerprint, 5)?;
        // word 0 is the parameters' fingerprint, as it was before the header
        let mut header = vec![head.params];
        for _ in 0..HEADER_WORDS {
            header.push(r.u64()?);
        }
        let (w, h) = (header[1], header[2]);
        let n = crate::checkpoint::map_cells(w, h, max_cells)?;
        let (has_hardness, has_rain) = (header[12] == 1, header[13] & 1 == 1);
        let has_nodata = r.version >= 4 && header[13] & 2 == 2;
        let fields = 4 + usize::from(has_hardness) + usize::from(has_rain);
        if r.remaining() < n * 4 * fields + if has_nodata { n } else { 0 } {
            return Err(CheckpointError::Truncated.into());
        }
        let (terrain, eroded, deposited, flow) = (r.f32s(n)?, r.f32s(n)?, r.f32s(n)?, r.f32s(n)?);
        let hardness = if has_hardness { Some(r.f32s(n)?) } else { None };
        let rain = if has_rain { Some(r.f32s(n)?) } else { None };
        let nodata = if has_nodata { Some(r.mask(n)?) } else { None };
        let (w, h) = (w as usize, h as usize);
        // older frames: the edge as the heights now have it
        let beyond = if r.version >= 6 { r.f32s(2 * (w + 2) + 2 * h)? } else { beyond_edge(&terrain, w, h) };
        r.finish()?;
        Ok(Self {
            input: head.input,
            width: w,
            height: h,
            cell_size: CellSize { x: f64::from_bits(header[3]), y: f64::from_bits(header[4]) },
            terrain,
            eroded,
            deposited,
            flow,
            droplets: header[5],
            books: Books {
                eroded: header[6] as i64,
                deposited: header[7] as i64,
                outflow: header[8] as i64,
                steps: header[9],
            },
            start_volume: f64::from_bits(header[10]),
            reference_height: f64::from_bits(header[11]),
            hardness,
            rain,
            nodata,
            beyond,
        })
    }
}

/// A fingerprint of droplet parameters: equal parameters give equal fingerprints.
pub fn params_fingerprint(params: &super::params::Params) -> u64 {
    crate::checkpoint::fnv1a64(format!("{params:?}").as_bytes())
}
