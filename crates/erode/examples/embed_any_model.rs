//! Embedding models by name, as a tool with a model menu would: the models' list names every
//! model and says what its `advance` counts; those with a maker (the thermal model, and each new
//! one) are made from a name and a preset with no code of their own here. The four older models
//! have adapters of their own (the other `embed_*` examples).
//! `cargo run --release -p erode-core --example embed_any_model`

use erode::models::{MODELS, make::Inputs};
use erode::terrain::{TerrainKind, TerrainSpec, generate};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let spec = TerrainSpec { kind: TerrainKind::Ridged, width: 96, height: 96, relief: 60.0, ..Default::default() };
    let terrain = generate(&spec)?.heights;
    for info in MODELS {
        let Some(maker) = info.make else {
            println!("{:<12} {}: made by its own adapter in erode::contract", info.name, info.summary);
            continue;
        };
        let (preset, _) = (info.presets)().first().copied().ok_or("a preset")?;
        let table = (maker.preset)(preset)?;
        let mut run = (maker.start)(&table, &Inputs { terrain: &terrain, nodata: None, maps: &[] })?;
        run.advance(20, &mut |_| {})?;
        run.sync()?;
        let height = run.map("height").ok_or("a height map")?;
        let changed = height.iter().zip(terrain.as_slice()).filter(|(a, b)| a != b).count();
        let books = run.balance();
        assert!(books.relative_error < 1e-5, "{}: {books:?}", info.name);
        println!(
            "{:<12} preset {preset:<10} 20 {}: {changed} cells changed, books {:.1e}",
            info.name,
            run.unit().plural(),
            books.relative_error
        );
    }
    Ok(())
}
