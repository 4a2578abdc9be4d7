//! `report.json` has one shape for every model: the same keys, each book term once with its
//! unit, stage timers only for stages that ran, and where the run came from.

use crate::common;

use common::ok;

/// The keys of every run's `report.json`, in every model.
const KEYS: [&str; 20] = [
    "adapter",
    "backend",
    "books",
    "command",
    "details",
    "erode",
    "files",
    "finite",
    "input",
    "map",
    "model",
    "params",
    "preset",
    "progress",
    "report",
    "seconds",
    "simulated_seconds",
    "stage_seconds",
    "stopped",
    "threads",
];

#[test]
fn every_models_report_has_one_shape() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "40", "-o", "t.tif"], d);
    let written: [(&str, &[&str], &str, u64); 5] = [
        ("grid", &["simulate", "grid", "t.tif", "-o", "grid", "--iterations", "30", "-q"], "iteration", 30),
        ("droplet", &["simulate", "droplet", "t.tif", "-o", "droplet", "--droplets", "500", "-q"], "droplet", 500),
        (
            "stream-power",
            &["simulate", "stream-power", "t.tif", "-o", "stream-power", "--years", "5e4", "-q"],
            "step",
            5,
        ),
        (
            "sph",
            &["simulate", "sph", "--scene", "tank", "--particles", "300", "--iterations", "4", "-o", "sph", "-q"],
            "iteration",
            4,
        ),
        ("demo", &["demo", "-o", "demo", "--size", "32", "--iterations", "12", "-q"], "iteration", 12),
    ];
    let mut runs: Vec<(String, Vec<String>, &str, u64)> =
        written.iter().map(|(n, a, u, d)| (n.to_string(), a.iter().map(|a| a.to_string()).collect(), *u, *d)).collect();
    // and every model made from the list, through its own subcommand
    for info in erode::models::MODELS.iter() {
        let Some(maker) = info.make else { continue };
        let count = format!("--{}", maker.unit.plural());
        let args = ["simulate", info.name, "t.tif", "-o", info.name, &count, "12", "-q"];
        runs.push((info.name.to_string(), args.iter().map(|a| a.to_string()).collect(), maker.unit.name(), 12));
    }
    for (name, args, unit, done) in &runs {
        let (name, unit, done) = (name.as_str(), *unit, *done);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        ok(&args, d);
        let text = std::fs::read_to_string(d.join(name).join("report.json")).unwrap();
        let r: serde_json::Value = serde_json::from_str(&text).unwrap();
        let keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, KEYS, "{name}: the report's keys");
        assert_eq!(r["report"], 2, "{name}");
        assert_eq!(r["erode"], env!("CARGO_PKG_VERSION"), "{name}");
        assert_eq!(r["model"], if name == "demo" { "grid" } else { name }, "{name}");
        // provenance: the command as given, the input's hash
        let command: Vec<&str> = r["command"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        assert_eq!(&command[1..], args, "{name}: the command");
        let hash = r["input"]["hash"].as_str().unwrap();
        assert!(hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()), "{name}: hash {hash}");
        assert!(r["input"]["given"].is_string(), "{name}");
        // how far it went, in the model's unit
        let p = &r["progress"];
        assert_eq!(
            (p["unit"].as_str(), p["done"].as_u64(), p["this_run"].as_u64()),
            (Some(unit), Some(done), Some(done))
        );
        assert!(p["resumed_from"].is_null() && p["per_second"].as_f64().unwrap() > 0.0, "{name}: {p}");
        // the books: each term once, a value with its unit, none with its unit in its name
        let terms = r["books"]["terms"].as_object().unwrap();
        assert!(!terms.is_empty() && r["books"]["relative_error"].is_f64(), "{name}");
        for (term, v) in terms {
            assert!(v["value"].is_number(), "{name}: {term} {v}");
            assert!(["m³", "1"].contains(&v["unit"].as_str().unwrap()), "{name}: {term} {v}");
            assert!(!term.ends_with("_m3"), "{name}: {term}: the unit goes beside the name");
        }
        assert!(terms.contains_key("eroded") && terms.contains_key("deposited") || name == "stream-power", "{name}");
        // stages that ran, and only those
        for (stage, t) in r["stage_seconds"].as_object().unwrap() {
            assert!(t.as_f64().unwrap() > 0.0, "{name}: stage {stage} never ran");
        }
        assert_eq!(r["stage_seconds"].as_object().unwrap().is_empty(), name == "droplet", "{name}: stage timers");
        // a heightmap model's map, none for a mesh
        assert_eq!(r["map"].is_null(), name == "sph", "{name}: {}", r["map"]);
        if !r["map"].is_null() {
            assert!(r["map"]["width"].as_u64().unwrap() >= 32 && r["map"]["cell_size"]["x"].is_f64(), "{name}");
        }
        assert_eq!(r["preset"].is_null(), name == "sph", "{name}");
        assert!(r["params"].is_object() && r["details"].is_object() && r["files"].is_array(), "{name}");
        assert!(r["finite"] == true && r["stopped"].is_null(), "{name}");
    }
    // the demo cannot be resumed: no checkpoint left behind
    assert!(!d.join("demo/checkpoints").exists());
}
