//! `erode run RECIPE -o OUT`: a recipe's steps, each erode's own command run in its folder of
//! OUT; with `--seeds` or lists in `--set`, one such folder a variant, run several at once, and
//! a contact sheet of their results.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{Context, bail};

use crate::recipe::{self, Plan, Recipe, Variant};

/// Run a recipe: a chain of erode's commands (generate or an input, models, amplify, masks,
/// mesh, an engine's heightmap) into one folder, each step kept when done; with --seeds or
/// --set lists, one run a variant and a contact sheet.
#[derive(clap::Args)]
#[command(after_help = "A recipe is a TOML file of [[step]]s, each an erode command with its options as keys
(docs/recipes.md; examples in recipes/):

  description = \"A range grown by stream power, refined, its valleys filled by rivers\"
  [[step]]
  command = \"amplify\"
  size = 1024
  [[step]]
  command = \"simulate grid\"
  iterations = 500
  set = { rain_rate = 2e-4 }
  [[step]]
  command = \"masks\"

Each step reads the height the one before made and writes into OUT/NN-COMMAND; OUT gets
preview.png and report.json. Run again, a step done before with the same command and inputs is
kept, and the run goes on from the first that is not (--fresh: all again). Every file but the
reports is the same bytes on any thread count and any --jobs.

Examples:
  erode run recipes/alpine.toml -o alpine
  erode run recipes/badlands.toml -o bad --input dem.tif          (a DEM instead of the generated terrain)
  erode run recipes/alpine.toml -o seeds --seeds 1..8              (8 variants and contact-sheet.png)
  erode run recipes/badlands.toml -o rain --set rain_rate=1e-4,2e-4,4e-4
  erode run recipes/alpine.toml -o a --set 1.size=512 --dry-run     (print the commands only)")]
pub struct Args {
    /// The recipe (TOML).
    recipe: PathBuf,
    /// Output folder: a folder each step, preview.png and report.json; with variants, such a
    /// folder each variant and contact-sheet.png.
    #[arg(short, long)]
    output: PathBuf,
    /// The heightmap the first step reads, instead of the recipe's `input`; a first step that
    /// makes the terrain (generate) is left out for it.
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
    /// A variant for each seed: `1..20` (1 to 20), `3,7,9`, or both; sets the seed of every step
    /// that takes one.
    #[arg(long, value_name = "SEEDS")]
    seeds: Option<String>,
    /// `[STEP.]KEY=VALUE[,VALUE...]`: a step's option or a model's parameter (repeatable); a
    /// list runs a variant each value. STEP (a step's number, or its command's last word:
    /// `grid`, `amplify`) picks one step; without it, every step that takes KEY.
    #[arg(long = "set", value_name = "KEY=VALUES")]
    sets: Vec<String>,
    /// Variants run at once (default: one per core, at most the variants); they share the
    /// threads and the memory.
    #[arg(long)]
    jobs: Option<usize>,
    /// Worker threads in all (default: one per core). Results are the same for any count.
    #[arg(long)]
    threads: Option<usize>,
    /// Run every step again, even one done before with the same command and inputs.
    #[arg(long)]
    fresh: bool,
    /// Print each step's command line and stop.
    #[arg(long)]
    dry_run: bool,
}

/// A run stopped by Ctrl-C (status 130): the steps done are kept.
#[derive(Debug)]
pub struct Stopped(pub String);

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::error::Error for Stopped {}

/// What a step left in its folder: `step.json`.
#[derive(serde::Serialize, serde::Deserialize, PartialEq)]
struct StepFile {
    step: usize,
    command: String,
    args: Vec<String>,
    fingerprint: String,
    done: bool,
}

/// How variants run.
struct Exec {
    exe: PathBuf,
    threads: usize,
    /// The memory each variant may use, when several run at once.
    max_memory: Option<u64>,
    fresh: bool,
    batch: bool,
    quiet: bool,
    /// Set when a variant failed or was stopped: the others stop after the step they are in.
    stop: AtomicBool,
}

/// How a variant's steps went, for its report.
struct Done {
    seconds: f64,
}

pub fn run(a: Args, quiet: bool) -> anyhow::Result<()> {
    let mut recipe = Recipe::read(&a.recipe)?;
    if let Some(i) = &a.input {
        recipe.input = Some(std::path::absolute(i).unwrap_or(i.clone()));
        // the input takes the place of a first step that makes the terrain (the other steps
        // keep their numbers and folders)
        if recipe.steps.first().is_some_and(|s| s.kind.reads == recipe::Reads::Nothing) {
            recipe.steps.remove(0);
        }
    }
    let variants = recipe::variants(&recipe, a.seeds.as_deref(), &a.sets)?;
    let plans: Vec<Plan> = variants.iter().map(|v| recipe::plan(&v.recipe)).collect::<anyhow::Result<_>>()?;
    let batch = variants.len() > 1;
    if a.dry_run {
        for (v, p) in variants.iter().zip(&plans) {
            if batch {
                println!("# {}", v.label);
            }
            for s in &p.steps {
                let redirect = s.printed.as_ref().map_or(String::new(), |f| format!(" > {f}"));
                println!("erode {}{redirect}", s.args.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" "));
            }
        }
        return Ok(());
    }
    if let Some(i) = &recipe.input
        && !i.is_file()
    {
        bail!("{}: no such heightmap (the recipe's input)", i.display());
    }
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let threads = match a.threads {
        Some(0) => bail!("--threads must be at least 1"),
        Some(n) if n > (4 * cores).max(16) => {
            bail!("--threads {n}: at most {} on this machine ({cores} cores)", (4 * cores).max(16))
        }
        Some(n) => n,
        None => cores,
    };
    let jobs = match a.jobs {
        Some(0) => bail!("--jobs must be at least 1"),
        Some(n) => n.min(variants.len()),
        None => cores.min(variants.len()),
    };
    check_folder(&a.output, &a.recipe)?;
    let _lock = erode_io::run::create_output_folder(&a.output)?;
    crate::interrupt::cooperate();
    erode_io::write_atomic(&a.output.join("recipe.toml"), recipe.to_toml().as_bytes())?;
    let exec = Exec {
        exe: std::env::current_exe().context("finding erode's own program")?,
        threads: (threads / jobs).max(1),
        max_memory: (jobs > 1).then(crate::memory::available).flatten().map(|m| m / jobs as u64),
        fresh: a.fresh,
        batch,
        quiet,
        stop: AtomicBool::new(false),
    };
    let t0 = Instant::now();
    let next = AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<anyhow::Result<Done>>>> =
        variants.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= variants.len() || exec.stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let dir = if batch { a.output.join(&variants[i].label) } else { a.output.clone() };
                    let outcome = run_variant(&variants[i], &plans[i], &dir, &exec);
                    if outcome.is_err() {
                        exec.stop.store(true, Ordering::SeqCst);
                    }
                    if let Ok(mut slot) = results[i].lock() {
                        *slot = Some(outcome);
                    }
                }
            });
        }
    });
    let mut done = Vec::new();
    for (v, r) in variants.iter().zip(results) {
        match r.into_inner().ok().flatten() {
            Some(Ok(d)) => done.push((v, d)),
            Some(Err(e)) => return Err(e),
            None => {}
        }
    }
    if done.len() < variants.len() {
        bail!("stopped before every variant ran: run the same command again to go on");
    }
    if batch {
        let tiles: Vec<(String, PathBuf)> = variants
            .iter()
            .zip(&plans)
            .filter_map(|(v, p)| p.height.as_ref().map(|h| (caption(v), a.output.join(&v.label).join(h))))
            .collect();
        if !tiles.is_empty() {
            let sheet = crate::sheet::contact_sheet(&tiles)?;
            erode_io::write_rgb_png(&a.output.join("contact-sheet.png"), &sheet)?;
        }
        let report = serde_json::json!({
            "erode": env!("CARGO_PKG_VERSION"),
            "recipe": a.recipe.display().to_string(),
            "description": recipe.description,
            "variants": done.iter().zip(&plans).map(|((v, d), p)| serde_json::json!({
                "folder": v.label,
                "values": values(v),
                "height": p.height.as_ref().map(|h| format!("{}/{h}", v.label)),
                "seconds": d.seconds,
            })).collect::<Vec<_>>(),
            "contact_sheet": "contact-sheet.png",
            "jobs": jobs,
            "threads": threads,
            "seconds": t0.elapsed().as_secs_f64(),
        });
        erode_io::write_atomic(&a.output.join("report.json"), serde_json::to_string_pretty(&report)?.as_bytes())?;
    }
    if !quiet {
        let what =
            if batch { format!("{} variants and contact-sheet.png", variants.len()) } else { "its steps".into() };
        eprintln!(
            "erode: ran {} into {} ({what}) in {:.1} s",
            a.recipe.display(),
            a.output.display(),
            t0.elapsed().as_secs_f64()
        );
        if let (false, Some(h)) = (batch, &plans[0].height) {
            eprintln!("erode: the height: {}", a.output.join(h).display());
        }
    }
    Ok(())
}

/// Refuses an output folder that holds other files than a recipe run's, or the recipe itself.
fn check_folder(out: &Path, recipe: &Path) -> anyhow::Result<()> {
    if out.exists() && !out.is_dir() {
        bail!("{}: not a folder", out.display());
    }
    let same = |a: &Path, b: &Path| a.canonicalize().ok().zip(b.canonicalize().ok()).is_some_and(|(a, b)| a == b);
    if same(&out.join("recipe.toml"), recipe) {
        bail!("{}: the output folder holds the recipe itself: run it into another folder", out.display());
    }
    if out.is_dir() {
        let mut entries = std::fs::read_dir(out).with_context(|| out.display().to_string())?;
        let empty = entries.next().is_none();
        let ours = std::fs::read_to_string(out.join("recipe.toml")).is_ok_and(|t| t.starts_with(recipe::AS_RUN));
        if !empty && !ours {
            bail!("{}: holds files that are not a recipe run's: give a new or empty folder", out.display());
        }
    }
    Ok(())
}

/// One variant's steps in `dir`: each kept if done before with the same fingerprint, else run;
/// then its preview and report.
fn run_variant(v: &Variant, plan: &Plan, dir: &Path, exec: &Exec) -> anyhow::Result<Done> {
    let t0 = Instant::now();
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot make the folder", dir.display()))?;
    if exec.batch {
        erode_io::write_atomic(&dir.join("recipe.toml"), v.recipe.to_toml().as_bytes())?;
    }
    remove_stale_steps(dir, plan)?;
    let mut again = exec.fresh;
    let mut steps = Vec::new();
    let total = plan.steps.len();
    for s in &plan.steps {
        if exec.stop.load(Ordering::SeqCst) || crate::interrupt::requested() {
            return Err(Stopped(format!(
                "stopped before step {} ({}): run the same command again to go on",
                s.number, s.name
            ))
            .into());
        }
        let folder = dir.join(&s.folder);
        let file = folder.join("step.json");
        let before: Option<StepFile> = std::fs::read(&file).ok().and_then(|b| serde_json::from_slice(&b).ok());
        let same = before.as_ref().is_some_and(|b| b.fingerprint == s.fingerprint);
        let whole = s.writes.iter().all(|w| dir.join(w).exists());
        // in a batch, a line a variant (below), not a step
        let say = !exec.quiet && !exec.batch;
        if !again && same && before.as_ref().is_some_and(|b| b.done) && whole {
            if say {
                eprintln!(
                    "erode: step {}/{total} {}: kept (done before with the same command and inputs)",
                    s.number, s.name
                );
            }
            steps.push(serde_json::json!({ "step": s.number, "command": s.name, "folder": s.folder, "kept": true }));
            continue;
        }
        again = true;
        let resume = s.resumable && same && !exec.fresh && has_checkpoint(&folder);
        if !resume && folder.exists() {
            if before.is_none() {
                bail!("{}: not a step's folder (no step.json): move it away", folder.display());
            }
            std::fs::remove_dir_all(&folder)
                .with_context(|| format!("{}: cannot clear the step's folder", folder.display()))?;
        }
        std::fs::create_dir_all(&folder).with_context(|| format!("{}: cannot make the folder", folder.display()))?;
        let mut state = StepFile {
            step: s.number,
            command: s.name.clone(),
            args: s.args.clone(),
            fingerprint: s.fingerprint.clone(),
            done: false,
        };
        erode_io::write_atomic(&file, &serde_json::to_vec_pretty(&state)?)?;
        if say {
            let how = if resume { " (going on from its checkpoint)" } else { "" };
            eprintln!("erode: step {}/{total} {}{how}", s.number, s.name);
        }
        let t = Instant::now();
        run_step(s, dir, resume, exec).map_err(|e| {
            if e.is::<Stopped>() {
                e
            } else {
                e.context(format!("{}: step {} ({}) failed", v.recipe.path.display(), s.number, s.name))
            }
        })?;
        let seconds = t.elapsed().as_secs_f64();
        state.done = true;
        erode_io::write_atomic(&file, &serde_json::to_vec_pretty(&state)?)?;
        if say {
            eprintln!("erode: step {}/{total} {}: done in {seconds:.1} s", s.number, s.name);
        }
        steps.push(serde_json::json!({
            "step": s.number, "command": s.name, "folder": s.folder, "kept": false, "resumed": resume, "seconds": seconds,
        }));
    }
    if let Some(h) = &plan.height {
        let map = erode_io::read(&dir.join(h), &Default::default())?.map;
        let (small, _) = erode::preview::fit(&map, None, erode::preview::PREVIEW_MAX_SIDE)?;
        erode_io::write_rgb_png(
            &dir.join("preview.png"),
            &erode::preview::render(&small, None, None, &Default::default()),
        )?;
    }
    let seconds = t0.elapsed().as_secs_f64();
    if exec.batch && !exec.quiet {
        let kept = steps.iter().filter(|s| s["kept"] == true).count();
        let kept = if kept > 0 { format!(", {kept} of {total} steps kept") } else { String::new() };
        eprintln!("erode: {}: done in {seconds:.1} s{kept}", v.label);
    }
    let report = serde_json::json!({
        "erode": env!("CARGO_PKG_VERSION"),
        "recipe": v.recipe.path.display().to_string(),
        "description": v.recipe.description,
        "values": values(v),
        "steps": steps,
        "height": plan.height,
        "preview": plan.height.as_ref().map(|_| "preview.png"),
        "threads": exec.threads,
        "seconds": seconds,
    });
    erode_io::write_atomic(&dir.join("report.json"), serde_json::to_string_pretty(&report)?.as_bytes())?;
    Ok(Done { seconds })
}

/// Runs step `s` as its own erode process in `dir`: its printed output into its file (or
/// `log.txt`), and in a batch its messages too.
fn run_step(s: &recipe::Planned, dir: &Path, resume: bool, exec: &Exec) -> anyhow::Result<()> {
    let mut command = std::process::Command::new(&exec.exe);
    command.args(&s.args).current_dir(dir).env("RAYON_NUM_THREADS", exec.threads.to_string());
    if resume {
        command.arg("--resume");
    }
    if exec.batch || exec.quiet {
        command.arg("--quiet");
    }
    if let (Some(m), true) = (exec.max_memory, s.takes_max_memory)
        && !s.args.iter().any(|a| a == "--max-memory")
    {
        command.args(["--max-memory", &m.to_string()]);
    }
    let log_path = dir.join(&s.folder).join("log.txt");
    let out_path = s.printed.as_ref().map_or(log_path.clone(), |p| dir.join(p));
    let out = std::fs::File::create(&out_path).with_context(|| out_path.display().to_string())?;
    command.stdout(out);
    if exec.batch {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .with_context(|| log_path.display().to_string())?;
        command.stderr(log);
    }
    // the step is in a process group of its own, which a terminal's Ctrl-C does not reach: the
    // run passes it one signal (the step stops at its next batch, with a checkpoint), or a second
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().with_context(|| format!("starting {}", exec.exe.display()))?;
    crate::interrupt::adopt(child.id());
    let mut passed = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {}
            Err(e) => break Err(e),
        }
        if !passed && crate::interrupt::requested() {
            crate::interrupt::signal(child.id());
            passed = true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    crate::interrupt::release(child.id());
    let status = status.with_context(|| format!("waiting for {}", exec.exe.display()))?;
    // what it printed, shown as a command run by hand shows it
    if !exec.batch
        && !exec.quiet
        && s.printed.is_none()
        && let Ok(text) = std::fs::read_to_string(&log_path)
    {
        print!("{text}");
    }
    if std::fs::metadata(&log_path).is_ok_and(|m| m.len() == 0) {
        let _ = std::fs::remove_file(&log_path);
    }
    match status.code() {
        Some(0) => Ok(()),
        Some(130) | None => Err(Stopped(format!(
            "step {} ({}) stopped: the steps before it are kept; run the same command again to go on",
            s.number, s.name
        ))
        .into()),
        Some(code) => {
            let said = std::fs::read_to_string(&log_path).ok().and_then(|t| {
                t.lines()
                    .rev()
                    .find(|l| l.starts_with("erode: error:"))
                    .map(|l| l.trim_start_matches("erode: error: ").to_string())
            });
            let after = "the steps before it are kept: fix it and run the same command again";
            match said {
                Some(e) => bail!("{e}; {after}"),
                None => bail!("exit status {code}, its message above; {after}"),
            }
        }
    }
}

/// Whether a step's folder holds a checkpoint to go on from.
fn has_checkpoint(folder: &Path) -> bool {
    std::fs::read_dir(folder.join("checkpoints")).is_ok_and(|mut d| d.any(|e| e.is_ok_and(|e| e.path().is_file())))
}

/// Removes the step folders of `dir` (those with a step.json) that the plan no longer has.
fn remove_stale_steps(dir: &Path, plan: &Plan) -> anyhow::Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(()) };
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if path.join("step.json").is_file() && !plan.steps.iter().any(|s| s.folder == name) {
            std::fs::remove_dir_all(&path).with_context(|| format!("{}: cannot remove an old step", path.display()))?;
        }
    }
    Ok(())
}

/// What varies in a variant and its values here, as JSON (numbers as numbers).
fn values(v: &Variant) -> serde_json::Value {
    let each = v.values.iter().map(|(k, x)| (k.clone(), serde_json::to_value(recipe::value_of(x)).unwrap_or_default()));
    serde_json::Value::Object(each.collect())
}

/// A variant's caption on the contact sheet: `seed 3, rain_rate 2e-4`.
fn caption(v: &Variant) -> String {
    v.values.iter().map(|(k, x)| format!("{k} {x}")).collect::<Vec<_>>().join(", ")
}

/// `text` quoted for a shell when it needs to be.
fn quote(text: &str) -> String {
    if !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=,:+".contains(c)) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}
