//! Memory checked before the big allocations: each command estimates its peak from the map's
//! cells and what it runs (bytes per cell measured as peak resident size on 1024² and 4096²
//! maps, rounded up; see BENCHMARKS.md) and refuses with the figure when that exceeds the
//! memory available (or `--max-memory`), instead of being killed halfway.

use anyhow::bail;

/// Peak bytes per cell of each kind of work (measured 145, 58, 145 (231 with MFD), 66 and 12 B;
/// rounded up; over ranks, see the constants below).
#[derive(Clone, Copy, Debug)]
pub enum Work {
    /// The grid model (CPU; the GPU backend holds the same maps on the host).
    Grid,
    /// The droplet model.
    Droplet,
    /// The stream-power model (with multiple flow directions when true: their shares per cell).
    StreamPower(bool),
    /// The grid model over `ranks` MPI ranks, `local` of them on this machine with rank 0: rank
    /// 0's peak (the steady start's routing over the whole map's gathered heights, or later what
    /// it keeps of the whole map beside its block of the rows), more when maps are given
    /// (`maps`; the rain map's, `rain_map`, more still), and the blocks of the others here (a
    /// resume's the same: the checkpoint is read a batch of rows at a time). The other machines
    /// are taken to have as much memory and no more ranks: each of their ranks holds a block,
    /// less than rank 0.
    GridRanks {
        /// Ranks (more than one).
        ranks: u64,
        /// Ranks on this machine, rank 0 among them.
        local: u64,
        /// Whether any map is given besides the heights (hardness, rain, sediment depth).
        maps: bool,
        /// Whether the rain map is among them.
        rain_map: bool,
    },
    /// The grid model tile by tile (`--tiles`): the map's own bytes per cell (the input, its
    /// copy, the start's water, the blended maps; the steady start's flow routing at its peak)
    /// and a tile's state over its window of `window_cells` cells.
    TiledGrid {
        /// Cells of a tile's window (core and overlap).
        window_cells: u64,
    },
    /// A model made from the models' list, with its bytes per cell (its `Maker`'s).
    Model {
        /// Its name.
        name: &'static str,
        /// Its peak bytes per cell.
        bytes_per_cell: u64,
    },
    /// `erode analyze` (with its maps when true: the multiple-flow routing among them).
    Analyze(bool),
    /// `erode resample`, per cell of the output or of its rows filtered one way, whichever is
    /// larger (besides the input, already read): the heights, the filtered rows, the encoded
    /// file (measured 12.4 B growing 1024² to 4096², float TIFF out).
    Resample,
    /// Reading, generating, converting or rendering one map.
    Map,
}

impl Work {
    fn bytes_per_cell(self) -> u64 {
        match self {
            Work::Grid => 160,
            Work::Droplet => 64,
            Work::StreamPower(false) => 160,
            Work::StreamPower(true) => 280,
            Work::TiledGrid { .. } => TILED_BYTES_PER_CELL,
            Work::GridRanks { ranks, local, maps, rain_map } => {
                let rain = if rain_map { RAIN_MAP_BYTES_PER_CELL } else { 0 };
                let block = (RANK_BLOCK_BYTES_PER_CELL + rain).div_ceil(ranks.max(1));
                let maps = if maps { RANK0_MAPS_BYTES_PER_CELL } else { 0 };
                let first = RANK0_ROUTING_BYTES_PER_CELL.max(RANK0_WHOLE_BYTES_PER_CELL + block) + maps + rain;
                first + local.saturating_sub(1) * block
            }
            Work::Model { bytes_per_cell, .. } => bytes_per_cell,
            Work::Analyze(false) => 96,
            Work::Analyze(true) => 160,
            Work::Resample => 24,
            Work::Map => 16,
        }
    }

    fn name(self) -> String {
        match self {
            Work::Grid => "the grid model".into(),
            Work::Droplet => "the droplet model".into(),
            Work::StreamPower(_) => "the stream-power model".into(),
            Work::TiledGrid { .. } => "the grid model in tiles".into(),
            Work::GridRanks { ranks, local, .. } => {
                format!("the grid model over {ranks} ranks, {local} of them on this machine with rank 0,")
            }
            Work::Model { name, .. } => format!("the {name} model"),
            Work::Analyze(_) => "the analysis".into(),
            Work::Resample => "the resampled map".into(),
            Work::Map => "the map".into(),
        }
    }
}

/// What the program needs besides the maps (code, threads, buffers), bytes.
const BASE: u64 = 64 << 20;

/// Memory this process may still use, bytes: the system's available memory, lowered by a
/// cgroup's limit (containers); `None` where neither can be read.
pub fn available() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok().and_then(|text| {
        text.lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kb| kb * 1024)
    });
    let read = |p: &str| std::fs::read_to_string(p).ok().and_then(|t| t.trim().parse::<u64>().ok());
    let cgroup = match (read("/sys/fs/cgroup/memory.max"), read("/sys/fs/cgroup/memory.current")) {
        (Some(max), Some(current)) => Some(max.saturating_sub(current)),
        _ => read("/sys/fs/cgroup/memory/memory.limit_in_bytes")
            .filter(|&l| l < (1 << 60))
            .map(|l| l.saturating_sub(read("/sys/fs/cgroup/memory/memory.usage_in_bytes").unwrap_or(0))),
    };
    match (meminfo, cgroup) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Parses `--max-memory`: bytes, or a number with K, M, G or T (powers of 1024; a trailing `B`
/// or `iB` allowed).
pub fn parse_size(text: &str) -> anyhow::Result<u64> {
    let t = text.trim();
    let t = t.strip_suffix("iB").or_else(|| t.strip_suffix('B')).unwrap_or(t);
    let (number, unit) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&t[..i], c.to_ascii_uppercase()),
        _ => (t, ' '),
    };
    let scale: u64 = match unit {
        ' ' => 1,
        'K' => 1 << 10,
        'M' => 1 << 20,
        'G' => 1 << 30,
        'T' => 1 << 40,
        _ => bail!("--max-memory `{text}`: expected bytes or a size like 6G or 512M"),
    };
    match number.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok((v * scale as f64) as u64),
        _ => bail!("--max-memory `{text}`: expected bytes or a size like 6G or 512M"),
    }
}

/// Bytes as GB or MB, for messages.
fn show(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= (1u64 << 30) as f64 {
        format!("{:.1} GB", b / (1u64 << 30) as f64)
    } else {
        format!("{:.0} MB", b / (1u64 << 20) as f64)
    }
}

/// Refuses `work` on `width` x `height` cells when its estimate exceeds `limit` (`--max-memory`)
/// or, without one, the memory available.
pub fn check(width: usize, height: usize, work: Work, limit: Option<u64>) -> anyhow::Result<()> {
    let cells = (width as u64).saturating_mul(height as u64);
    // each process's own
    let processes = match work {
        Work::GridRanks { local, .. } => local.max(1),
        _ => 1,
    };
    let mut need = cells.saturating_mul(work.bytes_per_cell()).saturating_add(BASE.saturating_mul(processes));
    let what = format!("{width} x {height} cells: {} needs", work.name());
    let mut per = format!("~{} B per cell", work.bytes_per_cell());
    let instead = match work {
        Work::Grid => "a smaller map, --tiles SIZE (the map tile by tile)",
        Work::GridRanks { .. } => "more machines, or --tiles SIZE as one process (the map tile by tile)",
        Work::TiledGrid { window_cells } => {
            let tile = window_cells.min(cells).saturating_mul(Work::Grid.bytes_per_cell());
            need = need.saturating_add(tile);
            per.push_str(&format!(" and {} for a tile", show(tile)));
            "smaller --tiles or a smaller map"
        }
        _ => "a smaller map",
    };
    refuse_over(need, &what, &per, instead, limit)
}

/// The map's own bytes per cell of a tiled grid run at its peak, the steady start's flow
/// routing (measured: see BENCHMARKS.md).
const TILED_BYTES_PER_CELL: u64 = 48;

/// Over MPI ranks (BENCHMARKS.md, 4096², the grid default; bytes per cell of the whole map):
/// rank 0 at the steady start's routing, which it runs on every rank's heights gathered
/// (measured 35.5 B over 4 ranks, where its block is smallest: it reads a TIFF input a batch of
/// rows at a time, lets the gathered rows' bytes go before the routing, and the routing keeps
/// no more than the start needs; rounded up) ...
const RANK0_ROUTING_BYTES_PER_CELL: u64 = 44;
/// ... or later what it holds of the whole map beside its block (rank 0 less rank 1 over 2
/// ranks: 3.8 to 7.8 B as the allocator places the fields, the nodata mask and what the front
/// keeps; rounded up) ...
const RANK0_WHOLE_BYTES_PER_CELL: u64 = 8;
/// ... and a rank's block, per cell of its own rows (its state, halos and scratch; measured 99
/// B over 2 ranks, 110 B over 4; rounded up).
const RANK_BLOCK_BYTES_PER_CELL: u64 = 120;
/// Rank 0's more when maps are given (hardness, rain, sediment depth), per cell of the whole map
/// (measured with TIFF maps read a batch of rows at a time: 0.1 B over 2 ranks and +1.3 B over 4
/// with the hardness map, 6.2 B and 11.1 B with all three, the hardness map sparing the noise
/// hardness's pass and the 4-rank figures inside the routing's; rounded up, the rain map's more
/// below) ...
const RANK0_MAPS_BYTES_PER_CELL: u64 = 4;
/// ... and more for the rain map, per cell of the whole map on rank 0 (which gathers it for the
/// steady start's routing and keeps it for the checkpoints: measured 6.3 B over 2 ranks, 9.3 B
/// over 4, with the 8 B above) and per cell of its rows on every rank (its block's rain:
/// measured 4.1 B over 2 ranks, 6.6 to 8.5 B over 4, inside the block's own margin).
const RAIN_MAP_BYTES_PER_CELL: u64 = 8;

/// Peak bytes of an SPH run per particle alive (measured 1.16 KB from 80,000 to 290,000
/// particles, tank scene; rounded up) and per face of its mesh (measured ~130 B).
const SPH_PARTICLE_BYTES: u64 = 1300;
const SPH_FACE_BYTES: u64 = 400;

/// Refuses an SPH run of up to `particles` particles on a mesh of `faces` faces when its estimate
/// exceeds `limit` or the memory available.
pub fn check_sph(particles: usize, faces: usize, limit: Option<u64>) -> anyhow::Result<()> {
    let need = (particles as u64)
        .saturating_mul(SPH_PARTICLE_BYTES)
        .saturating_add((faces as u64).saturating_mul(SPH_FACE_BYTES))
        .saturating_add(BASE);
    let what = format!("{particles} particles on {faces} faces: the SPH model needs");
    let per = format!("~{SPH_PARTICLE_BYTES} B per particle");
    refuse_over(need, &what, &per, "fewer particles (--particles, --particle-cap) or faces (--faces)", limit)
}

/// Peak bytes of reading a mesh file, per byte of the file (the bytes, then the triangles
/// decoded and welded: at most ~3x a binary STL's).
const MESH_READ_BYTES_PER_BYTE: u64 = 4;

/// Refuses reading the mesh `path` when that would need more than `limit` or the memory
/// available (checked before the file is read).
pub fn check_mesh_file(path: &std::path::Path, limit: Option<u64>) -> anyhow::Result<()> {
    // a file past the reader's bound is the reader's to refuse, with its own message
    let Some(len) = std::fs::metadata(path).ok().map(|m| m.len()).filter(|&l| l <= erode_io::mesh::MAX_MESH_BYTES)
    else {
        return Ok(());
    };
    let need = len.saturating_mul(MESH_READ_BYTES_PER_BYTE).saturating_add(BASE);
    let what = format!("{}: reading this {} mesh needs", path.display(), show(len));
    refuse_over(need, &what, &format!("~{MESH_READ_BYTES_PER_BYTE} B per byte of the file"), "a smaller mesh", limit)
}

/// Refuses `need` bytes when they exceed `limit` (`--max-memory`) or, without one, the memory
/// available: "`what` about N (`per`), ...; use `instead`".
fn refuse_over(need: u64, what: &str, per: &str, instead: &str, limit: Option<u64>) -> anyhow::Result<()> {
    let (have, limit_text) = match limit {
        Some(l) => (l, format!("--max-memory is {}", show(l))),
        None => match available() {
            Some(a) => (a, format!("{} is available", show(a))),
            None => return Ok(()),
        },
    };
    if need > have {
        bail!(
            "{what} about {} ({per}), {limit_text}; use {instead}{}",
            show(need),
            if limit.is_some() {
                " or raise --max-memory"
            } else {
                " or free memory (--max-memory overrides the check)"
            }
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_units() {
        assert_eq!(parse_size("6G").unwrap(), 6 << 30);
        assert_eq!(parse_size("512MiB").unwrap(), 512 << 20);
        assert_eq!(parse_size("1.5k").unwrap(), 1536);
        assert_eq!(parse_size("1000").unwrap(), 1000);
        assert!(parse_size("6X").is_err() && parse_size("-1G").is_err() && parse_size("").is_err());
    }

    #[test]
    fn over_ranks_the_estimate_covers_every_rank_on_this_machine() {
        // the peaks measured at 4096² (BENCHMARKS.md), KiB: rank 0 and the largest other rank
        // over 2 and 4 ranks, all on this machine; without maps, with the hardness map alone,
        // with the rain map alone, and with those and the sediment depth map
        let runs: [(u64, bool, bool, [u64; 2]); 8] = [
            (2, false, false, [880_912, 818_880]),
            (4, false, false, [581_804, 456_556]),
            (2, true, false, [882_916, 819_588]),
            (4, true, false, [602_344, 450_644]),
            (2, true, true, [983_452, 852_184]),
            (4, true, true, [733_764, 483_748]),
            (2, true, true, [981_808, 852_204]),
            (4, true, true, [763_912, 470_708]),
        ];
        for (ranks, maps, rain_map, peaks) in runs {
            let [first, other] = peaks.map(|kib| kib * 1024);
            let all = first + (ranks - 1) * other;
            // rank 0 alone on its machine, then with all the others: refused with as much memory
            // as they took (the estimate is above it), run with half as much again
            for (local, measured) in [(1, first), (ranks, all)] {
                let work = Work::GridRanks { ranks, local, maps, rain_map };
                let run = format!("{ranks} ranks, {local} here, maps {maps}, rain map {rain_map}");
                assert!(check(4096, 4096, work, Some(measured)).is_err(), "{run}");
                assert!(check(4096, 4096, work, Some(measured * 3 / 2)).is_ok(), "{run}");
            }
        }
        // the message says how many share this machine
        let four = |local| Work::GridRanks { ranks: 4, local, maps: false, rain_map: false };
        let err = check(8192, 8192, four(4), Some(6 << 30)).unwrap_err().to_string();
        assert!(err.contains("over 4 ranks, 4 of them on this machine"), "{err}");
        assert!(check(8192, 8192, four(1), Some(6 << 30)).is_ok());
    }

    #[test]
    fn a_map_beyond_the_limit_is_refused_with_the_estimate() {
        let err = check(8192, 8192, Work::Grid, Some(6 << 30)).unwrap_err().to_string();
        assert!(err.contains("8192 x 8192") && err.contains("10.1 GB") && err.contains("--max-memory"), "{err}");
        assert!(check(1024, 1024, Work::Grid, Some(6 << 30)).is_ok());
    }
}
