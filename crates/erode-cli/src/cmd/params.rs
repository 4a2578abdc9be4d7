use anyhow::Context;
use erode::models::droplet;
use erode::models::grid;
use erode::models::stream_power;

/// Print a model's default parameters (or a grid preset's) as commented TOML (a starting point
/// for --params).
#[derive(clap::Args)]
#[command(after_help = after_help())]
pub struct Args {
    /// The model.
    model: Model,
    /// Grid, droplet or stream-power: print this preset instead of the defaults.
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,
}

/// The presets of each model, from the models' own lists, then examples.
fn after_help() -> String {
    let list = |presets: Vec<(&str, &str)>| {
        presets.iter().map(|(name, summary)| format!("\n  {name:<10} {summary}")).collect::<String>()
    };
    let grid = list(grid::PRESETS.iter().map(|p| (p.name, p.summary)).collect());
    let droplet = list(droplet::PRESETS.iter().map(|p| (p.0, p.1)).collect());
    let stream_power = list(stream_power::PRESETS.iter().map(|p| (p.0, p.1)).collect());
    format!(
        "Grid presets:{grid}\nDroplet presets:{droplet}\nStream-power presets:{stream_power}\n\n\
         Examples:\n  \
         erode params grid > grid.toml\n  \
         erode params grid --preset badlands > badlands.toml\n  \
         erode params droplet > droplet.toml\n  \
         erode params sph > sph.toml\n  \
         erode params stream-power --preset nonlinear > sp.toml\n  \
         erode simulate grid dem.tif --params grid.toml -o out"
    )
}

#[derive(clap::ValueEnum, Clone, Copy)]
enum Model {
    Grid,
    Droplet,
    Sph,
    StreamPower,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    if a.preset.is_some() && matches!(a.model, Model::Sph) {
        anyhow::bail!("--preset is for the grid, droplet and stream-power models");
    }
    match a.model {
        Model::Grid => {
            let docs: Vec<(&str, &str)> = grid::PARAM_DOCS.iter().map(|d| (d.name, d.doc)).collect();
            let name = a.preset.as_deref().unwrap_or("rivers");
            let params = grid::preset(name).context("--preset")?;
            let summary = grid::PRESETS.iter().find(|p| p.name == name).map_or("", |p| p.summary);
            let header = format!(
                "erode grid model parameters (Jako & Toth 2011 after Mei et al. 2007, with the options of the\n\
                 interactive simulator of McLeod, Chen & Hu and of bshishov's Unity project).\n\
                 Heights in metres, time in seconds. Preset `{name}`: {summary}.\n\
                 Use it with --params FILE, or directly with --preset {name}."
            );
            print!("{}", erode_io::params::to_commented_toml(&params, &docs, &header));
        }
        Model::Droplet => {
            let name = a.preset.as_deref().unwrap_or("default");
            let params = droplet::preset(name).context("--preset")?;
            let summary = droplet::PRESETS.iter().find(|p| p.0 == name).map_or("", |p| p.1);
            let header = format!(
                "erode droplet model parameters (Beyer 2015, in metres and seconds: the same values\n\
                 give the same change at any cell size). Each droplet is the rain of one cell.\n\
                 Preset `{name}`: {summary}.\n\
                 Use it with --params FILE, or directly with --preset {name}."
            );
            let mut table = erode_io::params::to_commented_toml(&params, droplet::PARAM_DOCS, &header);
            // TOML has no -inf literal for "unset": say it instead
            table = table.replace("min_height = -inf", "# min_height = 0.0   (unset: the input's lowest height)");
            print!("{table}");
        }
        Model::StreamPower => {
            let name = a.preset.as_deref().unwrap_or("default");
            let params = stream_power::preset(name).context("--preset")?;
            let summary = stream_power::PRESETS.iter().find(|p| p.0 == name).map_or("", |p| p.1);
            let header = format!(
                "erode stream-power model parameters: dz/dt = U - K*A^m*S^n + D*laplacian(z), heights in\n\
                 metres, time in years (Braun & Willett 2013). Preset `{name}`: {summary}.\n\
                 Use it with --params FILE, or directly with --preset {name}."
            );
            let mut table = erode_io::params::to_commented_toml(&params, stream_power::PARAM_DOCS, &header);
            table = table.replace("sea_level = -inf", "# sea_level = 0.0   (unset: no sea)");
            print!("{table}");
        }
        Model::Sph => {
            let header = "erode SPH model parameters (Skorkovská et al.: fluid particles eroding a triangle mesh).\n\
                          Metres, seconds, kilograms. Each value below is the default; 0 = derived.";
            let docs = erode::models::sph::PARAM_DOCS;
            print!("{}", erode_io::params::to_commented_toml(&erode::models::sph::Params::default(), docs, header));
        }
    }
    Ok(())
}
