//! The float32 TIFF erode writes, laid out so that the rows' owners can write it together: strips
//! of whole rows (about 1 MiB each), each deflated on its own, then the directory that points at
//! them. A writer that owns a block of rows (a rank of a run over MPI) makes the strips that
//! start in its rows, the writers agree on where each strip goes from their sizes, and each
//! writes its own into the one file: the bytes are the same for any number of writers, one
//! included. Past 4 GiB the same layout is a BigTIFF (64-bit offsets), which GDAL and the `tiff`
//! crate read alike.

use std::io::{Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::Path;

use erode::ranks::Exchange;

use crate::error::FormatError;

/// A directory entry's value, by TIFF type.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    /// SHORT (3).
    Short(Vec<u16>),
    /// LONG (4).
    Long(Vec<u32>),
    /// LONG8 (16, BigTIFF only).
    Long8(Vec<u64>),
    /// DOUBLE (12).
    Double(Vec<f64>),
    /// ASCII (2), a NUL added.
    Ascii(String),
}

impl Value {
    fn kind_and_count(&self) -> (u16, u64) {
        match self {
            Value::Short(v) => (3, v.len() as u64),
            Value::Long(v) => (4, v.len() as u64),
            Value::Long8(v) => (16, v.len() as u64),
            Value::Double(v) => (12, v.len() as u64),
            Value::Ascii(s) => (2, s.len() as u64 + 1),
        }
    }

    fn bytes(&self) -> Vec<u8> {
        match self {
            Value::Short(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Value::Long(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Value::Long8(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Value::Double(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Value::Ascii(s) => s.bytes().chain([0]).collect(),
        }
    }
}

/// Rows in a strip of `width` float32 cells: about 1 MiB a strip.
pub(crate) fn strip_rows(width: usize) -> usize {
    ((1 << 20) / (4 * width.max(1))).max(1)
}

/// How a `width` x `height` map is cut into strips.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Strips {
    width: usize,
    height: usize,
    rows: usize,
}

impl Strips {
    pub(crate) fn new(width: usize, height: usize) -> Self {
        Self { width, height, rows: strip_rows(width) }
    }

    /// How many strips.
    pub(crate) fn count(&self) -> usize {
        self.height.div_ceil(self.rows)
    }

    /// The rows of strip `s`.
    pub(crate) fn rows(&self, s: usize) -> Range<usize> {
        s * self.rows..((s + 1) * self.rows).min(self.height)
    }

    /// The strips whose first row lies in `rows`: those the owner of `rows` makes.
    pub(crate) fn starting_in(&self, rows: Range<usize>) -> Range<usize> {
        rows.start.div_ceil(self.rows)..rows.end.div_ceil(self.rows)
    }

    /// The rows at the start of `rows` that belong to a strip starting before them (the owner of
    /// `rows` lends them to that strip's maker).
    fn lent(&self, rows: Range<usize>) -> Range<usize> {
        rows.start..rows.end.min(rows.start.div_ceil(self.rows) * self.rows)
    }
}

/// `cells` deflated (zlib, TIFF's "Adobe deflate", at the fastest level: float heights compress
/// little more at higher levels, and writing the maps is much of a short run's wall time).
pub(crate) fn deflate(cells: &[f32]) -> std::io::Result<Vec<u8>> {
    let bytes: Vec<u8> = cells.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut z = flate2::write::ZlibEncoder::new(Vec::with_capacity(bytes.len() / 2), flate2::Compression::fast());
    z.write_all(&bytes)?;
    z.finish()
}

/// What a file's directory says besides its strips: georeference, nodata, GDAL's metadata, as
/// (tag, value) in any order.
pub(crate) type Tags = Vec<(u16, Value)>;

/// The bytes around the strips: the header before them, the directory after them, and where
/// each strip goes.
#[derive(Debug)]
pub(crate) struct Frame {
    pub header: Vec<u8>,
    /// Where strip `s` starts in the file.
    pub offsets: Vec<u64>,
    /// Where the directory starts (after the strips, at an even offset).
    pub directory_at: u64,
    pub directory: Vec<u8>,
}

impl Frame {
    /// The frame of a file of `strips` whose deflated sizes are `sizes` (in strip order), with
    /// `tags` besides the image's own: a classic TIFF where its offsets fit 32 bits, a BigTIFF
    /// past that.
    pub(crate) fn new(strips: &Strips, sizes: &[u64], tags: &Tags) -> Result<Self, FormatError> {
        let classic = Self::laid_out(strips, sizes, tags, false)?;
        if classic.directory_at + classic.directory.len() as u64 <= u64::from(u32::MAX) {
            return Ok(classic);
        }
        Self::laid_out(strips, sizes, tags, true)
    }

    fn laid_out(strips: &Strips, sizes: &[u64], tags: &Tags, big: bool) -> Result<Self, FormatError> {
        let too_large = |what: &str| FormatError::Options(format!("{what}: too large for TIFF"));
        let header_len: u64 = if big { 16 } else { 8 };
        let mut offsets = Vec::with_capacity(sizes.len());
        let mut at = header_len;
        for &n in sizes {
            offsets.push(at);
            at = at.checked_add(n).ok_or_else(|| too_large("the strips"))?;
        }
        let directory_at = at + at % 2;
        let u32s = |v: &[u64]| -> Result<Vec<u32>, FormatError> {
            v.iter().map(|&x| u32::try_from(x).map_err(|_| too_large("an offset"))).collect()
        };
        let (w, h) = (
            u32::try_from(strips.width).map_err(|_| too_large("the width"))?,
            u32::try_from(strips.height).map_err(|_| too_large("the height"))?,
        );
        let mut entries: Tags = vec![
            (256, Value::Long(vec![w])),
            (257, Value::Long(vec![h])),
            (258, Value::Short(vec![32])),
            // deflate
            (259, Value::Short(vec![8])),
            // black is zero
            (262, Value::Short(vec![1])),
            (273, if big { Value::Long8(offsets.clone()) } else { Value::Long(u32s(&offsets)?) }),
            (277, Value::Short(vec![1])),
            (278, Value::Long(vec![strips.rows as u32])),
            (279, if big { Value::Long8(sizes.to_vec()) } else { Value::Long(u32s(sizes)?) }),
            // IEEE floating point
            (339, Value::Short(vec![3])),
        ];
        entries.extend(tags.iter().cloned());
        entries.sort_by_key(|(tag, _)| *tag);
        let directory = directory(&entries, directory_at, big).ok_or_else(|| too_large("the directory"))?;
        let mut header = b"II".to_vec();
        if big {
            header.extend(43u16.to_le_bytes());
            header.extend(8u16.to_le_bytes());
            header.extend(0u16.to_le_bytes());
            header.extend(directory_at.to_le_bytes());
        } else {
            header.extend(42u16.to_le_bytes());
            header.extend(u32::try_from(directory_at).map_err(|_| too_large("the directory's offset"))?.to_le_bytes());
        }
        Ok(Self { header, offsets, directory_at, directory })
    }

    /// The whole file, from all its strips in order.
    pub(crate) fn file(&self, strips: &[Vec<u8>]) -> Vec<u8> {
        let total = self.directory_at as usize + self.directory.len();
        let mut out = Vec::with_capacity(total);
        out.extend(&self.header);
        for s in strips {
            out.extend(s);
        }
        out.resize(self.directory_at as usize, 0);
        out.extend(&self.directory);
        out
    }
}

/// A directory of `entries` (sorted by tag) at `at`: the entries, then the values too long to sit
/// in an entry, each at an even offset. `None` if an offset overflows a classic TIFF's 32 bits.
pub(crate) fn directory(entries: &Tags, at: u64, big: bool) -> Option<Vec<u8>> {
    // the entries' count, an entry, a value or offset in an entry, the next directory's offset
    let (count_len, entry_len, inline, next_len) = if big { (8u64, 20u64, 8usize, 8u64) } else { (2, 12, 4, 4) };
    let mut table = Vec::new();
    let mut values = Vec::new();
    let values_at = at + count_len + entry_len * entries.len() as u64 + next_len;
    let word = |v: u64, out: &mut Vec<u8>| -> Option<()> {
        if big {
            out.extend(v.to_le_bytes());
        } else {
            out.extend(u32::try_from(v).ok()?.to_le_bytes());
        }
        Some(())
    };
    if big {
        table.extend((entries.len() as u64).to_le_bytes());
    } else {
        table.extend(u16::try_from(entries.len()).ok()?.to_le_bytes());
    }
    for (tag, value) in entries {
        let (kind, count) = value.kind_and_count();
        table.extend(tag.to_le_bytes());
        table.extend(kind.to_le_bytes());
        word(count, &mut table)?;
        let bytes = value.bytes();
        if bytes.len() <= inline {
            table.extend(&bytes);
            table.resize(table.len() + inline - bytes.len(), 0);
        } else {
            word(values_at + values.len() as u64, &mut table)?;
            values.extend(&bytes);
            values.resize(values.len() + values.len() % 2, 0);
        }
    }
    // no next directory
    word(0, &mut table)?;
    table.extend(values);
    Some(table)
}

/// The file of a map of `strips` whose cells are `cells` (row-major), with `tags`, in memory.
pub(crate) fn encode(strips: &Strips, cells: &[f32], tags: &Tags) -> Result<Vec<u8>, FormatError> {
    use rayon::prelude::*;
    let made: Vec<Vec<u8>> = (0..strips.count())
        .into_par_iter()
        .map(|s| {
            let rows = strips.rows(s);
            deflate(&cells[rows.start * strips.width..rows.end * strips.width])
        })
        .collect::<Result<_, _>>()
        .map_err(|e| FormatError::Options(format!("deflate: {e}")))?;
    let sizes: Vec<u64> = made.iter().map(|s| s.len() as u64).collect();
    Ok(Frame::new(strips, &sizes, tags)?.file(&made))
}

/// Why a write by several ranks failed.
#[derive(Debug, thiserror::Error)]
pub enum RowsError {
    /// This rank could not write.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// This rank's strips or the frame could not be made.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// Another rank could not write (it says why).
    #[error("rank {0} could not write its rows")]
    Other(usize),
}

/// Writes a map of `strips` into the file at `path` (which exists, empty), every rank of `ex`
/// together, each its own rows: `parts[k]` are rank `k`'s rows (in order, covering the map),
/// `cells` this rank's (row major). Every rank writes the strips that start in its rows (the
/// rows of a strip that reach into the next ranks' are lent to it first), rank 0 the header and
/// the directory as well. The file is the bytes [`encode`] gives; on any rank's failure every
/// rank returns an error and the file is unfinished (the caller removes it).
pub fn write_rows(
    path: &Path,
    strips: &Strips,
    tags: &Tags,
    parts: &[Range<usize>],
    cells: &[f32],
    ex: &dyn Exchange,
) -> Result<(), RowsError> {
    use rayon::prelude::*;
    let (rank, w) = (ex.rank(), strips.width);
    let mine = parts[rank].clone();
    // every rank's lent rows, on every rank
    let lent: Vec<Range<usize>> = parts.iter().map(|p| strips.lent(p.clone())).collect();
    let lent_mine = &cells[..lent[rank].len() * w];
    let counts: Vec<usize> = lent.iter().map(|r| r.len() * w * 4).collect();
    let lent_all = ex.all_gather(&lent_mine.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(), &counts);
    let lent_cells: Vec<f32> = lent_all.as_chunks::<4>().0.iter().map(|b| f32::from_le_bytes(*b)).collect();
    let row = |r: usize| -> Option<&[f32]> {
        if mine.contains(&r) {
            return cells.get((r - mine.start) * w..(r - mine.start + 1) * w);
        }
        let mut at = 0;
        for l in &lent {
            if l.contains(&r) {
                return lent_cells.get(at + (r - l.start) * w..at + (r - l.start + 1) * w);
            }
            at += l.len() * w;
        }
        None
    };
    let own = strips.starting_in(mine.clone());
    let made: Result<Vec<Vec<u8>>, RowsError> = own
        .clone()
        .into_par_iter()
        .map(|s| {
            let mut strip = Vec::with_capacity(strips.rows(s).len() * w);
            for r in strips.rows(s) {
                strip.extend_from_slice(row(r).ok_or_else(|| FormatError::Options(format!("row {r} is no rank's")))?);
            }
            Ok(deflate(&strip)?)
        })
        .collect();
    let sizes_mine: Vec<u8> = match &made {
        Ok(m) => m.iter().flat_map(|s| (s.len() as u64).to_le_bytes()).collect(),
        Err(_) => vec![0; own.len() * 8],
    };
    let counts: Vec<usize> = parts.iter().map(|p| strips.starting_in(p.clone()).len() * 8).collect();
    let sizes: Vec<u64> =
        ex.all_gather(&sizes_mine, &counts).as_chunks::<8>().0.iter().map(|b| u64::from_le_bytes(*b)).collect();
    let wrote = (|| -> Result<(), RowsError> {
        let made = made?;
        let frame = Frame::new(strips, &sizes, tags)?;
        let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
        for (s, bytes) in own.clone().zip(&made) {
            file.seek(SeekFrom::Start(frame.offsets[s]))?;
            file.write_all(bytes)?;
        }
        if rank == 0 {
            file.seek(SeekFrom::Start(0))?;
            file.write_all(&frame.header)?;
            let end = frame.offsets.last().map_or(frame.header.len() as u64, |&at| at + sizes[sizes.len() - 1]);
            file.seek(SeekFrom::Start(end))?;
            file.write_all(&vec![0; (frame.directory_at - end) as usize])?;
            file.write_all(&frame.directory)?;
        }
        file.sync_all()?;
        Ok(())
    })();
    // every rank learns whether all wrote
    let status = ex.all_gather(&[u8::from(wrote.is_err())], &vec![1; parts.len()]);
    wrote?;
    match status.iter().position(|&s| s != 0) {
        Some(k) => Err(RowsError::Other(k)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use erode::ranks::Threads;

    fn cells(width: usize, height: usize) -> Vec<f32> {
        (0..width * height).map(|i| ((i * 7919) % 1000) as f32 * 0.25 + (i / width) as f32).collect()
    }

    fn tags() -> Tags {
        vec![(33550, Value::Double(vec![30.0, 30.0, 0.0])), (42113, Value::Ascii("-9999".into()))]
    }

    #[test]
    fn strips_start_in_the_rows_of_one_owner_each() {
        // 1024 cells wide: 256 rows a strip
        let s = Strips::new(1024, 1000);
        assert_eq!((s.count(), s.rows(3)), (4, 768..1000));
        assert_eq!(s.starting_in(0..300), 0..2);
        assert_eq!(s.starting_in(300..700), 2..3);
        assert_eq!(s.starting_in(700..1000), 3..4);
        assert_eq!(s.lent(300..700), 300..512);
        assert_eq!(s.lent(512..700), 512..512);
        // a part inside one strip lends all its rows
        assert_eq!(s.starting_in(300..400), 2..2);
        assert_eq!(s.lent(300..400), 300..400);
    }

    #[test]
    fn a_file_reads_back_with_the_tiff_crate() {
        let (w, h) = (300, 77);
        let strips = Strips::new(w, h);
        let bytes = encode(&strips, &cells(w, h), &tags()).unwrap();
        let mut d = ::tiff::decoder::Decoder::new(std::io::Cursor::new(&bytes[..])).unwrap();
        assert_eq!(d.dimensions().unwrap(), (w as u32, h as u32));
        let ::tiff::decoder::DecodingResult::F32(got) = d.read_image().unwrap() else { panic!("not f32") };
        assert_eq!(got, cells(w, h));
    }

    #[test]
    fn the_big_layout_reads_back_too() {
        let (w, h) = (300, 77);
        let strips = Strips::new(w, h);
        let made: Vec<Vec<u8>> = (0..strips.count())
            .map(|s| deflate(&cells(w, h)[strips.rows(s).start * w..strips.rows(s).end * w]).unwrap())
            .collect();
        let sizes: Vec<u64> = made.iter().map(|m| m.len() as u64).collect();
        let bytes = Frame::laid_out(&strips, &sizes, &tags(), true).unwrap().file(&made);
        assert_eq!(&bytes[..4], b"II+\0");
        let mut d = ::tiff::decoder::Decoder::new(std::io::Cursor::new(&bytes[..])).unwrap();
        let ::tiff::decoder::DecodingResult::F32(got) = d.read_image().unwrap() else { panic!("not f32") };
        assert_eq!(got, cells(w, h));
    }

    #[test]
    fn ranks_writing_their_own_rows_give_the_bytes_of_one_writer() {
        // 40 cells wide: 6553 rows a strip would be one strip; make it narrow and tall instead
        for (w, h) in [(2000, 1000), (40, 20000)] {
            let strips = Strips::new(w, h);
            let all = cells(w, h);
            let one = encode(&strips, &all, &tags()).unwrap();
            for ranks in 1..=4 {
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("m.tif");
                std::fs::write(&path, b"").unwrap();
                let parts: Vec<Range<usize>> = (0..ranks).map(|k| k * h / ranks..(k + 1) * h / ranks).collect();
                std::thread::scope(|s| {
                    for ex in Threads::ranks(ranks) {
                        let (path, parts, all, tags) = (&path, &parts, &all, tags());
                        s.spawn(move || {
                            let mine = parts[ex.rank()].clone();
                            write_rows(path, &strips, &tags, parts, &all[mine.start * w..mine.end * w], &*ex).unwrap();
                        });
                    }
                });
                assert_eq!(std::fs::read(&path).unwrap(), one, "{w} x {h} over {ranks} ranks");
            }
        }
    }

    #[test]
    fn a_rank_that_cannot_write_fails_every_rank() {
        let (w, h) = (500, 600);
        let strips = Strips::new(w, h);
        let all = cells(w, h);
        let parts: Vec<Range<usize>> = vec![0..300, 300..600];
        // the file's folder does not exist: no rank can open it
        let path = std::path::PathBuf::from("/nonexistent-erode-folder/m.tif");
        let errors: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = Threads::ranks(2)
                .into_iter()
                .map(|ex| {
                    let (path, parts, all, tags) = (&path, &parts, &all, tags());
                    s.spawn(move || {
                        let mine = parts[ex.rank()].clone();
                        write_rows(path, &strips, &tags, parts, &all[mine.start * w..mine.end * w], &*ex)
                            .unwrap_err()
                            .to_string()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(errors.len(), 2);
        assert!(errors.iter().all(|e| e.contains("No such file")), "{errors:?}");
    }
}
