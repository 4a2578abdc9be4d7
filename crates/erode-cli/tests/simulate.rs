//! `erode simulate grid` and `erode params grid` as users run them: outputs, reports, thread
//! counts, checkpoints and resume, bad parameters, and real DEMs.

use crate::common;

use std::path::{Path, PathBuf};

use common::*;

fn report(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap()
}

fn bytes(p: PathBuf) -> Vec<u8> {
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn simulate_writes_every_map_preview_and_a_balanced_report() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--kind", "ridged", "--size", "48", "--relief", "20", "-o", "t.tif"], d);
    ok(
        &[
            "simulate",
            "grid",
            "t.tif",
            "-o",
            "out",
            "--iterations",
            "200",
            "--format",
            "tif,png,exr",
            "--outputs",
            "all",
            "--quiet",
        ],
        d,
    );
    for map in
        ["height", "water", "sediment", "sediment_depth", "hardness", "erosion", "deposition", "flow", "velocity"]
    {
        for ext in ["tif", "png", "exr"] {
            assert!(d.join(format!("out/{map}.{ext}")).exists(), "missing {map}.{ext}");
        }
    }
    assert!(d.join("out/preview.png").exists());
    let r = report(&d.join("out"));
    assert_eq!(r["model"], "grid");
    assert_eq!(r["progress"]["done"], 200);
    assert_eq!((r["map"]["width"].as_u64(), r["map"]["height"].as_u64()), (Some(48), Some(48)));
    assert_eq!(r["finite"], true);
    let rel = r["books"]["relative_error"].as_f64().unwrap();
    assert!(rel < 1e-5, "books off by {rel}");
    assert!(r["books"]["terms"]["eroded"]["value"].as_f64().unwrap() > 0.0);
    assert!(r["progress"]["per_second"].as_f64().unwrap() > 0.0);
}

#[test]
fn thread_counts_give_identical_files_and_resume_equals_a_straight_run() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "40", "--seed", "3", "--relief", "15", "-o", "t.tif"], d);
    let common = ["--set", "rain_mode=buckets", "--set", "pipes=8", "-q"];
    let run = |out: &str, threads: &str, extra: &[&str]| {
        let mut args = vec!["simulate", "grid", "t.tif", "-o", out, "--threads", threads, "--outputs", "all"];
        args.extend_from_slice(&common);
        args.extend_from_slice(extra);
        ok(&args, d);
    };
    run("one", "1", &["--iterations", "300"]);
    run("two", "2", &["--iterations", "300"]);
    for map in ["height", "water", "sediment", "erosion", "flow"] {
        assert!(bytes(d.join(format!("one/{map}.tif"))) == bytes(d.join(format!("two/{map}.tif"))), "{map} differs");
    }
    // 150 with a checkpoint every 150, then resume to 300 with another thread count
    run("resumed", "1", &["--iterations", "150", "--checkpoint-every", "150"]);
    run("resumed", "2", &["--iterations", "300", "--resume"]);
    for map in ["height", "water", "sediment", "erosion", "deposition", "flow", "velocity", "hardness"] {
        assert!(
            bytes(d.join(format!("one/{map}.tif"))) == bytes(d.join(format!("resumed/{map}.tif"))),
            "resumed {map} differs from the straight run"
        );
    }
    assert_eq!(report(&d.join("resumed"))["progress"]["resumed_from"], 150);
}

#[test]
fn params_round_trip_and_bad_parameters_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let toml = ok(&["params", "grid"], d);
    assert!(toml.contains("# time step") && toml.contains("dt = 0.0") && toml.contains("Preset `rivers`"), "{toml}");
    let classic = ok(&["params", "grid", "--preset", "classic"], d);
    assert!(classic.contains("dt = 0.05") && classic.contains("capacity_model = \"mei\""), "{classic}");
    let err = refused(&["params", "grid", "--preset", "lunar"], d, "lunar");
    assert!(err.contains("rivers, gentle, badlands, alpine, classic"), "the known presets are listed: {err}");
    std::fs::write(d.join("p.toml"), &toml).unwrap();
    ok(&["generate", "--size", "16", "-o", "t.tif"], d);
    ok(&["simulate", "grid", "t.tif", "--params", "p.toml", "-o", "a", "--iterations", "5", "-q"], d);
    std::fs::write(d.join("bad.toml"), "dt = 0.05\nrian_rate = 3\n").unwrap();
    let err =
        refused(&["simulate", "grid", "t.tif", "--params", "bad.toml", "-o", "b", "--iterations", "5"], d, "rian_rate");
    assert!(err.contains("bad.toml: line 2"), "the error names the file and line: {err}");
    std::fs::write(d.join("typed.toml"), "dt = 0.05\n\n[[sources]]\nx = 1\ny = \"north\"\nrate = 1\n").unwrap();
    refused(
        &["simulate", "grid", "t.tif", "--params", "typed.toml", "-o", "b"],
        d,
        "typed.toml: line 5 (`y = \"north\"`)",
    );
    refused(&["simulate", "grid", "t.tif", "--set", "dt=-1", "-o", "b", "--iterations", "5"], d, "dt");
    refused(&["simulate", "grid", "t.tif", "--set", "nonsense", "-o", "b"], d, "key=value");
    refused(&["simulate", "grid", "t.tif", "--set", "flux_form=sideways", "-o", "b"], d, "sideways");
    refused(&["simulate", "grid", "t.tif", "-o", "b", "--resume"], d, "no checkpoint");
    refused(&["simulate", "grid", "t.tif", "-o", "b", "--format", "bmp"], d, "bmp");
    refused(&["simulate", "grid", "t.tif", "-o", "b", "--preset", "lunar"], d, "rivers, gentle");
    refused(&["simulate", "grid", "t.tif", "-o", "b", "--duration", "2 fortnights"], d, "--duration");
    refused(&["simulate", "droplet", "t.tif", "-o", "b", "--preset", "rivers"], d, "default, gentle, beyer");
    assert!(!d.join("b/report.json").exists(), "a refused run wrote a report");
    // a damaged checkpoint is named as such
    ok(&["simulate", "grid", "t.tif", "-o", "c", "--iterations", "4", "--checkpoint-every", "4", "-q"], d);
    let ckpt = std::fs::read_dir(d.join("c/checkpoints"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "ckpt"))
        .unwrap();
    let mut raw = std::fs::read(&ckpt).unwrap();
    let mid = raw.len() / 2;
    raw[mid] ^= 1;
    std::fs::write(&ckpt, raw).unwrap();
    // the flipped byte breaks a compressed block or the frame's checksum
    refused(&["simulate", "grid", "t.tif", "-o", "c", "--iterations", "8", "--resume"], d, "corrupt");
}

/// A finished run keeps its state only when checkpoints were asked for (`--checkpoint-every`,
/// which always keeps the end) or when it resumed a checkpoint (which it then keeps current);
/// `--resume` of a run that kept none says how to keep it. Checkpoints are compressed.
#[test]
fn a_finished_run_keeps_its_state_only_when_checkpoints_were_asked_for() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--kind", "ridged", "--size", "40", "--relief", "12", "-o", "t.tif"], d);
    let kept = |out: &str| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d.join(out).join("checkpoints"))
            .into_iter()
            .flatten()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".ckpt"))
            .collect();
        v.sort();
        v
    };
    let run = |out: &str, more: &[&str]| {
        ok(&[&["simulate", "grid", "t.tif", "-o", out, "-q"], more].concat(), d);
    };
    run("plain", &["--iterations", "6"]);
    assert!(kept("plain").is_empty(), "a run that asked for no checkpoints kept {:?}", kept("plain"));
    refused(&["simulate", "grid", "t.tif", "-o", "plain", "--iterations", "12", "--resume"], d, "--checkpoint-every");
    run("kept", &["--iterations", "6", "--checkpoint-every", "4"]);
    assert_eq!(kept("kept"), ["grid-000000000004.ckpt", "grid-000000000006.ckpt"]);
    run("kept", &["--iterations", "12", "--resume"]);
    assert_eq!(kept("kept"), ["grid-000000000006.ckpt", "grid-000000000012.ckpt"]);
    run("straight", &["--iterations", "12"]);
    assert_eq!(bytes(d.join("kept/height.tif")), bytes(d.join("straight/height.tif")));
    // compressed: the state of 40 x 40 cells (~26 f32 fields) in less than its raw size
    let file = bytes(d.join("kept/checkpoints/grid-000000000012.ckpt"));
    assert!(file.starts_with(b"erodeLZ4") && file.len() < 40 * 40 * 26 * 4, "{} bytes", file.len());
}

#[test]
fn real_dems_erode_finitely_with_balanced_books_deterministically() {
    for name in ["lidar-dem.tif", "terra-elev.tif"] {
        let Some(dem) = testdata(name) else { continue };
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let dem = dem.to_str().unwrap();
        let base = ["simulate", "grid", dem, "--set", "rain_rate=0.01", "--outputs", "all", "-q"];
        let run = |out: &str, threads: &str, extra: &[&str]| {
            let mut args = base.to_vec();
            args.extend_from_slice(&["-o", out, "--threads", threads]);
            args.extend_from_slice(extra);
            ok(&args, d);
        };
        run("one", "1", &["--iterations", "200"]);
        run("two", "2", &["--iterations", "200"]);
        run("res", "2", &["--iterations", "100", "--checkpoint-every", "100"]);
        run("res", "1", &["--iterations", "200", "--resume"]);
        let r = report(&d.join("one"));
        assert_eq!(r["finite"], true, "{name}");
        let rel = r["books"]["relative_error"].as_f64().unwrap();
        assert!(rel < 1e-5, "{name}: books off by {rel}");
        assert!(r["books"]["terms"]["eroded"]["value"].as_f64().unwrap() > 0.0, "{name}: nothing eroded");
        for map in ["height", "water", "sediment", "flow", "velocity"] {
            let one = bytes(d.join(format!("one/{map}.tif")));
            assert!(one == bytes(d.join(format!("two/{map}.tif"))), "{name}: {map} differs between 1 and 2 threads");
            assert!(one == bytes(d.join(format!("res/{map}.tif"))), "{name}: resumed {map} differs");
        }
        // the outputs keep the DEM's georeference
        let info: serde_json::Value = serde_json::from_str(&ok(&["info", "--json", "one/height.tif"], d)).unwrap();
        let src: serde_json::Value = serde_json::from_str(&ok(&["info", "--json", dem], d)).unwrap();
        assert_eq!(info["georeference"], src["georeference"], "{name}");
        assert_eq!(info["nodata_count"], src["nodata_count"], "{name}");
    }
}

#[test]
fn droplets_on_real_dems_and_below_sea_level_are_finite_exact_and_deterministic() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut dems: Vec<String> = ["lidar-dem.tif", "terra-elev.tif"]
        .iter()
        .filter_map(|n| testdata(n))
        .map(|p| p.to_str().unwrap().to_string())
        .collect();
    // the lidar DEM moved 400 m below sea level
    if let Some(dem) = testdata("lidar-dem.tif") {
        let loaded = erode_io::read(&dem, &Default::default()).unwrap();
        let mut heights = loaded.map.heights.clone();
        heights.as_mut_slice().iter_mut().for_each(|h| *h -= 400.0);
        let map = erode::Heightmap::with_nodata(heights, None).unwrap();
        let opts = erode_io::WriteOptions { georef: loaded.info.georef.clone(), ..Default::default() };
        erode_io::write(&d.join("below.tif"), &map, &opts).unwrap();
        dems.push(d.join("below.tif").to_str().unwrap().to_string());
    }
    for (k, dem) in dems.iter().enumerate() {
        let run = |out: &str, threads: &str, extra: &[&str]| {
            let mut args =
                vec!["simulate", "droplet", dem.as_str(), "-o", out, "--threads", threads, "--outputs", "all", "-q"];
            args.extend_from_slice(&["--set", "max_distance=40", "--set", "radius=3", "--set", "batch_size=2000"]);
            args.extend_from_slice(extra);
            ok(&args, d);
        };
        let (one, two, res) = (format!("one{k}"), format!("two{k}"), format!("res{k}"));
        run(&one, "1", &["--droplets", "8000"]);
        run(&two, "2", &["--droplets", "8000"]);
        run(&res, "2", &["--droplets", "4000", "--checkpoint-every", "4000"]);
        run(&res, "1", &["--droplets", "8000", "--resume"]);
        let r = report(&d.join(&one));
        assert_eq!(r["finite"], true, "{dem}");
        assert_eq!(r["books"]["terms"]["books_relative_error"]["value"], 0.0, "{dem}");
        let rel = r["books"]["terms"]["terrain_relative_error"]["value"].as_f64().unwrap();
        assert!(rel < 1e-5, "{dem}: terrain vs books {rel}");
        assert!(r["books"]["terms"]["eroded"]["value"].as_f64().unwrap() > 0.0, "{dem}: nothing eroded");
        for map in ["height", "erosion", "deposition", "flow"] {
            let a = bytes(d.join(format!("{one}/{map}.tif")));
            assert!(a == bytes(d.join(format!("{two}/{map}.tif"))), "{dem}: {map} differs between 1 and 2 threads");
            assert!(a == bytes(d.join(format!("{res}/{map}.tif"))), "{dem}: resumed {map} differs");
        }
    }
}

#[test]
fn simulate_droplet_books_threads_and_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // tall enough for droplets of lifetime 10 to run in 9 bands at a time
    ok(&["generate", "--size", "256", "--seed", "5", "--relief", "8", "-o", "t.tif"], d);
    let run = |out: &str, threads: &str, extra: &[&str]| {
        let mut args = vec!["simulate", "droplet", "t.tif", "-o", out, "--threads", threads, "--outputs", "all", "-q"];
        args.extend_from_slice(&["--set", "radius=2", "--set", "max_distance=10", "--set", "batch_size=500"]);
        args.extend_from_slice(extra);
        ok(&args, d);
    };
    run("one", "1", &["--droplets", "3000"]);
    run("two", "2", &["--droplets", "3000"]);
    run("res", "2", &["--droplets", "1500", "--checkpoint-every", "1500"]);
    run("res", "1", &["--droplets", "3000", "--resume"]);
    let r = report(&d.join("one"));
    assert_eq!(r["model"], "droplet");
    assert_eq!(r["progress"]["done"], 3000);
    assert_eq!(r["details"]["parallel_bands"], 9);
    assert_eq!(r["finite"], true);
    assert_eq!(r["books"]["terms"]["books_relative_error"]["value"], 0.0);
    assert!(r["books"]["terms"]["terrain_relative_error"]["value"].as_f64().unwrap() < 1e-5);
    for map in ["height", "erosion", "deposition", "flow"] {
        let one = bytes(d.join(format!("one/{map}.tif")));
        assert!(one == bytes(d.join(format!("two/{map}.tif"))), "{map} differs between 1 and 2 threads");
        assert!(one == bytes(d.join(format!("res/{map}.tif"))), "resumed {map} differs");
    }
    // `auto` keeps droplets on the CPU where a GPU batch would hold a handful (256² cells over
    // paths of 150 · 9 cells at the default path length and radius on 1 m cells: 48), without
    // trying a GPU
    let out = erode(&["simulate", "droplet", "t.tif", "-o", "auto", "--droplets", "200", "--backend", "auto"], d);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("running on the CPU: a GPU batch holds 48 droplets on this map"), "{err}");
    assert_eq!(report(&d.join("auto"))["backend"], "cpu");
    let toml = ok(&["params", "droplet"], d);
    assert!(toml.contains("inertia_length = 2.0") && toml.contains("max_distance = 150.0"), "{toml}");
    refused(&["simulate", "droplet", "t.tif", "-o", "bad", "--set", "inertia=2"], d, "inertia");
    refused(&["simulate", "droplet", "t.tif", "-o", "bad", "--set", "inertia_length=-1"], d, "inertia_length");
    // lengths that do not fit this map of 1 m cells, counts that overflow
    refused(&["simulate", "droplet", "t.tif", "-o", "bad", "--set", "radius=100"], d, "radius");
    refused(&["simulate", "droplet", "t.tif", "-o", "bad", "--set", "max_distance=1e6"], d, "100,000 cells");
    refused(&["simulate", "droplet", "t.tif", "-o", "bad", "--droplets-per-cell=-1"], d, "--droplets-per-cell");
    refused(&["simulate", "droplet", "t.tif", "-o", "bad", "--droplets-per-cell", "1e12"], d, "--droplets-per-cell");
    assert!(!d.join("bad").exists(), "a refused droplet run wrote its folder");
    let gentle = ok(&["params", "droplet", "--preset", "gentle"], d);
    assert!(gentle.contains("capacity = 0.1") && gentle.contains("Preset `gentle`"), "{gentle}");
}

#[test]
fn simulate_grid_on_the_gpu_balances_its_books_and_follows_the_cpu() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--kind", "ridged", "--size", "64", "--seed", "3", "--relief", "30", "-o", "t.tif"], d);
    let gpu = std::process::Command::new(env!("CARGO_BIN_EXE_erode"))
        .args([
            "simulate",
            "grid",
            "t.tif",
            "-o",
            "gpu",
            "--iterations",
            "150",
            "--backend",
            "gpu",
            "--outputs",
            "all",
            "-q",
        ])
        .current_dir(d)
        .output()
        .unwrap();
    if !gpu.status.success() {
        let err = String::from_utf8_lossy(&gpu.stderr);
        assert!(std::env::var_os("ERODE_REQUIRE_GPU").is_none_or(|v| v != "1"), "ERODE_REQUIRE_GPU=1 but: {err}");
        assert!(err.contains("no GPU adapter"), "{err}");
        return;
    }
    ok(&["simulate", "grid", "t.tif", "-o", "cpu", "--iterations", "150", "-q"], d);
    let (g, c) = (report(&d.join("gpu")), report(&d.join("cpu")));
    assert_eq!(g["backend"], "gpu");
    assert!(g["adapter"].as_str().is_some_and(|a| !a.is_empty()));
    assert_eq!(g["finite"], true);
    let rel = g["books"]["relative_error"].as_f64().unwrap();
    assert!(rel < 1e-5, "GPU books off by {rel}");
    let (ge, ce) = (
        g["books"]["terms"]["eroded"]["value"].as_f64().unwrap(),
        c["books"]["terms"]["eroded"]["value"].as_f64().unwrap(),
    );
    assert!(ce > 0.0 && (ge - ce).abs() <= 0.05 * ce, "eroded: GPU {ge}, CPU {ce}");
    // the height alone (the default) reads back only what the outputs need: the same bytes
    ok(&["simulate", "grid", "t.tif", "-o", "gh", "--iterations", "150", "--backend", "gpu", "-q"], d);
    assert!(bytes(d.join("gpu/height.tif")) == bytes(d.join("gh/height.tif")), "the height read back alone");
    let gh = report(&d.join("gh"));
    assert!(gh["books"]["relative_error"].as_f64().unwrap() < 1e-5, "{}", gh["books"]);
    assert_eq!(gh["simulated_seconds"], g["simulated_seconds"]);
    // a GPU run checkpointed at 75 and resumed ends where the straight one does
    let res = |extra: &[&str]| {
        let mut args = vec!["simulate", "grid", "t.tif", "-o", "res", "--backend", "gpu", "-q"];
        args.extend_from_slice(extra);
        ok(&args, d);
    };
    res(&["--iterations", "75", "--checkpoint-every", "75"]);
    res(&["--iterations", "150", "--resume", "--outputs", "all"]);
    for map in ["height", "water", "sediment", "erosion", "flow"] {
        assert!(bytes(d.join(format!("gpu/{map}.tif"))) == bytes(d.join(format!("res/{map}.tif"))), "resumed {map}");
    }
    // the droplet model on the GPU: the same bytes twice, exact books, and a run stopped at a
    // checkpoint (a whole number of GPU batches) and resumed ends where a straight one does
    let droplets = |out: &'static str, n: &'static str, extra: &[&'static str]| {
        let mut args = vec![
            "simulate",
            "droplet",
            "t.tif",
            "-o",
            out,
            "--droplets",
            n,
            "--backend",
            "gpu",
            "--outputs",
            "all",
            "-q",
        ];
        args.extend_from_slice(extra);
        ok(&args, d);
    };
    droplets("dg1", "4096", &[]);
    droplets("dg2", "4096", &[]);
    droplets("dgr", "2048", &["--checkpoint-every", "2048"]);
    droplets("dgr", "4096", &["--resume"]);
    let r = report(&d.join("dg1"));
    assert_eq!(r["backend"], "gpu");
    // asked for explicitly, the GPU runs even where its batches are tiny, with a note
    let out = erode(&["simulate", "droplet", "t.tif", "-o", "dgn", "--droplets", "8", "--backend", "gpu"], d);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && err.contains("note: a GPU batch holds 3 droplets on this map"), "{err}");
    assert_eq!(report(&d.join("dgn"))["backend"], "gpu");
    assert_eq!(r["books"]["terms"]["books_relative_error"]["value"], 0.0);
    assert!(r["books"]["terms"]["eroded"]["value"].as_f64().unwrap() > 0.0);
    for map in ["height", "erosion", "deposition", "flow"] {
        let one = bytes(d.join(format!("dg1/{map}.tif")));
        assert!(one == bytes(d.join(format!("dg2/{map}.tif"))), "GPU droplets: {map} differs between runs");
        assert!(one == bytes(d.join(format!("dgr/{map}.tif"))), "GPU droplets: resumed {map} differs");
    }
}

#[test]
fn on_real_dems_the_gpu_follows_the_cpu() {
    // CPU and GPU agree on a real DEM (mean |dh| <= 5 % of the mean change, books balanced).
    // The shaders have no holes in their domain: the terra DEM's nodata cells are refused on the
    // GPU (and `auto` runs it on the CPU); the comparison runs on it with its holes filled.
    for name in ["terra-elev.tif", "lidar-dem.tif"] {
        let Some(dem) = testdata(name) else { continue };
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let loaded = erode_io::read(&dem, &Default::default()).unwrap();
        let dem = if loaded.map.nodata_count() > 0 {
            let gpu =
                ["simulate", "grid", dem.to_str().unwrap(), "-o", "holes", "--iterations", "1", "--backend", "gpu"];
            let out = erode(&gpu, d);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{name}: {err}");
            assert!(err.contains("nodata") || err.contains("GPU adapter"), "{name}: {err}");
            let filled = erode::Heightmap::with_nodata(loaded.map.heights.clone(), None).unwrap();
            let opts = erode_io::WriteOptions { georef: loaded.info.georef.clone(), ..Default::default() };
            erode_io::write(&d.join("filled.tif"), &filled, &opts).unwrap();
            d.join("filled.tif")
        } else {
            dem
        };
        let dem = dem.to_str().unwrap();
        let args = |out: &'static str, backend: &'static str| {
            vec![
                "simulate",
                "grid",
                dem,
                "-o",
                out,
                "--iterations",
                "100",
                "--set",
                "rain_rate=0.01",
                "--backend",
                backend,
                "-q",
            ]
        };
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_erode"))
            .args(args("gpu", "gpu"))
            .current_dir(d)
            .output()
            .unwrap();
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(std::env::var_os("ERODE_REQUIRE_GPU").is_none_or(|v| v != "1"), "ERODE_REQUIRE_GPU=1 but: {err}");
            return;
        }
        ok(&args("cpu", "cpu"), d);
        let g = report(&d.join("gpu"));
        assert_eq!(g["backend"], "gpu", "{name}");
        assert!(g["books"]["relative_error"].as_f64().unwrap() < 1e-5, "{name}: GPU books");
        let read = |p: &str| erode_io::read(&d.join(p), &Default::default()).unwrap().map.heights;
        let (start, cpu, gpu) = (read(dem), read("cpu/height.tif"), read("gpu/height.tif"));
        let mean = |a: &erode::Grid<f32>, b: &erode::Grid<f32>| {
            a.as_slice().iter().zip(b.as_slice()).map(|(&x, &y)| f64::from((x - y).abs())).sum::<f64>() / a.len() as f64
        };
        let (change, diff) = (mean(&start, &cpu), mean(&gpu, &cpu));
        assert!(change > 0.0 && diff <= 0.05 * change, "{name}: GPU differs by {diff}, mean change {change}");
    }
}

/// The default droplet run (one droplet per cell) on both real DEMs, measured with `erode
/// analyze`: relief (p99 − p1) kept to 85 %, closed depressions no more than 1.5 times the
/// input's. Measured 2026-11-24: the lidar DEM keeps 87 % of its relief, pits 488 -> 369 per
/// km²; the terra DEM (cells of ~750 m, beyond a 150 m path) 100 %, 0 -> 0.
#[test]
fn default_droplets_keep_the_relief_of_real_dems_and_add_no_pits() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for (k, name) in ["lidar-dem.tif", "terra-elev.tif"].iter().enumerate() {
        let Some(dem) = testdata(name) else { continue };
        let dem = dem.to_str().unwrap().to_string();
        let out = format!("dd{k}");
        ok(&["simulate", "droplet", &dem, "-o", &out, "-q"], d);
        let figures =
            |file: &str| -> serde_json::Value { serde_json::from_str(&ok(&["analyze", file, "--json"], d)).unwrap() };
        let (before, after) = (figures(&dem), figures(&format!("{out}/height.tif")));
        let relief = |f: &serde_json::Value| f["relief"]["p99"].as_f64().unwrap() - f["relief"]["p1"].as_f64().unwrap();
        let kept = relief(&after) / relief(&before);
        assert!(kept >= 0.85, "{name}: relief kept {kept}");
        let pits = |f: &serde_json::Value| f["depressions"]["per_km2"].as_f64().unwrap();
        assert!(pits(&after) <= 1.5 * pits(&before), "{name}: pits {} -> {} per km²", pits(&before), pits(&after));
    }
}

/// The ramp with a hole: `z = 0.3·column + 100` on 64² cells of 1 m with a 10 × 10 block of
/// −9999 declared nodata, written as a GeoTIFF (`GDAL_NODATA "-9999"`).
fn ramp_with_hole(path: &Path, hole: bool) {
    let heights = erode::Grid::from_fn(64, 64, erode::CellSize::square(1.0), |_, c| 0.3 * c as f32 + 100.0).unwrap();
    let in_hole = |i: usize| (27..37).contains(&(i / 64)) && (27..37).contains(&(i % 64));
    let mask = hole.then(|| (0..64 * 64).map(in_hole).collect());
    let map = erode::Heightmap::with_nodata(heights, mask).unwrap();
    let opts = erode_io::WriteOptions { nodata_value: Some(-9999.0), ..Default::default() };
    erode_io::write(path, &map, &opts).unwrap();
}

/// Largest height change of the cells within 2 cells of the hole (not in it), m.
fn ring_change(before: &Path, after: &Path) -> f64 {
    let (a, b) =
        (erode_io::read(before, &Default::default()).unwrap(), erode_io::read(after, &Default::default()).unwrap());
    let ring = (0..64 * 64).filter(|&i| {
        let (r, c) = (i / 64, i % 64);
        let hole = (27..37).contains(&r) && (27..37).contains(&c);
        !hole && (25..39).contains(&r) && (25..39).contains(&c)
    });
    ring.map(|i| f64::from(b.map.heights.as_slice()[i] - a.map.heights.as_slice()[i]).abs()).fold(0.0, f64::max)
}

#[test]
fn nodata_holes_are_boundaries_in_every_model() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ramp_with_hole(&d.join("rh.tif"), true);
    ramp_with_hole(&d.join("r.tif"), false);
    // the grid model at its defaults; the ring beside the hole used to drop 2.3 m (holes filled and eroded)
    ok(&["simulate", "grid", "rh.tif", "-o", "g", "--iterations", "300", "-q"], d);
    ok(&["simulate", "grid", "r.tif", "-o", "g0", "--iterations", "300", "-q"], d);
    let (holed, plain) = (
        ring_change(&d.join("rh.tif"), &d.join("g/height.tif")),
        ring_change(&d.join("r.tif"), &d.join("g0/height.tif")),
    );
    println!("grid: the ring beside the hole changed at most {holed:.4} m, without the hole {plain:.4} m");
    assert!(holed <= 2.0 * plain, "grid: {holed} m beside the hole, {plain} m without it");
    let r = report(&d.join("g"));
    assert!(r["books"]["relative_error"].as_f64().unwrap() < 1e-6, "grid books: {}", r["books"]);
    assert!(r["books"]["terms"]["water_outflow"]["value"].as_f64().unwrap() > 0.0);
    assert_eq!(info("g/height.tif", d)["nodata_count"], 100, "the hole is kept marked");
    // droplets
    ok(&["simulate", "droplet", "rh.tif", "-o", "p", "--droplets-per-cell", "2", "-q"], d);
    ok(&["simulate", "droplet", "r.tif", "-o", "p0", "--droplets-per-cell", "2", "-q"], d);
    let (holed, plain) = (
        ring_change(&d.join("rh.tif"), &d.join("p/height.tif")),
        ring_change(&d.join("r.tif"), &d.join("p0/height.tif")),
    );
    println!("droplets: the ring beside the hole changed at most {holed:.4} m, without the hole {plain:.4} m");
    assert!(holed <= 2.0 * plain, "droplets: {holed} m beside the hole, {plain} m without it");
    let r = report(&d.join("p"));
    assert_eq!(r["books"]["terms"]["books_relative_error"]["value"], 0.0);
    assert!(r["books"]["terms"]["terrain_relative_error"]["value"].as_f64().unwrap() < 1e-5);
    assert_eq!(info("p/height.tif", d)["nodata_count"], 100);
    // SPH on the heightmap: a walled shaft where the hole is; the sheet of water beside it
    // leaves through it, as through the map's edges: more than from the ramp without the hole
    let sph = ["simulate", "sph", "--iterations", "600", "--faces", "1500", "--particles", "800", "-q"];
    ok(&[&sph[..], &["rh.tif", "-o", "s"]].concat(), d);
    ok(&[&sph[..], &["r.tif", "-o", "s0"]].concat(), d);
    let (r, r0) = (report(&d.join("s")), report(&d.join("s0")));
    assert_eq!(r["finite"], true);
    assert!(r["books"]["relative_error"].as_f64().unwrap() < 1e-6, "SPH books: {}", r["books"]);
    let (holed, plain) = (
        r["details"]["particles"]["left_domain"].as_u64().unwrap(),
        r0["details"]["particles"]["left_domain"].as_u64().unwrap(),
    );
    println!("SPH: {holed} particles left with the hole, {plain} without");
    assert!(holed > plain + 20, "no water left through the hole: {holed} with it, {plain} without");
}

/// `erode analyze --json` of a map in `d`.
fn analysis(map: &str, d: &Path) -> serde_json::Value {
    serde_json::from_str(&ok(&["analyze", map, "--json", "-q"], d)).unwrap()
}

/// The share of a map's cells in closed depressions, percent.
fn flooded(a: &serde_json::Value) -> f64 {
    100.0 * a["depressions"]["cells"].as_f64().unwrap() / a["valid_cells"].as_f64().unwrap()
}

#[test]
fn the_grid_default_keeps_a_real_mountains_drainage_and_cliffs_and_makes_no_new_lakes() {
    // a real mountain DEM at 74 x 92 m cells, and the same land three times as steep (cliffs to
    // tan 2.2, as in high mountains): bedrock stands past the angle of repose
    let Some(dem) = testdata("jacksboro-dem.npy") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let dem = dem.to_str().unwrap();
    ok(&["convert", dem, "--cell-size", "74.4x92.5", "-o", "real.tif", "-q"], d);
    ok(&["rescale", "real.tif", "--factor", "3", "-o", "steep.tif", "-q"], d);
    for name in ["real", "steep"] {
        ok(&["simulate", "grid", &format!("{name}.tif"), "-o", name, "--outputs", "sediment_depth", "-q"], d);
        let (before, after) = (analysis(&format!("{name}.tif"), d), analysis(&format!("{name}/height.tif"), d));
        let steep = |a: &serde_json::Value| a["steep_slope"].as_f64().unwrap();
        assert!(
            steep(&after) >= 0.8 * steep(&before),
            "{name}: the steepest 1 % from {} before, {} after",
            steep(&before),
            steep(&after)
        );
        assert!(
            flooded(&after) <= flooded(&before) + 0.5,
            "{name}: {:.2} % of the map in closed depressions before, {:.2} % after",
            flooded(&before),
            flooded(&after)
        );
        if name == "real" {
            // the real DEM keeps its drainage: the slope–area law of its channels
            let fit = |a: &serde_json::Value, k: &str| a["slope_area"][k].as_f64().unwrap();
            let (t0, t1) = (fit(&before, "theta"), fit(&after, "theta"));
            let (r0, r1) = (fit(&before, "r_squared"), fit(&after, "r_squared"));
            assert!((t1 - t0).abs() <= 0.05, "slope–area θ {t0} -> {t1}");
            assert!((r1 - r0).abs() <= 0.03, "slope–area R² {r0} -> {r1}");
        }
        let r = report(&d.join(name));
        assert!(r["books"]["terms"]["deposited"]["value"].as_f64().unwrap() > 0.0, "{name}: nothing deposited");
        assert!(d.join(format!("{name}/sediment_depth.tif")).exists());
    }
}

#[test]
fn a_grid_run_goes_on_from_its_outputs_with_its_sediment_layer() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--kind", "ridged", "--size", "40", "--relief", "15", "-o", "t.tif", "-q"], d);
    ok(&["simulate", "grid", "t.tif", "-o", "first", "--iterations", "100", "--outputs", "sediment_depth", "-q"], d);
    let go_on = |out: &str, extra: &[&str]| {
        let mut args = vec![
            "simulate",
            "grid",
            "first/height.tif",
            "-o",
            out,
            "--iterations",
            "20",
            "-q",
            "--outputs",
            "sediment_depth",
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--checkpoint-every", "10"]);
        ok(&args, d);
    };
    go_on("with", &["--sediment-depth-map", "first/sediment_depth.tif"]);
    go_on("without", &[]);
    let (a, b) = (bytes(d.join("with/sediment_depth.tif")), bytes(d.join("without/sediment_depth.tif")));
    assert!(a != b, "the sediment depth map changed nothing");
    // the map is an input: resuming without it is refused
    let e = erode(&["simulate", "grid", "first/height.tif", "-o", "with", "--iterations", "30", "--resume", "-q"], d);
    assert_eq!(e.status.code(), Some(2), "{}", String::from_utf8_lossy(&e.stderr));
}

#[test]
fn a_map_wider_than_2048_cells_gets_a_preview_2048_pixels_wide() {
    // the preview is shrunk (each pixel the mean of the cells it covers), not cropped; the maps
    // keep every cell
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--width", "2100", "--height", "40", "--relief", "50", "--cell-size", "4", "-o", "wide.tif"], d);
    ok(&["simulate", "grid", "wide.tif", "-o", "out", "--iterations", "1", "--set", "start_water=\"dry\"", "-q"], d);
    let png = bytes(d.join("out/preview.png"));
    let size = |k: usize| u32::from_be_bytes(png[k..k + 4].try_into().unwrap());
    assert_eq!((size(16), size(20)), (2048, 39), "preview size");
    assert_eq!(info("out/height.tif", d)["width"], 2100);
}

#[test]
fn a_run_writes_the_height_by_default_and_other_maps_when_named() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "24", "-o", "t.tif", "-q"], d);
    let written = |out: &str| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(d.join(out))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "checkpoints")
            .collect();
        names.sort();
        names
    };
    ok(&["simulate", "grid", "t.tif", "-o", "plain", "--iterations", "3", "-q"], d);
    assert_eq!(written("plain"), ["height.tif", "preview.png", "report.json"]);
    ok(&["simulate", "grid", "t.tif", "-o", "two", "--iterations", "3", "--outputs", "flow,erosion", "-q"], d);
    assert_eq!(written("two"), ["erosion.tif", "flow.tif", "height.tif", "preview.png", "report.json"]);
    ok(&["simulate", "droplet", "t.tif", "-o", "all", "--droplets", "50", "--outputs", "all", "-q"], d);
    assert_eq!(written("all").len(), 4 + 2, "{:?}", written("all"));
    // an unknown name is refused before anything is read or written, naming the known ones
    let err =
        refused(&["simulate", "grid", "t.tif", "-o", "bad", "--outputs", "flow,drainage_area"], d, "drainage_area");
    assert!(err.contains("water, sediment") && err.contains("or all"), "{err}");
    assert!(!d.join("bad").exists());
}

/// A rain map given alone rains through it: `--rain-map` sets `rain_mode = "map"` (it was left
/// out, silently, unless the mode was set too).
#[test]
fn a_rain_map_given_alone_scales_the_rain() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "24", "--relief", "5", "-o", "t.tif"], d);
    let half: Vec<u8> = [0.5f32; 24 * 24].iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(d.join("half.r32"), half).unwrap();
    ok(&["convert", "half.r32", "-o", "half.tif"], d);
    let rain = |out: &str, map: Option<&str>| {
        let mut a = vec!["simulate", "grid", "t.tif", "-o", out, "--iterations", "20", "-q"];
        a.extend(map.iter().flat_map(|m| ["--rain-map", *m]));
        ok(&a, d);
        let r = report(&d.join(out));
        assert_eq!(r["params"]["rain_mode"], if map.is_some() { "map" } else { "uniform" }, "{out}");
        // the rain a simulated second (the steps' length follows the water)
        r["books"]["terms"]["rain"]["value"].as_f64().unwrap() / r["simulated_seconds"].as_f64().unwrap()
    };
    let (even, half) = (rain("even", None), rain("half", Some("half.tif")));
    assert!(even > 0.0);
    assert!((half / even - 0.5).abs() < 1e-6, "rain {half} m³/s through a map of 0.5, {even} m³/s without");
}

/// The heights of a map file.
fn heights(path: &Path) -> Vec<f32> {
    erode_io::read(path, &Default::default()).unwrap().map.heights.into_vec()
}

/// The correlation of two runs' height changes from `input`.
fn change_correlation(input: &[f32], one: &[f32], other: &[f32]) -> f64 {
    let change = |h: &[f32]| h.iter().zip(input).map(|(&h, &z)| f64::from(h) - f64::from(z)).collect::<Vec<_>>();
    let (a, b) = (change(one), change(other));
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(&b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let var = |v: &[f64], m: f64| v.iter().map(|x| (x - m) * (x - m)).sum::<f64>();
    cov / (var(&a, ma) * var(&b, mb)).sqrt()
}

/// `erode` in `dir` under GNU time when it is installed: stdout, and the peak resident size in
/// bytes (`None` without GNU time).
fn erode_peak(args: &[&str], dir: &Path) -> Option<u64> {
    let gnu_time = Path::new("/usr/bin/time");
    if !gnu_time.exists() {
        eprintln!("not measuring peak memory: /usr/bin/time not found (apt-get install time)");
        ok(args, dir);
        return None;
    }
    let report = dir.join("peak.txt");
    let out = std::process::Command::new(gnu_time)
        .args(["-f", "%M", "-o"])
        .arg(&report)
        .arg(env!("CARGO_BIN_EXE_erode"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "erode {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&report).unwrap();
    std::fs::remove_file(&report).unwrap();
    text.lines().last().and_then(|l| l.trim().parse::<u64>().ok()).map(|kb| kb * 1024)
}

/// A map whose run needs more memory than the limit the test sets runs in tiles under it, and its
/// heights follow one run's over the whole map: height change correlated >= 0.99, no step across
/// a tile's edge steeper than one run's there by more than the 99th percentile of all steps. A
/// run stopped between tiles goes on to the same bytes.
#[test]
fn a_map_over_the_memory_limit_runs_in_tiles_without_seams() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let size = 2048;
    let map = ["generate", "--size", "2048", "--cell-size", "30", "--relief", "1500", "--feature-size", "512"];
    ok(&[&map[..], &["--seed", "1", "-o", "m.tif"]].concat(), d);
    let run = ["simulate", "grid", "m.tif", "--iterations", "60", "-q"];
    fn with<'a>(run: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
        run.iter().chain(more).copied().collect()
    }
    // one run needs ~735 MB by the estimate, tiles of 512 ~281 MB
    let (limit, bytes_limit) = ("400M", 400u64 << 20);
    let err = refused(&with(&run, &["-o", "refused", "--max-memory", limit]), d, "--max-memory");
    assert!(err.contains("--tiles"), "the refusal names the way out: {err}");
    assert!(!d.join("refused").exists());
    let whole_peak = erode_peak(&with(&run, &["-o", "whole"]), d);
    let tiled = with(
        &run,
        &["-o", "tiled", "--tiles", "512", "--overlap", "32", "--max-memory", limit, "--checkpoint-every", "60"],
    );
    let tiled_peak = erode_peak(&tiled, d);
    if let (Some(whole), Some(tiles)) = (whole_peak, tiled_peak) {
        eprintln!("peak resident size: one run {} MB, in tiles {} MB", whole >> 20, tiles >> 20);
        assert!(whole > bytes_limit, "one run peaked at {} MB, within the limit: the test proves nothing", whole >> 20);
        assert!(tiles <= bytes_limit, "the tiled run peaked at {} MB, over the limit", tiles >> 20);
    }
    let r = report(&d.join("tiled"));
    assert_eq!(r["details"]["tiles"]["count"], 16);
    assert_eq!(r["progress"]["done"], 16 * 60);
    assert!(r["books"]["relative_error"].as_f64().unwrap() < 1e-5, "{}", r["books"]);

    let (input, whole, tiles) =
        (heights(&d.join("m.tif")), heights(&d.join("whole/height.tif")), heights(&d.join("tiled/height.tif")));
    let correlation = change_correlation(&input, &whole, &tiles);
    // each step between neighbours (along rows, then columns), and those across the cores' edges
    let step = |h: &[f32], i: usize, j: usize| f64::from((h[i] - h[j]).abs());
    let mut steps = Vec::new();
    let mut excess: f64 = 0.0;
    for r in 0..size {
        for c in 1..size {
            for (i, j) in [(r * size + c, r * size + c - 1), (c * size + r, (c - 1) * size + r)] {
                steps.push(step(&tiles, i, j));
                if c % 512 == 0 {
                    excess = excess.max(step(&tiles, i, j) - step(&whole, i, j));
                }
            }
        }
    }
    steps.sort_by(f64::total_cmp);
    let p99 = steps[steps.len() * 99 / 100];
    eprintln!(
        "height change correlation {correlation:.5}; across the edges at most {excess:.3} m steeper than one run, 99th percentile step {p99:.3} m"
    );
    assert!(correlation >= 0.99, "height change correlation {correlation}");
    assert!(excess <= p99, "a step {excess} m steeper than one run's across a tile's edge (99th percentile {p99} m)");

    // the run stopped after its 15th tile goes on from there to the same bytes
    let checkpoints = d.join("tiled/checkpoints");
    std::fs::remove_file(checkpoints.join(format!("grid-{:012}.ckpt", 16 * 60))).unwrap();
    let straight = bytes(d.join("tiled/height.tif"));
    let mut again = tiled.clone();
    again.push("--resume");
    ok(&again, d);
    assert_eq!(bytes(d.join("tiled/height.tif")), straight, "resumed between tiles");
    assert_eq!(report(&d.join("tiled"))["progress"]["resumed_from"], 15 * 60);
}

/// A real DEM's flats and ponds cut by tile edges stay put: a tile's open edges let its water run
/// down to the whole map's steady surface beyond them, not to dry ground (which drained every
/// pond an edge cut and eroded 71 times what one run does: correlation 0.03).
#[test]
fn tiles_of_a_real_dem_keep_the_ponds_their_edges_cut() {
    let Some(dem) = testdata("lidar-dem.tif") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let dem = dem.to_str().unwrap();
    let run = |out: &str, more: &[&str]| {
        let args = [&["simulate", "grid", dem, "-o", out, "--iterations", "300", "-q"], more].concat();
        ok(&args, d);
    };
    run("whole", &[]);
    run("tiled", &["--tiles", "128", "--overlap", "32"]);
    let input = heights(Path::new(dem));
    let correlation =
        change_correlation(&input, &heights(&d.join("whole/height.tif")), &heights(&d.join("tiled/height.tif")));
    let books = |out: &str| report(&d.join(out))["books"]["terms"]["eroded"]["value"].as_f64().unwrap();
    eprintln!(
        "height change correlation {correlation:.5}; eroded {:.0} m³ in tiles, {:.0} m³ in one run",
        books("tiled"),
        books("whole")
    );
    assert!(correlation >= 0.99, "height change correlation {correlation}");
    // the overlaps count in every tile that ran them, so the tiles' books hold more than one run's
    assert!(books("tiled") < 3.0 * books("whole"), "tiles eroded {} m³, one run {} m³", books("tiled"), books("whole"));
}
