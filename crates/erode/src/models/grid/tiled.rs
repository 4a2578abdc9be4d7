//! The grid model run tile by tile: a map whose state does not fit in memory (160 bytes a cell
//! on the CPU: 43 GB at 16384²) eroded one window at a time, each window a tile's core and an
//! overlap around it, the results blended across the overlaps so no seam shows.
//!
//! What the whole map decides is decided once for the whole map, before any tile runs:
//! - the steady start (lakes full, the steady discharge of the rain elsewhere; Priority-Flood
//!   and D8 over every cell), so every tile starts with the water of its whole catchment;
//! - the water each tile receives across its edges: the steady discharge of every cell outside
//!   the window whose D8 receiver is inside it enters there as a source, all run long, so a
//!   river crossing a tile's edge keeps its upstream water;
//! - noise hardness (its fBm and the height range it follows span the whole map);
//! - the water surface beyond each window's edges (the steady start's): water leaving a tile
//!   runs down to it, never up it, so a pond an edge cuts stays and a river leaves as it would
//!   (to dry ground at the edge cell's level, as a map's open edge has it, a real DEM's ponds
//!   drained through every tile edge).
//!
//! What differs from one run over the whole map, and why it stays small:
//! - information crosses a tile's edge only as those steady levels and inflow; sediment enters
//!   clean. These edge effects reach into the window a distance the flow travels in a run;
//!   `overlap` keeps them out of the cells that count, and the blend uses only cells at least
//!   `overlap / 2` from an edge;
//! - the map's edges must be open (`border = "open"`, the default): a tile has one rule for all
//!   its edges;
//! - the time step follows each tile's deepest water (`dt = 0`), so tiles take their own
//!   sub-steps;
//! - random rain (`rain_mode = "buckets"`) draws per tile.
//!
//! The blend: tile `k`'s weight is 1 on its core, ramping linearly to 0 over a band `overlap`
//! cells wide centred on each inner edge of the core (a map's edge is not blended); the
//! weights of the tiles over any cell add up to 1. Heights are blended as changes from the
//! input, so the f32 sums resolve millimetres at any altitude.

use std::ops::Range;
use std::time::Duration;

use rayon::prelude::*;

use super::params::{Border, HardnessMode, Params, Source, StartWater, Units};
use super::state::{Books, StartMaps, State};
use super::{CpuSim, Stage, start};
use crate::analysis::flow;
use crate::error::SimError;
use crate::grid::{CellSize, Grid};
use crate::models::inputs::check_shape;
use crate::models::nodata::nodata_mask;

/// A rectangle of cells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// Its rows.
    pub rows: Range<usize>,
    /// Its columns.
    pub cols: Range<usize>,
}

impl Window {
    /// Columns.
    pub fn width(&self) -> usize {
        self.cols.len()
    }

    /// Rows.
    pub fn height(&self) -> usize {
        self.rows.len()
    }

    /// The cells of `map` (row-major, `width` columns) inside, row-major.
    pub fn cut<T: Copy>(&self, map: &[T], width: usize) -> Vec<T> {
        self.rows.clone().flat_map(|r| map[r * width..][self.cols.clone()].iter().copied()).collect()
    }

    /// Whether cell (`row`, `col`) of the map is inside.
    pub fn contains(&self, row: usize, col: usize) -> bool {
        self.rows.contains(&row) && self.cols.contains(&col)
    }
}

/// How a map is cut into tiles: cores of about `tile` cells a side that cover the map once (as
/// even as the map's size allows), each run in a window `overlap` cells wider on every side that
/// is not the map's edge.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    width: usize,
    height: usize,
    overlap: usize,
    rows: Vec<usize>,
    cols: Vec<usize>,
}

/// Why a layout cannot be made.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum LayoutError {
    /// The tile is smaller than the smallest a run takes.
    #[error("a tile of {tile} cells is smaller than the smallest, {}", Layout::MIN_TILE)]
    TileTooSmall {
        /// The tile asked for, cells a side.
        tile: usize,
    },
    /// The map's edges are not open: a tile's edges inside the map must let its water go on
    /// into its neighbours, and a tile has one border rule for all its edges.
    #[error("tiles need border = \"open\" (a tile's edges pass its water on to its neighbours), not \"{0}\"")]
    Border(&'static str),
    /// The overlap is wider than the tiles' cores: the blends of a core's two sides would meet.
    #[error("an overlap of {overlap} cells is wider than the tiles' cores ({core} cells): take larger tiles or a smaller overlap")]
    OverlapTooWide {
        /// The narrowest core, cells.
        core: usize,
        /// The overlap, cells.
        overlap: usize,
    },
}

impl Layout {
    /// The smallest tile, cells a side.
    pub const MIN_TILE: usize = 16;

    /// Cores of at most `tile` cells a side over a `width` x `height` map, windows `overlap`
    /// cells wider.
    pub fn new(width: usize, height: usize, tile: usize, overlap: usize) -> Result<Self, LayoutError> {
        if tile < Self::MIN_TILE {
            return Err(LayoutError::TileTooSmall { tile });
        }
        let cuts = |len: usize| {
            let n = len.div_ceil(tile).max(1);
            (0..=n).map(|k| k * len / n).collect::<Vec<_>>()
        };
        let (rows, cols) = (cuts(height), cuts(width));
        // the narrowest core with an inner edge (a map one tile wide has none across)
        let narrowest = [&rows, &cols].into_iter().filter(|c| c.len() > 2).flat_map(|c| c.windows(2).map(|w| w[1] - w[0])).min();
        if let Some(core) = narrowest.filter(|&core| overlap > core) {
            return Err(LayoutError::OverlapTooWide { core, overlap });
        }
        Ok(Self { width, height, overlap, rows, cols })
    }

    /// Tiles in all.
    pub fn len(&self) -> usize {
        (self.rows.len() - 1) * (self.cols.len() - 1)
    }

    /// Always false: a layout has a tile.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Tiles down and across.
    pub fn grid(&self) -> (usize, usize) {
        (self.rows.len() - 1, self.cols.len() - 1)
    }

    /// The overlap, cells.
    pub fn overlap(&self) -> usize {
        self.overlap
    }

    /// The cells tile `k` (row-major) is the result for.
    pub fn core(&self, k: usize) -> Window {
        let (r, c) = (k / self.grid().1, k % self.grid().1);
        Window { rows: self.rows[r]..self.rows[r + 1], cols: self.cols[c]..self.cols[c + 1] }
    }

    /// The cells tile `k` runs on: its core and the overlap.
    pub fn window(&self, k: usize) -> Window {
        let core = self.core(k);
        let widen = |r: Range<usize>, len: usize| r.start.saturating_sub(self.overlap)..(r.end + self.overlap).min(len);
        Window { rows: widen(core.rows, self.height), cols: widen(core.cols, self.width) }
    }

    /// Tile `k`'s weight at cell (`row`, `col`) of the map: 1 on its core away from the blends,
    /// 0 outside its window; the weights of all tiles add up to 1 on every cell.
    pub fn weight(&self, k: usize, row: usize, col: usize) -> f32 {
        let core = self.core(k);
        self.ramp(&core.rows, self.height, row) * self.ramp(&core.cols, self.width, col)
    }

    /// The weight along one axis of a core `core` on a map `len` cells long, at cell `x`.
    fn ramp(&self, core: &Range<usize>, len: usize, x: usize) -> f32 {
        let band = self.overlap as f64;
        let x = x as f64 + 0.5;
        let side = |distance: f64| {
            if band == 0.0 { if distance > 0.0 { 1.0 } else { 0.0 } } else { (distance / band + 0.5).clamp(0.0, 1.0) }
        };
        let low = if core.start == 0 { 1.0 } else { side(x - core.start as f64) };
        let high = if core.end == len { 1.0 } else { side(core.end as f64 - x) };
        (low * high) as f32
    }
}

/// A grid-model run over a map tile by tile (see the module docs): the maps asked for, blended
/// from the tiles done so far.
pub struct Tiled {
    params: Params,
    layout: Layout,
    iterations: u64,
    terrain: Grid<f32>,
    hardness: Option<Vec<f32>>,
    rain: Option<Vec<f32>>,
    sediment_depth: Option<Vec<f32>>,
    nodata: Option<Vec<bool>>,
    water: Option<Vec<f32>>,
    /// Per tile, the steady inflow across its window's edges: (cell of the map, m³/s).
    inflow: Vec<Vec<(usize, f64)>>,
    input: u64,
    names: Vec<&'static str>,
    /// Per map of `names`, the weighted sum of the tiles done (heights as changes).
    sums: Vec<Vec<f32>>,
    done: usize,
    books: Books,
    worst: f64,
    times: [Duration; Stage::ALL.len()],
    most_substeps: u32,
}

impl Tiled {
    /// A run of `params` on `terrain` (heights in metres) and `maps`, `iterations` iterations in
    /// every tile of at most `tile` cells a side with `overlap` cells around it (see
    /// [`Layout::new`]), blending the maps `names` (names of [`State::output_map`]; "height"
    /// always among them). The whole-map passes (the steady start and the inflows) run here.
    pub fn new(
        params: Params,
        terrain: Grid<f32>,
        maps: StartMaps<'_>,
        (tile, overlap): (usize, usize),
        iterations: u64,
        names: &[&'static str],
    ) -> Result<Self, SimError> {
        params.validate()?;
        match params.border {
            Border::Open => {}
            Border::Closed => return Err(LayoutError::Border("closed").into()),
            Border::Wrap => return Err(LayoutError::Border("wrap").into()),
        }
        let shape = (terrain.width(), terrain.height(), terrain.cell_size());
        let layout = Layout::new(shape.0, shape.1, tile, overlap)?;
        for (what, map) in
            [("hardness", maps.hardness), ("rain", maps.rain), ("water", maps.water), ("sediment depth", maps.sediment_depth)]
        {
            if let Some(m) = map {
                check_shape(what, m, &terrain)?;
            }
        }
        let nodata = nodata_mask(maps.nodata, &terrain)?;
        let copy = |m: Option<&Grid<f32>>| m.map(|g| g.as_slice().to_vec());
        let hardness = match params.hardness_mode {
            HardnessMode::Noise => Some(super::state::noise_hardness_of(&terrain, &params)),
            _ => copy(maps.hardness),
        };
        let rain = copy(maps.rain);
        let (water, routes) = match (maps.water, params.start_water) {
            (Some(w), _) => (Some(w.as_slice().to_vec()), None),
            (None, StartWater::Steady) => {
                let inflow = start::Inflow::new(&params, shape, nodata.as_deref(), rain.as_deref())?;
                let flow = start::steady_flow(&terrain, nodata.as_deref(), &params, &inflow);
                (Some(flow.depth), Some((flow.receiver, flow.discharge)))
            }
            (None, _) => {
                let inflow = start::Inflow::new(&params, shape, nodata.as_deref(), rain.as_deref())?;
                (start::start_water(&terrain, nodata.as_deref(), &params, &inflow), None)
            }
        };
        let inflow = (0..layout.len())
            .map(|k| routes.as_ref().map_or_else(Vec::new, |(to, q)| inflow_across(&layout.window(k), shape.0, to, q)))
            .collect();
        let input = maps.input_hash(&terrain);
        let mut names: Vec<&'static str> = names.to_vec();
        if !names.contains(&"height") {
            names.insert(0, "height");
        }
        let sums = names.iter().map(|_| vec![0.0f32; terrain.len()]).collect();
        Ok(Self {
            params,
            layout,
            iterations,
            terrain,
            hardness,
            rain,
            sediment_depth: copy(maps.sediment_depth),
            nodata,
            water,
            inflow,
            input,
            names,
            sums,
            done: 0,
            books: Books::default(),
            worst: 0.0,
            times: Default::default(),
            most_substeps: 0,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The tiles.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Iterations in each tile.
    pub fn iterations(&self) -> u64 {
        self.iterations
    }

    /// Tiles done.
    pub fn done(&self) -> usize {
        self.done
    }

    /// The maps blended, "height" first.
    pub fn names(&self) -> &[&'static str] {
        &self.names
    }

    /// The hash of the inputs ([`StartMaps::input_hash`]).
    pub fn input_hash(&self) -> u64 {
        self.input
    }

    /// The books of the tiles done, added up (each tile's own: the overlaps count in every tile
    /// that ran them).
    pub fn books(&self) -> &Books {
        &self.books
    }

    /// The largest relative error of a tile's books.
    pub fn worst_relative_error(&self) -> f64 {
        self.worst
    }

    /// Wall time per stage, all tiles.
    pub fn stage_times(&self) -> &[Duration; Stage::ALL.len()] {
        &self.times
    }

    /// The most sub-steps an iteration of a tile took.
    pub fn most_substeps(&self) -> u32 {
        self.most_substeps
    }

    /// The parameters tile `k` runs with: its sources moved into its window (those outside left
    /// to the inflow), the inflow across its edges added as sources, noise hardness as a map.
    fn tile_params(&self, k: usize) -> Params {
        let win = self.layout.window(k);
        let cell = self.terrain.cell_size();
        let mut p = self.params.clone();
        if p.hardness_mode == HardnessMode::Noise {
            p.hardness_mode = HardnessMode::Map;
        }
        p.sources = self
            .params
            .sources
            .iter()
            .filter_map(|s| {
                let (sx, sy) = match s.units {
                    Units::Cells => (1.0, 1.0),
                    Units::Metres => (cell.x, cell.y),
                };
                let (x, y) = (s.x - win.cols.start as f64 * sx, s.y - win.rows.start as f64 * sy);
                let inside = x / sx >= -0.5 && y / sy >= -0.5 && x / sx <= win.width() as f64 - 0.5 && y / sy <= win.height() as f64 - 0.5;
                inside.then(|| Source { x, y, ..s.clone() })
            })
            .chain(self.inflow[k].iter().map(|&(i, rate)| Source {
                x: (i % self.terrain.width() - win.cols.start) as f64,
                y: (i / self.terrain.width() - win.rows.start) as f64,
                radius: 0.0,
                rate,
                units: Units::Cells,
            }))
            .collect();
        p
    }

    /// Runs the next tile to its end (`progress` called with the iterations done in it now and
    /// then) and blends it in. Does nothing when all are done.
    pub fn run_next(&mut self, progress: &mut dyn FnMut(u64)) -> Result<(), SimError> {
        let k = self.done;
        if k >= self.layout.len() {
            return Ok(());
        }
        let win = self.layout.window(k);
        let width = self.terrain.width();
        let cut = |v: &[f32]| win.cut(v, width);
        let cell = self.terrain.cell_size();
        let grid = |v: Vec<f32>| Grid::from_vec(win.width(), win.height(), cell, v);
        let terrain = grid(cut(self.terrain.as_slice()))?;
        let hardness = self.hardness.as_deref().map(|m| grid(cut(m))).transpose()?;
        let rain = self.rain.as_deref().map(|m| grid(cut(m))).transpose()?;
        let water = self.water.as_deref().map(|m| grid(cut(m))).transpose()?;
        let sediment_depth = self.sediment_depth.as_deref().map(|m| grid(cut(m))).transpose()?;
        let nodata = self.nodata.as_ref().map(|m| win.cut(m, width));
        let maps = StartMaps {
            hardness: hardness.as_ref(),
            rain: rain.as_ref(),
            water: water.as_ref(),
            sediment_depth: sediment_depth.as_ref(),
            nodata: nodata.as_deref(),
        };
        let params = self.tile_params(k);
        let mut state = State::new(&terrain, &params, maps)?;
        drop((hardness, rain, water, sediment_depth, nodata));
        let mut sim = CpuSim::new(params, &state)?;
        let (surface, bed) = self.beyond(&win, state.reference_height);
        sim.set_beyond(surface, bed);
        // batches of iterations between progress calls (a run's velocity maps are written on
        // its last iteration, so the batches leave the other fields as one run would)
        let batch = (self.iterations / 100).max(1);
        let mut left = self.iterations;
        while left > 0 {
            let n = batch.min(left);
            sim.run(&mut state, n);
            left -= n;
            progress(self.iterations - left);
        }
        self.blend(k, &state, terrain.as_slice());
        add_books(&mut self.books, &state.books);
        self.worst = self.worst.max(state.balance().relative_error);
        for (t, s) in self.times.iter_mut().zip(sim.stage_times().0) {
            *t += s;
        }
        self.most_substeps = self.most_substeps.max(sim.substep_tally().max);
        self.done += 1;
        Ok(())
    }

    /// The water surface and bed on the ring of cells around `win` (m above `reference`; NaN
    /// beyond the map's edges and in nodata): the steady start's, what the tile's outflow runs
    /// down to (see [`super::topology::Topology::with_beyond`]).
    fn beyond(&self, win: &Window, reference: f64) -> (Vec<f32>, Vec<f32>) {
        let (w, h) = (self.terrain.width(), self.terrain.height());
        let (ww, wh) = (win.width() + 2, win.height() + 2);
        let (mut surface, mut bed) = (vec![f32::NAN; ww * wh], vec![f32::NAN; ww * wh]);
        for rr in 0..wh {
            for cc in 0..ww {
                if rr > 0 && rr + 1 < wh && cc > 0 && cc + 1 < ww {
                    continue;
                }
                let (r, c) = ((win.rows.start + rr).wrapping_sub(1), (win.cols.start + cc).wrapping_sub(1));
                if r >= h || c >= w {
                    continue;
                }
                let i = r * w + c;
                if self.nodata.as_ref().is_some_and(|m| m[i]) {
                    continue;
                }
                let z = f64::from(self.terrain.as_slice()[i]) - reference;
                let d = self.water.as_ref().map_or(0.0, |v| f64::from(v[i]));
                surface[rr * ww + cc] = (z + d) as f32;
                bed[rr * ww + cc] = z as f32;
            }
        }
        (surface, bed)
    }

    /// Adds tile `k`'s maps, weighted, to the sums (`input`: the window's input heights).
    fn blend(&mut self, k: usize, state: &State, input: &[f32]) {
        let win = self.layout.window(k);
        let width = self.terrain.width();
        let layout = &self.layout;
        for (name, sum) in self.names.iter().zip(&mut self.sums) {
            let Some(mut values) = state.output_map(name) else { continue };
            if *name == "height" {
                values.par_iter_mut().zip(input).for_each(|(v, &z)| *v = (f64::from(*v) - f64::from(z)) as f32);
            }
            sum.par_chunks_mut(width).enumerate().skip(win.rows.start).take(win.height()).for_each(|(row, line)| {
                let from = &values[(row - win.rows.start) * win.width()..][..win.width()];
                for (col, &v) in win.cols.clone().zip(from) {
                    line[col] += layout.weight(k, row, col) * v;
                }
            });
        }
    }

    /// Map `name` as blended from the tiles done (heights: the input's where no tile has run).
    pub fn map(&self, name: &str) -> Option<Vec<f32>> {
        let k = self.names.iter().position(|n| *n == name)?;
        let sum = &self.sums[k];
        if name != "height" {
            return Some(sum.clone());
        }
        Some(self.terrain.as_slice().par_iter().zip(sum).map(|(&z, &d)| (f64::from(z) + f64::from(d)) as f32).collect())
    }

    /// The sums and tiles done, to go on from with [`Tiled::restore`].
    pub fn sums(&self) -> (&[Vec<f32>], usize, &Books, f64) {
        (&self.sums, self.done, &self.books, self.worst)
    }

    /// Goes on from [`Tiled::sums`] of a run with the same parameters, inputs and layout.
    pub fn restore(&mut self, sums: Vec<Vec<f32>>, done: usize, books: Books, worst: f64) -> Result<(), SimError> {
        if sums.len() != self.sums.len() || sums.iter().any(|s| s.len() != self.terrain.len()) || done > self.layout.len() {
            return Err(crate::checkpoint::CheckpointError::Invalid("the tiles' sums do not fit this run".into()).into());
        }
        (self.sums, self.done, self.books, self.worst) = (sums, done, books, worst);
        Ok(())
    }

    /// Whether every blended map is finite.
    pub fn is_finite(&self) -> bool {
        self.sums.par_iter().all(|s| s.par_iter().all(|v| v.is_finite()))
    }

    /// The map's size.
    pub fn shape(&self) -> (usize, usize, CellSize) {
        (self.terrain.width(), self.terrain.height(), self.terrain.cell_size())
    }
}

/// The steady discharge entering `win` across its edges: every cell just outside whose D8
/// receiver (`to`) is inside gives its discharge `q` (m³/s) to that receiver, summed per cell.
fn inflow_across(win: &Window, width: usize, to: &[u32], q: &[f64]) -> Vec<(usize, f64)> {
    let height = to.len() / width;
    let (r0, r1) = (win.rows.start.saturating_sub(1), (win.rows.end + 1).min(height));
    let (c0, c1) = (win.cols.start.saturating_sub(1), (win.cols.end + 1).min(width));
    let mut into: Vec<(usize, f64)> = Vec::new();
    for r in r0..r1 {
        for c in c0..c1 {
            let i = r * width + c;
            let j = to[i];
            if win.contains(r, c) || j == flow::NONE || q[i] <= 0.0 {
                continue;
            }
            let j = j as usize;
            if win.contains(j / width, j % width) {
                into.push((j, q[i]));
            }
        }
    }
    into.sort_by_key(|&(j, _)| j);
    into.dedup_by(|b, a| {
        if a.0 == b.0 {
            a.1 += b.1;
            true
        } else {
            false
        }
    });
    into
}

/// `to += from`, term by term.
fn add_books(to: &mut Books, from: &Books) {
    let mut sum = to.to_array();
    sum.iter_mut().zip(from.to_array()).for_each(|(a, b)| *a += b);
    *to = Books::from_array(sum);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_weights_of_the_tiles_add_up_to_one_on_every_cell() {
        for (w, h, tile, overlap) in [(100, 70, 32, 8), (64, 64, 64, 0), (50, 90, 16, 12), (33, 17, 16, 5)] {
            let layout = Layout::new(w, h, tile, overlap).unwrap();
            let mut covered = vec![0usize; w * h];
            for k in 0..layout.len() {
                let core = layout.core(k);
                assert!(core.width() <= tile && core.height() <= tile);
                for r in core.rows.clone() {
                    for c in core.cols.clone() {
                        covered[r * w + c] += 1;
                    }
                }
            }
            assert!(covered.iter().all(|&n| n == 1), "cores cover the map once");
            for r in 0..h {
                for c in 0..w {
                    let total: f32 = (0..layout.len())
                        .map(|k| {
                            let weight = layout.weight(k, r, c);
                            if weight > 0.0 {
                                assert!(layout.window(k).contains(r, c), "weight outside the window");
                            }
                            weight
                        })
                        .sum();
                    assert!((total - 1.0).abs() < 1e-6, "{w}x{h} tile {tile} overlap {overlap}: {total} at {r},{c}");
                }
            }
        }
    }

    #[test]
    fn a_layout_refuses_a_tile_smaller_than_its_overlap() {
        assert_eq!(Layout::new(100, 100, 8, 0), Err(LayoutError::TileTooSmall { tile: 8 }));
        assert_eq!(Layout::new(100, 100, 32, 40), Err(LayoutError::OverlapTooWide { core: 25, overlap: 40 }));
        assert!(Layout::new(30, 30, 32, 40).is_ok(), "one tile has no inner edge to blend");
    }

    #[test]
    fn a_river_entering_a_tile_brings_its_steady_discharge() {
        // a valley draining east: everything west of the window enters through its west edge
        let (w, h) = (64, 16);
        let terrain = Grid::from_fn(w, h, CellSize::square(10.0), |r, c| {
            (w - c) as f32 * 0.5 + (r as f32 - 7.5).abs() * 0.2
        })
        .unwrap();
        let params = Params::default();
        let tiled = Tiled::new(params.clone(), terrain, StartMaps::default(), (32, 4), 1, &["height"]).unwrap();
        let east = tiled.layout.len() - 1;
        let entering: f64 = tiled.inflow[east].iter().map(|&(_, q)| q).sum();
        let west = tiled.layout.window(east).cols.start;
        let upstream = (west * h) as f64 * 100.0 * params.rain_rate;
        assert!((entering - upstream).abs() < 1e-6 * upstream, "{entering} m³/s entering, {upstream} upstream");
        assert!(tiled.inflow[0].is_empty(), "nothing drains west");
    }

    /// Pearson correlation of two series.
    fn correlation(a: &[f64], b: &[f64]) -> f64 {
        let n = a.len() as f64;
        let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
        let (mut ab, mut aa, mut bb) = (0.0, 0.0, 0.0);
        for (x, y) in a.iter().zip(b) {
            ab += (x - ma) * (y - mb);
            aa += (x - ma) * (x - ma);
            bb += (y - mb) * (y - mb);
        }
        ab / (aa * bb).sqrt()
    }

    /// The `q` quantile of `v`.
    fn quantile(mut v: Vec<f64>, q: f64) -> f64 {
        v.sort_by(f64::total_cmp);
        v[((v.len() - 1) as f64 * q) as usize]
    }

    #[test]
    fn tiles_follow_one_run_over_the_whole_map_without_seams() {
        let size = 160;
        let map = crate::terrain::bench::bench(crate::terrain::bench::Bench::Mountain, size).unwrap();
        let terrain = map.heights;
        let params = Params::default();
        let iterations = 150;
        let mut whole = State::new(&terrain, &params, StartMaps::default()).unwrap();
        CpuSim::new(params.clone(), &whole).unwrap().run(&mut whole, iterations);
        let whole = whole.heights();
        let mut tiled = Tiled::new(params, terrain.clone(), StartMaps::default(), (64, 24), iterations, &[]).unwrap();
        assert_eq!(tiled.layout().grid(), (3, 3));
        while tiled.done() < tiled.layout().len() {
            tiled.run_next(&mut |_| {}).unwrap();
        }
        let tiles = tiled.map("height").unwrap();
        let z = terrain.as_slice();
        let change = |h: &[f32]| h.iter().zip(z).map(|(&h, &z)| f64::from(h) - f64::from(z)).collect::<Vec<_>>();
        let (a, b) = (change(&whole), change(&tiles));
        let r = correlation(&a, &b);
        // steps between neighbours along the rows and columns, and those across the cores' edges
        let mut steps = Vec::new();
        let mut across = Vec::new();
        let edges: Vec<usize> = (1..3).map(|k| tiled.layout().core(k).cols.start).collect();
        for row in 0..size {
            for col in 1..size {
                let (i, j) = (row * size + col, col * size + row);
                let d = [(tiles[i] - tiles[i - 1]).abs(), (tiles[j] - tiles[j - size]).abs()];
                steps.extend(d.map(f64::from));
                if edges.contains(&col) {
                    across.extend(d.map(f64::from));
                }
            }
        }
        let p99 = quantile(steps, 0.99);
        let worst = across.iter().copied().fold(0.0, f64::max);
        eprintln!("correlation {r:.5}, steepest step across the cores' edges {worst:.3} m, 99th percentile {p99:.3} m");
        assert!(r >= 0.99, "height change correlates {r:.4} with one run's");
        assert!(worst <= p99, "a step of {worst} m across a tile's edge, the 99th percentile of all is {p99} m");
    }

    #[test]
    fn a_tiled_run_resumed_between_tiles_ends_in_the_same_bytes() {
        use crate::contract::{Model, TiledGridRun};
        let terrain = crate::terrain::bench::bench(crate::terrain::bench::Bench::Artist, 48).unwrap().heights;
        let make = || {
            let names = ["height", "water", "erosion"];
            Tiled::new(Params::default(), terrain.clone(), StartMaps::default(), (16, 8), 6, &names).unwrap()
        };
        let mut straight = TiledGridRun::new(make());
        assert_eq!(straight.granule(), 6);
        straight.advance(9 * 6, &mut |_| {}).unwrap();
        let mut first = TiledGridRun::new(make());
        first.advance(4 * 6, &mut |_| {}).unwrap();
        let mut resumed = TiledGridRun::resume(make(), &first.checkpoint()).unwrap();
        assert_eq!(resumed.done(), 24);
        resumed.advance(5 * 6, &mut |_| {}).unwrap();
        for name in ["height", "water", "erosion"] {
            assert_eq!(resumed.map(name), straight.map(name), "{name}");
        }
        assert_eq!(resumed.balance(), straight.balance());
        // another overlap is another run
        let other = Tiled::new(Params::default(), terrain.clone(), StartMaps::default(), (16, 4), 6, &["height"]).unwrap();
        assert!(TiledGridRun::resume(other, &first.checkpoint()).is_err());
    }
}
