//! Helpers shared by the CLI tests: run `erode`, expect success or a refusal, find test data.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The entries of a folder.
pub fn files_in(dir: &Path) -> std::collections::BTreeSet<PathBuf> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect()
}

pub fn erode(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_erode")).args(args).current_dir(dir).output().unwrap()
}

/// Runs a command that must succeed; returns its stdout.
pub fn ok(args: &[&str], dir: &Path) -> String {
    let out = erode(args, dir);
    assert!(out.status.success(), "erode {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Runs a command that must fail with status 2 and one line naming `needle`; returns stderr.
pub fn refused(args: &[&str], dir: &Path, needle: &str) -> String {
    let out = erode(args, dir);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "erode {args:?}: {err}");
    assert!(err.contains(needle), "erode {args:?}: stderr does not name `{needle}`: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "erode {args:?}: more than one line: {err}");
    err
}

/// A real DEM fetched by scripts/fetch-testdata.sh; `None` (with a message) when absent, a
/// failure when ERODE_REQUIRE_DATA=1.
pub fn testdata(name: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata").join(name);
    if p.exists() {
        return Some(p.canonicalize().unwrap());
    }
    if std::env::var_os("ERODE_REQUIRE_DATA").is_some_and(|v| v == "1") {
        panic!("{} is missing and ERODE_REQUIRE_DATA=1: run scripts/fetch-testdata.sh", p.display());
    }
    eprintln!("skipping: {} not found (run scripts/fetch-testdata.sh)", p.display());
    None
}

/// `info --json` of a file.
pub fn info(file: &str, dir: &Path) -> serde_json::Value {
    serde_json::from_str(&ok(&["info", "--json", file], dir)).unwrap()
}
