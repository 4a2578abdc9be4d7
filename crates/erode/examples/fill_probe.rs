//! Times Priority-Flood on the terrain `erode generate --size N --seed 7 --relief 300
//! --cell-size 4` makes (the whole-command benchmark's input), alternating nothing: run it
//! against another build to compare. `cargo run --release -p erode-core --example fill_probe -- [size] [runs]`
use erode::flow::{Domain, fill};
use erode::terrain::{TerrainSpec, generate};

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let size = args.first().copied().unwrap_or(4096);
    let runs = args.get(1).copied().unwrap_or(3);
    let spec = TerrainSpec {
        width: size,
        height: size,
        seed: 7,
        relief: 300.0,
        cell_size: erode::grid::CellSize::square(4.0),
        ..Default::default()
    };
    let map = generate(&spec).unwrap();
    let z = map.heights.as_slice();
    let domain = Domain { width: size, height: size, cell: map.heights.cell_size(), nodata: None };
    for _ in 0..runs {
        let t0 = std::time::Instant::now();
        let filled = fill::priority_flood(&domain, z);
        let secs = t0.elapsed().as_secs_f64();
        let raised = filled.spill.iter().zip(z).filter(|(s, z)| s > z).count();
        println!("{size}²: {secs:.3} s, {raised} cells raised");
    }
}
