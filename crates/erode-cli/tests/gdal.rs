//! Our GeoTIFFs as GDAL reads them: for every georeference form we read (pixel scale and
//! tiepoint, projected or geographic; a ModelTransformationTag; none), `gdalinfo -json` of what
//! `erode convert` and `erode simulate` write must give the input's size, geotransform, CRS and
//! nodata value, and no warning. Needs `gdalinfo` (Debian's `gdal-bin`, installed by `.ci/run`);
//! without it the test says so and passes, unless ERODE_REQUIRE_GDAL=1 (as in CI).

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{ok, testdata};
use serde_json::Value;

/// `gdalinfo -json FILE`, or `None` when GDAL is not installed.
fn gdalinfo(file: &Path) -> Option<Value> {
    let out = match Command::new("gdalinfo").arg("-json").arg(file).output() {
        Ok(out) => out,
        Err(_) if std::env::var_os("ERODE_REQUIRE_GDAL").is_some_and(|v| v == "1") => {
            panic!("gdalinfo is missing and ERODE_REQUIRE_GDAL=1: apt-get install gdal-bin")
        }
        Err(_) => {
            eprintln!("skipping the GDAL cross-check: gdalinfo not found (apt-get install gdal-bin)");
            return None;
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "gdalinfo {}: {stderr}", file.display());
    assert!(
        !stderr.contains("Warning") && !stderr.contains("ERROR"),
        "gdalinfo {} complains: {stderr}",
        file.display()
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// What must survive: size, geotransform, CRS (as WKT) and the nodata value (as float32).
fn georeference(info: &Value) -> (Value, Vec<f64>, Value, Option<f32>) {
    let transform =
        info["geoTransform"].as_array().map_or_else(Vec::new, |t| t.iter().map(|v| v.as_f64().unwrap()).collect());
    let nodata = info["bands"][0]["noDataValue"].as_f64().map(|v| v as f32);
    (info["size"].clone(), transform, info["coordinateSystem"]["wkt"].clone(), nodata)
}

fn assert_same_georeference(input: &Path, output: &Path) {
    let (Some(a), Some(b)) = (gdalinfo(input), gdalinfo(output)) else { return };
    let (size_a, gt_a, crs_a, nd_a) = georeference(&a);
    let (size_b, gt_b, crs_b, nd_b) = georeference(&b);
    assert_eq!(size_a, size_b, "{}: size", output.display());
    assert_eq!(gt_a.len(), 6, "{}: the input has no geotransform", input.display());
    for (k, (x, y)) in gt_a.iter().zip(&gt_b).enumerate() {
        assert!((x - y).abs() <= 1e-9 * x.abs().max(1.0), "{}: geotransform[{k}] {y} != {x}", output.display());
    }
    assert_eq!(gt_b.len(), 6, "{}: no geotransform", output.display());
    assert_eq!(crs_a, crs_b, "{}: CRS", output.display());
    assert_eq!(nd_a, nd_b, "{}: nodata", output.display());
}

/// A float32 TIFF georeferenced by a ModelTransformationTag (UTM 33N, 81 x 116 m cells).
fn transformed_tiff(path: &Path) {
    use tiff::encoder::{TiffEncoder, colortype::Gray32Float};
    use tiff::tags::Tag;
    let (w, h) = (48u32, 40u32);
    let heights: Vec<f32> = (0..w * h).map(|i| 200.0 + (i % w) as f32 * 0.5 + (i / w) as f32 * 0.25).collect();
    let m = [81.0, 0.0, 0.0, 500000.0, 0.0, -116.0, 0.0, 4000000.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0];
    let mut file = std::fs::File::create(path).unwrap();
    let mut enc = TiffEncoder::new(&mut file).unwrap();
    let mut img = enc.new_image::<Gray32Float>(w, h).unwrap();
    img.encoder().write_tag(Tag::ModelTransformationTag, &m[..]).unwrap();
    img.encoder().write_tag(Tag::GeoKeyDirectoryTag, &[1u16, 1, 0, 2, 1024, 0, 1, 1, 3072, 0, 1, 32633][..]).unwrap();
    img.encoder().write_tag(Tag::GdalNodata, "-9999").unwrap();
    img.write_data(&heights).unwrap();
}

/// Every output TIFF of `convert` and of a short `simulate grid` run on `input`.
fn check(input: &Path, dir: &Path) {
    let name = input.file_stem().unwrap().to_string_lossy().to_string();
    let converted = dir.join(format!("{name}-converted.tif"));
    ok(&["convert", input.to_str().unwrap(), "-o", converted.to_str().unwrap()], dir);
    assert_same_georeference(input, &converted);
    let out = dir.join(format!("{name}-run"));
    ok(
        &[
            "simulate",
            "grid",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--iterations",
            "2",
            "--outputs",
            "all",
            "-q",
        ],
        dir,
    );
    for map in ["height.tif", "water.tif", "sediment.tif"] {
        assert_same_georeference(input, &out.join(map));
    }
}

#[test]
fn gdal_reads_our_geotiffs_as_it_reads_the_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // pixel scale and tiepoint, projected (UTM 15N), float32 nodata
    if let Some(p) = testdata("lidar-dem.tif") {
        check(&p, d);
    }
    // pixel scale and tiepoint, geographic (WGS 84), int16 nodata
    if let Some(p) = testdata("terra-elev.tif") {
        check(&p, d);
    }
    // a transformation matrix
    let transformed = d.join("transformed.tif");
    transformed_tiff(&transformed);
    check(&transformed, d);
    // no georeference: the cell size alone, as a pixel scale GDAL reads
    ok(&["generate", "--size", "32", "--cell-size", "7", "-o", "plain.png"], d);
    ok(&["convert", "plain.png", "-o", "plain.tif"], d);
    if let Some(info) = gdalinfo(&d.join("plain.tif")) {
        let (_, gt, _, _) = georeference(&info);
        assert_eq!((gt[1], gt[5]), (7.0, -7.0), "{gt:?}");
        // the band says what it holds, in what unit, and its range (GDAL_METADATA)
        let band = &info["bands"][0];
        assert_eq!((band["unit"].as_str(), band["description"].as_str()), (Some("metre"), Some("height")), "{band}");
        let stats = erode_io::read(&d.join("plain.tif"), &Default::default()).unwrap().map.stats();
        let item = |k: &str| band["metadata"][""][k].as_str().unwrap().parse::<f32>().unwrap();
        assert_eq!((item("STATISTICS_MINIMUM"), item("STATISTICS_MAXIMUM")), (stats.min, stats.max));
    }
}

/// `gdalinfo`'s size, geotransform, CRS and nodata of `output` against those of `input` cut at
/// cell `(col, row)` and resampled by `factor` (new cells per old cell) to `size`.
fn assert_window_georeference(input: &Path, output: &Path, (col, row): (f64, f64), factor: f64, size: [u64; 2]) {
    let (Some(a), Some(b)) = (gdalinfo(input), gdalinfo(output)) else { return };
    let (_, gt_a, crs_a, nd_a) = georeference(&a);
    let (size_b, gt_b, crs_b, nd_b) = georeference(&b);
    assert_eq!(size_b, serde_json::json!(size), "{}: size", output.display());
    let want = [gt_a[0] + col * gt_a[1], gt_a[1] / factor, 0.0, gt_a[3] + row * gt_a[5], 0.0, gt_a[5] / factor];
    for (k, (x, y)) in want.iter().zip(&gt_b).enumerate() {
        assert!((x - y).abs() <= 1e-9 * x.abs().max(1.0), "{}: geotransform[{k}] {y} != {x}", output.display());
    }
    assert_eq!(crs_a, crs_b, "{}: CRS", output.display());
    assert_eq!(nd_a, nd_b, "{}: nodata", output.display());
}

#[test]
fn gdal_places_crops_and_resamples_where_they_were_cut() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let transformed = d.join("transformed.tif");
    transformed_tiff(&transformed);
    let inputs = [testdata("lidar-dem.tif"), testdata("terra-elev.tif"), Some(transformed)];
    for input in inputs.into_iter().flatten() {
        let name = input.file_stem().unwrap().to_string_lossy().to_string();
        let path = input.to_str().unwrap();
        let crop = d.join(format!("{name}-crop.tif"));
        ok(&["crop", path, "--cells", "3,5,20,10", "-o", crop.to_str().unwrap()], d);
        assert_window_georeference(&input, &crop, (3.0, 5.0), 1.0, [20, 10]);
        let Some(info) = gdalinfo(&input) else { return };
        let size: Vec<u64> = info["size"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
        let grown = d.join(format!("{name}-x2.tif"));
        ok(&["resample", path, "--factor", "2", "-o", grown.to_str().unwrap()], d);
        assert_window_georeference(&input, &grown, (0.0, 0.0), 2.0, [2 * size[0], 2 * size[1]]);
        // the crop by map coordinates of the crop's own corners is the same crop
        let crop_info = gdalinfo(&crop).unwrap();
        let (_, gt, _, _) = georeference(&crop_info);
        let projwin = format!("{},{},{},{}", gt[0], gt[3], gt[0] + 20.0 * gt[1], gt[3] + 10.0 * gt[5]);
        let again = d.join(format!("{name}-projwin.tif"));
        ok(&["crop", path, "--projwin", &projwin, "-o", again.to_str().unwrap()], d);
        assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&crop).unwrap(), "{name}: --projwin {projwin}");
    }
}
