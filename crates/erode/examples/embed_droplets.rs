//! Embedding the droplet model, as a terrain editor's "erode here" brush would: rain droplets
//! only where the rain map says, a few thousand a frame, and show what they carved.
//! `cargo run --release -p erode-core --example embed_droplets`

use erode::Grid;
use erode::contract::{DropletRun, Model};
use erode::models::droplet::{self, StartMaps, State};
use erode::terrain::{TerrainKind, TerrainSpec, generate};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let spec =
        TerrainSpec { kind: TerrainKind::Ridged, width: 128, height: 128, seed: 3, relief: 40.0, ..Default::default() };
    let map = generate(&spec)?;
    let heights = &map.heights;
    // the brush: droplets start only inside a disc of 30 cells around the middle
    let brush = Grid::from_fn(128, 128, heights.cell_size(), |r, c| {
        let d = ((r as f32 - 64.0).powi(2) + (c as f32 - 64.0).powi(2)).sqrt();
        if d < 30.0 { 1.0 } else { 0.0 }
    })?;
    // Beyer's default droplet, its floor at the terrain's lowest cell (as the command line sets it)
    let params = droplet::Params::default().with_floor_at(f64::from(map.stats().min));
    let state = State::with_maps(heights, StartMaps { rain: Some(&brush), ..Default::default() })?;
    let mut run = DropletRun::new(params, state)?;
    for _frame in 0..30 {
        run.advance(2_000, &mut |_| {})?; // ... redraw the terrain here ...
    }
    run.sync()?;
    let eroded = run.map("erosion").ok_or("no erosion map")?;
    let inside: f32 = eroded.iter().zip(brush.as_slice()).filter(|(_, b)| **b > 0.0).map(|(e, _)| e).sum();
    let total: f32 = eroded.iter().sum();
    let books = run.balance();
    assert!(books.relative_error < 1e-6, "the books balance: {books:?}");
    println!(
        "{} droplets: {:.0} % of the erosion inside the brush; books {:.1e}",
        run.done(),
        100.0 * inside / total,
        books.relative_error
    );
    Ok(())
}
