//! Runs the grid model on a generated terrain and prints the books: a quick look at a run.
//! `cargo run --release -p erode-core --example grid_probe -- [size] [iterations] [height]`
use erode::models::grid::{CpuSim, Params, StartMaps, State};
use erode::terrain::{TerrainKind, TerrainSpec, generate};

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let size = args.first().copied().unwrap_or(128);
    let iters = args.get(1).copied().unwrap_or(500) as u64;
    let height = args.get(2).copied().unwrap_or(size);
    let spec = TerrainSpec {
        kind: TerrainKind::Ridged,
        width: size,
        height,
        seed: 3,
        relief: size as f64 * 0.25,
        feature_size: size as f64 / 2.0,
        ..Default::default()
    };
    let map = generate(&spec).unwrap();
    let params = Params::default();
    let mut st = State::new(&map.heights, &params, StartMaps::default()).unwrap();
    let mut sim = CpuSim::new(params, &st).unwrap();
    println!("derived: substeps {} stable_dt {}", sim.derived().substeps, sim.derived().stable_dt);
    let t0 = std::time::Instant::now();
    sim.run(&mut st, iters);
    let secs = t0.elapsed().as_secs_f64();
    println!("{iters} iterations in {secs:.3} s = {:.1} it/s", iters as f64 / secs);
    println!("{:#?}", st.books);
    println!("{:#?}", st.balance());
    let dmax = st.water.iter().cloned().fold(0.0f32, f32::max);
    let emax = st.eroded.iter().cloned().fold(0.0f32, f32::max);
    println!("max water {dmax}, max eroded {emax}");
    for (stage, t) in erode::models::grid::Stage::ALL.iter().zip(sim.stage_times().0.iter()) {
        println!("{:>20} {:8.3} ms/it", stage.name(), t.as_secs_f64() * 1e3 / iters as f64);
    }
}
