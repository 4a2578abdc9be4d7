//! A run over ranks resumed from a checkpoint that no rank holds whole: rank 0 reads the frame
//! as it comes (a field at a time, a batch of rows at a time, the checksum taken on the way) and
//! hands every rank the rows of its window in each batch; each rank fills its window's state
//! from them. Rank 0 keeps, as a fresh start over ranks does, the whole map's nodata mask and
//! rain map (what the sources' cells and a gather need), nothing else of the map.

use std::io::Read;
use std::sync::Arc;

use super::{Layout, rows_of};
use crate::checkpoint::{CheckpointError, FrameSum, OpenFrame, Reader, fnv1a64_reader};
use crate::error::SimError;
use crate::models::grid::cpu::source_rates_on;
use crate::models::grid::params::Params;
use crate::models::grid::state::State;
use crate::ranks::Exchange;

/// Bytes of a frame rank 0 reads and hands out at once (in the tests, a few rows: every test
/// of a resume over ranks reads its frame in many batches).
const BATCH: usize = if cfg!(test) { 1000 } else { 8 << 20 };

/// What rank 0 has read of a frame: its head's bytes and the state they say (no cells yet).
pub(super) struct Head<'a> {
    /// The frame, read up to the end of its head.
    pub(super) src: Box<dyn Read + 'a>,
    pub(super) sum: FrameSum,
    /// Its bytes, from the magic to the last flag (what the others parse too).
    pub(super) bytes: Vec<u8>,
    pub(super) state: State,
}

/// Reads the head of the frame `open` opens, refusing another model's, a version this erode
/// does not read, other parameters (`params_fingerprint`) or more than `max_cells` cells.
pub(super) fn read_head<'a>(open: &OpenFrame<'a>, params_fingerprint: u64, max_cells: u64) -> Result<Head<'a>, SimError> {
    let mut src = open()?;
    let mut sum = FrameSum::new();
    let mut bytes = vec![0u8; 12];
    read_exact(&mut *src, &mut bytes, &mut sum)?;
    let version = State::frame_version(&bytes)?;
    bytes.resize(State::head_len(version), 0);
    read_exact(&mut *src, &mut bytes[12..], &mut sum)?;
    let state = parse_head(&bytes, params_fingerprint, max_cells)?;
    Ok(Head { src, sum, bytes, state })
}

/// The state a frame's head `bytes` say, with no cells (see [`State::read_head`]).
pub(super) fn parse_head(bytes: &[u8], params_fingerprint: u64, max_cells: u64) -> Result<State, SimError> {
    State::read_head(&mut Reader::unchecked(bytes), params_fingerprint, max_cells)
}

/// `buf.len()` bytes of the frame, taken into its checksum.
fn read_exact(src: &mut dyn Read, buf: &mut [u8], sum: &mut FrameSum) -> Result<(), CheckpointError> {
    src.read_exact(buf).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => CheckpointError::Truncated,
        _ => CheckpointError::Invalid(e.to_string()),
    })?;
    sum.add(buf);
    Ok(())
}

/// This rank's window of the frame whose head is `head` (every rank's parse of the same bytes),
/// `version` its version, and the sources' rates on it; on rank 0, `reading` is the frame being
/// read (after its head) and how to open it again, and it also returns the state it keeps (the
/// head's values, the whole nodata mask and rain map, no other cells). Every rank calls it
/// together; a frame that turns out truncated, corrupt or with trailing bytes fails it on every
/// rank (rank 0 says why, the others that rank 0 refused it).
pub(super) fn windows(
    params: &Params,
    head: &State,
    version: u32,
    layout: &Layout,
    ex: &Arc<dyn Exchange>,
    reading: Option<(Head<'_>, &OpenFrame<'_>)>,
) -> Result<(State, Vec<f32>, Option<State>), SimError> {
    let rank = ex.rank();
    let (w, height) = (head.width, head.height);
    let windows: Vec<Vec<usize>> = (0..layout.len()).map(|k| layout.window(k)).collect();
    let window = &windows[rank];
    let mut st = head.clone().with_rows(window.len());
    // rank 0: the frame as it reads, and the whole map's mask and rain map it keeps
    let (mut reading, open) = match reading {
        Some((h, open)) => (Some((h.src, h.sum)), Some(open)),
        None => (None, None),
    };
    let mut kept = reading.as_ref().map(|_| State {
        rain_map: head.rain_map.as_ref().map(|_| vec![0.0; w * height]),
        nodata: head.nodata.as_ref().map(|_| vec![false; w * height]),
        ..head.clone()
    });
    let mut failed: Option<SimError> = None;
    let fields = st.frame_cells_mut(version).len();
    let mut buf = Vec::new();
    for k in 0..fields {
        let per_row = w * st.frame_cells_mut(version)[k].bytes_per_cell();
        let batch = (BATCH / per_row).max(1);
        for start in (0..height).step_by(batch) {
            let rows = start..(start + batch).min(height);
            let got = match &mut reading {
                Some((src, sum)) => {
                    buf.resize(rows.len() * per_row, 0);
                    if failed.is_none()
                        && let Err(e) = read_exact(&mut **src, &mut buf, sum)
                    {
                        failed = Some(e.into());
                    }
                    // each other rank's rows of its window in this batch, in window order
                    let in_batch = |q: usize| -> Vec<u8> {
                        windows[q]
                            .iter()
                            .filter(|r| rows.contains(r))
                            .flat_map(|&r| &buf[(r - start) * per_row..(r - start + 1) * per_row])
                            .copied()
                            .collect()
                    };
                    ex.scatter(Some(&mut |q| in_batch(q)));
                    if let Some(kept) = &mut kept
                        && let Some(mut field) = kept.frame_cells_mut(version).into_iter().nth(k)
                        && field.len() > 0
                    {
                        field.fill(start * w, &buf);
                    }
                    in_batch(0)
                }
                None => ex.scatter(None),
            };
            let mut field = st.frame_cells_mut(version).into_iter().nth(k);
            let mut at = 0;
            for (j, _) in window.iter().enumerate().filter(|(_, r)| rows.contains(r)) {
                if let (Some(field), Some(row)) = (&mut field, got.get(at..at + per_row)) {
                    field.fill(j * w, row);
                }
                at += per_row;
            }
        }
    }
    // rank 0: the checksum, nothing after it, the sources' cells over the whole mask
    let mut rates = Vec::new();
    if let (Some((src, sum)), Some(open), Some(kept)) = (&mut reading, open, &kept) {
        if failed.is_none() {
            failed = finish(&mut **src, sum, open, head, version).err();
        }
        if failed.is_none() {
            match source_rates_on(params, (w, height, head.cell_size), kept.nodata.as_deref()) {
                Ok(r) => rates = r.into_iter().map(|v| v as f32).collect(),
                Err(e) => failed = Some(e),
            }
        }
    }
    let ok = ex.broadcast(&[u8::from(failed.is_none())], 1).first() == Some(&1);
    if !ok {
        return Err(failed.unwrap_or_else(|| super::BlockError::OtherRank { rank: 0, message: "the checkpoint was refused".into() }.into()));
    }
    let rates = if params.sources.is_empty() {
        Vec::new()
    } else {
        let part = |q: usize| -> Vec<u8> { rows_of(&rates, w, &windows[q]).iter().flat_map(|v| v.to_le_bytes()).collect() };
        let got = if rank == 0 { ex.scatter(Some(&mut |q| part(q))) } else { ex.scatter(None) };
        let got = if rank == 0 { part(0) } else { got };
        got.as_chunks::<4>().0.iter().map(|b| f32::from_le_bytes(*b)).collect()
    };
    Ok((st, rates, kept))
}

/// The end of a frame read: its stored checksum that of the bytes read (or, for a frame
/// written before the word-wise checksum, the byte-wise one of the frame opened again), and
/// nothing after it.
fn finish(src: &mut dyn Read, sum: &FrameSum, open: &OpenFrame<'_>, head: &State, version: u32) -> Result<(), SimError> {
    let mut stored = [0u8; 8];
    read_exact(src, &mut stored, &mut FrameSum::new())?;
    let mut more = [0u8; 1];
    if !matches!(src.read(&mut more), Ok(0)) {
        return Err(CheckpointError::Trailing.into());
    }
    let stored = u64::from_le_bytes(stored);
    if sum.finish() == stored {
        return Ok(());
    }
    // the frame's bytes before its checksum: its head and every field's cells
    let mut probe = head.clone().with_rows(0);
    let per_cell: usize = probe.frame_cells_mut(version).iter().map(|f| f.bytes_per_cell()).sum();
    let len = State::head_len(version) as u64 + (per_cell * head.width * head.height) as u64;
    let again = open()?;
    match fnv1a64_reader(again, len) {
        Some(h) if h == stored => Ok(()),
        _ => Err(CheckpointError::Checksum.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Leader, follow, stop_followers};
    use super::*;
    use crate::models::grid::params::Border;
    use crate::models::grid::{CpuSim, RainMode, Source, StartMaps, Units};
    use crate::ranks::Threads;
    use crate::terrain::bench::{Bench, bench};

    /// A run with everything a frame holds: nodata holes, a rain map, 8 pipes, a source beside
    /// a hole, wrapping edges; its state after 3 iterations, and its checkpoint after 7.
    fn run() -> (Params, State, Vec<u8>) {
        let params = Params {
            border: Border::Wrap,
            rain_mode: RainMode::Map,
            pipes: 8,
            sources: vec![Source { x: 24.0, y: 30.0, radius: 3.0, rate: 5.0, units: Units::Cells }],
            ..Params::default()
        };
        let terrain = bench(Bench::Mountain, 53).unwrap().heights;
        let holes: Vec<bool> = (0..53 * 53usize).map(|i| (i / 53).abs_diff(30) + (i % 53).abs_diff(20) < 4).collect();
        let rates = (0..53 * 53).map(|i| 1e-6 * (1 + i % 7) as f32).collect();
        let rain = crate::grid::Grid::from_vec(53, 53, terrain.cell_size(), rates).unwrap();
        let maps = StartMaps { nodata: Some(&holes), rain: Some(&rain), ..StartMaps::default() };
        let mut st = State::new(&terrain, &params, maps).unwrap();
        let mut sim = CpuSim::new(params.clone(), &st).unwrap();
        sim.run(&mut st, 3);
        let at3 = st.clone();
        sim.run(&mut st, 4);
        (params.clone(), at3, st.to_bytes(crate::models::grid::params_fingerprint(&params)))
    }

    /// `frame` resumed over `ranks` ranks (threads) and run 4 iterations: its checkpoint, or
    /// rank 0's error (the others end quietly).
    fn resumed(params: &Params, frame: &[u8], ranks: usize) -> Result<Vec<u8>, SimError> {
        let mut all = Threads::ranks(ranks);
        let rank0 = all.remove(0);
        let no_rows = |_: &[u8], _: &[usize]| Err(super::super::BlockError::Message("no rows here".into()).into());
        let followers: Vec<_> =
            all.into_iter().map(|ex| std::thread::spawn(move || follow(ex, &mut { no_rows }, &mut |_, _| {}))).collect();
        let open = || -> Result<Box<dyn Read>, SimError> { Ok(Box::new(std::io::Cursor::new(frame.to_vec()))) };
        let got = Leader::resume(params.clone(), &open, u64::MAX, rank0.clone()).map(|(mut leader, kept)| {
            assert!(kept.terrain.is_empty() && kept.nodata.as_ref().is_some_and(|m| m.len() == 53 * 53));
            leader.run(4).unwrap();
            let mut out = Vec::new();
            leader.write_checkpoint(crate::models::grid::params_fingerprint(params), &mut out);
            out
        });
        if got.is_err() && !rank0_sent_anything(&got) {
            stop_followers(&*rank0);
        }
        for f in followers {
            f.join().unwrap().unwrap();
        }
        got
    }

    /// Whether rank 0 got as far as telling the others (a refusal of the head sends nothing).
    fn rank0_sent_anything(got: &Result<Vec<u8>, SimError>) -> bool {
        !matches!(got, Err(SimError::Checkpoint(CheckpointError::Parameters | CheckpointError::NotACheckpoint { .. })))
    }

    #[test]
    fn a_checkpoint_read_as_it_is_handed_out_resumes_to_the_bytes_of_one_process() {
        let (params, at3, at7) = run();
        let fingerprint = crate::models::grid::params_fingerprint(&params);
        let frame = at3.to_bytes(fingerprint);
        for ranks in 1..=4 {
            assert_eq!(resumed(&params, &frame, ranks).unwrap(), at7, "{ranks} ranks");
        }
        // a frame checksummed byte by byte, as erode wrote them before the word-wise checksum
        let mut old = frame.clone();
        let body = old.len() - 8;
        let sum = crate::checkpoint::fnv1a64(&old[..body]);
        old[body..].copy_from_slice(&sum.to_le_bytes());
        assert_eq!(resumed(&params, &old, 3).unwrap(), at7);
    }

    #[test]
    fn a_damaged_checkpoint_is_refused_on_every_rank_saying_why() {
        let (params, at3, _) = run();
        let frame = at3.to_bytes(crate::models::grid::params_fingerprint(&params));
        let mut flipped = frame.clone();
        flipped[frame.len() / 2] ^= 4;
        let refusal = |bytes: &[u8]| resumed(&params, bytes, 3).err().map(|e| e.to_string());
        assert_eq!(refusal(&flipped).as_deref(), Some("checkpoint: checksum mismatch: the file is corrupt"));
        assert_eq!(refusal(&frame[..frame.len() - 10]).as_deref(), Some("checkpoint: truncated"));
        assert_eq!(refusal(&[&frame[..], &[0]].concat()).as_deref(), Some("checkpoint: trailing bytes"));
        let other = Params { seed: params.seed.wrapping_add(1), ..params.clone() };
        let e = resumed(&other, &frame, 3).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("parameters differ"), "{e}");
    }
}
