//! What the heightmap models (grid, droplet) share on the command line: the input and its
//! maps, and outputs written as maps in every format with a preview.

use std::path::{Path, PathBuf};

use anyhow::bail;
use erode_io::run::{Newest, Stamp};

/// Flags of the heightmap models' maps and outputs.
#[derive(clap::Args)]
pub struct MapArgs {
    /// Input heightmap.
    pub input_file: Option<PathBuf>,
    /// Seed of the random parts (overrides the parameter `seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Backend.
    #[arg(long, value_enum, default_value_t = super::Backend::Cpu)]
    pub backend: super::Backend,
    /// Output formats, comma-separated: tif, png, exr, pgm, npy, r16, r32.
    #[arg(long, value_delimiter = ',', default_value = "tif")]
    pub format: Vec<String>,
    #[arg(long, value_delimiter = ',', value_name = "MAPS", help = outputs_help())]
    pub outputs: Vec<String>,
}

/// `--outputs`' help: each heightmap model's maps, from the models' list.
fn outputs_help() -> String {
    let models: Vec<String> = erode::models::MODELS
        .iter()
        .filter(|m| !m.maps.is_empty())
        .map(|m| format!("{}: {}", m.name, m.maps.iter().skip(1).map(|d| d.name).collect::<Vec<_>>().join(", ")))
        .collect();
    format!(
        "Maps to write besides the height (always written, with preview.png and report.json), comma-separated, \
         or `all` ({})",
        models.join("; ")
    )
}

impl MapArgs {
    /// The maps `--outputs` asks `model` for, each checked to be one it gives.
    pub fn wanted(&self, model: &erode::models::ModelInfo) -> anyhow::Result<erode_io::outputs::Wanted> {
        use erode_io::outputs::Wanted;
        if self.outputs.iter().any(|o| o == "all") {
            return Ok(Wanted::All);
        }
        for name in &self.outputs {
            if !model.maps.iter().any(|m| m.name == name) {
                let known: Vec<&str> = model.maps.iter().map(|m| m.name).collect();
                bail!("--outputs {name}: the {} model writes {}, or all", model.name, known.join(", "));
            }
        }
        Ok(Wanted::Named(self.outputs.clone()))
    }
}

/// A heightmap read for a run.
pub struct Input {
    /// The file and what it holds.
    pub loaded: erode_io::Loaded,
    /// The input as the user named it (its path).
    pub name: String,
    /// The hardness map, if one was given.
    pub hardness: Option<erode::Grid<f32>>,
    /// The rain map, if one was given.
    pub rain: Option<erode::Grid<f32>>,
    /// The sediment depth map (m), if one was given.
    pub sediment_depth: Option<erode::Grid<f32>>,
    /// The value the nodata cells of the hardness, rain and sediment depth maps hold (the mean
    /// of their valid cells), those given with any.
    pub fills: [Option<f32>; 3],
}

impl Input {
    /// Reads the input heightmap of `model` and its maps, checking the memory `work` needs.
    pub fn read(
        maps: &MapArgs,
        files: MapFiles,
        run: &super::RunArgs,
        model: &str,
        work: crate::memory::Work,
    ) -> anyhow::Result<Self> {
        let Some(path) = &maps.input_file else { bail!("simulate {model}: needs an input heightmap") };
        let loaded = erode_io::read(path, &run.input.options()?)?;
        let terrain = &loaded.map.heights;
        crate::memory::check(terrain.width(), terrain.height(), work, run.input.max_memory)?;
        let read = |m: MapRead| read_filled(m.file, m.what, terrain, &m.options);
        let [h, r, d] = files.reads();
        let (hardness, hardness_fill) = read(h)?;
        let (rain, rain_fill) = read(r)?;
        let (sediment_depth, depth_fill) = read(d)?;
        let fills = [hardness_fill, rain_fill, depth_fill];
        Ok(Self { loaded, name: path.display().to_string(), hardness, rain, sediment_depth, fills })
    }

    /// Which input the checkpoints belong to: `hash`, the model's hash of its inputs (the
    /// heightmap and `maps`, the options and files of those given).
    pub fn stamp<'a>(&self, hash: u64, maps: impl IntoIterator<Item = (&'a str, Option<&'a Path>)>) -> Stamp {
        stamp(self.name.clone(), hash, maps)
    }

    /// What a run keeps of the input once the model holds its heights and maps: its footprint
    /// (the heights and the maps let go).
    pub fn into_footprint(self) -> erode_io::Footprint {
        self.loaded.into()
    }

    /// The heights.
    pub fn terrain(&self) -> &erode::Grid<f32> {
        &self.loaded.map.heights
    }

    /// The model `resume` makes of checkpoint `c`, checked to fit this input (`shape`: its
    /// columns, rows and cell size).
    pub fn resume<R>(
        &self,
        c: &Newest,
        resume: impl FnOnce(&[u8]) -> Result<R, erode::SimError>,
        shape: impl FnOnce(&R) -> (usize, usize, erode::CellSize),
    ) -> anyhow::Result<R> {
        let model = c.resume(resume)?;
        self.fits(c, model, shape)
    }

    /// `model`, resumed from checkpoint `c`, checked to fit this input (`shape`: its columns,
    /// rows and cell size).
    pub fn fits<R>(
        &self,
        c: &Newest,
        model: R,
        shape: impl FnOnce(&R) -> (usize, usize, erode::CellSize),
    ) -> anyhow::Result<R> {
        let t = self.terrain();
        fits((t.width(), t.height(), t.cell_size()), c, model, shape)
    }
}

/// `model`, resumed from checkpoint `c`, checked to fit an input of `input`'s columns, rows and
/// cell size (`shape`: the model's).
pub fn fits<R>(
    input: (usize, usize, erode::CellSize),
    c: &Newest,
    model: R,
    shape: impl FnOnce(&R) -> (usize, usize, erode::CellSize),
) -> anyhow::Result<R> {
    let (w, h, cell) = shape(&model);
    let (width, height, now) = input;
    if (w, h) != (width, height) {
        bail!("{}: checkpoint is {w} x {h}, the input {width} x {height}", c.path.display());
    }
    if now != cell {
        // the run's cells are its own: a --cell-size (or a georeference) that says otherwise
        // was kept silently before
        bail!(
            "{}: the run has cells of {} x {} m, the input now {} x {} m (--cell-size or its georeference): \
             give the cell size it began with, or start afresh without --resume",
            c.path.display(),
            cell.x,
            cell.y,
            now.x,
            now.y
        );
    }
    Ok(model)
}

/// Which input the checkpoints belong to: `hash`, the model's hash of its inputs (the heightmap
/// named `name` and `maps`, the options and files of those given).
pub fn stamp<'a>(name: String, hash: u64, maps: impl IntoIterator<Item = (&'a str, Option<&'a Path>)>) -> Stamp {
    Stamp { hash, input: name }.with_maps(hash, maps)
}

/// The files of a heightmap model's input maps.
#[derive(Clone, Copy)]
pub struct MapFiles<'a> {
    /// The hardness map.
    pub hardness: Option<&'a Path>,
    /// The rain map.
    pub rain: Option<&'a Path>,
    /// The sediment depth map (the grid model's).
    pub sediment_depth: Option<&'a Path>,
}

/// A map given on the command line, as it is read.
pub struct MapRead<'a> {
    /// Its name in the inputs' hash (`erode::models::grid::StartMaps`).
    pub name: &'static str,
    /// What errors call it.
    pub what: &'static str,
    /// Its file, if given.
    pub file: Option<&'a Path>,
    /// How it is read: maps of values 0 to 1 with integer samples over that range, the
    /// sediment depth in metres.
    pub options: erode_io::ReadOptions,
}

impl<'a> MapFiles<'a> {
    /// The maps (hardness, rain, sediment depth: the inputs' hash's order) as they are read.
    pub fn reads(&self) -> [MapRead<'a>; 3] {
        let read = |name, what, file, options| MapRead { name, what, file, options };
        [
            read("hardness", "hardness", self.hardness, unit_options()),
            read("rain", "rain", self.rain, unit_options()),
            read("sediment_depth", "sediment depth", self.sediment_depth, erode_io::ReadOptions::default()),
        ]
    }

    /// The maps with the options that name them.
    pub fn named(&self) -> [(&'static str, Option<&Path>); 3] {
        [("--hardness-map", self.hardness), ("--rain-map", self.rain), ("--sediment-depth-map", self.sediment_depth)]
    }
}

/// A model's error about a map given on the command line, prefixed with that map's file.
pub fn name_the_map_file(e: erode::SimError, files: MapFiles) -> anyhow::Error {
    let file = match &e {
        erode::SimError::NoRain => files.rain,
        erode::SimError::MapValue { what: "hardness", .. } => files.hardness,
        erode::SimError::MapValue { what: "rain", .. } => files.rain,
        erode::SimError::MapValue { what: "sediment depth", .. } => files.sediment_depth,
        erode::SimError::MapNotUsed { map: "sediment depth", .. } => files.sediment_depth,
        _ => None,
    };
    match file {
        Some(p) => anyhow::anyhow!("{}: {e}", p.display()),
        None => e.into(),
    }
}

/// Reads the `what` map at `path` (integer formats as 0..1), refusing one of another size than
/// `terrain`.
pub fn read_map(
    path: Option<&Path>,
    what: &str,
    terrain: &erode::Grid<f32>,
) -> anyhow::Result<Option<erode::Grid<f32>>> {
    Ok(read_filled(path, what, terrain, &unit_options())?.0)
}

/// How maps of values 0 to 1 are read: integer samples over that range.
pub fn unit_options() -> erode_io::ReadOptions {
    erode_io::ReadOptions { mapping: Some(erode_io::IntMapping::Range { min: 0.0, max: 1.0 }), ..Default::default() }
}

/// The map at `path` read with `options`, refused if of another size than `terrain`, and the
/// value its nodata cells were given (the mean of its valid cells), if it has any.
fn read_filled(
    path: Option<&Path>,
    what: &str,
    terrain: &erode::Grid<f32>,
    options: &erode_io::ReadOptions,
) -> anyhow::Result<(Option<erode::Grid<f32>>, Option<f32>)> {
    let Some(p) = path else { return Ok((None, None)) };
    let map = erode_io::read(p, options)?.map;
    let fill = (0..map.heights.len()).find(|&i| map.is_nodata(i)).map(|i| map.heights.as_slice()[i]);
    Ok((same_shape(p, what, map.heights, terrain)?, fill))
}

fn same_shape(
    p: &Path,
    what: &str,
    m: erode::Grid<f32>,
    terrain: &erode::Grid<f32>,
) -> anyhow::Result<Option<erode::Grid<f32>>> {
    check_shape(p, what, (m.width(), m.height()), (terrain.width(), terrain.height()))?;
    Ok(Some(m))
}

/// Refuses the `what` map at `p`, of `got` columns and rows, unless the terrain's size.
pub fn check_shape(p: &Path, what: &str, got: (usize, usize), terrain: (usize, usize)) -> anyhow::Result<()> {
    if got != terrain {
        bail!("{}: the {what} map is {} x {}, the terrain {} x {}", p.display(), got.0, got.1, terrain.0, terrain.1);
    }
    Ok(())
}
