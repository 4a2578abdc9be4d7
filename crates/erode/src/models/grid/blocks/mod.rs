//! One map cut into blocks, one per rank of a parallel run (the ranks of MPI, or threads of one
//! process), each giving the same bits as one process would: bands of whole rows
//! ([`Layout::new`], what `mpirun` runs), or tiles of rows and columns, each band's columns cut
//! into parts of whole [`SEGMENT`]s ([`Layout::tiles`]).
//!
//! The grid model is a stencil: in one sub-step a cell's new values read its neighbours' within
//! a few cells (the fluxes read the depth beside a cell, the update reads the fluxes beside it,
//! transport the update beside it, smoothing the terrain beside it twice). Each block holds
//! [`HALO`] rows of its neighbours above and below its own rows (and as many columns left and
//! right of its own, in tiles) and runs the stages on all of them; the cells at the block's cut
//! edges come out wrong, but the error travels at most [`REACH`] cells per sub-step, so after
//! one sub-step the cells the block owns are exact. The neighbours then send each block their
//! cells over its halo (every field that evolves: first the rows, then the columns of every
//! row, which brings the corners), and the next sub-step starts from exact values again.
//!
//! What a step needs from the whole map is reduced exactly: the books are sums by segments of
//! [`SEGMENT`] columns, each row's in order, then the rows in order (as one process adds them on
//! any number of threads), so every block gathers all blocks' owned segments' sums and folds
//! them in that order; the deepest water (the stable time step's input) is a maximum, the same
//! in any order. A wrapping map's first and last rows and columns, inside a block's window,
//! keep the edge path one process computes them by, so that their sums add in the same order.
//! The results are therefore the same bytes as one process for any number of blocks, which the
//! tests check for 1 to 4 bands and tiles of up to 3 × 2.
//!
//! Here: the cut ([`Layout`]), a rank's block ([`Block`]) and what its topology asks of the
//! others (its sums, its halos); `leader.rs` the orders rank 0 gives the other ranks. How ranks
//! talk is [`crate::ranks`].
//!
//! Barnes (2016) splits Priority-Flood's depression filling the same way, by tiles that trade
//! their edges; goSPL (Salles et al.) decomposes its landscape evolution over MPI ranks with
//! PETSc: both in `docs/references.md`.

use std::ops::Range;
use std::sync::Arc;

use super::cpu::{CpuSim, source_rates};
use super::params::{Border, Params, RainMode, Transport};
use super::state::State;
use super::topology::SEGMENT;
use crate::error::SimError;
use crate::ranks::Exchange;
use crate::par::Sums;

/// Rows a sub-step's error travels from a block's cut edge (see the module's text): flux 1,
/// update 1, transport 1, smoothing 2 (thermal's 2 run beside them).
pub const REACH: usize = 5;

/// Rows of its neighbours a block holds above and below its own: [`REACH`] and a spare row.
pub const HALO: usize = REACH;

/// Why a map cannot run in blocks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BlockError {
    /// Too many ranks for the rows: each block must own at least as many rows as its halo.
    #[error(
        "{ranks} ranks for {height} rows: each rank needs at least {HALO} rows of its own \
         (at most {} ranks for this map)",
        height / HALO
    )]
    TooManyRanks {
        /// Ranks asked for.
        ranks: usize,
        /// Rows of the map.
        height: usize,
    },
    /// Too many parts for the columns: each must be whole segments and at least a halo wide.
    #[error(
        "{parts} parts of {width} columns: each needs whole segments of {SEGMENT} columns and at \
         least {HALO} columns"
    )]
    TooManyParts {
        /// Parts asked for.
        parts: usize,
        /// Columns of the map.
        width: usize,
    },
    /// A setting whose stage reads further than the halo, or draws over the whole map.
    #[error("{0} does not run in blocks (its stage reads beyond a block's halo rows)")]
    Unsupported(&'static str),
    /// A window of another number of rows than the layout gives the rank.
    #[error("a block of {rows} rows where the layout gives {expected}")]
    Window {
        /// Rows received.
        rows: usize,
        /// Rows the layout gives.
        expected: usize,
    },
    /// A rank's front end could not read its rows of the inputs (why, in words).
    #[error("{0}")]
    Read(String),
    /// Another rank refused its part of a start (the first that did, in rank order).
    #[error("rank {rank}: {message}")]
    OtherRank {
        /// The rank.
        rank: usize,
        /// Its error, in words.
        message: String,
    },
    /// The ranks disagree (a message that does not decode).
    #[error("ranks out of step: {0}")]
    Message(String),
}

/// Which cells each rank owns: the map's rows in bands as even as they go and, with
/// [`Layout::tiles`], each band's columns in parts of whole [`SEGMENT`]s (so that a row's sums
/// add up to the whole row's bits, see `Topology::total`); ranks in band order, then column
/// order within a band.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    height: usize,
    ranks: usize,
    wrap: bool,
    /// The map's width and how many parts each band's columns are in (`None`: one, whole rows).
    columns: Option<(usize, usize)>,
}

impl Layout {
    /// `height` rows over `ranks` ranks in bands of whole rows; `wrap`: the map's top and bottom
    /// rows are neighbours (and its left and right columns).
    pub fn new(height: usize, ranks: usize, wrap: bool) -> Result<Self, BlockError> {
        let layout = Self { height, ranks: ranks.max(1), wrap, columns: None };
        if ranks > 1 && (0..ranks).any(|k| layout.owned(k).len() < HALO) {
            return Err(BlockError::TooManyRanks { ranks, height });
        }
        Ok(layout)
    }

    /// A map of `width` × `height` cells in `bands` bands of rows, each band's columns in
    /// `parts` parts: `bands × parts` ranks.
    pub fn tiles(height: usize, width: usize, bands: usize, parts: usize, wrap: bool) -> Result<Self, BlockError> {
        let (bands, parts) = (bands.max(1), parts.max(1));
        let mut layout = Self::new(height, bands, wrap)?;
        layout.ranks = bands * parts;
        layout.columns = Some((width, parts));
        let segments = width.div_ceil(SEGMENT);
        if parts > 1 && (parts > segments || (0..parts).any(|j| layout.part_columns(j).len() < HALO)) {
            return Err(BlockError::TooManyParts { parts, width });
        }
        Ok(layout)
    }

    /// How many blocks.
    pub fn len(&self) -> usize {
        self.ranks
    }

    /// Whether there are none (never: one rank at least).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// How many parts each band's columns are in.
    fn parts(&self) -> usize {
        self.columns.map_or(1, |(_, p)| p)
    }

    /// The rows rank `k` owns.
    pub fn owned(&self, k: usize) -> Range<usize> {
        let (b, bands) = (k / self.parts(), self.ranks / self.parts());
        b * self.height / bands..(b + 1) * self.height / bands
    }

    /// The columns rank `k` owns of a map `width` wide.
    pub fn owned_columns(&self, k: usize, width: usize) -> Range<usize> {
        match self.columns {
            Some(_) => self.part_columns(k % self.parts()),
            None => 0..width,
        }
    }

    /// The columns of part `j` of a band: whole segments, as even as they go.
    fn part_columns(&self, j: usize) -> Range<usize> {
        let (width, parts) = self.columns.unwrap_or((0, 1));
        let segments = width.div_ceil(SEGMENT);
        let edge = |j: usize| (j * segments / parts * SEGMENT).min(width);
        edge(j)..edge(j + 1)
    }

    /// The rank beside rank `k` `by` bands down (−1: up) and `side` parts right, if any.
    fn beside(&self, k: usize, by: isize, side: isize) -> Option<usize> {
        let parts = self.parts();
        let (bands, b, j) = ((self.ranks / parts) as isize, (k / parts) as isize, (k % parts) as isize);
        let step = |at: isize, by: isize, n: isize| -> Option<isize> {
            let to = at + by;
            match () {
                _ if by == 0 => Some(at),
                _ if n == 1 => None,
                _ if (0..n).contains(&to) => Some(to),
                _ if self.wrap => Some(to.rem_euclid(n)),
                _ => None,
            }
        };
        let (b, j) = (step(b, by, bands)?, step(j, side, parts as isize)?);
        Some((b * parts as isize + j) as usize)
    }

    /// The rank above rank `k` (whose rows precede its own), if any.
    fn above(&self, k: usize) -> Option<usize> {
        self.beside(k, -1, 0)
    }

    /// The rank below rank `k`, if any.
    fn below(&self, k: usize) -> Option<usize> {
        self.beside(k, 1, 0)
    }

    /// The rows rank `k` holds, in order: [`HALO`] rows above its own where a neighbour is,
    /// its own, [`HALO`] below (row numbers wrap around a wrapping map).
    pub fn window(&self, k: usize) -> Vec<usize> {
        let owned = self.owned(k);
        let up = if self.above(k).is_some() { HALO } else { 0 };
        let down = if self.below(k).is_some() { HALO } else { 0 };
        let h = self.height as isize;
        (owned.start as isize - up as isize..(owned.end + down) as isize).map(|r| r.rem_euclid(h) as usize).collect()
    }

    /// The columns rank `k` holds of a map `width` wide, as [`Layout::window`] its rows.
    pub fn window_columns(&self, k: usize, width: usize) -> Vec<usize> {
        let owned = self.owned_columns(k, width);
        let left = if self.beside(k, 0, -1).is_some() { HALO } else { 0 };
        let right = if self.beside(k, 0, 1).is_some() { HALO } else { 0 };
        let w = width as isize;
        (owned.start as isize - left as isize..(owned.end + right) as isize).map(|c| c.rem_euclid(w) as usize).collect()
    }

    /// Rank `k`'s own rows within its window.
    fn owned_in_window(&self, k: usize) -> Range<usize> {
        let up = if self.above(k).is_some() { HALO } else { 0 };
        up..up + self.owned(k).len()
    }

    /// Rank `k`'s own columns within its window.
    fn owned_columns_in_window(&self, k: usize, width: usize) -> Range<usize> {
        let left = if self.beside(k, 0, -1).is_some() { HALO } else { 0 };
        left..left + self.owned_columns(k, width).len()
    }
}

/// One block's place among the others: what its topology reduces its sums and swaps its halos
/// with.
pub(super) struct Rows {
    exchange: Arc<dyn Exchange>,
    layout: Layout,
    /// The window's rows this rank owns.
    owned: Range<usize>,
    /// The window's columns this rank owns.
    columns: Range<usize>,
    /// The window's width.
    width: usize,
    /// The map's width.
    map_width: usize,
    /// The window's rows that are the whole map's first and last.
    map_edges: Vec<usize>,
    /// The window's columns that are the whole map's first and last, inside the window (a
    /// wrapping map's, in a band cut into parts).
    map_edge_columns: Vec<usize>,
    /// The bytes a halo swap sends and receives, kept between sub-steps.
    halo_buffers: std::sync::Mutex<(Vec<u8>, Vec<u8>)>,
}

impl std::fmt::Debug for Rows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rows").field("rank", &self.exchange.rank()).field("layout", &self.layout).finish()
    }
}

fn f64s_to_bytes(v: impl Iterator<Item = f64>) -> Vec<u8> {
    v.flat_map(f64::to_le_bytes).collect()
}

/// How many [`SEGMENT`]s `columns` (starting at a segment's edge) span.
fn segments_in(columns: &Range<usize>) -> usize {
    columns.len().div_ceil(SEGMENT)
}

impl Rows {
    /// The runs of the window's columns its rows' sums are taken over, and which of them are
    /// this block's own (the [`SEGMENT`]s of its own columns; the halo columns on either side
    /// are computed, never counted).
    pub(super) fn segments(&self) -> (Vec<Range<usize>>, Range<usize>) {
        let own = self.columns.clone();
        let mut runs: Vec<Range<usize>> = Vec::new();
        if own.start > 0 {
            runs.push(0..own.start);
        }
        let first = runs.len();
        runs.extend(own.clone().step_by(SEGMENT).map(|a| a..(a + SEGMENT).min(own.end)));
        let counted = first..runs.len();
        if own.end < self.width {
            runs.push(own.end..self.width);
        }
        (runs, counted)
    }

    /// The window's columns that are the whole map's first and last, inside it.
    pub(super) fn map_edge_columns(&self) -> &[usize] {
        &self.map_edge_columns
    }

    /// Every block's owned cells' sums in map order (each row's segments across its band's
    /// parts, then the rows), from this block's `sums` (every row of its window, `per_row` runs
    /// each, of which `counted` are its own): the sums and the segments a map row has.
    pub(super) fn gather_sums<const K: usize>(
        &self,
        sums: &[Sums<K>],
        per_row: usize,
        counted: &Range<usize>,
    ) -> (Vec<Sums<K>>, usize) {
        let mine = f64s_to_bytes(
            self.owned.clone().flat_map(|r| &sums[r * per_row + counted.start..r * per_row + counted.end]).flatten().copied(),
        );
        let layout = &self.layout;
        let segs = |k: usize| segments_in(&layout.owned_columns(k, self.map_width));
        let counts: Vec<usize> = (0..layout.len()).map(|k| layout.owned(k).len() * segs(k) * K * 8).collect();
        let all = self.exchange.all_gather(&mine, &counts);
        let values: Vec<Sums<K>> =
            all.as_chunks::<8>().0.as_chunks::<K>().0.iter().map(|row| row.map(f64::from_le_bytes)).collect();
        let parts = layout.parts();
        if parts == 1 {
            return (values, segs(0));
        }
        // rank by rank (a band's parts in turn) to map order (a row's parts in turn)
        let starts: Vec<usize> = counts.iter().scan(0, |at, &n| Some(std::mem::replace(at, *at + n / (K * 8)))).collect();
        let mut out = Vec::with_capacity(values.len());
        for band in 0..layout.len() / parts {
            let first = band * parts;
            for i in 0..layout.owned(first).len() {
                for k in first..first + parts {
                    let at = starts[k] + i * segs(k);
                    out.extend_from_slice(&values[at..at + segs(k)]);
                }
            }
        }
        (out, segments_in(&(0..self.map_width)))
    }

    /// The largest of every block's `x`.
    pub(super) fn max(&self, x: f64) -> f64 {
        let all = self.exchange.all_gather(&x.to_le_bytes(), &vec![8; self.layout.len()]);
        all.as_chunks::<8>().0.iter().map(|b| f64::from_le_bytes(*b)).fold(x, f64::max)
    }

    /// Whether `mine` holds on every rank.
    pub(super) fn all(&self, mine: bool) -> bool {
        self.exchange.all_gather(&[u8::from(mine)], &vec![1; self.layout.len()]).iter().all(|&b| b == 1)
    }

    /// Whether row `r` of the window is the whole map's first or last row (inside the window
    /// where the map wraps).
    pub(super) fn is_map_edge(&self, r: usize) -> bool {
        self.map_edges.contains(&r)
    }

    /// The window's own cells, row by row: each row's run of cells.
    pub(super) fn owned_runs(&self) -> impl Iterator<Item = Range<usize>> + '_ {
        let (w, c) = (self.width, self.columns.clone());
        self.owned.clone().map(move |r| r * w + c.start..r * w + c.end)
    }

    /// Refreshes the halo rows and columns of every evolving field of `st` (this block's
    /// window) from the blocks that own them: first each block's last rows down to the block
    /// below and its first rows up to the block above (whole window rows), then its last
    /// columns right and its first columns left (every window row, so the corners come from the
    /// rows just received).
    pub(super) fn swap_halos(&self, st: &mut State) {
        let rank = self.exchange.rank();
        let layout = &self.layout;
        let (above, below) = (layout.above(rank), layout.below(rank));
        let (left, right) = (layout.beside(rank, 0, -1), layout.beside(rank, 0, 1));
        let w = self.width;
        let (owned, rows) = (self.owned.clone(), st.height);
        let cols = self.columns.clone();
        let mut fields = st.evolving_mut();
        let mut buffers = self.halo_buffers.lock().unwrap_or_else(|e| e.into_inner());
        let (send, recv) = &mut *buffers;
        // (the rows and columns sent, those received, to, from)
        let passes = [
            ((owned.end - HALO..owned.end, 0..w), (0..owned.start, 0..w), below, above),
            ((owned.start..owned.start + HALO, 0..w), (owned.end..rows, 0..w), above, below),
            ((0..rows, cols.end - HALO..cols.end), (0..rows, 0..cols.start), right, left),
            ((0..rows, cols.start..cols.start + HALO), (0..rows, cols.end..w), left, right),
        ];
        for ((send_rows, send_cols), (recv_rows, recv_cols), to, from) in passes {
            if to.is_none() && from.is_none() {
                continue;
            }
            send.clear();
            if to.is_some() {
                for f in &fields {
                    for r in send_rows.clone() {
                        put_f32s(send, &f[r * w + send_cols.start..r * w + send_cols.end]);
                    }
                }
            }
            let cells = recv_rows.len() * recv_cols.len();
            recv.resize(if from.is_some() { fields.len() * cells * 4 } else { 0 }, 0);
            self.exchange.shift(send, to, recv, from);
            if from.is_some() {
                for (field, bytes) in fields.iter_mut().zip(recv.chunks_exact(cells * 4)) {
                    let per_row = recv_cols.len() * 4;
                    for (r, bytes) in recv_rows.clone().zip(bytes.chunks_exact(per_row.max(1))) {
                        get_f32s(bytes, &mut field[r * w + recv_cols.start..r * w + recv_cols.end]);
                    }
                }
            }
        }
    }
}

/// Appends `vs` to `out` as little-endian bytes (into room made first: a copy that vectorises).
fn put_f32s(out: &mut Vec<u8>, vs: &[f32]) {
    let start = out.len();
    out.resize(start + vs.len() * 4, 0);
    for (d, v) in out[start..].chunks_exact_mut(4).zip(vs) {
        d.copy_from_slice(&v.to_le_bytes());
    }
}

/// Reads `out.len()` little-endian f32 from `bytes`.
fn get_f32s(bytes: &[u8], out: &mut [f32]) {
    for (d, b) in out.iter_mut().zip(bytes.as_chunks::<4>().0) {
        *d = f32::from_le_bytes(*b);
    }
}

/// One rank's block of a decomposed grid-model run: its window of the state and the simulator
/// that steps it with the others.
pub struct Block {
    sim: CpuSim,
    state: State,
    rows: Arc<Rows>,
}

impl Block {
    /// This rank's block of `whole` (the start, or a checkpoint read back), run with `params`;
    /// `exchange` says which rank this is among how many (each a band of whole rows).
    pub fn new(params: Params, whole: &State, exchange: Arc<dyn Exchange>) -> Result<Self, SimError> {
        let layout = check(&params, whole.height, exchange.ranks())?;
        let (state, rates) = window_of(&params, whole, &layout, exchange.rank())?;
        Self::from_window(params, state, rates, layout, exchange)
    }

    /// This rank's tile of `whole` cut into `bands` bands of rows, each band's columns in
    /// `parts` parts (`bands × parts` ranks; see [`Layout::tiles`]), run with `params`.
    pub fn tiles(
        params: Params,
        whole: &State,
        (bands, parts): (usize, usize),
        exchange: Arc<dyn Exchange>,
    ) -> Result<Self, SimError> {
        check(&params, whole.height, bands)?;
        let layout = Layout::tiles(whole.height, whole.width, bands, parts, params.border == Border::Wrap)?;
        if layout.len() != exchange.ranks() {
            return Err(BlockError::Message(format!("{bands} x {parts} tiles over {} ranks", exchange.ranks())).into());
        }
        let (state, rates) = window_of(&params, whole, &layout, exchange.rank())?;
        Self::from_window(params, state, rates, layout, exchange)
    }

    /// Rank `exchange.rank()`'s block from its window `state` and the sources' `rates` on it
    /// (see [`window_of`]).
    fn from_window(
        params: Params,
        state: State,
        rates: Vec<f32>,
        layout: Layout,
        exchange: Arc<dyn Exchange>,
    ) -> Result<Self, SimError> {
        let (sim, rows) = Self::stepper(params, &state, rates, layout, exchange)?;
        Ok(Self { sim, state, rows })
    }

    /// The simulator of rank `exchange.rank()`'s window `state` in `layout`, and its place
    /// among the others.
    fn stepper(
        params: Params,
        state: &State,
        rates: Vec<f32>,
        layout: Layout,
        exchange: Arc<dyn Exchange>,
    ) -> Result<(CpuSim, Arc<Rows>), SimError> {
        let rank = exchange.rank();
        let window = layout.window(rank);
        let map_width = layout.columns.map_or(state.width, |(w, _)| w);
        let window_columns = layout.window_columns(rank, map_width);
        if state.height != window.len() || state.width != window_columns.len() {
            return Err(BlockError::Window { rows: state.height, expected: window.len() }.into());
        }
        let map_edges = (0..window.len()).filter(|&k| window[k] == 0 || window[k] + 1 == layout.height).collect();
        let columns = layout.owned_columns_in_window(rank, map_width);
        // a wrapping map's first and last columns inside a window cut from a band's columns
        let map_edge_columns = (0..window_columns.len())
            .filter(|&k| layout.parts() > 1 && (window_columns[k] == 0 || window_columns[k] + 1 == map_width))
            .collect();
        let rows = Arc::new(Rows {
            exchange,
            owned: layout.owned_in_window(rank),
            columns,
            width: state.width,
            map_width,
            layout,
            map_edges,
            map_edge_columns,
            halo_buffers: Default::default(),
        });
        let sim = CpuSim::for_block(params, state, rates, rows.clone())?;
        Ok((sim, rows))
    }

    /// `n` iterations, every rank together (see [`CpuSim::run`]).
    pub fn run(&mut self, n: u64) {
        self.sim.run(&mut self.state, n);
    }

    /// The simulator.
    pub fn sim(&self) -> &CpuSim {
        &self.sim
    }

    /// This block's window of the state: its own rows with the halo rows around them. Its
    /// iteration, times and books are the whole run's.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// How many ranks run the map.
    pub fn ranks(&self) -> usize {
        self.rows.layout.len()
    }

    /// The map's rows this rank owns.
    pub fn owned(&self) -> Range<usize> {
        self.rows.layout.owned(self.rows.exchange.rank())
    }

    /// The rows each rank owns, in rank order.
    pub fn parts(&self) -> Vec<Range<usize>> {
        (0..self.ranks()).map(|k| self.rows.layout.owned(k)).collect()
    }

    /// How this rank talks to the others.
    pub fn exchange(&self) -> &dyn Exchange {
        &*self.rows.exchange
    }

    /// The output map `name` (see [`State::output_map`]) on this rank's own cells (its own
    /// rows; in a layout of tiles, of its own columns), row by row.
    pub fn owned_map(&self, name: &str) -> Option<Vec<f32>> {
        let map = self.state.output_map(name)?;
        Some(self.rows.owned_runs().flat_map(|run| map[run].iter().copied()).collect())
    }

    /// Which of this rank's own cells are nodata (`None`: none of the map's), as
    /// [`Block::owned_map`].
    pub fn owned_nodata(&self) -> Option<Vec<bool>> {
        let mask = self.state.nodata.as_deref()?;
        Some(self.rows.owned_runs().flat_map(|run| mask[run].iter().copied()).collect())
    }

    /// The balance of the whole run's books (the volumes summed over every rank's cells in map
    /// order, by segments as one process sums them: its bits). Every rank calls it together.
    pub fn balance(&self) -> super::state::Balance {
        let (runs, counted) = self.rows.segments();
        let st = &self.state;
        let sums: Vec<Sums<3>> = (0..st.height).flat_map(|r| runs.iter().map(move |c| st.volume_run(r, c.clone()))).collect();
        let (all, per_row) = self.rows.gather_sums(&sums, runs.len(), &counted);
        let [t, s, w] = super::state::fold_rows(&all, per_row);
        let area = st.cell_size.area();
        st.balance_of(w * area, (t + s) * area)
    }

    /// Whether every value of every rank's own cells is finite (see [`State::finite_on`]).
    /// Every rank calls it together.
    pub fn is_finite(&self) -> bool {
        self.rows.all(self.rows.owned_runs().all(|run| self.state.finite_on(run)))
    }

    /// Gathers every rank's own rows of the fields that evolve into `whole` on rank 0 (`None`
    /// on the others), with the iteration, times and books: the state one process would hold,
    /// byte for byte, where `whole` is the state the run started from (or any earlier one of
    /// it). Every rank calls it together. One field at a time, so that rank 0 holds no more
    /// than one field's bytes beside `whole` (and the others one field of their rows).
    pub fn gather_into(&self, whole: Option<&mut State>) -> Result<(), SimError> {
        let ex = &self.rows.exchange;
        let layout = &self.rows.layout;
        let fields = self.state.evolving();
        let w = self.rows.map_width;
        let columns = |k: usize| layout.owned_columns(k, w);
        let counts: Vec<usize> = (0..layout.len()).map(|k| layout.owned(k).len() * columns(k).len() * 4).collect();
        let total: usize = counts.iter().sum();
        // rank 0's state, if it has the run's shape: checked before and reported after every
        // gather, for every rank to take part in each
        let shape = whole.as_deref().map(|s| (s.width, s.height, s.evolving().len()));
        let mut whole = whole.filter(|_| shape == Some((w, layout.height, fields.len())));
        let mut short = None;
        for (i, field) in fields.iter().enumerate() {
            let mut mine = Vec::with_capacity(counts[ex.rank()]);
            for run in self.rows.owned_runs() {
                put_f32s(&mut mine, &field[run]);
            }
            let Some(all) = ex.gather(&mine, &counts) else { continue };
            drop(mine);
            if all.len() != total {
                short = Some(all.len());
                continue;
            }
            if let Some(whole) = whole.as_deref_mut() {
                let mut into = whole.evolving_mut();
                let mut at = 0;
                for k in 0..layout.len() {
                    let cols = columns(k);
                    for r in layout.owned(k) {
                        let n = cols.len() * 4;
                        get_f32s(&all[at..at + n], &mut into[i][r * w + cols.start..r * w + cols.end]);
                        at += n;
                    }
                }
            }
        }
        if ex.rank() != 0 {
            return Ok(());
        }
        if let Some(n) = short {
            return Err(BlockError::Message(format!("gathered {n} bytes of {total}")).into());
        }
        let whole = whole.ok_or_else(|| {
            BlockError::Message(match shape {
                None => "rank 0 has no state to gather into".into(),
                Some((sw, sh, _)) => format!("gathering {w} x {} cells into a state of {sw} x {sh}", layout.height),
            })
        })?;
        whole.iteration = self.state.iteration;
        whole.time = self.state.time;
        whole.terrain_time = self.state.terrain_time;
        whole.books = self.state.books.clone();
        Ok(())
    }
}

impl Block {
    /// Writes the checkpoint frame of the whole run (the bytes [`State::to_bytes`] gives of the
    /// state one process holds) into `sink` on rank 0 (`None` on the others): its head from
    /// this block's values, each per-cell field gathered from every rank's own rows a batch of
    /// rows at a time, in map order, so that no rank holds more than a batch of the whole map
    /// beside its block. Every rank calls it together.
    pub fn write_frame(&self, params_fingerprint: u64, sink: Option<&mut dyn crate::checkpoint::Sink>) {
        self.write_frame_in(params_fingerprint, sink, FRAME_BATCH);
    }

    /// [`Block::write_frame`] in batches of about `batch` bytes.
    fn write_frame_in(&self, params_fingerprint: u64, sink: Option<&mut dyn crate::checkpoint::Sink>, batch: usize) {
        let shape = (self.rows.map_width, self.rows.layout.height);
        match sink {
            Some(sink) => self.state.write_frame(params_fingerprint, shape, sink, &mut |k, _, out| {
                self.gather_frame_cells(k, batch, &mut |bytes| out.bytes(bytes));
            }),
            None => {
                for k in 0..self.state.frame_cells().len() {
                    self.gather_frame_cells(k, batch, &mut |_| {});
                }
            }
        }
    }

    /// Gathers field `k` of [`State::frame_cells`] of every rank's own rows on rank 0, in batches
    /// of about `batch` bytes of whole rows, each batch's bytes (in map order) handed to `out`
    /// there.
    fn gather_frame_cells(&self, k: usize, batch: usize, out: &mut dyn FnMut(&[u8])) {
        let fields = self.state.frame_cells();
        let (layout, w, ww) = (&self.rows.layout, self.rows.map_width, self.state.width);
        let field = &fields[k];
        let per_cell = field.bytes_per_cell();
        let batch = (batch / (w * per_cell).max(1)).max(1);
        let rank = self.rows.exchange.rank();
        let (mine, cols) = (layout.owned(rank), self.rows.columns.clone());
        let width = |k: usize| layout.owned_columns(k, w).len();
        let in_window = self.rows.owned.start;
        let parts = layout.parts();
        let (mut bytes, mut ordered) = (Vec::new(), Vec::new());
        for start in (0..layout.height).step_by(batch) {
            let rows = start..(start + batch).min(layout.height);
            let counts: Vec<usize> =
                (0..layout.len()).map(|r| overlap(&layout.owned(r), &rows).len() * width(r) * per_cell).collect();
            let own = overlap(&mine, &rows);
            bytes.clear();
            for r in own.clone() {
                let at = (in_window + r - mine.start) * ww;
                field.append_to(at + cols.start..at + cols.end, &mut bytes);
            }
            let Some(all) = self.rows.exchange.gather(&bytes, &counts) else { continue };
            if parts == 1 {
                out(&all);
                continue;
            }
            // rank by rank (a band's parts in turn) to map order (a row's parts in turn)
            let starts: Vec<usize> = counts.iter().scan(0, |at, &n| Some(std::mem::replace(at, *at + n))).collect();
            ordered.clear();
            for r in rows {
                let band = (0..layout.len()).step_by(parts).find(|&k| layout.owned(k).contains(&r)).unwrap_or(0);
                let i = r - overlap(&layout.owned(band), &(start..start + batch)).start;
                for k in band..band + parts {
                    let n = width(k) * per_cell;
                    ordered.extend_from_slice(&all[starts[k] + i * n..starts[k] + (i + 1) * n]);
                }
            }
            out(&ordered);
        }
    }
}

/// Bytes of a checkpoint's rows a rank sends rank 0 at once (see [`Block::write_frame`]).
const FRAME_BATCH: usize = 8 << 20;

/// The rows two ranges of rows share.
fn overlap(a: &Range<usize>, b: &Range<usize>) -> Range<usize> {
    a.start.max(b.start)..a.end.min(b.end).max(a.start.max(b.start))
}

/// The layout of `height` rows over `ranks` for `params`, or why they cannot run in blocks.
fn check(params: &Params, height: usize, ranks: usize) -> Result<Layout, SimError> {
    params.validate()?;
    if params.rain_mode == RainMode::Buckets {
        return Err(BlockError::Unsupported("rain_mode = \"buckets\" (its discs fall anywhere on the map)").into());
    }
    if params.transport == Transport::SemiLagrangian {
        return Err(BlockError::Unsupported("transport = \"semi-lagrangian\"").into());
    }
    Ok(Layout::new(height, ranks, params.border == Border::Wrap)?)
}

/// Rank `rank`'s window of `whole` and the sources' rates on it (empty without sources).
fn window_of(params: &Params, whole: &State, layout: &Layout, rank: usize) -> Result<(State, Vec<f32>), SimError> {
    let window = layout.window(rank);
    let rates = rows_of(&source_rates(params, whole)?, whole.width, &window);
    let rows = whole.rows(&window);
    if layout.parts() == 1 {
        return Ok((rows, rates));
    }
    let cols = layout.window_columns(rank, whole.width);
    let rates = if rates.is_empty() {
        rates
    } else {
        rates.chunks(whole.width).flat_map(|row| cols.iter().map(|&c| row[c])).collect()
    };
    Ok((rows.columns(&cols), rates))
}

/// `rows` of the sources' rates over a map `width` wide (none when there are no sources).
fn rows_of(rates: &[f32], width: usize, rows: &[usize]) -> Vec<f32> {
    if rates.is_empty() {
        return Vec::new();
    }
    rows.iter().flat_map(|&r| rates[r * width..(r + 1) * width].iter().copied()).collect()
}

mod leader;
mod resume;
mod retile;
mod start;

pub use leader::{Leader, ReadRows, follow, stop_followers};
pub use start::{LeaderWindow, Window};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::grid::StartMaps;
    use crate::ranks::Threads;
    use crate::terrain::bench::{Bench, bench};

    /// `params` run `n` iterations in `ranks` blocks (threads), gathered.
    fn in_blocks(params: &Params, whole: &State, ranks: usize, n: u64) -> State {
        let handles: Vec<_> = Threads::ranks(ranks)
            .into_iter()
            .map(|ex| {
                let (params, whole) = (params.clone(), whole.clone());
                std::thread::spawn(move || {
                    let mut block = Block::new(params, &whole, ex.clone()).unwrap();
                    block.run(n);
                    let mut whole = whole;
                    let rank0 = ex.rank() == 0;
                    block.gather_into(rank0.then_some(&mut whole)).unwrap();
                    rank0.then_some(whole)
                })
            })
            .collect();
        let mut out: Vec<Option<State>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        out.swap_remove(0).unwrap()
    }

    fn one_process(params: &Params, whole: &State, n: u64) -> State {
        let mut st = whole.clone();
        CpuSim::new(params.clone(), &st).unwrap().run(&mut st, n);
        st
    }

    /// The settings whose stages read furthest or reduce something, each run in 1 to 4 blocks
    /// of 53 rows (splits of 53, 26 + 27, 17 + 18 + 18, 13 + 13 + 13 + 14).
    fn settings() -> Vec<(&'static str, Params, Option<Vec<bool>>)> {
        let base = Params::default();
        let size = 53usize;
        let holes: Vec<bool> = (0..size * size).map(|i| (i / size).abs_diff(30) + (i % size).abs_diff(20) < 4).collect();
        vec![
            ("the defaults", base.clone(), None),
            (
                "open edges, 8 pipes, a loose layer",
                Params { border: Border::Open, pipes: 8, sediment_layer: true, ..base.clone() },
                None,
            ),
            (
                "wrapping edges, smoothing, a source on a cut",
                Params {
                    border: Border::Wrap,
                    smoothing_threshold: 0.01,
                    smoothing_strength: 0.5,
                    sources: vec![super::super::Source {
                        x: 20.0,
                        y: 26.5,
                        radius: 3.0,
                        rate: 5.0,
                        units: super::super::Units::Cells,
                    }],
                    ..base.clone()
                },
                None,
            ),
            (
                "the signed flux form around nodata holes",
                Params { flux_form: super::super::FluxForm::Signed, ..base.clone() },
                Some(holes),
            ),
        ]
    }

    #[test]
    fn blocks_of_rows_give_the_bytes_of_one_process() {
        for (what, params, holes) in settings() {
            let terrain = bench(Bench::Mountain, 53).unwrap().heights;
            let maps = StartMaps { nodata: holes.as_deref(), ..StartMaps::default() };
            let whole = State::new(&terrain, &params, maps).unwrap();
            let one = one_process(&params, &whole, 12);
            for ranks in 1..=4 {
                let got = in_blocks(&params, &whole, ranks, 12);
                assert_eq!(got.to_bytes(1), one.to_bytes(1), "{what}: {ranks} ranks");
            }
        }
    }

    /// `params` run `n` iterations in `bands × parts` tiles (threads): the state gathered,
    /// the balance every rank sees and the checkpoint written as it is gathered, from rank 0.
    fn in_tiles(params: &Params, whole: &State, tiles: (usize, usize), n: u64) -> (State, super::super::state::Balance, Vec<u8>) {
        let got: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = Threads::ranks(tiles.0 * tiles.1)
                .into_iter()
                .map(|ex| {
                    let params = params.clone();
                    s.spawn(move || {
                        let mut block = Block::tiles(params, whole, tiles, ex.clone()).unwrap();
                        block.run(n);
                        let balance = block.balance();
                        assert!(block.is_finite());
                        let rank0 = ex.rank() == 0;
                        let mut gathered = whole.clone();
                        block.gather_into(rank0.then_some(&mut gathered)).unwrap();
                        let mut frame = Vec::new();
                        // batches of 7 rows of f32 (a batch cuts a band's rows)
                        let sink = rank0.then_some(&mut frame as &mut dyn crate::checkpoint::Sink);
                        block.write_frame_in(9, sink, 7 * whole.width * 4);
                        (gathered, balance, frame)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let balances: Vec<_> = got.iter().map(|g| g.1.clone()).collect();
        assert!(balances.iter().all(|b| *b == balances[0]), "every rank sees one balance");
        got.into_iter().next().unwrap()
    }

    /// A map 2300 columns wide (segments of 1024, 1024 and 252) and 24 rows, and a nodata hole
    /// across its first column cut.
    fn wide() -> (crate::grid::Grid<f32>, Vec<bool>) {
        let (w, h) = (2300usize, 24usize);
        let terrain = bench(Bench::Mountain, 64).unwrap().heights;
        // the bench terrain's rows repeated across (its own noise at this width is a big map)
        let v = (0..w * h).map(|i| terrain.as_slice()[(i / w) * 64 + (i % w) % 64] + (i % w) as f32 * 0.01).collect();
        let terrain = crate::grid::Grid::from_vec(w, h, terrain.cell_size(), v).unwrap();
        let holes = (0..w * h).map(|i| (i / w).abs_diff(12) + (i % w).abs_diff(1023) < 4).collect();
        (terrain, holes)
    }

    #[test]
    fn tiles_of_rows_and_columns_give_the_bytes_of_one_process() {
        let (terrain, holes) = wide();
        // the settings of `settings`, the hole and the source on the first column cut
        for (what, mut params, mask) in settings() {
            for s in &mut params.sources {
                (s.x, s.y) = (1024.0, 14.0);
            }
            let maps = StartMaps { nodata: mask.map(|_| &holes[..]), ..StartMaps::default() };
            let whole = State::new(&terrain, &params, maps).unwrap();
            let one = one_process(&params, &whole, 12);
            let one_frame = one.to_bytes(9);
            for tiles in [(1, 2), (2, 2), (1, 3), (3, 2), (2, 3)] {
                let (got, balance, frame) = in_tiles(&params, &whole, tiles, 12);
                // (not `assert_eq!`: the frames are long)
                assert!(got.to_bytes(9) == one_frame, "{what}: {tiles:?} tiles");
                assert_eq!(balance, one.balance(), "{what}: {tiles:?} tiles");
                assert!(frame == one_frame, "{what}: {tiles:?} tiles, the checkpoint written");
            }
        }
    }

    #[test]
    fn bands_cut_again_into_tiles_and_back_go_on_to_the_bytes_of_one_process() {
        let (terrain, holes) = wide();
        // the wrapping setting with a source on the cut, and the holes with the signed form
        for (what, mut params, mask) in settings().into_iter().skip(2) {
            for s in &mut params.sources {
                (s.x, s.y) = (1024.0, 14.0);
            }
            let maps = StartMaps { nodata: mask.map(|_| &holes[..]), ..StartMaps::default() };
            let whole = State::new(&terrain, &params, maps).unwrap();
            let one = one_process(&params, &whole, 12);
            let wrap = params.border == Border::Wrap;
            for (bands, tiles) in [(4, (2, 2)), (3, (1, 3)), (2, (1, 2))] {
                let got: Vec<Option<State>> = std::thread::scope(|s| {
                    let handles: Vec<_> = Threads::ranks(bands)
                        .into_iter()
                        .map(|ex| {
                            let (params, whole) = (params.clone(), &whole);
                            s.spawn(move || {
                                let mut block = Block::new(params, whole, ex.clone()).unwrap();
                                block.run(4);
                                let layout = Layout::tiles(whole.height, whole.width, tiles.0, tiles.1, wrap).unwrap();
                                block.retile(layout).unwrap();
                                block.run(4);
                                block.retile(Layout::new(whole.height, bands, wrap).unwrap()).unwrap();
                                block.run(4);
                                let mut gathered = (ex.rank() == 0).then(|| whole.clone());
                                block.gather_into(gathered.as_mut()).unwrap();
                                gathered
                            })
                        })
                        .collect();
                    handles.into_iter().map(|h| h.join().unwrap()).collect()
                });
                let got = got.into_iter().flatten().next().unwrap();
                assert!(got.to_bytes(9) == one.to_bytes(9), "{what}: {bands} bands, {tiles:?} tiles and back");
            }
        }
    }

    #[test]
    fn a_layout_cuts_columns_at_segments_and_refuses_parts_thinner_than_the_halo() {
        let l = Layout::tiles(48, 2300, 2, 3, false).unwrap();
        let parts: Vec<_> = (0..3).map(|k| l.owned_columns(k, 2300)).collect();
        assert_eq!(parts, [0..1024, 1024..2048, 2048..2300]);
        assert_eq!(l.owned(4), 24..48);
        assert_eq!(l.window_columns(1, 2300), (1024 - HALO..2048 + HALO).collect::<Vec<_>>());
        let wrapped = Layout::tiles(48, 2300, 2, 2, true).unwrap();
        assert_eq!(wrapped.window_columns(0, 2300)[0], 2300 - HALO);
        // a fourth part would have no segment; a last part of 2 columns is thinner than the halo
        assert!(matches!(Layout::tiles(48, 2300, 1, 4, false), Err(BlockError::TooManyParts { .. })));
        assert!(matches!(Layout::tiles(48, 2050, 1, 3, false), Err(BlockError::TooManyParts { .. })));
    }

    #[test]
    fn blocks_add_up_the_books_and_check_their_rows_as_one_process() {
        let (_, params, holes) = settings().swap_remove(3);
        let terrain = bench(Bench::Mountain, 53).unwrap().heights;
        let whole = State::new(&terrain, &params, StartMaps { nodata: holes.as_deref(), ..StartMaps::default() }).unwrap();
        let one = one_process(&params, &whole, 12);
        for ranks in 1..=4 {
            let got: Vec<_> = std::thread::scope(|s| {
                let handles: Vec<_> = Threads::ranks(ranks)
                    .into_iter()
                    .map(|ex| {
                        let (params, whole) = (params.clone(), &whole);
                        s.spawn(move || {
                            let mut block = Block::new(params, whole, ex).unwrap();
                            block.run(12);
                            let (balance, finite) = (block.balance(), block.is_finite());
                            // a value gone bad on the last rank's rows only
                            if block.exchange().rank() + 1 == ranks {
                                let r = block.rows.owned.end - 1;
                                block.state.water[r * block.state.width] = f32::NAN;
                            }
                            (balance, finite, block.is_finite(), block.owned_map("height").unwrap(), block.owned())
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let mut heights = Vec::new();
            for (balance, finite, finite_after, owned_heights, owned) in got {
                // the bits of one process's volumes, on every rank
                assert_eq!(balance, one.balance(), "{ranks} ranks");
                assert!(finite && !finite_after, "{ranks} ranks: every rank sees one rank's bad value");
                assert_eq!(owned_heights.len(), owned.len() * 53);
                heights.extend(owned_heights);
            }
            assert_eq!(heights, one.heights(), "{ranks} ranks: the owned rows make up the map");
        }
    }

    #[test]
    fn a_run_gathered_from_three_blocks_goes_on_in_two_to_the_same_bytes() {
        let params = Params::default();
        let terrain = bench(Bench::Mountain, 53).unwrap().heights;
        let whole = State::new(&terrain, &params, StartMaps::default()).unwrap();
        let one = one_process(&params, &whole, 12);
        let fingerprint = crate::models::grid::params_fingerprint(&params);
        let saved = in_blocks(&params, &whole, 3, 6).to_bytes(fingerprint);
        let read = State::from_bytes(&saved, fingerprint, u64::MAX).unwrap();
        assert_eq!(in_blocks(&params, &read, 2, 6).to_bytes(fingerprint), one.to_bytes(fingerprint));
    }

    #[test]
    fn a_windows_bytes_are_the_bytes_of_its_state() {
        // nodata holes, a rain map and wrapping windows: every field and mask cut by rows
        let (_, params, holes) = settings().swap_remove(3);
        let params = Params { border: Border::Wrap, rain_mode: RainMode::Map, ..params };
        let terrain = bench(Bench::Mountain, 53).unwrap().heights;
        let rates = (0..53 * 53).map(|i| 1e-6 * (1 + i % 7) as f32).collect();
        let rain = crate::grid::Grid::from_vec(53, 53, terrain.cell_size(), rates).unwrap();
        let maps = StartMaps { nodata: holes.as_deref(), rain: Some(&rain), ..StartMaps::default() };
        let mut whole = State::new(&terrain, &params, maps).unwrap();
        CpuSim::new(params.clone(), &whole).unwrap().run(&mut whole, 3);
        let layout = Layout::new(53, 3, true).unwrap();
        for k in 0..3 {
            let window = layout.window(k);
            assert_eq!(whole.rows_to_bytes(7, &window), whole.rows(&window).to_bytes(7), "rank {k}");
        }
        assert_eq!(whole.rows_to_bytes(7, &(0..53).collect::<Vec<_>>()), whole.to_bytes(7));
    }

    #[test]
    fn a_checkpoint_gathered_as_it_is_written_is_the_bytes_of_one_process() {
        // nodata holes, a rain map, 8 pipes and wrapping windows: every field and the mask
        let (_, params, holes) = settings().swap_remove(3);
        let params = Params { border: Border::Wrap, rain_mode: RainMode::Map, pipes: 8, ..params };
        let terrain = bench(Bench::Mountain, 53).unwrap().heights;
        let rates = (0..53 * 53).map(|i| 1e-6 * (1 + i % 7) as f32).collect();
        let rain = crate::grid::Grid::from_vec(53, 53, terrain.cell_size(), rates).unwrap();
        let maps = StartMaps { nodata: holes.as_deref(), rain: Some(&rain), ..StartMaps::default() };
        let whole = State::new(&terrain, &params, maps).unwrap();
        let one = one_process(&params, &whole, 5).to_bytes(9);
        // batches of one row, of 3 rows (a mask's 12), and of the whole map
        for (ranks, batch) in [(1, 1000), (2, 1), (3, 53 * 12), (4, 1 << 20), (3, 1 << 20)] {
            let got: Vec<Option<Vec<u8>>> = std::thread::scope(|s| {
                let handles: Vec<_> = Threads::ranks(ranks)
                    .into_iter()
                    .map(|ex| {
                        let (params, whole) = (params.clone(), &whole);
                        s.spawn(move || {
                            let mut block = Block::new(params, whole, ex.clone()).unwrap();
                            block.run(5);
                            let mut out = Vec::new();
                            let sink = (ex.rank() == 0).then_some(&mut out as &mut dyn crate::checkpoint::Sink);
                            block.write_frame_in(9, sink, batch);
                            (ex.rank() == 0).then_some(out)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            assert_eq!(got[0].as_deref(), Some(&one[..]), "{ranks} ranks, batches of {batch} bytes");
            assert!(got[1..].iter().all(Option::is_none));
        }
    }

    #[test]
    fn a_gather_into_a_state_of_another_shape_fails_on_rank_0_alone() {
        let params = Params::default();
        let whole = State::new(&bench(Bench::Mountain, 53).unwrap().heights, &params, StartMaps::default()).unwrap();
        let other = State::new(&bench(Bench::Mountain, 40).unwrap().heights, &params, StartMaps::default()).unwrap();
        let got: Vec<bool> = std::thread::scope(|s| {
            let handles: Vec<_> = Threads::ranks(3)
                .into_iter()
                .map(|ex| {
                    let (params, whole, mut other) = (params.clone(), &whole, other.clone());
                    s.spawn(move || {
                        let block = Block::new(params, whole, ex.clone()).unwrap();
                        // every rank takes part in every field's gather, and the others go on
                        let gathered = block.gather_into((ex.rank() == 0).then_some(&mut other)).is_ok();
                        let finite = block.is_finite();
                        gathered && finite
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(got, [false, true, true]);
    }

    #[test]
    fn blocks_refuse_settings_that_read_beyond_their_halo() {
        let whole = State::new(&bench(Bench::Mountain, 53).unwrap().heights, &Params::default(), StartMaps::default()).unwrap();
        for params in [
            Params { rain_mode: RainMode::Buckets, ..Params::default() },
            Params { transport: Transport::SemiLagrangian, ..Params::default() },
        ] {
            let ex = Threads::ranks(1).remove(0);
            assert!(matches!(Block::new(params, &whole, ex), Err(SimError::Blocks(BlockError::Unsupported(_)))));
        }
    }

    #[test]
    fn rank_0_leads_the_others_through_a_run_and_gathers_its_bytes() {
        let (_, params, _) = settings().swap_remove(2);
        let whole = State::new(&bench(Bench::Mountain, 53).unwrap().heights, &params, StartMaps::default()).unwrap();
        let one = one_process(&params, &whole, 12);
        let mut ranks = Threads::ranks(3);
        let rank0 = ranks.remove(0);
        let followers: Vec<_> = ranks.into_iter().map(|ex| std::thread::spawn(move || follow(ex, &mut |_, _| Err(BlockError::Message("no rows here".into()).into()), &mut |_, _| {}))).collect();
        let mut leader = Leader::new(params.clone(), &whole, rank0).unwrap();
        let mut end = whole.clone();
        leader.run(5).unwrap();
        leader.gather_into(&mut end).unwrap();
        assert_eq!(end.iteration, 5);
        leader.run(7).unwrap();
        leader.gather_into(&mut end).unwrap();
        drop(leader);
        for f in followers {
            f.join().unwrap().unwrap();
        }
        assert_eq!(end.to_bytes(1), one.to_bytes(1));
    }

    #[test]
    fn the_others_stop_when_rank_0_stops_before_starting() {
        let mut ranks = Threads::ranks(2);
        let rank0 = ranks.remove(0);
        let follower = std::thread::spawn(move || follow(ranks.remove(0), &mut |_, _| Err(BlockError::Message("no rows here".into()).into()), &mut |_, _| {}));
        let whole = State::new(&bench(Bench::Mountain, 53).unwrap().heights, &Params::default(), StartMaps::default()).unwrap();
        // a bad setting: rank 0 refuses it before it sends anything, and stops the others
        let bad = Params { rain_mode: RainMode::Buckets, ..Params::default() };
        assert!(Leader::new(bad, &whole, rank0.clone()).is_err());
        stop_followers(&*rank0);
        follower.join().unwrap().unwrap();
    }

    #[test]
    fn a_layout_splits_rows_evenly_and_refuses_blocks_thinner_than_the_halo() {
        let l = Layout::new(53, 4, false).unwrap();
        let sizes: Vec<usize> = (0..4).map(|k| l.owned(k).len()).collect();
        assert_eq!(sizes, [13, 13, 13, 14]);
        assert_eq!(l.window(0), (0..13 + HALO).collect::<Vec<_>>());
        let wrapped = Layout::new(53, 4, true).unwrap();
        assert_eq!(wrapped.window(0)[0], 53 - HALO);
        assert_eq!(Layout::new(4 * HALO - 1, 4, false), Err(BlockError::TooManyRanks { ranks: 4, height: 4 * HALO - 1 }));
    }
}
