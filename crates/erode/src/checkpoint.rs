//! Checkpoints: a model's whole state as bytes, in one frame for every model: an 8-byte magic
//! naming the model, a version (u32), a [`Header`] (the parameters' fingerprint and the input's
//! hash), the model's fields (little-endian), and the checksum of all before it
//! ([`frame_checksum`]; frames written before it read with the byte-wise [`fnv1a64`]). [`Writer`] builds a frame; [`Reader`] checks one (magic,
//! checksum) and reads the fields back in order, and every way a file can be wrong is a
//! [`CheckpointError`] that says which.

/// FNV-1a, 64 bit: the checkpoint checksum (written here so the format never changes under us).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h = Fnv::new();
    h.bytes(bytes);
    h.0
}

/// A frame's checksum: FNV-1a's step taken over little-endian 8-byte words, then byte-wise over
/// the last `len % 8` bytes. One step per word rather than per byte runs ~8x faster (a 4096²
/// grid state is 1.2 GB); any change of one word changes it, as with byte-wise FNV-1a.
pub fn frame_checksum(bytes: &[u8]) -> u64 {
    let mut sum = FrameSum::new();
    sum.add(bytes);
    sum.finish()
}

/// [`frame_checksum`] taken over a frame's bytes as they come, in pieces of any length (the words
/// are the frame's, wherever the pieces cut them).
#[derive(Clone, Debug)]
pub struct FrameSum {
    h: u64,
    /// The bytes of a word begun by one piece, to be ended by the next.
    pending: [u8; 8],
    held: usize,
}

impl Default for FrameSum {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameSum {
    /// The sum of no bytes yet.
    pub fn new() -> Self {
        Self { h: 0xcbf2_9ce4_8422_2325, pending: [0; 8], held: 0 }
    }

    fn word(&mut self, w: [u8; 8]) {
        self.h ^= u64::from_le_bytes(w);
        self.h = self.h.wrapping_mul(0x0000_0100_0000_01b3);
    }

    /// Takes in the frame's next `bytes`.
    pub fn add(&mut self, mut bytes: &[u8]) {
        if self.held > 0 {
            let take = (8 - self.held).min(bytes.len());
            self.pending[self.held..self.held + take].copy_from_slice(&bytes[..take]);
            self.held += take;
            bytes = &bytes[take..];
            if self.held < 8 {
                return;
            }
            self.word(self.pending);
            self.held = 0;
        }
        let (words, tail) = bytes.as_chunks::<8>();
        for w in words {
            self.word(*w);
        }
        self.pending[..tail.len()].copy_from_slice(tail);
        self.held = tail.len();
    }

    /// The checksum of every byte taken in.
    pub fn finish(&self) -> u64 {
        let mut f = Fnv(self.h);
        f.bytes(&self.pending[..self.held]);
        f.0
    }
}

/// Where a frame written piece by piece goes ([`Stream`]): told the frame's length first (a
/// packed checkpoint file states it before its chunks), then its bytes in order. A sink that
/// cannot take them keeps its error for whoever made it to report.
pub trait Sink {
    /// The frame will be `len` bytes.
    fn start(&mut self, len: u64);
    /// The frame's next bytes.
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    fn start(&mut self, len: u64) {
        self.reserve(usize::try_from(len).unwrap_or(0));
    }
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// Writes a frame into a [`Sink`] as its fields come, its checksum taken on the way: the bytes a
/// [`Writer`] builds, without the whole frame in memory (a run over ranks writes its
/// checkpoint so, a batch of rows gathered at a time).
pub struct Stream<'a> {
    sink: &'a mut dyn Sink,
    sum: FrameSum,
    /// Values turned into bytes a piece at a time.
    scratch: Vec<u8>,
}

impl<'a> Stream<'a> {
    /// A frame of `len` bytes (its checksum included) for `magic` at `version` with `header`.
    pub fn new(sink: &'a mut dyn Sink, len: u64, magic: &[u8; 8], version: u32, header: Header) -> Self {
        sink.start(len);
        let mut s = Self { sink, sum: FrameSum::new(), scratch: Vec::new() };
        s.bytes(magic);
        s.bytes(&version.to_le_bytes());
        s.u64(header.params);
        s.u64(header.input);
        s
    }

    /// Bytes as they are.
    pub fn bytes(&mut self, b: &[u8]) {
        self.sum.add(b);
        self.sink.put(b);
    }

    /// A u64.
    pub fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }

    /// An f64.
    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }

    /// f64 values.
    pub fn f64s(&mut self, vs: &[f64]) {
        for &v in vs {
            self.f64(v);
        }
    }

    /// f32 values, little-endian.
    pub fn f32s(&mut self, vs: &[f32]) {
        let mut scratch = std::mem::take(&mut self.scratch);
        for piece in vs.chunks(1 << 16) {
            scratch.clear();
            scratch.resize(piece.len() * 4, 0);
            for (d, v) in scratch.chunks_exact_mut(4).zip(piece) {
                d.copy_from_slice(&v.to_le_bytes());
            }
            self.bytes(&scratch);
        }
        self.scratch = scratch;
    }

    /// A mask, a byte per value.
    pub fn mask(&mut self, vs: &[bool]) {
        let mut scratch = std::mem::take(&mut self.scratch);
        for piece in vs.chunks(1 << 18) {
            scratch.clear();
            scratch.extend(piece.iter().map(|&b| u8::from(b)));
            self.bytes(&scratch);
        }
        self.scratch = scratch;
    }

    /// Ends the frame with its checksum.
    pub fn finish(self) {
        let sum = self.sum.finish();
        self.sink.put(&sum.to_le_bytes());
    }
}

/// Opens a checkpoint's frame to be read from its first byte (a compressed file as it unpacks):
/// what a resume that never holds the whole frame reads. A grid run over ranks opens it a second
/// time only for a frame whose word-wise checksum does not match, to check the byte-wise one of
/// frames written before it ([`fnv1a64_reader`]).
pub type OpenFrame<'a> = dyn Fn() -> Result<Box<dyn std::io::Read + 'a>, crate::SimError> + 'a;

/// [`fnv1a64`] of the first `len` bytes `src` reads (the byte-wise checksum of frames written
/// before [`frame_checksum`]); `None` when it ends before them.
pub fn fnv1a64_reader(mut src: impl std::io::Read, len: u64) -> Option<u64> {
    let mut h = Fnv::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut left = len;
    while left > 0 {
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        src.read_exact(&mut buf[..n]).ok()?;
        h.bytes(&buf[..n]);
        left -= n as u64;
    }
    Some(h.0)
}

/// FNV-1a, 64 bit, fed piece by piece.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// The input hash of a heightmap: its size, then each cell's bits, a nodata cell (`nodata[i]`)
/// as NaN whatever placeholder it holds. Equal heightmaps give equal hashes.
pub fn heightmap_hash(heights: &crate::Grid<f32>, nodata: Option<&[bool]>) -> u64 {
    let h = InputsHash::heights_start(heights.width(), heights.height());
    InputsHash::heights(h, heights.as_slice(), nodata)
}

/// The input hash of a run that began from a heightmap and maps (hardness, rain, uplift…): the
/// heightmap's [`heightmap_hash`] when no map is given (what a run without maps always
/// recorded), else that folded with each given map's name, size and cells' bits. A resume with a
/// map changed, added or left out then differs.
pub fn inputs_hash(
    heights: &crate::Grid<f32>,
    nodata: Option<&[bool]>,
    maps: &[(&str, Option<&crate::Grid<f32>>)],
) -> u64 {
    let mut h = heightmap_hash(heights, nodata);
    for (name, map) in maps {
        let Some(map) = map else { continue };
        h = InputsHash::map_start(h, name, map.width(), map.height());
        h = InputsHash::cells(h, map.as_slice());
    }
    h
}

/// [`inputs_hash`] taken a piece at a time, each piece continuing the hash the one before left:
/// the pieces of a map cut into blocks of rows, hashed block after block in map order, give
/// the hash of the whole (a run over ranks carries it from rank to rank).
pub struct InputsHash;

impl InputsHash {
    /// The hash of a heightmap `width` x `height` before its cells.
    pub fn heights_start(width: usize, height: usize) -> u64 {
        let mut h = Fnv::new();
        h.bytes(&(width as u64).to_le_bytes());
        h.bytes(&(height as u64).to_le_bytes());
        h.0
    }

    /// `h` continued over heights `cells` (a nodata cell, `nodata[i]`, as NaN).
    pub fn heights(h: u64, cells: &[f32], nodata: Option<&[bool]>) -> u64 {
        let mut h = Fnv(h);
        for (i, v) in cells.iter().enumerate() {
            let v = if nodata.is_some_and(|m| m.get(i).copied().unwrap_or(false)) { f32::NAN } else { *v };
            h.bytes(&v.to_bits().to_le_bytes());
        }
        h.0
    }

    /// `h` continued over a map's name and size, before its cells.
    pub fn map_start(h: u64, name: &str, width: usize, height: usize) -> u64 {
        let mut h = Fnv(h);
        h.bytes(name.as_bytes());
        h.bytes(&(width as u64).to_le_bytes());
        h.bytes(&(height as u64).to_le_bytes());
        h.0
    }

    /// `h` continued over a map's `cells`.
    pub fn cells(h: u64, cells: &[f32]) -> u64 {
        let mut h = Fnv(h);
        for v in cells {
            h.bytes(&v.to_bits().to_le_bytes());
        }
        h.0
    }
}

/// What every frame says after its magic and version.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    /// The fingerprint of the parameters of the run that wrote it: a resume with others is
    /// refused.
    pub params: u64,
    /// The hash of the input the run began from (a heightmap's [`heightmap_hash`], an SPH
    /// scene's `sph::input_hash`), so a resume from another input can be refused; 0 when not
    /// recorded (frames from before it was).
    pub input: u64,
}

/// Why a checkpoint could not be read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CheckpointError {
    /// The file does not start with the model's magic (or is too short to).
    #[error("not an erode {model} checkpoint")]
    NotACheckpoint {
        /// The model whose checkpoint was expected.
        model: &'static str,
    },
    /// The checksum does not match the bytes.
    #[error("checksum mismatch: the file is corrupt")]
    Checksum,
    /// A version this erode does not read.
    #[error("version {found}, this erode reads {wanted}{why}")]
    Version {
        /// The file's version.
        found: u32,
        /// The newest version this erode reads.
        wanted: u32,
        /// What changed, when known (starts with "; ").
        why: &'static str,
    },
    /// Written by a run with other parameters.
    #[error("the parameters differ from the run that wrote it")]
    Parameters,
    /// The fields end before their sizes say.
    #[error("truncated")]
    Truncated,
    /// Bytes after the last field.
    #[error("trailing bytes")]
    Trailing,
    /// A size or count no run could have written.
    #[error("implausible {0}")]
    Size(String),
    /// Fields that contradict each other or the run.
    #[error("{0}")]
    Invalid(String),
}

/// The cells of a map of `w` x `h` that a checkpoint claims, refused when no run could have
/// written it: fewer than 2 cells a side, or more than `max_cells` cells.
pub fn map_cells(w: u64, h: u64, max_cells: u64) -> Result<usize, CheckpointError> {
    match w.checked_mul(h) {
        Some(n) if w >= 2 && h >= 2 && n <= max_cells => {
            usize::try_from(n).map_err(|_| CheckpointError::Size(format!("size {w} x {h}")))
        }
        _ => Err(CheckpointError::Size(format!("size {w} x {h}"))),
    }
}

/// Builds a checkpoint frame.
pub struct Writer {
    out: Vec<u8>,
}

impl Writer {
    /// A frame for `magic` at `version` with `header`, with room for about `capacity` bytes.
    pub fn new(magic: &[u8; 8], version: u32, header: Header, capacity: usize) -> Self {
        let mut out = Vec::with_capacity(capacity + 36);
        out.extend_from_slice(magic);
        out.extend_from_slice(&version.to_le_bytes());
        let mut w = Self { out };
        w.u64(header.params);
        w.u64(header.input);
        w
    }

    /// A u64.
    pub fn u64(&mut self, v: u64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    /// An f64.
    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }

    /// `vs` as `N`-byte little-endian values, written into room made first (a copy the compiler
    /// vectorises, where a push per value did not).
    fn values<T: Copy, const N: usize>(&mut self, vs: &[T], bytes: impl Fn(T) -> [u8; N]) {
        let start = self.out.len();
        self.out.resize(start + vs.len() * N, 0);
        for (d, &v) in self.out[start..].chunks_exact_mut(N).zip(vs) {
            d.copy_from_slice(&bytes(v));
        }
    }

    /// f32 values.
    pub fn f32s(&mut self, vs: &[f32]) {
        self.values(vs, f32::to_le_bytes);
    }

    /// f64 values.
    pub fn f64s(&mut self, vs: &[f64]) {
        self.values(vs, f64::to_le_bytes);
    }

    /// u32 values.
    pub fn u32s(&mut self, vs: &[u32]) {
        self.values(vs, u32::to_le_bytes);
    }

    /// A mask, a byte per value.
    pub fn mask(&mut self, vs: &[bool]) {
        self.out.extend(vs.iter().map(|&b| u8::from(b)));
    }

    /// The frame with its checksum.
    pub fn finish(mut self) -> Vec<u8> {
        let sum = frame_checksum(&self.out);
        self.out.extend_from_slice(&sum.to_le_bytes());
        self.out
    }
}

/// Reads a checkpoint frame's fields in order.
pub struct Reader<'a> {
    body: &'a [u8],
    pos: usize,
    /// The frame's version.
    pub version: u32,
}

impl<'a> Reader<'a> {
    /// Checks the magic (the model's, named `model` in errors) and the checksum; the caller
    /// checks [`Reader::version`].
    pub fn open(bytes: &'a [u8], magic: &[u8; 8], model: &'static str) -> Result<Self, CheckpointError> {
        if bytes.len() < 8 + 4 + 8 || &bytes[..8] != magic {
            return Err(CheckpointError::NotACheckpoint { model });
        }
        let (body, sum) = bytes.split_at(bytes.len() - 8);
        let stored = u64::from_le_bytes([sum[0], sum[1], sum[2], sum[3], sum[4], sum[5], sum[6], sum[7]]);
        if frame_checksum(body) != stored && fnv1a64(body) != stored {
            return Err(CheckpointError::Checksum);
        }
        let version = u32::from_le_bytes([body[8], body[9], body[10], body[11]]);
        Ok(Self { body, pos: 12, version })
    }

    /// A reader of the first bytes of a frame (its magic and version, then what follows), its
    /// checksum not checked: the head of a frame read piece by piece, whose checksum its reader
    /// takes as the bytes come (see [`FrameSum`]).
    pub fn unchecked(bytes: &'a [u8]) -> Self {
        let version = bytes.get(8..12).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        Self { body: bytes, pos: 12.min(bytes.len()), version }
    }

    /// Refuses a version outside `readable`; `why` (starting "; ") explains an old one.
    pub fn expect_version(&self, readable: &[u32], why: impl Fn(u32) -> &'static str) -> Result<(), CheckpointError> {
        if readable.contains(&self.version) {
            return Ok(());
        }
        let wanted = readable.iter().copied().max().unwrap_or(0);
        Err(CheckpointError::Version { found: self.version, wanted, why: why(self.version) })
    }

    /// Reads the header, refusing a frame written with parameters other than those of
    /// fingerprint `params`. Frames of a version before `input_since` carry no input hash (it
    /// reads as 0).
    pub fn header(&mut self, params: u64, input_since: u32) -> Result<Header, CheckpointError> {
        if self.u64()? != params {
            return Err(CheckpointError::Parameters);
        }
        let input = if self.version >= input_since { self.u64()? } else { 0 };
        Ok(Header { params, input })
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], CheckpointError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.body.len()).ok_or(CheckpointError::Truncated)?;
        let s = &self.body[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    /// Bytes left before the checksum.
    pub fn remaining(&self) -> usize {
        self.body.len() - self.pos
    }

    /// A u64.
    pub fn u64(&mut self) -> Result<u64, CheckpointError> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
    }

    /// An f64.
    pub fn f64(&mut self) -> Result<f64, CheckpointError> {
        self.u64().map(f64::from_bits)
    }

    /// `N` f64 values in a row, as an array.
    pub fn f64_array<const N: usize>(&mut self) -> Result<[f64; N], CheckpointError> {
        let mut values = [0.0; N];
        for v in &mut values {
            *v = self.f64()?;
        }
        Ok(values)
    }

    fn array<const N: usize, T>(&mut self, n: usize, f: impl Fn([u8; N]) -> T) -> Result<Vec<T>, CheckpointError> {
        let b = self.take(n.checked_mul(N).ok_or_else(|| CheckpointError::Size(format!("count {n}")))?)?;
        Ok(b.chunks_exact(N).map(|c| f(c.try_into().unwrap_or([0; N]))).collect())
    }

    /// `n` f32 values.
    pub fn f32s(&mut self, n: usize) -> Result<Vec<f32>, CheckpointError> {
        self.array::<4, _>(n, f32::from_le_bytes)
    }

    /// `n` f64 values.
    pub fn f64s(&mut self, n: usize) -> Result<Vec<f64>, CheckpointError> {
        self.array::<8, _>(n, f64::from_le_bytes)
    }

    /// `n` u32 values.
    pub fn u32s(&mut self, n: usize) -> Result<Vec<u32>, CheckpointError> {
        self.array::<4, _>(n, u32::from_le_bytes)
    }

    /// A mask of `n` values, a byte each.
    pub fn mask(&mut self, n: usize) -> Result<Vec<bool>, CheckpointError> {
        Ok(self.take(n)?.iter().map(|&b| b != 0).collect())
    }

    /// Refuses bytes after the last field.
    pub fn finish(self) -> Result<(), CheckpointError> {
        if self.pos == self.body.len() { Ok(()) } else { Err(CheckpointError::Trailing) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checksum_taken_in_pieces_is_the_whole_frames() {
        let bytes: Vec<u8> = (0..1000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let whole = frame_checksum(&bytes);
        // the byte-wise tail counts: a frame one byte short differs
        assert_ne!(whole, frame_checksum(&bytes[..999]));
        for cuts in [vec![1, 2, 3], vec![7, 8, 9, 500], vec![4, 12, 13, 14, 15, 996, 999], vec![0, 1000]] {
            let mut sum = FrameSum::new();
            let mut at = 0;
            for c in cuts.into_iter().chain([1000]) {
                sum.add(&bytes[at..c]);
                at = c;
            }
            assert_eq!(sum.finish(), whole);
        }
    }

    #[test]
    fn a_streamed_frame_is_the_bytes_a_writer_builds() {
        let header = Header { params: 3, input: 5 };
        let mut w = Writer::new(b"ERODETST", 2, header, 64);
        w.u64(7);
        w.f64(-1.5);
        w.f32s(&[1.0, 2.5, -0.0]);
        w.mask(&[true, false, true]);
        w.f64s(&[0.25, 4.0]);
        let built = w.finish();
        let mut out = Vec::new();
        let mut s = Stream::new(&mut out, built.len() as u64, b"ERODETST", 2, header);
        s.u64(7);
        s.f64(-1.5);
        s.f32s(&[1.0, 2.5, -0.0]);
        s.mask(&[true, false, true]);
        s.f64s(&[0.25, 4.0]);
        s.finish();
        assert_eq!(out, built);
    }

    #[test]
    fn a_frame_reads_back_and_every_damage_is_named() {
        let header = Header { params: 11, input: 13 };
        let mut w = Writer::new(b"ERODETST", 2, header, 64);
        w.u64(7);
        w.f64(-1.5);
        w.f32s(&[1.0, 2.5]);
        w.mask(&[true, false, true]);
        let bytes = w.finish();
        let mut r = Reader::open(&bytes, b"ERODETST", "test").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.version, 2);
        assert_eq!(r.header(11, 2), Ok(header));
        assert_eq!(r.u64(), Ok(7));
        assert_eq!(r.f64(), Ok(-1.5));
        assert_eq!(r.f32s(2), Ok(vec![1.0, 2.5]));
        assert_eq!(r.mask(3), Ok(vec![true, false, true]));
        assert_eq!(r.finish(), Ok(()));
        let open = |b: &[u8]| Reader::open(b, b"ERODETST", "test").err();
        assert_eq!(open(&bytes[..10]), Some(CheckpointError::NotACheckpoint { model: "test" }));
        let mut bad = bytes.clone();
        bad[14] ^= 1;
        assert_eq!(open(&bad), Some(CheckpointError::Checksum));
        let r = Reader::open(&bytes, b"ERODETST", "test").unwrap_or_else(|e| panic!("{e}"));
        let err = r.expect_version(&[3], |_| "; start again").unwrap_err();
        assert_eq!(err.to_string(), "version 2, this erode reads 3; start again");
        let mut r = Reader::open(&bytes, b"ERODETST", "test").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.header(12, 2), Err(CheckpointError::Parameters));
        // a frame from before the input hash: the word after the fingerprint is a field
        let mut r = Reader::open(&bytes, b"ERODETST", "test").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.header(11, 3), Ok(Header { params: 11, input: 0 }));
        assert_eq!(r.u64(), Ok(13));
        let mut r = Reader::open(&bytes, b"ERODETST", "test").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.f32s(100), Err(CheckpointError::Truncated));
        let mut r = Reader::open(&bytes, b"ERODETST", "test").unwrap_or_else(|e| panic!("{e}"));
        r.u64().unwrap_or_default();
        assert_eq!(r.finish(), Err(CheckpointError::Trailing));
    }
}
