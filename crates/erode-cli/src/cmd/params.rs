use anyhow::Context;
use erode::models::{MODELS, droplet, grid, sph, stream_power};

/// Print a model's default parameters (or a grid preset's) as commented TOML (a starting point
/// for --params).
#[derive(clap::Args)]
#[command(after_help = after_help())]
pub struct Args {
    /// The model.
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(MODELS.iter().map(|m| m.name)))]
    model: String,
    /// A model with presets: print this preset instead of the defaults.
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,
}

/// The presets of each model that has some, from the models' list, then examples.
fn after_help() -> String {
    let mut text = String::new();
    for m in MODELS.iter() {
        let presets = (m.presets)();
        if !presets.is_empty() {
            text += &format!("{} presets:", m.name);
            for (name, summary) in presets {
                text += &format!("\n  {name:<10} {summary}");
            }
            text += "\n";
        }
    }
    text + "\nExamples:\n  \
            erode params grid > grid.toml\n  \
            erode params grid --preset badlands > badlands.toml\n  \
            erode params droplet > droplet.toml\n  \
            erode params sph > sph.toml\n  \
            erode params stream-power --preset nonlinear > sp.toml\n  \
            erode simulate grid dem.tif --params grid.toml -o out"
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let info = erode::models::info::find(&a.model).context("the model")?;
    let presets = (info.presets)();
    if a.preset.is_some() && presets.is_empty() {
        let with: Vec<&str> = MODELS.iter().filter(|m| !(m.presets)().is_empty()).map(|m| m.name).collect();
        anyhow::bail!("--preset: the {} model has none (models with presets: {})", info.name, with.join(", "));
    }
    // the default preset is each list's first
    let name = a.preset.as_deref().or(presets.first().map(|p| p.0)).unwrap_or_default();
    let summary = presets.iter().find(|p| p.0 == name).map_or("", |p| p.1);
    let docs = info.params;
    match info.name {
        grid::NAME => {
            let params = grid::preset(name).context("--preset")?;
            let header = format!(
                "erode grid model parameters (Jako & Toth 2011 after Mei et al. 2007, with the options of the\n\
                 interactive simulator of McLeod, Chen & Hu and of bshishov's Unity project).\n\
                 Heights in metres, time in seconds. Preset `{name}`: {summary}.\n\
                 Use it with --params FILE, or directly with --preset {name}."
            );
            print!("{}", erode_io::params::to_commented_toml(&params, docs, &header));
        }
        droplet::NAME => {
            let params = droplet::preset(name).context("--preset")?;
            let header = format!(
                "erode droplet model parameters (Beyer 2015, in metres and seconds: the same values\n\
                 give the same change at any cell size). Each droplet is the rain of one cell.\n\
                 Preset `{name}`: {summary}.\n\
                 Use it with --params FILE, or directly with --preset {name}."
            );
            let mut table = erode_io::params::to_commented_toml(&params, docs, &header);
            // TOML has no -inf literal for "unset": say it instead
            table = table.replace("min_height = -inf", "# min_height = 0.0   (unset: the input's lowest height)");
            print!("{table}");
        }
        stream_power::NAME => {
            let params = stream_power::preset(name).context("--preset")?;
            let header = format!(
                "erode stream-power model parameters: dz/dt = U - K*A^m*S^n + D*laplacian(z), heights in\n\
                 metres, time in years (Braun & Willett 2013). Preset `{name}`: {summary}.\n\
                 Use it with --params FILE, or directly with --preset {name}."
            );
            let mut table = erode_io::params::to_commented_toml(&params, docs, &header);
            table = table.replace("sea_level = -inf", "# sea_level = 0.0   (unset: no sea)");
            print!("{table}");
        }
        sph::NAME => {
            let header = "erode SPH model parameters (Skorkovská et al.: fluid particles eroding a triangle mesh).\n\
                          Metres, seconds, kilograms. Each value below is the default; 0 = derived.";
            print!("{}", erode_io::params::to_commented_toml(&sph::Params::default(), docs, header));
        }
        other => {
            let Some(maker) = info.make else { anyhow::bail!("the {other} model has no parameter file yet") };
            let params = (maker.preset)(name).context("--preset")?;
            let header = format!(
                "erode {other} model parameters: {}.\nPreset `{name}`: {summary}.\n\
                 Use it with --params FILE, or directly with --preset {name}.",
                info.summary
            );
            print!("{}", erode_io::params::to_commented_toml(&params, docs, &header));
        }
    }
    Ok(())
}
