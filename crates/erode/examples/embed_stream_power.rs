//! Embedding the stream-power model, as a landscape-evolution study would: uplift a block
//! faster in its north half (an uplift map), run 500,000 years and read the relief and the
//! drainage area it grew.
//! `cargo run --release -p erode-core --example embed_stream_power`

use erode::Grid;
use erode::contract::{Model, StreamPowerRun};
use erode::models::stream_power::{Params, StartMaps, State};
use erode::terrain::{TerrainKind, TerrainSpec, generate};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 128 x 128 cells of 100 m, a metre of noise to start from
    let spec = TerrainSpec { kind: TerrainKind::Noise, width: 128, height: 128, relief: 1.0, ..Default::default() };
    let spec = TerrainSpec { cell_size: erode::CellSize::square(100.0), ..spec };
    let terrain = generate(&spec)?.heights;
    // the uplift rate times 2 in the north half, times 1 in the south
    let uplift = Grid::from_fn(128, 128, terrain.cell_size(), |r, _| if r < 64 { 2.0 } else { 1.0 })?;
    let params = Params { dt_years: 10_000.0, ..Params::default() }; // 1 mm/yr, K·A^0.45·S
    let maps = StartMaps { uplift: Some(&uplift), ..Default::default() };
    let state = State::with_maps(&terrain, maps, params.rock_erodibility)?;
    let mut run = StreamPowerRun::new(params, state)?;
    run.advance(50, &mut |_| {})?; // 50 steps of 10,000 years
    let st = run.state();
    let mean = |rows: std::ops::Range<usize>| {
        let cells: Vec<f64> = rows.flat_map(|r| st.terrain[r * 128..(r + 1) * 128].to_vec()).collect();
        cells.iter().sum::<f64>() / cells.len() as f64
    };
    let (north, south) = (mean(0..64), mean(64..128));
    let largest = st.drainage_area.iter().copied().fold(0.0f32, f32::max);
    assert!(north > south && run.balance().relative_error < 1e-9);
    println!(
        "{:.0} years: north {north:.0} m, south {south:.0} m on average; largest basin {:.1} km²",
        st.years,
        largest / 1e6
    );
    Ok(())
}
