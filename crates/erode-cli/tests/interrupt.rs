//! Runs that are stopped or starved: a real SIGINT or SIGTERM mid-run leaves a checkpoint and no
//! output set or temporary file, and `--resume` then gives the straight run's bytes; a second
//! signal stops it at once, leaving no temporary; every other command stops at once on a signal,
//! leaving nothing; a full disk (a small tmpfs) fails with one line and leaves no partial set.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{files_in, ok};

/// Starts `erode args` in `dir`, sends `signal` once `ready` holds (or after `wait`), and
/// returns the exit code and stderr.
fn stop(args: &[&str], dir: &Path, signal: &str, ready: impl Fn() -> bool, wait: Duration) -> (Option<i32>, String) {
    let child =
        Command::new(env!("CARGO_BIN_EXE_erode")).args(args).current_dir(dir).stderr(Stdio::piped()).spawn().unwrap();
    let started = Instant::now();
    while !ready() && started.elapsed() < wait {
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = Command::new("kill").arg(format!("-{signal}")).arg(child.id().to_string()).status().unwrap();
    assert!(status.success(), "kill -{signal} failed: the run ended before the signal; make it longer");
    let out = child.wait_with_output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).to_string())
}

#[test]
fn a_signal_mid_run_leaves_a_checkpoint_and_resume_equals_a_straight_run() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "512", "--seed", "3", "-o", "t.tif"], d);
    let cases: [(&str, &[&str], &str); 2] = [
        // the grid writes a checkpoint every 20 iterations: signal once the first is there
        ("grid", &["--iterations", "3000", "--checkpoint-every", "20"], "INT"),
        ("droplet", &["--droplets", "20000000", "--checkpoint-every", "16384"], "TERM"),
    ];
    for (model, count, signal) in cases {
        let out = format!("{model}-stopped");
        let mut args = vec!["simulate", model, "t.tif", "-o", &out, "-q"];
        args.extend_from_slice(count);
        let ckpts = d.join(&out).join("checkpoints");
        let first_checkpoint = || files_in_or_none(&ckpts).iter().any(|p| p.extension().is_some_and(|e| e == "ckpt"));
        let (code, err) = stop(&args, d, signal, first_checkpoint, Duration::from_secs(30));
        assert_eq!(code, Some(130), "{model}: {err}");
        assert!(err.contains("interrupted at") && err.contains("--resume"), "{model}: {err}");
        // no output set, no staging folder, no temporary file
        let left: Vec<_> = files_in(&d.join(&out)).into_iter().collect();
        assert_eq!(left, vec![d.join(&out).join("checkpoints")], "{model}");
        for p in files_in(&ckpts) {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            assert!(name.ends_with(".ckpt"), "{model}: {name} left behind");
        }
        // resume to a little past where it stopped, and compare with a straight run to there
        let stopped_at: u64 = files_in(&ckpts)
            .iter()
            .filter_map(|p| p.file_stem()?.to_str()?.rsplit('-').next()?.parse().ok())
            .max()
            .unwrap();
        let target = (stopped_at + if model == "grid" { 10 } else { 32768 }).to_string();
        let rerun = |out: &str, resume: bool| {
            let mut args = vec!["simulate", model, "t.tif", "-o", out, "-q", count[0], &target];
            if resume {
                args.push("--resume");
            }
            ok(&args, d);
        };
        rerun(&out, true);
        let straight = format!("{model}-straight");
        rerun(&straight, false);
        let a = std::fs::read(d.join(&out).join("height.tif")).unwrap();
        let b = std::fs::read(d.join(&straight).join("height.tif")).unwrap();
        assert!(a == b, "{model}: stopped at {stopped_at} and resumed to {target} differs from a straight run");
    }
}

/// Names in `dir` and below that a stopped process must not leave: temporaries, staging
/// folders, locks.
fn leftovers(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for p in files_in_or_none(dir) {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with(".erode") {
            found.push(p.display().to_string());
        }
        if p.is_dir() {
            found.extend(leftovers(&p));
        }
    }
    found
}

#[test]
fn a_second_signal_stops_a_run_at_once_leaving_no_temporary() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "512", "--seed", "4", "-o", "t.tif"], d);
    let args = ["simulate", "grid", "t.tif", "-o", "out", "-q", "--iterations", "100000", "--checkpoint-every", "10"];
    let child =
        Command::new(env!("CARGO_BIN_EXE_erode")).args(args).current_dir(d).stderr(Stdio::piped()).spawn().unwrap();
    let ckpts = d.join("out/checkpoints");
    let started = Instant::now();
    while !files_in_or_none(&ckpts).iter().any(|p| p.extension().is_some_and(|e| e == "ckpt"))
        && started.elapsed() < Duration::from_secs(30)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    // two signals 50 ms apart: the first asks for a stop at the batch's end, the second is at once
    for _ in 0..2 {
        let _ = Command::new("kill").arg("-INT").arg(child.id().to_string()).status();
        std::thread::sleep(Duration::from_millis(50));
    }
    let signalled = Instant::now();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(signalled.elapsed() < Duration::from_secs(1), "took {:?} to stop", signalled.elapsed());
    assert_eq!(leftovers(d), Vec::<String>::new(), "{err}");
    // no output set: the checkpoints only
    let names: Vec<_> = files_in(&d.join("out")).iter().map(|p| p.file_name().unwrap().to_owned()).collect();
    assert_eq!(names, ["checkpoints"], "{err}");
}

/// Every command that is not a simulation stops at once on a signal, at any point of its work:
/// status 130 within a second, nothing written, nothing left (or, signalled too late, its
/// output complete).
#[test]
fn every_other_command_stops_at_once_on_a_signal_leaving_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "2048", "--seed", "5", "-o", "big.tif"], d);
    ok(&["resample", "big.tif", "--size", "4096", "-o", "bigger.tif"], d);
    let cases: [(&str, &[&str], &str); 8] = [
        ("generate", &["generate", "--size", "4096", "-o", "out.tif"], "out.tif"),
        ("analyze", &["analyze", "big.tif", "--json", "-o", "plots"], "plots"),
        ("convert", &["convert", "bigger.tif", "-o", "out.png"], "out.png"),
        ("render", &["render", "bigger.tif", "-o", "out.png"], "out.png"),
        ("resample", &["resample", "big.tif", "--size", "6144", "-o", "out.tif"], "out.tif"),
        ("rescale", &["rescale", "bigger.tif", "--factor", "2", "-o", "out.png"], "out.png"),
        ("amplify", &["amplify", "--size", "2048", "--levels", "2", "-o", "out", "-q"], "out"),
        ("demo", &["demo", "--size", "256", "--iterations", "3000", "-o", "out", "-q"], "out"),
    ];
    for (name, args, output) in cases {
        let mut stopped = 0;
        for (k, delay) in [300u64, 900, 1500, 2100].into_iter().enumerate() {
            let signal = if k % 2 == 0 { "INT" } else { "TERM" };
            let child = Command::new(env!("CARGO_BIN_EXE_erode"))
                .args(args)
                .current_dir(d)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            std::thread::sleep(Duration::from_millis(delay));
            let sent = Command::new("kill").arg(format!("-{signal}")).arg(child.id().to_string()).status().unwrap();
            let signalled = Instant::now();
            let out = child.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            let left = leftovers(d);
            assert!(left.is_empty(), "{name} signalled after {delay} ms left {left:?}: {err}");
            let path = d.join(output);
            // an output there is whole: a folder with its report, a PNG (a map or a picture)
            // that decodes to its last row, a map that reads
            let whole = || {
                if path.is_dir() {
                    path.join("report.json").is_file()
                } else if output.ends_with(".png") {
                    let file = std::io::BufReader::new(std::fs::File::open(&path).unwrap());
                    let mut reader = png::Decoder::new(file).read_info().unwrap();
                    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
                    reader.next_frame(&mut buf).is_ok()
                } else {
                    common::erode(&["info", output], d).status.success()
                }
            };
            if sent.success() && out.status.code() == Some(130) {
                stopped += 1;
                assert!(signalled.elapsed() < Duration::from_secs(1), "{name}: {:?} to stop", signalled.elapsed());
                // stopped before its output was in place: none; just after (the signal came
                // between the last rename and the exit): a whole one
                assert!(!path.exists() || whole(), "{name} signalled after {delay} ms left a partial {output}: {err}");
            } else {
                // it ended before the signal: its output is whole
                assert_eq!(out.status.code(), Some(0), "{name} after {delay} ms: {err}");
                assert!(path.exists() && whole(), "{name}: {output} missing or partial");
            }
            if path.is_dir() {
                std::fs::remove_dir_all(&path).unwrap();
            } else if path.exists() {
                std::fs::remove_file(&path).unwrap();
            }
        }
        assert!(stopped > 0, "{name} always ended before the signal: make it longer");
    }
}

/// The entries of `dir`, or none when it does not exist (yet).
fn files_in_or_none(dir: &Path) -> Vec<std::path::PathBuf> {
    if dir.is_dir() { files_in(dir).into_iter().collect() } else { Vec::new() }
}

/// A tmpfs of `bytes` mounted on a fresh folder, unmounted when dropped; `None` (with a
/// message) where this process may not mount one.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn new(bytes: u64) -> Option<Self> {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
            .arg(dir.path())
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Self { dir }),
            Ok(o) => {
                eprintln!("skipping the full-disk case: cannot mount a tmpfs: {}", String::from_utf8_lossy(&o.stderr));
                None
            }
            Err(e) => {
                eprintln!("skipping the full-disk case: cannot run mount: {e}");
                None
            }
        }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// Total size of the files in `dir` and below, bytes.
fn size_of(dir: &Path) -> u64 {
    files_in(dir).iter().map(|p| if p.is_dir() { size_of(p) } else { p.metadata().unwrap().len() }).sum()
}

#[test]
fn a_full_disk_fails_with_one_line_and_leaves_no_partial_set() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(&["generate", "--size", "96", "-o", "t.tif"], d);
    // checkpoints kept: the disk fills after one is written
    ok(&["simulate", "grid", "t.tif", "-o", "roomy", "--iterations", "5", "--checkpoint-every", "5", "-q"], d);
    let checkpoints = size_of(&d.join("roomy/checkpoints"));
    let outputs = size_of(&d.join("roomy")) - checkpoints;
    // room for nothing, then room for the checkpoint but not for the whole set
    for room in [16 * 1024, checkpoints + outputs / 2] {
        let Some(disk) = SmallDisk::new(room) else { return };
        let out = disk.dir.path().join("out");
        let out_arg = out.to_str().unwrap().to_string();
        let args = ["simulate", "grid", "t.tif", "-o", &out_arg, "--iterations", "5", "--checkpoint-every", "5", "-q"];
        let run = common::erode(&args, d);
        let err = String::from_utf8_lossy(&run.stderr).trim_end().to_string();
        assert_eq!(run.status.code(), Some(2), "room {room}: {err}");
        assert_eq!(err.lines().count(), 1, "room {room}: {err}");
        assert!(err.contains("No space left"), "room {room}: {err}");
        // the file as the user will find it, not the staging folder's copy
        assert!(!err.contains(".erode-staging") && !err.contains(".erode-tmp"), "room {room}: {err}");
        // whatever is there: no map, no report, no staging folder, no temporary file
        let left: Vec<String> = if out.is_dir() {
            files_in(&out).iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect()
        } else {
            Vec::new()
        };
        assert!(left.iter().all(|n| n == "checkpoints"), "room {room}: left {left:?}");
        if out.join("checkpoints").is_dir() {
            for p in files_in(&out.join("checkpoints")) {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                assert!(name.ends_with(".ckpt"), "room {room}: {name} left behind");
            }
        }
    }
}
