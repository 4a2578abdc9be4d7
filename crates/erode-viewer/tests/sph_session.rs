//! An SPH session saved from the viewer opens again where it stopped, and goes on as if never
//! stopped.

use erode::contract::Model;
use erode_viewer::sph_view::{SphScene, is_session, open_session, save_session};

#[test]
fn a_saved_sph_session_opens_where_it_stopped_and_goes_on_as_if_never_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let scene = SphScene { scene: Some("tank".into()), particles: 400, ..Default::default() };
    let (mut run, name) = scene.start().unwrap();
    assert_eq!(name, "tank");
    run.advance(6, &mut |_| {}).unwrap();
    let session = dir.path().join("session");
    save_session(&session, &scene, &run).unwrap();
    assert!(is_session(&session) && !is_session(dir.path()));

    let (mut reopened, _) = open_session(&session).unwrap().start().unwrap();
    assert_eq!(reopened.done(), 6);
    run.advance(4, &mut |_| {}).unwrap();
    reopened.advance(4, &mut |_| {}).unwrap();
    assert!(run.checkpoint() == reopened.checkpoint(), "the reopened session went on differently");

    // a damaged state is refused with its file named
    std::fs::write(session.join("sph-state.ckpt"), b"not a checkpoint").unwrap();
    let err = open_session(&session).unwrap().start().err().unwrap();
    assert!(err.contains("sph-state.ckpt"), "{err}");
}

/// A parameter changed while the model runs takes effect from there, is refused with its name
/// when out of range, and a session saved after it goes on with it.
#[test]
fn sph_parameters_change_live_and_a_saved_session_keeps_them() {
    use erode_viewer::sph_view::set_param;
    let dir = tempfile::tempdir().unwrap();
    let mut scene = SphScene { scene: Some("tank".into()), particles: 400, ..Default::default() };
    let (mut run, _) = scene.start().unwrap();
    let (mut same, _) = scene.start().unwrap();
    run.advance(4, &mut |_| {}).unwrap();
    same.advance(4, &mut |_| {}).unwrap();
    let before = run.params().viscosity;
    set_param(&mut run, &mut scene, "viscosity=0.3").unwrap();
    assert_eq!((run.params().viscosity, scene.params.as_ref().map(|p| p.viscosity)), (0.3, Some(0.3)));
    assert_ne!(before, 0.3);
    run.advance(4, &mut |_| {}).unwrap();
    same.advance(4, &mut |_| {}).unwrap();
    assert!(run.state().velocities != same.state().velocities, "the new viscosity changed nothing");

    let err = set_param(&mut run, &mut scene, "viscosity=-1").unwrap_err();
    assert!(err.contains("viscosity"), "{err}");
    assert_eq!(run.params().viscosity, 0.3, "a refused value was applied");

    let session = dir.path().join("session");
    save_session(&session, &scene, &run).unwrap();
    let (mut reopened, _) = open_session(&session).unwrap().start().unwrap();
    assert_eq!(reopened.params().viscosity, 0.3);
    run.advance(3, &mut |_| {}).unwrap();
    reopened.advance(3, &mut |_| {}).unwrap();
    assert!(run.checkpoint() == reopened.checkpoint(), "the reopened session went on differently");
}

/// The output folder of an SPH run (as `erode simulate sph` writes it, through the same library
/// run) opens where the run ended, with the parameters its report names.
#[test]
fn the_output_folder_of_an_sph_run_opens_where_it_ended() {
    use erode_io::run::{Job, SphFront, Stamp, Until, Watch};
    use erode_viewer::sph_view::{is_sph_output, open_output, set_param};
    struct Silent;
    impl Watch for Silent {}
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut scene = SphScene { scene: Some("tank".into()), particles: 400, ..Default::default() };
    let (mut run, _) = scene.start().unwrap();
    // parameters not the scene's: the report's must be the ones used
    set_param(&mut run, &mut scene, "viscosity=0.2").unwrap();
    let job = Job {
        model: run,
        front: SphFront::new("tank", 0, erode::mesh_preview::View::oblique()),
        output: out.clone(),
        until: Until::Count(6),
        checkpoint_every: 0,
        resumed: None,
        stamp: Stamp { hash: 0, input: "tank".into() },
        inputs: Vec::new(),
        force: false,
        pool: rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap(),
        command: Vec::new(),
    };
    erode_io::run::run(job, &Silent).unwrap();
    assert!(is_sph_output(&out) && !is_sph_output(dir.path()));

    let (mut opened, name) = open_output(&out).unwrap().start().unwrap();
    assert_eq!((opened.done(), name.as_str(), opened.params().viscosity), (6, "tank", 0.2));
    let (mut straight, _) = scene.start().unwrap();
    straight.set_params(opened.params().clone()).unwrap();
    straight.advance(9, &mut |_| {}).unwrap();
    opened.advance(3, &mut |_| {}).unwrap();
    assert!(straight.checkpoint() == opened.checkpoint(), "the opened run went on differently");
}
