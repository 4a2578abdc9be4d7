//! Every integration test of the command line but `ranks.rs` (its own binary: CI runs it again
//! with the `mpi` feature), one module per file beside this one, in one test binary: one link
//! instead of one per file, and the files' tests share the test threads (the Python wheel's
//! downloads and the signal tests' waits overlap other files' work).

mod common;

/// Files of tests/ built as binaries of their own (see Cargo.toml).
const OWN_BINARY: &[&str] = &["ranks"];

mod analyze;
mod bad_input;
mod cli;
mod engine;
mod gdal;
mod gpu_bench;
mod interrupt;
mod masks;
mod output_folder;
mod python;
mod recipes;
mod report;
mod simulate;
mod sph;
mod stream_power;
mod transform;
mod view;

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
