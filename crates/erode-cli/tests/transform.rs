//! `erode resample`, `crop`, `rescale` and `mesh`: sizes, cell sizes and heights as asked, read back.

use crate::common;

use common::{erode, files_in, info, ok, refused};

fn heights(path: &std::path::Path) -> erode::Heightmap {
    erode_io::read(path, &Default::default()).unwrap().map
}

#[test]
fn resample_keeps_the_extent_and_comes_back_close() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "64", "--seed", "3", "--relief", "200", "--cell-size", "10", "-o", "t.tif"], d);
    ok(&["resample", "t.tif", "--factor", "2", "-o", "x2.tif"], d);
    let x2 = info("x2.tif", d);
    assert_eq!((x2["width"].as_u64(), x2["height"].as_u64()), (Some(128), Some(128)));
    assert_eq!(x2["cell_size"]["x"].as_f64(), Some(5.0));
    // down again by averaging: within a few centimetres of the 200 m terrain it came from
    ok(&["resample", "x2.tif", "--factor", "0.5", "--filter", "box", "-o", "back.tif"], d);
    let (a, b) = (heights(&d.join("t.tif")), heights(&d.join("back.tif")));
    assert_eq!(b.heights.cell_size(), a.heights.cell_size());
    let mean_error = a.heights.as_slice().iter().zip(b.heights.as_slice()).map(|(x, y)| (x - y).abs()).sum::<f32>()
        / a.heights.len() as f32;
    assert!(mean_error < 0.2, "mean error {mean_error} m");

    // --size N is the longer side; --resolution rounds the counts and says what it gave
    ok(&["generate", "--width", "64", "--height", "32", "--cell-size", "10", "-o", "wide.tif"], d);
    ok(&["resample", "wide.tif", "--size", "100", "-o", "s.png"], d);
    let s = info("s.png", d);
    assert_eq!((s["width"].as_u64(), s["height"].as_u64()), (Some(100), Some(50)));
    assert_eq!(s["cell_size"]["x"].as_f64(), Some(6.4));
    let out = erode(&["resample", "wide.tif", "--resolution", "30", "-o", "r.tif"], d);
    assert!(out.status.success());
    let note = String::from_utf8_lossy(&out.stderr);
    assert!(note.contains("21 x 11 cells") && note.contains("asked 30"), "{note}");
    let r = info("r.tif", d);
    assert!((r["cell_size"]["x"].as_f64().unwrap() - 640.0 / 21.0).abs() < 1e-9);
}

#[test]
fn crop_takes_the_cells_and_rescale_the_heights_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "48", "--seed", "5", "--relief", "80", "--base", "20", "-o", "t.tif"], d);
    ok(&["crop", "t.tif", "--cells", "8,4,16,12", "-o", "c.tif"], d);
    let (t, c) = (heights(&d.join("t.tif")), heights(&d.join("c.tif")));
    assert_eq!((c.heights.width(), c.heights.height()), (16, 12));
    for r in 0..12 {
        assert_eq!(c.heights.row(r), &t.heights.row(r + 4)[8..24]);
    }
    ok(&["rescale", "t.tif", "--relief", "500", "--base", "100", "-o", "s.tif"], d);
    let s = info("s.tif", d);
    assert!((s["min"].as_f64().unwrap() - 100.0).abs() < 1e-3 && (s["max"].as_f64().unwrap() - 600.0).abs() < 1e-3);
    ok(&["rescale", "t.tif", "--factor", "2", "-o", "f.tif"], d);
    let f = info("f.tif", d);
    assert!((f["min"].as_f64().unwrap() - 40.0).abs() < 1e-3 && (f["max"].as_f64().unwrap() - 200.0).abs() < 1e-3);
}

#[test]
fn amplify_refines_a_range_the_same_on_any_thread_count() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    // 32² of 400 m grown for 2 Myr, then halved twice: 128² of 100 m
    let run = |out: &str, threads: &str| {
        let args = [
            "amplify",
            "-o",
            out,
            "--size",
            "128",
            "--resolution",
            "100",
            "--levels",
            "2",
            "--coarse-years",
            "2e6",
            "--fine-years",
            "2e5",
            "--threads",
            threads,
            "-q",
        ];
        ok(&args, d);
    };
    run("one", "1");
    run("two", "2");
    for f in ["height.tif", "level-0.tif", "level-1.tif", "level-2.tif", "preview.png", "report.json"] {
        assert!(d.join("one").join(f).exists(), "no {f}");
    }
    for f in ["height.tif", "level-0.tif", "level-1.tif"] {
        assert!(std::fs::read(d.join("one").join(f)).unwrap() == std::fs::read(d.join("two").join(f)).unwrap(), "{f}");
    }
    let h = info("one/height.tif", d);
    assert_eq!((h["width"].as_u64(), h["cell_size"]["x"].as_f64()), (Some(128), Some(100.0)));
    let l0 = info("one/level-0.tif", d);
    assert_eq!((l0["width"].as_u64(), l0["cell_size"]["x"].as_f64()), (Some(32), Some(400.0)));
    // a range grew (1 m of noise to hundreds of metres), and its valleys drain as rivers do
    assert!(h["max"].as_f64().unwrap() > 100.0, "{h}");
    let a: serde_json::Value = serde_json::from_str(&ok(&["analyze", "one/height.tif", "--json"], d)).unwrap();
    let theta = a["slope_area"]["theta"].as_f64().unwrap();
    assert!((0.3..0.6).contains(&theta), "θ {theta}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("one/report.json")).unwrap()).unwrap();
    assert_eq!(report["levels"].as_array().unwrap().len(), 3);
    assert_eq!(report["levels"][1]["steps"], 20);
}

#[test]
fn amplify_keeps_a_real_dem_where_it_is() {
    let Some(dem) = common::testdata("terra-elev.tif") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let dem = dem.to_str().unwrap();
    ok(&["amplify", dem, "-o", "a", "--levels", "1", "-q"], d);
    ok(&["resample", dem, "--factor", "2", "-o", "plain.tif"], d);
    let (a, plain) = (heights(&d.join("a/height.tif")), heights(&d.join("plain.tif")));
    assert_eq!(a.nodata_mask(), plain.nodata_mask());
    let (mut sum, mut n) = (0.0f64, 0);
    for i in 0..a.heights.len() {
        if !a.is_nodata(i) {
            sum += f64::from((a.heights.as_slice()[i] - plain.heights.as_slice()[i]).abs());
            n += 1;
        }
    }
    // the finer level erodes briefly: valleys deepen by metres on a 400 m relief, nothing moves
    let mean = sum / n as f64;
    assert!(mean > 0.1 && mean < 10.0, "mean change {mean} m");
}

#[test]
fn a_cell_size_given_on_a_georeferenced_map_is_kept_and_the_georeference_dropped() {
    let Some(dem) = common::testdata("lidar-dem.tif") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for cmd in [&["convert"][..], &["rescale", "--factor", "1"][..]] {
        let mut args = vec![cmd[0], dem.to_str().unwrap(), "--cell-size", "2", "-o", "out.tif"];
        args.extend_from_slice(&cmd[1..]);
        let out = erode(&args, d);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && err.contains("written without one"), "{cmd:?}: {err}");
        let i = info("out.tif", d);
        // before, convert wrote the input's pixel scale back: 1 m cells again
        assert_eq!(i["cell_size"]["x"].as_f64(), Some(2.0), "{cmd:?}");
        assert_eq!(i["georeference"]["crs"], "local", "{cmd:?}: {i}");
    }
}

#[test]
fn mesh_writes_every_format_y_up_and_fits_a_triangle_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "33", "--seed", "5", "--relief", "120", "--cell-size", "10", "-o", "t.tif"], d);
    let map = heights(&d.join("t.tif"));
    let top = map.heights.as_slice().iter().copied().fold(f32::NEG_INFINITY, f32::max);
    for ext in ["glb", "obj", "ply", "stl"] {
        let out = format!("t.{ext}");
        ok(&["mesh", "t.tif", "-o", &out], d);
        let mesh = erode_io::mesh::read_mesh(&d.join(&out));
        if ext == "glb" {
            // no reader of ours: the header's length is the file's
            let b = std::fs::read(d.join(&out)).unwrap();
            assert_eq!(u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize, b.len());
            continue;
        }
        let mesh = mesh.unwrap();
        assert_eq!(mesh.faces.len(), 2 * 32 * 32, "{ext}");
        // y up, the map's 320 m along x and z
        let (lo, hi) = mesh.bounds();
        assert!((hi.y - f64::from(top)).abs() < 1e-3, "{ext}: top {} vs {top}", hi.y);
        assert_eq!((lo.x, hi.x, lo.z, hi.z), (0.0, 320.0, 0.0, 320.0), "{ext}");
    }
    // adaptive: fewer triangles than every cell's, every vertex a cell of the map
    ok(&["mesh", "t.tif", "-o", "adaptive.obj", "--max-error", "0.5"], d);
    let adaptive = erode_io::mesh::read_mesh(&d.join("adaptive.obj")).unwrap();
    assert!(adaptive.faces.len() < 2 * 32 * 32 && adaptive.faces.len() >= 2, "{}", adaptive.faces.len());
    let (lo, hi) = adaptive.bounds();
    assert_eq!((lo.x, hi.x, lo.z, hi.z), (0.0, 320.0, 0.0, 320.0));
    refused(&["mesh", "t.tif", "-o", "z.obj", "--max-error", "-1"], d, "--max-error");
    ok(&["mesh", "t.tif", "-o", "small.obj", "--max-triangles", "500"], d);
    let small = erode_io::mesh::read_mesh(&d.join("small.obj")).unwrap();
    assert!(small.faces.len() <= 500 && small.faces.len() >= 200, "{}", small.faces.len());
    let before = files_in(d);
    refused(&["mesh", "t.tif", "-o", "t.fbx"], d, "t.fbx");
    refused(&["mesh", "t.tif", "-o", "z.obj", "--step", "0"], d, "--step");
    refused(&["mesh", "t.tif", "-o", "z.obj", "--max-triangles", "1"], d, "--max-triangles");
    refused(&["mesh", "missing.tif", "-o", "z.obj"], d, "missing.tif");
    assert_eq!(files_in(d), before, "a refused mesh left a file");
}

#[test]
fn a_mesh_in_chunks_is_the_whole_mesh_cut_along_its_borders() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "41", "--seed", "2", "--relief", "80", "--cell-size", "5", "-o", "t.tif"], d);
    for adaptive in [false, true] {
        let extra: &[&str] = if adaptive { &["--max-error", "0.5"] } else { &[] };
        ok(&[&["mesh", "t.tif", "-o", "whole.obj"], extra].concat(), d);
        std::fs::create_dir_all(d.join("tiles")).unwrap();
        ok(&[&["mesh", "t.tif", "-o", "tiles/t.obj", "--chunk", "16"], extra].concat(), d);
        let index: serde_json::Value =
            serde_json::from_slice(&std::fs::read(d.join("tiles/t.chunks.json")).unwrap()).unwrap();
        // 40 squares a side in chunks of 16: 3 x 3, the last 8 wide
        assert_eq!((index["across"].as_u64(), index["down"].as_u64()), (Some(3), Some(3)));
        let chunks = index["chunks"].as_array().unwrap();
        assert_eq!(chunks.len(), 9);
        let whole = erode_io::mesh::read_mesh(&d.join("whole.obj")).unwrap();
        let mut faces = 0;
        for c in chunks {
            let part = erode_io::mesh::read_mesh(&d.join("tiles").join(c["file"].as_str().unwrap())).unwrap();
            faces += part.faces.len();
            assert_eq!(part.faces.len() as u64, c["triangles"].as_u64().unwrap());
            // inside its cells, in the map's frame (5 m cells)
            let cells: Vec<f64> = c["cells"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() * 5.0).collect();
            let (lo, hi) = part.bounds();
            assert!(lo.x >= cells[0] && hi.x <= cells[2] && lo.z >= cells[1] && hi.z <= cells[3], "{c}: {lo:?} {hi:?}");
        }
        if adaptive {
            // the borders split every triangle across them: at least the whole's
            assert!(faces >= whole.faces.len(), "{faces} vs {}", whole.faces.len());
        } else {
            assert_eq!(faces, whole.faces.len());
        }
        assert!(d.join("tiles/t_2_2.obj").is_file() && d.join("tiles/t_0_1.obj").is_file());
    }
    refused(&["mesh", "t.tif", "-o", "tiles/z.obj", "--chunk", "0"], d, "--chunk 0");
}
