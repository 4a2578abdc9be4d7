//! A rank's block of a new run started from its own rows of the inputs, so that no rank reads
//! or holds the whole map's state: each reads the rows of its window ([`Layout::window`]) of the
//! heights and the maps, and together they build the blocks [`Block::new`] would cut from the
//! whole map's [`State::new`], byte for byte. What the start needs of the whole map is
//!
//! - **reduced** over the ranks: the lowest and highest heights, whether any cell is nodata, the
//!   first cell of an input that is refused (so every rank refuses it, naming the cell one
//!   process names);
//! - **carried** through them in map order, as the books are (see `Rows::carried`): the soil's
//!   and the water's volumes (the bits of one serial sum) and the inputs' hash (FNV over the
//!   cells in map order);
//! - **gathered where it fits**: the steady start's routing (Priority-Flood and flow
//!   accumulation, which run down whole catchments), the sources' cells (a source near a nodata
//!   hole moves to the cells outside it) and the noise hardness (one fBm over the whole map) run
//!   on rank 0 from every rank's rows of the heights, the nodata mask and the rain map (9 bytes
//!   a cell at most, against a state's ~100), which then hands each rank its rows of the water,
//!   the sources' rates and the hardness. Barnes (2016)'s parallel Priority-Flood gives the
//!   filled heights by tiles; the flood's ε path through flats and the order the discharge's
//!   sums run in are whole-map orders still (`docs/ranks.md` says what splitting them takes).

use std::sync::Arc;

use super::{Block, BlockError, Layout, check, rows_of};
use crate::checkpoint::InputsHash;
use crate::error::SimError;
use crate::grid::Grid;
use crate::models::grid::params::{HardnessMode, Params, StartWater};
use crate::models::grid::state::{StartMaps, State, noise_hardness};
use crate::models::inputs::ValueCheck;
use crate::ranks::{Exchange, carried};

/// A rank's window of a run's inputs ([`Layout::window`]'s rows), as its front end reads
/// them: the heights (m) and the maps a run may start from.
#[derive(Clone, Debug)]
pub struct Window {
    /// Heights, m.
    pub terrain: Grid<f32>,
    /// Hardness (0..1), for `hardness_mode = "map"`.
    pub hardness: Option<Grid<f32>>,
    /// Rain (>= 0), for `rain_mode = "map"`.
    pub rain: Option<Grid<f32>>,
    /// Initial water depth, m.
    pub water: Option<Grid<f32>>,
    /// Depth of loose material over the bedrock at the start, m.
    pub sediment_depth: Option<Grid<f32>>,
    /// Cells outside the domain (`true` = nodata).
    pub nodata: Option<Vec<bool>>,
}

impl Window {
    /// Rows `rows` (in order; they may repeat or wrap) of the whole map's `terrain` and `maps`.
    pub fn of_rows(terrain: &Grid<f32>, maps: StartMaps<'_>, rows: &[usize]) -> Result<Self, SimError> {
        let (w, h, cell) = (terrain.width(), terrain.height(), terrain.cell_size());
        if let Some(&r) = rows.iter().find(|&&r| r >= h) {
            return Err(BlockError::Message(format!("row {r} of a map of {h} rows")).into());
        }
        let cut = |g: &Grid<f32>| -> Result<Grid<f32>, SimError> {
            let v = rows.iter().flat_map(|&r| g.as_slice()[r * w..(r + 1) * w].iter().copied()).collect();
            Ok(Grid::from_vec(w, rows.len(), cell, v)?)
        };
        let map = |m: Option<&Grid<f32>>| -> Result<Option<Grid<f32>>, SimError> {
            match m {
                Some(m) if !m.same_shape(terrain) => Err(BlockError::Message("a map of another size than the heights".into()).into()),
                Some(m) => Ok(Some(cut(m)?)),
                None => Ok(None),
            }
        };
        let nodata = match maps.nodata {
            Some(m) if m.len() != terrain.len() => return Err(BlockError::Message("a nodata mask of another size than the heights".into()).into()),
            Some(m) => Some(rows.iter().flat_map(|&r| m[r * w..(r + 1) * w].iter().copied()).collect()),
            None => None,
        };
        Ok(Self {
            terrain: cut(terrain)?,
            hardness: map(maps.hardness)?,
            rain: map(maps.rain)?,
            water: map(maps.water)?,
            sediment_depth: map(maps.sediment_depth)?,
            nodata,
        })
    }

    /// The maps, as a start takes them.
    pub fn maps(&self) -> StartMaps<'_> {
        StartMaps {
            hardness: self.hardness.as_ref(),
            rain: self.rain.as_ref(),
            water: self.water.as_ref(),
            sediment_depth: self.sediment_depth.as_ref(),
            nodata: self.nodata.as_deref(),
        }
    }
}

/// What rank 0 of a run over ranks starts from: its window of the map, cut from the whole map it
/// read so that it can let that go before the start (whose routing is its peak), and of the whole
/// map only what it keeps for the run's checkpoints: the nodata mask and the rain map.
pub struct LeaderWindow {
    /// The map's columns.
    pub width: usize,
    /// The map's rows.
    pub height: usize,
    /// Rank 0's window ([`Window::of_rows`] of [`Layout::window`]), or why there is none (too many
    /// ranks, maps of other sizes): the start says so on every rank.
    pub window: Result<Window, SimError>,
    /// Cells outside the domain, if any is.
    pub nodata: Option<Vec<bool>>,
    /// The rain map, if one was given.
    pub rain: Option<Vec<f32>>,
}

impl LeaderWindow {
    /// Rank 0's of the heights `terrain` (m) and `maps`, over `ranks` ranks (`wrap`: the map's
    /// top and bottom rows are neighbours).
    pub fn cut(terrain: &Grid<f32>, maps: StartMaps<'_>, ranks: usize, wrap: bool) -> Self {
        let layout = Layout::new(terrain.height(), ranks, wrap);
        let window = layout.map_err(SimError::from).and_then(|l| Window::of_rows(terrain, maps, &l.window(0)));
        Self {
            width: terrain.width(),
            height: terrain.height(),
            window,
            nodata: maps.nodata.filter(|m| m.contains(&true)).map(<[bool]>::to_vec),
            rain: maps.rain.map(|m| m.as_slice().to_vec()),
        }
    }
}

impl Block {
    /// [`Block::start`] from `window` as this rank's front end read it: a rank that could not
    /// read its rows fails the start on every rank.
    pub fn start_read(
        params: Params,
        height: usize,
        window: Result<Window, SimError>,
        exchange: Arc<dyn Exchange>,
    ) -> Result<Self, SimError> {
        let layout = check(&params, height, exchange.ranks())?;
        let window = Team { ex: &*exchange, layout: &layout }.agree(window)?;
        Self::start(params, height, &window.terrain, window.maps(), exchange)
    }

    /// Rank `exchange.rank()`'s block of a new run of `params` on a map `height` rows high,
    /// started from the rows of its window ([`Layout::window`]) of the heights `terrain` (m)
    /// and of the maps `maps` (a nodata mask of the window's cells included). Every rank calls
    /// it together; each gets the block [`Block::new`] would cut from the whole map's
    /// [`State::new`], byte for byte, or the error one process gets (on the ranks whose rows
    /// hold no fault, [`BlockError::OtherRank`] where the fault is not in the cells).
    pub fn start(
        params: Params,
        height: usize,
        terrain: &Grid<f32>,
        maps: StartMaps<'_>,
        exchange: Arc<dyn Exchange>,
    ) -> Result<Self, SimError> {
        let layout = check(&params, height, exchange.ranks())?;
        let team = Team { ex: &*exchange, layout: &layout };
        let rank = exchange.rank();
        let (w, n) = (terrain.width(), terrain.len());
        let own = layout.owned_in_window(rank);
        let own = own.start * w..own.end * w;
        let first_row = layout.owned(rank).start;
        team.agree(window_fits(terrain, maps, &layout, rank))?;
        let (checks, refused) = maps.checks(terrain, &params);
        // the first refused cell over all ranks, as one process finds it
        if let Some((c, index, value)) = team.first_bad(&checks, own.clone(), first_row * w) {
            return Err(checks[c].error(index, value, w));
        }
        // a map missing or of another size: the same on every rank, unless their windows differ
        team.agree(refused.map_or(Ok(()), Err))?;
        let (lo, hi) = team.min_max(&terrain.as_slice()[own.clone()]);
        let holes = team.any(maps.nodata.is_some_and(|m| m[own.clone()].contains(&true)));
        let nodata = holes.then(|| maps.nodata.map_or_else(|| vec![false; n], <[bool]>::to_vec));
        let whole = Whole { params: &params, terrain, maps, nodata: nodata.as_deref(), lo, hi, height };
        let (water, rates, noise) = whole.passes(&team)?;
        let mut state = State::rest_on(terrain, &params, maps, lo, nodata, noise);
        let area = state.cell_size.area();
        let sum = |from: f64, v: &[f32]| v[own.clone()].iter().fold(from, |a, &x| a + f64::from(x));
        // as one process sums them (`Iterator::sum` starts from -0.0, its volumes from 0.0)
        let [soil] = carried(team.ex, [-0.0], |[from]| [sum(from, &state.terrain)]);
        state.start_soil = soil * area;
        let water_from = match water {
            Some(water) => {
                state.water = water;
                0.0
            }
            None => -0.0,
        };
        let [water] = carried(team.ex, [water_from], |[from]| [sum(from, &state.water)]);
        state.start_water = water * area;
        state.zeros((0..6 + params.pipes as usize).map(|_| vec![0.0; n]).collect());
        state.input = team.inputs_hash(terrain, maps, own, height);
        Self::from_window(params, state, rates, layout, exchange)
    }
}

/// Refuses a window of heights of other rows than rank `rank`'s, or a nodata mask of
/// another size (the maps' sizes are [`StartMaps::checks`]'s).
fn window_fits(terrain: &Grid<f32>, maps: StartMaps<'_>, layout: &Layout, rank: usize) -> Result<(), SimError> {
    let rows = layout.window(rank).len();
    if terrain.height() != rows {
        return Err(BlockError::Window { rows: terrain.height(), expected: rows }.into());
    }
    if let Some(m) = maps.nodata.filter(|m| m.len() != terrain.len()) {
        let (want_w, want_h) = (terrain.width(), terrain.height());
        return Err(SimError::MapShape { what: "nodata mask", got_w: m.len(), got_h: 1, want_w, want_h });
    }
    Ok(())
}

/// The ranks of a start and how the map's rows are cut among them.
struct Team<'a> {
    ex: &'a dyn Exchange,
    layout: &'a Layout,
}

impl Team<'_> {
    fn all_gather_same(&self, mine: &[u8]) -> Vec<u8> {
        self.ex.all_gather(mine, &vec![mine.len(); self.layout.len()])
    }

    /// `mine` where every rank's is `Ok`; else this rank's error, or the first other rank's
    /// (in words).
    fn agree<T>(&self, mine: Result<T, SimError>) -> Result<T, SimError> {
        let words = mine.as_ref().err().map(ToString::to_string).unwrap_or_default();
        let lengths = self.all_gather_same(&(words.len() as u64).to_le_bytes());
        let counts: Vec<usize> = lengths.as_chunks::<8>().0.iter().map(|b| u64::from_le_bytes(*b) as usize).collect();
        let all = self.ex.all_gather(words.as_bytes(), &counts);
        let mine = mine?;
        let mut at = 0;
        for (rank, &len) in counts.iter().enumerate() {
            if len > 0 {
                let message = String::from_utf8_lossy(&all[at..at + len]).into_owned();
                return Err(BlockError::OtherRank { rank, message }.into());
            }
            at += len;
        }
        Ok(mine)
    }

    /// The first cell over all ranks that fails one of `checks` (the first check first): the
    /// check, the cell's index in the whole map, its value. This rank looks at its window's
    /// cells `own`, the map's from `offset` on.
    fn first_bad(&self, checks: &[ValueCheck<'_>], own: std::ops::Range<usize>, offset: usize) -> Option<(usize, usize, f32)> {
        let mine: Vec<u8> = checks
            .iter()
            .flat_map(|c| {
                let (index, value) = c.first_bad(own.clone()).map_or((u64::MAX, 0.0), |(i, v)| ((i - own.start + offset) as u64, v));
                index.to_le_bytes().into_iter().chain(value.to_bits().to_le_bytes())
            })
            .collect();
        let all = self.all_gather_same(&mine);
        let per_rank: Vec<&[u8]> = all.chunks(mine.len().max(1)).collect();
        (0..checks.len()).find_map(|c| {
            per_rank.iter().find_map(|r| {
                let at = c * 12;
                let index = u64::from_le_bytes(r.get(at..at + 8)?.try_into().ok()?);
                let value = f32::from_bits(u32::from_le_bytes(r.get(at + 8..at + 12)?.try_into().ok()?));
                (index != u64::MAX).then_some((c, index as usize, value))
            })
        })
    }

    /// The lowest and highest of every rank's `cells`.
    fn min_max(&self, cells: &[f32]) -> (f32, f32) {
        let (lo, hi) = cells.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(a, c), &v| (a.min(v), c.max(v)));
        let mine: Vec<u8> = lo.to_le_bytes().into_iter().chain(hi.to_le_bytes()).collect();
        let all = self.all_gather_same(&mine);
        all.as_chunks::<8>().0.iter().fold((lo, hi), |(a, c), b| {
            let (l, h) = b.split_at(4);
            let get = |x: &[u8]| f32::from_le_bytes(x.try_into().unwrap_or_default());
            (a.min(get(l)), c.max(get(h)))
        })
    }

    /// Whether `mine` holds on any rank.
    fn any(&self, mine: bool) -> bool {
        self.all_gather_same(&[u8::from(mine)]).contains(&1)
    }

    /// The inputs' hash ([`StartMaps::input_hash`] of the whole map), carried through the
    /// ranks' cells `own` field after field.
    fn inputs_hash(&self, terrain: &Grid<f32>, maps: StartMaps<'_>, own: std::ops::Range<usize>, height: usize) -> u64 {
        let w = terrain.width();
        let rank0 = self.ex.rank() == 0;
        // a hash carried as the bits of an f64 (moved, never computed with)
        let carry = |h: u64, add: &dyn Fn(u64) -> u64| {
            carried(self.ex, [f64::from_bits(h)], |[h]| [f64::from_bits(add(h.to_bits()))])[0].to_bits()
        };
        let nodata = maps.nodata.map(|m| &m[own.clone()]);
        let start = InputsHash::heights_start(w, height);
        let mut h = carry(start, &|h| InputsHash::heights(h, &terrain.as_slice()[own.clone()], nodata));
        for (name, map) in maps.named() {
            let Some(map) = map else { continue };
            h = carry(h, &|h| {
                let h = if rank0 { InputsHash::map_start(h, name, w, height) } else { h };
                InputsHash::cells(h, &map.as_slice()[own.clone()])
            });
        }
        h
    }
}

/// The whole map's fields that rank 0's passes run over, gathered from every rank's rows.
struct WholeFields {
    terrain: Grid<f32>,
    /// Cells outside the domain, when any is.
    mask: Option<Vec<bool>>,
    /// The rain map, when the starting water needs it.
    rain_map: Option<Vec<f32>>,
}

/// What rank 0 needs of every rank's rows for the passes over the whole map.
struct Whole<'a> {
    params: &'a Params,
    /// This rank's window of the heights and maps.
    terrain: &'a Grid<f32>,
    maps: StartMaps<'a>,
    /// The window's nodata mask, `None` when no cell of the map is nodata.
    nodata: Option<&'a [bool]>,
    lo: f32,
    hi: f32,
    height: usize,
}

/// This rank's window of the starting water (`None`: the water it has), of the sources' rates
/// (empty without sources) and of the noise hardness (`None` in another hardness mode).
type Passes = (Option<Vec<f32>>, Vec<f32>, Option<Vec<f32>>);

impl Whole<'_> {
    /// Runs the passes over the whole map on rank 0 and hands every rank its window of them.
    fn passes(&self, team: &Team<'_>) -> Result<Passes, SimError> {
        let p = self.params;
        let water = self.maps.water.is_none() && p.start_water != StartWater::Dry;
        let sources = !p.sources.is_empty();
        let noise = p.hardness_mode == HardnessMode::Noise;
        if !(water || sources || noise) {
            return Ok((None, Vec::new(), None));
        }
        let rain = self.maps.rain.filter(|_| water);
        let (w, layout, rank) = (self.terrain.width(), team.layout, team.ex.rank());
        // this rank's own rows: heights, then the nodata mask and the rain where there are any
        let own = layout.owned_in_window(rank);
        let own = own.start * w..own.end * w;
        let bytes_per_cell = 4 + usize::from(self.nodata.is_some()) + if rain.is_some() { 4 } else { 0 };
        let mut mine = Vec::with_capacity(own.len() * bytes_per_cell);
        mine.extend(self.terrain.as_slice()[own.clone()].iter().flat_map(|v| v.to_le_bytes()));
        if let Some(m) = self.nodata {
            mine.extend(m[own.clone()].iter().map(|&o| u8::from(o)));
        }
        if let Some(r) = rain {
            mine.extend(r.as_slice()[own.clone()].iter().flat_map(|v| v.to_le_bytes()));
        }
        let counts: Vec<usize> = (0..layout.len()).map(|k| layout.owned(k).len() * w * bytes_per_cell).collect();
        let gathered = team.ex.gather(&mine, &counts);
        drop(mine);
        // rank 0: the passes over the whole map, its rows' bytes let go once read into fields
        // (the routing is rank 0's peak)
        let done = gathered.map(|all| {
            let fields = self.fields_of(all, &counts, rain.is_some())?;
            self.over_the_whole(fields, (water, sources, noise))
        });
        let done = team.agree(done.transpose())?;
        // every rank's window of them, as each field's f32 bytes one after the other
        let fields = usize::from(water) + usize::from(sources) + usize::from(noise);
        let window_of = |whole: &[Vec<f32>], k: usize| -> Vec<u8> {
            let rows = layout.window(k);
            whole.iter().flat_map(|f| rows_of(f, w, &rows)).flat_map(f32::to_le_bytes).collect()
        };
        let bytes = match &done {
            Some(whole) => {
                let mut part = |k: usize| window_of(whole, k);
                team.ex.scatter(Some(&mut part));
                window_of(whole, 0)
            }
            None => team.ex.scatter(None),
        };
        drop(done);
        let n = self.terrain.len();
        if bytes.len() != fields * n * 4 {
            return Err(BlockError::Message(format!("{} bytes of the start's passes where {} were due", bytes.len(), fields * n * 4)).into());
        }
        let mut values = bytes.as_chunks::<4>().0.chunks(n).map(|c| c.iter().map(|b| f32::from_le_bytes(*b)).collect::<Vec<_>>());
        let water = if water { values.next() } else { None };
        let rates = if sources { values.next().unwrap_or_default() } else { Vec::new() };
        let noise = if noise { values.next() } else { None };
        Ok((water, rates, noise))
    }

    /// The whole map's heights, nodata mask and rain map (those the map has and the passes
    /// need) from every rank's rows `all` (each `counts[k]` bytes), which it lets go.
    fn fields_of(&self, all: Vec<u8>, counts: &[usize], rain: bool) -> Result<WholeFields, SimError> {
        let (w, cell) = (self.terrain.width(), self.terrain.cell_size());
        let total = w * self.height;
        let mut heights = Vec::with_capacity(total);
        let mut mask = self.nodata.map(|_| Vec::with_capacity(total));
        let mut rain_map = rain.then(|| Vec::with_capacity(total));
        let mut at = 0;
        for &count in counts {
            let part = all.get(at..at + count).ok_or_else(|| BlockError::Message("the ranks' rows came short".into()))?;
            at += count;
            let cells = count / (4 + usize::from(mask.is_some()) + if rain { 4 } else { 0 });
            let (h, rest) = part.split_at(cells * 4);
            heights.extend(h.as_chunks::<4>().0.iter().map(|b| f32::from_le_bytes(*b)));
            let rest = match &mut mask {
                Some(m) => {
                    m.extend(rest[..cells].iter().map(|&b| b == 1));
                    &rest[cells..]
                }
                None => rest,
            };
            if let Some(r) = &mut rain_map {
                r.extend(rest.as_chunks::<4>().0.iter().map(|b| f32::from_le_bytes(*b)));
            }
        }
        drop(all);
        Ok(WholeFields { terrain: Grid::from_vec(w, self.height, cell, heights)?, mask, rain_map })
    }

    /// Rank 0's passes over the whole map's `fields`: the starting water, the sources' rates
    /// and the noise hardness, those asked for.
    fn over_the_whole(
        &self,
        fields: WholeFields,
        (water, sources, noise): (bool, bool, bool),
    ) -> Result<Vec<Vec<f32>>, SimError> {
        let WholeFields { terrain, mask, rain_map } = fields;
        let total = terrain.len();
        let shape = (terrain.width(), terrain.height(), terrain.cell_size());
        let mut out = Vec::new();
        if water {
            use crate::models::grid::start::{Inflow, start_water};
            let inflow = Inflow::new(self.params, shape, mask.as_deref(), rain_map.as_deref())?;
            let mut water = start_water(&terrain, mask.as_deref(), self.params, &inflow).unwrap_or_else(|| vec![0.0; total]);
            if let Some(m) = &mask {
                water.iter_mut().zip(m).filter(|(_, o)| **o).for_each(|(d, _)| *d = 0.0);
            }
            out.push(water);
        }
        if sources {
            let rates = crate::models::grid::cpu::source_rates_on(self.params, shape, mask.as_deref())?;
            out.push(rates.into_iter().map(|v| v as f32).collect());
        }
        if noise {
            out.push(noise_hardness(&terrain, self.params, self.lo, self.hi));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::grid::blocks::{Leader, follow};
    use crate::models::grid::params::{Border, RainMode, Source, Units};
    use crate::ranks::Threads;
    use crate::terrain::bench::{Bench, bench};

    const SIZE: usize = 53;

    /// The bench mountain's heights, without maps.
    fn plain() -> Window {
        let terrain = bench(Bench::Mountain, SIZE).unwrap().heights;
        Window { terrain, hardness: None, rain: None, water: None, sediment_depth: None, nodata: None }
    }

    /// A map of the bench's size with the values `f(i)`.
    fn map(f: impl Fn(usize) -> f32) -> Option<Grid<f32>> {
        let cell = crate::grid::CellSize::square(Bench::Mountain.cell_size());
        Some(Grid::from_vec(SIZE, SIZE, cell, (0..SIZE * SIZE).map(f).collect()).unwrap())
    }

    /// Every rank's block started from its rows (`Block::start`) and cut from the whole state
    /// (`Block::new`), each as its state's bytes at the start and after `n` iterations; or every
    /// rank's error.
    fn both_ways(params: &Params, inputs: &Window, ranks: usize, n: u64) -> Vec<Result<[Vec<u8>; 2], String>> {
        let whole = State::new(&inputs.terrain, params, inputs.maps());
        let layout = Layout::new(SIZE, ranks, params.border == Border::Wrap).unwrap();
        std::thread::scope(|s| {
            let handles: Vec<_> = Threads::ranks(ranks)
                .into_iter()
                .map(|ex| {
                    let window = Window::of_rows(&inputs.terrain, inputs.maps(), &layout.window(ex.rank())).unwrap();
                    let whole = whole.as_ref().ok();
                    s.spawn(move || {
                        let mut from_rows = Block::start(params.clone(), SIZE, &window.terrain, window.maps(), ex.clone())
                            .map_err(|e| e.to_string())?;
                        let mut cut = Block::new(params.clone(), whole.unwrap(), ex).unwrap();
                        let at_start = from_rows.state().to_bytes(1);
                        assert_eq!(at_start, cut.state().to_bytes(1), "rank {}: the start", from_rows.exchange().rank());
                        from_rows.run(n);
                        cut.run(n);
                        Ok([from_rows.state().to_bytes(1), cut.state().to_bytes(1)])
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    #[test]
    fn blocks_started_from_their_own_rows_are_the_blocks_of_the_whole_start() {
        let base = Params::default();
        let source = |y: f64| Source { x: 20.0, y, radius: 3.0, rate: 5.0, units: Units::Cells };
        let bare = plain();
        let mut holes = plain();
        // holes in the lower half only: the upper ranks' rows have none of them
        holes.nodata = Some((0..SIZE * SIZE).map(|i| (i / SIZE).abs_diff(40) + (i % SIZE).abs_diff(20) < 4).collect());
        let mut mapped = plain();
        mapped.hardness = map(|i| (i % 11) as f32 / 10.0);
        mapped.rain = map(|i| (i % 7) as f32 / 6.0);
        mapped.sediment_depth = map(|i| (i % 5) as f32 * 0.1);
        let mut wet = plain();
        wet.water = map(|i| (i % 3) as f32 * 0.01);
        let cases: Vec<(&str, Params, &Window)> = vec![
            ("the defaults (the steady start)", base.clone(), &bare),
            (
                "a dry start, open edges, 8 pipes, a loose layer",
                Params { start_water: StartWater::Dry, border: Border::Open, pipes: 8, sediment_layer: true, ..base.clone() },
                &bare,
            ),
            (
                "lakes, wrapping edges, a source on a cut",
                Params { start_water: StartWater::Lakes, border: Border::Wrap, sources: vec![source(26.5)], ..base.clone() },
                &bare,
            ),
            ("nodata holes on some ranks' rows, a source beside one", Params { sources: vec![source(40.0)], ..base.clone() }, &holes),
            (
                "hardness, rain and loose-layer maps",
                Params { hardness_mode: HardnessMode::Map, rain_mode: RainMode::Map, sediment_layer: true, ..base.clone() },
                &mapped,
            ),
            (
                "a water map, the noise hardness and its loose layer",
                Params { hardness_mode: HardnessMode::Noise, sediment_layer: true, ..base.clone() },
                &wet,
            ),
        ];
        for (what, params, inputs) in cases {
            let one = State::new(&inputs.terrain, &params, inputs.maps()).unwrap();
            for ranks in 1..=4 {
                for (k, got) in both_ways(&params, inputs, ranks, 4).into_iter().enumerate() {
                    let [from_rows, cut] = got.unwrap_or_else(|e| panic!("{what}, rank {k} of {ranks}: {e}"));
                    assert_eq!(from_rows, cut, "{what}, rank {k} of {ranks}: 4 iterations on");
                }
            }
            // the hash, volumes and reference of the whole start, on one rank of one
            let ex = Threads::ranks(1).remove(0);
            let alone = Block::start(params.clone(), SIZE, &inputs.terrain, inputs.maps(), ex).unwrap();
            assert_eq!(alone.state().to_bytes(1), one.to_bytes(1), "{what}: one rank");
        }
    }

    #[test]
    fn rank_0_starts_a_run_from_every_ranks_own_rows_and_gathers_the_bytes_of_one_process() {
        let params = Params { hardness_mode: HardnessMode::Map, sediment_layer: true, ..Params::default() };
        let mut inputs = plain();
        inputs.hardness = map(|i| (i % 11) as f32 / 10.0);
        let mut one = State::new(&inputs.terrain, &params, inputs.maps()).unwrap();
        crate::models::grid::CpuSim::new(params.clone(), &one).unwrap().run(&mut one, 9);
        let mut ranks = Threads::ranks(3);
        let rank0 = ranks.remove(0);
        let inputs = &inputs;
        std::thread::scope(|s| {
            for ex in ranks {
                // each follower's front end reads its rows: here, cuts them from the inputs
                s.spawn(move || {
                    let mut read = |request: &[u8], rows: &[usize]| {
                        assert_eq!(request, b"the inputs");
                        Window::of_rows(&inputs.terrain, inputs.maps(), rows)
                    };
                    follow(ex, &mut read, &mut |_, _| {}).unwrap();
                });
            }
            let layout = Layout::new(SIZE, 3, false).unwrap();
            let window = Window::of_rows(&inputs.terrain, inputs.maps(), &layout.window(0));
            let mut leader = Leader::start(params.clone(), SIZE, b"the inputs", window, rank0).unwrap();
            leader.run(9).unwrap();
            let mut whole = one.clone();
            whole.release_evolving();
            whole.hold_evolving();
            leader.gather_into(&mut whole).unwrap();
            assert_eq!(whole.to_bytes(1), one.to_bytes(1));
        });
    }

    #[test]
    fn a_rank_that_cannot_read_its_rows_fails_the_start_on_every_rank() {
        let inputs = &plain();
        let mut ranks = Threads::ranks(3);
        let rank0 = ranks.remove(0);
        std::thread::scope(|s| {
            for ex in ranks {
                s.spawn(move || {
                    let rank = ex.rank();
                    let mut read = |_: &[u8], rows: &[usize]| match rank {
                        2 => Err(BlockError::Read("m.tif: no such file".into()).into()),
                        _ => Window::of_rows(&inputs.terrain, inputs.maps(), rows),
                    };
                    // the start fails on every rank, and each follower stops
                    follow(ex, &mut read, &mut |_, _| {}).unwrap();
                });
            }
            let window = Window::of_rows(&inputs.terrain, inputs.maps(), &Layout::new(SIZE, 3, false).unwrap().window(0));
            let e = Leader::start(Params::default(), SIZE, b"", window, rank0).err().unwrap();
            assert_eq!(e.to_string(), "rank 2: m.tif: no such file");
        });
    }

    #[test]
    fn every_rank_refuses_a_bad_cell_as_one_process_names_it() {
        let mut bad_height = plain();
        bad_height.terrain = Grid::from_vec(SIZE, SIZE, bad_height.terrain.cell_size(), {
            let mut v = bad_height.terrain.as_slice().to_vec();
            v[44 * SIZE + 7] = f32::NAN;
            v[47 * SIZE + 2] = f32::INFINITY;
            v
        })
        .unwrap();
        let mut bad_hardness = plain();
        bad_hardness.hardness = map(|i| if i == 20 * SIZE + 9 || i == 30 * SIZE { 1.5 } else { 0.5 });
        let map_mode = Params { hardness_mode: HardnessMode::Map, ..Params::default() };
        for (params, inputs) in [(Params::default(), &bad_height), (map_mode, &bad_hardness)] {
            let one = State::new(&inputs.terrain, &params, inputs.maps()).unwrap_err().to_string();
            for ranks in 1..=4 {
                for got in both_ways(&params, inputs, ranks, 0) {
                    assert_eq!(got.unwrap_err(), one, "{ranks} ranks");
                }
            }
        }
    }

    #[test]
    fn a_fault_of_the_whole_map_is_refused_on_rank_0_and_named_on_the_others() {
        // a source off the map: the whole-map passes on rank 0 find it
        let source = Source { x: 20.0, y: 80.0, radius: 0.0, rate: 1.0, units: Units::Cells };
        let params = Params { sources: vec![source], ..Params::default() };
        let inputs = plain();
        let one = State::new(&inputs.terrain, &params, inputs.maps()).unwrap_err().to_string();
        let got = both_ways(&params, &inputs, 3, 0);
        assert_eq!(got[0].as_ref().unwrap_err(), &one);
        for other in &got[1..] {
            assert_eq!(other.as_ref().unwrap_err(), &format!("rank 0: {one}"));
        }
    }
}
