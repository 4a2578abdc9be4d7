//! `erode run`: every example recipe gives the same bytes twice and on 1 and 2 threads, a run
//! again keeps what was done, batches make their variants and a contact sheet, and bad recipes
//! are refused before anything runs.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{erode, ok, refused};

/// The example recipes shipped in `recipes/`.
fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../recipes");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml") && !p.to_string_lossy().ends_with("-rules.toml"))
        .collect();
    found.sort();
    found.iter().map(|p| p.canonicalize().unwrap()).collect()
}

/// Every file under `dir` but the reports (which hold times), by path from `dir`, with its bytes.
fn contents(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n != "report.json") {
                out.insert(p.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// The files that differ between two runs' folders (or are in one only).
fn differences(a: &BTreeMap<PathBuf, Vec<u8>>, b: &BTreeMap<PathBuf, Vec<u8>>) -> Vec<PathBuf> {
    let mut keys: Vec<&PathBuf> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter().filter(|k| a.get(*k) != b.get(*k)).cloned().collect()
}

fn report(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// A small recipe: a terrain, a short grid run with the maps the masks read, masks, a mesh and
/// the figures.
const SMALL: &str = r#"
description = "a test"
[[step]]
command = "generate"
size = 48
relief = 40
cell_size = "2"
seed = 3
[[step]]
command = "simulate grid"
iterations = 20
outputs = ["erosion", "deposition"]
[[step]]
command = "masks"
only = ["flow", "erosion", "normal"]
[[step]]
command = "mesh"
output = "t.obj"
[[step]]
command = "analyze"
"#;

#[test]
fn every_example_recipe_gives_the_same_bytes_twice_and_on_one_or_two_threads() {
    let d = tempfile::tempdir().unwrap();
    let recipes = examples();
    assert!(recipes.len() >= 4, "the example recipes: {recipes:?}");
    for r in &recipes {
        let r = r.to_str().unwrap();
        let name = Path::new(r).file_stem().unwrap().to_str().unwrap().to_string();
        // each at a size a test runs in seconds: step 1 makes the terrain
        let (a, b) = (format!("{name}-1"), format!("{name}-2"));
        ok(&["run", r, "-o", &a, "-q", "--set", "size=128", "--threads", "1"], d.path());
        ok(&["run", r, "-o", &b, "-q", "--set", "size=128", "--threads", "2"], d.path());
        let (ca, cb) = (contents(&d.path().join(&a)), contents(&d.path().join(&b)));
        assert_eq!(differences(&ca, &cb), Vec::<PathBuf>::new(), "{r}: files that differ");
        // the run made what the recipe asks: a height, masks, a mesh, an engine's heightmap
        let rep = report(&d.path().join(&a).join("report.json"));
        let height = rep["height"].as_str().unwrap();
        assert!(ca.contains_key(Path::new(height)), "{r}: the height {height}");
        assert!(ca.contains_key(Path::new("preview.png")) && ca.contains_key(Path::new("recipe.toml")));
        assert!(ca.keys().any(|k| k.ends_with("albedo.png")), "{r}: no masks");
        assert!(ca.keys().any(|k| k.extension().is_some_and(|e| e == "glb")), "{r}: no mesh");
        let steps = rep["steps"].as_array().unwrap();
        assert!(steps.iter().all(|s| s["kept"] == false), "{r}: a fresh folder keeps nothing");
        assert!(steps.len() >= 4, "{r}: {steps:?}");
    }
}

#[test]
fn a_run_again_keeps_the_steps_done_and_goes_on_from_the_first_changed() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("r.toml"), SMALL).unwrap();
    ok(&["run", "r.toml", "-o", "out"], d.path());
    let first = contents(&d.path().join("out"));
    let figures: serde_json::Value = serde_json::from_slice(&first[Path::new("05-analyze/analysis.json")]).unwrap();
    assert!(figures.is_object(), "analyze's figures as JSON");
    assert!(first.contains_key(Path::new("04-mesh/t.obj")), "the step's own output name");
    assert!(first.contains_key(Path::new("03-masks/erosion.png")), "the run's maps reach the masks");

    // again: every step kept, nothing rewritten
    let out = erode(&["run", "r.toml", "-o", "out"], d.path());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert_eq!(said.matches("kept").count(), 5, "{said}");
    assert_eq!(differences(&first, &contents(&d.path().join("out"))), Vec::<PathBuf>::new());

    // a changed step and those after it run again; the ones before are kept
    let out = erode(&["run", "r.toml", "-o", "out", "--set", "iterations=30"], d.path());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("step 1/5 generate: kept"), "{said}");
    assert!(!said.contains("simulate grid: kept") && !said.contains("masks: kept"), "{said}");
    let changed = contents(&d.path().join("out"));
    assert_eq!(first[Path::new("01-generate/height.tif")], changed[Path::new("01-generate/height.tif")]);
    assert_ne!(first[Path::new("02-simulate-grid/height.tif")], changed[Path::new("02-simulate-grid/height.tif")]);
    let rep = report(&d.path().join("out/report.json"));
    assert_eq!(rep["steps"][0]["kept"], true);
    assert_eq!(rep["steps"][1]["kept"], false);

    // a step's output gone: that step and those after it run again; --fresh runs all
    std::fs::remove_file(d.path().join("out/04-mesh/t.obj")).unwrap();
    let out = erode(&["run", "r.toml", "-o", "out", "--set", "iterations=30"], d.path());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("masks: kept") && !said.contains("mesh: kept") && !said.contains("analyze: kept"), "{said}");
    let out = erode(&["run", "r.toml", "-o", "out", "--set", "iterations=30", "--fresh"], d.path());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("kept"));
    assert_eq!(differences(&changed, &contents(&d.path().join("out"))), Vec::<PathBuf>::new());
}

#[test]
fn an_input_takes_the_place_of_the_generated_terrain() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("r.toml"), SMALL).unwrap();
    ok(&["generate", "--size", "40", "--seed", "9", "--relief", "30", "--cell-size", "2", "-o", "dem.tif"], d.path());
    ok(&["run", "r.toml", "-o", "out", "-q", "--input", "dem.tif"], d.path());
    let made = contents(&d.path().join("out"));
    assert!(!made.keys().any(|k| k.starts_with("01-generate")), "the generate step ran");
    // step 2 read the DEM: its height has the DEM's size
    let h = erode_io::read(&d.path().join("out/02-simulate-grid/height.tif"), &Default::default()).unwrap().map;
    assert_eq!((h.heights.width(), h.heights.height()), (40, 40));
    assert_eq!(report(&d.path().join("out/report.json"))["steps"][0]["command"], "simulate grid");
}

#[test]
fn a_batch_runs_every_variant_with_a_contact_sheet_the_same_on_any_jobs() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("r.toml"), SMALL).unwrap();
    let batch = ["run", "r.toml", "-q", "--seeds", "1..2", "--set", "grid.rain_rate=1e-4,3e-4"];
    ok(&[&batch[..], &["-o", "b1", "--jobs", "1"]].concat(), d.path());
    ok(&[&batch[..], &["-o", "b2", "--jobs", "2"]].concat(), d.path());
    let (one, two) = (contents(&d.path().join("b1")), contents(&d.path().join("b2")));
    assert_eq!(differences(&one, &two), Vec::<PathBuf>::new());
    let names = [
        "seed-1_grid.rain_rate-1e-4",
        "seed-1_grid.rain_rate-3e-4",
        "seed-2_grid.rain_rate-1e-4",
        "seed-2_grid.rain_rate-3e-4",
    ];
    let height = |v: &str| &one[&Path::new(v).join("02-simulate-grid/height.tif")];
    for v in names {
        assert!(one.contains_key(&Path::new(v).join("preview.png")), "{v}");
    }
    // the seed reaches the terrain, the rain the model
    assert_ne!(
        one[&Path::new(names[0]).join("01-generate/height.tif")],
        one[&Path::new(names[2]).join("01-generate/height.tif")]
    );
    assert_eq!(
        one[&Path::new(names[0]).join("01-generate/height.tif")],
        one[&Path::new(names[1]).join("01-generate/height.tif")]
    );
    assert_ne!(height(names[0]), height(names[1]));
    let rep = report(&d.path().join("b1/report.json"));
    let variants = rep["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 4);
    assert_eq!(variants[1]["values"]["grid.rain_rate"], 3e-4);
    assert_eq!(variants[2]["values"]["seed"], 2);
    // the sheet: four tiles of 48 px (two by two) with their captions
    let decoder =
        png::Decoder::new(std::io::BufReader::new(std::fs::File::open(d.path().join("b1/contact-sheet.png")).unwrap()));
    let info = decoder.read_info().unwrap().info().clone();
    assert!(info.width > 2 * 48 && info.height > 2 * 48, "{} x {}", info.width, info.height);

    // a variant's recipe.toml is the recipe it ran: run alone, the same height
    let v = d.path().join("b1").join(names[3]);
    ok(&["run", v.join("recipe.toml").to_str().unwrap(), "-o", "alone", "-q"], d.path());
    assert_eq!(std::fs::read(d.path().join("alone/02-simulate-grid/height.tif")).unwrap(), *height(names[3]));
}

#[test]
fn bad_recipes_are_refused_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    let cases: [(&str, &str); 9] = [
        ("[[step]]\ncommand = \"dance\"\n", "step 1: `dance` cannot be a step"),
        (
            "[[step]]\ncommand = \"generate\"\nsize = 32\n[[step]]\ncommand = \"masks\"\nbits = 12\nonly = \"flow\"\nwrong = 1\n",
            "step 2 (masks): no option `wrong`",
        ),
        ("[[step]]\ncommand = \"generate\"\nsize = \"big\"\n", "step 1 (generate): invalid value 'big' for '--size"),
        (
            "[[step]]\ncommand = \"simulate grid\"\n",
            "step 1 (simulate grid): reads a heightmap and no step before it makes one",
        ),
        ("[[step]]\ncommand = \"simulate sph\"\n", "sph erodes a triangle mesh"),
        ("[[step]]\ncommand = \"generate\"\nthreads = 2\n", "`threads` is the run's to set"),
        ("[[step]\ncommand = \"generate\"\n", "r.toml:"),
        ("description = \"no steps\"\n", "no steps"),
        (
            "[[step]]\ncommand = \"generate\"\n[[step]]\ncommand = \"mesh\"\noutput = \"../t.obj\"\n",
            "a file name in the step's folder",
        ),
    ];
    for (text, needle) in cases {
        std::fs::write(d.path().join("r.toml"), text).unwrap();
        refused(&["run", "r.toml", "-o", "out"], d.path(), needle);
        assert!(!d.path().join("out").exists(), "{text}: left an output folder");
    }
    std::fs::write(d.path().join("r.toml"), SMALL).unwrap();
    refused(
        &["run", "r.toml", "-o", "out", "--set", "nonsense=1"],
        d.path(),
        "--set nonsense=1: no step of r.toml takes",
    );
    refused(
        &["run", "r.toml", "-o", "out", "--set", "mesh.seed=1"],
        d.path(),
        "step `mesh` takes no option or model parameter `seed`",
    );
    refused(&["run", "r.toml", "-o", "out", "--seeds", "5..2"], d.path(), "runs backwards");
    refused(&["run", "r.toml", "-o", "out", "--input", "missing.tif"], d.path(), "missing.tif: no such heightmap");
    let twice = "[[step]]\ncommand = \"generate\"\n[[step]]\ncommand = \"generate\"\n";
    std::fs::write(d.path().join("twice.toml"), twice).unwrap();
    refused(
        &["run", "twice.toml", "-o", "out", "--input", "missing.tif"],
        d.path(),
        "makes a terrain, and the recipe's input",
    );
    assert!(!d.path().join("out").exists());
    // a folder of other files is not a run's
    std::fs::create_dir(d.path().join("mine")).unwrap();
    std::fs::write(d.path().join("mine/notes.txt"), "mine").unwrap();
    refused(&["run", "r.toml", "-o", "mine"], d.path(), "not a recipe run's");
    // a step that fails names the recipe and the step, and keeps those before it
    std::fs::write(d.path().join("r.toml"), "[[step]]\ncommand = \"generate\"\nsize = 32\n[[step]]\ncommand = \"simulate grid\"\nset = { rain_rate = -1 }\n").unwrap();
    let out = erode(&["run", "r.toml", "-o", "out", "-q"], d.path());
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("rain_rate") && said.contains("r.toml: step 2 (simulate grid) failed"), "{said}");
    assert!(d.path().join("out/01-generate/height.tif").is_file());
}

#[test]
fn a_signal_stops_a_step_at_its_checkpoint_and_a_run_again_goes_on_to_the_same_bytes() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let d = tempfile::tempdir().unwrap();
    let recipe = "[[step]]\ncommand = \"generate\"\nsize = 384\nseed = 3\n\
                  [[step]]\ncommand = \"simulate grid\"\niterations = 300\ncheckpoint_every = 20\n";
    std::fs::write(d.path().join("r.toml"), recipe).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_erode"))
        .args(["run", "r.toml", "-o", "out", "-q"])
        .current_dir(d.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // the signal goes to erode run alone, as `kill` sends it; it passes it to the step running
    let checkpoints = d.path().join("out/02-simulate-grid/checkpoints");
    let started = Instant::now();
    while !std::fs::read_dir(&checkpoints)
        .is_ok_and(|mut e| e.any(|f| f.is_ok_and(|f| f.path().extension().is_some_and(|x| x == "ckpt"))))
        && started.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{said}");
    assert!(said.contains("step 2 (simulate grid) stopped"), "{said}");
    assert!(!d.path().join("out/02-simulate-grid/height.tif").exists(), "a stopped step wrote its outputs");
    // again: step 1 kept, step 2 from its checkpoint, the bytes of a run never stopped
    let again = erode(&["run", "r.toml", "-o", "out"], d.path());
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{said}");
    assert!(said.contains("generate: kept") && said.contains("going on from its checkpoint"), "{said}");
    ok(&["run", "r.toml", "-o", "straight", "-q"], d.path());
    let height = |o: &str| std::fs::read(d.path().join(o).join("02-simulate-grid/height.tif")).unwrap();
    assert!(height("out") == height("straight"), "stopped and gone on differs from a straight run");
}
