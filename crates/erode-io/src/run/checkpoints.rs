//! A run's checkpoint files: `OUTDIR/checkpoints/<model>-<count>.ckpt`, written atomically, the
//! two newest kept, compressed: the model's frame cut into 4 MiB chunks, each an LZ4 block
//! compressed in parallel (most of a grid state, the water and the fluxes of dry cells, is zeros:
//! a 4096² wet/dry state of 1.2 GB writes as a fraction of that). The file is [`PACKED`], the
//! frame's length and the chunk length (u64 each), then each chunk as its stored length (u64)
//! and bytes, the raw chunk when its block would be no smaller. Files of the frame alone (erode
//! before compression) still read.

use std::path::{Path, PathBuf};

use erode::checkpoint::CheckpointError;

use super::RunError;
use crate::Error;

/// The checkpoint folder of an output folder.
pub fn folder(out: &Path) -> PathBuf {
    out.join("checkpoints")
}

/// Checkpoint files of `model` in `dir` with their counts, oldest first.
fn all(dir: &Path, model: &str) -> Vec<(u64, PathBuf)> {
    let prefix = format!("{model}-");
    let mut v: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            let name = p.file_name()?.to_str()?;
            let count = name.strip_prefix(&prefix)?.strip_suffix(".ckpt")?.parse().ok()?;
            Some((count, p))
        })
        .collect();
    v.sort();
    v
}

/// The first bytes of a compressed checkpoint file.
pub const PACKED: &[u8; 8] = b"erodeLZ4";

/// Bytes of the frame a chunk holds.
const CHUNK: usize = 1 << 22;

/// Chunks compressed at once (then written in order): a few per thread, so the memory held
/// beside the frame stays a few tens of MiB.
fn batch() -> usize {
    4 * rayon::current_num_threads()
}

/// Writes the compressed file of `frame` to `out`.
#[cfg(test)]
fn pack(frame: &[u8], out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut p = Pack::new(out);
    erode::checkpoint::Sink::start(&mut p, frame.len() as u64);
    erode::checkpoint::Sink::put(&mut p, frame);
    p.finish()
}

/// A compressed checkpoint file written as its frame comes ([`erode::checkpoint::Sink`]): whole
/// chunks compressed a batch at a time, so that it holds a few tens of MiB however large the
/// frame. The first error writing is kept for [`Pack::finish`].
struct Pack<'a> {
    out: &'a mut dyn std::io::Write,
    /// The frame's length, as announced.
    len: u64,
    /// Bytes of the frame taken so far.
    taken: u64,
    /// Bytes taken not yet compressed (less than a batch of chunks).
    held: Vec<u8>,
    error: Option<std::io::Error>,
}

impl<'a> Pack<'a> {
    fn new(out: &'a mut dyn std::io::Write) -> Self {
        Self { out, len: 0, taken: 0, held: Vec::new(), error: None }
    }

    /// Compresses `chunks` (whole chunks, but for the frame's last) in parallel and writes them.
    fn write_chunks(&mut self, chunks: &[u8]) {
        use rayon::prelude::*;
        if self.error.is_some() {
            return;
        }
        let pieces: Vec<&[u8]> = chunks.chunks(CHUNK).collect();
        let blocks: Vec<Option<Vec<u8>>> =
            pieces.par_iter().map(|c| Some(lz4_flex::block::compress(c)).filter(|b| b.len() < c.len())).collect();
        for (raw, block) in pieces.iter().zip(&blocks) {
            let stored: &[u8] = block.as_deref().unwrap_or(raw);
            let written =
                self.out.write_all(&(stored.len() as u64).to_le_bytes()).and_then(|()| self.out.write_all(stored));
            if let Err(e) = written {
                self.error = Some(e);
                return;
            }
        }
    }

    /// The file's end: the last chunks written; an error when one was, or when the frame was
    /// not the length it announced.
    fn finish(mut self) -> std::io::Result<()> {
        let held = std::mem::take(&mut self.held);
        self.write_chunks(&held);
        if let Some(e) = self.error {
            return Err(e);
        }
        if self.taken != self.len {
            return Err(std::io::Error::other(format!("a frame of {} bytes announced as {}", self.taken, self.len)));
        }
        Ok(())
    }
}

impl erode::checkpoint::Sink for Pack<'_> {
    fn start(&mut self, len: u64) {
        self.len = len;
        let head = [&PACKED[..], &len.to_le_bytes(), &(CHUNK as u64).to_le_bytes()].concat();
        if let Err(e) = self.out.write_all(&head) {
            self.error = Some(e);
        }
    }

    fn put(&mut self, mut bytes: &[u8]) {
        self.taken += bytes.len() as u64;
        let batch = batch() * CHUNK;
        // a batch begun before: filled first
        if !self.held.is_empty() {
            let take = (batch - self.held.len()).min(bytes.len());
            self.held.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.held.len() < batch {
                return;
            }
            let held = std::mem::take(&mut self.held);
            self.write_chunks(&held);
            self.held = held;
            self.held.clear();
        }
        // whole batches straight from the bytes given, the rest held
        let whole = bytes.len() / batch * batch;
        self.write_chunks(&bytes[..whole]);
        self.held.extend_from_slice(&bytes[whole..]);
    }
}

/// The frame of a checkpoint file's `bytes`: unpacked, or the bytes as they are when the file is
/// a frame alone; an error says what is wrong with the packing.
fn unpack(bytes: Vec<u8>) -> Result<Vec<u8>, CheckpointError> {
    use rayon::prelude::*;
    if !bytes.starts_with(PACKED) {
        return Ok(bytes);
    }
    let bad = |reason: &str| CheckpointError::Invalid(format!("the file is corrupt: {reason}"));
    let word = |at: usize| -> Option<u64> { Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?)) };
    let (Some(len), Some(chunk)) = (word(8), word(16)) else { return Err(bad("its header is cut short")) };
    let (len, chunk) = (usize::try_from(len).map_err(|_| bad("too large"))?, chunk as usize);
    if chunk == 0 || chunk > 1 << 30 {
        return Err(bad("its chunk length is out of range"));
    }
    // where each chunk's stored bytes lie
    let mut pieces = Vec::new();
    let mut at = 24;
    for k in 0..len.div_ceil(chunk) {
        let stored = word(at).ok_or_else(|| bad("it ends before its last chunk"))? as usize;
        let raw = chunk.min(len - k * chunk);
        let end = (at + 8).checked_add(stored).filter(|&e| e <= bytes.len() && stored <= raw);
        let end = end.ok_or_else(|| bad("a chunk runs past the end of the file"))?;
        pieces.push(at + 8..end);
        at = end;
    }
    if at != bytes.len() {
        return Err(bad("bytes follow its last chunk"));
    }
    let mut frame = vec![0u8; len];
    frame.par_chunks_mut(chunk).zip(pieces).try_for_each(|(out, range)| {
        if chunk_into(&bytes[range], out) { Ok(()) } else { Err(bad("a chunk does not decompress")) }
    })?;
    Ok(frame)
}

/// The first bytes of the frame of the checkpoint file at `path` (its magic, version and header:
/// 28 bytes), reading no more of the file than its first chunk; `None` when it cannot be read.
fn frame_head(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    let mut head = [0u8; 28];
    f.read_exact(&mut head).ok()?;
    if !head.starts_with(PACKED) {
        return Some(head.to_vec());
    }
    // the packing's header and the first chunk's stored length, then that chunk
    let mut last = [0u8; 4];
    f.read_exact(&mut last).ok()?;
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
    let stored = word(&[&head[24..], &last[..]].concat());
    let raw = word(&head[8..16]).min(word(&head[16..24]));
    if stored > raw {
        return None;
    }
    let mut first = vec![0u8; stored as usize];
    f.read_exact(&mut first).ok()?;
    let mut frame = vec![0u8; raw as usize];
    chunk_into(&first, &mut frame).then_some(())?;
    frame.get(..28).map(<[u8]>::to_vec)
}

/// Fills `out` with a chunk's frame bytes from its `stored` bytes (raw when as long); false when
/// they do not decompress to that length.
fn chunk_into(stored: &[u8], out: &mut [u8]) -> bool {
    if stored.len() == out.len() {
        out.copy_from_slice(stored);
        return true;
    }
    matches!(lz4_flex::block::decompress_into(stored, out), Ok(n) if n == out.len())
}

/// Writes `model`'s checkpoint at `count` in `dir`, its frame as `frame` writes it into a sink
/// (see [`erode::contract::Model::write_checkpoint`]), compressed as it comes, atomically,
/// keeping the two newest (the new one and the one before, in case the new one is damaged
/// later).
pub fn write(
    dir: &Path,
    model: &str,
    count: u64,
    frame: impl FnOnce(&mut dyn erode::checkpoint::Sink),
) -> Result<PathBuf, Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let path = dir.join(format!("{model}-{count:012}.ckpt"));
    crate::write_atomic_with(&path, |out| {
        let mut pack = Pack::new(out);
        frame(&mut pack);
        pack.finish()
    })?;
    let all = all(dir, model);
    for (_, old) in all.iter().take(all.len().saturating_sub(2)) {
        let _ = std::fs::remove_file(old);
    }
    Ok(path)
}

/// The model's frame in the checkpoint file at `path`, unpacked when compressed (what a model's
/// `resume` reads): every reader of a checkpoint file goes through here.
pub fn read_frame(path: &Path) -> Result<Vec<u8>, RunError> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    unpack(bytes).map_err(|e| RunError::Unreadable { path: path.to_path_buf(), older: None, source: e.into() })
}

/// The frame of the checkpoint file at `path`, read as it unpacks, a chunk at a time (a file of
/// the frame alone as it is): what a resume that never holds the whole frame reads.
pub fn open_frame(path: &Path) -> std::io::Result<Box<dyn std::io::Read + Send>> {
    use std::io::Read;
    let mut file = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(path)?);
    let mut head = [0u8; 24];
    let n = read_up_to(&mut file, &mut head)?;
    if n < 24 || !head.starts_with(PACKED) {
        return Ok(Box::new(std::io::Cursor::new(head[..n].to_vec()).chain(file)));
    }
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
    let (len, chunk) = (word(&head[8..16]), word(&head[16..24]));
    if chunk == 0 || chunk > 1 << 30 {
        return Err(corrupt("its chunk length is out of range"));
    }
    Ok(Box::new(Unpacking { file, len, chunk: chunk as usize, done: 0, raw: Vec::new(), at: 0, stored: Vec::new() }))
}

/// As many bytes as `src` has, up to `buf`'s length.
fn read_up_to(src: &mut impl std::io::Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match src.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// An error of a checkpoint file's packing.
fn corrupt(reason: &str) -> std::io::Error {
    std::io::Error::other(format!("the file is corrupt: {reason}"))
}

/// A packed checkpoint file's frame, unpacked a chunk at a time as it is read.
struct Unpacking<R> {
    file: R,
    /// The frame's length.
    len: u64,
    chunk: usize,
    /// Bytes of the frame unpacked so far.
    done: u64,
    /// The chunk unpacked last, and how much of it was read.
    raw: Vec<u8>,
    at: usize,
    /// A chunk's stored bytes.
    stored: Vec<u8>,
}

impl<R: std::io::Read> std::io::Read for Unpacking<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.raw.len() {
            if self.done == self.len {
                // the frame's end must be the file's
                let mut more = [0u8; 1];
                return match self.file.read(&mut more)? {
                    0 => Ok(0),
                    _ => Err(corrupt("bytes follow its last chunk")),
                };
            }
            let raw = (self.len - self.done).min(self.chunk as u64) as usize;
            let mut word = [0u8; 8];
            self.file.read_exact(&mut word)?;
            let stored = u64::from_le_bytes(word);
            if stored > raw as u64 {
                return Err(corrupt("a chunk runs past the end of the file"));
            }
            self.stored.resize(stored as usize, 0);
            self.file.read_exact(&mut self.stored)?;
            self.raw.resize(raw, 0);
            if !chunk_into(&self.stored, &mut self.raw) {
                return Err(corrupt("a chunk does not decompress"));
            }
            self.done += raw as u64;
            self.at = 0;
        }
        let n = buf.len().min(self.raw.len() - self.at);
        buf[..n].copy_from_slice(&self.raw[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// The newest checkpoint of a model, read to resume from.
pub struct Newest {
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Its file.
    pub path: PathBuf,
    /// An older one beside it.
    older: Option<PathBuf>,
}

impl Newest {
    /// The newest checkpoint of `model` in the checkpoint folder of output folder `out`.
    pub fn read(out: &Path, model: &str) -> Result<Self, RunError> {
        let dir = folder(out);
        let mut all = all(&dir, model);
        let Some((_, path)) = all.pop() else { return Err(RunError::NoCheckpoint { folder: dir }) };
        let older = all.pop().map(|(_, p)| p);
        match read_frame(&path) {
            Ok(bytes) => Ok(Self { bytes, path, older }),
            Err(RunError::Unreadable { path, source, .. }) => Err(RunError::Unreadable { path, older, source }),
            Err(e) => Err(e),
        }
    }

    /// The newest checkpoint of `model` in the checkpoint folder of output folder `out`, found but
    /// not read ([`Newest::bytes`] empty): for [`Newest::resume_streamed`].
    pub fn find(out: &Path, model: &str) -> Result<Self, RunError> {
        let dir = folder(out);
        let mut all = all(&dir, model);
        let Some((_, path)) = all.pop() else { return Err(RunError::NoCheckpoint { folder: dir }) };
        Ok(Self { bytes: Vec::new(), path, older: all.pop().map(|(_, p)| p) })
    }

    /// The model `resume` makes of this checkpoint's frame read as it unpacks (each call of the
    /// opener it is given reads it from its start: see [`open_frame`]); an error names this file
    /// and the older one to fall back on.
    pub fn resume_streamed<M>(
        &self,
        resume: impl FnOnce(&erode::checkpoint::OpenFrame<'_>) -> Result<M, erode::SimError>,
    ) -> Result<M, RunError> {
        let open = || -> Result<Box<dyn std::io::Read>, erode::SimError> {
            open_frame(&self.path)
                .map(|r| r as Box<dyn std::io::Read>)
                .map_err(|e| CheckpointError::Invalid(e.to_string()).into())
        };
        resume(&open).map_err(|source| RunError::Unreadable {
            path: self.path.clone(),
            older: self.older.clone(),
            source,
        })
    }

    /// The model `resume` makes of these bytes; an error names this file and the older one to
    /// fall back on.
    pub fn resume<M>(&self, resume: impl FnOnce(&[u8]) -> Result<M, erode::SimError>) -> Result<M, RunError> {
        resume(&self.bytes).map_err(|source| RunError::Unreadable {
            path: self.path.clone(),
            older: self.older.clone(),
            source,
        })
    }
}

/// A fresh run's claim on the checkpoint folder `dir`. Checkpoints of `model` there written with
/// the same parameters (`fingerprint`) from the same input (`input`; 0: not recorded) are this
/// run's own, started again: they are removed, as the run writes them anew (kept, the newest of
/// them would outlive the run's own and be what `--resume` takes). Those of another run are
/// refused, or with `force` moved into a `replaced-N` folder beside them. Returns a note for the
/// user when something was removed or moved.
pub fn claim(dir: &Path, model: &str, fingerprint: u64, input: u64, force: bool) -> Result<Option<String>, RunError> {
    let found = all(dir, model);
    let Some((_, newest)) = found.last() else { return Ok(None) };
    let other = found.iter().find_map(|(_, p)| {
        let head = frame_head(p);
        let word = |k: usize| {
            u64::from_le_bytes(head.as_ref().and_then(|h| h.get(k..k + 8)?.try_into().ok()).unwrap_or([0; 8]))
        };
        if head.is_none() {
            Some("unreadable")
        } else if word(12) != fingerprint {
            Some("other parameters")
        } else if input != 0 && word(20) != input {
            Some("another input")
        } else {
            None
        }
    });
    let Some(why) = other else {
        for (_, p) in &found {
            std::fs::remove_file(p).map_err(|e| Error::io(p, e))?;
        }
        return Ok(Some(format!(
            "erode: note: a fresh run: the {} checkpoints of this run before in {} are replaced",
            found.len(),
            dir.display()
        )));
    };
    if !force {
        return Err(RunError::OtherRun { folder: dir.to_path_buf(), newest: newest.clone(), why });
    }
    let aside = (1..).map(|k| dir.join(format!("replaced-{k}"))).find(|p| !p.exists()).unwrap_or(dir.join("replaced"));
    std::fs::create_dir_all(&aside).map_err(|e| Error::io(&aside, e))?;
    for (_, p) in &found {
        let to = aside.join(p.file_name().unwrap_or_default());
        std::fs::rename(p, &to).map_err(|e| Error::io(p, e))?;
    }
    Ok(Some(format!("erode: moved {} checkpoints of another {model} run ({why}) to {}", found.len(), aside.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame over two chunks and a bit: zeros (a dry state) then bytes LZ4 cannot shrink.
    fn frame() -> Vec<u8> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut v = vec![0u8; CHUNK + 1000];
        v.extend((0..CHUNK + 77).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        }));
        v
    }

    #[test]
    fn a_packed_frame_unpacks_to_its_bytes_and_zeros_shrink() {
        let f = frame();
        let mut file = Vec::new();
        pack(&f, &mut file).unwrap();
        // the zeros shrink to almost nothing, the noise is stored raw
        assert!(file.len() < f.len() / 2 + 100_000, "{} of {}", file.len(), f.len());
        assert_eq!(unpack(file.clone()).unwrap(), f);
        // the frame given in pieces of any length (a run over ranks gathers it a batch of rows
        // at a time) packs to the same file
        let mut pieces = Vec::new();
        let mut p = Pack::new(&mut pieces);
        erode::checkpoint::Sink::start(&mut p, f.len() as u64);
        let mut at = 0;
        for (k, len) in [1usize, 7, CHUNK - 3, 5, batch() * CHUNK + 11, 1 << 20].into_iter().cycle().enumerate() {
            let end = (at + len + k).min(f.len());
            erode::checkpoint::Sink::put(&mut p, &f[at..end]);
            at = end;
            if at == f.len() {
                break;
            }
        }
        p.finish().unwrap();
        assert_eq!(pieces, file);
        // a frame shorter than it announced is refused
        let mut short = Vec::new();
        let mut p = Pack::new(&mut short);
        erode::checkpoint::Sink::start(&mut p, f.len() as u64 + 1);
        erode::checkpoint::Sink::put(&mut p, &f);
        assert!(p.finish().unwrap_err().to_string().contains("announced"));
        // a frame alone (erode before compression) reads as it is
        assert_eq!(unpack(f.clone()).unwrap(), f);
    }

    #[test]
    fn the_head_of_a_packed_file_is_its_frames() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = b"erodeGRD".to_vec();
        f.extend((0..100_000u32).map(|i| (i % 7) as u8));
        let path = write(dir.path(), "grid", 3, |s| {
            s.start(f.len() as u64);
            s.put(&f);
        })
        .unwrap();
        assert!(std::fs::read(&path).unwrap().starts_with(PACKED));
        assert_eq!(frame_head(&path).unwrap(), f[..28]);
        std::fs::write(&path, &f).unwrap();
        assert_eq!(frame_head(&path).unwrap(), f[..28]);
    }

    #[test]
    fn a_file_read_as_it_unpacks_is_its_frame_and_damage_is_named() {
        use std::io::Read;
        let dir = tempfile::tempdir().unwrap();
        let f = frame();
        let path = write(dir.path(), "grid", 1, |s| {
            s.start(f.len() as u64);
            s.put(&f);
        })
        .unwrap();
        let read = |p: &Path| -> std::io::Result<Vec<u8>> {
            let mut out = Vec::new();
            open_frame(p)?.read_to_end(&mut out)?;
            Ok(out)
        };
        assert_eq!(read(&path).unwrap(), f);
        // a frame alone (erode before compression) reads as it is
        let alone = dir.path().join("alone.ckpt");
        std::fs::write(&alone, &f).unwrap();
        assert_eq!(read(&alone).unwrap(), f);
        let file = std::fs::read(&path).unwrap();
        let damaged = dir.path().join("damaged.ckpt");
        for (bytes, why) in [
            ([&file[..], &[0]].concat(), "follow its last chunk"),
            (file[..file.len() - 10].to_vec(), "fill whole buffer"),
        ] {
            std::fs::write(&damaged, bytes).unwrap();
            let e = read(&damaged).unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
    }

    #[test]
    fn a_damaged_packed_file_is_refused_saying_why() {
        let mut file = Vec::new();
        pack(&frame(), &mut file).unwrap();
        let cut = file[..file.len() - 10].to_vec();
        assert!(unpack(cut).unwrap_err().to_string().contains("past the end"));
        let mut longer = file.clone();
        longer.push(0);
        assert!(unpack(longer).unwrap_err().to_string().contains("follow its last chunk"));
        // a flipped byte inside the first (compressed) block
        let mut flipped = file.clone();
        flipped[24 + 8 + 3] ^= 0xff;
        let e = unpack(flipped).map(|f| f == frame());
        assert!(!matches!(e, Ok(true)), "a damaged block unpacked to the frame");
        assert!(unpack(file[..20].to_vec()).unwrap_err().to_string().contains("cut short"));
    }
}
