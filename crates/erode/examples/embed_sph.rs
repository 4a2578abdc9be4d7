//! Embedding the SPH model, as a tool that erodes a mesh would: a mountain's scale model (a
//! triangle mesh made from a heightmap) under water particles, stepped a few iterations a frame,
//! the mesh read back with its eroded vertices.
//! `cargo run --release -p erode-core --example embed_sph`

use erode::CellSize;
use erode::contract::{Model, SphRun};
use erode::models::sph;
use erode::terrain::{TerrainSpec, generate};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // a 2,000 m fBm range of 100 m cells, as a scale model of 3,000 faces under 3,000 particles
    // (any TriMesh will do: sph::State::new takes a mesh and blocks of fluid)
    let spec =
        TerrainSpec { width: 96, height: 96, relief: 2000.0, cell_size: CellSize::square(100.0), ..Default::default() };
    let (scene, scale) = sph::heightmap_scene(&generate(&spec)?, 3_000, 3_000)?;
    let params = scene.params.clone();
    let (state, _) = scene.start()?;
    let before = state.mesh.positions.clone();
    let mut run = SphRun::new(params, state)?;
    for _frame in 0..100 {
        run.advance(10, &mut |_| {})?; // ... draw run.state().positions and the mesh here ...
    }
    let st = run.state();
    let moved = before.iter().zip(&st.mesh.positions).filter(|(a, b)| a != b).count();
    let deepest = before.iter().zip(&st.mesh.positions).map(|(a, b)| a.z - b.z).fold(0.0f64, f64::max);
    let books = run.balance();
    assert!(moved > 0 && books.relative_error < 1e-6, "the water erodes and the books balance: {books:?}");
    println!(
        "{} iterations, {} particles: {moved} of {} vertices moved, the deepest {:.1} m in the terrain's metres; books {:.1e}",
        run.done(),
        st.positions.len(),
        st.mesh.positions.len(),
        deepest / scale.vertical,
        books.relative_error
    );
    Ok(())
}
