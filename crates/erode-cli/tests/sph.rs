//! `erode simulate sph`: built-in scenes, a scene file with a mesh, a heightmap, and refusals.

use crate::common;

use std::path::Path;

use common::{ok, refused, testdata};

fn report(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap()
}

#[test]
fn the_tunnel_scene_erodes_with_balanced_books_and_writes_every_output() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(
        &[
            "simulate",
            "sph",
            "--scene",
            "tunnel",
            "--particles",
            "1500",
            "--iterations",
            "1500",
            "--snapshot-every",
            "500",
            "-o",
            "out",
            "-q",
        ],
        d,
    );
    for f in [
        "mesh.obj",
        "mesh.ply",
        "mesh.glb",
        "start.ply",
        "particles.ply",
        "snapshots/particles-00001000.ply",
        "preview.png",
        "start.png",
        "snapshots/mesh-00000500.png",
        "snapshots/mesh-00001000.png",
    ] {
        assert!(d.join("out").join(f).is_file(), "{f} missing");
    }
    let r = report(&d.join("out"));
    assert_eq!(r["progress"]["done"], 1500);
    assert!(r["stopped"].is_null());
    let books = &r["books"];
    assert!(books["terms"]["eroded"]["value"].as_f64().unwrap() > 0.0, "{books}");
    assert!(books["relative_error"].as_f64().unwrap() <= 1e-6, "{books}");
    // the written mesh reads back closed
    let mesh = erode_io::mesh::read_mesh(&d.join("out/mesh.ply")).unwrap();
    mesh.validate(true, 0.0).unwrap();
    assert_eq!(mesh.faces.len(), r["details"]["faces"].as_u64().unwrap() as usize);
}

#[test]
fn the_lake_scene_runs_at_the_papers_sizes() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["simulate", "sph", "--scene", "lake", "--iterations", "20", "-o", "out", "-q"], d);
    let r = report(&d.join("out"));
    // particles as far apart as 12,528 fill the basin to the brim; at rest at its sill it holds
    // fewer, and its stream brings more
    let spacing = r["details"]["spacing"].as_f64().unwrap();
    assert!((0.031..0.0325).contains(&spacing), "spacing {spacing} m");
    let at_rest = r["details"]["particles"]["start"].as_u64().unwrap();
    assert!((1_000..12_528).contains(&at_rest), "{at_rest} particles at rest");
    let faces = r["details"]["faces"].as_u64().unwrap();
    assert!(faces.abs_diff(9_068) < 200, "{faces} faces");
    assert!(r["books"]["relative_error"].as_f64().unwrap() <= 1e-6);
}

#[test]
fn a_scene_file_with_a_mesh_and_a_heightmap_input_run() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // a 1 m cube (outward faces) with water dropped on it
    let cube = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nv 0 0 1\nv 1 0 1\nv 0 1 1\nv 1 1 1\n\
                f 1 3 2\nf 2 3 4\nf 5 6 7\nf 6 8 7\nf 1 2 5\nf 2 6 5\nf 3 7 4\nf 4 7 8\nf 1 5 3\nf 3 5 7\nf 2 4 6\nf 4 8 6\n";
    std::fs::write(d.join("cube.obj"), cube).unwrap();
    std::fs::write(
        d.join("scene.toml"),
        "mesh = \"cube.obj\"\nparticles = 800\n[[blocks]]\nmin = [0.2, 0.2, 1.05]\nmax = [0.8, 0.8, 1.3]\n[params]\nerosion_rate = 1e-3\n",
    )
    .unwrap();
    ok(&["simulate", "sph", "--scene", "scene.toml", "--iterations", "200", "-o", "a", "-q"], d);
    let r = report(&d.join("a"));
    assert_eq!(r["details"]["particles"]["start"], 800);
    assert_eq!(r["params"]["erosion_rate"], 1e-3);
    ok(&["generate", "--size", "64", "--seed", "3", "-o", "t.tif"], d);
    ok(
        &["simulate", "sph", "t.tif", "--particles", "1500", "--faces", "2000", "--iterations", "30", "-o", "b", "-q"],
        d,
    );
    let r = report(&d.join("b"));
    assert!(r["details"]["faces"].as_u64().unwrap() > 1500);
    assert!(r["books"]["relative_error"].as_f64().unwrap() <= 1e-6);
}

/// The real DEMs run as scale models: the water stays under the speed bound the sound speed was
/// set for, the surface erodes, the books balance, and the meshes come back in the DEM's metres.
#[test]
fn the_real_dems_erode_as_scale_models_under_their_speed_bound() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for (name, lowest, highest) in [("lidar-dem.tif", 379.0, 411.0), ("terra-elev.tif", 140.0, 548.0)] {
        let Some(dem) = testdata(name) else { return };
        let dem = dem.to_str().unwrap();
        let args = ["simulate", "sph", dem, "--particles", "3000", "--faces", "3000", "--iterations", "600", "-q"];
        ok(&[&args[..], &["-o", name]].concat(), d);
        let r = report(&d.join(name));
        let (top, bound) =
            (r["details"]["top_speed"].as_f64().unwrap(), r["details"]["derived"]["top_speed_bound"].as_f64().unwrap());
        println!("{name}: top speed {top:.3} m/s, bound {bound:.3} m/s; {}", r["details"]["scale_model"]);
        assert!(top > 0.3 * bound && top <= bound, "{name}: top speed {top} against the bound {bound}");
        assert!(r["books"]["relative_error"].as_f64().unwrap() <= 1e-6, "{name}: {}", r["books"]);
        assert_eq!(r["details"]["particles"]["unaccounted"], 0);
        assert!(r["details"]["scale_model"]["terrain_eroded_m3"].as_f64().unwrap() > 0.0, "{name}: nothing eroded");
        // the mesh written is in the DEM's metres: its top between the DEM's lowest and highest
        let obj = std::fs::read_to_string(d.join(name).join("mesh.obj")).unwrap();
        let top_z = obj
            .lines()
            .filter_map(|l| l.strip_prefix("v "))
            .map(|l| l.split_whitespace().nth(2).unwrap().parse::<f64>().unwrap())
            .fold(f64::NEG_INFINITY, f64::max);
        assert!((lowest..=highest).contains(&top_z), "{name}: mesh top at {top_z} m");
    }
}

#[test]
fn bad_sph_input_is_refused_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    refused(&["simulate", "sph", "-o", "out"], d, "needs a mesh or heightmap");
    std::fs::write(d.join("open.obj"), "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\n").unwrap();
    refused(&["simulate", "sph", "open.obj", "-o", "out"], d, "not closed");
    refused(&["simulate", "sph", "open.obj", "--scene", "lake", "-o", "out"], d, "brings its own mesh");
    refused(&["simulate", "sph", "--scene", "tank", "--set", "cfl=3", "-o", "out"], d, "cfl");
    refused(&["simulate", "sph", "--scene", "tank", "--set", "sound_speed=2", "-o", "out"], d, "sound_speed");
    refused(&["simulate", "sph", "--scene", "moon", "-o", "out"], d, "--scene moon");
    refused(&["simulate", "grid", "-o", "out"], d, "needs an input heightmap");
    assert!(!d.join("out/report.json").exists(), "no partial output");
}

/// Water let in and taken out from the command line and from a scene file: a tank fed from above
/// with a sink in a corner; every particle booked; the report says so.
#[test]
fn emitters_and_sinks_from_the_command_line_and_a_scene_file() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let stream = "{ centre = [0.2, 0.2, 0.5], velocity = [0, 0, -1.5], radius = 0.1 }";
    let corner = "{ min = [-1, -1, -1], max = [0.1, 0.1, 0.1] }";
    let args = ["simulate", "sph", "--scene", "tank", "--particles", "2000", "--iterations", "1500", "-q"];
    ok(&[&args[..], &["--emitter", stream, "--sink", corner, "--particle-cap", "5000", "-o", "a"]].concat(), d);
    let r = report(&d.join("a"));
    let p = &r["details"]["particles"];
    assert!(p["let_in"].as_u64().unwrap() > 100 && p["left_domain"].as_u64().unwrap() > 0, "{p}");
    assert_eq!(p["unaccounted"], 0);
    assert!(r["books"]["terms"]["water_in"]["value"].as_f64().unwrap() > 0.0);
    // the same as a scene file: the same particles
    let cube = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nv 0 0 1\nv 1 0 1\nv 0 1 1\nv 1 1 1\n\
                f 1 3 2\nf 2 3 4\nf 5 6 7\nf 6 8 7\nf 1 2 5\nf 2 6 5\nf 3 7 4\nf 4 7 8\nf 1 5 3\nf 3 5 7\nf 2 4 6\nf 4 8 6\n";
    std::fs::write(d.join("cube.obj"), cube).unwrap();
    std::fs::write(
        d.join("fed.toml"),
        "mesh = \"cube.obj\"\nspacing = 0.04\nparticle_cap = 2000\n\
         [[emitters]]\ncentre = [0.5, 0.5, 1.4]\nvelocity = [0.0, 0.0, -3.0]\nsize = [0.2, 0.2]\n\
         [[sinks]]\nmin = [-5.0, -5.0, -5.0]\nmax = [5.0, 5.0, 0.9]\n",
    )
    .unwrap();
    ok(&["simulate", "sph", "--scene", "fed.toml", "--iterations", "1000", "-o", "b", "-q"], d);
    let p = report(&d.join("b"))["details"]["particles"].clone();
    assert!(p["start"] == 0 && p["let_in"].as_u64().unwrap() > 0 && p["unaccounted"] == 0, "{p}");
}

/// An emitter in the solid or outside the domain, a rate past what its opening carries, a
/// morphological factor past its bound, a malformed table: one line naming it, exit 2, nothing
/// written.
#[test]
fn bad_emitters_and_factors_are_refused_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let tunnel = ["simulate", "sph", "--scene", "tunnel", "--particles", "1000", "-o", "out"];
    fn with<'a>(tunnel: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
        [tunnel, extra].concat()
    }
    let in_solid = "{ centre = [1.0, 0.5, 0.0], velocity = [1, 0, 0], radius = 0.05 }";
    refused(&with(&tunnel, &["--emitter", in_solid]), d, "emitter centre");
    let far = "{ centre = [1.0, 0.0, 9.0], velocity = [1, 0, 0], radius = 0.05 }";
    refused(&with(&tunnel, &["--emitter", far]), d, "domain");
    let fast = "{ centre = [1.0, 0.0, 0.0], velocity = [1, 0, 0], radius = 0.05, rate = 5 }";
    refused(&with(&tunnel, &["--emitter", fast]), d, "emitter rate");
    refused(&with(&tunnel, &["--emitter", "{ centre = [1, 0, 0] }"]), d, "--emitter");
    refused(&with(&tunnel, &["--sink", "{ min = [1, 1, 1], max = [0, 0, 0] }"]), d, "sink");
    refused(&with(&tunnel, &["--set", "morphological_factor=5000"]), d, "morphological_factor");
    assert!(!d.join("out").exists(), "no partial output");
}

/// `--checkpoint-every` and `--resume`: a run stopped at 300 iterations and resumed to 600 (on
/// another thread count) writes the same particles, mesh, books and top speed as a straight run
/// of 600 (the overflow has begun eroding by then); a damaged checkpoint is refused by name.
#[test]
fn a_resumed_sph_run_equals_a_straight_one() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let base = ["simulate", "sph", "--scene", "lake", "--particles", "2000", "-q"];
    let run = |extra: &[&str]| ok(&[&base[..], extra].concat(), d);
    run(&["--iterations", "600", "-o", "straight"]);
    run(&["--iterations", "300", "--checkpoint-every", "200", "-o", "parts", "--threads", "1"]);
    let ckpts: Vec<String> = std::fs::read_dir(d.join("parts/checkpoints"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(ckpts.contains(&"sph-000000000300.ckpt".to_string()), "{ckpts:?}");
    assert!(ckpts.contains(&"sph-000000000200.ckpt".to_string()), "{ckpts:?}");
    run(&["--iterations", "600", "--resume", "-o", "parts", "--threads", "2"]);
    let r = report(&d.join("parts"));
    assert_eq!(r["progress"]["done"], 600);
    assert_eq!(r["progress"]["resumed_from"], 300);
    assert!(r["books"]["terms"]["eroded"]["value"].as_f64().unwrap() > 0.0);
    for f in ["particles.ply", "mesh.ply"] {
        let (a, b) =
            (std::fs::read(d.join("straight").join(f)).unwrap(), std::fs::read(d.join("parts").join(f)).unwrap());
        assert!(a == b, "{f}: the resumed run differs from the straight one");
    }
    let straight = report(&d.join("straight"));
    assert_eq!(straight["books"], r["books"]);
    // the top speed is the whole run's, also where it came before the resume
    assert_eq!(straight["details"]["top_speed"], r["details"]["top_speed"]);
    assert!(r["details"]["top_speed"].as_f64().unwrap() > 0.0);
    // a flipped byte in the newest checkpoint
    let newest = d.join("parts/checkpoints/sph-000000000600.ckpt");
    let mut bytes = std::fs::read(&newest).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    std::fs::write(&newest, bytes).unwrap();
    refused(&[&base[..], &["--iterations", "800", "--resume", "-o", "parts"]].concat(), d, "sph-000000000600.ckpt");
}
