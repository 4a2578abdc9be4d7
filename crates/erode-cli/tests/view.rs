//! `erode view` opens a real window (under Xvfb here and in CI, drawn by Mesa's software Vulkan),
//! plays the model, saves a screenshot and exits. Skipped without `xvfb-run` unless
//! `ERODE_REQUIRE_GPU=1`, which CI sets.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::testdata;

fn xvfb() -> bool {
    let found = Command::new("xvfb-run").arg("--help").output().is_ok();
    if !found && std::env::var_os("ERODE_REQUIRE_GPU").is_some_and(|v| v == "1") {
        panic!("ERODE_REQUIRE_GPU=1 but xvfb-run is missing (apt-get install xvfb xauth)");
    }
    if !found {
        eprintln!("skipping the window test: no xvfb-run");
    }
    found
}

/// Runs `erode view ARGS` in a virtual 1280 x 800 screen; returns stderr.
fn view(args: &[&str], dir: &Path) -> String {
    let out = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1280x800x24", env!("CARGO_BIN_EXE_erode"), "view"])
        .args(args)
        .current_dir(dir)
        .env("XDG_RUNTIME_DIR", dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "erode view {args:?} failed: {err}");
    err
}

/// RGBA pixels of a PNG.
fn pixels(path: &Path) -> (usize, usize, Vec<[u8; 4]>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba);
    let px = buf[..info.buffer_size()].chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
    (info.width as usize, info.height as usize, px)
}

/// The 3D view (right of the 300-pixel control panel, below the top bar) shows terrain: many
/// colours, and plenty of pixels that are neither the sky nor the panel.
fn assert_shows_terrain(path: &Path, what: &str) {
    let (w, h, px) = pixels(path);
    assert!(w >= 800 && h >= 500, "{what}: screenshot {w}x{h}");
    let view: Vec<[u8; 4]> = (60..h).flat_map(|y| (320..w).map(move |x| (y, x))).map(|(y, x)| px[y * w + x]).collect();
    let sky = [140u8, 173, 209]; // the clear colour 0.55, 0.68, 0.82
    let ground = view.iter().filter(|p| (0..3).any(|k| p[k].abs_diff(sky[k]) > 12)).count();
    let mut colours: Vec<[u8; 4]> = view.iter().map(|p| [p[0] & 0xf8, p[1] & 0xf8, p[2] & 0xf8, 0]).collect();
    colours.sort_unstable();
    colours.dedup();
    assert!(ground * 4 > view.len(), "{what}: only {ground} of {} view pixels show terrain", view.len());
    assert!(colours.len() > 40, "{what}: {} colours in the view", colours.len());
}

#[test]
fn the_viewer_opens_a_window_runs_frames_and_saves_a_screenshot_of_the_terrain() {
    if !xvfb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let dem = testdata("lidar-dem.tif");
    let input = dem.as_ref().map(|p| p.to_string_lossy().to_string());
    let mut args: Vec<&str> = input.iter().map(String::as_str).collect();
    args.extend(["--frames", "20", "--screenshot", "cpu.png"]);
    let err = view(&args, d);
    assert!(err.contains("frames"), "{err}");
    assert_shows_terrain(&d.join("cpu.png"), "CPU backend");
    // the GPU backend draws from the simulation's own buffers
    let err = view(&["--size", "128", "--backend", "gpu", "--frames", "20", "--screenshot", "gpu.png"], d);
    assert!(err.contains("frames"), "{err}");
    assert_shows_terrain(&d.join("gpu.png"), "GPU backend");
}

/// The SPH window shows the scene: the mesh (most of the view is not sky) and the particles (a
/// share of it is their blue), and it ran the model.
#[test]
fn the_viewer_opens_an_sph_scene_and_shows_its_mesh_and_particles() {
    if !xvfb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let err = view(&["--scene", "tank", "--particles", "2000", "--frames", "15", "--screenshot", "sph.png"], d);
    let iterations: u64 = err.split(" iterations").next().and_then(|s| s.rsplit(", ").next()).unwrap().parse().unwrap();
    assert!(iterations >= 15, "{err}");
    let (w, h, px) = pixels(&d.join("sph.png"));
    let shown: Vec<[u8; 4]> = (0..h).flat_map(|y| (320..w).map(move |x| (y, x))).map(|(y, x)| px[y * w + x]).collect();
    let near = |p: &[u8; 4], c: [u8; 3], tol: u8| (0..3).all(|k| p[k].abs_diff(c[k]) <= tol);
    let sky = shown.iter().filter(|p| near(p, [140, 173, 209], 4)).count();
    // particles are blue, lighter the faster they run; the mesh is grey-brown, the sky pale blue
    let blue = |p: &[u8; 4]| p[2] > 190 && p[2] as i32 - p[0] as i32 > 60 && !near(p, [140, 173, 209], 4);
    let water = shown.iter().filter(|p| blue(p)).count();
    let mesh = shown.iter().filter(|p| !near(p, [140, 173, 209], 4) && !blue(p)).count();
    assert!(mesh * 5 > shown.len(), "mesh: {mesh} of {} view pixels", shown.len());
    assert!(water * 50 > shown.len(), "particles: {water} of {} view pixels", shown.len());
    assert!(sky * 10 > shown.len(), "sky: {sky} of {} view pixels", shown.len());

    // a mesh file opens the SPH model too, with water over its middle
    let corners: Vec<String> =
        (0..8).map(|k| format!("v {} {} {}", 10 * ((k >> 2) & 1), 10 * ((k >> 1) & 1), 10 * (k & 1))).collect();
    let faces =
        ["1 2 4", "1 4 3", "5 7 8", "5 8 6", "1 5 6", "1 6 2", "3 4 8", "3 8 7", "1 3 7", "1 7 5", "2 6 8", "2 8 4"];
    let obj = corners.join("\n") + "\n" + &faces.map(|f| format!("f {f}")).join("\n") + "\n";
    std::fs::write(d.join("cube.obj"), obj).unwrap();
    let err = view(&["cube.obj", "--particles", "500", "--frames", "5", "--screenshot", "cube.png"], d);
    assert!(err.contains("frames") && d.join("cube.png").exists(), "{err}");

    // and so does the output folder of `erode simulate sph`, from its newest checkpoint
    let sim = Command::new(env!("CARGO_BIN_EXE_erode"))
        .args(["-q", "simulate", "sph", "--scene", "tank", "--particles", "400", "--iterations", "6", "-o", "out"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(sim.status.success(), "{}", String::from_utf8_lossy(&sim.stderr));
    let err = view(&["out", "--frames", "3", "--screenshot", "out.png"], d);
    assert!(err.contains("frames") && d.join("out.png").exists(), "{err}");
}

#[test]
fn view_refuses_bad_arguments_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    common::refused(&["view", "missing.tif"], d, "missing.tif");
    common::refused(&["view", "--screenshot", "x.png"], d, "--frames");
    common::refused(&["view", "--backend", "tpu"], d, "--backend");
    common::refused(&["view", "--frames", "2", "--screenshot", "no/such/dir/x.png"], d, "x.png");
    common::refused(&["view", "--scene", "moon", "--frames", "1"], d, "--scene moon");
    std::fs::write(d.join("x.obj"), "").unwrap();
    common::refused(&["view", "x.obj", "--scene", "lake"], d, "brings its own mesh");
    common::refused(&["view", "--bench", "0"], d, "--bench 0");
}

#[test]
fn view_bench_times_frames_of_the_gpu_backend_without_a_window() {
    if !gpu_expected() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = common::ok(&["view", "--size", "64", "--bench", "4", "--window", "320x200"], dir.path());
    // "64 x 64 cells drawn at 320 x 200 px on ADAPTER, 4 grid iterations a frame, 4 frames:"
    assert!(out.contains("64 x 64 cells drawn at 320 x 200 px") && out.contains("4 frames"), "{out}");
    let figure = |name: &str| -> f64 {
        let at = out.find(name).unwrap_or_else(|| panic!("no `{name}` in {out}")) + name.len();
        out[at..].split_whitespace().next().and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{name}: {out}"))
    };
    for name in ["frame ", "model ", "drawing ", "shading pass ", "read-back "] {
        let ms = figure(name);
        assert!(ms.is_finite() && ms >= 0.0, "{name}{ms}: {out}");
    }
    assert!(figure("frame ") > 0.0 && figure("drawing ") > 0.0, "{out}");
}

/// Whether a GPU adapter is there (headless); `ERODE_REQUIRE_GPU=1` makes a missing one fail.
fn gpu_expected() -> bool {
    match erode::gpu::GpuContext::headless() {
        Ok(_) => true,
        Err(e) if std::env::var_os("ERODE_REQUIRE_GPU").is_some_and(|v| v == "1") => {
            panic!("ERODE_REQUIRE_GPU=1 but {e}")
        }
        Err(e) => {
            eprintln!("skipping: {e}");
            false
        }
    }
}

/// Whether two views (4 x 4 block means) look alike: a mean difference of at most 3 levels and
/// 99 % of the blocks within 24 (a perceptual tolerance: a change of look fails, the rounding of
/// another machine's renderer does not).
fn assert_looks_alike(reference: &str, now: (usize, usize, Vec<[f64; 3]>), want: (usize, usize, Vec<[f64; 3]>)) {
    assert_eq!((now.0, now.1), (want.0, want.1), "{reference}: the view's size changed");
    let mut diffs: Vec<f64> =
        now.2.iter().zip(&want.2).map(|(a, b)| (0..3).map(|c| (a[c] - b[c]).abs()).fold(0.0, f64::max)).collect();
    let mean = diffs.iter().sum::<f64>() / diffs.len() as f64;
    diffs.sort_by(f64::total_cmp);
    let p99 = diffs[diffs.len() * 99 / 100];
    assert!(
        mean <= 3.0 && p99 <= 24.0,
        "the view differs from {reference}: mean {mean:.2}, 99th percentile {p99:.1} levels \
         (look at both; if the change is meant, run with ERODE_UPDATE_REFERENCES=1)"
    );
}

/// The 3D view's pixels (right of the panel, below the top bar) averaged over 4 x 4 blocks.
fn view_blocks(path: &Path) -> (usize, usize, Vec<[f64; 3]>) {
    let (w, h, px) = pixels(path);
    let (x0, y0) = (440, 40);
    let (bw, bh) = ((w - x0) / 4, (h - y0) / 4);
    let mut out = vec![[0.0; 3]; bw * bh];
    for by in 0..bh {
        for bx in 0..bw {
            for k in 0..16 {
                let p = px[(y0 + by * 4 + k / 4) * w + x0 + bx * 4 + k % 4];
                for c in 0..3 {
                    out[by * bw + bx][c] += f64::from(p[c]) / 16.0;
                }
            }
        }
    }
    (bw, bh, out)
}

/// The viewer's look against the pictures stored in `tests/references/`, by a perceptual
/// tolerance (4 x 4 blocks: the mean difference at most 3 levels of 255, 99 % of blocks within
/// 24), so that a change of look shows in review: `ERODE_UPDATE_REFERENCES=1` writes them anew.
#[test]
fn the_viewer_looks_as_its_reference_pictures_show() {
    if !xvfb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let references = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/references");
    let cases: [(&str, &[&str]); 3] = [
        ("view-materials", &[]),
        ("view-evening", &["--sun", "290,8"]),
        ("view-hardness-overlay", &["--ground", "height-colours", "--overlay", "hardness"]),
    ];
    for (name, extra) in cases {
        let shot = format!("{name}.png");
        let mut args = vec!["--size", "128", "--frames", "4", "--paused", "--screenshot", &shot];
        args.extend_from_slice(extra);
        view(&args, d);
        let reference = references.join(&shot);
        if std::env::var_os("ERODE_UPDATE_REFERENCES").is_some_and(|v| v == "1") || !reference.exists() {
            std::fs::create_dir_all(&references).unwrap();
            std::fs::copy(d.join(&shot), &reference).unwrap();
            eprintln!("wrote the reference {}", reference.display());
            continue;
        }
        assert_looks_alike(&format!("tests/references/{shot}"), view_blocks(&d.join(&shot)), view_blocks(&reference));
    }
    // the sun from the west at 8 degrees casts long shadows: the view is darker than at 35
    let (_, _, noon) = view_blocks(&references.join("view-materials.png"));
    let (_, _, evening) = view_blocks(&references.join("view-evening.png"));
    let lum = |v: &[[f64; 3]]| v.iter().map(|p| p[0] + p[1] + p[2]).sum::<f64>();
    assert!(lum(&evening) < lum(&noon), "a low sun should darken the ground");
}

/// A view's 4 x 4 block means as an RGB PNG (a quarter of the view's size: what the comparison
/// reads, small enough to keep one for every model and overlay).
fn write_blocks(path: &Path, (w, h, blocks): &(usize, usize, Vec<[f64; 3]>)) {
    let bytes: Vec<u8> = blocks.iter().flat_map(|p| p.map(|c| c.round().clamp(0.0, 255.0) as u8)).collect();
    let mut encoder =
        png::Encoder::new(std::io::BufWriter::new(std::fs::File::create(path).unwrap()), *w as u32, *h as u32);
    encoder.set_color(png::ColorType::Rgb);
    encoder.write_header().unwrap().write_image_data(&bytes).unwrap();
}

fn read_blocks(path: &Path) -> (usize, usize, Vec<[f64; 3]>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb, "{}", path.display());
    let px = buf[..info.buffer_size()].chunks_exact(3).map(|c| [c[0], c[1], c[2]].map(f64::from)).collect();
    (info.width as usize, info.height as usize, px)
}

/// Every heightmap model after a few ticks, every overlay on the grid model, and the SPH lake:
/// each screenshot (the same on every run: `--steps` before the window, then `--paused`) against
/// its reference in `tests/references/looks/`, 4 x 4 block means of the 3D view.
#[test]
fn every_model_and_overlay_looks_as_its_reference_shows() {
    if !xvfb() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let references = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/references/looks");
    let mut cases: Vec<(String, Vec<String>)> = Vec::new();
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    for model in ["grid", "droplet", "stream-power", "thermal"] {
        cases.push((format!("model-{model}"), owned(&["--model", model, "--steps", "5"])));
    }
    for overlay in ["erosion", "deposition", "flow", "velocity", "hardness", "sediment", "rain-map", "uplift-map"] {
        cases.push((format!("overlay-{overlay}"), owned(&["--steps", "10", "--overlay", overlay])));
    }
    cases.push((
        "sph-lake".into(),
        owned(&["--scene", "lake", "--particles", "1500", "--faces", "2000", "--steps", "30"]),
    ));
    let update = std::env::var_os("ERODE_UPDATE_REFERENCES").is_some_and(|v| v == "1");
    for (name, extra) in &cases {
        let shot = format!("{name}.png");
        let mut args = vec!["--size", "96", "--frames", "3", "--paused", "--screenshot", &shot];
        args.extend(extra.iter().map(String::as_str));
        view(&args, d);
        let now = view_blocks(&d.join(&shot));
        let reference = references.join(&shot);
        if update || !reference.exists() {
            std::fs::create_dir_all(&references).unwrap();
            write_blocks(&reference, &now);
            eprintln!("wrote the reference {}", reference.display());
            continue;
        }
        assert_looks_alike(&format!("tests/references/looks/{shot}"), now, read_blocks(&reference));
    }
    // the pictures differ from each other: each overlay shows something of its own
    if !update {
        let erosion = read_blocks(&references.join("overlay-erosion.png"));
        let flow = read_blocks(&references.join("overlay-flow.png"));
        let differ = erosion.2.iter().zip(&flow.2).filter(|(a, b)| (0..3).any(|c| (a[c] - b[c]).abs() > 24.0)).count();
        assert!(differ * 20 > erosion.2.len(), "the erosion and flow overlays look the same");
    }
}
