//! Recipes (`erode run`): a chain of erode's own commands in one TOML file, carried out in one
//! folder: generate or an input, then models and `amplify`, then masks, a mesh, an engine's
//! heightmap.
//!
//! A step is one command with its options as TOML keys, the names of `erode COMMAND --help`
//! (`max_error` or `max-error` for `--max-error`): a number or string is the option's value, a
//! list repeats the option, `true` gives a flag, and a table gives `--KEY name=value` for each
//! entry (`set = { rain_rate = 2e-4 }` for `--set rain_rate=2e-4`). A file is named from the
//! recipe's folder, or from the run's when an earlier step made it (`uplift_map =
//! "01-generate/height.tif"`). Which height a step reads and
//! where it writes are the recipe's: each step reads the height the last one made and writes
//! into its own folder. The options, their checks and their help stay the commands' own; a
//! recipe adds none ([`KINDS`] says only what each command reads and writes).

mod plan;
mod variants;

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

pub use plan::{Plan, Planned, plan};
pub use variants::{Variant, variants};

/// What a step reads of the chain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reads {
    /// Nothing: it makes a terrain.
    Nothing,
    /// The height so far when there is one (as its input), else nothing.
    HeightIfAny,
    /// The height so far.
    Height,
}

/// What a step writes into its folder.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Writes {
    /// One file (its `-o`), of this name unless the step names its `output`.
    File(&'static str),
    /// The folder itself (its `-o`).
    Folder,
    /// What it prints, into a file of this name.
    Printed(&'static str),
}

/// A command a recipe's step may be.
#[derive(Debug)]
pub struct Kind {
    /// The command (its first word; `simulate` takes the model as its second).
    pub command: &'static str,
    /// What it reads of the chain.
    pub reads: Reads,
    /// What it writes.
    pub writes: Writes,
    /// Whether what it writes is the height the next step reads.
    pub makes_height: bool,
    /// Options the recipe gives it itself.
    pub fixed: &'static [&'static str],
}

/// Every command a step may be, in the order of `erode --help`.
pub const KINDS: &[Kind] = &[
    Kind {
        command: "generate",
        reads: Reads::Nothing,
        writes: Writes::File("height.tif"),
        makes_height: true,
        fixed: &[],
    },
    Kind {
        command: "resample",
        reads: Reads::Height,
        writes: Writes::File("height.tif"),
        makes_height: true,
        fixed: &[],
    },
    Kind { command: "crop", reads: Reads::Height, writes: Writes::File("height.tif"), makes_height: true, fixed: &[] },
    Kind {
        command: "rescale",
        reads: Reads::Height,
        writes: Writes::File("height.tif"),
        makes_height: true,
        fixed: &[],
    },
    Kind { command: "simulate", reads: Reads::Height, writes: Writes::Folder, makes_height: true, fixed: &[] },
    Kind { command: "amplify", reads: Reads::HeightIfAny, writes: Writes::Folder, makes_height: true, fixed: &[] },
    Kind { command: "masks", reads: Reads::Height, writes: Writes::Folder, makes_height: false, fixed: &[] },
    Kind {
        command: "mesh",
        reads: Reads::Height,
        writes: Writes::File("terrain.glb"),
        makes_height: false,
        fixed: &[],
    },
    Kind {
        command: "convert",
        reads: Reads::Height,
        writes: Writes::File("height.tif"),
        makes_height: false,
        fixed: &[],
    },
    Kind {
        command: "render",
        reads: Reads::Height,
        writes: Writes::File("render.png"),
        makes_height: false,
        fixed: &[],
    },
    Kind {
        command: "analyze",
        reads: Reads::Height,
        writes: Writes::Printed("analysis.json"),
        makes_height: false,
        fixed: &["--json"],
    },
];

/// The first line of the `recipe.toml` a run writes into its folder: what marks a folder as a
/// recipe run's, which a run may write into again.
pub const AS_RUN: &str = "# the recipe as erode run ran it (erode run RECIPE -o FOLDER)";

/// Options the run gives every step itself (`erode run`'s own flags, or the chain's).
pub const RUN_OWNS: &[&str] = &["output", "threads", "quiet", "resume", "force", "help", "version"];

/// A recipe as read from its file.
#[derive(Clone, Debug)]
pub struct Recipe {
    /// The file.
    pub path: PathBuf,
    /// What it makes, in a line (its `description`).
    pub description: Option<String>,
    /// The heightmap the first step reads (its `input`, from the recipe's folder).
    pub input: Option<PathBuf>,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// One step of a recipe.
#[derive(Clone, Debug)]
pub struct Step {
    /// Its number, from 1.
    pub number: usize,
    /// The command's words: `["simulate", "grid"]`.
    pub words: Vec<String>,
    /// What the command reads and writes.
    pub kind: &'static Kind,
    /// Its options, keys with `_` (a model's parameters in the table `set`).
    pub options: toml::Table,
}

impl Step {
    /// `simulate grid`.
    pub fn name(&self) -> String {
        self.words.join(" ")
    }

    /// Where errors about it point: `FILE: step N (simulate grid)`.
    pub fn at(&self, recipe: &Path) -> String {
        format!("{}: step {} ({})", recipe.display(), self.number, self.name())
    }

    /// The model a `simulate` step runs.
    pub fn model(&self) -> Option<&str> {
        (self.kind.command == "simulate").then(|| self.words.get(1).map(String::as_str)).flatten()
    }

    /// The names of the model parameters it takes in `set`: its model's, or stream power's for
    /// `amplify`.
    pub fn params(&self) -> Vec<&'static str> {
        let model = match self.kind.command {
            "amplify" => Some(erode::models::stream_power::NAME),
            _ => self.model(),
        };
        model.and_then(erode::models::info::find).map_or(Vec::new(), |m| m.params.iter().map(|p| p.name).collect())
    }
}

impl Recipe {
    /// Reads the recipe at `path`.
    pub fn read(path: &Path) -> anyhow::Result<Self> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("{}: cannot read the recipe", path.display()))?;
        Self::parse(&text, path)
    }

    /// The recipe in `text`, read from `path` (for messages and the folder of its files).
    pub fn parse(text: &str, path: &Path) -> anyhow::Result<Self> {
        let at = path.display();
        let mut table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            anyhow::anyhow!(
                "{at}: {}",
                e.to_string().lines().filter(|l| !l.trim().is_empty()).collect::<Vec<_>>().join(" ")
            )
        })?;
        let description = match table.remove("description") {
            Some(toml::Value::String(s)) => Some(s),
            Some(_) => bail!("{at}: `description` is a string"),
            None => None,
        };
        let input = match table.remove("input") {
            Some(toml::Value::String(s)) => Some(beside(path, Path::new(&s))),
            Some(_) => bail!("{at}: `input` is a heightmap's file name"),
            None => None,
        };
        let steps = match table.remove("step") {
            Some(toml::Value::Array(steps)) => steps,
            Some(_) => bail!("{at}: `step` is a list of tables: write each step as [[step]]"),
            None => bail!("{at}: no steps: write each as [[step]] with its command (`command = \"generate\"`)"),
        };
        if let Some(key) = table.keys().next() {
            bail!("{at}: unknown key `{key}` (a recipe has description, input and its [[step]]s)");
        }
        let steps = steps
            .into_iter()
            .enumerate()
            .map(|(i, s)| match s {
                toml::Value::Table(t) => step(i + 1, t, path),
                _ => bail!("{at}: step {}: a table of options", i + 1),
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        if steps.is_empty() {
            bail!("{at}: no steps");
        }
        Ok(Self { path: path.to_path_buf(), description, input, steps })
    }

    /// The recipe as TOML, as it is run (overrides applied, files named in full): a variant's
    /// `recipe.toml`, which `erode run` runs again as it was.
    pub fn to_toml(&self) -> String {
        let mut out = format!("{AS_RUN}\n");
        if let Some(d) = &self.description {
            out += &format!("description = {}\n", toml::Value::String(d.clone()));
        }
        if let Some(i) = &self.input {
            out += &format!("input = {}\n", toml::Value::String(i.display().to_string()));
        }
        for s in &self.steps {
            out += &format!("\n[[step]]\ncommand = {}\n", toml::Value::String(s.name()));
            for (key, value) in &s.options {
                // a value's Display is inline: a table as `{ k = v }`, in this step
                out += &format!("{key} = {value}\n");
            }
        }
        out
    }
}

/// `file` as named in a file in the folder of `recipe`: from that folder when relative.
pub fn beside(recipe: &Path, file: &Path) -> PathBuf {
    if file.is_absolute() {
        return file.to_path_buf();
    }
    let folder = recipe.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let joined = folder.join(file);
    std::path::absolute(&joined).unwrap_or(joined)
}

/// Step `number` from its table.
fn step(number: usize, mut t: toml::Table, recipe: &Path) -> anyhow::Result<Step> {
    let at = format!("{}: step {number}", recipe.display());
    let words: Vec<String> = match t.remove("command") {
        Some(toml::Value::String(c)) => c.split_whitespace().map(str::to_string).collect(),
        Some(_) => bail!("{at}: `command` is a string, e.g. \"simulate grid\""),
        None => bail!("{at}: no `command` (one of {})", commands()),
    };
    let Some(first) = words.first() else { bail!("{at}: `command` is empty (one of {})", commands()) };
    let Some(kind) = KINDS.iter().find(|k| k.command == first) else {
        bail!("{at}: `{first}` cannot be a step (a step is one of {})", commands());
    };
    if kind.command == "simulate" {
        let names: Vec<&str> =
            erode::models::MODELS.iter().map(|m| m.name).filter(|&n| n != erode::models::sph::NAME).collect();
        match words.get(1).map(String::as_str) {
            Some(erode::models::sph::NAME) => {
                bail!("{at}: sph erodes a triangle mesh, not a heightmap; a recipe's models are {}", names.join(", "))
            }
            Some(m) if names.contains(&m) => {}
            Some(m) => bail!("{at}: no model `{m}` (the models are {})", names.join(", ")),
            None => bail!("{at}: simulate which model? (`simulate grid`; the models are {})", names.join(", ")),
        }
    }
    if words.len() > 1 + usize::from(kind.command == "simulate") {
        bail!("{at}: `{}`: give the options as keys, not in the command", words.join(" "));
    }
    let mut options = toml::Table::new();
    for (key, value) in t {
        let key = key.replace('-', "_");
        if RUN_OWNS.contains(&key.as_str()) && !(key == "output" && matches!(kind.writes, Writes::File(_))) {
            bail!("{at}: `{key}` is the run's to set (erode run --help)");
        }
        let value = if key == "set" { sets(value).with_context(|| at.clone())? } else { value };
        options.insert(key, value);
    }
    if let Some(toml::Value::String(name)) = options.get("output")
        && (name.contains(['/', '\\']) || name.is_empty() || name.starts_with('.'))
    {
        bail!("{at}: output `{name}`: a file name in the step's folder");
    }
    Ok(Step { number, words, kind, options })
}

/// A step's `set`: a table of parameters, or a list of `KEY=VALUE` strings made one.
fn sets(value: toml::Value) -> anyhow::Result<toml::Value> {
    match value {
        toml::Value::Table(t) => Ok(toml::Value::Table(t)),
        toml::Value::Array(list) => {
            let mut t = toml::Table::new();
            for item in list {
                let toml::Value::String(s) = item else { bail!("`set`: a table of parameters, or KEY=VALUE strings") };
                let Some((k, v)) = s.split_once('=') else { bail!("`set`: `{s}` is not KEY=VALUE") };
                t.insert(k.trim().to_string(), value_of(v.trim()));
            }
            Ok(toml::Value::Table(t))
        }
        _ => bail!("`set`: a table of parameters, e.g. set = {{ rain_rate = 2e-4 }}"),
    }
}

/// `text` as a TOML value: a number or boolean when it reads as one, else a string.
pub fn value_of(text: &str) -> toml::Value {
    format!("v = {text}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .filter(|v| matches!(v, toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_)))
        .unwrap_or_else(|| toml::Value::String(text.to_string()))
}

/// erode's command line, built once: every step of every variant is looked up and checked in it.
pub fn cli() -> &'static clap::Command {
    static CLI: std::sync::LazyLock<clap::Command> = std::sync::LazyLock::new(crate::cli_command);
    &CLI
}

/// The command of `words` (`simulate grid`) in erode's command line `cli`.
pub fn command_of<'a>(cli: &'a clap::Command, words: &[String]) -> anyhow::Result<&'a clap::Command> {
    let mut command = cli;
    for w in words {
        command = match command.find_subcommand(w) {
            Some(c) => c,
            None => bail!("no command `{}`", words.join(" ")),
        };
    }
    Ok(command)
}

/// The option `key` of `command` (`max_error` or `max-error` for `--max-error`).
pub fn option<'a>(command: &'a clap::Command, key: &str) -> Option<&'a clap::Arg> {
    let long = key.replace('_', "-");
    command.get_arguments().find(|a| a.get_long() == Some(long.as_str()))
}

/// Whether an option's values are files.
pub fn names_a_file(arg: &clap::Arg) -> bool {
    arg.get_value_parser().type_id() == std::any::TypeId::of::<PathBuf>()
}

/// The commands a step may be, for messages.
fn commands() -> String {
    KINDS.iter().map(|k| k.command).collect::<Vec<_>>().join(", ")
}
