//! Heights for engines: raw files and their sidecars round-trip to the same metres, and
//! `convert --engine` writes each engine's size and format with its import settings.

use crate::common;

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

#[test]
fn tiles_share_their_seams_sample_for_sample_over_one_height_range() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&["generate", "--width", "97", "--height", "65", "--relief", "300", "--cell-size", "10", "-o", "m.tif"], d);
    std::fs::create_dir(d.join("t")).unwrap();
    // 97 x 65 samples are 3 x 2 tiles of 33 sharing their edges: cut as they are
    let out = erode(&["convert", "m.tif", "-o", "t/h.r16", "--engine", "unity", "--tile", "33"], d);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("3 x 2 tiles") && said.contains("Resolution") && said.contains("tile R_C"), "{said}");
    assert!(out.stderr.is_empty(), "no resample: {}", String::from_utf8_lossy(&out.stderr));
    let whole = erode_io::read(&d.join("m.tif"), &Default::default()).unwrap().map;
    let read =
        |r: usize, c: usize| erode_io::read(&d.join(format!("t/h_{r}_{c}.r16")), &Default::default()).unwrap().map;
    let raw = |r: usize, c: usize| std::fs::read(d.join(format!("t/h_{r}_{c}.r16"))).unwrap();
    let sample = |bytes: &[u8], row: usize, col: usize| {
        u16::from_le_bytes([bytes[2 * (row * 33 + col)], bytes[2 * (row * 33 + col) + 1]])
    };
    let stats = whole.stats();
    for r in 0..2 {
        for c in 0..3 {
            let tile = read(r, c);
            assert_eq!((tile.heights.width(), tile.heights.height()), (33, 33));
            // each sample within one 16-bit step of the whole map's height there: one range for all
            let step = f64::from(stats.max - stats.min) / 65535.0;
            for (row, col) in [(0, 0), (16, 7), (32, 32)] {
                let got = f64::from(*tile.heights.get(row, col).unwrap());
                let want = f64::from(*whole.heights.get(r * 32 + row, c * 32 + col).unwrap());
                assert!((got - want).abs() <= step, "tile {r},{c} at {row},{col}: {got} vs {want}");
            }
            // the seams: a tile's last column is its right neighbour's first, its last row its lower one's first
            if c < 2 {
                let (a, b) = (raw(r, c), raw(r, c + 1));
                assert!((0..33).all(|row| sample(&a, row, 32) == sample(&b, row, 0)), "seam {r},{c} | {r},{}", c + 1);
            }
            if r < 1 {
                let (a, b) = (raw(r, c), raw(r + 1, c));
                assert!((0..33).all(|col| sample(&a, 32, col) == sample(&b, 0, col)), "seam {r},{c} / {},{c}", r + 1);
            }
        }
    }
    let list: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join("t/h.tiles.json")).unwrap()).unwrap();
    assert_eq!(
        (list["across"].as_u64(), list["down"].as_u64(), list["tiles"].as_array().map(Vec::len)),
        (Some(3), Some(2), Some(6))
    );
    assert_eq!(list["tiles"][5]["samples"], serde_json::json!([64, 32, 96, 64]));
    // a map that is not whole tiles is resampled to the nearest, said so; GeoTIFF tiles keep metres
    ok(&["generate", "--size", "100", "--relief", "50", "-o", "odd.tif"], d);
    let out = erode(&["convert", "odd.tif", "-o", "t/o.tif", "--tile", "33"], d);
    assert!(out.status.success() && String::from_utf8_lossy(&out.stderr).contains("97 x 97"));
    assert_eq!(files_in(&d.join("t")).iter().filter(|p| p.to_string_lossy().contains("/o_")).count(), 9);
    // bad sizes: refused before anything is written
    let before = files_in(&d.join("t"));
    refused(&["convert", "m.tif", "-o", "t/x.r16", "--engine", "unity", "--tile", "100"], d, "1025");
    refused(&["convert", "m.tif", "-o", "t/x.tif", "--tile", "1"], d, "--tile 1");
    assert_eq!(files_in(&d.join("t")), before);
}
