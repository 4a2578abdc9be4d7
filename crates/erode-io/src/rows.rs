//! A map's rows read and written by the processes that own them (the ranks of a run over MPI,
//! each holding a block of rows): each reads its own rows of a TIFF or BigTIFF, decoding only
//! the strips or tiles they cross (of an uncompressed strip, only its rows), and writes its own rows' strips into the one output file,
//! which comes out the bytes one process writes. No process holds the whole map.

use std::ops::Range;
use std::path::Path;

use erode::ranks::Exchange;
use erode::{Grid, HeightStats, RowStats, ValidCells};

use crate::formats::tiff_strips::{self, RowsError, Strips};
use crate::{Error, Footprint, Format, FormatError, ReadOptions, SourceInfo, WriteOptions};

/// A block of a map's rows: its heights (metres; the first row the map's row where the block
/// starts), which of them are nodata, and what the file said. Unlike a whole map's, a block's
/// cells may all be nodata, and its nodata cells keep the file's value (a [`erode::Heightmap`]
/// fills them from the cells around).
#[derive(Clone, Debug)]
pub struct Rows {
    /// The heights, the whole map's cell size.
    pub heights: Grid<f32>,
    /// Which cells are nodata (`None`: none).
    pub nodata: Option<Vec<bool>>,
    /// What the file said (the whole map's georeference and nodata value).
    pub info: SourceInfo,
}

/// Rows `rows` of the TIFF or BigTIFF at `path` (its first row the map's row `rows.start`),
/// decoding only the strips or tiles they cross, and reading only the rows of an uncompressed
/// strip (a file of one strip is not read whole). The georeference, nodata value and cell size
/// are the whole map's.
pub fn read_rows(path: &Path, rows: Range<usize>, options: &ReadOptions) -> Result<Rows, Error> {
    let file = tiff_file(path)?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    let reader = std::io::BufReader::with_capacity(1 << 20, file);
    let decoded = crate::formats::tiff::decode_rows(reader, len, rows, options).map_err(|e| Error::format(path, e))?;
    let (heights, nodata, info) =
        crate::samples::finish_cells(decoded, Format::Tiff, options).map_err(|e| Error::format(path, e))?;
    Ok(Rows { heights, nodata, info })
}

/// What [`scan`] found of a map it read a batch of rows at a time: its footprint (shape, cell
/// size, nodata cells and what the file said, as [`crate::read`] reads them) and the value its
/// nodata cells take in a heightmap (the mean of its valid cells), if it has any.
#[derive(Clone, Debug)]
pub struct Scan {
    /// The map's footprint.
    pub footprint: Footprint,
    /// The nodata cells' value in a heightmap, metres; `None` when no cell is nodata.
    pub fill: Option<f32>,
}

/// Cells in a batch of [`scan`]'s rows (rounded up to whole strips or tiles): 1 MB of heights,
/// a small part of any map that needs reading by rows, and enough to make reopening the file for
/// each batch cheap.
const SCAN_CELLS: usize = 1 << 18;

/// Reads the TIFF or BigTIFF at `path` a batch of rows at a time (as [`read_rows`] reads them),
/// never holding it whole, and hands each batch to `visit` in map order (its nodata cells keep
/// the file's value): a map's footprint and fill for a process that must not hold its heights.
/// Refuses what [`crate::read`] refuses of a heightmap: more than `options.max_cells` cells, a
/// cell neither finite nor nodata (naming the first), no valid cell.
pub fn scan(path: &Path, options: &ReadOptions, visit: impl FnMut(&Rows)) -> Result<Scan, Error> {
    scan_by(path, options, SCAN_CELLS, visit)
}

/// [`scan`] in batches of at most `cells` cells.
fn scan_by(path: &Path, options: &ReadOptions, cells: usize, mut visit: impl FnMut(&Rows)) -> Result<Scan, Error> {
    let (width, height, chunk) = layout_of(path, options)?;
    let batch = batch_rows(cells, width, chunk);
    let (mut valid, mut mask, mut any, mut first) = (ValidCells::new(width), Vec::new(), false, None);
    for start in (0..height).step_by(batch) {
        let rows = read_rows(path, start..(start + batch).min(height), options)?;
        valid.add(rows.heights.as_slice(), rows.nodata.as_deref());
        match &rows.nodata {
            Some(m) => {
                any = true;
                mask.extend_from_slice(m);
            }
            None => mask.resize(mask.len() + rows.heights.len(), false),
        }
        visit(&rows);
        first.get_or_insert((rows.heights.cell_size(), rows.info));
    }
    let fill = valid.fill().map_err(|e| Error::format(path, e.into()))?;
    let (cell, info) = first.ok_or_else(|| Error::format(path, FormatError::Empty))?;
    let footprint = Footprint::new(width, height, cell, any.then_some(mask), info);
    let fill = footprint.nodata_mask().is_some().then_some(fill);
    Ok(Scan { footprint, fill })
}

/// The size (columns, rows) of the TIFF or BigTIFF at `path`, from its header alone, held to
/// `options.max_cells` as [`crate::read`] holds a whole map.
pub fn size_of(path: &Path, options: &ReadOptions) -> Result<(usize, usize), Error> {
    layout_of(path, options).map(|(w, h, _)| (w, h))
}

/// [`size_of`], and the rows of the file's strips or tiles.
fn layout_of(path: &Path, options: &ReadOptions) -> Result<(usize, usize, usize), Error> {
    let file = tiff_file(path)?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    crate::formats::tiff::dimensions(std::io::BufReader::new(file), len, options).map_err(|e| Error::format(path, e))
}

/// Rows in a batch of at most about `cells` cells of a map `width` across whose strips or tiles
/// are `chunk` rows high: a whole number of them, at least one, so that no strip or tile is
/// decoded for two batches.
fn batch_rows(cells: usize, width: usize, chunk: usize) -> usize {
    let chunk = chunk.max(1);
    (cells / width.max(1)).div_ceil(chunk).max(1) * chunk
}

/// The file at `path`, refused unless it is a TIFF or BigTIFF (the maps read by rows).
fn tiff_file(path: &Path) -> Result<std::fs::File, Error> {
    if Format::from_path(path)? != Format::Tiff {
        return Err(Error::format(
            path,
            FormatError::Options(
                "a map read by rows must be a TIFF or BigTIFF (erode convert writes one: erode convert map.png map.tif)"
                    .into(),
            ),
        ));
    }
    std::fs::File::open(path).map_err(|e| Error::io(path, e))
}

/// Rows `rows` of the TIFF or BigTIFF in `bytes`, as [`read_rows`] reads them from a file.
pub fn decode_rows(bytes: &[u8], rows: Range<usize>, options: &ReadOptions) -> Result<Rows, FormatError> {
    if bytes.is_empty() {
        return Err(FormatError::Empty);
    }
    let cursor = std::io::Cursor::new(bytes);
    let decoded = crate::formats::tiff::decode_rows(cursor, bytes.len() as u64, rows, options)?;
    let (heights, nodata, info) = crate::samples::finish_cells(decoded, Format::Tiff, options)?;
    Ok(Rows { heights, nodata, info })
}

/// The statistics of the map whose rows `parts[k]` rank `k` holds, from this rank's `heights`
/// and `nodata`: every rank's rows' statistics folded in row order, the bits one process gets.
pub fn stats_of_rows(
    heights: &Grid<f32>,
    nodata: Option<&[bool]>,
    parts: &[Range<usize>],
    ex: &dyn Exchange,
) -> HeightStats {
    let w = heights.width();
    let mine: Vec<u8> = (0..heights.height())
        .flat_map(|r| {
            let s = RowStats::of(heights.row(r), nodata.map(|m| &m[r * w..(r + 1) * w]));
            [&s.min.to_le_bytes()[..], &s.max.to_le_bytes(), &s.sum.to_le_bytes(), &s.n.to_le_bytes()].concat()
        })
        .collect();
    let counts: Vec<usize> = parts.iter().map(|p| p.len() * 24).collect();
    let all = ex.all_gather(&mine, &counts);
    HeightStats::of_rows(all.as_chunks::<24>().0.iter().map(|b| {
        let f32_at = |k: usize| f32::from_le_bytes([b[k], b[k + 1], b[k + 2], b[k + 3]]);
        let eight = |k: usize| <[u8; 8]>::try_from(&b[k..k + 8]).unwrap_or_default();
        RowStats { min: f32_at(0), max: f32_at(4), sum: f64::from_le_bytes(eight(8)), n: u64::from_le_bytes(eight(16)) }
    }))
}

/// Writes the map whose rows `parts[k]` rank `k` holds as the float32 TIFF (a BigTIFF past
/// 4 GiB) at `path`, every rank of `ex` together: `heights` and `nodata` are this rank's rows.
/// Each rank writes its own rows' strips; the file is the bytes [`crate::write`] gives the whole
/// map, and appears whole or not at all (written beside `path`, then renamed by rank 0 once
/// every rank is done).
pub fn write_rows(
    path: &Path,
    heights: &Grid<f32>,
    nodata: Option<&[bool]>,
    parts: &[Range<usize>],
    options: &WriteOptions,
    ex: &dyn Exchange,
) -> Result<(), Error> {
    let (rank, ranks) = (ex.rank(), ex.ranks());
    let refuse = |what: String| Error::format(path, FormatError::Options(what));
    let cells = heights.width() * heights.height();
    if parts.len() != ranks
        || parts.get(rank).is_none_or(|p| p.len() != heights.height())
        || nodata.is_some_and(|m| m.len() != cells)
    {
        return Err(refuse(format!("rank {rank} holds {} rows of parts {parts:?}", heights.height())));
    }
    if Format::from_path(path)? != Format::Tiff {
        return Err(refuse("maps written by rows are TIFF or BigTIFF".into()));
    }
    let (width, height) = (heights.width(), parts.last().map_or(0, |p| p.end));
    let stats = stats_of_rows(heights, nodata, parts, ex);
    let value = options.nodata_value.unwrap_or(f64::NAN) as f32;
    let any_nodata = stats.valid_cells < width * height;
    let tags = crate::formats::tiff::tags(
        heights.cell_size(),
        options,
        (any_nodata || options.nodata_value.is_some()).then_some(value),
        &stats,
    );
    let cells: Vec<f32> = match nodata {
        Some(m) => heights.as_slice().iter().zip(m).map(|(&h, &n)| if n { value } else { h }).collect(),
        None => heights.as_slice().to_vec(),
    };
    // rank 0 makes the temporary file and tells the others its name
    let made = if rank == 0 { Some(crate::atomic::Temporary::new(path)) } else { None };
    let name = match &made {
        Some(Ok(t)) => t.path().as_os_str().as_encoded_bytes().to_vec(),
        _ => Vec::new(),
    };
    let name = erode::ranks::broadcast_sized(ex, &name);
    let wrote = if name.is_empty() {
        Err(RowsError::Other(0))
    } else {
        let temporary = path_of(&name);
        tiff_strips::write_rows(&temporary, &Strips::new(width, height), &tags, parts, &cells, ex)
    };
    let wrote = wrote.map_err(|e| match e {
        RowsError::Io(e) => Error::io(path, e),
        RowsError::Format(e) => Error::format(path, e),
        RowsError::Other(k) => refuse(format!("rank {k} could not write its rows (it says why)")),
    });
    match made {
        Some(made) => {
            let made = made?;
            wrote?;
            made.persist()
        }
        None => wrote,
    }
}

/// The path whose bytes rank 0 sent (every rank runs on the same kind of system).
pub(crate) fn path_of(bytes: &[u8]) -> std::path::PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        std::ffi::OsStr::from_bytes(bytes).into()
    }
    #[cfg(not(unix))]
    {
        String::from_utf8_lossy(bytes).into_owned().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use erode::ranks::Threads;
    use erode::{CellSize, Heightmap};

    fn map(width: usize, height: usize, holes: bool) -> Heightmap {
        let cells = (0..width * height).map(|i| ((i * 7919) % 1000) as f32 * 0.25 + (i / width) as f32).collect();
        let grid = Grid::from_vec(width, height, CellSize::square(30.0), cells).unwrap();
        let mask = holes.then(|| (0..width * height).map(|i| i % 97 == 3).collect());
        Heightmap::with_nodata(grid, mask).unwrap()
    }

    fn rows_of(m: &Heightmap, rows: Range<usize>) -> (Grid<f32>, Option<Vec<bool>>) {
        let w = m.heights.width();
        let cells = rows.start * w..rows.end * w;
        let g =
            Grid::from_vec(w, rows.len(), m.heights.cell_size(), m.heights.as_slice()[cells.clone()].to_vec()).unwrap();
        (g, m.nodata_mask().map(|k| k[cells].to_vec()))
    }

    #[test]
    fn a_scan_by_rows_finds_what_a_whole_read_does() {
        // a map wide enough for erode's strips of ~1 MiB to be 8 rows high
        let (w, h) = (1 << 15, 37);
        let dir = tempfile::tempdir().unwrap();
        for holes in [false, true] {
            let whole = map(w, h, holes);
            let path = dir.path().join("map.tif");
            crate::write(&path, &whole, &WriteOptions::default()).unwrap();
            let read = crate::read(&path, &ReadOptions::default()).unwrap();
            let mut seen = Vec::new();
            // batches of 7 rows' cells rounded up to whole strips, 8 rows, and a last one of 5:
            // the fill's sum runs on across them
            let scan = scan_by(&path, &ReadOptions::default(), w * 7, |r| seen.push(r.heights.height())).unwrap();
            assert_eq!(seen, [8, 8, 8, 8, 5]);
            let fill = read.map.nodata_mask().map(|m| read.map.heights.as_slice()[m.iter().position(|&b| b).unwrap()]);
            assert_eq!(scan.fill.map(f32::to_bits), fill.map(f32::to_bits));
            assert_eq!(scan.fill.is_some(), holes);
            // (by their words: a NaN nodata value is not equal to itself)
            assert_eq!(format!("{:?}", scan.footprint), format!("{:?}", Footprint::from(read)));
        }
        // refused as a whole read refuses it, naming the same cell, in the fourth batch
        let mut bad = map(w, h, false);
        bad.heights.as_mut_slice()[27 * w + 9] = f32::INFINITY;
        let path = dir.path().join("bad.tif");
        crate::write(&path, &bad, &WriteOptions::default()).unwrap();
        let whole = crate::read(&path, &ReadOptions::default()).unwrap_err().to_string();
        let by_rows = scan_by(&path, &ReadOptions::default(), w * 7, |_| {}).unwrap_err().to_string();
        assert_eq!(by_rows, whole);
        assert!(whole.contains("27"), "{whole}");
        let few = ReadOptions { max_cells: 1000, ..Default::default() };
        assert!(scan(&path, &few, |_| {}).is_err());
    }

    #[test]
    fn a_scan_decodes_each_strip_or_tile_for_one_batch() {
        // 1 MB of heights over 4096 columns: 64 rows, a whole number of 16-row strips; of 256-row
        // tiles one tile row, not a quarter of one four times; of 1-row strips 64 rows
        assert_eq!(batch_rows(1 << 18, 4096, 16), 64);
        assert_eq!(batch_rows(1 << 18, 4096, 256), 256);
        assert_eq!(batch_rows(1 << 18, 4096, 1), 64);
        assert_eq!(batch_rows(1 << 18, 4096, 48), 96);
        // wider than a batch: one chunk's rows
        assert_eq!(batch_rows(1 << 18, 1 << 20, 1), 1);
        assert_eq!(batch_rows(1 << 18, 1 << 20, 8), 8);
    }

    #[test]
    fn ranks_write_the_file_one_process_writes() {
        for holes in [false, true] {
            let whole = map(700, 1500, holes);
            let dir = tempfile::tempdir().unwrap();
            let one = dir.path().join("one.tif");
            crate::write(&one, &whole, &WriteOptions::default()).unwrap();
            let one = std::fs::read(one).unwrap();
            for ranks in 1..=4 {
                let path = dir.path().join(format!("ranks{ranks}.tif"));
                let parts: Vec<Range<usize>> = (0..ranks).map(|k| k * 1500 / ranks..(k + 1) * 1500 / ranks).collect();
                std::thread::scope(|s| {
                    for ex in Threads::ranks(ranks) {
                        let (path, parts, whole) = (&path, &parts, &whole);
                        s.spawn(move || {
                            let (heights, nodata) = rows_of(whole, parts[ex.rank()].clone());
                            write_rows(path, &heights, nodata.as_deref(), parts, &WriteOptions::default(), &*ex)
                                .unwrap();
                        });
                    }
                });
                assert_eq!(std::fs::read(&path).unwrap(), one, "{ranks} ranks, holes {holes}");
            }
            // nothing but the files written is left in the folder
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 5);
        }
    }

    #[test]
    fn a_rank_reads_its_rows_of_a_file() {
        let whole = map(700, 1500, true);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.tif");
        crate::write(&path, &whole, &WriteOptions::default()).unwrap();
        let options = ReadOptions::default();
        for rows in [0..1500, 0..1, 374..1125, 1499..1500] {
            let got = read_rows(&path, rows.clone(), &options).unwrap();
            let (heights, nodata) = rows_of(&whole, rows.clone());
            assert_eq!(got.nodata, nodata, "rows {rows:?}");
            // the valid cells (a heightmap fills its nodata cells; a block keeps the file's value)
            let valid = |g: &Grid<f32>| -> Vec<f32> {
                g.as_slice().iter().zip(nodata.as_deref().unwrap()).filter(|(_, n)| !**n).map(|(h, _)| *h).collect()
            };
            assert_eq!(valid(&got.heights), valid(&heights), "rows {rows:?}");
            assert_eq!(got.heights.cell_size(), CellSize::square(30.0));
        }
        // the cells' limit holds a block (and each strip decoded for it: 374 rows here) to its
        // own size, not the whole map's
        let small = ReadOptions { max_cells: 700 * 400, ..ReadOptions::default() };
        assert!(crate::read(&path, &small).is_err());
        assert_eq!(read_rows(&path, 200..600, &small).unwrap().heights.height(), 400);
        assert!(read_rows(&path, 200..601, &small).unwrap_err().to_string().contains("limit"));
        let beyond = read_rows(&path, 1400..1501, &options).unwrap_err().to_string();
        assert!(beyond.contains("m.tif") && beyond.contains("rows 1400 to 1500 of a map of 1500 rows"), "{beyond}");
        let png = dir.path().join("m.png");
        crate::write(&png, &whole, &WriteOptions::default()).unwrap();
        assert!(read_rows(&png, 0..10, &options).unwrap_err().to_string().contains("must be a TIFF"));
    }
}
