//! `erode analyze`: figures as text and JSON, maps and plots, nodata as outlets, bad input.

use crate::common;

use common::*;

fn figures(args: &[&str], dir: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&ok(args, dir)).unwrap()
}

#[test]
fn figures_maps_and_plots_of_a_terrain() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "128", "--seed", "3", "--relief", "300", "--cell-size", "10", "-o", "t.tif"], d);
    let text = ok(&["analyze", "t.tif"], d);
    for word in ["slope–area", "drainage", "depressions", "hypsometric", "fine relief"] {
        assert!(text.contains(word), "summary lacks {word}: {text}");
    }
    let f = figures(&["analyze", "t.tif", "--json"], d);
    assert!(f["slope_area"]["theta"].as_f64().unwrap() < 0.3, "noise looks fluvial: {f}");
    assert_eq!(f["width"], 128);
    assert!(!f.to_string().contains("NaN"));
    ok(&["analyze", "t.tif", "-o", "maps", "--format", "tif,npy"], d);
    for name in [
        "drainage_area.tif",
        "drainage_area_mfd.npy",
        "slope.tif",
        "plan_curvature.tif",
        "channels.png",
        "slope-area.png",
        "analysis.json",
    ] {
        assert!(d.join("maps").join(name).is_file(), "{name} missing");
    }
    // the plot is a real image, not an empty canvas
    let png = std::fs::read(d.join("maps/slope-area.png")).unwrap();
    assert!(png.len() > 10_000, "slope-area.png is {} bytes", png.len());
}

#[test]
fn flat_maps_give_figures_and_bad_input_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--kind", "ramp", "--size", "16", "--relief", "0", "-o", "flat.tif"], d);
    let f = figures(&["analyze", "flat.tif", "--json"], d);
    assert!(f["slope_area"].is_null() && f["hypsometric_integral"].is_null(), "{f}");
    refused(&["analyze", "missing.tif"], d, "missing.tif");
    refused(&["analyze", "flat.tif", "--min-area", "0"], d, "min_area_cells");
    refused(&["analyze", "flat.tif", "-o", "m", "--format", "bmp"], d, "bmp");
}

#[test]
fn a_real_dem_with_nodata_drains_through_its_holes() {
    let Some(dem) = testdata("terra-elev.tif") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let f = figures(&["analyze", dem.to_str().unwrap(), "--json"], d);
    // 95 x 90 cells, 3942 of them nodata (outside the domain)
    assert_eq!(f["valid_cells"], 95 * 90 - 3942);
    assert!(f["relief"]["min"].as_f64().unwrap() >= 141.0, "nodata read as terrain: {f}");
}
