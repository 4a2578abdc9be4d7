//! `erode simulate NAME` for a model made from the models' list (see [`erode::models::make`]):
//! its flags, help and checks come from its `INFO` and `Maker`, with no code of its own here.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{ArgMatches, Command, FromArgMatches};
use erode::contract::Model;
use erode::models::ModelInfo;
use erode::models::make::Inputs;
use erode_io::run::{Job, MadeFront, Until};

use super::heightmap::{Input, MapArgs, MapFiles, read_map};

/// The flags every model made from the list takes.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    maps: MapArgs,
    /// Start from a named parameter set (see `erode params MODEL --preset NAME`); --params and
    /// --set apply on top.
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,
    /// Units in total (named by the model's unit).
    #[arg(long, default_value_t = 100)]
    count: u64,
    #[command(flatten)]
    pub(super) run: super::RunArgs,
}

/// The subcommand of `info`: the flags above, the count named by its unit and one `--NAME-map`
/// per input map its maker reads.
pub fn command(info: &'static ModelInfo) -> Command {
    let cmd = <Args as clap::Args>::augment_args(Command::new(info.name)).about(info.summary);
    let Some(maker) = info.make else { return cmd };
    let count = maker.unit.plural();
    // a model made from the list runs on the CPU, and takes a seed only if it has one
    let seeded = (maker.preset)((info.presets)().first().map_or("", |p| p.0)).is_ok_and(|t| t.contains_key("seed"));
    let mut examples = format!(
        "Examples:\n  erode params {0} > {0}.toml\n  erode simulate {0} dem.tif -o out --{count} 100\n  \
         erode simulate {0} dem.tif -o out --params {0}.toml --set KEY=VALUE",
        info.name
    );
    if let Some(p) = (info.presets)().get(1) {
        examples += &format!("\n  erode simulate {} dem.tif -o out --preset {}", info.name, p.0);
    }
    for m in maker.maps {
        examples += &format!(
            "\n  erode simulate {} dem.tif -o out --{}-map {}.png",
            info.name,
            m.name.replace('_', "-"),
            m.name
        );
    }
    let cmd = cmd
        .mut_arg("count", |a| {
            a.long(count).help(format!("{count} in total (with --resume, including those already done)"))
        })
        .mut_arg("backend", |a| a.hide(true))
        .mut_arg("seed", |a| a.hide(!seeded))
        .after_help(format!(
            "Outputs in OUTDIR: the maps named in --outputs (the height always), preview.png and report.json; \
             checkpoints in OUTDIR/checkpoints. See `erode params {}` for the parameters and presets.\n\n{examples}",
            info.name
        ));
    maker.maps.iter().fold(cmd, |cmd, m| {
        cmd.arg(
            clap::Arg::new(m.name)
                .long(leak(format!("{}-map", m.name.replace('_', "-"))))
                .value_name("MAP")
                .value_parser(clap::value_parser!(PathBuf))
                .help(format!("{} map: {} (integer formats read as 0..1)", m.name, m.doc)),
        )
    })
}

/// A flag's name, made once when the command line is built.
fn leak(name: String) -> &'static str {
    Box::leak(name.into_boxed_str())
}

/// A run of a model made from the list, as the command line gave it.
pub struct Run {
    info: &'static ModelInfo,
    pub(super) args: Args,
    /// The input maps given: (name, file).
    map_files: Vec<(&'static str, PathBuf)>,
}

impl Run {
    /// The run of the model `info` from its subcommand's `matches`.
    pub fn from_matches(info: &'static ModelInfo, matches: &ArgMatches) -> Result<Self, clap::Error> {
        let args = Args::from_arg_matches(matches)?;
        let map_files = info
            .make
            .map_or(&[][..], |m| m.maps)
            .iter()
            .filter_map(|m| matches.get_one::<PathBuf>(m.name).map(|p| (m.name, p.clone())))
            .collect();
        Ok(Self { info, args, map_files })
    }
}

/// Validates `r` into a job: parameters, input, maps and checkpoint.
pub fn job(r: Run) -> anyhow::Result<Job<Box<dyn Model>, MadeFront>> {
    let Run { info, args: a, map_files } = r;
    let Some(maker) = info.make else { bail!("simulate {}: this model has no command yet", info.name) };
    let formats = crate::output::formats(&a.maps.format)?;
    let wanted = a.maps.wanted(info)?;
    if a.maps.backend == super::Backend::Gpu {
        bail!("--backend gpu: the {} model runs on the CPU only", info.name);
    }
    let presets = (info.presets)();
    let preset = a.preset.clone().or(presets.first().map(|p| p.0.to_string())).unwrap_or_default();
    let base = (maker.preset)(&preset).context("--preset")?;
    let mut params = erode_io::params::load_table(&base, a.run.params.as_deref(), &a.run.sets, maker.read)?;
    if let Some(seed) = a.maps.seed {
        if !params.contains_key("seed") {
            bail!("--seed {seed}: the {} model takes no seed", info.name);
        }
        params.insert("seed".into(), seed.into());
        (maker.read)(&params).map_err(|e| anyhow::anyhow!("--seed {seed}: {e}"))?;
    }
    (maker.check)(&params)?;
    let work = crate::memory::Work::Model { name: info.name, bytes_per_cell: maker.bytes_per_cell };
    let none = MapFiles { hardness: None, rain: None, sediment_depth: None };
    let input = Input::read(&a.maps, none, &a.run, info.name, work)?;
    let terrain = input.terrain();
    let mut grids = Vec::new();
    for (name, path) in &map_files {
        if let Some(g) = read_map(Some(path), name, terrain)? {
            grids.push((*name, g));
        }
    }
    let maps: Vec<(&'static str, &erode::Grid<f32>)> = grids.iter().map(|(n, g)| (*n, g)).collect();
    let inputs = Inputs { terrain, nodata: input.loaded.map.nodata_mask(), maps: &maps };
    let flags: Vec<(String, &Path)> =
        map_files.iter().map(|(n, p)| (format!("--{}-map", n.replace('_', "-")), p.as_path())).collect();
    let stamp = input.stamp(inputs.hash(), flags.iter().map(|(f, p)| (f.as_str(), Some(*p))));
    let checkpoint = a.run.checkpoint(info.name)?;
    let model = match &checkpoint {
        Some(c) => {
            let resume = |b: &[u8]| (maker.resume)(&params, b, a.run.input.max_cells);
            input.resume(c, resume, |m| m.shape().unwrap_or((0, 0, erode::CellSize::square(0.0))))?
        }
        None => (maker.start)(&params, &inputs).map_err(|e| name_the_file(e, &input, &map_files))?,
    };
    let front = MadeFront::new(input.loaded, formats, wanted, &preset, params);
    let files: Vec<Option<&Path>> =
        std::iter::once(a.maps.input_file.as_deref()).chain(map_files.iter().map(|(_, p)| Some(p.as_path()))).collect();
    a.run.job(model, front, Until::Count(a.count), checkpoint, stamp, &files)
}

/// The model's error, prefixed with the file it is about: the map's for a value in a map, else
/// the input's.
fn name_the_file(e: erode::SimError, input: &Input, map_files: &[(&'static str, PathBuf)]) -> anyhow::Error {
    let map = match &e {
        erode::SimError::MapValue { what, .. } => map_files.iter().find(|(n, _)| n == what),
        _ => None,
    };
    match map {
        Some((_, p)) => anyhow::anyhow!("{}: {e}", p.display()),
        None => anyhow::anyhow!("{}: {e}", input.name),
    }
}
