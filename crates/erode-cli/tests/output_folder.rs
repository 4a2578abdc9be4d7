//! An output folder belongs to one run: a run never writes over its input under any name, owns
//! its checkpoints (another run's are refused or moved aside), locks the folder against a second
//! run, and leaves one set of outputs.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{files_in, ok};

/// The bytes of a file, or none when it is missing.
fn bytes(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_default()
}

#[test]
fn a_run_never_writes_over_its_input_under_any_name() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "24", "-o", "dem.tif"], d);
    ok(&["simulate", "grid", "dem.tif", "-o", "out", "--iterations", "5", "-q"], d);
    let kept = bytes(&d.join("out/height.tif"));
    std::os::unix::fs::symlink("out/height.tif", d.join("link.tif")).unwrap();
    std::fs::create_dir(d.join("sub")).unwrap();
    for input in ["out/height.tif", "link.tif", "sub/../out/height.tif", "./out/../out/height.tif"] {
        for model in ["grid", "stream-power", "droplet"] {
            let count = if model == "droplet" { "--droplets" } else { "--iterations" };
            let mut a = vec!["simulate", model, input, "-o", "out", count, "1000", "-q"];
            if model == "stream-power" {
                // cells in its range, so no note comes before the refusal
                a.extend(["--cell-size", "100"]);
                (a[5], a[6]) = ("--years", "20000");
            }
            common::refused(&a, d, "it is the input");
        }
        common::refused(&["amplify", input, "-o", "out", "--levels", "1", "-q"], d, "it is the input");
        assert!(bytes(&d.join("out/height.tif")) == kept, "{input}: the input changed");
    }
    // an input in the output folder that the run does not write is read as any other (the
    // checkpoints there are another input's run's: moved aside)
    let png =
        ["simulate", "grid", "out/height.tif", "-o", "out", "--iterations", "5", "-q", "--format", "png", "--force"];
    ok(&png, d);
    assert!(bytes(&d.join("out/height.tif")) == kept);
}

#[test]
fn a_fresh_run_owns_its_checkpoints_and_refuses_another_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "24", "-o", "dem.tif"], d);
    let run = |n: &str, extra: &[&str]| {
        let mut a =
            vec!["simulate", "grid", "dem.tif", "-o", "out", "--iterations", n, "--checkpoint-every", "10", "-q"];
        a.extend_from_slice(extra);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    fn strs(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }
    let ckpts = || -> Vec<String> {
        files_in(&d.join("out/checkpoints"))
            .into_iter()
            .filter(|p| p.is_file())
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect()
    };
    ok(&strs(&run("50", &[])), d);
    assert_eq!(ckpts(), ["grid-000000000040.ckpt", "grid-000000000050.ckpt"]);
    // the same run started again, shorter: its own checkpoints, not the earlier run's later ones
    ok(&strs(&run("20", &[])), d);
    assert_eq!(ckpts(), ["grid-000000000010.ckpt", "grid-000000000020.ckpt"]);
    // another run's: refused, naming them, nothing changed
    let other = run("20", &["--set", "rain_rate=0.02"]);
    common::refused(&strs(&other), d, "holds the checkpoints of another run (other parameters");
    let other_input =
        ["simulate", "grid", "out/height.tif", "-o", "out", "--iterations", "20", "-q", "--format", "png"];
    common::refused(&other_input, d, "another input");
    assert_eq!(ckpts(), ["grid-000000000010.ckpt", "grid-000000000020.ckpt"]);
    // or moved aside with --force
    let mut forced = other.clone();
    forced.push("--force".into());
    ok(&strs(&forced), d);
    assert_eq!(ckpts(), ["grid-000000000010.ckpt", "grid-000000000020.ckpt"]);
    assert_eq!(files_in(&d.join("out/checkpoints/replaced-1")).len(), 2);
    // and the forced run's own resume
    let mut resumed = run("30", &["--set", "rain_rate=0.02", "--resume"]);
    resumed.retain(|a| a != "--checkpoint-every" && a != "10");
    ok(&strs(&resumed), d);
}

#[test]
fn a_second_run_in_a_busy_output_folder_is_refused_with_the_holder() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "128", "-o", "dem.tif"], d);
    let mut first = Command::new(env!("CARGO_BIN_EXE_erode"))
        .args(["simulate", "grid", "dem.tif", "-o", "out", "--iterations", "1000000", "-q"])
        .current_dir(d)
        .spawn()
        .unwrap();
    let lock = d.join("out/.erode-lock");
    let started = Instant::now();
    while bytes(&lock).is_empty() {
        assert!(started.elapsed() < Duration::from_secs(60), "the first run took no lock");
        std::thread::sleep(Duration::from_millis(50));
    }
    let holder = format!("in use by process {}", first.id());
    for model in ["grid", "droplet"] {
        common::refused(&["simulate", model, "dem.tif", "-o", "out", "-q"], d, &holder);
    }
    common::refused(&["amplify", "-o", "out", "--size", "64", "--levels", "1", "-q"], d, &holder);
    first.kill().unwrap();
    first.wait().unwrap();
    // the system let go of the lock with the process: the folder is free
    ok(&["simulate", "grid", "dem.tif", "-o", "out", "--iterations", "3", "-q"], d);
    assert!(d.join("out/report.json").exists());
}

#[test]
fn a_run_leaves_one_set_its_inputs_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "24", "-o", "dem.tif"], d);
    ok(&["simulate", "grid", "dem.tif", "-o", "out", "--iterations", "5", "--outputs", "all", "-q"], d);
    assert!(d.join("out/water.tif").exists());
    std::fs::copy(d.join("out/water.tif"), d.join("water-copy.tif")).unwrap();
    // the droplets write no water map: the grid's goes with its set
    ok(&["simulate", "droplet", "dem.tif", "-o", "out", "--droplets", "100", "--outputs", "flow", "-q"], d);
    assert!(!d.join("out/water.tif").exists(), "the grid run's water map is left beside the droplet run's");
    assert!(d.join("out/height.tif").exists() && d.join("out/flow.tif").exists());
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join("out/report.json")).unwrap()).unwrap();
    assert_eq!(report["model"], "droplet");
    let listed: Vec<String> = serde_json::from_value(report["files"].clone()).unwrap();
    let mut present: Vec<String> = files_in(&d.join("out"))
        .into_iter()
        .filter(|p| p.is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|n| n != "report.json")
        .collect();
    present.sort();
    assert_eq!(listed, present);
    // a map of the set before that the run reads is kept
    std::fs::copy(d.join("water-copy.tif"), d.join("out/water.tif")).unwrap();
    ok(&["simulate", "grid", "dem.tif", "-o", "out", "--iterations", "5", "-q", "--force"], d);
    ok(
        &[
            "simulate",
            "droplet",
            "dem.tif",
            "-o",
            "out",
            "--droplets",
            "100",
            "-q",
            "--force",
            "--rain-map",
            "out/water.tif",
        ],
        d,
    );
    assert!(d.join("out/water.tif").exists(), "an input was removed with the set before");
}

#[test]
fn a_resume_refuses_maps_that_changed_naming_them() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "24", "--cell-size", "2", "-o", "dem.tif"], d);
    for seed in ["1", "2"] {
        ok(&["generate", "--size", "24", "--relief", "1", "--seed", seed, "-o", &format!("m{seed}.tif")], d);
    }
    // (model, count option, its first and resumed counts, the map's option)
    let cases = [
        ("grid", "--iterations", "10", "20", "--hardness-map"),
        ("grid", "--iterations", "10", "20", "--rain-map"),
        ("droplet", "--droplets", "2000", "4000", "--rain-map"),
        ("stream-power", "--years", "40000", "80000", "--uplift-map"),
    ];
    for (model, count, first, then, map) in cases {
        let out = format!("{model}{map}");
        let run = |n: &str, with: Option<&str>, resume: bool| {
            let mut a = vec!["simulate", model, "dem.tif", "-o", &out, count, n, "-q"];
            if model == "grid" && map == "--rain-map" {
                a.extend(["--set", "rain_mode=\"map\""]);
            }
            if model == "stream-power" {
                // cells it suits, so no note comes before a refusal
                a.extend(["--dt-years", "20000", "--cell-size", "100"]);
            }
            if let Some(m) = with {
                a.extend([map, m]);
            }
            if resume {
                a.push("--resume");
            } else {
                // the end kept, to resume from
                a.extend(["--checkpoint-every", "1000000000"]);
            }
            a.into_iter().map(String::from).collect::<Vec<_>>()
        };
        let strs = |v: &[String]| v.iter().map(String::clone).collect::<Vec<_>>();
        let go = |v: Vec<String>| ok(&v.iter().map(String::as_str).collect::<Vec<_>>(), d);
        let refused = |v: Vec<String>, needle: &str| {
            common::refused(&v.iter().map(String::as_str).collect::<Vec<_>>(), d, needle);
        };
        go(run(first, Some("m1.tif"), false));
        // another map, or none where the run had one: refused, naming what was given
        refused(strs(&run(then, Some("m2.tif"), true)), &format!("dem.tif {map} m2.tif: not the inputs"));
        if map == "--hardness-map" {
            // the grid's hardness map sets its mode parameter: left out, the parameters differ
            refused(strs(&run(then, None, true)), "the parameters differ");
        } else {
            refused(strs(&run(then, None, true)), "dem.tif: not the inputs the checkpoint");
        }
        // the same map: resumed
        go(run(then, Some("m1.tif"), true));
    }
}
