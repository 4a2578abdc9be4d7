//! Rank 0 leads a run over ranks: it holds the whole state, hands every other rank its block
//! and tells them, one order at a time, to advance, to send their rows, to add up the books or
//! to carry out a task of the front end's (writing their rows of the outputs); the others follow.

use std::sync::Arc;

use super::{Block, BlockError, Layout, Window, check, rows_of, source_rates, window_of};
use crate::ranks::Exchange;
use crate::error::SimError;
use crate::models::grid::params::Params;
use crate::models::grid::state::State;

/// What rank 0 tells the others to do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
    /// Take a block: the parameters (JSON of this many bytes) and the map's rows follow.
    Start { params_bytes: u64, height: u64 },
    /// Start a block from your own rows of the inputs: the parameters (JSON of this many bytes)
    /// and the front end's request to read them by follow.
    StartRows { params_bytes: u64, height: u64 },
    /// Run this many iterations.
    Advance(u64),
    /// Send your rows to rank 0.
    Gather,
    /// Add your rows to the books' volumes.
    Balance,
    /// Say whether your rows are finite.
    Finite,
    /// Carry out the front end's task of this many bytes (they follow) with your block.
    Task(u64),
    /// Take a block of a checkpoint rank 0 reads: the parameters (JSON of this many bytes) and
    /// the frame's head follow, then the rows of your window, a batch at a time.
    Resume { params_bytes: u64, height: u64 },
    /// Send your rows of each field of a checkpoint to rank 0, a batch at a time.
    Checkpoint,
    /// Cut the run again: in this many bands of rows, each band's columns in this many parts.
    Retile { bands: u64, parts: u64 },
    /// Stop.
    Done,
}

impl Order {
    fn to_bytes(self) -> [u8; 24] {
        let (tag, a, b) = match self {
            Order::Start { params_bytes, height } => (1u64, params_bytes, height),
            Order::Advance(n) => (2, n, 0),
            Order::Gather => (3, 0, 0),
            Order::Done => (4, 0, 0),
            Order::Balance => (5, 0, 0),
            Order::Finite => (6, 0, 0),
            Order::Task(len) => (7, len, 0),
            Order::StartRows { params_bytes, height } => (8, params_bytes, height),
            Order::Checkpoint => (9, 0, 0),
            Order::Resume { params_bytes, height } => (10, params_bytes, height),
            Order::Retile { bands, parts } => (11, bands, parts),
        };
        let mut out = [0u8; 24];
        for (k, v) in [tag, a, b].into_iter().enumerate() {
            out[k * 8..k * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        out
    }

    fn from_bytes(b: &[u8]) -> Option<Self> {
        let word = |k: usize| Some(u64::from_le_bytes(b.get(k * 8..k * 8 + 8)?.try_into().ok()?));
        Some(match word(0)? {
            1 => Order::Start { params_bytes: word(1)?, height: word(2)? },
            2 => Order::Advance(word(1)?),
            3 => Order::Gather,
            4 => Order::Done,
            5 => Order::Balance,
            6 => Order::Finite,
            7 => Order::Task(word(1)?),
            8 => Order::StartRows { params_bytes: word(1)?, height: word(2)? },
            9 => Order::Checkpoint,
            10 => Order::Resume { params_bytes: word(1)?, height: word(2)? },
            11 => Order::Retile { bands: word(1)?, parts: word(2)? },
            _ => return None,
        })
    }
}

/// Rank 0's side of a run over ranks: it holds the whole state, hands every other rank its
/// block, and tells them what to do (the others run [`follow`]); dropping it lets them stop.
pub struct Leader {
    block: Block,
    stopped: bool,
    /// Parts of each band's columns while the run steps (1: bands of whole rows).
    parts: usize,
    /// Whether the blocks are cut so now.
    tiled: bool,
}

impl Leader {
    /// Runs `whole` with `params` over the ranks of `exchange` (this one rank 0): sends every
    /// other rank the parameters and its rows.
    pub fn new(params: Params, whole: &State, exchange: Arc<dyn Exchange>) -> Result<Self, SimError> {
        let layout = check(&params, whole.height, exchange.ranks())?;
        let json = serde_json::to_vec(&params).map_err(|e| BlockError::Message(e.to_string()))?;
        let order = Order::Start { params_bytes: json.len() as u64, height: whole.height as u64 };
        exchange.broadcast(&order.to_bytes(), 24);
        exchange.broadcast(&json, json.len());
        // each window's bytes written straight from the whole's rows (no window state between),
        // one rank's at a time, as it is sent
        let rates = source_rates(&params, whole)?;
        let mut part = |k: usize| {
            let window = layout.window(k);
            let bytes = whole.rows_to_bytes(0, &window);
            let mut part = (bytes.len() as u64).to_le_bytes().to_vec();
            part.extend(bytes);
            part.extend(rows_of(&rates, whole.width, &window).iter().flat_map(|v| v.to_le_bytes()));
            part
        };
        exchange.scatter(Some(&mut part));
        let (state, rates) = window_of(&params, whole, &layout, 0)?;
        let block = Block::from_window(params, state, rates, layout, exchange)?;
        Ok(Self::leading(block))
    }

    /// Runs a new run of `params` on a map `height` rows high over the ranks of `exchange` (this
    /// one rank 0), each rank's block started from its own rows of the inputs
    /// ([`Block::start`]): rank 0 from `window`, its window's rows as its front end read them,
    /// the others from those their front ends read by `request` (see [`follow`]). No rank
    /// builds the whole map's state.
    pub fn start(
        params: Params,
        height: usize,
        request: &[u8],
        window: Result<Window, SimError>,
        exchange: Arc<dyn Exchange>,
    ) -> Result<Self, SimError> {
        // a setting that cannot run in blocks is refused before the others hear of it
        check(&params, height, exchange.ranks())?;
        let json = serde_json::to_vec(&params).map_err(|e| BlockError::Message(e.to_string()))?;
        let order = Order::StartRows { params_bytes: json.len() as u64, height: height as u64 };
        exchange.broadcast(&order.to_bytes(), 24);
        exchange.broadcast(&json, json.len());
        crate::ranks::broadcast_sized(&*exchange, request);
        let block = Block::start_read(params, height, window, exchange)?;
        Ok(Self::leading(block))
    }

    /// Resumes a run of `params` over the ranks of `exchange` (this one rank 0) from the
    /// checkpoint frame `open` reads (written with the same parameters, of at most `max_cells`
    /// cells), which no rank holds whole: rank 0 reads it a batch of rows of a field at a time
    /// and hands each rank the rows of its window (see `resume.rs`). Returns the leader and the
    /// run's state on rank 0: the frame's values without its cells but for the whole map's nodata
    /// mask and rain map. Nothing is sent before the frame's head is read and fits the ranks.
    pub fn resume(
        params: Params,
        open: &crate::checkpoint::OpenFrame<'_>,
        max_cells: u64,
        exchange: Arc<dyn Exchange>,
    ) -> Result<(Self, State), SimError> {
        let head = super::resume::read_head(open, crate::models::grid::params_fingerprint(&params), max_cells)?;
        let layout = check(&params, head.state.height, exchange.ranks())?;
        let json = serde_json::to_vec(&params).map_err(|e| BlockError::Message(e.to_string()))?;
        let order = Order::Resume { params_bytes: json.len() as u64, height: head.state.height as u64 };
        exchange.broadcast(&order.to_bytes(), 24);
        exchange.broadcast(&json, json.len());
        crate::ranks::broadcast_sized(&*exchange, &head.bytes);
        let version = frame_version(&head.bytes);
        let state = head.state.clone();
        let (window, rates, kept) =
            super::resume::windows(&params, &state, version, &layout, &exchange, Some((head, open)))?;
        let block = Block::from_window(params, window, rates, layout, exchange)?;
        let kept = kept.ok_or(BlockError::Message("rank 0 kept no state".into()))?;
        Ok((Self::leading(block), kept))
    }

    fn leading(block: Block) -> Self {
        Self { block, stopped: false, parts: 1, tiled: false }
    }

    fn order(&self, order: Order) {
        self.block.rows.exchange.broadcast(&order.to_bytes(), 24);
    }

    /// Steps the run in tiles from now on: each band of rows' columns in `parts` parts
    /// ([`Layout::tiles`]; the ranks a multiple of `parts`). The front end's tasks (writing its
    /// rows) still see bands of whole rows: [`Leader::bands`] cuts the run back for them, and
    /// the next iterations cut it again ([`Block::retile`]); the bytes are the same either way. Refused, before
    /// the others hear of it, where the map's columns do not make `parts` parts.
    pub fn tile(&mut self, parts: usize) -> Result<(), SimError> {
        let ranks = self.block.ranks();
        if parts == 0 || !ranks.is_multiple_of(parts) {
            return Err(BlockError::Message(format!("{ranks} ranks do not make bands of {parts} parts")).into());
        }
        cut(&self.block, ranks / parts, parts)?;
        self.parts = parts;
        Ok(())
    }

    /// Parts of each band's columns while the run steps ([`Leader::tile`]; 1: whole rows).
    pub fn parts(&self) -> usize {
        self.parts
    }

    /// Cuts the run into tiles (`tiles`, where [`Leader::tile`] asked for them) or bands of
    /// whole rows, every rank together, where it is not cut so already.
    fn cut_to(&mut self, tiles: bool) -> Result<(), SimError> {
        let tiles = tiles && self.parts > 1;
        if tiles == self.tiled {
            return Ok(());
        }
        let ranks = self.block.ranks();
        let (bands, parts) = if tiles { (ranks / self.parts, self.parts) } else { (ranks, 1) };
        self.order(Order::Retile { bands: bands as u64, parts: parts as u64 });
        let layout = cut(&self.block, bands, parts)?;
        self.block.retile(layout)?;
        self.tiled = tiles;
        Ok(())
    }

    /// Cuts the run back into bands of whole rows (see [`Leader::tile`]): before the front end
    /// writes its rows.
    pub fn bands(&mut self) -> Result<(), SimError> {
        self.cut_to(false)
    }

    /// `n` iterations on every rank (in tiles, where [`Leader::tile`] asked for them).
    pub fn run(&mut self, n: u64) -> Result<(), SimError> {
        self.cut_to(true)?;
        self.order(Order::Advance(n));
        self.block.run(n);
        Ok(())
    }

    /// Rank 0's block.
    pub fn block(&self) -> &Block {
        &self.block
    }

    /// Brings `whole` (the state the run started from, or an earlier gather) up to date from
    /// every rank (see [`Block::gather_into`]).
    pub fn gather_into(&self, whole: &mut State) -> Result<(), SimError> {
        self.order(Order::Gather);
        self.block.gather_into(Some(whole))
    }

    /// Writes the whole run's checkpoint frame into `sink`, gathered from every rank as it is
    /// written (see [`Block::write_frame`]): the bytes one process's [`State::to_bytes`] gives.
    pub fn write_checkpoint(&self, params_fingerprint: u64, sink: &mut dyn crate::checkpoint::Sink) {
        self.order(Order::Checkpoint);
        self.block.write_frame(params_fingerprint, Some(sink));
    }

    /// The balance of the whole run's books (see [`Block::balance`]).
    pub fn balance(&self) -> crate::models::grid::Balance {
        self.order(Order::Balance);
        self.block.balance()
    }

    /// Whether every rank's rows are finite (see [`Block::is_finite`]).
    pub fn is_finite(&self) -> bool {
        self.order(Order::Finite);
        self.block.is_finite()
    }

    /// Hands every other rank the front end's task `bytes` (their [`follow`] gives them to its
    /// `task` with their block); rank 0 then carries it out with [`Leader::block`] itself, as
    /// they do. A task that talks to the other ranks must make them all agree on how it went.
    pub fn task(&self, bytes: &[u8]) {
        self.order(Order::Task(bytes.len() as u64));
        self.block.rows.exchange.broadcast(bytes, bytes.len());
    }

    /// Tells the other ranks to stop (as dropping it does).
    pub fn stop(&mut self) {
        if !self.stopped {
            self.order(Order::Done);
            self.stopped = true;
        }
    }
}

impl Drop for Leader {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Tells the other ranks to stop, from rank 0 when it stops before it made a [`Leader`] (bad
/// input): they end [`follow`].
pub fn stop_followers(exchange: &dyn Exchange) {
    exchange.broadcast(&Order::Done.to_bytes(), 24);
}

/// How a rank's front end reads its window of a run's inputs ([`follow`]): from rank 0's
/// request and the window's rows.
pub type ReadRows<'a> = dyn FnMut(&[u8], &[usize]) -> Result<Window, SimError> + 'a;

/// A rank other than 0: waits for rank 0's orders (see [`Leader`]) and carries them out until
/// it says stop; the front end's tasks ([`Leader::task`]) go to `task` with this rank's block,
/// and a start from the ranks' own rows ([`Leader::start`]) asks `read` for this rank's window
/// of the inputs, given rank 0's request and the window's rows (in order; they may wrap
/// around the map). Rank 0 stopping before it started anything (bad input), or a start that
/// failed (rank 0 reports why), ends this too.
pub fn follow(
    exchange: Arc<dyn Exchange>,
    read: &mut ReadRows<'_>,
    task: &mut dyn FnMut(&[u8], &Block),
) -> Result<(), SimError> {
    let mut block: Option<Block> = None;
    loop {
        let order = Order::from_bytes(&exchange.broadcast(&[], 24))
            .ok_or(BlockError::Message("an order rank 0 did not send".into()))?;
        match order {
            Order::Start { params_bytes, height } => {
                let json = exchange.broadcast(&[], params_bytes as usize);
                let params: Params =
                    serde_json::from_slice(&json).map_err(|e| BlockError::Message(format!("parameters: {e}")))?;
                let part = exchange.scatter(None);
                let layout = check(&params, height as usize, exchange.ranks())?;
                let (state, rates) = split_part(&part)?;
                // its bytes are not needed beside the state and the block's scratch
                drop(part);
                block = Some(Block::from_window(params, state, rates, layout, exchange.clone())?);
            }
            Order::StartRows { params_bytes, height } => {
                let json = exchange.broadcast(&[], params_bytes as usize);
                let params: Params =
                    serde_json::from_slice(&json).map_err(|e| BlockError::Message(format!("parameters: {e}")))?;
                let request = crate::ranks::broadcast_sized(&*exchange, &[]);
                let height = height as usize;
                let layout = check(&params, height, exchange.ranks())?;
                let window = read(&request, &layout.window(exchange.rank()));
                match Block::start_read(params, height, window, exchange.clone()) {
                    Ok(b) => block = Some(b),
                    // every rank failed with it; rank 0 says why
                    Err(_) => return Ok(()),
                }
            }
            Order::Resume { params_bytes, height } => {
                let json = exchange.broadcast(&[], params_bytes as usize);
                let params: Params =
                    serde_json::from_slice(&json).map_err(|e| BlockError::Message(format!("parameters: {e}")))?;
                let head = crate::ranks::broadcast_sized(&*exchange, &[]);
                let fingerprint = crate::models::grid::params_fingerprint(&params);
                let state = super::resume::parse_head(&head, fingerprint, u64::MAX)?;
                let layout = check(&params, height as usize, exchange.ranks())?;
                let windows = super::resume::windows(&params, &state, frame_version(&head), &layout, &exchange, None);
                match windows.and_then(|(window, rates, _)| Block::from_window(params, window, rates, layout, exchange.clone())) {
                    Ok(b) => block = Some(b),
                    // every rank failed with it; rank 0 says why
                    Err(_) => return Ok(()),
                }
            }
            Order::Advance(n) => {
                block.as_mut().ok_or(BlockError::Message("advance before start".into()))?.run(n);
            }
            Order::Gather => {
                block.as_ref().ok_or(BlockError::Message("gather before start".into()))?.gather_into(None)?;
            }
            Order::Checkpoint => {
                block.as_ref().ok_or(BlockError::Message("a checkpoint before start".into()))?.write_frame(0, None);
            }
            Order::Balance => {
                block.as_ref().ok_or(BlockError::Message("books before start".into()))?.balance();
            }
            Order::Finite => {
                block.as_ref().ok_or(BlockError::Message("finite before start".into()))?.is_finite();
            }
            Order::Task(len) => {
                let bytes = exchange.broadcast(&[], len as usize);
                task(&bytes, block.as_ref().ok_or(BlockError::Message("a task before start".into()))?);
            }
            Order::Retile { bands, parts } => {
                let block = block.as_mut().ok_or(BlockError::Message("a cut before start".into()))?;
                let layout = cut(block, bands as usize, parts as usize)?;
                block.retile(layout)?;
            }
            Order::Done => return Ok(()),
        }
    }
}

/// The layout of `block`'s map in `bands` bands of rows, each in `parts` parts of columns.
fn cut(block: &Block, bands: usize, parts: usize) -> Result<Layout, SimError> {
    let (w, h) = (block.rows.map_width, block.rows.layout.height);
    let wrap = block.rows.layout.wrap;
    Ok(if parts > 1 { Layout::tiles(h, w, bands, parts, wrap)? } else { Layout::new(h, bands, wrap)? })
}

/// The version of the frame whose head is `head`.
fn frame_version(head: &[u8]) -> u32 {
    head.get(8..12).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// A window's state and its sources' rates, as [`Leader::new`] sends them.
fn split_part(part: &[u8]) -> Result<(State, Vec<f32>), SimError> {
    let short = || BlockError::Message(format!("a block of {} bytes", part.len()));
    let (len, rest) = part.split_first_chunk::<8>().ok_or_else(short)?;
    let len = usize::try_from(u64::from_le_bytes(*len)).map_err(|_| short())?;
    let (state, rates) = (rest.get(..len).ok_or_else(short)?, &rest[len..]);
    let state = State::from_bytes(state, 0, u64::MAX)?;
    let rates = rates.as_chunks::<4>().0.iter().map(|b| f32::from_le_bytes(*b)).collect();
    Ok((state, rates))
}
