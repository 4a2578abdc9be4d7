//! Sessions: the whole world in one file (parameters, sources, brush, the full grid state, the
//! droplet or stream-power model's run when one runs, the painted uplift map), so a reload
//! continues bit for bit.
//!
//! Layout: `ERODE-SESSION\n`, a `u32` version, then little-endian `u64`-length-prefixed blocks:
//! a TOML header (`Header`), the grid state as `State::to_bytes`, the droplet run's
//! checkpoint (`Model::checkpoint`; empty when none), then (version 2) the stream-power run's
//! checkpoint (empty when none), the uplift map as little-endian `f32`s (empty when it is 1
//! everywhere), then (version 3) the checkpoint of the run of a model the list makes (empty
//! when none; its parameters are in the header). Each state block carries its own checksum.
//! Version 3 keeps the droplet run's checkpoint as the run writes it (its floor-adjusted
//! parameters' fingerprint); versions 1 and 2 (the droplet state under the parameters as set)
//! still open, version 1 (the first three blocks) with the stream-power model's defaults.

use std::path::{Path, PathBuf};

use erode::models::grid::{Params, State, params_fingerprint};
use erode::models::{droplet, stream_power};

use crate::brush::Brush;
use crate::world::{ModelKind, World};

const MAGIC: &[u8] = b"ERODE-SESSION\n";
const VERSION: u32 = 3;
/// Largest grid a session may hold, cells (a corrupt size must not allocate the machine away).
const MAX_CELLS: u64 = 1 << 30;

/// Why a session could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Reading or writing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Writing failed.
    #[error(transparent)]
    Write(#[from] erode_io::Error),
    /// Not a session, or damaged.
    #[error("{path}: not an erode session or damaged: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// What a session holds besides the states.
#[derive(serde::Serialize, serde::Deserialize)]
struct Header {
    model: ModelKind,
    rain: bool,
    iterations_per_tick: u32,
    droplets_per_tick: u32,
    brush: Brush,
    grid: Params,
    droplet: droplet::Params,
    /// Absent from version 1 files.
    #[serde(default)]
    stream_power: stream_power::Params,
    /// The parameters of each model the list makes, as JSON text by name (version 3).
    #[serde(default)]
    made: std::collections::BTreeMap<String, String>,
}

/// The world as session bytes.
pub fn to_bytes(world: &World) -> Vec<u8> {
    let header = Header {
        model: world.model,
        rain: world.rain,
        iterations_per_tick: world.iterations_per_tick,
        droplets_per_tick: world.droplets_per_tick,
        brush: world.brush,
        grid: world.grid_params.clone(),
        droplet: world.droplet_params.clone(),
        stream_power: world.stream_power_params.clone(),
        made: world
            .made_params
            .iter()
            .map(|(name, table)| (name.to_string(), serde_json::to_string(table).unwrap_or_default()))
            .collect(),
    };
    // the header always serialises: every field is plain data
    let text = toml::to_string(&header).unwrap_or_default();
    let grid = world.state().to_bytes(params_fingerprint(&world.grid_params));
    let run = |model| world.run().filter(|_| world.model == model).map(|r| r.checkpoint()).unwrap_or_default();
    let (droplet, stream_power) = (run(ModelKind::Droplet), run(ModelKind::StreamPower));
    let made = match world.model {
        ModelKind::Made(_) => run(world.model),
        _ => Vec::new(),
    };
    let uplift: Vec<u8> = if world.uplift.iter().all(|&u| u == 1.0) {
        Vec::new()
    } else {
        world.uplift.iter().flat_map(|u| u.to_le_bytes()).collect()
    };
    let blocks = [text.as_bytes(), &grid, &droplet, &stream_power, &uplift, &made];
    let mut out = Vec::with_capacity(64 + blocks.iter().map(|b| b.len() + 8).sum::<usize>());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    for block in blocks {
        out.extend_from_slice(&(block.len() as u64).to_le_bytes());
        out.extend_from_slice(block);
    }
    out
}

/// A world from session bytes; `path` names the file in errors.
pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<World, SessionError> {
    let corrupt = |reason: String| SessionError::Corrupt { path: path.to_path_buf(), reason };
    let rest = bytes.strip_prefix(MAGIC).ok_or_else(|| corrupt("no session header".into()))?;
    let (version, mut rest) = rest.split_at_checked(4).ok_or_else(|| corrupt("truncated".into()))?;
    let version = u32::from_le_bytes([version[0], version[1], version[2], version[3]]);
    let count = match version {
        1 => 3,
        2 => 5,
        VERSION => 6,
        _ => return Err(corrupt(format!("version {version}, this viewer reads 1 to {VERSION}"))),
    };
    let mut blocks = Vec::new();
    for _ in 0..count {
        let (len, tail) = rest.split_at_checked(8).ok_or_else(|| corrupt("truncated".into()))?;
        let len = u64::from_le_bytes(len.try_into().unwrap_or([0; 8]));
        let len = usize::try_from(len).map_err(|_| corrupt("block too large".into()))?;
        let (block, tail) = tail.split_at_checked(len).ok_or_else(|| corrupt("truncated block".into()))?;
        blocks.push(block);
        rest = tail;
    }
    if !rest.is_empty() {
        return Err(corrupt(format!("{} bytes after the last block", rest.len())));
    }
    let text = std::str::from_utf8(blocks[0]).map_err(|e| corrupt(format!("header: {e}")))?;
    let h: Header = toml::from_str(text).map_err(|e| corrupt(format!("header: {e}")))?;
    h.grid.validate().map_err(|e| corrupt(format!("grid parameters: {e}")))?;
    h.droplet.validate().map_err(|e| corrupt(format!("droplet parameters: {e}")))?;
    h.stream_power.validate().map_err(|e| corrupt(format!("stream-power parameters: {e}")))?;
    let state = State::from_bytes(blocks[1], params_fingerprint(&h.grid), MAX_CELLS)
        .map_err(|e| corrupt(format!("grid state: {e}")))?;
    let cells = state.width * state.height;
    let uplift = match blocks.get(4) {
        Some(b) if !b.is_empty() => {
            if b.len() != cells * 4 {
                return Err(corrupt(format!("uplift map of {} bytes for {cells} cells", b.len())));
            }
            b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
        }
        _ => vec![1.0; cells],
    };
    let droplet_params = h.droplet.clone();
    let mut w = World::from_parts(h.model, h.grid, h.droplet, state, h.rain)
        .map_err(|e| corrupt(format!("grid state: {e}")))?;
    w.stream_power_params = h.stream_power;
    for (name, text) in &h.made {
        let model = ModelKind::named(name).ok_or_else(|| corrupt(format!("no model `{name}` in this viewer")))?;
        let table: erode::models::make::Table =
            serde_json::from_str(text).map_err(|e| corrupt(format!("{name} parameters: {e}")))?;
        if let Some(maker) = model.info().make {
            (maker.check)(&table).map_err(|e| corrupt(format!("{name} parameters: {e}")))?;
            w.made_params.insert(model.info().name, table);
        }
    }
    w.uplift = uplift;
    let run = match h.model {
        ModelKind::Grid => None,
        ModelKind::Droplet => Some(("droplet", blocks[2])),
        ModelKind::StreamPower => blocks.get(3).map(|b| ("stream-power", *b)),
        ModelKind::Made(name) => blocks.get(5).map(|b| (name, *b)),
    };
    if let Some((name, block)) = run.filter(|(_, b)| !b.is_empty()) {
        let resumed = if version < 3 && h.model == ModelKind::Droplet {
            // the droplet state under the parameters as set, before the run's own checkpoints
            droplet::State::from_bytes(block, droplet::params_fingerprint(&droplet_params), MAX_CELLS)
                .map_err(crate::world::WorldError::from)
                .and_then(|d| w.adopt_droplet_state(d))
        } else {
            w.resume_run(block, MAX_CELLS)
        };
        resumed.map_err(|e| corrupt(format!("{name} state: {e}")))?;
    }
    w.brush = h.brush;
    w.iterations_per_tick = h.iterations_per_tick.max(1);
    w.droplets_per_tick = h.droplets_per_tick.max(1);
    Ok(w)
}

/// Writes the world to `path` atomically.
pub fn save(world: &World, path: &Path) -> Result<(), SessionError> {
    erode_io::write_atomic(path, &to_bytes(world))?;
    Ok(())
}

/// Reads a world from `path`.
pub fn load(path: &Path) -> Result<World, SessionError> {
    let bytes = std::fs::read(path).map_err(|source| SessionError::Io { path: path.to_path_buf(), source })?;
    from_bytes(&bytes, path)
}
