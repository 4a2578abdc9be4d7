//! The viewer's input layer without a window: every edit goes through `World::apply`, as the app
//! sends it from the pointer and keys.

use erode::models::grid::{Params, RainMode};
use erode_viewer::brush::{Brush, BrushKind};
use erode_viewer::{Action, ModelKind, Overlay, World, session};

/// A 64 x 48 sloped bumpy terrain, 1 m cells.
fn world() -> World {
    let (w, h) = (64usize, 48usize);
    let g = erode::Grid::from_fn(w, h, erode::CellSize::square(1.0), |r, c| {
        let (x, y) = (c as f32, r as f32);
        10.0 + 0.05 * x + 0.5 * (x * 0.3).sin() * (y * 0.2).cos()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let params = Params { rain_mode: RainMode::Off, ..Params::classic() };
    World::new(&g, params, Default::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn apply(w: &mut World, a: Action) {
    if let Err(e) = w.apply(a.clone()) {
        panic!("{a:?}: {e}");
    }
}

fn stroke(w: &mut World, kind: BrushKind, radius: f32, points: &[(f32, f32)]) {
    let b = Brush { kind, radius, strength: 0.5, value: 0.2 };
    apply(w, Action::SetBrush(b));
    apply(w, Action::StrokeBegin { x: points[0].0, y: points[0].1 });
    for &(x, y) in &points[1..] {
        apply(w, Action::StrokeTo { x, y });
    }
    apply(w, Action::StrokeEnd);
}

/// Whether cell `i` of a `width`-wide grid lies within `radius` of the segment `a`–`b` (cells).
fn near_segment(i: usize, width: usize, a: (f32, f32), b: (f32, f32), radius: f32) -> bool {
    let (x, y) = ((i % width) as f32 + 0.5, (i / width) as f32 + 0.5);
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let t = (((x - a.0) * dx + (y - a.1) * dy) / (dx * dx + dy * dy).max(1e-9)).clamp(0.0, 1.0);
    (x - a.0 - t * dx).hypot(y - a.1 - t * dy) < radius
}

#[test]
fn every_brush_changes_only_cells_under_its_stroke_and_undo_restores_them_bit_for_bit() {
    let (a, b) = ((20.0, 20.0), (36.0, 26.0));
    for kind in BrushKind::ALL {
        let mut w = world();
        if kind == BrushKind::RemoveWater {
            w.edit_state(|st| st.water.iter_mut().for_each(|d| *d = 0.3)).unwrap_or_else(|e| panic!("{e}"));
        }
        let (before, uplift_before) = (w.state().clone(), w.uplift.clone());
        stroke(&mut w, kind, 5.0, &[a, b]);
        let field = |st: &erode::models::grid::State, uplift: &[f32]| -> Vec<f32> {
            match kind {
                BrushKind::AddWater | BrushKind::RemoveWater => st.water.clone(),
                BrushKind::Hardness => st.hardness.clone(),
                BrushKind::Rain => st.rain_map.clone().unwrap_or_else(|| vec![0.0; st.len()]),
                BrushKind::RaiseUplift | BrushKind::LowerUplift => uplift.to_vec(),
                _ => st.terrain.clone(),
            }
        };
        let (old, new) = (field(&before, &uplift_before), field(w.state(), &w.uplift));
        let changed: Vec<usize> = (0..old.len()).filter(|&i| old[i].to_bits() != new[i].to_bits()).collect();
        assert!(!changed.is_empty(), "{kind:?} changed nothing");
        for &i in &changed {
            assert!(near_segment(i, w.state().width, a, b, 5.0), "{kind:?} changed cell {i}, off the stroke");
        }
        // the other fields the brushes edit are untouched
        if kind.field() != erode_viewer::brush::Field::Terrain {
            assert_eq!(before.terrain, w.state().terrain, "{kind:?} moved the terrain");
        }
        assert_eq!(w.history_depth(), (1, 0));
        apply(&mut w, Action::Undo);
        assert_eq!(w.state().terrain, before.terrain, "{kind:?}: undo");
        assert_eq!(w.state().water, before.water, "{kind:?}: undo");
        assert_eq!(w.state().hardness, before.hardness, "{kind:?}: undo");
        assert_eq!(w.state().rain_map, before.rain_map, "{kind:?}: undo");
        assert_eq!(w.uplift, uplift_before, "{kind:?}: undo");
        apply(&mut w, Action::Redo);
        assert_eq!(field(w.state(), &w.uplift), new, "{kind:?}: redo");
    }
}

#[test]
fn a_flatten_stroke_pulls_towards_the_height_under_its_first_dab() {
    let mut w = world();
    let target = w.height_at(30.5, 30.5);
    let spread = |t: &[f32]| {
        let v: Vec<f32> = (26..35).flat_map(|r| (26..35).map(move |c| (r, c))).map(|(r, c)| t[r * 64 + c]).collect();
        v.iter().map(|h| (h - target).abs()).fold(0.0f32, f32::max)
    };
    let before = spread(&w.state().terrain);
    for _ in 0..20 {
        stroke(&mut w, BrushKind::Flatten, 8.0, &[(30.5, 30.5), (30.6, 30.5)]);
    }
    let after = spread(&w.state().terrain);
    assert!(after < 0.5 * before, "flatten: spread {before} -> {after}");
}

#[test]
fn edits_keep_the_books_balanced() {
    let mut w = world();
    stroke(&mut w, BrushKind::Raise, 6.0, &[(10.0, 10.0), (40.0, 30.0)]);
    stroke(&mut w, BrushKind::AddWater, 6.0, &[(30.0, 10.0), (30.0, 40.0)]);
    apply(&mut w, Action::SetRain(true));
    for _ in 0..20 {
        w.tick().unwrap_or_else(|e| panic!("{e}"));
    }
    apply(&mut w, Action::Undo);
    let err = w.state().balance().relative_error;
    assert!(err < 1e-5, "books after edits and undo: {err}");
}

#[test]
fn a_placed_source_adds_water_at_its_position_and_persists_through_undo_redo() {
    let mut w = world();
    let (x, y) = (12.5f32, 30.5f32);
    let i = 30 * 64 + 12;
    apply(&mut w, Action::PlaceSource { x, y, rate: 5.0 });
    assert_eq!(w.grid_params.sources.len(), 1);
    let d0 = w.state().water[i];
    w.tick().unwrap_or_else(|e| panic!("{e}"));
    assert!(w.state().water[i] > d0 + 1e-4, "water at the source: {d0} -> {}", w.state().water[i]);
    // far from the source nothing arrives in one tick
    assert_eq!(w.state().water[5 * 64 + 60], 0.0);
    apply(&mut w, Action::MoveSource { index: 0, x: 50.5, y: 10.5 });
    assert_eq!((w.grid_params.sources[0].x, w.grid_params.sources[0].y), (50.5, 10.5));
    apply(&mut w, Action::Undo);
    assert_eq!((w.grid_params.sources[0].x, w.grid_params.sources[0].y), (12.5, 30.5));
    apply(&mut w, Action::RemoveSource { index: 0 });
    assert!(w.grid_params.sources.is_empty());
    apply(&mut w, Action::Undo);
    assert_eq!(w.grid_params.sources.len(), 1);
    assert!(w.apply(Action::RemoveSource { index: 3 }).is_err(), "a missing source is an error");
}

#[test]
fn a_saved_session_reloads_to_the_same_state_byte_for_byte() {
    for model in [ModelKind::Grid, ModelKind::Droplet, ModelKind::StreamPower] {
        let mut w = world();
        apply(&mut w, Action::SetModel(model));
        apply(&mut w, Action::SetRain(true));
        apply(&mut w, Action::PlaceSource { x: 20.0, y: 20.0, rate: 2.0 });
        apply(&mut w, Action::SetDropletsPerTick(300));
        stroke(&mut w, BrushKind::Rain, 10.0, &[(30.0, 20.0)]);
        if model == ModelKind::StreamPower {
            // the painted uplift and the model's parameters are part of the session
            let sp = erode::models::stream_power::Params { flow: "mfd".into(), ..Default::default() };
            apply(&mut w, Action::SetStreamPowerParams(Box::new(sp)));
            stroke(&mut w, BrushKind::RaiseUplift, 6.0, &[(10.0, 32.0), (54.0, 32.0)]);
        }
        for _ in 0..5 {
            w.tick().unwrap_or_else(|e| panic!("{e}"));
        }
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("s.erode");
        session::save(&w, &path).unwrap_or_else(|e| panic!("{e}"));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{e}"));
        let mut back = session::load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(session::to_bytes(&back), bytes, "{model:?}: reload and save again");
        let run = |w: &World| w.run().map(|r| (r.name(), r.checkpoint()));
        assert_eq!(back.state(), w.state());
        assert_eq!(run(&back), run(&w));
        assert_eq!(back.grid_params, w.grid_params);
        assert_eq!(back.stream_power_params, w.stream_power_params);
        assert_eq!(back.uplift, w.uplift);
        assert_eq!(w.run().is_some(), model != ModelKind::Grid);
        if model == ModelKind::Droplet {
            // a version-2 session (the droplet state under the parameters as set) still opens to
            // the same run
            let r = w.run().unwrap_or_else(|| panic!("no run"));
            let d = erode::models::droplet::State::from_bytes(&r.checkpoint(), r.fingerprint(), u64::MAX)
                .unwrap_or_else(|e| panic!("{e}"));
            let old_block = d.to_bytes(erode::models::droplet::params_fingerprint(&w.droplet_params));
            let v2 = with_block(&bytes, 2, &old_block, 2, 5);
            let old = session::from_bytes(&v2, &path).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(run(&old), run(&w), "a version-2 droplet session");
        }
        if model == ModelKind::Grid {
            // a version-1 session (no stream-power blocks, two empty ones here) still opens
            let mut v1 = bytes[..bytes.len() - 24].to_vec();
            let at = b"ERODE-SESSION\n".len();
            v1[at..at + 4].copy_from_slice(&1u32.to_le_bytes());
            let old = session::from_bytes(&v1, &path).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(old.state(), w.state());
        }
        // and it continues exactly like the original
        w.tick().unwrap_or_else(|e| panic!("{e}"));
        back.tick().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.state(), w.state(), "{model:?}: a tick after reload");
        assert_eq!(run(&back), run(&w), "{model:?}: a tick after reload");
        // a damaged session is a clear error naming the file
        let mut bad = bytes.clone();
        let k = bad.len() / 2;
        bad[k] ^= 0x40;
        std::fs::write(&path, &bad).unwrap_or_else(|e| panic!("{e}"));
        let e = session::load(&path).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("s.erode"), "{e}");
    }
}

/// Session `bytes` with block `index` replaced by `block`, marked as `version`, its first
/// `count` blocks kept.
fn with_block(bytes: &[u8], index: usize, block: &[u8], version: u32, count: usize) -> Vec<u8> {
    let at = b"ERODE-SESSION\n".len();
    let mut out = bytes[..at].to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    let mut rest = &bytes[at + 4..];
    let mut k = 0;
    while !rest.is_empty() && k < count {
        let len = u64::from_le_bytes(rest[..8].try_into().unwrap_or([0; 8])) as usize;
        let b = if k == index { block } else { &rest[8..8 + len] };
        out.extend_from_slice(&(b.len() as u64).to_le_bytes());
        out.extend_from_slice(b);
        rest = &rest[8 + len..];
        k += 1;
    }
    out
}

#[test]
fn parameters_set_as_on_the_command_line_are_validated() {
    let w = world();
    let p: Params = erode_io::params::apply_sets(&w.grid_params, &["pipes=8".into(), "flux_form=signed".into()])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((p.pipes, p.flux_form), (8, erode::models::grid::FluxForm::Signed));
    let mut w = w;
    apply(&mut w, Action::SetGridParams(Box::new(p)));
    assert_eq!(w.grid_params.pipes, 8);
    let bad = Params { evaporation: -1.0, ..w.grid_params.clone() };
    assert!(w.apply(Action::SetGridParams(Box::new(bad))).is_err());
    assert_eq!(w.grid_params.evaporation, Params::classic().evaporation, "a refused change leaves the old value");
    let typo = erode_io::params::apply_sets(&w.grid_params, &["pipez=8".into()]);
    assert!(typo.is_err());
}

#[test]
fn the_droplet_model_erodes_and_the_grid_state_shows_it() {
    let mut w = world();
    apply(&mut w, Action::SetModel(ModelKind::Droplet));
    apply(&mut w, Action::SetDropletsPerTick(500));
    let before = w.state().terrain.clone();
    w.tick().unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(before, w.state().terrain);
    // the run is the droplet model's, driven through the contract
    let height = |w: &World| w.run().map(|r| r.maps().swap_remove(0).1).unwrap_or_default();
    assert_eq!(w.run().map(|r| r.name()), Some("droplet"));
    assert_eq!(height(&w), w.state().terrain);
    assert_eq!(w.progress(), 500);
    // a terrain stroke reaches the droplet run too
    stroke(&mut w, BrushKind::Raise, 4.0, &[(20.0, 20.0)]);
    assert_eq!(height(&w), w.state().terrain);
    let books = w.run().map_or(1.0, |r| r.balance().relative_error);
    assert!(books < 1e-5, "droplet books after an edit: {books}");
}

/// The GPU device, or `None` to skip (`ERODE_REQUIRE_GPU=1` makes a missing adapter fail).
fn gpu() -> Option<std::sync::Arc<erode::gpu::GpuContext>> {
    match erode::gpu::GpuContext::headless() {
        Ok(ctx) => Some(std::sync::Arc::new(ctx)),
        Err(e) if std::env::var_os("ERODE_REQUIRE_GPU").is_some_and(|v| v == "1") => {
            panic!("ERODE_REQUIRE_GPU=1 but {e}")
        }
        Err(e) => {
            eprintln!("skipping GPU test: {e}");
            None
        }
    }
}

#[test]
fn on_the_gpu_edits_reach_the_device_and_the_run_follows_the_cpu() {
    let Some(ctx) = gpu() else { return };
    let mut on_gpu = world();
    let mut on_cpu = world();
    for w in [&mut on_gpu, &mut on_cpu] {
        apply(w, Action::SetRain(true));
        apply(w, Action::PlaceSource { x: 40.0, y: 20.0, rate: 3.0 });
        stroke(w, BrushKind::Raise, 6.0, &[(20.0, 20.0), (30.0, 25.0)]);
    }
    on_gpu.set_backend(Some(ctx)).unwrap_or_else(|e| panic!("{e}"));
    for w in [&mut on_gpu, &mut on_cpu] {
        stroke(w, BrushKind::Lower, 5.0, &[(10.0, 30.0), (15.0, 35.0)]);
        stroke(w, BrushKind::AddWater, 5.0, &[(50.0, 30.0)]);
        for _ in 0..10 {
            w.tick().unwrap_or_else(|e| panic!("{e}"));
        }
    }
    on_gpu.sync_from_gpu().unwrap_or_else(|e| panic!("{e}"));
    let diff =
        on_gpu.state().terrain.iter().zip(&on_cpu.state().terrain).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    let water =
        on_gpu.state().water.iter().zip(&on_cpu.state().water).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    assert!(diff < 1e-3 && water < 1e-3, "GPU vs CPU after edits: terrain {diff}, water {water}");
    // the stroke made on the GPU backend is there, and undo works there too
    let i = 32 * 64 + 12;
    assert!(on_gpu.state().terrain[i] < world().state().terrain[i] - 0.1);
    apply(&mut on_gpu, Action::Undo);
    apply(&mut on_gpu, Action::Undo);
    on_gpu.sync_from_gpu().unwrap_or_else(|e| panic!("{e}"));
    assert!((on_gpu.state().terrain[i] - world().state().terrain[i]).abs() < 0.05, "undo on the GPU backend");
}

/// An unset droplet floor means the input's lowest height in the viewer as in the CLI: erosion
/// never digs below it. (The smoothing of each batch's change spreads the change of cells at the
/// floor to their neighbours, in the CLI too: measured 0.013 m below it here; without the floor
/// 0.128 m.)
#[test]
fn the_droplet_floor_is_the_inputs_lowest_height_as_in_the_cli() {
    let mut w = world();
    apply(&mut w, Action::SetModel(ModelKind::Droplet));
    apply(&mut w, Action::SetDropletsPerTick(3000));
    for _ in 0..10 {
        w.tick().unwrap_or_else(|e| panic!("{e}"));
    }
    // the grid state's heights are relative to the input's lowest
    let lowest = w.state().terrain.iter().fold(f32::INFINITY, |a, &b| a.min(b));
    assert!(lowest >= -0.03, "a cell went {} m below the input's lowest height", -lowest);
}

/// Strokes made while the model plays (rain falling, water flowing between dabs) keep the books
/// as exact as strokes made paused: each dab moves the books' starting volumes by what it alone
/// changed, not by what the run did meanwhile.
#[test]
fn strokes_while_playing_keep_the_books_balanced() {
    let mut w = world();
    let mut p = w.grid_params.clone();
    p.rain_mode = RainMode::Uniform;
    p.rain_rate = 0.01;
    apply(&mut w, Action::SetGridParams(Box::new(p)));
    apply(&mut w, Action::SetRain(true));
    for kind in [BrushKind::Raise, BrushKind::AddWater, BrushKind::Lower] {
        apply(&mut w, Action::SetBrush(Brush { kind, radius: 5.0, strength: 0.5, value: 0.2 }));
        apply(&mut w, Action::StrokeBegin { x: 10.0, y: 10.0 });
        for k in 1..8 {
            w.tick().unwrap_or_else(|e| panic!("{e}"));
            apply(&mut w, Action::StrokeTo { x: 10.0 + 4.0 * k as f32, y: 10.0 + 3.0 * k as f32 });
        }
        w.tick().unwrap_or_else(|e| panic!("{e}"));
        apply(&mut w, Action::StrokeEnd);
    }
    for _ in 0..5 {
        w.tick().unwrap_or_else(|e| panic!("{e}"));
    }
    let err = w.state().balance().relative_error;
    assert!(err < 1e-6, "books after strokes while playing: {err}");
}

/// A heightmap with nodata opens with its holes outside the domain, as the CLI runs it: neither
/// model changes them, and saved maps keep them marked.
#[test]
fn a_heightmap_with_nodata_keeps_its_holes_in_both_models_and_in_saved_maps() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (w, h) = (64usize, 48usize);
    let g = erode::Grid::from_fn(w, h, erode::CellSize::square(1.0), |r, c| {
        10.0 + 0.05 * c as f32 + 0.5 * (c as f32 * 0.3).sin() * (r as f32 * 0.2).cos()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let hole = |i: usize| (20..28).contains(&(i / w)) && (30..40).contains(&(i % w));
    let mask: Vec<bool> = (0..w * h).map(hole).collect();
    let map = erode::Heightmap::with_nodata(g, Some(mask)).unwrap_or_else(|e| panic!("{e}"));
    let path = tmp.path().join("holes.tif");
    let opts = erode_io::WriteOptions { nodata_value: Some(-9999.0), ..Default::default() };
    erode_io::write(&path, &map, &opts).unwrap_or_else(|e| panic!("{e}"));
    let mut world = erode_viewer::files::open_heightmap(&path).unwrap_or_else(|e| panic!("{e}"));
    let before = world.state().terrain.clone();
    apply(&mut world, Action::SetRain(true));
    for model in [ModelKind::Grid, ModelKind::Droplet] {
        apply(&mut world, Action::SetModel(model));
        for _ in 0..5 {
            world.tick().unwrap_or_else(|e| panic!("{e}"));
        }
    }
    assert_ne!(before, world.state().terrain, "nothing eroded");
    for i in (0..w * h).filter(|&i| hole(i)) {
        assert_eq!(world.state().terrain[i], before[i], "nodata cell {i} changed");
        assert_eq!(world.state().water[i], 0.0, "water in nodata cell {i}");
    }
    let out = tmp.path().join("maps");
    std::fs::create_dir(&out).unwrap_or_else(|e| panic!("{e}"));
    erode_viewer::files::save_maps(&mut world, &out, "tif").unwrap_or_else(|e| panic!("{e}"));
    let height = erode_io::read(&out.join("height.tif"), &Default::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(height.map.nodata_count(), 80, "the saved height map keeps the holes marked");
}

#[test]
fn painted_uplift_grows_a_range_where_it_is_painted_in_the_stream_power_model() {
    // a flat noisy plain of 100 m cells: only uplift makes relief
    let plain = erode::terrain::bench::noisy_plain(64, 100.0, 5).unwrap_or_else(|e| panic!("{e}"));
    let mut w = World::new(&plain, Params::default(), Default::default()).unwrap_or_else(|e| panic!("{e}"));
    apply(&mut w, Action::SetModel(ModelKind::StreamPower));
    // no uplift but where painted: a band across the middle
    let sp = erode::models::stream_power::Params { uplift: 1e-3, ..Default::default() };
    apply(&mut w, Action::SetStreamPowerParams(Box::new(sp)));
    let b = Brush { kind: BrushKind::LowerUplift, radius: 200.0, strength: 10.0, value: 0.0 };
    apply(&mut w, Action::SetBrush(b));
    apply(&mut w, Action::StrokeBegin { x: 32.0, y: 32.0 });
    apply(&mut w, Action::StrokeEnd);
    assert!(w.uplift.iter().all(|&u| u == 0.0));
    stroke(&mut w, BrushKind::RaiseUplift, 6.0, &[(10.0, 32.0), (54.0, 32.0)]);
    let painted: Vec<bool> = (0..64 * 64).map(|i| w.uplift[i] > 0.0).collect();
    assert!(painted.iter().filter(|&&p| p).count() > 300);
    apply(&mut w, Action::SetIterationsPerTick(10));
    let start = w.state().terrain.clone();
    for _ in 0..5 {
        w.tick().unwrap_or_else(|e| panic!("{e}"));
    }
    assert_eq!(w.progress(), 50);
    // the band rose (uplift beats incision there in 500 kyr), the rest did not
    let mean = |f: &dyn Fn(usize) -> bool| {
        let cells: Vec<usize> = (0..64 * 64).filter(|&i| f(i)).collect();
        cells.iter().map(|&i| f64::from(w.state().terrain[i] - start[i])).sum::<f64>() / cells.len() as f64
    };
    let (inside, outside) = (mean(&|i| painted[i]), mean(&|i| !painted[i]));
    assert!(inside > 20.0, "the painted band rose {inside} m");
    assert!(outside.abs() < 1.0, "the rest moved {outside} m");
    // rivers drain it: the flow overlay has channels of many cells
    let flow = w.overlay_values(erode_viewer::Overlay::Flow).unwrap_or_default();
    assert!(
        flow.iter().any(|&a| a > 2.0 + 4.0),
        "log10 of the largest area: {:?}",
        flow.iter().cloned().fold(0.0, f32::max)
    );
    // painting more uplift mid-run reaches the model at once; undo takes it back
    let up = w.uplift.clone();
    stroke(&mut w, BrushKind::RaiseUplift, 4.0, &[(32.0, 10.0)]);
    // the run's uplift map is the rate: 1 mm/yr times the painted multiplier
    let rate = |w: &World| w.run().and_then(|r| r.maps().into_iter().find(|m| m.0 == "uplift")).map(|m| m.1);
    let times = |u: &[f32]| u.iter().map(|&m| (1e-3 * f64::from(m)) as f32).collect::<Vec<f32>>();
    assert_eq!(rate(&w), Some(times(&w.uplift)));
    apply(&mut w, Action::Undo);
    assert_eq!(w.uplift, up);
    assert_eq!(rate(&w), Some(times(&up)));
    let books = w.run().map_or(1.0, |r| r.balance().relative_error);
    assert!(books < 1e-9, "{books}");
}

/// Every model the library's list makes runs in the viewer with no code of its own there,
/// through the contract: on a 4 m cliff (steeper than any angle of repose) it changes the
/// terrain the viewer shows, counts its units, takes a terrain stroke with its books still
/// balanced, takes parameters its maker checks (and refuses one out of range), and a session
/// keeps it: reloaded, it goes on as if never stopped.
#[test]
fn every_model_the_list_makes_runs_in_the_viewer_through_the_contract() {
    let made: Vec<ModelKind> = ModelKind::all().into_iter().filter(|m| matches!(m, ModelKind::Made(_))).collect();
    assert!(made.contains(&ModelKind::Made("thermal")), "{made:?}");
    for model in made {
        let name = model.info().name;
        let g = erode::Grid::from_fn(48, 40, erode::CellSize::square(1.0), |r, c| {
            if c < 24 { 10.0 + 0.01 * r as f32 } else { 14.0 }
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let mut w = World::new(&g, Params::default(), Default::default()).unwrap_or_else(|e| panic!("{e}"));
        apply(&mut w, Action::SetModel(model));
        apply(&mut w, Action::SetIterationsPerTick(5));
        let start = w.state().terrain.clone();
        for _ in 0..3 {
            w.tick().unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let height = |w: &World| w.run().map(|r| r.maps().swap_remove(0).1).unwrap_or_default();
        assert_eq!(w.run().map(|r| r.name()), Some(name));
        assert_eq!(w.progress(), 15, "{name}");
        assert_ne!(w.state().terrain, start, "{name}: the cliff slid");
        assert_eq!(height(&w), w.state().terrain, "{name}");
        stroke(&mut w, BrushKind::Raise, 4.0, &[(10.0, 20.0)]);
        assert_eq!(height(&w), w.state().terrain, "{name}: the stroke reached the run");
        w.tick().unwrap_or_else(|e| panic!("{name}: {e}"));
        let books = w.run().map_or(1.0, |r| r.balance().relative_error);
        assert!(books < 1e-9, "{name}: books {books}");
        // parameters as the panel sends them, checked by the model's maker
        let table = w.made_params.get(name).cloned().unwrap_or_default();
        let key = table.keys().next().cloned().unwrap_or_default();
        let mut bad = table.clone();
        bad.insert(key.clone(), serde_json::json!(-1e300));
        assert!(w.apply(Action::SetMadeParams(name, Box::new(bad))).is_err(), "{name}: {key} = -1e300");
        assert_eq!(w.made_params.get(name), Some(&table), "{name}: a refused change leaves the old values");
        apply(&mut w, Action::SetMadeParams(name, Box::new(table)));
        w.tick().unwrap_or_else(|e| panic!("{name}: {e}"));
        // the session keeps the run and goes on as if never stopped
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("s.erode");
        session::save(&w, &path).unwrap_or_else(|e| panic!("{e}"));
        let mut back = session::load(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(back.model, model);
        let run = |w: &World| w.run().map(|r| r.checkpoint());
        assert_eq!(run(&back), run(&w), "{name}: reloaded");
        w.tick().unwrap_or_else(|e| panic!("{e}"));
        back.tick().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(run(&back), run(&w), "{name}: a tick after reload");
        assert_eq!(back.state(), w.state(), "{name}: a tick after reload");
    }
}

#[test]
fn the_view_reads_back_its_fields_and_a_full_read_still_brings_the_rest() {
    let Some(ctx) = gpu() else { return };
    let (mut on_gpu, mut on_cpu) = (world(), world());
    for w in [&mut on_gpu, &mut on_cpu] {
        apply(w, Action::SetRain(true));
        apply(w, Action::PlaceSource { x: 40.0, y: 20.0, rate: 3.0 });
    }
    on_gpu.set_backend(Some(ctx)).unwrap_or_else(|e| panic!("{e}"));
    let close = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
    for _ in 0..8 {
        on_gpu.tick().unwrap_or_else(|e| panic!("{e}"));
        on_cpu.tick().unwrap_or_else(|e| panic!("{e}"));
    }
    let velocity_before = on_gpu.state().velocity_x.clone();
    on_gpu.sync_view_from_gpu(Overlay::None).unwrap_or_else(|e| panic!("{e}"));
    let (g, c) = (on_gpu.state(), on_cpu.state());
    assert!(close(&g.terrain, &c.terrain) < 1e-3 && close(&g.water, &c.water) < 1e-3, "the view's read-back");
    assert!(g.water.iter().any(|&d| d > 0.0), "water to compare");
    assert!((g.books.eroded - c.books.eroded).abs() <= 1e-3 * c.books.eroded.abs().max(1e-6), "books");
    assert_eq!(g.velocity_x, velocity_before, "the view's read-back leaves the velocities on the device");
    // a full read-back (edits, saves) still brings what the view's left behind
    on_gpu.sync_from_gpu().unwrap_or_else(|e| panic!("{e}"));
    let (g, c) = (on_gpu.state(), on_cpu.state());
    assert!(g.velocity_x.iter().any(|&v| v != 0.0) && close(&g.velocity_x, &c.velocity_x) < 1e-3, "velocities");
    // the flow overlay needs the fluxes: its read-back is the whole state
    for w in [&mut on_gpu, &mut on_cpu] {
        w.tick().unwrap_or_else(|e| panic!("{e}"));
    }
    on_gpu.sync_view_from_gpu(Overlay::Flow).unwrap_or_else(|e| panic!("{e}"));
    assert!(close(&on_gpu.state().velocity_x, &on_cpu.state().velocity_x) < 1e-3, "velocities with the flow overlay");
}
