//! The model contract: every model, driven only through `dyn Model`, advances in pieces as in one
//! go, resumes from its checkpoint to the same bytes, and reports balanced books.

use erode::contract::{DropletRun, GridRun, Model, SphRun, StreamPowerRun, Unit};
use erode::models::grid::{Params, StartMaps, State};
use erode::models::sph::SceneKind;
use erode::models::{droplet, stream_power};
use erode::terrain::{TerrainKind, TerrainSpec, generate};

fn terrain() -> erode::Grid<f32> {
    let spec =
        TerrainSpec { kind: TerrainKind::Ridged, width: 48, height: 40, seed: 5, relief: 20.0, ..Default::default() };
    generate(&spec).unwrap().heights
}

fn grid_run() -> Box<dyn Model> {
    let params = Params::default();
    let st = State::new(&terrain(), &params, StartMaps::default()).unwrap();
    Box::new(GridRun::new(params, st).unwrap())
}

fn droplet_run() -> Box<dyn Model> {
    let t = terrain();
    let params = droplet::Params { batch_size: 16, ..Default::default() }.with_floor_at(0.0);
    Box::new(DropletRun::new(params, droplet::State::new(&t).unwrap()).unwrap())
}

fn sph_run() -> Box<dyn Model> {
    let scene = SceneKind::Tank.build(400, 0).unwrap();
    let params = scene.params.clone();
    let (st, _) = scene.start().unwrap();
    Box::new(SphRun::new(params, st).unwrap())
}

fn stream_power_params() -> stream_power::Params {
    stream_power::Params { dt_years: 5e4, ..Default::default() }
}

fn stream_power_run() -> Box<dyn Model> {
    let t = terrain().map(|z| z * 10.0);
    let st = stream_power::State::with_maps(&t, stream_power::StartMaps::default(), 0.1).unwrap();
    Box::new(StreamPowerRun::new(stream_power_params(), st).unwrap())
}

/// `total` units in pieces of about `piece` that end on multiples of the model's granule.
fn advance_in_pieces(m: &mut dyn Model, total: u64, piece: u64) {
    let g = m.granule();
    while m.done() < total {
        let end = ((m.done() + piece).div_ceil(g) * g).min(total);
        let n = end - m.done();
        m.advance(n, &mut |_| {}).unwrap();
    }
    m.sync().unwrap();
}

/// Every model: pieces equal one go; a checkpoint resumed equals not stopping; the books hold.
#[test]
fn every_model_advances_in_pieces_as_in_one_go_and_resumes_to_the_same_bytes() {
    type Start = fn() -> Box<dyn Model>;
    type Resume = fn(&[u8]) -> Box<dyn Model>;
    let cases: [(Start, Resume, u64, f64); 4] = [
        (grid_run, |b| Box::new(GridRun::resume(Params::default(), b, u64::MAX).unwrap()), 60, 1e-6),
        (
            droplet_run,
            |b| {
                let params = droplet::Params { batch_size: 16, ..Default::default() }.with_floor_at(0.0);
                Box::new(DropletRun::resume(params, b, u64::MAX).unwrap())
            },
            1920,
            1e-5,
        ),
        (
            sph_run,
            |b| {
                let params = SceneKind::Tank.build(400, 0).unwrap().params;
                Box::new(SphRun::resume(params, b).unwrap())
            },
            30,
            1e-6,
        ),
        (stream_power_run, |b| Box::new(StreamPowerRun::resume(stream_power_params(), b, u64::MAX).unwrap()), 40, 1e-9),
    ];
    for (start, resume, total, tolerance) in cases {
        let mut whole = start();
        let name = whole.name();
        whole.advance(total, &mut |_| {}).unwrap();
        whole.sync().unwrap();
        assert_eq!(whole.done(), total, "{name}");

        let mut pieces = start();
        advance_in_pieces(pieces.as_mut(), total, 7);
        assert!(whole.checkpoint() == pieces.checkpoint(), "{name}: pieces differ from one go");

        let mut first = start();
        let half = total / 2 / first.granule() * first.granule();
        first.advance(half, &mut |_| {}).unwrap();
        first.sync().unwrap();
        let mut resumed = resume(&first.checkpoint());
        assert_eq!(resumed.done(), half, "{name}");
        resumed.advance(total - half, &mut |_| {}).unwrap();
        resumed.sync().unwrap();
        assert!(whole.checkpoint() == resumed.checkpoint(), "{name}: resumed differs");

        let books = whole.balance();
        assert!(books.relative_error <= tolerance, "{name}: books {books:?}");
        assert!(!books.terms.is_empty() && whole.is_finite(), "{name}");
        match whole.unit() {
            Unit::Iteration => assert!(whole.clock().is_some_and(|c| c.now > 0.0 && c.step > 0.0), "{name}"),
            Unit::Droplet | Unit::Step => assert!(whole.clock().is_none(), "{name}"),
        }
        // the heightmap models name their maps, the mesh model has none
        let maps = whole.maps();
        assert_eq!(maps.first().map(|m| m.0), if name == "sph" { None } else { Some("height") }, "{name}");
    }
}

/// The books terms name what moved, with one word in every model: erosion shows as `eroded`,
/// in m³, and no term carries its unit in its name.
#[test]
fn every_models_books_show_the_erosion() {
    for (mut m, n) in [(grid_run(), 60), (droplet_run(), 960), (stream_power_run(), 5)] {
        m.advance(n, &mut |_| {}).unwrap();
        m.sync().unwrap();
        let books = m.balance();
        assert!(books.term("eroded").is_some_and(|v| v > 0.0), "{}: {books:?}", m.name());
        for t in &books.terms {
            assert!(!t.name.ends_with("_m3") && ["m³", "1"].contains(&t.unit), "{}: {t:?}", m.name());
        }
    }
}

/// `bytes` as the frame of `version`, from before the header carried the input's hash: the same
/// fields without that word, and without the last `newer` bytes of fields added since.
fn without_input_hash(bytes: &[u8], version: u32, newer: usize) -> Vec<u8> {
    let mut old = bytes[..8].to_vec();
    old.extend(version.to_le_bytes());
    old.extend(&bytes[12..20]); // the parameters' fingerprint
    old.extend(&bytes[28..bytes.len() - 8 - newer]);
    let sum = erode::checkpoint::fnv1a64(&old);
    old.extend(sum.to_le_bytes());
    old
}

/// Every checkpoint records the input its run began from (so a resume from another input can
/// be refused); a checkpoint from before it did still resumes, with the input unknown (0), and
/// goes on to the same bytes.
#[test]
fn checkpoints_record_their_input_and_older_ones_still_resume() {
    let t = terrain();
    assert_eq!(grid_run().input_hash(), erode::checkpoint::heightmap_hash(&t, None));
    assert_eq!(droplet_run().input_hash(), erode::checkpoint::heightmap_hash(&t, None));
    let mut other = t.clone();
    other.as_mut_slice()[7] += 0.001;
    assert_ne!(erode::checkpoint::heightmap_hash(&other, None), erode::checkpoint::heightmap_hash(&t, None));
    let mut holed = vec![false; t.len()];
    holed[7] = true;
    assert_ne!(erode::checkpoint::heightmap_hash(&t, Some(&holed)), erode::checkpoint::heightmap_hash(&t, None));
    let tank = |n| {
        let scene = SceneKind::Tank.build(n, 0).unwrap();
        erode::models::sph::input_hash(&scene.mesh, scene.spacing, &scene.blocks, scene.max_particles, &scene.inflow)
    };
    assert_eq!(sph_run().input_hash(), tank(400));
    assert_ne!(tank(300), tank(400));

    type Start = fn() -> Box<dyn Model>;
    type Resume = fn(&[u8]) -> Box<dyn Model>;
    // SPH version 3 added the inflow: its books (4 words) and two empty lists (2 words)
    let cases: [(Start, Resume, u64, u32, usize); 3] = [
        // version 6 added the sediment layer's depth: one f32 per cell
        (grid_run, |b| Box::new(GridRun::resume(Params::default(), b, u64::MAX).unwrap()), 20, 4, 4 * 48 * 40),
        (
            droplet_run,
            |b| {
                let params = droplet::Params { batch_size: 16, ..Default::default() }.with_floor_at(0.0);
                Box::new(DropletRun::resume(params, b, u64::MAX).unwrap())
            },
            320,
            4,
            // version 6 added the ground beyond the edge: 2·(w + 2) + 2·h heights
            4 * (2 * (48 + 2) + 2 * 40),
        ),
        (
            sph_run,
            |b| {
                let params = SceneKind::Tank.build(400, 0).unwrap().params;
                Box::new(SphRun::resume(params, b).unwrap())
            },
            10,
            1,
            48,
        ),
    ];
    for (start, resume, n, old_version, newer) in cases {
        let mut m = start();
        let name = m.name();
        m.advance(n, &mut |_| {}).unwrap();
        m.sync().unwrap();
        let now = m.checkpoint();
        assert_eq!(resume(&now).input_hash(), m.input_hash(), "{name}");
        let mut old = resume(&without_input_hash(&now, old_version, newer));
        assert_eq!((old.input_hash(), old.done()), (0, n), "{name}");
        // the same run but for the unknown input
        m.advance(n, &mut |_| {}).unwrap();
        m.sync().unwrap();
        old.advance(n, &mut |_| {}).unwrap();
        old.sync().unwrap();
        let (a, b) = (m.checkpoint(), old.checkpoint());
        if name == "droplet" {
            // its older frames lack the ground beyond the edge: the resumed run takes it from
            // the heights it holds, so it goes on otherwise than the run that kept it
            let params = droplet::Params { batch_size: 16, ..Default::default() }.with_floor_at(0.0);
            let fp = droplet::params_fingerprint(&params);
            let st = droplet::State::from_bytes(&without_input_hash(&now, old_version, newer), fp, u64::MAX).unwrap();
            let mid = droplet::State::from_bytes(&now, fp, u64::MAX).unwrap();
            assert_eq!(st.beyond, droplet::state::beyond_edge(&mid.terrain, mid.width, mid.height), "{name}");
            assert_ne!(st.beyond, mid.beyond, "{name}: the run had changed its edge");
        } else if name == "grid" {
            // its older frames lack the sediment layer: the resumed run starts without one (all
            // bedrock), so it goes on otherwise than the run that kept it
            let fp = erode::models::grid::params_fingerprint(&Params::default());
            let st = State::from_bytes(&without_input_hash(&now, old_version, newer), fp, u64::MAX).unwrap();
            let mid = State::from_bytes(&now, fp, u64::MAX).unwrap();
            assert!(st.sediment_depth.iter().all(|&d| d == 0.0), "{name}");
            assert!(mid.sediment_depth.iter().any(|&d| d > 0.0), "{name}: the run had no layer");
            assert_eq!((st.terrain, st.water), (mid.terrain, mid.water), "{name}");
        } else {
            assert!(a[..20] == b[..20] && a[28..a.len() - 8] == b[28..b.len() - 8], "{name}: the fields differ");
        }
    }
}

#[test]
fn every_model_gives_the_maps_its_info_lists_in_that_order() {
    // what `--outputs` chooses from is what the run gives
    for run in [grid_run(), droplet_run(), stream_power_run(), sph_run()] {
        let info = erode::models::info::find(run.name()).unwrap();
        let given: Vec<&str> = run.maps().iter().map(|(n, _)| *n).collect();
        let listed: Vec<&str> = info.maps.iter().map(|m| m.name).collect();
        assert_eq!(given, listed, "{}", run.name());
        assert!(listed.is_empty() || listed[0] == "height", "{}: the height first", run.name());
    }
}

/// Every model front ends make from the list alone (its `INFO.make`), made only through the
/// list: each preset reads back as its parameters; the model starts on a ridged terrain,
/// advances in pieces as in one go, resumes from its checkpoint to the same bytes, keeps its
/// books with `eroded` among their terms, and gives the maps its `INFO` lists, the height first;
/// a parameter of the wrong type or out of range is refused.
#[test]
fn every_model_made_from_the_list_runs_resumes_and_keeps_its_books() {
    use erode::models::make::Inputs;
    let t = terrain().map(|z| z * 4.0);
    for info in erode::models::MODELS.iter() {
        let Some(maker) = info.make else { continue };
        let name = info.name;
        for (preset, _) in (info.presets)() {
            let table = (maker.preset)(preset).unwrap();
            (maker.read)(&table).unwrap();
            (maker.check)(&table).unwrap();
        }
        let table = (maker.preset)((info.presets)()[0].0).unwrap();
        let inputs = Inputs { terrain: &t, nodata: None, maps: &[] };
        let start = || (maker.start)(&table, &inputs).unwrap();
        let total = 40;
        let mut whole = start();
        assert_eq!((whole.name(), whole.unit()), (name, maker.unit));
        whole.advance(total, &mut |_| {}).unwrap();
        whole.sync().unwrap();
        let mut pieces = start();
        advance_in_pieces(pieces.as_mut(), total, 7);
        assert!(whole.checkpoint() == pieces.checkpoint(), "{name}: pieces differ from one go");
        let mut first = start();
        first.advance(total / 2, &mut |_| {}).unwrap();
        first.sync().unwrap();
        let mut resumed = (maker.resume)(&table, &first.checkpoint(), u64::MAX).unwrap();
        assert_eq!((resumed.done(), resumed.input_hash()), (total / 2, inputs.hash()), "{name}");
        resumed.advance(total - total / 2, &mut |_| {}).unwrap();
        resumed.sync().unwrap();
        assert!(whole.checkpoint() == resumed.checkpoint(), "{name}: resumed differs");
        let books = whole.balance();
        assert!(books.relative_error <= 1e-9 && books.term("eroded").is_some_and(|v| v > 0.0), "{name}: {books:?}");
        let maps: Vec<&str> = whole.maps().iter().map(|m| m.0).collect();
        assert_eq!(maps, info.maps.iter().map(|m| m.name).collect::<Vec<_>>(), "{name}");
        assert_eq!(whole.shape(), Some((t.width(), t.height(), t.cell_size())), "{name}");
        // a key the model does not have, and a value out of every range
        let mut bad = table.clone();
        bad.insert("no_such_parameter".into(), 1.into());
        assert!((maker.read)(&bad).unwrap_err().contains("no_such_parameter"), "{name}");
        for key in table.keys() {
            let mut bad = table.clone();
            bad.insert(key.clone(), serde_json::json!(-1e300));
            assert!((maker.check)(&bad).is_err(), "{name}: {key} = -1e300 accepted");
        }
    }
}

/// Every model that lets maps be edited (what the viewer's brushes do between ticks): a raised
/// hill in the middle is the model's terrain at once, the edit leaves its books as they were
/// and they balance after running on, every editable map takes one value per cell and nothing else, and a
/// map it does not take is refused with its name.
#[test]
fn every_model_takes_edits_of_its_maps_and_its_books_still_balance() {
    use erode::models::make::Inputs;
    let t = terrain().map(|z| z * 4.0);
    let mut runs = vec![grid_run(), droplet_run(), stream_power_run(), sph_run()];
    for info in erode::models::MODELS.iter() {
        if let Some(maker) = info.make {
            let table = (maker.preset)((info.presets)()[0].0).unwrap();
            runs.push((maker.start)(&table, &Inputs { terrain: &t, nodata: None, maps: &[] }).unwrap());
        }
    }
    let mut edited = 0;
    for mut run in runs {
        let name = run.name();
        let err = run.set_map("no_such_map", &[]).unwrap_err().to_string();
        assert!(err.contains("no_such_map"), "{name}: {err}");
        if run.editable().is_empty() {
            continue;
        }
        edited += 1;
        assert!(run.editable().contains(&"height"), "{name}");
        run.advance(run.granule() * 3, &mut |_| {}).unwrap();
        run.sync().unwrap();
        let maps = run.maps();
        let height = &maps[0].1;
        let (w, h, _) = run.shape().unwrap();
        let hill: Vec<f32> = (0..w * h)
            .map(|i| {
                let (dx, dy) = ((i % w) as f32 - w as f32 / 2.0, (i / w) as f32 - h as f32 / 2.0);
                height[i] + 5.0 * (-(dx * dx + dy * dy) / 20.0).exp()
            })
            .collect();
        // the hill is ~300 m³ against a few m³ eroded: unbooked, it would be an error of ~10; the
        // droplets' f32 terrain keeps its books to ~1e-7 with or without edits
        let before = run.balance().relative_error;
        run.set_map("height", &hill).unwrap();
        // (the grid holds heights above its reference in f32: the map comes back within rounding)
        let back = run.maps().swap_remove(0).1;
        let off = back.iter().zip(&hill).map(|(a, b)| (a - b).abs() / b.abs().max(1.0)).fold(0.0, f32::max);
        assert!(off <= 1e-6, "{name}: the edit is the terrain (off by {off:e})");
        let after = run.balance().relative_error;
        assert!(after <= before + 1e-9, "{name}: {before:e} before the edit, {:?} after", run.balance());
        run.advance(run.granule() * 3, &mut |_| {}).unwrap();
        run.sync().unwrap();
        assert!(run.balance().relative_error <= 1e-6, "{name}: {:?} after running on", run.balance());
        for map in run.editable() {
            let err = run.set_map(map, &[1.0; 3]).unwrap_err().to_string();
            assert!(err.contains(map) && err.contains('3'), "{name}: {err}");
            run.set_map(map, &vec![0.5; w * h]).unwrap();
        }
    }
    assert!(edited >= 4, "the grid, droplet, stream-power and thermal models take edits");
}

#[test]
fn the_grid_model_over_ranks_holds_rank_0_to_its_block_and_gathers_the_bytes_of_one_process() {
    use erode::ranks::Threads;
    let params = Params::default();
    let st = State::new(&terrain(), &params, StartMaps::default()).unwrap();
    let mut one = GridRun::new(params.clone(), st.clone()).unwrap();
    one.advance(12, &mut |_| {}).unwrap();
    let mut ranks = Threads::ranks(3);
    let rank0 = ranks.remove(0);
    let followers: Vec<_> = ranks
        .into_iter()
        .map(|ex| {
            let mut read =
                |_: &[u8], _: &[usize]| Err(erode::models::grid::blocks::BlockError::Read("unused".into()).into());
            std::thread::spawn(move || erode::models::grid::blocks::follow(ex, &mut read, &mut |_, _| {}))
        })
        .collect();
    let mut run = GridRun::new(params, st).unwrap();
    run.use_ranks(rank0).unwrap();
    assert_eq!(run.ranks(), 3);
    run.advance(5, &mut |_| {}).unwrap();
    run.advance(7, &mut |_| {}).unwrap();
    // the cells are on the ranks: rank 0 holds its block, not the map
    assert!(run.state().terrain.is_empty() && run.map("height").is_none());
    assert_eq!(run.balance(), one.balance(), "the books summed over the ranks");
    assert!(run.is_finite());
    run.sync().unwrap();
    assert_eq!(run.checkpoint(), one.checkpoint(), "gathered, the bytes of one process");
    assert_eq!(run.map("height"), one.map("height"));
    drop(run);
    for f in followers {
        f.join().unwrap().unwrap();
    }
}

#[test]
fn the_grid_model_started_over_ranks_from_their_own_rows_checkpoints_the_bytes_of_one_process() {
    use erode::models::grid::blocks::{LeaderWindow, Window, follow};
    use erode::ranks::Threads;
    let params = Params { rain_mode: erode::models::grid::RainMode::Map, ..Params::default() };
    let terrain = terrain();
    let (w, h) = (terrain.width(), terrain.height());
    let holes: Vec<bool> = (0..w * h).map(|i| (i / w).abs_diff(h / 2) + (i % w).abs_diff(w / 3) < 3).collect();
    let rain = erode::Grid::from_fn(w, h, terrain.cell_size(), |r, c| ((r + 2 * c) % 5) as f32 / 4.0).unwrap();
    let maps = StartMaps { rain: Some(&rain), nodata: Some(&holes), ..StartMaps::default() };
    let mut one = GridRun::new(params.clone(), State::new(&terrain, &params, maps).unwrap()).unwrap();
    one.advance(12, &mut |_| {}).unwrap();
    let mut ranks = Threads::ranks(3);
    let rank0 = ranks.remove(0);
    let t = &terrain;
    std::thread::scope(|s| {
        for ex in ranks {
            // each follower's front end cuts its rows from the inputs (a file's rows, in the CLI)
            s.spawn(move || {
                let mut read = |_: &[u8], rows: &[usize]| Window::of_rows(t, maps, rows);
                follow(ex, &mut read, &mut |_, _| {}).unwrap();
            });
        }
        let start = LeaderWindow::cut(&terrain, maps, 3, params.border == erode::models::grid::Border::Wrap);
        let mut run = GridRun::start_over_ranks(params, start, b"", rank0).unwrap();
        assert_eq!(run.ranks(), 3);
        assert_eq!(run.input_hash(), one.input_hash(), "the inputs' hash carried through the ranks");
        // no state of the whole map on rank 0
        assert!(run.state().terrain.is_empty() && run.state().flux.iter().all(Vec::is_empty));
        run.advance(12, &mut |_| {}).unwrap();
        assert_eq!(run.balance(), one.balance());
        run.sync().unwrap();
        assert_eq!(run.checkpoint(), one.checkpoint(), "gathered, the bytes of one process");
    });
}
