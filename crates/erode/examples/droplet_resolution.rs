//! The droplet model on the same land at 2 m and 1 m cells (the artist bench), the same rain
//! per m²: how alike the height changes are, and what each does to the terrain as `erode
//! analyze` measures it. Each droplet is the rain of one cell, so the same droplets per cell is
//! the same rain per m².
//!
//! `cargo run --release -p erode-core --example droplet_resolution -- [SIZE] [DROPLETS_PER_CELL] [key=value ...]`
//! (SIZE: cells across at 2 m, default 256; parameters as `erode simulate droplet --set` takes them).

use erode::analysis::{Options, analyze};
use erode::models::droplet;
use erode::terrain::bench::{Bench, at_cell_size};
use erode::{Grid, Heightmap};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let size: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(256);
    let per_cell: f64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1.0);
    let mut toml = String::new();
    for kv in args.iter().skip(2) {
        let (k, v) = kv.split_once('=').expect("key=value");
        toml.push_str(&format!("{k} = {v}\n"));
    }
    let params: droplet::Params = toml::from_str(&toml).expect("parameters");
    let coarse = at_cell_size(Bench::Artist, size, 2.0).unwrap();
    let fine = at_cell_size(Bench::Artist, 2 * size, 1.0).unwrap();
    let t0 = std::time::Instant::now();
    let ec = run(&params, &coarse, per_cell);
    let t1 = t0.elapsed().as_secs_f64();
    let ef = run(&params, &fine, per_cell);
    let t2 = t0.elapsed().as_secs_f64() - t1;
    let alike = erode::analysis::compare::downsampled_change(&coarse, &ec, &fine, &ef).unwrap();
    println!(
        "correlation {:.3}, mean |dh| {:.3} m at 2 m, {:.3} m at 1 m ({:+.1} %); {t1:.1} s and {t2:.1} s",
        alike.correlation,
        alike.mean_abs_coarse,
        alike.mean_abs_fine,
        100.0 * (alike.mean_abs_fine / alike.mean_abs_coarse - 1.0)
    );
    for (name, before, after) in [("2 m", &coarse, &ec), ("1 m", &fine, &ef)] {
        let o = Options {
            min_area_cells: 400.0 / before.heights.cell_size().area(),
            channel_area_cells: 400.0 / before.heights.cell_size().area(),
            ..Default::default()
        };
        let full = analyze(before, &Options { maps: true, ..o }).unwrap();
        let area = &full.maps.as_ref().unwrap().drainage_area;
        let (mut sum, mut n) = (0.0, 0usize);
        let bounds = [0.0, 100.0, 400.0, 2000.0, 20000.0, f64::INFINITY];
        let mut classes = [(0.0, 0usize); 5];
        for (k, (&x, &y)) in before.heights.as_slice().iter().zip(after.heights.as_slice()).enumerate() {
            let dh = f64::from(y) - f64::from(x);
            let c = bounds.partition_point(|&b| b <= f64::from(area[k])) - 1;
            classes[c].0 += dh;
            classes[c].1 += 1;
            if area[k] >= 2000.0 {
                sum += dh;
                n += 1;
            }
        }
        let by_area: Vec<String> = classes.iter().map(|(s, n)| format!("{:+.3}", s / (*n).max(1) as f64)).collect();
        println!(
            "{name}: mean dh by input drainage area <100, 100-400, 400-2000, 2000-20000, >20000 m²: {}",
            by_area.join(" ")
        );
        let (a, b) = (full.figures, analyze(after, &o).unwrap().figures);
        let (sa, sb) = (a.slope_area.clone().unwrap(), b.slope_area.clone().unwrap());
        let relief = |f: &erode::analysis::Figures| f.relief.p99 - f.relief.p1;
        println!(
            "{name}: channels {:+.3} m, theta {:.3} -> {:.3} (R² {:.2} -> {:.2}), pits {:.0} -> {:.0} per km², relief kept {:.3}, hillslope fine relief {:.3} -> {:.3} m",
            sum / n.max(1) as f64,
            sa.theta,
            sb.theta,
            sa.r_squared,
            sb.r_squared,
            a.depressions.per_km2,
            b.depressions.per_km2,
            relief(&b) / relief(&a),
            a.fine_relief.hillslopes_m.unwrap_or(0.0),
            b.fine_relief.hillslopes_m.unwrap_or(0.0),
        );
    }
}

fn run(params: &droplet::Params, map: &Heightmap, per_cell: f64) -> Heightmap {
    let lowest = map.heights.as_slice().iter().fold(f32::INFINITY, |a, &b| a.min(b));
    let params = droplet::Params { min_height: f64::from(lowest), ..params.clone() };
    let mut st = droplet::State::new(&map.heights).unwrap();
    let count = (per_cell * map.heights.len() as f64).round() as u64;
    droplet::CpuSim::new(params, &st).unwrap().run(&mut st, count, &mut |_| {});
    Heightmap::new(Grid::from_vec(st.width, st.height, st.cell_size, st.terrain.clone()).unwrap()).unwrap()
}
