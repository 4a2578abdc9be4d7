//! `erode simulate stream-power`: a range grows from a noisy plain with the drainage of real
//! rivers (checked by `erode analyze`), a real DEM re-erodes, a resumed run ends where a straight
//! one does, and bad input is refused naming what is wrong with nothing written.

use crate::common;

use common::*;

fn report(dir: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap()
}

#[test]
fn a_noisy_plain_grows_a_range_whose_rivers_follow_flints_law() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--kind", "noise", "--size", "128", "--relief", "1", "--cell-size", "100", "-o", "plain.tif"], d);
    let args = ["-q", "simulate", "stream-power", "plain.tif", "-o", "range", "--years", "1e7", "--dt-years", "1e5"];
    ok(&[&args[..], &["--outputs", "all"]].concat(), d);
    for name in ["height.tif", "drainage_area.tif", "erosion_rate.tif", "uplift.tif", "preview.png", "report.json"] {
        assert!(d.join("range").join(name).is_file(), "{name} missing");
    }
    let r = report(&d.join("range"));
    assert_eq!(r["progress"]["done"], 100);
    assert!(r["books"]["relative_error"].as_f64().unwrap() < 1e-9, "{r}");
    // uplift 1 mm/yr over 10 Myr against rivers: a range of a few hundred metres, not 10 km
    let relief = r["details"]["relief_m"].as_f64().unwrap();
    assert!((200.0..3000.0).contains(&relief), "relief {relief}");
    let f: serde_json::Value = serde_json::from_str(&ok(&["analyze", "range/height.tif", "--json"], d)).unwrap();
    let theta = f["slope_area"]["theta"].as_f64().unwrap();
    let r2 = f["slope_area"]["r_squared"].as_f64().unwrap();
    assert!((theta - 0.45).abs() <= 0.02 && r2 >= 0.98, "θ {theta}, R² {r2}");
    // every step ends on a surface that drains
    assert_eq!(f["depressions"]["count"], 0, "{}", f["depressions"]);
}

#[test]
fn a_real_dem_re_erodes_and_keeps_its_georeference() {
    let Some(dem) = testdata("terra-elev.tif") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let dem = dem.to_str().unwrap();
    ok(
        &[
            "-q",
            "simulate",
            "stream-power",
            dem,
            "-o",
            "out",
            "--years",
            "2e5",
            "--dt-years",
            "1e4",
            "--set",
            "uplift=0",
        ],
        d,
    );
    let r = report(&d.join("out"));
    let books = &r["books"];
    assert!(
        books["terms"]["eroded"]["value"].as_f64().unwrap() > 0.0
            && books["terms"]["uplifted"]["value"].as_f64().unwrap() == 0.0,
        "{books}"
    );
    assert!(books["relative_error"].as_f64().unwrap() < 1e-9, "{books}");
    // the output lies where the input does, with the same nodata
    let (a, b) = (info(dem, d), info("out/height.tif", d));
    assert_eq!(a["georeference"], b["georeference"]);
    assert_eq!(a["nodata_count"], b["nodata_count"]);
}

#[test]
fn a_resumed_run_ends_where_a_straight_one_does() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--kind", "noise", "--size", "64", "--cell-size", "100", "--relief", "1", "-o", "p.tif"], d);
    let run = |out: &str, years: &str, more: &[&str]| {
        let mut args =
            vec!["-q", "simulate", "stream-power", "p.tif", "-o", out, "--years", years, "--dt-years", "2e4"];
        args.extend_from_slice(more);
        ok(&args, d);
    };
    run("straight", "8e5", &[]);
    run("parts", "4e5", &["--checkpoint-every", "1000"]);
    run("parts", "8e5", &["--resume"]);
    let read = |p: &str| std::fs::read(d.join(p).join("height.tif")).unwrap();
    assert!(read("straight") == read("parts"), "resumed run differs");
    assert_eq!(report(&d.join("parts"))["progress"]["done"], 40);
}

#[test]
fn bad_input_is_refused_naming_it_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--kind", "noise", "--size", "32", "--cell-size", "100", "-o", "p.tif"], d);
    ok(&["generate", "--kind", "noise", "--size", "16", "-o", "small.tif"], d);
    let sp = |more: &[&str]| {
        let mut a = vec!["simulate", "stream-power", "p.tif", "-o", "out"];
        a.extend_from_slice(more);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    for (args, needle) in [
        (sp(&["--set", "n=0"]), "`n`"),
        (sp(&["--set", "m=nan"]), "`m`"),
        (sp(&["--set", "erodibility=-1"]), "`erodibility`"),
        (sp(&["--set", "diffusivity=-0.5"]), "`diffusivity`"),
        (sp(&["--set", "uplift=inf"]), "`uplift`"),
        (sp(&["--dt-years", "0"]), "`dt_years`"),
        (sp(&["--years", "-1"]), "--years"),
        (sp(&["--set", "open_edges=x"]), "open_edges"),
        (sp(&["--set", "open_edges="]), "no base level"),
        (sp(&["--set", "flow=dinf"]), "`flow`"),
        (sp(&["--set", "flow_exponent=-1"]), "`flow_exponent`"),
        (sp(&["--uplift-map", "small.tif"]), "small.tif"),
        (sp(&["--preset", "alps"]), "alps"),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&args, d, needle);
        assert!(!d.join("out").exists(), "{args:?} left an output folder");
    }
    // a closed domain with a sea is fine
    ok(
        &[
            "-q",
            "simulate",
            "stream-power",
            "p.tif",
            "-o",
            "sea",
            "--years",
            "1e4",
            "--set",
            "open_edges=",
            "--set",
            "sea_level=0.5",
        ],
        d,
    );
    // the parameters print as TOML that reads back
    let toml = ok(&["params", "stream-power", "--preset", "nonlinear"], d);
    std::fs::write(d.join("sp.toml"), toml).unwrap();
    ok(&["-q", "simulate", "stream-power", "p.tif", "-o", "nl", "--years", "2e4", "--params", "sp.toml"], d);
    assert_eq!(report(&d.join("nl"))["params"]["n"], 2.0);
}
