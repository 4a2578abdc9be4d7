//! Writing maps the way every command does: the formats a user lists, the input's nodata and
//! georeference kept.

use std::path::Path;

use anyhow::bail;
use erode::Heightmap;
use erode_io::{Format, WriteOptions};

/// The formats named by `--format`, without repeats.
pub fn formats(names: &[String]) -> anyhow::Result<Vec<Format>> {
    let mut out = Vec::new();
    for n in names {
        let f = match n.trim().to_ascii_lowercase().as_str() {
            "tif" | "tiff" => Format::Tiff,
            "png" | "png16" => Format::Png,
            "exr" => Format::Exr,
            "pgm" => Format::Pgm,
            "npy" => Format::Npy,
            "r16" | "raw" => Format::R16,
            "r32" => Format::R32,
            other => bail!("--format {other}: unknown; use tif, png, exr, pgm, npy, r16 or r32"),
        };
        if !out.contains(&f) {
            out.push(f);
        }
    }
    Ok(out)
}

/// Writes `field` (row-major, the input's shape) as `dir/<name>.<ext>` in every format, with the
/// input's nodata cells and georeference. Returns the map written.
pub fn write_map(
    dir: &Path,
    name: &str,
    formats: &[Format],
    input: &erode_io::Loaded,
    field: Vec<f32>,
) -> anyhow::Result<Heightmap> {
    let g = &input.map.heights;
    let mask = input.map.nodata_mask().map(<[bool]>::to_vec);
    let options =
        WriteOptions { range: None, georef: input.info.georef.clone(), nodata_value: input.info.nodata_value };
    let map = Heightmap::with_nodata(erode::Grid::from_vec(g.width(), g.height(), g.cell_size(), field)?, mask)?;
    for f in formats {
        erode_io::write(&dir.join(format!("{name}.{}", f.extension())), &map, &options)?;
    }
    Ok(map)
}

/// Prefix of the folder an output set is written into before it moves into place.
const STAGING_PREFIX: &str = ".erode-staging-";
/// Prefix of `erode_io::write_atomic`'s temporary files.
const TEMPORARY_PREFIX: &str = ".erode-tmp-";

/// An output set written as a whole: every file goes into a staging folder inside the output
/// folder; [`Staging::commit`] then removes the old `report.json`, moves the files into place
/// and moves `report.json` last. So a folder with a `report.json` holds a complete set, and a
/// run that fails or is stopped before the commit leaves the previous set as it was (dropping
/// the staging folder removes it).
pub struct Staging {
    dir: std::path::PathBuf,
    out: std::path::PathBuf,
}

impl Staging {
    /// A fresh staging folder in `out`.
    pub fn new(out: &Path) -> anyhow::Result<Self> {
        let dir = out.join(format!("{STAGING_PREFIX}{}", std::process::id()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        std::fs::create_dir(&dir).map_err(|e| anyhow::anyhow!("{}: cannot create: {e}", dir.display()))?;
        Ok(Self { dir, out: out.to_path_buf() })
    }

    /// Where the set's files are written.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Moves the set into the output folder, `report.json` last.
    pub fn commit(self) -> anyhow::Result<()> {
        let report = self.out.join("report.json");
        if report.exists() {
            std::fs::remove_file(&report)?;
        }
        let mut names: Vec<std::ffi::OsString> =
            std::fs::read_dir(&self.dir)?.map(|e| e.map(|e| e.file_name())).collect::<Result<_, _>>()?;
        // report.json sorts last of all: the set is complete when it appears
        names.sort_by_key(|n| (n == "report.json", n.clone()));
        for name in names {
            std::fs::rename(self.dir.join(&name), self.out.join(&name))
                .map_err(|e| anyhow::anyhow!("{}: cannot move into place: {e}", self.out.join(&name).display()))?;
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Removes what an earlier run in `out` left when it was killed: staging folders and the
/// temporary files of atomic writes, in `out` and its `checkpoints` folder.
pub fn remove_stale_temporaries(out: &Path) {
    for dir in [out.to_path_buf(), out.join("checkpoints")] {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            if name.starts_with(STAGING_PREFIX) {
                let _ = std::fs::remove_dir_all(&path);
            } else if name.starts_with(TEMPORARY_PREFIX) {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}
