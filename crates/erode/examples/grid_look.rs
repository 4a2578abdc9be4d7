//! Exploration: erode a bench terrain with the grid model and print what `erode analyze` would.
//! `cargo run --release -p erode --example grid_look -- SIZE CELL RELIEF FEATURE ITER PREFILL OUT [key=value ...]`
use erode::analysis::{Options, analyze};
use erode::models::grid::{CpuSim, Params, StartMaps, State};
use erode::preview::{PreviewStyle, render};
use erode::terrain::{TerrainKind, TerrainSpec, generate};
use erode::{CellSize, Grid, Heightmap};

fn write_png(path: &str, img: &erode::preview::Rgb8Image) {
    let f = std::fs::File::create(path).unwrap();
    let mut e = png::Encoder::new(std::io::BufWriter::new(f), img.width as u32, img.height as u32);
    e.set_color(png::ColorType::Rgb);
    e.set_depth(png::BitDepth::Eight);
    e.write_header().unwrap().write_image_data(&img.pixels).unwrap();
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let size: usize = a[1].parse().unwrap();
    let cell: f64 = a[2].parse().unwrap();
    let relief: f64 = a[3].parse().unwrap();
    let feature: f64 = a[4].parse().unwrap();
    let iterations: u64 = a[5].parse().unwrap();
    let prefill: bool = a[6] == "1";
    let out = &a[7];
    let toml_text: String = a[8..].iter().map(|s| format!("{s}\n")).collect();
    let params: Params = toml::from_str(&toml_text).unwrap();
    let spec = TerrainSpec {
        kind: TerrainKind::Fbm,
        width: size,
        height: size,
        cell_size: CellSize::square(cell),
        seed: 1,
        relief,
        feature_size: feature,
        octaves: 8,
        ..Default::default()
    };
    let before = generate(&spec).unwrap();
    let opts = Options::default();
    let fa = analyze(&before, &opts).unwrap().figures;
    let water = prefill.then(|| {
        let d = erode::analysis::Domain { width: size, height: size, cell: before.heights.cell_size(), nodata: None };
        let f = erode::analysis::fill::priority_flood(&d, before.heights.as_slice());
        let w: Vec<f32> = f.spill.iter().zip(before.heights.as_slice()).map(|(s, z)| s - z).collect();
        Grid::from_vec(size, size, before.heights.cell_size(), w).unwrap()
    });
    let mut st =
        State::new(&before.heights, &params, StartMaps { water: water.as_ref(), ..Default::default() }).unwrap();
    let mut sim = CpuSim::new(params, &st).unwrap();
    let t0 = std::time::Instant::now();
    let mut done = 0;
    let mut max_sub = 0;
    while done < iterations {
        let n = (iterations - done).min(50);
        sim.run(&mut st, n);
        done += n;
        max_sub = max_sub.max(sim.derived().substeps);
    }
    let secs = t0.elapsed().as_secs_f64();
    let sub = |v: &[f32]| v.iter().filter(|x| x.is_subnormal()).count();
    let sum = |v: &[f32]| v.iter().fold(0u64, |h, x| (h ^ u64::from(x.to_bits())).wrapping_mul(0x100000001b3));
    eprintln!(
        "checksum terrain {:016x} water {:016x} sediment {:016x}",
        sum(&st.terrain),
        sum(&st.water),
        sum(&st.sediment)
    );
    eprintln!(
        "subnormal: water {} sediment {} flux {} terrain {}",
        sub(&st.water),
        sub(&st.sediment),
        st.flux.iter().map(|f| sub(f)).sum::<usize>(),
        sub(&st.terrain)
    );
    let after = Heightmap::new(Grid::from_vec(size, size, st.cell_size, st.heights()).unwrap()).unwrap();
    let fb = analyze(&after, &opts).unwrap().figures;
    let show = |f: &erode::analysis::Figures| {
        let (t, r) = f.slope_area.as_ref().map_or((f64::NAN, f64::NAN), |x| (x.theta, x.r_squared));
        format!(
            "theta {t:.3} R2 {r:.3} dep/km2 {:.2} fine {:.3} hill {:.3} ax {:.3} p1-p99 {:.0}-{:.0}",
            f.depressions.per_km2,
            f.fine_relief.all_m,
            f.fine_relief.hillslopes_m.unwrap_or(0.0),
            f.fine_relief.axis_to_diagonal.unwrap_or(0.0),
            f.relief.p1,
            f.relief.p99
        )
    };
    let b = &st.books;
    let water_pct = {
        let mut w = st.water.clone();
        w.sort_by(f32::total_cmp);
        let p = |q: f64| w[((w.len() - 1) as f64 * q) as usize];
        format!("water p50 {:.3} p90 {:.3} p99 {:.2}", p(0.5), p(0.9), p(0.99))
    };
    println!("before: {}", show(&fa));
    println!(
        "after:  {} | {secs:.1}s t={:.0}s sub<={max_sub} eroded {:.3e} dep {:.3e} thermal {:.3e} out {:.3e} sedout {:.3e} | {water_pct} | bal {:.2e}",
        show(&fb),
        st.time,
        b.eroded,
        b.deposited,
        b.thermal_moved,
        b.water_outflow,
        b.sediment_outflow,
        st.balance().relative_error
    );
    std::fs::create_dir_all(out).unwrap();
    write_png(&format!("{out}/before.png"), &render(&before, None, None, &PreviewStyle::default()));
    write_png(&format!("{out}/after.png"), &render(&after, None, None, &PreviewStyle::default()));
    let w = Grid::from_vec(size, size, st.cell_size, st.water.clone()).unwrap();
    write_png(&format!("{out}/water.png"), &render(&after, None, Some(&w), &PreviewStyle::default()));
    let dz: Vec<f32> = after.heights.as_slice().iter().zip(before.heights.as_slice()).map(|(a, b)| a - b).collect();
    let raw: Vec<u8> = dz.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(format!("{out}/dz.r32"), raw).unwrap();
    let raw: Vec<u8> = after.heights.as_slice().iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(format!("{out}/h.r32"), raw).unwrap();
}
