//! The same land at two cell sizes, the same preset and terrain time: how alike are the
//! height changes (downsampled to the coarse grid) and the slope–area fits?
//! `cargo run --release -p erode --example grid_resolution -- [SIZE] [SECONDS] [PRESET] [key=value ...]`
use erode::analysis::{Options, analyze};
use erode::models::grid::{CpuSim, Params, StartMaps, State};
use erode::terrain::bench::{Bench, at_cell_size};
use erode::{Grid, Heightmap};

fn run(params: &Params, map: &Heightmap, seconds: f64) -> (Vec<f32>, Heightmap, u64) {
    let mut st = State::new(&map.heights, params, StartMaps::default()).unwrap();
    let mut sim = CpuSim::new(params.clone(), &st).unwrap();
    // the same terrain time on both grids (with a morphological step: the same iterations)
    while st.terrain_time < seconds {
        sim.run(&mut st, 1);
    }
    let h = st.heights();
    let dz: Vec<f32> = h.iter().zip(map.heights.as_slice()).map(|(a, b)| a - b).collect();
    let after = Heightmap::new(Grid::from_vec(st.width, st.height, st.cell_size, h).unwrap()).unwrap();
    (dz, after, st.iteration)
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
    let (dc, ac, ic) = run(&params, &coarse, seconds);
    let (df, af, i_f) = run(&params, &fine, seconds);
    // the fine change, mean of each 2 x 2 block
    let down: Vec<f32> = (0..size * size)
        .map(|i| {
            let (r, c) = (i / size, i % size);
            let at = |rr: usize, cc: usize| df[(2 * r + rr) * 2 * size + 2 * c + cc];
            (at(0, 0) + at(0, 1) + at(1, 0) + at(1, 1)) / 4.0
        })
        .collect();
    let n = (size * size) as f64;
    let mean = |v: &[f32]| v.iter().map(|&x| f64::from(x)).sum::<f64>() / n;
    let (mc, md) = (mean(&dc), mean(&down));
    let cov: f64 = dc.iter().zip(&down).map(|(&x, &y)| (f64::from(x) - mc) * (f64::from(y) - md)).sum();
    let var = |v: &[f32], m: f64| v.iter().map(|&x| (f64::from(x) - m).powi(2)).sum::<f64>();
    let corr = cov / (var(&dc, mc) * var(&down, md)).sqrt();
    let abs = |v: &[f32]| v.iter().map(|&x| f64::from(x.abs())).sum::<f64>() / v.len() as f64;
    // the same drainage areas in m² on both grids: 100 cells of 2 m
    let theta = |m: &Heightmap| {
        let cells = 400.0 / m.heights.cell_size().area();
        let o = Options { min_area_cells: cells, channel_area_cells: cells, ..Default::default() };
        analyze(m, &o).unwrap().figures.slope_area.map_or(f64::NAN, |f| f.theta)
    };
    println!(
        "{preset} {seconds} s: 2 m {ic} it, 1 m {i_f} it; corr {corr:.3}; mean |dh| 2 m {:.4} 1 m {:.4}; θ in {:.3}/{:.3} out {:.3}/{:.3}; {:.1} s",
        abs(&dc),
        abs(&df),
        theta(&coarse),
        theta(&fine),
        theta(&ac),
        theta(&af),
        t0.elapsed().as_secs_f64()
    );
}
