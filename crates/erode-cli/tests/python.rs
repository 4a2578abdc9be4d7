//! The Python package as a user gets it: a wheel built as a release builds it (maturin with zig,
//! abi3, manylinux2014), checked by auditwheel, installed by pip into a fresh virtual
//! environment with no Rust toolchain on PATH, and its pytest suite run there against this
//! command line (same input and parameters, same bytes).
//!
//! Needs `python3` with `venv` and Python's package registry (for pip, maturin, ziglang,
//! auditwheel, numpy, xarray, matplotlib, pytest); without them the test says so and passes, unless
//! ERODE_REQUIRE_PYTHON=1 (as in CI).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

fn required() -> bool {
    std::env::var_os("ERODE_REQUIRE_PYTHON").is_some_and(|v| v == "1")
}

/// Runs `cmd`, failing the test with its output unless it succeeds; returns its stdout.
fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A fresh virtual environment at `dir` (an old one removed first).
fn fresh_venv(python: &str, dir: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    run(Command::new(python).args(["-m", "venv"]).arg(dir), "creating a virtual environment");
    dir.join("bin")
}

/// `first` ahead of the directories of PATH.
fn path_with(first: &Path) -> OsString {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(first.to_path_buf()).chain(std::env::split_paths(&rest))).unwrap()
}

#[test]
fn the_python_wheel_installs_without_rust_and_its_tests_pass() {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let has_venv = Command::new(&python).args(["-m", "venv", "--help"]).output().is_ok_and(|o| o.status.success());
    if !has_venv {
        assert!(!required(), "ERODE_REQUIRE_PYTHON=1 but `{python} -m venv` does not run");
        eprintln!("skipped: no `{python}` with venv (set PYTHON, or ERODE_REQUIRE_PYTHON=1 to fail)");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let package = root.join("crates/erode-python");
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));

    // 1. the wheel: abi3 (one wheel for CPython 3.9 and later), linked by zig against glibc 2.17
    // (manylinux2014), in the workspace's `wheel-test` profile (only the library optimised, at
    // opt-level 1: zig's target shares no build with the tests) to keep CI short; a release adds
    // --release
    let tools = tmp.join("python-tools");
    if !tools.join("bin/maturin").exists() {
        fresh_venv(&python, &tools);
        run(
            Command::new(tools.join("bin/python")).args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "maturin>=1.16,<2",
                "ziglang",
                "auditwheel",
            ]),
            "pip install maturin ziglang auditwheel",
        );
    }
    let dist = tmp.join("python-wheels");
    let _ = std::fs::remove_dir_all(&dist);
    run(
        Command::new(tools.join("bin/maturin"))
            .args(["build", "--profile", "wheel-test", "--zig", "--compatibility", "manylinux2014", "--quiet", "-m"])
            .arg(package.join("Cargo.toml"))
            .arg("-o")
            .arg(&dist)
            .env("PATH", path_with(&tools.join("bin"))),
        "maturin build --zig",
    );
    let wheels: Vec<PathBuf> = std::fs::read_dir(&dist).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(wheels.len(), 1, "one wheel in {}: {wheels:?}", dist.display());
    let wheel = &wheels[0];
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("erode-") && name.contains("-cp39-abi3-") && name.contains("manylinux_2_17_x86_64"),
        "{name}"
    );
    // auditwheel reads the extension's ELF: no library outside the manylinux policy, no glibc
    // symbol newer than 2.17
    let shown = run(Command::new(tools.join("bin/auditwheel")).arg("show").arg(wheel), "auditwheel show");
    assert!(shown.contains("manylinux_2_17_x86_64"), "auditwheel show:\n{shown}");

    // 2. pip install into a fresh environment whose PATH has no cargo or rustc: only wheels
    let env = tmp.join("python-env");
    let bin = fresh_venv(&python, &env);
    let bare = std::env::join_paths([bin.clone(), "/usr/bin".into(), "/bin".into()]).unwrap();
    for dir in std::env::split_paths(&bare) {
        assert!(!dir.join("cargo").exists() && !dir.join("rustc").exists(), "a Rust toolchain in {}", dir.display());
    }
    run(
        Command::new(bin.join("python"))
            .args(["-m", "pip", "install", "--quiet", "--only-binary=:all:", "numpy", "pytest", "xarray", "matplotlib"])
            .arg(wheel)
            .env("PATH", &bare)
            .env_remove("CARGO")
            .env_remove("CARGO_HOME")
            .env_remove("RUSTUP_HOME"),
        "pip install the wheel",
    );

    // 3. its tests, against this command line
    run(
        Command::new(bin.join("python"))
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .arg(package.join("tests"))
            .env("PATH", &bare)
            .env("ERODE_BIN", env!("CARGO_BIN_EXE_erode")),
        "pytest crates/erode-python/tests",
    );
}
