use erode::models::droplet::{DROPLET_PARAM_DOCS, DropletParams};
use erode::models::grid;

/// Print a model's default parameters as commented TOML (a starting point for --params).
#[derive(clap::Args)]
#[command(after_help = "Examples:
  erode params grid > grid.toml
  erode params droplet > droplet.toml
  erode params sph > sph.toml
  erode simulate grid dem.tif --params grid.toml -o out")]
pub struct Args {
    /// The model.
    model: Model,
}

#[derive(clap::ValueEnum, Clone, Copy)]
enum Model {
    Grid,
    Droplet,
    Sph,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    match a.model {
        Model::Grid => {
            let docs: Vec<(&str, &str)> = grid::PARAM_DOCS.iter().map(|d| (d.name, d.doc)).collect();
            let header = "erode grid model parameters (000 with 001's and 004's options).\n\
                          Heights in metres, time in seconds. Each value below is the default.";
            print!("{}", erode_io::params::to_commented_toml(&grid::Params::default(), &docs, header));
        }
        Model::Droplet => {
            let header = "erode droplet model parameters (Beyer 2015 as told in 002; 002's settings).\n\
                          Positions and radius in cells, heights in metres. Each value below is the default.";
            let mut table = erode_io::params::to_commented_toml(&DropletParams::default(), DROPLET_PARAM_DOCS, header);
            // TOML has no -inf literal for "unset": say it instead
            table = table.replace("min_height = -inf", "# min_height = 0.0   (unset: the input's lowest height)");
            print!("{table}");
        }
        Model::Sph => {
            let header = "erode SPH model parameters (003: fluid particles eroding a triangle mesh).\n\
                          Metres, seconds, kilograms. Each value below is the default; 0 = derived.";
            let docs = erode::models::sph::SPH_PARAM_DOCS;
            print!("{}", erode_io::params::to_commented_toml(&erode::models::sph::SphParams::default(), docs, header));
        }
    }
    Ok(())
}
