//! `erode masks`: every map read back (size, bit depth, channels, the library's values), the
//! sidecar, the rules round trip, the same bytes on any thread count, and the refusals.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{files_in, ok, refused};

/// (width, height, colour type, bit depth, samples as integers) of a PNG.
fn read_png(path: &Path) -> (u32, u32, png::ColorType, png::BitDepth, Vec<u16>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let bytes = &buf[..info.buffer_size()];
    let samples = match info.bit_depth {
        png::BitDepth::Sixteen => bytes.chunks(2).map(|p| u16::from_be_bytes([p[0], p[1]])).collect(),
        _ => bytes.iter().map(|&b| u16::from(b)).collect(),
    };
    (info.width, info.height, info.color_type, info.bit_depth, samples)
}

/// A 64² terrain and a short grid run beside it with the maps the masks read.
fn terrain_and_run(d: &Path) {
    ok(&["generate", "--size", "64", "--seed", "5", "--relief", "60", "--cell-size", "2", "-o", "t.tif"], d);
    ok(
        &[
            "simulate",
            "grid",
            "t.tif",
            "-o",
            "run",
            "-q",
            "--iterations",
            "40",
            "--outputs",
            "erosion,deposition,sediment_depth",
        ],
        d,
    );
}

#[test]
fn every_map_reads_back_with_the_libraries_values() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    terrain_and_run(d);
    ok(&["masks", "run/height.tif", "run", "-o", "tex"], d);
    let names: Vec<String> =
        files_in(&d.join("tex")).iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    let mut want: Vec<String> = erode::texture::MASKS.iter().map(|m| format!("{}.png", m.name)).collect();
    want.extend(["normal.png", "splat_0.png", "splat_1.png", "albedo.png", "masks.json"].map(String::from));
    want.extend(["rock", "grass", "scree", "sand", "snow"].map(|l| format!("layer_{l}.png")));
    want.sort();
    assert_eq!(names, want);
    // the library's masks of the same files, quantised to 8 bits
    let height = erode_io::read(&d.join("run/height.tif"), &Default::default()).unwrap().map;
    let erosion = erode_io::read(&d.join("run/erosion.tif"), &Default::default()).unwrap().map.heights;
    let baker =
        erode::texture::Baker::new(&height, Default::default()).unwrap().with_run_map("erosion", &erosion).unwrap();
    for mask in [erode::texture::Mask::Slope, erode::texture::Mask::Occlusion, erode::texture::Mask::Erosion] {
        let (w, h, colour, depth, samples) = read_png(&d.join(format!("tex/{}.png", mask.info().name)));
        assert_eq!((w, h, colour, depth), (64, 64, png::ColorType::Grayscale, png::BitDepth::Eight));
        let values = baker.mask(mask).unwrap();
        let expected: Vec<u16> = values.iter().map(|&v| erode_io::texture::quantise(v, 255)).collect();
        assert_eq!(samples, expected, "{mask:?}");
        assert!(samples.iter().any(|&s| s > 0), "{mask:?} is black");
    }
    // normals decode to unit vectors, up
    let (_, _, colour, _, n) = read_png(&d.join("tex/normal.png"));
    assert_eq!(colour, png::ColorType::Rgb);
    for px in n.chunks(3) {
        let v = px.iter().map(|&s| f64::from(s) / 255.0 * 2.0 - 1.0).collect::<Vec<_>>();
        let length = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        assert!((length - 1.0).abs() < 0.02 && v[2] > 0.0, "{v:?}");
    }
    // the splat's channels over both maps sum to 1 (within 8-bit rounding)
    let (_, _, colour, _, s0) = read_png(&d.join("tex/splat_0.png"));
    let (_, _, _, _, s1) = read_png(&d.join("tex/splat_1.png"));
    assert_eq!(colour, png::ColorType::Rgba);
    for (a, b) in s0.chunks(4).zip(s1.chunks(4)) {
        let sum: u16 = a.iter().chain(b).sum();
        assert!(sum.abs_diff(255) <= 3, "{a:?} {b:?}");
    }
    // the sidecar names every file with its mapping
    let side: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join("tex/masks.json")).unwrap()).unwrap();
    assert_eq!(side["size"], serde_json::json!([64, 64]));
    assert_eq!(side["files"]["splat_0.png"]["splat"], serde_json::json!(["rock", "grass", "scree", "sand"]));
    assert!(side["files"]["flow.png"]["mapping"].as_str().unwrap().contains("log10"));
    assert_eq!(side["files"].as_object().unwrap().len(), want.len() - 1);
}

#[test]
fn bits_formats_and_conventions() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&["generate", "--size", "48", "--seed", "2", "--relief", "40", "-o", "t.tif"], d);
    ok(&["masks", "t.tif", "-o", "a", "--only", "slope,normal"], d);
    ok(&["masks", "t.tif", "-o", "b", "--only", "slope,normal", "--bits", "16", "--normal", "directx"], d);
    ok(&["masks", "t.tif", "-o", "c", "--only", "slope", "--format", "tif"], d);
    assert_eq!(files_in(&d.join("a")).len(), 3, "slope, normal and the sidecar only");
    let (.., depth8, s8) = read_png(&d.join("a/slope.png"));
    let (.., depth16, s16) = read_png(&d.join("b/slope.png"));
    assert_eq!((depth8, depth16), (png::BitDepth::Eight, png::BitDepth::Sixteen));
    for (a, b) in s8.iter().zip(&s16) {
        assert!((f64::from(*a) / 255.0 - f64::from(*b) / 65535.0).abs() <= 0.5 / 255.0 + 1e-9);
    }
    // the float TIFF holds the values the PNG rounds
    let f = erode_io::read(&d.join("c/slope.tif"), &Default::default()).unwrap().map.heights;
    for (v, &b) in f.as_slice().iter().zip(&s16) {
        assert_eq!(erode_io::texture::quantise(*v, 65535), b);
    }
    // DirectX's green is OpenGL's flipped
    let (.., gl) = read_png(&d.join("a/normal.png"));
    let (.., dx) = read_png(&d.join("b/normal.png"));
    for (g, x) in gl.chunks(3).zip(dx.chunks(3)) {
        let (g, x) = (f64::from(g[1]) / 255.0, f64::from(x[1]) / 65535.0);
        assert!((g - (1.0 - x)).abs() <= 1.0 / 255.0, "{g} {x}");
    }
}

#[test]
fn the_default_rules_print_and_read_back_and_bytes_do_not_depend_on_threads() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&["generate", "--size", "80", "--seed", "9", "--relief", "120", "-o", "t.tif"], d);
    std::fs::write(d.join("rules.toml"), ok(&["masks", "--print-rules"], d)).unwrap();
    ok(&["masks", "t.tif", "-o", "a", "--only", "splat"], d);
    ok(&["masks", "t.tif", "-o", "b", "--only", "splat", "--rules", "rules.toml"], d);
    assert_eq!(std::fs::read(d.join("a/albedo.png")).unwrap(), std::fs::read(d.join("b/albedo.png")).unwrap());
    let bake = |threads: &str, out: &str| {
        let status = Command::new(env!("CARGO_BIN_EXE_erode"))
            .args(["masks", "t.tif", "-o", out])
            .env("RAYON_NUM_THREADS", threads)
            .current_dir(d)
            .status()
            .unwrap();
        assert!(status.success());
    };
    bake("1", "one");
    bake("2", "two");
    for p in files_in(&d.join("one")) {
        let name = p.file_name().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), std::fs::read(d.join("two").join(name)).unwrap(), "{name:?}");
    }
}

#[test]
fn the_help_gives_every_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let help = ok(&["masks", "--help"], dir.path());
    for m in erode::texture::MASKS {
        assert!(help.contains(m.mapping), "`erode masks --help` lacks {}'s mapping: {help}", m.name);
    }
}

#[test]
fn bad_input_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&["generate", "--size", "32", "--seed", "1", "-o", "t.tif"], d);
    std::fs::create_dir(d.join("empty")).unwrap();
    std::fs::write(d.join("bad.toml"), "[[layer]]\nname = \"moss\"\ncolour = [1, 2, 3]\nwhen = { damp = [0.5, 1] }\n")
        .unwrap();
    std::fs::write(d.join("typo.toml"), "[[layer]]\nname = \"moss\"\ncolor = [1, 2, 3]\n").unwrap();
    let before = files_in(d);
    let e = refused(&["masks", "t.tif", "-o", "x", "--only", "slope,shine"], d, "shine");
    assert!(e.contains("occlusion") && e.contains("normal"), "lists the maps: {e}");
    refused(&["masks", "t.tif", "-o", "x", "--only", "erosion"], d, "run's `erosion` map");
    refused(&["masks", "t.tif", "empty", "-o", "x"], d, "--outputs erosion");
    refused(&["masks", "t.tif", "nowhere", "-o", "x"], d, "nowhere");
    let e = refused(&["masks", "t.tif", "-o", "x", "--rules", "bad.toml"], d, "bad.toml");
    assert!(e.contains("`moss`") && e.contains("damp"), "{e}");
    refused(&["masks", "t.tif", "-o", "x", "--rules", "typo.toml"], d, "color");
    refused(&["masks", "t.tif", "-o", "x", "--bits", "12"], d, "--bits");
    refused(&["masks", "t.tif", "-o", "x", "--curvature-scale", "0"], d, "curvature_scale");
    refused(&["masks", "t.tif", "-o", "x", "--normal-strength", "-1"], d, "--normal-strength");
    refused(&["masks", "missing.tif", "-o", "x"], d, "missing.tif");
    assert_eq!(files_in(d), before, "a refused bake left a file");
}
