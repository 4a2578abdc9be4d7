//! Every integration test of the library, one module per file beside this one, in one test
//! binary: one link instead of one per file, and the files' tests share the test threads (a
//! file whose last test runs alone no longer leaves a core idle while the next file waits).

mod common;

/// Files of tests/ built as binaries of their own (see Cargo.toml).
const OWN_BINARY: &[&str] = &[];

mod analysis;
mod contract;
mod droplet;
mod droplet_look;
#[cfg(feature = "gpu")]
mod gpu_droplet;
#[cfg(feature = "gpu")]
mod gpu_grid;
#[cfg(feature = "gpu")]
mod gpu_layout;
mod grid_erosion;
mod grid_layer;
mod grid_look;
mod grid_sweep;
mod grid_water;
mod nodata;
mod open_edge;
mod param_docs;
mod sph;
mod stream_power;
mod texture;
mod thermal;

/// A file added to tests/ and not named above would never compile or run (`autotests = false`).
#[test]
fn every_test_file_is_named_here() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let this = std::fs::read_to_string(dir.join("all.rs")).unwrap();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let Some(module) = name.strip_suffix(".rs") else { continue };
        if module == "all" || OWN_BINARY.contains(&module) {
            continue;
        }
        assert!(this.contains(&format!("mod {module};")), "tests/{name} is not named in tests/all.rs");
    }
}
