//! `mpirun -np K erode simulate grid`: K ranks, each stepping a block of the map's rows, write
//! the same bytes as one process (every map, the checkpoints; a resume with another K too).
//! Built without the `mpi` feature (the plain `cargo test --workspace`), erode started by
//! mpirun refuses and says how to build it; CI runs this file again with `--features mpi`.
//! Needs Open MPI's `mpirun`: without it the tests say so and pass, unless ERODE_REQUIRE_MPI=1
//! (as in CI).

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{files_in, ok};

/// `mpirun` with `ranks` ranks (more than this machine's cores allowed) starting erode, or
/// `None` when it is missing.
fn mpirun(ranks: usize) -> Option<Command> {
    let mut c = launcher(ranks)?;
    c.arg(env!("CARGO_BIN_EXE_erode"));
    Some(c)
}

/// `mpirun` with `ranks` ranks and no program yet, or `None` when it is missing.
fn launcher(ranks: usize) -> Option<Command> {
    let found = Command::new("mpirun").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        if std::env::var_os("ERODE_REQUIRE_MPI").is_some_and(|v| v == "1") {
            panic!("mpirun is missing and ERODE_REQUIRE_MPI=1: apt-get install openmpi-bin libopenmpi-dev");
        }
        eprintln!("skipping: mpirun not found (apt-get install openmpi-bin libopenmpi-dev)");
        return None;
    }
    let mut c = Command::new("mpirun");
    // Open MPI refuses root (CI's containers) unless told
    c.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    c.args(["--oversubscribe", "-np", &ranks.to_string()]);
    Some(c)
}

/// `erode args` over `ranks` ranks in `dir`, and the exit status of each rank, in rank order
/// (each rank's shell says it on stderr; mpirun's own status is then 0).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
fn over_each(ranks: usize, args: &[&str], dir: &Path) -> Option<(Output, Vec<i32>)> {
    let say = r#""$0" "$@"; s=$?; echo "rank ${OMPI_COMM_WORLD_RANK} exit $s" >&2; exit $s"#;
    let mut c = launcher(ranks)?;
    // Open MPI ends the other ranks once one exits with an error: here each is let finish
    c.env("OMPI_MCA_orte_abort_on_non_zero_status", "0");
    let o = c.args(["sh", "-c", say, env!("CARGO_BIN_EXE_erode")]).args(args).current_dir(dir).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    let status = |k: usize| -> i32 {
        let line = err
            .lines()
            .find_map(|l| l.strip_prefix(&format!("rank {k} exit ")))
            .unwrap_or_else(|| panic!("rank {k} said no status: {err}"));
        line.trim().parse().unwrap()
    };
    let statuses = (0..ranks).map(status).collect();
    Some((o, statuses))
}

/// `erode args` over `ranks` ranks in `dir`.
fn over(ranks: usize, args: &[&str], dir: &Path) -> Option<Output> {
    Some(mpirun(ranks)?.args(args).current_dir(dir).output().unwrap())
}

/// A map of 80 x 101 cells (101 rows split unevenly for 2, 3 and 4 ranks).
fn map(dir: &Path) {
    ok(&["generate", "--width", "80", "--height", "101", "--relief", "300", "--cell-size", "10", "-o", "m.tif"], dir);
}

/// Every file under `dir` but the report (which holds times and the folder's name), by path.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
fn outputs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for p in files_in(dir) {
        if p.is_dir() {
            files
                .extend(outputs(&p).into_iter().map(|(n, b)| (format!("{}/{n}", p.file_name().unwrap().display()), b)));
        } else if p.file_name().is_some_and(|n| n != "report.json") {
            files.push((p.file_name().unwrap().display().to_string(), std::fs::read(&p).unwrap()));
        }
    }
    files
}

#[cfg(feature = "mpi")]
#[test]
fn ranks_write_the_bytes_of_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    map(d);
    let run = ["simulate", "grid", "m.tif", "--iterations", "30", "--checkpoint-every", "10", "--outputs", "all", "-q"];
    ok(&[&run[..], &["-o", "one"]].concat(), d);
    let one = outputs(&d.join("one"));
    assert!(one.len() >= 12, "every map and two checkpoints: {:?}", one.iter().map(|f| &f.0).collect::<Vec<_>>());
    for ranks in 1..=4 {
        let out = format!("r{ranks}");
        let Some(o) = over(ranks, &[&run[..], &["-o", &out]].concat(), d) else { return };
        assert!(o.status.success(), "{ranks} ranks: {}", String::from_utf8_lossy(&o.stderr));
        let got = outputs(&d.join(&out));
        assert_eq!(got.len(), one.len(), "{ranks} ranks");
        for ((name, a), (_, b)) in one.iter().zip(&got) {
            assert!(a == b, "{ranks} ranks: {name} differs from one process's");
        }
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(d.join(&out).join("report.json")).unwrap()).unwrap();
        if ranks > 1 {
            assert_eq!(report["details"]["ranks"], ranks, "{ranks} ranks: the report says how many");
        }
    }
}

#[cfg(feature = "mpi")]
#[test]
fn ranks_in_tiles_of_rows_and_columns_write_the_bytes_of_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // two segments of columns (1024 and 76) and 41 rows
    ok(&["generate", "--width", "1100", "--height", "41", "--relief", "300", "--cell-size", "10", "-o", "w.tif"], d);
    let run = ["simulate", "grid", "w.tif", "--iterations", "20", "--checkpoint-every", "10", "--outputs", "all", "-q"];
    ok(&[&run[..], &["-o", "one"]].concat(), d);
    let one = outputs(&d.join("one"));
    // 1 x 2 and 2 x 2 tiles, the checkpoints gathered from them and the maps written from bands
    for ranks in [2, 4] {
        let out = format!("t{ranks}");
        let Some(o) = over(ranks, &[&run[..], &["-o", &out, "--rank-columns", "2"]].concat(), d) else { return };
        assert!(o.status.success(), "{ranks} ranks: {}", String::from_utf8_lossy(&o.stderr));
        let got = outputs(&d.join(&out));
        assert_eq!(got.len(), one.len(), "{ranks} ranks");
        for ((name, a), (_, b)) in one.iter().zip(&got) {
            assert!(a == b, "{ranks} ranks in tiles: {name} differs from one process's");
        }
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(d.join(&out).join("report.json")).unwrap()).unwrap();
        assert_eq!(report["details"]["rank_columns"], 2, "{ranks} ranks: the report says the run was in tiles");
    }
}

/// `holed.tif`: a map of `width` x `height` cells with a hole of nodata cells across the rows
/// where 2 and 3 ranks meet, declared by a value, and georeferenced.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
fn holed_map(dir: &Path, width: usize, height: usize) {
    let size = ["--width", &width.to_string(), "--height", &height.to_string()].map(String::from);
    let size: Vec<&str> = size.iter().map(String::as_str).collect();
    ok(&[&["generate"][..], &size, &["--relief", "300", "--cell-size", "10", "-o", "h.tif"]].concat(), dir);
    let mut read = erode_io::read(&dir.join("h.tif"), &Default::default()).unwrap();
    let (w, h) = (width, height);
    let hole = |i: usize| (h / 5..h * 4 / 5).contains(&(i / w)) && (w * 3 / 8..w * 5 / 8).contains(&(i % w));
    let mask: Vec<bool> = (0..read.map.heights.len()).map(hole).collect();
    let map = erode::Heightmap::with_nodata(read.map.heights.clone(), Some(mask)).unwrap();
    read.info.georef = Some(erode_io::GeoRef {
        pixel_scale: Some(vec![10.0, 10.0, 0.0]),
        tiepoint: Some(vec![0.0, 0.0, 0.0, 500_000.0, 4_000_000.0, 0.0]),
        ..Default::default()
    });
    let options = erode_io::WriteOptions { nodata_value: Some(-9999.0), georef: read.info.georef, range: None };
    erode_io::write(&dir.join("holed.tif"), &map, &options).unwrap();
}

/// `report.json`'s books in `dir`.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
fn books(dir: &Path) -> serde_json::Value {
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    report["books"].clone()
}

#[cfg(feature = "mpi")]
#[test]
fn ranks_write_their_rows_of_every_format_with_nodata_and_add_up_the_books_of_one_process() {
    // a map within the preview's size, and one wider (its preview shrunk by rows), whose TIFF
    // strips of 64 rows end where 2 ranks' rows do (no rows lent: an all-gather of nothing)
    for (width, height, formats) in [(80, 101, "tif,exr,png"), (4096, 128, "tif")] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        holed_map(d, width, height);
        let run = [
            "simulate",
            "grid",
            "holed.tif",
            "--iterations",
            "20",
            "--outputs",
            "water,flow",
            "--format",
            formats,
            "-q",
        ];
        ok(&[&run[..], &["-o", "one"]].concat(), d);
        let one = outputs(&d.join("one"));
        let names: Vec<&String> = one.iter().map(|f| &f.0).collect();
        assert_eq!(
            one.len(),
            1 + 3 * formats.split(',').count(),
            "three maps in every format and the preview: {names:?}"
        );
        for ranks in [2, 3] {
            let out = format!("r{ranks}");
            let Some(o) = over(ranks, &[&run[..], &["-o", &out]].concat(), d) else { return };
            assert!(o.status.success(), "{width} x {height}, {ranks} ranks: {}", String::from_utf8_lossy(&o.stderr));
            for ((name, a), (_, b)) in one.iter().zip(&outputs(&d.join(&out))) {
                assert!(a == b, "{width} x {height}, {ranks} ranks: {name} differs from one process's");
            }
            // the volumes summed over the ranks' rows in map order: the bits of one process's
            assert_eq!(books(&d.join(&out)), books(&d.join("one")), "{ranks} ranks");
        }
    }
}

#[cfg(feature = "mpi")]
#[test]
fn ranks_read_their_own_rows_of_the_maps_in_any_format_to_the_bytes_of_one_process() {
    // each rank reads its rows: of a TIFF (the hardness, with nodata cells the rows' reader
    // fills as the whole map's reader does) just its strips; of a PNG (the heights, the rain)
    // the whole file, cut. Of inputs all TIFF, rank 0 too reads only its rows, and learns the
    // fills and (resuming) the inputs' hash a batch of rows at a time
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    map(d);
    let m = erode_io::read(&d.join("m.tif"), &Default::default()).unwrap();
    let heights = m.map.heights.as_slice();
    let (lo, hi) = heights.iter().fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    let unit = |f: &dyn Fn(usize, f32) -> f32| {
        let values = heights.iter().enumerate().map(|(i, &v)| f(i, (v - lo) / (hi - lo))).collect();
        erode::Grid::from_vec(80, 101, m.map.heights.cell_size(), values).unwrap()
    };
    let holes: Vec<bool> = (0..80 * 101).map(|i| (40..60).contains(&(i / 80)) && i % 80 < 9).collect();
    let hardness = erode::Heightmap::with_nodata(unit(&|_, u| 0.2 + 0.6 * u), Some(holes)).unwrap();
    let with_nodata = erode_io::WriteOptions { nodata_value: Some(-9999.0), ..Default::default() };
    erode_io::write(&d.join("hard.tif"), &hardness, &with_nodata).unwrap();
    let rain = erode::Heightmap::new(unit(&|i, _| 0.25 + 0.5 * ((i % 80) as f32 / 80.0))).unwrap();
    let unit_range = erode_io::WriteOptions { range: Some((0.0, 1.0)), ..Default::default() };
    erode_io::write(&d.join("rain.png"), &rain, &unit_range).unwrap();
    let rain_holes: Vec<bool> = (0..80 * 101).map(|i| (70..90).contains(&(i / 80)) && i % 80 > 70).collect();
    let holed_rain = erode::Heightmap::with_nodata(rain.heights.clone(), Some(rain_holes)).unwrap();
    erode_io::write(&d.join("rain.tif"), &holed_rain, &with_nodata).unwrap();
    erode_io::write(&d.join("m.png"), &m.map, &erode_io::WriteOptions::default()).unwrap();
    let png =
        ["m.png", "--max-height", "300", "--min-height", "0", "--hardness-map", "hard.tif", "--rain-map", "rain.png"];
    let tiff = ["m.tif", "--hardness-map", "hard.tif", "--rain-map", "rain.tif"];
    for inputs in [&png[..], &tiff[..]] {
        let run = [&["simulate", "grid"][..], inputs, &["--outputs", "hardness,water", "-q"]].concat();
        let to = |n: &'static str, out: &'static str| {
            [&run[..], &["--iterations", n, "--checkpoint-every", "10", "-o", out]].concat()
        };
        ok(&to("20", "one"), d);
        let one = outputs(&d.join("one"));
        for ranks in [2, 3] {
            let out = format!("r{ranks}");
            let args = [&run[..], &["--iterations", "20", "--checkpoint-every", "10", "-o", &out]].concat();
            let Some(o) = over(ranks, &args, d) else { return };
            assert!(o.status.success(), "{inputs:?}, {ranks} ranks: {}", String::from_utf8_lossy(&o.stderr));
            for ((name, a), (_, b)) in one.iter().zip(&outputs(&d.join(&out))) {
                assert!(a == b, "{inputs:?}, {ranks} ranks: {name} differs from one process's");
            }
            assert_eq!(books(&d.join(&out)), books(&d.join("one")), "{ranks} ranks");
        }
        // half on 2 ranks, resumed on 3: the inputs' hash rank 0 takes is the checkpoint's
        let Some(half) = over(2, &to("10", "split"), d) else { return };
        assert!(half.status.success(), "{inputs:?}: {}", String::from_utf8_lossy(&half.stderr));
        let resumed = over(3, &[&to("20", "split")[..], &["--resume"]].concat(), d).unwrap();
        assert!(resumed.status.success(), "{inputs:?}: {}", String::from_utf8_lossy(&resumed.stderr));
        assert_eq!(outputs(&d.join("split")), one, "{inputs:?}: resumed on 3 ranks");
        // the hardness changed under the same name is another input: the resume is refused
        let harder =
            erode::Heightmap::with_nodata(unit(&|_, u| 0.3 + 0.5 * u), hardness.nodata_mask().map(<[bool]>::to_vec));
        erode_io::write(&d.join("hard.tif"), &harder.unwrap(), &with_nodata).unwrap();
        let refused = over(2, &[&to("20", "split")[..], &["--resume"]].concat(), d).unwrap();
        let err = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{inputs:?}: {err}");
        assert!(err.contains("input"), "{inputs:?}: {err}");
        erode_io::write(&d.join("hard.tif"), &hardness, &with_nodata).unwrap();
        for out in ["one", "r2", "r3", "split"] {
            std::fs::remove_dir_all(d.join(out)).unwrap();
        }
    }
}

#[cfg(feature = "mpi")]
#[test]
fn a_run_resumed_on_another_number_of_ranks_ends_in_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    map(d);
    fn run(n: &str) -> [&str; 8] {
        ["simulate", "grid", "m.tif", "--iterations", n, "--checkpoint-every", "20", "-q"]
    }
    ok(&[&run("40")[..], &["-o", "one"]].concat(), d);
    let Some(first) = over(3, &[&run("20")[..], &["-o", "split"]].concat(), d) else { return };
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    // a damaged checkpoint is refused on every rank, named, with status 2 (rank 0 reads it as
    // it hands it out: the damage shows only when its bytes come)
    let damaged = d.join("damaged/checkpoints");
    std::fs::create_dir_all(&damaged).unwrap();
    let ckpt = std::fs::read_dir(d.join("split/checkpoints")).unwrap().flatten().map(|e| e.path()).next().unwrap();
    let mut bytes = std::fs::read(&ckpt).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x55;
    std::fs::write(damaged.join(ckpt.file_name().unwrap()), bytes).unwrap();
    let resume = [&run("40")[..], &["-o", "damaged", "--resume"]].concat();
    let refused = over(2, &resume, d).unwrap();
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    let (_, each) = over_each(2, &resume, d).unwrap();
    assert_eq!(each, [2, 2], "every rank ends with rank 0's status");
    assert!(err.contains("grid-000000000020.ckpt") && err.contains("corrupt"), "{err}");
    assert!(!d.join("damaged/height.tif").exists());
    // resumed without --checkpoint-every, the run keeps its end as a checkpoint after its last
    // advance (written through rank 0 before the ranks write their rows of the outputs)
    let second =
        over(2, &["simulate", "grid", "m.tif", "--iterations", "40", "-q", "-o", "split", "--resume"], d).unwrap();
    assert!(second.status.success(), "{}", String::from_utf8_lossy(&second.stderr));
    assert_eq!(outputs(&d.join("split")), outputs(&d.join("one")));
}

#[cfg(feature = "mpi")]
#[test]
fn a_signal_through_mpirun_stops_every_rank_with_a_checkpoint_that_resumes_to_one_process_bytes() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&["generate", "--size", "256", "--seed", "3", "-o", "t.tif"], d);
    let run = ["simulate", "grid", "t.tif", "-q", "--checkpoint-every", "20"];
    let Some(mut c) = mpirun(2) else { return };
    let child = c
        .args(run)
        .args(["-o", "split", "--iterations", "100000"])
        .current_dir(d)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // SIGUSR1 (which mpirun passes on to every rank; Slurm's --signal sends it before a time
    // limit) once the run is under way: its first checkpoint is there
    let ckpts = d.join("split/checkpoints");
    let written = || {
        std::fs::read_dir(&ckpts)
            .is_ok_and(|mut r| r.any(|e| e.is_ok_and(|e| e.path().extension().is_some_and(|x| x == "ckpt"))))
    };
    let started = Instant::now();
    while !written() && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let sent = Command::new("kill").args(["-USR1", &child.id().to_string()]).status().unwrap();
    assert!(sent.success(), "the run ended before the signal");
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted at") && err.contains("--resume"), "{err}");
    // the newest checkpoint is where it stopped, past the first: resumed by one process a little
    // further, it gives the bytes of one process run straight there
    let stopped_at: u64 = files_in(&ckpts)
        .iter()
        .filter_map(|p| p.file_stem()?.to_str()?.rsplit('-').next()?.parse().ok())
        .max()
        .unwrap();
    assert!(stopped_at > 20, "stopped at {stopped_at}: no checkpoint written on the signal");
    let target = (stopped_at + 10).to_string();
    ok(&[&run[..], &["-o", "split", "--iterations", &target, "--resume"]].concat(), d);
    ok(&[&run[..], &["-o", "one", "--iterations", &target]].concat(), d);
    assert_eq!(outputs(&d.join("split")), outputs(&d.join("one")));
}

#[cfg(feature = "mpi")]
#[test]
fn ranks_refuse_what_they_cannot_run_with_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&["generate", "--width", "40", "--height", "19", "-o", "thin.tif"], d);
    map(d);
    let cases: [(&[&str], &str); 7] = [
        (&["simulate", "grid", "thin.tif", "-o", "out", "-q"], "4 ranks for 19 rows"),
        (&["simulate", "grid", "m.tif", "-o", "out", "--set", "rain_mode=buckets", "-q"], "buckets"),
        (&["simulate", "grid", "m.tif", "-o", "out", "--tiles", "64", "-q"], "without --tiles"),
        (&["simulate", "droplet", "m.tif", "-o", "out", "-q"], "only `erode simulate grid`"),
        // refused by the ranks together, as they start from their own rows (heights as hardness)
        (&["simulate", "grid", "m.tif", "-o", "out", "--hardness-map", "m.tif", "-q"], "hardness"),
        // tiles: parts that do not divide the ranks, and a map too narrow for two parts
        (
            &["simulate", "grid", "m.tif", "-o", "out", "--rank-columns", "3", "-q"],
            "4 ranks do not make bands of 3 parts",
        ),
        (&["simulate", "grid", "m.tif", "-o", "out", "--rank-columns", "2", "-q"], "2 parts of 80 columns"),
    ];
    for (args, needle) in cases {
        let Some(o) = over(4, args, d) else { return };
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        let (_, each) = over_each(4, args, d).unwrap();
        assert_eq!(each, [2; 4], "{args:?}: every rank ends with status 2");
        assert!(err.contains(needle), "{args:?} does not say `{needle}`: {err}");
        assert!(!d.join("out").exists(), "{args:?} left an output folder");
    }
}

#[cfg(not(feature = "mpi"))]
#[test]
fn erode_built_without_mpi_says_how_to_build_it_when_mpirun_starts_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    map(d);
    let Some(o) = over(2, &["simulate", "grid", "m.tif", "-o", "out", "-q"], d) else { return };
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("built without MPI") && err.contains("--features mpi"), "{err}");
    assert_eq!(err.matches("erode: error").count(), 1, "one rank says it: {err}");
    assert!(!d.join("out").exists());
}
