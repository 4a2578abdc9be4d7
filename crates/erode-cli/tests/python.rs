//! The Python package: installed with pip into a fresh virtual environment, its pytest suite run
//! against this command line (same input and parameters, same bytes).
//!
//! Needs `python3` with `venv` and Python's package registry (for pip, maturin, numpy, pytest);
//! without them the test says so and passes, unless ERODE_REQUIRE_PYTHON=1 (as in CI).

use std::path::{Path, PathBuf};
use std::process::Command;

fn required() -> bool {
    std::env::var_os("ERODE_REQUIRE_PYTHON").is_some_and(|v| v == "1")
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_python_package_installs_and_its_tests_pass() {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let has_venv = Command::new(&python).args(["-m", "venv", "--help"]).output().is_ok_and(|o| o.status.success());
    if !has_venv {
        assert!(!required(), "ERODE_REQUIRE_PYTHON=1 but `{python} -m venv` does not run");
        eprintln!("skipped: no `{python}` with venv (set PYTHON, or ERODE_REQUIRE_PYTHON=1 to fail)");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let package = root.join("crates/erode-python");
    let venv = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("python-venv");
    let bin = venv.join("bin");
    if !bin.join("python").exists() {
        run(Command::new(&python).args(["-m", "venv"]).arg(&venv), "creating the virtual environment");
    }
    run(
        Command::new(bin.join("python")).args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "maturin>=1.16,<2",
            "pytest",
            "numpy",
        ]),
        "pip install maturin pytest numpy",
    );
    let path = std::env::join_paths(
        std::iter::once(bin.clone()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    // the package as a user installs it, built with the workspace's dev profile (its simulation
    // crates optimised) so it reuses what `cargo test` compiled
    run(
        Command::new(bin.join("python"))
            .args(["-m", "pip", "install", "--quiet", "--no-build-isolation", "--force-reinstall", "--no-deps"])
            .arg(&package)
            .env("MATURIN_PEP517_ARGS", "--profile dev")
            .env("PATH", path),
        "pip install crates/erode-python",
    );
    run(
        Command::new(bin.join("python"))
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .arg(package.join("tests"))
            .env("ERODE_BIN", env!("CARGO_BIN_EXE_erode")),
        "pytest crates/erode-python/tests",
    );
}
