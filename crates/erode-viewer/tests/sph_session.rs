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
