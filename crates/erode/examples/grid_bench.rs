//! A preset on a bench terrain, measured as `erode analyze` measures it, with pictures.
//! `cargo run --release -p erode-core --example grid_bench -- BENCH SIZE ITERATIONS PRESET OUT [key=value ...]`
//! (BENCH: mountain or artist)
use erode::analysis::{Figures, Options, analyze};
use erode::models::grid::{CpuSim, Params, StartMaps, State};
use erode::preview::{PreviewStyle, render};
use erode::terrain::bench::{Bench, bench};
use erode::{Grid, Heightmap};

fn write_png(path: &str, img: &erode::preview::Rgb8Image) {
    let f = std::fs::File::create(path).unwrap();
    let mut e = png::Encoder::new(std::io::BufWriter::new(f), img.width as u32, img.height as u32);
    e.set_color(png::ColorType::Rgb);
    e.set_depth(png::BitDepth::Eight);
    e.write_header().unwrap().write_image_data(&img.pixels).unwrap();
}

fn line(f: &Figures) -> String {
    let (t, r) = f.slope_area.as_ref().map_or((f64::NAN, f64::NAN), |x| (x.theta, x.r_squared));
    format!(
        "θ {t:.3} R² {r:.3} pits/km² {:.2} fine {:.3} hill {:.3} ax {:.3} p1-p99 {:.1}-{:.1}",
        f.depressions.per_km2,
        f.fine_relief.all_m,
        f.fine_relief.hillslopes_m.unwrap_or(0.0),
        f.fine_relief.axis_to_diagonal.unwrap_or(0.0),
        f.relief.p1,
        f.relief.p99
    )
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let which = if a[1] == "artist" { Bench::Artist } else { Bench::Mountain };
    let size: usize = a[2].parse().unwrap();
    let iterations: u64 = a[3].parse().unwrap();
    let base = erode::models::grid::preset(&a[4]).unwrap();
    let out = &a[5];
    let sets: String = a.iter().skip(6).map(|s| format!("{s}\n")).collect();
    let mut table = toml::Table::try_from(&base).unwrap();
    table.extend(toml::from_str::<toml::Table>(&sets).unwrap());
    let params: Params = table.try_into().unwrap();
    let before = bench(which, size).unwrap();
    let fa = analyze(&before, &Options::default()).unwrap().figures;
    let t0 = std::time::Instant::now();
    let mut st = State::new(&before.heights, &params, StartMaps::default()).unwrap();
    let mut sim = CpuSim::new(params, &st).unwrap();
    sim.run(&mut st, iterations);
    let secs = t0.elapsed().as_secs_f64();
    let after = Heightmap::new(Grid::from_vec(size, size, st.cell_size, st.heights()).unwrap()).unwrap();
    let fb = analyze(&after, &Options::default()).unwrap().figures;
    let hill = fb.fine_relief.hillslopes_m.unwrap_or(0.0) / fa.fine_relief.hillslopes_m.unwrap_or(1.0);
    println!("in:  {}", line(&fa));
    println!(
        "out: {} | hill {:.2} of input | {secs:.1} s, {:.0} s simulated | eroded {:.3e} deposited {:.3e} thermal {:.3e} m³",
        line(&fb),
        hill,
        st.time,
        st.books.eroded,
        st.books.deposited,
        st.books.thermal_moved
    );
    std::fs::create_dir_all(out).unwrap();
    let style = PreviewStyle::default();
    let crop = |img: &erode::preview::Rgb8Image, side: usize| {
        let (x0, y0) = ((img.width - side) / 2, (img.height - side) / 2);
        let mut pixels = Vec::with_capacity(side * side * 3);
        for r in y0..y0 + side {
            pixels.extend_from_slice(&img.pixels[(r * img.width + x0) * 3..(r * img.width + x0 + side) * 3]);
        }
        erode::preview::Rgb8Image { width: side, height: side, pixels }
    };
    let (ib, ia) = (render(&before, None, None, &style), render(&after, None, None, &style));
    write_png(&format!("{out}/before.png"), &ib);
    write_png(&format!("{out}/after.png"), &ia);
    let side = size.min(384);
    write_png(&format!("{out}/before-crop.png"), &crop(&ib, side));
    write_png(&format!("{out}/after-crop.png"), &crop(&ia, side));
}
