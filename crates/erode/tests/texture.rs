//! Texture maps: each mask's documented mapping on surfaces whose quantity is known, the
//! normal map's conventions, the splat's rules, and the same bits on any thread count.

use erode::texture::{Baker, Layer, Mask, NormalConvention, Options, Rules};
use erode::{CellSize, Grid, Heightmap, TextureError};

/// A map of `w x h` cells of `cell` metres with heights `f(x east, y south)` in metres.
fn map(w: usize, h: usize, cell: f64, f: impl Fn(f64, f64) -> f64) -> Heightmap {
    let g = Grid::from_fn(w, h, CellSize::square(cell), |r, c| f(c as f64 * cell, r as f64 * cell) as f32).unwrap();
    Heightmap::new(g).unwrap()
}

/// A rough terrain (sines and hash noise) with valleys, ridges and a nodata hole.
fn rough(w: usize, h: usize) -> Heightmap {
    let g = Grid::from_fn(w, h, CellSize::square(2.0), |r, c| {
        let (x, y) = (c as f64, r as f64);
        let hash = ((r * 7919 + c * 104_729) % 1000) as f64 / 1000.0;
        ((x * 0.07).sin() * 25.0 + (y * 0.05).cos() * 30.0 + (x * 0.013 + y * 0.021).sin() * 60.0 + hash) as f32
    })
    .unwrap();
    let nodata: Vec<bool> = (0..w * h).map(|i| (i / w).abs_diff(h / 2) < 3 && (i % w).abs_diff(w / 3) < 3).collect();
    Heightmap::with_nodata(g, Some(nodata)).unwrap()
}

fn at(values: &[f32], w: usize, r: usize, c: usize) -> f64 {
    f64::from(values[r * w + c])
}

#[test]
fn slope_and_talus_follow_the_angle() {
    for degrees in [0.0f64, 20.0, 33.0, 45.0, 60.0] {
        let s = degrees.to_radians().tan();
        let m = map(16, 16, 2.0, |x, _| s * x);
        let b = Baker::new(&m, Options::default()).unwrap();
        let slope = at(b.mask(Mask::Slope).unwrap(), 16, 8, 8);
        assert!((slope - degrees / 90.0).abs() < 1e-5, "{degrees}°: {slope}");
        let talus = at(b.mask(Mask::Talus).unwrap(), 16, 8, 8);
        let want = if (30.0..=38.0).contains(&degrees) { 1.0 } else { 0.0 };
        assert!((talus - want).abs() < 1e-6, "{degrees}°: talus {talus}");
    }
}

#[test]
fn flow_and_wetness_count_the_cells_upstream() {
    // a ramp down to the east edge, 3 m cells: cell (r, c) gathers c + 1 cells from the west
    // (MFD on a plane shares between a row and its neighbours equally, away from the north and
    // south edges, whose effect spreads a row a column)
    let (w, h) = (40, 80);
    let m = map(w, h, 3.0, |x, _| 200.0 - 0.1 * x);
    let b = Baker::new(&m, Options::default()).unwrap();
    let flow = b.mask(Mask::Flow).unwrap();
    let wet = b.mask(Mask::Wetness).unwrap();
    for c in [1usize, 9, 30] {
        let cells = (c + 1) as f64;
        assert!((at(flow, w, 40, c) - cells.log10() / 6.0).abs() < 1e-5, "column {c}: {}", at(flow, w, 40, c));
        // a = cells · 9 m² / 3 m, tan β = 0.1 (off the edge columns, where Horn reads the map's
        // edge as level)
        let twi = (cells * 3.0 / 0.1).ln();
        let want = ((twi - 2.0) / 16.0).clamp(0.0, 1.0);
        assert!((at(wet, w, 40, c) - want).abs() < 1e-4, "column {c}: {} against {want}", at(wet, w, 40, c));
    }
}

#[test]
fn occlusion_is_one_in_the_open_and_less_in_a_valley() {
    let flat = map(64, 64, 2.0, |_, _| 10.0);
    let b = Baker::new(&flat, Options::default()).unwrap();
    assert!(b.mask(Mask::Occlusion).unwrap().iter().all(|&v| v == 1.0));
    // a V valley along y, sides at 45°: its floor sees the sky between the two sides; its
    // ridge line (a peak of the crest) sees all of it
    let v = map(65, 65, 2.0, |x, _| (x - 64.0).abs());
    let b = Baker::new(&v, Options::default()).unwrap();
    let o = b.mask(Mask::Occlusion).unwrap();
    let floor = at(o, 65, 32, 32);
    assert!(floor < 0.75 && floor > 0.4, "valley floor {floor}");
    assert!(at(o, 65, 32, 0) > floor, "the ridge sees more sky");
}

#[test]
fn curvature_is_bright_on_ridges_dark_in_valleys() {
    let v = map(65, 65, 2.0, |x, _| (x - 64.0).abs());
    let ridge = map(65, 65, 2.0, |x, _| -(x - 64.0).abs());
    let plane = map(65, 65, 2.0, |x, y| 0.3 * x - 0.2 * y);
    let c = |m: &Heightmap| at(Baker::new(m, Options::default()).unwrap().mask(Mask::Curvature).unwrap(), 65, 32, 32);
    assert!(c(&v) < 0.2, "valley {}", c(&v));
    assert!(c(&ridge) > 0.8, "ridge {}", c(&ridge));
    assert!((c(&plane) - 0.5).abs() < 1e-6, "plane {}", c(&plane));
}

#[test]
fn run_maps_map_their_depth() {
    let m = map(8, 8, 1.0, |x, y| x + y);
    let depth = Grid::from_fn(8, 8, CellSize::square(1.0), |r, _| r as f32 * 0.5).unwrap();
    let options = Options { depth_scale: 2.0, ..Options::default() };
    let b = Baker::new(&m, options).unwrap();
    assert!(!b.available().contains(&Mask::Erosion));
    assert_eq!(b.mask(Mask::Erosion).err(), Some(TextureError::NeedsRunMap { mask: "erosion", map: "erosion" }));
    let b = b.with_run_map("erosion", &depth).unwrap();
    let e = b.mask(Mask::Erosion).unwrap();
    for r in 0..8 {
        let want = 1.0 - (-(r as f64 * 0.5) / 2.0).exp();
        assert!((at(e, 8, r, 3) - want).abs() < 1e-6, "row {r}");
    }
    let small = Grid::from_fn(4, 8, CellSize::square(1.0), |_, _| 0.0f32).unwrap();
    assert!(matches!(
        Baker::new(&m, options).unwrap().with_run_map("deposition", &small).err(),
        Some(TextureError::Shape { .. })
    ));
}

/// Decodes a normal map's pixel to a vector.
fn normal_at(n: &[f32], w: usize, r: usize, c: usize) -> [f64; 3] {
    let i = (r * w + c) * 3;
    [0, 1, 2].map(|k| f64::from(n[i + k]) * 2.0 - 1.0)
}

#[test]
fn normals_are_unit_and_green_follows_the_convention() {
    // rising to the east (slope 0.5) and to the north (0.25 per m northwards: falling south)
    let m = map(16, 16, 2.0, |x, y| 0.5 * x - 0.25 * y);
    let b = Baker::new(&m, Options::default()).unwrap();
    let gl = b.normal_map(NormalConvention::OpenGl, 1.0).unwrap();
    let dx = b.normal_map(NormalConvention::DirectX, 1.0).unwrap();
    let n = normal_at(&gl, 16, 8, 8);
    let length = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    assert!((length - 1.0).abs() < 1e-6, "{n:?}");
    // (−∂z/∂x, −∂z/∂y_north, 1) normalised
    let want = {
        let v = [-0.5, -0.25, 1.0f64];
        let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        v.map(|c| c / l)
    };
    for k in 0..3 {
        assert!((n[k] - want[k]).abs() < 1e-6, "{n:?} against {want:?}");
    }
    let d = normal_at(&dx, 16, 8, 8);
    assert!((d[0] - n[0]).abs() < 1e-6 && (d[1] + n[1]).abs() < 1e-6 && (d[2] - n[2]).abs() < 1e-6);
    assert!(b.normal_map(NormalConvention::OpenGl, 0.0).is_err());
}

#[test]
fn splat_weights_sum_to_one_and_layers_cover_those_below() {
    let m = rough(96, 80);
    let b = Baker::new(&m, Options::default()).unwrap();
    let splat = b.splat(&Rules::default()).unwrap();
    assert_eq!(splat.names, ["rock", "grass", "scree", "sand", "snow"]);
    let n = 96 * 80;
    let nodata = m.nodata_mask().unwrap();
    for i in 0..n {
        let sum: f64 = splat.weights.iter().map(|w| f64::from(w[i])).sum();
        if nodata[i] {
            assert_eq!(sum, 0.0, "cell {i}");
        } else {
            assert!((sum - 1.0).abs() < 1e-5, "cell {i}: {sum}");
        }
    }
    // snow on the highest cells, none on the lowest
    let stats = m.stats();
    let (hi, lo) = (0..n).filter(|&i| !nodata[i]).fold((0, 0), |(h, l), i| {
        let z = m.heights.as_slice();
        (if z[i] > z[h] { i } else { h }, if z[i] < z[l] { i } else { l })
    });
    assert_eq!(m.heights.as_slice()[hi], stats.max);
    assert!(splat.weights[4][hi] > 0.5, "snow at the top: {}", splat.weights[4][hi]);
    assert_eq!(splat.weights[4][lo], 0.0);
    // a layer with no conditions covers everything before it
    let mut rules = Rules::default();
    rules.layers.push(Layer { name: "paint".into(), colour: [255, 0, 0], fade: 0.0, when: Default::default() });
    let all = b.splat(&rules).unwrap();
    assert!((0..n).filter(|&i| !nodata[i]).all(|i| all.weights[5][i] == 1.0));
    assert!((0..n).filter(|&i| !nodata[i]).all(|i| all.albedo[i * 3] == 1.0 && all.albedo[i * 3 + 1] == 0.0));
}

#[test]
fn bad_rules_are_refused_naming_the_layer() {
    let m = map(8, 8, 1.0, |x, _| x);
    let b = Baker::new(&m, Options::default()).unwrap();
    let with = |edit: &dyn Fn(&mut Rules)| {
        let mut r = Rules::default();
        edit(&mut r);
        b.splat(&r).unwrap_err().to_string()
    };
    let e = with(&|r| {
        r.layers[1].when.insert("steepness".into(), [0.0, 1.0]);
    });
    assert!(e.contains("`grass`") && e.contains("steepness") && e.contains("slope"), "{e}");
    let e = with(&|r| {
        r.layers[2].when.insert("flow".into(), [0.8, 0.2]);
    });
    assert!(e.contains("`scree`") && e.contains("low <= high"), "{e}");
    let e = with(&|r| r.layers[3].name = "rock".into());
    assert!(e.contains("two layers"), "{e}");
    let e = with(&|r| r.layers[0].name = "a/b".into());
    assert!(e.contains("names a file"), "{e}");
    let e = with(&|r| {
        r.layers[1].when.insert("erosion".into(), [0.1, 1.0]);
    });
    assert!(e.contains("`grass`") && e.contains("erosion"), "{e}");
    let e = with(&|r| r.layers.clear());
    assert!(e.contains("0 layers"), "{e}");
}

#[test]
fn nodata_cells_are_zero_and_every_mask_is_in_range() {
    let m = rough(96, 80);
    let depth = Grid::from_fn(96, 80, CellSize::square(2.0), |r, c| ((r + c) % 7) as f32 * 0.3).unwrap();
    let b = Baker::new(&m, Options::default())
        .unwrap()
        .with_run_map("erosion", &depth)
        .unwrap()
        .with_run_map("deposition", &depth)
        .unwrap()
        .with_run_map("sediment_depth", &depth)
        .unwrap();
    assert_eq!(b.available().len(), erode::texture::MASKS.len());
    let nodata = m.nodata_mask().unwrap();
    for mask in b.available() {
        let v = b.mask(mask).unwrap();
        assert!(v.iter().all(|x| (0.0..=1.0).contains(x)), "{mask:?}");
        assert!(v.iter().zip(nodata).all(|(&x, &out)| !out || x == 0.0), "{mask:?}");
        assert!(v.iter().zip(nodata).any(|(&x, &out)| !out && x > 0.0), "{mask:?} is all zero");
    }
}

#[test]
fn the_same_bits_on_any_thread_count() {
    let m = rough(130, 90);
    let bake = || {
        let b = Baker::new(&m, Options::default()).unwrap();
        let mut all: Vec<f32> = Vec::new();
        for mask in b.available() {
            all.extend_from_slice(b.mask(mask).unwrap());
        }
        all.extend(b.normal_map(NormalConvention::OpenGl, 1.0).unwrap());
        let s = b.splat(&Rules::default()).unwrap();
        all.extend(s.weights.concat());
        all.extend(s.albedo);
        all.iter().map(|v| v.to_bits()).collect::<Vec<u32>>()
    };
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(bake);
    let three = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap().install(bake);
    assert_eq!(one, three);
}

#[test]
fn options_out_of_range_are_refused() {
    let m = map(8, 8, 1.0, |x, _| x);
    for o in [
        Options { curvature_scale: 0.0, ..Options::default() },
        Options { curvature_radius: f64::NAN, ..Options::default() },
        Options { occlusion_radius: 0, ..Options::default() },
        Options { depth_scale: -1.0, ..Options::default() },
    ] {
        assert!(matches!(Baker::new(&m, o).err(), Some(TextureError::Option { .. })), "{o:?}");
    }
}

/// docs/masks.md gives every mask's mapping as the library defines it.
#[test]
fn the_docs_give_every_mapping() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/masks.md")).unwrap();
    for m in erode::texture::MASKS {
        let row = docs.lines().find(|l| l.starts_with(&format!("| `{}` |", m.name)));
        let row = row.unwrap_or_else(|| panic!("docs/masks.md has no row for `{}`", m.name));
        assert!(row.contains(m.mapping), "docs/masks.md's `{}` row does not give its mapping: {}", m.name, m.mapping);
    }
}

#[test]
fn a_run_map_no_mask_reads_is_refused() {
    let m = map(8, 8, 1.0, |x, _| x);
    let g = Grid::from_fn(8, 8, CellSize::square(1.0), |_, _| 0.0f32).unwrap();
    let e = Baker::new(&m, Options::default()).unwrap().with_run_map("rain", &g).err().unwrap();
    assert!(e.to_string().contains("`rain`") && e.to_string().contains("sediment_depth"), "{e}");
}
