use std::path::PathBuf;

use anyhow::Context;
use erode::terrain::{TerrainKind, TerrainSpec, generate};

use crate::input::parse_cell_size;

/// Generate a terrain heightmap from a seed.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  erode generate --size 1024 --seed 7 -o t.tif
  erode generate --kind ridged --size 512 --relief 300 --cell-size 2 -o ridges.png
  erode generate --kind cone --width 200 --height 100 -o cone.exr")]
pub struct Args {
    /// Generator.
    #[arg(long, value_enum, default_value_t = Kind::Fbm)]
    kind: Kind,
    /// Width and height in cells (square).
    #[arg(long, default_value_t = 256, conflicts_with_all = ["width", "height"])]
    size: usize,
    /// Width in cells (with --height).
    #[arg(long, requires = "height")]
    width: Option<usize>,
    /// Height in cells (with --width).
    #[arg(long, requires = "width")]
    height: Option<usize>,
    /// Seed of the noise.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Cell size in metres, `S` or `XxY`.
    #[arg(long, default_value = "1", allow_negative_numbers = true)]
    cell_size: String,
    /// Most memory to use, e.g. `6G` (larger maps are refused). Default: the memory available.
    #[arg(long, value_name = "SIZE", value_parser = crate::memory::parse_size)]
    max_memory: Option<u64>,
    /// Height difference between lowest and highest cell, metres.
    #[arg(long, default_value_t = 64.0, allow_negative_numbers = true)]
    relief: f64,
    /// Height of the lowest cell, metres.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    base: f64,
    /// Wavelength of the largest noise feature, cells.
    #[arg(long, default_value_t = 128.0)]
    feature_size: f64,
    /// Noise octaves (1-16).
    #[arg(long, default_value_t = 6)]
    octaves: u32,
    /// Amplitude ratio between octaves, or diamond-square roughness (0-1).
    #[arg(long, default_value_t = 0.5)]
    persistence: f64,
    /// Output heightmap; the format follows the extension.
    #[arg(short, long)]
    output: PathBuf,
}

#[derive(clap::ValueEnum, Clone, Copy)]
enum Kind {
    Fbm,
    Ridged,
    DiamondSquare,
    Cone,
    Ramp,
    Bowl,
    PlaneWithPit,
    Noise,
}

impl From<Kind> for TerrainKind {
    fn from(k: Kind) -> Self {
        match k {
            Kind::Fbm => Self::Fbm,
            Kind::Ridged => Self::Ridged,
            Kind::DiamondSquare => Self::DiamondSquare,
            Kind::Cone => Self::Cone,
            Kind::Ramp => Self::Ramp,
            Kind::Bowl => Self::Bowl,
            Kind::PlaneWithPit => Self::PlaneWithPit,
            Kind::Noise => Self::Noise,
        }
    }
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let spec = TerrainSpec {
        kind: a.kind.into(),
        width: a.width.unwrap_or(a.size),
        height: a.height.unwrap_or(a.size),
        cell_size: parse_cell_size(&a.cell_size)?,
        seed: a.seed,
        relief: a.relief,
        base: a.base,
        feature_size: a.feature_size,
        octaves: a.octaves,
        persistence: a.persistence,
    };
    spec.validate()?;
    erode_io::Format::from_path(&a.output)?;
    erode_io::check_output(&a.output)?;
    crate::memory::check(spec.width, spec.height, crate::memory::Work::Map, a.max_memory)?;
    let map = generate(&spec).context("generating the terrain")?;
    erode_io::write(&a.output, &map, &Default::default())?;
    Ok(())
}
