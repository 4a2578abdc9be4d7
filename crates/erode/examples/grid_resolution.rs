//! The same land at two cell sizes, the same preset and terrain time: how alike are the
//! height changes (downsampled to the coarse grid) and the slope–area fits?
//! `cargo run --release -p erode-core --example grid_resolution -- [SIZE] [SECONDS] [PRESET] [key=value ...]`
use erode::analysis::{Options, analyze};
use erode::models::grid::{CpuSim, Params, StartMaps, State};
use erode::terrain::bench::{Bench, at_cell_size};
use erode::{Grid, Heightmap};

fn run(params: &Params, map: &Heightmap, seconds: f64) -> (Heightmap, u64) {
    let mut st = State::new(&map.heights, params, StartMaps::default()).unwrap();
    let mut sim = CpuSim::new(params.clone(), &st).unwrap();
    // the same terrain time on both grids (with a morphological step: the same iterations)
    while st.terrain_time < seconds {
        sim.run(&mut st, 1);
    }
    let after = Heightmap::new(Grid::from_vec(st.width, st.height, st.cell_size, st.heights()).unwrap()).unwrap();
    (after, st.iteration)
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let size: usize = a.get(1).and_then(|s| s.parse().ok()).unwrap_or(256);
    let seconds: f64 = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(200.0);
    let preset = a.get(3).map_or("rivers", String::as_str);
    let sets: String = a.iter().skip(4).map(|s| format!("{s}\n")).collect();
    let base = erode::models::grid::preset(preset).unwrap();
    let over: toml::Table = toml::from_str(&sets).unwrap();
    let mut table = toml::Table::try_from(&base).unwrap();
    table.extend(over);
    let params: Params = table.try_into().unwrap();
    let coarse = at_cell_size(Bench::Artist, size, 2.0).unwrap();
    let fine = at_cell_size(Bench::Artist, 2 * size, 1.0).unwrap();
    let t0 = std::time::Instant::now();
    let (ac, ic) = run(&params, &coarse, seconds);
    let (af, i_f) = run(&params, &fine, seconds);
    let alike = erode::analysis::compare::downsampled_change(&coarse, &ac, &fine, &af).unwrap();
    let corr = alike.correlation;
    // the same drainage areas in m² on both grids: 100 cells of 2 m
    let theta = |m: &Heightmap| {
        let cells = 400.0 / m.heights.cell_size().area();
        let o = Options { min_area_cells: cells, channel_area_cells: cells, ..Default::default() };
        analyze(m, &o).unwrap().figures.slope_area.map_or(f64::NAN, |f| f.theta)
    };
    println!(
        "{preset} {seconds} s: 2 m {ic} it, 1 m {i_f} it; corr {corr:.3}; mean |dh| 2 m {:.4} 1 m {:.4}; θ in {:.3}/{:.3} out {:.3}/{:.3}; {:.1} s",
        alike.mean_abs_coarse,
        alike.mean_abs_fine,
        theta(&coarse),
        theta(&fine),
        theta(&ac),
        theta(&af),
        t0.elapsed().as_secs_f64()
    );
}
