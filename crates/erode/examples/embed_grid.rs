//! Embedding the grid model in a program of your own, as a game's terrain tool would: make a
//! terrain, start a run, advance it a few iterations each frame, read the heights back.
//! `cargo run --release -p erode-core --example embed_grid`

use erode::contract::{GridRun, Model};
use erode::models::grid::{self, StartMaps, State};
use erode::terrain::{TerrainKind, TerrainSpec, generate};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // a 128 x 128 ridged terrain, 1 m cells, 25 m of relief
    let spec =
        TerrainSpec { kind: TerrainKind::Ridged, width: 128, height: 128, seed: 7, relief: 25.0, ..Default::default() };
    let terrain = generate(&spec)?;
    // the grid model's default preset (rain, rivers, hillslopes kept)
    let params = grid::Params::default();
    let state = State::new(&terrain.heights, &params, StartMaps::default())?;
    let mut run = GridRun::new(params, state)?;
    let before = terrain.heights.as_slice().to_vec();
    // the frame loop: 4 iterations a frame for 60 frames
    for _frame in 0..60 {
        run.advance(4, &mut |_| {})?;
        // ... draw `run.state().terrain` and `run.state().water` here ...
    }
    run.sync()?;
    let after = &run.state().terrain;
    let moved = before.iter().zip(after).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    let books = run.balance();
    println!(
        "{} iterations: the ground moved up to {moved:.3} m; eroded {:.1} m³; books balance to {:.1e}",
        run.done(),
        books.term("eroded").unwrap_or(0.0),
        books.relative_error
    );
    Ok(())
}
