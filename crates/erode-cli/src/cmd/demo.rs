use std::path::PathBuf;

use anyhow::Context;
use erode::preview::{PreviewStyle, render};
use erode::terrain::{TerrainKind, TerrainSpec, generate};

use crate::progress;

/// Generate a terrain and render it: the README's first command.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  erode demo
  erode demo -o /tmp/demo --size 1024 --seed 3")]
pub struct Args {
    /// Output folder (created if missing).
    #[arg(short, long, default_value = "demo-out")]
    output: PathBuf,
    /// Terrain size in cells.
    #[arg(long, default_value_t = 512)]
    size: usize,
    /// Seed of the terrain.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub fn run(a: Args, quiet: bool) -> anyhow::Result<()> {
    std::fs::create_dir_all(&a.output)
        .with_context(|| format!("{}: cannot create the output folder", a.output.display()))?;
    let height = a.output.join("height.tif");
    let preview = a.output.join("preview.png");
    erode_io::check_output(&height)?;
    let bar = progress::bar(2, "stages", quiet);
    bar.set_message("generate");
    let spec = TerrainSpec {
        kind: TerrainKind::Ridged,
        width: a.size,
        height: a.size,
        seed: a.seed,
        relief: a.size as f64 * 0.25,
        feature_size: a.size as f64 / 2.0,
        ..Default::default()
    };
    let map = generate(&spec)?;
    erode_io::write(&height, &map, &Default::default())?;
    bar.inc(1);
    bar.set_message("render");
    let image = render(&map, None, None, &PreviewStyle::default());
    erode_io::write_rgb_png(&preview, &image)?;
    bar.finish_and_clear();
    if !quiet {
        eprintln!("wrote {} and {}", height.display(), preview.display());
    }
    Ok(())
}
