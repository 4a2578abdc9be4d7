//! `scripts/gpu-bench.sh --small` runs end to end (on lavapipe in CI): every line of the
//! production-scale table, at sizes a software GPU manages, from the binary alone.

use std::process::Command;

#[test]
fn the_gpu_bench_script_runs_end_to_end_at_small_sizes() {
    let have_gpu = Command::new(env!("CARGO_BIN_EXE_erode")).arg("gpu-info").output().unwrap().status.success();
    if !have_gpu {
        assert!(std::env::var_os("ERODE_REQUIRE_GPU").is_none_or(|v| v != "1"), "ERODE_REQUIRE_GPU=1 but no adapter");
        eprintln!("skipping: no GPU adapter");
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/gpu-bench.sh");
    let out = Command::new("bash").args([script, env!("CARGO_BIN_EXE_erode"), "--small"]).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "gpu-bench.sh failed:\n{stdout}\n{stderr}");
    for line in [
        "grid on gpu (",
        "64², ",
        "128², ",
        "## GPU books",
        "grid on cpu, 64²",
        "grid, GPU, 10 iterations: ",
        "grid, CPU on 2 threads, 1 iteration: ",
        "grid on cpu, 128², 1 threads",
        "stream power, 1 threads: ",
        "droplet on gpu (",
    ] {
        assert!(stdout.contains(line), "no `{line}` in:\n{stdout}");
    }
    assert!(!stdout.contains("NOT FINITE") && !stderr.contains("XDG_RUNTIME_DIR"), "{stdout}\n{stderr}");
    // every bench line's books balance
    for line in stdout.lines().filter(|l| l.contains("books' relative error")) {
        let e: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(e < 1e-5, "{line}");
    }
}
