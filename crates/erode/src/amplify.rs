//! Multi-scale erosion (after Schott et al. 2024, "Terrain Amplification using Multi-scale
//! Erosion"): a range grown by uplift and stream power on a coarse grid, then, level by level,
//! resampled to twice the cells and eroded again for a shorter time, so each level keeps the
//! valleys of the one before and cuts the next finer order of them into its hillslopes.
//!
//! Each level is the stream-power model ([`crate::models::stream_power`]) on the previous
//! level's heights resampled ×2 ([`crate::transform::resample`], cubic): cells halve, uplift and
//! erodibility stay, the time shrinks by [`Params::time_ratio`] per level (what has to adjust
//! is a cell's worth of hillslope, and cells halve). Heights in metres, time in years; the same
//! bits on any number of threads, as each step is.

use crate::contract::{Model, StreamPowerRun};
use crate::error::SimError;
use crate::grid::{Grid, Heightmap};
use crate::models::stream_power::{self, StartMaps, State};
use crate::transform::{Filter, resample};

/// How a terrain is amplified.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Params {
    /// Refinements after the coarse level: the result has `2^levels` times the coarse cells
    /// along each axis. Default 3.
    pub levels: u32,
    /// Years of uplift and erosion at the coarse level. Default 10,000,000 (a range grown from a
    /// plain; 0 keeps a given terrain as it is at that level).
    pub coarse_years: f64,
    /// Years at the first finer level. Default 1,000,000.
    pub fine_years: f64,
    /// Each later level runs this fraction of the years of the one before. Default 0.2.
    pub time_ratio: f64,
    /// Relief of the noise added to each refined level before it erodes, as a fraction of its
    /// cell size (0.5: 12.5 m on 25 m cells, slopes of ±0.25 between neighbours): what the noisy
    /// plain is to the coarse level, the seed of the next finer order of gullies, which a smooth
    /// resample does not hold (without it the finest hillslopes are planar facets). The map's
    /// edge cells get none. Default 0.5.
    pub roughness: f64,
    /// Seed of that noise. Default 1.
    pub seed: u64,
    /// The stream-power parameters of every level (`dt_years` is each level's step, shortened
    /// where a level has fewer years). Default: the model's, with multiple flow directions.
    pub stream_power: stream_power::Params,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            levels: 3,
            coarse_years: 1e7,
            fine_years: 1e6,
            time_ratio: 0.2,
            roughness: 0.5,
            seed: 1,
            stream_power: stream_power::Params { flow: "mfd".into(), ..Default::default() },
        }
    }
}

/// Most refinements (each quadruples the cells).
pub const MAX_LEVELS: u32 = 8;

impl Params {
    /// Checks every field, the stream-power parameters included.
    pub fn validate(&self) -> Result<(), crate::ParamError> {
        let err = |name, value, expected| Err(crate::ParamError { name, value, expected });
        if self.levels > MAX_LEVELS {
            return err("levels", f64::from(self.levels), "0 to 8");
        }
        let years = |v: f64| v.is_finite() && (0.0..=1e9).contains(&v);
        if !years(self.coarse_years) {
            return err("coarse_years", self.coarse_years, "0 to 1e9 years");
        }
        if !years(self.fine_years) {
            return err("fine_years", self.fine_years, "0 to 1e9 years");
        }
        if !(self.time_ratio.is_finite() && self.time_ratio > 0.0 && self.time_ratio <= 1.0) {
            return err("time_ratio", self.time_ratio, "> 0 and <= 1");
        }
        if !(self.roughness.is_finite() && (0.0..=1.0).contains(&self.roughness)) {
            return err("roughness", self.roughness, "0 to 1 (of a cell size)");
        }
        self.stream_power.validate()
    }

    /// Years of level `k` (0 the coarse one).
    pub fn years(&self, k: u32) -> f64 {
        if k == 0 { self.coarse_years } else { self.fine_years * self.time_ratio.powi(k as i32 - 1) }
    }

    /// Steps of level `k`: its years in steps of at most `dt_years`, at least one when it has
    /// any years.
    pub fn steps(&self, k: u32) -> u64 {
        (self.years(k) / self.stream_power.dt_years).ceil() as u64
    }
}

/// One level's result.
#[derive(Clone, Debug)]
pub struct Level {
    /// Its heights, metres.
    pub map: Heightmap,
    /// Years it ran.
    pub years: f64,
    /// Stream-power steps it ran.
    pub steps: u64,
    /// Wall time of the level (its resample included), seconds.
    pub seconds: f64,
}

/// Amplifies `start` (the coarse level's terrain, metres) as `p` says, calling `progress(level,
/// steps done, steps of the level)` after each step; `progress` returning `false` stops the
/// work (`Ok(None)`). Returns every level, coarse first: the last is the result, `2^levels`
/// times the cells along each axis at `1/2^levels` the cell size.
pub fn amplify(
    start: &Heightmap,
    p: &Params,
    progress: &mut dyn FnMut(u32, u64, u64) -> bool,
) -> Result<Option<Vec<Level>>, SimError> {
    p.validate()?;
    let mut levels: Vec<Level> = Vec::with_capacity(p.levels as usize + 1);
    for k in 0..=p.levels {
        let started = std::time::Instant::now();
        let terrain = match levels.last() {
            None => start.clone(),
            Some(before) => {
                let g = &before.map.heights;
                let mut map = resample(&before.map, 2 * g.width(), 2 * g.height(), Filter::Cubic)?;
                roughen(&mut map, p.roughness, p.seed, k);
                map
            }
        };
        let (years, steps) = (p.years(k), p.steps(k));
        let map = if steps == 0 {
            terrain
        } else {
            let params = stream_power::Params { dt_years: years / steps as f64, ..p.stream_power.clone() };
            let maps = StartMaps { nodata: terrain.nodata_mask(), ..Default::default() };
            let state = State::with_maps(&terrain.heights, maps, params.rock_erodibility)?;
            let mut run = StreamPowerRun::new(params, state)?;
            for done in 1..=steps {
                run.advance(1, &mut |_| {})?;
                if !progress(k, done, steps) {
                    return Ok(None);
                }
            }
            let st = run.state();
            let heights = st.terrain.iter().map(|&z| z as f32).collect();
            let grid = Grid::from_vec(st.width, st.height, st.cell_size, heights)?;
            Heightmap::with_nodata(grid, terrain.nodata_mask().map(<[bool]>::to_vec))?
        };
        levels.push(Level { map, years, steps, seconds: started.elapsed().as_secs_f64() });
    }
    Ok(Some(levels))
}

/// Adds uniform noise of `roughness` cell sizes' relief (zero mean) to every valid cell of
/// level `k`: the same for a seed and level on any thread count (one keyed stream per level).
fn roughen(map: &mut Heightmap, roughness: f64, seed: u64, k: u32) {
    if roughness <= 0.0 {
        return;
    }
    let cell = map.heights.cell_size();
    let relief = roughness * cell.x.min(cell.y);
    let mut rng = crate::rng::SplitMix64::keyed(seed, u64::from(k));
    let mask = map.nodata_mask().map(<[bool]>::to_vec);
    let (w, rows) = (map.heights.width(), map.heights.height());
    for (i, h) in map.heights.as_mut_slice().iter_mut().enumerate() {
        let r = rng.next_f64() - 0.5;
        // the map's edge is base level: it stays where the level before left it
        let (row, col) = (i / w, i % w);
        let edge = row == 0 || col == 0 || row + 1 == rows || col + 1 == w;
        if !edge && !mask.as_ref().is_some_and(|m| m[i]) {
            *h = (f64::from(*h) + relief * r) as f32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CellSize;
    use crate::terrain::bench::noisy_plain;

    #[test]
    fn levels_double_the_cells_and_keep_the_extent() {
        let plain = Heightmap::new(noisy_plain(16, 800.0, 3).unwrap()).unwrap();
        let p = Params { levels: 2, coarse_years: 2e5, fine_years: 2e4, ..Default::default() };
        let levels = amplify(&plain, &p, &mut |_, _, _| true).unwrap().unwrap();
        assert_eq!(levels.len(), 3);
        let last = &levels[2].map.heights;
        assert_eq!((last.width(), last.height(), last.cell_size()), (64, 64, CellSize::square(200.0)));
        assert_eq!((levels[0].steps, levels[1].steps, levels[2].steps), (20, 2, 1));
        assert!((levels[2].years - 4e3).abs() < 1e-9);
        let bad = Params { time_ratio: 0.0, ..Default::default() };
        assert!(amplify(&plain, &bad, &mut |_, _, _| true).is_err());
        // stopped after the first step: nothing
        assert!(amplify(&plain, &p, &mut |_, done, _| done < 1).unwrap().is_none());
    }
}
