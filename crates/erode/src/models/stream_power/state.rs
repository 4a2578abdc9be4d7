//! What evolves in the stream-power model, and its books.

use crate::checkpoint::{CheckpointError, Header, Reader, Writer, map_cells};
use crate::error::{GridError, SimError};
use crate::grid::{CellSize, Grid};

/// Volumes since the start of the run, m³ (f64, summed cell by cell in a fixed order).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Books {
    /// Rock raised by uplift.
    pub uplifted: f64,
    /// Rock eroded by rivers (detachment-limited: it leaves through base level).
    pub eroded: f64,
    /// Soil carried by hillslope diffusion into base-level cells (sea, open edges, nodata
    /// holes), where it leaves.
    pub diffused_out: f64,
    /// Sediment that filled closed depressions (lakes fill instantly; taken from what the
    /// rivers carry, so it does not leave).
    pub filled: f64,
}

impl Books {
    /// What left the domain through base level: eroded and diffused out, less what the
    /// depressions kept.
    pub fn left_through_base_level(&self) -> f64 {
        self.eroded + self.diffused_out - self.filled
    }
}

/// Maps a run can use besides the terrain (all of the terrain's size).
#[derive(Clone, Copy, Debug, Default)]
pub struct StartMaps<'a> {
    /// Multiplies the uplift rate cell by cell (finite; negative values subside).
    pub uplift: Option<&'a Grid<f32>>,
    /// Multiplies the erodibility cell by cell (>= 0).
    pub erodibility: Option<&'a Grid<f32>>,
    /// Hardness `H` (0..1, 1 erodes least): erodibility times `1 − H·(1 − rock_erodibility)`.
    pub hardness: Option<&'a Grid<f32>>,
    /// Cells outside the domain (`true` = nodata): base level around them.
    pub nodata: Option<&'a [bool]>,
}

impl StartMaps<'_> {
    /// The hash of a run's inputs, `terrain` and these maps ([`crate::checkpoint::inputs_hash`]):
    /// what its checkpoints record, so a resume with other inputs is refused.
    pub fn input_hash(&self, terrain: &Grid<f32>) -> u64 {
        crate::checkpoint::inputs_hash(
            terrain,
            self.nodata,
            &[("uplift", self.uplift), ("erodibility", self.erodibility), ("hardness", self.hardness)],
        )
    }
}

/// Terrain and maps of a stream-power run.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Cell size, m.
    pub cell_size: CellSize,
    /// Heights, m (f64: a step's change is millimetres on kilometres).
    pub terrain: Vec<f64>,
    /// Uplift multiplier per cell (`None`: 1).
    pub uplift: Option<Vec<f32>>,
    /// Erodibility multiplier per cell, hardness already applied (`None`: 1).
    pub erodibility: Option<Vec<f32>>,
    /// Cells outside the domain, if any.
    pub nodata: Option<Vec<bool>>,
    /// Drainage area of each cell after the last step, m² (its own cell included).
    pub drainage_area: Vec<f32>,
    /// River erosion rate of the last step, m/yr.
    pub erosion_rate: Vec<f32>,
    /// Steps run.
    pub steps: u64,
    /// Years simulated.
    pub years: f64,
    /// The books.
    pub books: Books,
    /// Volume above the reference height at the start, m³.
    pub start_volume: f64,
    /// Lowest input height, m: the reference of the volumes.
    pub reference_height: f64,
    /// Hash of the inputs (heights, nodata mask, maps; [`StartMaps::input_hash`]): checkpoints
    /// carry it.
    pub input: u64,
}

impl State {
    /// A run on `terrain` (metres) with optional maps. Refuses non-finite heights, maps of
    /// another size or with values they cannot mean, and a map with no data.
    pub fn with_maps(terrain: &Grid<f32>, maps: StartMaps<'_>, rock_erodibility: f64) -> Result<Self, SimError> {
        use crate::models::inputs::{check_shape, check_values};
        use crate::models::nodata::nodata_mask;
        let (w, h) = (terrain.width(), terrain.height());
        let nodata = nodata_mask(maps.nodata, terrain)?;
        let outside = |i: usize| nodata.as_ref().is_some_and(|m| m[i]);
        if let Some(i) = (0..terrain.len()).find(|&i| !outside(i) && !terrain.as_slice()[i].is_finite()) {
            return Err(GridError::NonFinite { count: 1, row: i / w, col: i % w }.into());
        }
        if (0..terrain.len()).all(outside) {
            return Err(GridError::AllNodata.into());
        }
        let uplift = match maps.uplift {
            Some(m) => {
                check_shape("uplift", m, terrain)?;
                check_values("uplift", m, f32::MIN, f32::MAX, "a finite multiplier of the uplift rate")?;
                Some(m.as_slice().to_vec())
            }
            None => None,
        };
        let erodibility = match (maps.erodibility, maps.hardness) {
            (None, None) => None,
            (k, hardness) => {
                let mut scale = vec![1.0f32; terrain.len()];
                if let Some(k) = k {
                    check_shape("erodibility", k, terrain)?;
                    check_values("erodibility", k, 0.0, f32::MAX, "a finite multiplier >= 0")?;
                    scale.copy_from_slice(k.as_slice());
                }
                if let Some(hd) = hardness {
                    check_shape("hardness", hd, terrain)?;
                    check_values("hardness", hd, 0.0, 1.0, "0 to 1")?;
                    let soft = 1.0 - rock_erodibility as f32;
                    for (s, &hv) in scale.iter_mut().zip(hd.as_slice()) {
                        *s *= 1.0 - hv * soft;
                    }
                }
                Some(scale)
            }
        };
        let heights: Vec<f64> =
            terrain.as_slice().iter().enumerate().map(|(i, &v)| if outside(i) { 0.0 } else { f64::from(v) }).collect();
        let reference = (0..heights.len()).filter(|&i| !outside(i)).map(|i| heights[i]).fold(f64::INFINITY, f64::min);
        let n = terrain.len();
        let mut st = Self {
            input: maps.input_hash(terrain),
            width: w,
            height: h,
            cell_size: terrain.cell_size(),
            terrain: heights,
            uplift,
            erodibility,
            nodata,
            drainage_area: vec![0.0; n],
            erosion_rate: vec![0.0; n],
            steps: 0,
            years: 0.0,
            books: Books::default(),
            start_volume: 0.0,
            reference_height: reference,
        };
        st.start_volume = st.volume();
        Ok(st)
    }

    /// Whether cell `i` is inside the domain.
    #[inline]
    pub fn inside(&self, i: usize) -> bool {
        self.nodata.as_ref().is_none_or(|m| !m[i])
    }

    /// Volume of the domain above the reference height, m³.
    pub fn volume(&self) -> f64 {
        let sum: f64 =
            (0..self.terrain.len()).filter(|&i| self.inside(i)).map(|i| self.terrain[i] - self.reference_height).sum();
        sum * self.cell_size.area()
    }

    /// `|ΔV − (uplifted − eroded − diffused_out + filled)|` relative to the largest term (0 when
    /// nothing moved).
    pub fn relative_error(&self) -> f64 {
        let b = &self.books;
        let change = self.volume() - self.start_volume;
        let scale =
            [b.uplifted.abs(), b.eroded, b.diffused_out.abs(), b.filled, change.abs()].into_iter().fold(0.0, f64::max);
        if scale == 0.0 {
            return 0.0;
        }
        (change - (b.uplifted - b.eroded - b.diffused_out + b.filled)).abs() / scale
    }

    /// The output map `name` (`None` for no such map): `height` (m), `drainage_area` (m²),
    /// `erosion_rate` (m/yr), `uplift` (m/yr, for `uplift_rate` the parameter).
    pub fn output_map(&self, name: &str, uplift_rate: f64) -> Option<Vec<f32>> {
        Some(match name {
            "height" => self.terrain.iter().map(|&v| v as f32).collect(),
            "drainage_area" => self.drainage_area.clone(),
            "erosion_rate" => self.erosion_rate.clone(),
            "uplift" => (0..self.terrain.len())
                .map(|i| (uplift_rate * self.uplift.as_ref().map_or(1.0, |u| f64::from(u[i]))) as f32)
                .collect(),
            _ => return None,
        })
    }
}

const MAGIC: &[u8; 8] = b"ERODESPL";
const VERSION: u32 = 1;

impl State {
    /// The whole state as bytes: versioned, with a checksum and the parameters' fingerprint.
    pub fn to_bytes(&self, params_fingerprint: u64) -> Vec<u8> {
        let header = Header { params: params_fingerprint, input: self.input };
        let mut w = Writer::new(MAGIC, VERSION, header, 128 + self.terrain.len() * 20);
        let b = &self.books;
        for v in [self.width as u64, self.height as u64, self.steps] {
            w.u64(v);
        }
        for v in [
            self.cell_size.x,
            self.cell_size.y,
            self.years,
            b.uplifted,
            b.eroded,
            b.diffused_out,
            b.filled,
            self.start_volume,
            self.reference_height,
        ] {
            w.f64(v);
        }
        w.u64(
            u64::from(self.uplift.is_some())
                | u64::from(self.erodibility.is_some()) << 1
                | u64::from(self.nodata.is_some()) << 2,
        );
        w.f64s(&self.terrain);
        w.f32s(&self.drainage_area);
        w.f32s(&self.erosion_rate);
        for m in self.uplift.iter().chain(self.erodibility.iter()) {
            w.f32s(m);
        }
        if let Some(m) = &self.nodata {
            w.mask(m);
        }
        w.finish()
    }

    /// Reads [`State::to_bytes`] back, checking magic, version, checksum, size and parameters.
    pub fn from_bytes(bytes: &[u8], params_fingerprint: u64, max_cells: u64) -> Result<Self, SimError> {
        let mut r = Reader::open(bytes, MAGIC, "stream-power")?;
        r.expect_version(&[VERSION], |_| "")?;
        let head = r.header(params_fingerprint, 1)?;
        let (w, h, steps) = (r.u64()?, r.u64()?, r.u64()?);
        let n = map_cells(w, h, max_cells)?;
        let f = r.f64_array::<9>()?;
        let flags = r.u64()?;
        let maps = (flags & 1) + (flags >> 1 & 1);
        let need = n * (16 + 4 * maps as usize) + if flags & 4 != 0 { n } else { 0 };
        if r.remaining() < need {
            return Err(CheckpointError::Truncated.into());
        }
        let terrain = r.f64s(n)?;
        let drainage_area = r.f32s(n)?;
        let erosion_rate = r.f32s(n)?;
        let uplift = if flags & 1 != 0 { Some(r.f32s(n)?) } else { None };
        let erodibility = if flags & 2 != 0 { Some(r.f32s(n)?) } else { None };
        let nodata = if flags & 4 != 0 { Some(r.mask(n)?) } else { None };
        r.finish()?;
        Ok(Self {
            width: w as usize,
            height: h as usize,
            cell_size: CellSize { x: f[0], y: f[1] },
            terrain,
            uplift,
            erodibility,
            nodata,
            drainage_area,
            erosion_rate,
            steps,
            years: f[2],
            books: Books { uplifted: f[3], eroded: f[4], diffused_out: f[5], filled: f[6] },
            start_volume: f[7],
            reference_height: f[8],
            input: head.input,
        })
    }
}

/// A fingerprint of the parameters: equal parameters give equal fingerprints.
pub fn params_fingerprint(params: &super::Params) -> u64 {
    crate::checkpoint::fnv1a64(format!("{params:?}").as_bytes())
}
