//! A recipe as erode command lines: the height each step reads, the folder it writes, and the
//! fingerprint that tells a step done before from one to do again.

use std::path::{Path, PathBuf};

use anyhow::bail;

use super::{Reads, Recipe, Step, Writes};

/// A recipe's steps as commands, in the folder of one run of it.
#[derive(Debug)]
pub struct Plan {
    /// The steps, in order.
    pub steps: Vec<Planned>,
    /// The height the recipe ends with: the one its last step that makes one writes, from the
    /// run's folder (else the recipe's input).
    pub height: Option<String>,
}

/// One step as a command.
#[derive(Debug)]
pub struct Planned {
    /// Its number, from 1.
    pub number: usize,
    /// Its command: `simulate grid`.
    pub name: String,
    /// Its folder in the run's folder: `02-simulate-grid`.
    pub folder: String,
    /// The command line after `erode`, files of the chain named from the run's folder and the
    /// recipe's own files in full.
    pub args: Vec<String>,
    /// The file its printed output goes to, from the run's folder (`analyze`'s figures).
    pub printed: Option<String>,
    /// What it writes that the next steps read or the user wants: its files, from the run's
    /// folder. A step done before is kept only while these are there.
    pub writes: Vec<String>,
    /// Its command line, the files it reads from outside the run and the fingerprint of the
    /// step before it, hashed: a step done before with another is done again.
    pub fingerprint: String,
    /// Whether it can go on from a checkpoint (`simulate`'s `--resume`).
    pub resumable: bool,
    /// Whether it takes `--max-memory` (variants running at once share the memory).
    pub takes_max_memory: bool,
}

/// The plan of `recipe`, every command line checked by the command's own options: a recipe that
/// would fail on an option fails here, before anything runs.
pub fn plan(recipe: &Recipe) -> anyhow::Result<Plan> {
    let cli = super::cli();
    let mut steps = Vec::new();
    // the height so far, and whether it is the recipe's input (read from outside the run)
    let mut height: Option<String> = recipe.input.as_ref().map(|p| p.display().to_string());
    let mut height_is_input = recipe.input.is_some();
    let mut run_maps: Option<String> = None;
    let mut fingerprint = String::new();
    for step in &recipe.steps {
        let at = step.at(&recipe.path);
        let command = super::command_of(cli, &step.words)?;
        let folder = format!("{:02}-{}", step.number, step.words.join("-"));
        let mut args = step.words.clone();
        // what it reads from outside the run: the recipe's input, files its options name
        let mut outside: Vec<PathBuf> = Vec::new();
        match step.kind.reads {
            Reads::Nothing if height_is_input => {
                bail!("{at}: makes a terrain, and the recipe's input is read by no step before it")
            }
            Reads::Nothing => {}
            Reads::HeightIfAny | Reads::Height => match &height {
                Some(h) => {
                    args.push(h.clone());
                    if height_is_input && let Some(i) = &recipe.input {
                        outside.push(i.clone());
                    }
                }
                None if step.kind.reads == Reads::Height => bail!(
                    "{at}: reads a heightmap and no step before it makes one: give the recipe an `input`, \
                     run it with --input FILE, or begin with generate or amplify"
                ),
                None => {}
            },
        }
        if step.kind.command == "masks"
            && let Some(run) = &run_maps
        {
            args.push(run.clone());
        }
        let mut writes = Vec::new();
        let mut printed = None;
        let made = match step.kind.writes {
            Writes::File(default) => {
                let name = file_name(step, default)?;
                let file = format!("{folder}/{name}");
                args.extend(["-o".into(), file.clone()]);
                // a mesh in chunks writes NAME_ROW_COLUMN files and lists them in NAME.chunks.json
                let chunked = step.kind.command == "mesh" && step.options.contains_key("chunk");
                let stem = Path::new(&name).file_stem().map_or(name.clone(), |s| s.to_string_lossy().to_string());
                writes.push(if chunked { format!("{folder}/{stem}.chunks.json") } else { file.clone() });
                Some(file)
            }
            Writes::Folder => {
                args.extend(["-o".into(), folder.clone()]);
                let file = format!("{folder}/height.{}", first_format(step));
                writes.push(if step.kind.makes_height { file.clone() } else { folder.clone() });
                Some(file)
            }
            Writes::Printed(name) => {
                let file = format!("{folder}/{name}");
                writes.push(file.clone());
                printed = Some(file);
                None
            }
        };
        args.extend(step.kind.fixed.iter().map(|s| s.to_string()));
        for (key, value) in step.options.iter().filter(|(k, _)| *k != "output") {
            let long = key.replace('_', "-");
            let Some(arg) = super::option(command, key) else {
                bail!("{at}: no option `{key}` (`erode {} --help` lists them)", step.name());
            };
            let is_path = super::names_a_file(arg);
            let takes_value = arg.get_action().takes_values();
            for text in values(value).map_err(|e| anyhow::anyhow!("{at}: `{key}`: {e}"))? {
                match (takes_value, text.as_str()) {
                    (false, "true") => args.push(format!("--{long}")),
                    (false, "false") => {}
                    (false, _) => bail!("{at}: `{key}` is a flag: true or false"),
                    // a file an earlier step made, named from the run's folder: `01-generate/height.tif`
                    (true, _)
                        if is_path && steps.iter().any(|p: &Planned| text.starts_with(&format!("{}/", p.folder))) =>
                    {
                        args.extend([format!("--{long}"), text]);
                    }
                    (true, _) if is_path => {
                        let file = super::beside(&recipe.path, Path::new(&text));
                        outside.push(file.clone());
                        args.extend([format!("--{long}"), file.display().to_string()]);
                    }
                    (true, _) => args.extend([format!("--{long}"), text]),
                }
            }
        }
        let mut argv = vec!["erode".to_string()];
        argv.extend(args.iter().cloned());
        if let Err(e) = cli.clone().try_get_matches_from(&argv) {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("invalid options");
            bail!("{at}: {}", first.strip_prefix("error: ").unwrap_or(first));
        }
        fingerprint = hash(&fingerprint, &args, &outside);
        if step.kind.makes_height {
            height = made;
            height_is_input = false;
            run_maps = (step.kind.command == "simulate" && gives_run_maps(step)).then(|| folder.clone());
        }
        steps.push(Planned {
            number: step.number,
            name: step.name(),
            folder,
            args,
            printed,
            writes,
            fingerprint: fingerprint.clone(),
            resumable: step.kind.command == "simulate",
            takes_max_memory: super::option(command, "max_memory").is_some(),
        });
    }
    Ok(Plan { steps, height })
}

/// The file a one-file step writes: its `output`, an engine's heightmap, or the default.
fn file_name(step: &Step, default: &str) -> anyhow::Result<String> {
    if let Some(v) = step.options.get("output") {
        let toml::Value::String(name) = v else { bail!("`output` is a file name") };
        return Ok(name.clone());
    }
    if let Some(toml::Value::String(e)) = step.options.get("engine")
        && let Some(engine) = erode_io::engine::Engine::from_name(e)
        && let Some(format) = engine.formats().first()
    {
        return Ok(format!("height.{}", format.extension()));
    }
    Ok(default.to_string())
}

/// The first format a run writes its maps in (`format`, default tif).
fn first_format(step: &Step) -> String {
    let first = match step.options.get("format") {
        Some(toml::Value::String(s)) => s.split(',').next().map(str::trim).map(str::to_string),
        Some(toml::Value::Array(a)) => a.first().and_then(|v| v.as_str()).map(str::to_string),
        _ => None,
    };
    match first.as_deref() {
        Some("png16") => "png".into(),
        Some("tiff") => "tif".into(),
        Some("raw") => "r16".into(),
        Some(f) if step.kind.command == "simulate" => f.to_ascii_lowercase(),
        _ => "tif".into(),
    }
}

/// Whether a `simulate` step writes a map the masks read (erosion, deposition, sediment_depth).
fn gives_run_maps(step: &Step) -> bool {
    let wanted =
        |name: &str| name == "all" || erode::texture::MASKS.iter().filter_map(|m| m.run_map).any(|m| m == name);
    match step.options.get("outputs") {
        Some(toml::Value::String(s)) => s.split(',').map(str::trim).any(wanted),
        Some(toml::Value::Array(a)) => a.iter().filter_map(|v| v.as_str()).flat_map(|s| s.split(',')).any(wanted),
        _ => false,
    }
}

/// An option's values as text: one, one a list item, or `name=value` a table entry.
fn values(value: &toml::Value) -> anyhow::Result<Vec<String>> {
    Ok(match value {
        toml::Value::Array(items) => items.iter().map(scalar).collect::<anyhow::Result<_>>()?,
        toml::Value::Table(t) => {
            t.iter().map(|(k, v)| Ok(format!("{k}={}", scalar(v)?))).collect::<anyhow::Result<_>>()?
        }
        v => vec![scalar(v)?],
    })
}

/// A scalar as the command line writes it.
fn scalar(value: &toml::Value) -> anyhow::Result<String> {
    Ok(match value {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        // Rust's shortest text that reads back as the same number
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        other => bail!("`{other}` is not a number, string or boolean"),
    })
}

/// The fingerprint of a step: FNV-1a over erode's version, the fingerprint before it, its
/// command line and the bytes of every file it reads from outside the run.
fn hash(before: &str, args: &[String], outside: &[PathBuf]) -> String {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    h.bytes(env!("CARGO_PKG_VERSION").as_bytes());
    h.bytes(before.as_bytes());
    for a in args {
        h.bytes(a.as_bytes());
        h.bytes(&[0]);
    }
    for file in outside {
        // a file that cannot be read is the command's to refuse; its absence is hashed
        match std::fs::File::open(file) {
            Ok(f) => {
                use std::io::Read;
                let mut reader = std::io::BufReader::with_capacity(1 << 20, f);
                let mut buf = vec![0u8; 1 << 20];
                while let Ok(n) = reader.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    h.bytes(&buf[..n]);
                }
            }
            Err(_) => h.bytes(b"\xffmissing"),
        }
    }
    format!("{:016x}", h.0)
}

/// FNV-1a, 64 bits.
struct Fnv(u64);

impl Fnv {
    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}
