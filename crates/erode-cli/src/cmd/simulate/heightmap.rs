//! What the heightmap models (grid, droplet) share on the command line: the input and its
//! maps, and outputs written as maps in every format with a preview.

use std::path::{Path, PathBuf};

use anyhow::bail;
use erode::preview::{PreviewStyle, render};
use erode_io::Format;

use super::run::Stamp;

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
}

/// A heightmap read for a run.
pub struct Input {
    /// The file and what it holds.
    pub loaded: erode_io::Loaded,
    /// Which input the checkpoints belong to.
    pub stamp: Stamp,
    /// The hardness map, if one was given.
    pub hardness: Option<erode::Grid<f32>>,
    /// The rain map, if one was given.
    pub rain: Option<erode::Grid<f32>>,
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
        let stamp = Stamp { hash: crate::stamp::of_heightmap(&loaded.map), input: path.display().to_string() };
        let hardness = read_map(files.hardness, "hardness", terrain)?;
        let rain = read_map(files.rain, "rain", terrain)?;
        Ok(Self { loaded, stamp, hardness, rain })
    }

    /// The heights.
    pub fn terrain(&self) -> &erode::Grid<f32> {
        &self.loaded.map.heights
    }

    /// The model `resume` makes of checkpoint `c`, checked to fit this input (`size`: its
    /// columns and rows).
    pub fn resume<R>(
        &self,
        c: &super::checkpoints::Newest,
        resume: impl FnOnce(&[u8]) -> Result<R, erode::SimError>,
        size: impl FnOnce(&R) -> (usize, usize),
    ) -> anyhow::Result<R> {
        use anyhow::Context;
        let model = resume(&c.bytes).with_context(|| c.unreadable())?;
        self.check_size(&c.path, size(&model))?;
        Ok(model)
    }

    /// A checkpoint of `got` cells across must fit the input it resumes.
    fn check_size(&self, checkpoint: &Path, got: (usize, usize)) -> anyhow::Result<()> {
        let t = self.terrain();
        if got != (t.width(), t.height()) {
            bail!(
                "{}: checkpoint is {} x {}, the input {} x {}",
                checkpoint.display(),
                got.0,
                got.1,
                t.width(),
                t.height()
            );
        }
        Ok(())
    }

    /// Says, unless quiet, how the input's nodata cells take part: outside the domain, with
    /// their edges open or closed (`nodata_border`).
    pub fn note_nodata(&self, open: bool, quiet: bool) {
        let n = self.loaded.map.nodata_count();
        if n > 0 && !quiet {
            let edges = if open { "open: what flows into them leaves, booked as outflow" } else { "closed" };
            eprintln!("erode: note: {n} nodata cells are outside the domain; their edges are {edges} (nodata_border)");
        }
    }
}

/// The files of a heightmap model's input maps.
#[derive(Clone, Copy)]
pub struct MapFiles<'a> {
    /// The hardness map.
    pub hardness: Option<&'a Path>,
    /// The rain map.
    pub rain: Option<&'a Path>,
}

/// A model's error about a map given on the command line, prefixed with that map's file.
pub fn name_the_map_file(e: erode::SimError, files: MapFiles) -> anyhow::Error {
    let file = match &e {
        erode::SimError::NoRain => files.rain,
        erode::SimError::MapValue { what: "hardness", .. } => files.hardness,
        erode::SimError::MapValue { what: "rain", .. } => files.rain,
        _ => None,
    };
    match file {
        Some(p) => anyhow::anyhow!("{}: {e}", p.display()),
        None => e.into(),
    }
}

fn read_map(path: Option<&Path>, what: &str, terrain: &erode::Grid<f32>) -> anyhow::Result<Option<erode::Grid<f32>>> {
    let Some(p) = path else { return Ok(None) };
    let opts = erode_io::ReadOptions {
        mapping: Some(erode_io::IntMapping::Range { min: 0.0, max: 1.0 }),
        ..Default::default()
    };
    let m = erode_io::read(p, &opts)?.map.heights;
    if !m.same_shape(terrain) {
        bail!(
            "{}: the {what} map is {} x {}, the terrain {} x {}",
            p.display(),
            m.width(),
            m.height(),
            terrain.width(),
            terrain.height()
        );
    }
    Ok(Some(m))
}

/// Writes a model's maps as `<name>.<ext>` in every format (the input's nodata and georeference
/// kept) and `preview.png`: the first map hillshaded, with the map named `overlay` in blue.
pub struct MapOutputs {
    /// The formats asked for.
    pub formats: Vec<Format>,
    /// The map drawn over the preview.
    pub overlay: &'static str,
}

impl MapOutputs {
    /// Writes `maps` into `dir`.
    pub fn write(&self, dir: &Path, input: &Input, maps: Vec<(&'static str, Vec<f32>)>) -> anyhow::Result<()> {
        // each map is compressed and written on its own thread
        use rayon::prelude::*;
        let overlay = maps.iter().find(|(n, _)| *n == self.overlay).map(|(_, v)| v.clone());
        let written: Vec<erode::Heightmap> = maps
            .into_par_iter()
            .map(|(name, field)| crate::output::write_map(dir, name, &self.formats, &input.loaded, field))
            .collect::<anyhow::Result<_>>()?;
        if let (Some(terrain), Some(overlay)) = (written.first(), overlay) {
            let g = &terrain.heights;
            let overlay = erode::Grid::from_vec(g.width(), g.height(), g.cell_size(), overlay)?;
            let image = render(terrain, None, Some(&overlay), &PreviewStyle::default());
            erode_io::write_rgb_png(&dir.join("preview.png"), &image)?;
        }
        Ok(())
    }
}
