//! The command line as users and other tools call it: every subcommand, and bad input
//! (exit status 2, one line on stderr, nothing written).

use crate::common;

use common::*;

#[test]
fn generate_convert_info_agree_on_every_format() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "96", "--seed", "7", "-o", "t.tif"], d);
    let base = info("t.tif", d);
    let span = base["max"].as_f64().unwrap() - base["min"].as_f64().unwrap();
    for ext in ["png", "exr", "r32", "npy", "pgm"] {
        let name = format!("t.{ext}");
        ok(&["convert", "t.tif", "-o", &name], d);
        let i = info(&name, d);
        assert_eq!((i["width"].as_u64(), i["height"].as_u64()), (Some(96), Some(96)), "{ext}");
        for key in ["min", "max", "mean"] {
            let (a, b) = (base[key].as_f64().unwrap(), i[key].as_f64().unwrap());
            assert!((a - b).abs() <= span / 65535.0, "{ext} {key}: {a} vs {b}");
        }
    }
    // the round trip back to TIFF from 16-bit PNG stays within a quantum of the original
    ok(&["convert", "t.png", "-o", "back.tif"], d);
    let back = info("back.tif", d);
    assert!((back["mean"].as_f64().unwrap() - base["mean"].as_f64().unwrap()).abs() <= span / 65535.0);
}

#[test]
fn render_and_demo_write_pictures() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--kind", "ridged", "--size", "64", "-o", "t.tif"], d);
    ok(&["render", "t.tif", "-o", "t.png", "--overlay", "t.tif", "--water", "t.tif"], d);
    let png = std::fs::read(d.join("t.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"));
    // a 1:1 crop is the window of the whole picture
    ok(&["render", "t.tif", "-o", "crop.png", "--crop", "10,20,30,16"], d);
    let size = |name: &str| {
        let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(d.join(name)).unwrap()));
        let info = decoder.read_info().unwrap();
        (info.info().width, info.info().height)
    };
    assert_eq!(size("crop.png"), (30, 16));
    refused(&["render", "t.tif", "-o", "bad.png", "--crop", "60,0,10,10"], d, "inside the 64 x 64 map");
    ok(&["demo", "-o", "out", "--size", "64", "--iterations", "50", "--quiet"], d);
    for f in ["before.png", "after.png", "height-before.tif", "height.tif", "erosion.tif", "report.json"] {
        assert!(d.join("out").join(f).exists(), "demo wrote no {f}");
    }
}

#[test]
fn every_subcommand_has_help_with_examples() {
    let tmp = tempfile::tempdir().unwrap();
    for sub in [
        "generate", "info", "convert", "render", "resample", "crop", "rescale", "mesh", "amplify", "demo", "simulate",
        "params",
    ] {
        let help = ok(&[sub, "--help"], tmp.path());
        assert!(help.contains("Examples:"), "{sub} --help has no examples");
    }
}

#[test]
fn bad_input_exits_2_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("garbage.png"), b"this is not a png").unwrap();
    std::fs::write(d.join("plain"), b"x").unwrap();
    ok(&["generate", "--size", "16", "-o", "good.tif"], d);
    let before = files_in(d);
    refused(&["info", "garbage.png"], d, "garbage.png");
    refused(&["convert", "garbage.png", "-o", "out.tif"], d, "garbage.png");
    refused(&["convert", "missing.tif", "-o", "out.tif"], d, "missing.tif");
    refused(&["convert", "good.tif", "-o", "out.xyz"], d, "out.xyz");
    refused(&["convert", "good.tif", "-o", "plain/out.tif"], d, "plain/out.tif");
    refused(&["convert", "good.tif", "-o", "nofolder/out.tif"], d, "nofolder");
    refused(&["generate", "--relief", "-5", "-o", "x.tif"], d, "relief");
    refused(&["generate", "--persistence", "2", "-o", "x.tif"], d, "persistence");
    refused(&["generate", "-o", "x.bmp"], d, "x.bmp");
    refused(&["info", "good.tif", "--min-height", "3"], d, "--max-height");
    refused(&["render", "good.tif", "-o", "shot.jpg"], d, "shot.jpg");
    refused(&["convert", "good.tif", "--cell-size", "-1", "-o", "y.tif"], d, "--cell-size");
    assert_eq!(files_in(d), before, "a failed run left files behind");
}

#[test]
fn a_68_byte_png_claiming_100000_squared_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // signature, IHDR (100000 x 100000, 16-bit grey), an 11-byte IDAT, IEND: 68 bytes
    let hex = "89504e470d0a1a0a0000000d49484452000186a0000186a01000000000dda988570000000b4944415478\
               9c636000000002000100f54801830000000049454e44ae426082";
    let bytes: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    assert_eq!(bytes.len(), 68);
    std::fs::write(d.join("huge.png"), &bytes).unwrap();
    let err = refused(&["convert", "huge.png", "-o", "out.tif"], d, "100000 x 100000");
    assert!(err.contains("huge.png"));
    assert_eq!(err.matches("100000 x 100000").count(), 1, "the reason is repeated: {err}");
    assert!(!d.join("out.tif").exists());
}

#[test]
fn real_dems_keep_georeference_and_nodata_through_convert() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // a real int16 geographic GeoTIFF with GDAL_NODATA
    if let Some(elev) = testdata("terra-elev.tif") {
        let src = info(elev.to_str().unwrap(), d);
        ok(&["convert", elev.to_str().unwrap(), "-o", "elev.tif"], d);
        let out = info("elev.tif", d);
        assert_eq!(out["georeference"], src["georeference"]);
        assert_eq!(out["georeference"]["crs"], "geographic");
        assert_eq!(out["nodata_count"], src["nodata_count"]);
        assert_eq!(out["nodata_value"], -32768.0);
        assert_eq!(out["cell_size"], src["cell_size"]);
        let cx = out["cell_size"]["x"].as_f64().unwrap();
        assert!((cx - 599.7).abs() < 1.0, "cell size in metres: {cx}");
        assert_eq!((out["min"].as_f64(), out["max"].as_f64()), (Some(141.0), Some(547.0)));
    }
    // a real float32 DEM moved below sea level (a coastal DEM's situation), with nodata
    if let Some(dem) = testdata("lidar-dem.tif") {
        let loaded = erode_io::read(&dem, &Default::default()).unwrap();
        let mut heights = loaded.map.heights.clone();
        heights.as_mut_slice().iter_mut().for_each(|h| *h -= 400.0);
        let mask: Vec<bool> = (0..heights.len()).map(|i| i % 97 == 0).collect();
        let map = erode::Heightmap::with_nodata(heights, Some(mask)).unwrap();
        let opts = erode_io::WriteOptions {
            georef: loaded.info.georef.clone(),
            nodata_value: Some(-9999.0),
            ..Default::default()
        };
        erode_io::write(&d.join("below.tif"), &map, &opts).unwrap();
        let src = info("below.tif", d);
        assert!(src["min"].as_f64().unwrap() < 0.0);
        ok(&["convert", "below.tif", "-o", "below2.tif"], d);
        let out = info("below2.tif", d);
        assert_eq!(out["georeference"], src["georeference"]);
        assert_eq!(out["georeference"]["epsg"], 26915);
        assert_eq!(out["nodata_count"], src["nodata_count"]);
        assert_eq!(out["nodata_value"], -9999.0);
        assert_eq!(out["min"], src["min"]);
        assert_eq!(out["cell_size"]["x"], 1.0);
    }
}

#[test]
fn gpu_info_lists_the_adapters() {
    let tmp = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_erode"))
        .args(["gpu-info", "--json"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            std::env::var_os("ERODE_REQUIRE_GPU").is_none_or(|v| v != "1"),
            "ERODE_REQUIRE_GPU=1 but gpu-info failed: {err}"
        );
        assert!(err.contains("no GPU adapter"), "{err}");
        assert_eq!(out.status.code(), Some(2));
        return;
    }
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = &list.as_array().unwrap()[0];
    assert!(!first["name"].as_str().unwrap().is_empty());
    assert!(first["max_storage_buffer_binding_size"].as_u64().unwrap() > 0);
}

#[test]
fn a_model_off_its_scale_says_so_in_one_line_and_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "32", "--relief", "300", "--cell-size", "30", "-o", "coarse.tif"], d);
    ok(&["generate", "--size", "32", "--relief", "300", "--cell-size", "1000", "-o", "km.tif"], d);
    ok(&["generate", "--size", "32", "--relief", "20", "--cell-size", "2", "-o", "fine.tif"], d);
    let stderr = |args: &[&str]| {
        let out = common::erode(args, d);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let err = stderr(&["simulate", "droplet", "coarse.tif", "-o", "a", "--droplets", "64", "-q"]);
    assert!(err.contains("the droplet model on cells of 30 m") && err.contains("`erode simulate grid`"), "{err}");
    assert_eq!(err.lines().filter(|l| l.contains("note:")).count(), 1, "{err}");
    let err = stderr(&["simulate", "grid", "km.tif", "-o", "b", "--iterations", "1", "-q"]);
    assert!(err.contains("the grid model on cells of 1000 m") && err.contains("stream-power"), "{err}");
    let err = stderr(&["simulate", "stream-power", "fine.tif", "-o", "c", "--years", "1e4", "-q"]);
    assert!(err.contains("the stream-power model on cells of 2 m") && err.contains("--resolution 10"), "{err}");
    // on cells that suit it, a model says nothing of scale
    let err = stderr(&["simulate", "droplet", "fine.tif", "-o", "e", "--droplets", "64", "-q"]);
    assert!(!err.contains("note"), "{err}");
}
