//! Heights for engines: raw files and their sidecars round-trip to the same metres, and
//! `convert --engine` writes each engine's size and format with its import settings.

mod common;

use common::{erode, files_in, ok, refused};
use erode::{CellSize, Grid, Heightmap};

/// A 40 x 30 map of 3 m cells from 100 to ~220 m, with a nodata corner when asked.
fn write_map(path: &std::path::Path, holes: bool) -> Heightmap {
    let g = Grid::from_fn(40, 30, CellSize::square(3.0), |r, c| 100.0 + (r * 40 + c) as f32 * 0.1).unwrap();
    let nodata = holes.then(|| (0..1200).map(|i| i % 40 < 3 && i / 40 < 2).collect());
    let map = Heightmap::with_nodata(g, nodata).unwrap();
    erode_io::write(path, &map, &Default::default()).unwrap();
    map
}

#[test]
fn a_raw_file_and_its_sidecar_read_back_to_the_same_metres() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let map = write_map(&d.join("m.tif"), true);
    let out = erode(&["convert", "m.tif", "-o", "m.r16"], d);
    assert!(out.status.success());
    let note = String::from_utf8_lossy(&out.stderr);
    assert!(note.contains("6 cells without data written as sample 0") && note.contains("m.r16.json"), "{note}");
    let side: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join("m.r16.json")).unwrap()).unwrap();
    assert_eq!(
        (side["width"].as_u64(), side["height"].as_u64(), side["nodata"].as_f64()),
        (Some(40), Some(30), Some(0.0))
    );
    // read back with no flag: size, cell size, nodata and heights within half a sample's step
    let back = erode_io::read(&d.join("m.r16"), &Default::default()).unwrap();
    assert_eq!(back.info.assumed, None);
    let b = &back.map;
    assert_eq!((b.heights.width(), b.heights.height(), b.heights.cell_size()), (40, 30, CellSize::square(3.0)));
    assert_eq!(b.nodata_mask(), map.nodata_mask());
    let step = (219.9 - 100.0) / 65534.0;
    for i in (0..1200).filter(|&i| !map.is_nodata(i)) {
        let (x, y) = (map.heights.as_slice()[i], b.heights.as_slice()[i]);
        assert!(f64::from((x - y).abs()) <= step / 2.0 + 1e-4, "cell {i}: {x} against {y}");
    }
    // r32 keeps every bit, and its sidecar its shape and cells
    ok(&["convert", "m.tif", "-o", "m.r32"], d);
    let back = erode_io::read(&d.join("m.r32"), &Default::default()).unwrap().map;
    assert_eq!((back.heights.width(), back.heights.cell_size()), (40, CellSize::square(3.0)));
    for i in (0..1200).filter(|&i| !map.is_nodata(i)) {
        assert_eq!(back.heights.as_slice()[i], map.heights.as_slice()[i]);
    }
    // a sidecar that says another format is refused, naming it
    std::fs::copy(d.join("m.r32.json"), d.join("m.r16.json")).unwrap();
    refused(&["info", "m.r16"], d, "m.r16.json");
}

#[test]
fn each_engine_gets_its_size_format_and_settings() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_map(&d.join("m.tif"), false);
    let unity = ok(&["convert", "m.tif", "-o", "u.r16", "--engine", "unity"], d);
    assert!(unity.contains("Resolution") && unity.contains("33") && unity.contains("Windows"), "{unity}");
    let u = erode_io::read(&d.join("u.r16"), &Default::default()).unwrap().map;
    assert_eq!((u.heights.width(), u.heights.height()), (33, 33));
    // the extent kept: 40 x 3 m across, 30 x 3 m down, over 33 cells
    assert!(
        (u.heights.cell_size().x - 120.0 / 33.0).abs() < 1e-9 && (u.heights.cell_size().y - 90.0 / 33.0).abs() < 1e-9
    );
    let unreal = ok(&["convert", "m.tif", "-o", "l.png", "--engine", "unreal"], d);
    let z = unreal.lines().find(|l| l.contains("Scale Z")).unwrap();
    let stats = erode_io::read(&d.join("l.png"), &Default::default()).unwrap().map;
    assert_eq!((stats.heights.width(), stats.heights.height()), (127, 127));
    let s = stats.stats();
    let want = f64::from(s.max - s.min) / 512.0 * 100.0;
    let got: f64 = z.split_whitespace().last().unwrap().parse().unwrap();
    assert!((got - want).abs() < 1e-3 * want, "{z}: want {want}");
    let godot = ok(&["convert", "m.tif", "-o", "g.exr", "--engine", "godot"], d);
    assert!(godot.contains("Vertex spacing") && godot.contains("3 m"), "{godot}");
    let before = files_in(d);
    refused(&["convert", "m.tif", "-o", "u.png", "--engine", "unity"], d, "*.r16");
    refused(&["convert", "m.tif", "-o", "u.tif", "--engine", "unreal"], d, "*.png or *.r16");
    assert_eq!(files_in(d), before);
}
