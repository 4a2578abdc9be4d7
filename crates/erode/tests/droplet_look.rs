//! What the default droplet model does to a terrain, measured as `erode analyze` measures it:
//! the same land at 2 m and 1 m cells with the same rain per m² changes alike, relief is kept,
//! pits do not multiply, the slope–area concavity rises, hillslopes are lowered and the deposits
//! gather in the valley floors.

use erode::analysis::compare::downsampled_change;
use erode::analysis::{Options, analyze};
use erode::models::droplet;
use erode::terrain::bench::{Bench, at_cell_size};
use erode::{Grid, Heightmap};

/// One droplet per cell (the CLI's default), the floor at the lowest height (as the CLI sets it).
fn eroded(map: &Heightmap) -> Heightmap {
    let lowest = map.heights.as_slice().iter().fold(f32::INFINITY, |a, &b| a.min(b));
    let params = droplet::Params { min_height: f64::from(lowest), ..Default::default() };
    let mut st = droplet::State::new(&map.heights).unwrap();
    droplet::CpuSim::new(params, &st).unwrap().run(&mut st, map.heights.len() as u64, &mut |_| {});
    Heightmap::new(Grid::from_vec(st.width, st.height, st.cell_size, st.terrain.clone()).unwrap()).unwrap()
}

#[test]
fn the_default_keeps_relief_adds_no_pits_and_changes_alike_at_2_m_and_1_m_cells() {
    let size = 256;
    let coarse = at_cell_size(Bench::Artist, size, 2.0).unwrap();
    let fine = at_cell_size(Bench::Artist, 2 * size, 1.0).unwrap();
    let (ec, ef) = (eroded(&coarse), eroded(&fine));

    // measured (2026-11-26): correlation 0.943, mean |Δh| 0.585 m at 2 m, 0.519 m at 1 m
    let alike = downsampled_change(&coarse, &ec, &fine, &ef).unwrap();
    assert!(alike.correlation >= 0.9, "height changes at 2 m and 1 m correlate {}", alike.correlation);
    let (ac, af) = (alike.mean_abs_coarse, alike.mean_abs_fine);
    assert!((af - ac).abs() <= 0.15 * ac, "mean |Δh| {ac} m at 2 m, {af} m at 1 m");

    // the same drainage areas in m² on both grids
    let options = |m: &Heightmap| {
        let cells = 400.0 / m.heights.cell_size().area();
        Options { min_area_cells: cells, channel_area_cells: cells, maps: true, ..Default::default() }
    };
    for (name, before, after) in [("2 m", &coarse, &ec), ("1 m", &fine, &ef)] {
        let a = analyze(before, &options(before)).unwrap();
        let b = analyze(after, &options(after)).unwrap().figures;
        let relief = |f: &erode::analysis::Figures| f.relief.p99 - f.relief.p1;
        // measured: 0.981 / 0.981
        let kept = relief(&b) / relief(&a.figures);
        assert!(kept >= 0.85, "{name}: relief kept {kept}");
        // measured: 1537 -> 786 and 2590 -> 1408 per km²
        let (pa, pb) = (a.figures.depressions.per_km2, b.depressions.per_km2);
        assert!(pb <= 1.5 * pa, "{name}: pits {pa} -> {pb} per km²");
        // measured: θ 0.167 -> 0.408 and 0.144 -> 0.333
        let (ta, tb) = (a.figures.slope_area.unwrap().theta, b.slope_area.unwrap().theta);
        assert!(tb >= ta + 0.05, "{name}: slope–area θ {ta} -> {tb}");
        // mean Δh by the input's D8 drainage area: hillslopes lowered, valley floors raised, the
        // rise growing with the area (measured, below 100 m², 400–2000, 2000–20000 and above
        // 20000 m²: at 2 m −0.14, −0.04, +0.38 and +1.16 m; at 1 m −0.10, +0.07, +0.47 and
        // +0.99 m). Channels of 400–2000 m² measured −0.10 and −0.01 m while droplets cut a notch
        // wherever a river left the map; 40 cells in from the edges they measure alike with and
        // without it (+0.25 and +0.06 m)
        let area = &a.maps.as_ref().unwrap().drainage_area;
        let mean_change = |lo: f32, hi: f32| {
            let (mut sum, mut n) = (0.0, 0usize);
            for (k, (&x, &y)) in before.heights.as_slice().iter().zip(after.heights.as_slice()).enumerate() {
                if (lo..hi).contains(&area[k]) {
                    sum += f64::from(y) - f64::from(x);
                    n += 1;
                }
            }
            sum / n.max(1) as f64
        };
        let (hillslopes, floors) = (mean_change(0.0, 100.0), mean_change(20000.0, f32::INFINITY));
        assert!(hillslopes < 0.0 && floors > 0.0, "{name}: hillslopes {hillslopes:+} m, valley floors {floors:+} m");
        let (channels, valleys) = (mean_change(400.0, 2000.0), mean_change(2000.0, 20000.0));
        assert!(
            channels < valleys && valleys < floors,
            "{name}: by area, {channels:+} m, {valleys:+} m, {floors:+} m: the deposits do not gather downstream"
        );
    }
}
