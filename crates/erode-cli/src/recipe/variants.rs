//! A recipe's variants (`erode run --seeds`, `--set KEY=V1,V2`): one recipe for each seed and
//! each combination of the values listed, named by what varies.

use anyhow::{Context, bail};

use super::{RUN_OWNS, Recipe, Step, value_of};

/// The most variants one run makes.
pub const MOST: usize = 1000;

/// One variant of a recipe.
#[derive(Clone, Debug)]
pub struct Variant {
    /// Its folder's name, from what varies: `seed-3_rain_rate-2e-4` (empty for a recipe's one run).
    pub label: String,
    /// What varies and its value here, as given: `[("seed", "3"), ("rain_rate", "2e-4")]`.
    pub values: Vec<(String, String)>,
    /// The recipe with this variant's values in it.
    pub recipe: Recipe,
}

/// One thing that varies: its name and values.
struct Dimension {
    name: String,
    values: Vec<String>,
    /// Whether it names the variants (it has more than one value, or is the seed).
    varies: bool,
}

/// The variants of `recipe` for `seeds` (`1..20`, `3,7,9`, or both) and `sets`
/// (`[STEP.]KEY=VALUE[,VALUE...]`): every combination, the last listed varying fastest. One
/// variant, unlabelled, when nothing varies.
pub fn variants(recipe: &Recipe, seeds: Option<&str>, sets: &[String]) -> anyhow::Result<Vec<Variant>> {
    let mut dims = Vec::new();
    if let Some(text) = seeds {
        let values = parse_seeds(text)?;
        if !recipe.steps.iter().any(takes_seed) {
            bail!("--seeds: no step of {} takes a seed", recipe.path.display());
        }
        dims.push(Dimension { name: "seed".into(), values, varies: true });
    }
    for s in sets {
        let Some((key, list)) = s.split_once('=') else { bail!("--set {s}: expected [STEP.]KEY=VALUE[,VALUE...]") };
        let values: Vec<String> = list.split(',').map(|v| v.trim().to_string()).collect();
        if values.iter().any(String::is_empty) {
            bail!("--set {s}: an empty value");
        }
        // checked now, against the recipe, with the first value
        apply(&mut recipe.clone(), key.trim(), &values[0]).with_context(|| format!("--set {s}"))?;
        dims.push(Dimension { name: key.trim().to_string(), varies: values.len() > 1, values });
    }
    let count = dims.iter().try_fold(1usize, |n, d| n.checked_mul(d.values.len())).unwrap_or(usize::MAX);
    if count > MOST {
        bail!("--seeds and --set make {count} variants; at most {MOST} at once");
    }
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let mut recipe = recipe.clone();
        let mut values = Vec::new();
        let mut rest = i;
        let mut picks = vec![0; dims.len()];
        for (k, d) in dims.iter().enumerate().rev() {
            picks[k] = rest % d.values.len();
            rest /= d.values.len();
        }
        for (d, &p) in dims.iter().zip(&picks) {
            let v = &d.values[p];
            if d.name == "seed" {
                set_seed(&mut recipe, v)?;
            } else {
                apply(&mut recipe, &d.name, v)?;
            }
            if d.varies {
                values.push((d.name.clone(), v.clone()));
            }
        }
        let label = if count > 1 {
            values.iter().map(|(k, v)| format!("{k}-{}", file_safe(v))).collect::<Vec<_>>().join("_")
        } else {
            String::new()
        };
        out.push(Variant { label, values, recipe });
    }
    Ok(out)
}

/// `1..20` (1 to 20), `3,7,9`, or both: the seeds in the order given.
fn parse_seeds(text: &str) -> anyhow::Result<Vec<String>> {
    let mut seeds = Vec::new();
    for part in text.split(',').map(str::trim) {
        let number = |s: &str| {
            s.trim().parse::<u64>().map_err(|_| anyhow::anyhow!("--seeds {text}: `{s}` is not a seed (0 or more)"))
        };
        match part.split_once("..") {
            Some((a, b)) => {
                let (a, b) = (number(a)?, number(b.trim_start_matches('='))?);
                if b < a {
                    bail!("--seeds {text}: {a}..{b} runs backwards");
                }
                if b - a >= MOST as u64 {
                    bail!("--seeds {text}: more than {MOST} seeds");
                }
                seeds.extend((a..=b).map(|s| s.to_string()));
            }
            None => seeds.push(number(part)?.to_string()),
        }
    }
    Ok(seeds)
}

/// Whether `step`'s command takes a seed (`--seed`, not hidden).
fn takes_seed(step: &Step) -> bool {
    let cli = super::cli();
    super::command_of(cli, &step.words).is_ok_and(|c| super::option(c, "seed").is_some_and(|a| !a.is_hide_set()))
}

/// The seed of every step that takes one set to `value`.
fn set_seed(recipe: &mut Recipe, value: &str) -> anyhow::Result<()> {
    for step in recipe.steps.iter_mut().filter(|s| takes_seed(s)) {
        step.options.insert("seed".into(), value_of(value));
    }
    Ok(())
}

/// `[STEP.]KEY` set to `value` in `recipe`: an option of the steps that have it, else a model
/// parameter of those whose model has it. STEP is a step's number or its command's last word
/// (`grid`, `amplify`).
fn apply(recipe: &mut Recipe, key: &str, value: &str) -> anyhow::Result<()> {
    let (only, key) = match key.split_once('.') {
        Some((s, k)) => (Some(s), k),
        None => (None, key),
    };
    let key = key.replace('-', "_");
    if RUN_OWNS.contains(&key.as_str()) {
        bail!("`{key}` is the run's to set (erode run --help)");
    }
    let cli = super::cli();
    let chosen = |s: &Step| match only {
        None => true,
        Some(o) => o.parse::<usize>().map_or_else(|_| s.words.last().is_some_and(|w| w == o), |n| n == s.number),
    };
    if let Some(o) = only
        && !recipe.steps.iter().any(chosen)
    {
        bail!("no step `{o}` in {} (a step's number, or its command: generate, grid, masks…)", recipe.path.display());
    }
    let mut done = false;
    for step in recipe.steps.iter_mut().filter(|s| chosen(s)) {
        let command = super::command_of(cli, &step.words)?;
        if let Some(arg) = super::option(command, &key) {
            // a file named on the command line is from the current folder
            let v = if super::names_a_file(arg) {
                let p = std::path::Path::new(value);
                toml::Value::String(std::path::absolute(p).unwrap_or(p.to_path_buf()).display().to_string())
            } else {
                value_of(value)
            };
            step.options.insert(key.clone(), v);
            done = true;
        } else if step.params().contains(&key.as_str()) {
            let set = step.options.entry("set").or_insert_with(|| toml::Value::Table(toml::Table::new()));
            if let toml::Value::Table(t) = set {
                t.insert(key.clone(), value_of(value));
                done = true;
            }
        }
    }
    if !done {
        match only {
            Some(o) => bail!("step `{o}` takes no option or model parameter `{key}`"),
            None => bail!("no step of {} takes an option or model parameter `{key}`", recipe.path.display()),
        }
    }
    Ok(())
}

/// `text` fit for a folder's name: path separators and spaces made `-`.
fn file_safe(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || ".+-_".contains(c) { c } else { '-' }).collect()
}
