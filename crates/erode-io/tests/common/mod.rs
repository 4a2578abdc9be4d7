//! Named test inputs shared by the erode-io tests.
#![allow(dead_code)]

use erode::terrain::{TerrainKind, TerrainSpec, generate};
use erode::{CellSize, Heightmap};

/// A small non-square noise terrain straddling sea level, with non-square cells.
pub fn noise_map() -> Heightmap {
    let spec = TerrainSpec {
        kind: TerrainKind::Fbm,
        width: 67,
        height: 41,
        cell_size: CellSize { x: 2.0, y: 3.0 },
        seed: 11,
        relief: 120.0,
        base: -40.0,
        feature_size: 32.0,
        ..Default::default()
    };
    generate(&spec).unwrap()
}

/// The same terrain with a nodata hole in one corner block.
pub fn map_with_hole() -> Heightmap {
    let m = noise_map();
    let w = m.heights.width();
    let mask: Vec<bool> = (0..m.heights.len()).map(|i| i / w < 5 && i % w < 7).collect();
    Heightmap::with_nodata(m.heights.clone(), Some(mask)).unwrap()
}

/// Where the downloaded real DEMs live (see scripts/fetch-testdata.sh).
pub fn testdata(name: &str) -> Option<std::path::PathBuf> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(name);
    if p.exists() {
        return Some(p);
    }
    if std::env::var_os("ERODE_REQUIRE_DATA").is_some_and(|v| v == "1") {
        panic!("{} is missing and ERODE_REQUIRE_DATA=1: run scripts/fetch-testdata.sh", p.display());
    }
    eprintln!("skipping: {} not found (run scripts/fetch-testdata.sh)", p.display());
    None
}
