//! The stream-power model against what can be worked out on paper: steady-state channel
//! slopes `S = (U/K)^(1/n)·A^(−m/n)`, a 1-D river profile, the decay of a sine ridge under
//! diffusion, a hillslope's steady curvature `−U/D`; depression filling against Priority-Flood;
//! books, thread counts and resume.

use erode::analysis::{Options, analyze};
use erode::flow::Domain;
use erode::flow::fill::priority_flood;
use erode::models::stream_power::{CpuSim, Params, StartMaps, State, params_fingerprint};
use erode::terrain::bench::noisy_plain;
use erode::{CellSize, Grid, Heightmap};

fn state(map: &Grid<f32>) -> State {
    State::with_maps(map, StartMaps::default(), 0.1).unwrap()
}

fn run(params: &Params, st: &mut State, steps: u64) -> CpuSim {
    let mut sim = CpuSim::new(params.clone(), st).unwrap();
    sim.run(st, steps);
    sim
}

/// Runs to a steady state (heights change less than 1e-9 m in a step) and checks every channel
/// cell's slope to its receiver against the analytic law, and `erode analyze`'s θ.
fn steady_state_slopes_follow_the_law(params: Params) {
    let plain = noisy_plain(96, 100.0, 3).unwrap();
    let mut st = state(&plain);
    let mut sim = CpuSim::new(params.clone(), &st).unwrap();
    let mut steps = 0;
    loop {
        let before = st.terrain.clone();
        sim.step(&mut st);
        steps += 1;
        let change = before.iter().zip(&st.terrain).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        if change < 1e-9 || steps == 3000 {
            break;
        }
    }
    assert!(steps < 3000, "no steady state in 3000 steps");
    let r = sim.routing();
    let cell = 100.0 * 100.0;
    let (mut worst, mut channels) = (0.0f64, 0);
    for i in 0..st.terrain.len() {
        let j = r.receiver[i] as usize;
        if j == i || r.count(i) < 100 {
            continue;
        }
        let length =
            if (i % 96).abs_diff(j % 96) == 1 && (i / 96).abs_diff(j / 96) == 1 { 100.0 * 2f64.sqrt() } else { 100.0 };
        let slope = (st.terrain[i] - st.terrain[j]) / length;
        let area = f64::from(r.count(i)) * cell;
        let law = (params.uplift / params.erodibility).powf(1.0 / params.n) * area.powf(-params.m / params.n);
        worst = worst.max((slope / law - 1.0).abs());
        channels += 1;
    }
    assert!(channels > 200, "{channels}");
    assert!(worst < 0.02, "worst channel slope off the law by {worst}");
    assert!(st.relative_error() < 1e-9, "{}", st.relative_error());
    // the analysis, blind to the model's routing, finds the concavity m/n
    let map = Heightmap::new(
        Grid::from_vec(96, 96, CellSize::square(100.0), st.terrain.iter().map(|&z| z as f32).collect()).unwrap(),
    )
    .unwrap();
    let fit = analyze(&map, &Options::default()).unwrap().figures.slope_area.unwrap();
    let theta = params.m / params.n;
    assert!((fit.theta - theta).abs() <= 0.02, "θ {} against {theta}", fit.theta);
    assert!(fit.r_squared >= 0.98, "R² {}", fit.r_squared);
}

#[test]
fn at_steady_state_channel_slopes_follow_the_stream_power_law() {
    steady_state_slopes_follow_the_law(Params { diffusivity: 0.0, dt_years: 1e5, ..Params::default() });
}

#[test]
fn with_n_2_newton_steps_reach_the_same_law() {
    let p = erode::models::stream_power::preset("nonlinear").unwrap();
    steady_state_slopes_follow_the_law(Params { diffusivity: 0.0, dt_years: 1e5, ..p });
}

#[test]
fn a_one_dimensional_river_reaches_its_analytic_profile() {
    // one row draining west: each column's drainage area is the strip east of it
    let (n, dx) = (200usize, 50.0);
    let flat = Grid::from_vec(n, 1, CellSize::square(dx), vec![0.0f32; n]).unwrap();
    let mut st = state(&flat);
    let p = Params { diffusivity: 0.0, dt_years: 2e5, open_edges: "w".into(), ..Params::default() };
    run(&p, &mut st, 400);
    let ratio = p.uplift / p.erodibility;
    // the discrete steady state, exactly
    let mut z = 0.0;
    for c in 1..n {
        let area = dx * dx * (n - c) as f64;
        z += dx * ratio * area.powf(-p.m);
        assert!((st.terrain[c] - z).abs() <= 1e-9 * z, "column {c}: {} against {z}", st.terrain[c]);
    }
    // and the continuous profile z(x) = (U/K)·∫ (w·(L − ξ))^−m dξ, w the strip's width, away from
    // the divide where a cell is a coarse sample of the integral
    let length = dx * (n as f64 - 0.5);
    let analytic =
        |x: f64| ratio * dx.powf(-p.m) * (length.powf(1.0 - p.m) - (length - x).powf(1.0 - p.m)) / (1.0 - p.m);
    for c in (10..(n * 9 / 10)).step_by(10) {
        let x = dx * (c as f64 + 0.5);
        let want = analytic(x) - analytic(0.5 * dx);
        let got = st.terrain[c];
        assert!((got / want - 1.0).abs() < 0.01, "column {c}: {got} against {want}");
    }
}

#[test]
fn diffusion_alone_decays_a_sine_ridge_at_its_analytic_rate() {
    let (n, dx) = (65usize, 10.0);
    let rows = 4;
    let ridge: Vec<f32> =
        (0..n * rows).map(|i| (std::f64::consts::PI * (i % n) as f64 / (n - 1) as f64).sin() as f32 * 10.0).collect();
    let map = Grid::from_vec(n, rows, CellSize::square(dx), ridge).unwrap();
    let mut st = state(&map);
    let start = st.terrain.clone();
    let (d, dt, steps) = (5.0, 20.0, 200u64);
    let p = Params {
        uplift: 0.0,
        erodibility: 0.0,
        diffusivity: d,
        dt_years: dt,
        open_edges: "we".into(),
        ..Params::default()
    };
    run(&p, &mut st, steps);
    let k = std::f64::consts::PI / ((n - 1) as f64 * dx);
    let t = dt * steps as f64;
    // the scheme's own factor per step, exactly (backward Euler on the discrete Laplacian)
    let lambda = (2.0 - 2.0 * (k * dx).cos()) / (dx * dx);
    let discrete = (1.0 / (1.0 + d * dt * lambda)).powi(steps as i32);
    let continuous = (-d * k * k * t).exp();
    let mid = n / 2;
    let got = st.terrain[n + mid] / start[n + mid];
    // (to the f32 rounding of the start, which is not quite the discrete sine)
    assert!((got - discrete).abs() < 1e-6, "{got} against {discrete}");
    assert!((got / continuous - 1.0).abs() < 0.01, "{got} against exp: {continuous}");
    assert!(continuous < 0.7, "the ridge decays visibly: {continuous}");
    // the shape stays a sine, every row alike
    for (c, &s0) in start.iter().enumerate().take(n - 1).skip(1) {
        assert!((st.terrain[c] / s0 - got).abs() < 1e-6);
        assert!((st.terrain[c] - st.terrain[2 * n + c]).abs() < 1e-12);
    }
    assert!(st.relative_error() < 1e-9, "{}", st.relative_error());
    assert!(st.books.diffused_out > 0.0);
}

#[test]
fn a_diffusive_hillslope_reaches_the_steady_curvature_minus_u_over_d() {
    let (n, dx) = (41usize, 5.0);
    let flat = Grid::from_vec(n, 3, CellSize::square(dx), vec![0.0f32; 3 * n]).unwrap();
    let mut st = state(&flat);
    let (u, d) = (1e-4, 0.01);
    let p = Params {
        uplift: u,
        erodibility: 0.0,
        diffusivity: d,
        dt_years: 1e7,
        open_edges: "we".into(),
        ..Params::default()
    };
    run(&p, &mut st, 40);
    let l = (n - 1) as f64 * dx;
    for c in 1..n - 1 {
        let x = c as f64 * dx;
        let parabola = u / (2.0 * d) * x * (l - x);
        assert!((st.terrain[n + c] - parabola).abs() < 1e-9 * parabola.max(1.0), "column {c}");
        let curvature = (st.terrain[n + c - 1] - 2.0 * st.terrain[n + c] + st.terrain[n + c + 1]) / (dx * dx);
        assert!((curvature + u / d).abs() < 1e-6 * u / d, "column {c}: {curvature}");
    }
    assert!(st.relative_error() < 1e-9, "{}", st.relative_error());
}

#[test]
fn depressions_fill_to_the_priority_flood_spill_heights() {
    let map = noisy_plain(80, 10.0, 9).unwrap();
    let mut mask = vec![false; 80 * 80];
    for r in 30..36 {
        for c in 40..47 {
            mask[r * 80 + c] = true;
        }
    }
    let maps = StartMaps { nodata: Some(&mask), ..Default::default() };
    let mut st = State::with_maps(&map, maps, 0.1).unwrap();
    let still = Params { uplift: 0.0, erodibility: 0.0, diffusivity: 0.0, ..Params::default() };
    let sim = run(&still, &mut st, 1);
    let domain = Domain { width: 80, height: 80, cell: CellSize::square(10.0), nodata: Some(&mask) };
    let flood = priority_flood(&domain, map.as_slice());
    let mut filled = 0;
    for (i, &hole) in mask.iter().enumerate() {
        if hole {
            continue;
        }
        // the spill height, and a lake's surface FLAT_GRADIENT per cell above its outlet
        let above = st.terrain[i] - f64::from(flood.spill[i]);
        assert!((0.0..1e-4).contains(&above), "cell {i}: {above}");
        filled += usize::from(flood.spill[i] > map.as_slice()[i]);
    }
    assert!(filled > 300, "{filled}");
    assert!(sim.routing().pits > 200);
    assert_eq!(sim.routing().unresolved, 0);
    // every cell reaches base level: the drainage areas add up to the domain
    let outlets: u64 = (0..80 * 80)
        .filter(|&i| !mask[i] && sim.routing().receiver[i] as usize == i)
        .map(|i| u64::from(sim.routing().count(i)))
        .sum();
    assert_eq!(outlets, (80 * 80 - mask.iter().filter(|&&m| m).count()) as u64);
    assert!(st.relative_error() < 1e-9);
}

/// A dome draining to every edge with `dips` bowls pressed into it at random (some
/// overlapping, so that their lakes spill into each other): a surface with a few pits, as
/// mid-run.
fn dome_with_dips(size: usize, dips: usize, seed: u64) -> Grid<f32> {
    let mut rng = erode::rng::SplitMix64::new(seed);
    let centre = size as f64 / 2.0;
    let mut z: Vec<f64> = (0..size * size)
        .map(|i| {
            let (r, c) = ((i / size) as f64, (i % size) as f64);
            100.0 - 0.5 * (r - centre).hypot(c - centre)
        })
        .collect();
    for _ in 0..dips {
        let (r0, c0) = (rng.next_f64() * size as f64, rng.next_f64() * size as f64);
        let (radius, depth) = (1.0 + 5.0 * rng.next_f64(), 0.5 + 6.0 * rng.next_f64());
        for (i, h) in z.iter_mut().enumerate() {
            let (r, c) = ((i / size) as f64, (i % size) as f64);
            let d2 = ((r - r0).powi(2) + (c - c0).powi(2)) / (radius * radius);
            *h -= depth * (1.0 - d2).max(0.0);
        }
    }
    Grid::from_vec(size, size, CellSize::square(10.0), z.iter().map(|&h| h as f32).collect()).unwrap()
}

#[test]
fn few_pits_fill_as_small_lakes_to_the_priority_flood_spill_heights() {
    let still = Params { uplift: 0.0, erodibility: 0.0, diffusivity: 0.0, ..Params::default() };
    const SIZE: usize = 128;
    const DIPS: usize = 50;
    let (mut small, mut to_graph) = (0, 0);
    for seed in 0..48 {
        let map = dome_with_dips(SIZE, DIPS, seed);
        let mut st = state(&map);
        let sim = run(&still, &mut st, 1);
        let r = sim.routing();
        small += r.small_lakes;
        to_graph += r.pits - r.small_lakes;
        let domain = Domain { width: SIZE, height: SIZE, cell: CellSize::square(10.0), nodata: None };
        let flood = priority_flood(&domain, map.as_slice());
        for i in 0..SIZE * SIZE {
            let above = st.terrain[i] - f64::from(flood.spill[i]);
            assert!((0.0..1e-4).contains(&above), "seed {seed}, cell {i}: {above}");
        }
        assert_eq!(r.unresolved, 0, "seed {seed}");
        // no routing cycle: every cell is on the stack
        assert_eq!(r.stack.len(), SIZE * SIZE, "seed {seed}");
        // and every cell drains to the map's edge (every root is an edge cell)
        let on_edge = |i: usize| [i / SIZE, i % SIZE].iter().any(|&x| x == 0 || x == SIZE - 1);
        let roots: Vec<usize> = (0..SIZE * SIZE).filter(|&i| r.receiver[i] as usize == i).collect();
        assert!(roots.iter().all(|&i| on_edge(i)), "seed {seed}: a root inside the map");
        let outlets: u64 = roots.iter().map(|&i| u64::from(r.count(i))).sum();
        assert_eq!(outlets, (SIZE * SIZE) as u64, "seed {seed}");
        assert!(st.relative_error() < 1e-9);
    }
    // both ways were taken: lakes kept from their pits (or from a pair spilling into each
    // other), and lakes that spill into each other in longer rings handed to the basin graph
    assert!(small > 100 && to_graph > 20, "{small} small lakes, {to_graph} to the graph");
}

#[test]
fn two_lakes_at_one_level_sharing_a_cell_drain_without_a_cycle() {
    // a plane falling to the north and west edges; two pits, P1 (4,4) and P2 (6,6), whose only
    // low ground is the cell x (5,5) between them (5 m); past x, the cell e (4,6) at 1.5 m runs
    // down a channel to the north edge. P1's lake rises to x and spills into e; P2's rises to
    // x, the same level, and spills into P1: both lakes hold x. (32² cells: two pits are few.)
    let size = 32;
    let mut z: Vec<f32> = (0..size * size).map(|i| 10.0 + 0.01 * ((i / size) + (i % size)) as f32).collect();
    let at = |r: usize, c: usize| r * size + c;
    for (r, c, h) in
        [(4, 4, 1.0), (6, 6, 2.0), (5, 5, 5.0), (4, 6, 1.5), (3, 6, 1.4), (2, 6, 1.3), (1, 6, 1.2), (0, 6, 1.1)]
    {
        z[at(r, c)] = h;
    }
    let map = Grid::from_vec(size, size, CellSize::square(10.0), z).unwrap();
    let still = Params { uplift: 0.0, erodibility: 0.0, diffusivity: 0.0, ..Params::default() };
    let mut st = state(&map);
    let sim = run(&still, &mut st, 1);
    let r = sim.routing();
    assert_eq!((r.pits, r.small_lakes), (2, 2));
    assert_eq!(r.stack.len(), size * size, "a routing cycle");
    // both pits drain out through x and e
    for pit in [at(4, 4), at(6, 6)] {
        let mut c = pit;
        let mut way = vec![c];
        while r.receiver[c] as usize != c {
            c = r.receiver[c] as usize;
            way.push(c);
        }
        assert!(way.contains(&at(5, 5)) && way.contains(&at(4, 6)) && c == at(0, 6), "{way:?}");
    }
    for p in [at(4, 4), at(6, 6), at(5, 5)] {
        assert!((st.terrain[p] - 5.0).abs() < 1e-5, "{}", st.terrain[p]);
    }
    assert!(st.relative_error() < 1e-9);
}

#[test]
fn a_run_is_the_same_bits_on_any_thread_count_and_across_a_resume() {
    let plain = noisy_plain(150, 100.0, 4).unwrap();
    let p = Params { dt_years: 2e4, ..Params::default() };
    let go = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut st = state(&plain);
            run(&p, &mut st, 60);
            st
        })
    };
    let (one, two) = (go(1), go(2));
    assert_eq!(one, two);
    assert!(one.relative_error() < 1e-9, "{}", one.relative_error());
    assert!(one.books.eroded > 0.0 && one.books.filled > 0.0 && one.books.diffused_out > 0.0);
    // stop at 25, save, resume to 60
    let mut st = state(&plain);
    run(&p, &mut st, 25);
    let bytes = st.to_bytes(params_fingerprint(&p));
    let mut back = State::from_bytes(&bytes, params_fingerprint(&p), 1 << 20).unwrap();
    assert_eq!(back, st);
    run(&p, &mut back, 35);
    assert_eq!(back, one);
    let other = Params { m: 0.5, ..p.clone() };
    assert!(State::from_bytes(&bytes, params_fingerprint(&other), 1 << 20).is_err());
}

/// A cone of `size`² cells of 10 m, its peak in the middle, every edge open.
fn cone(size: usize) -> Grid<f32> {
    let c = (size as f64 - 1.0) / 2.0;
    let heights = (0..size * size)
        .map(|i| (1000.0 - 2.0 * ((i / size) as f64 - c).hypot((i % size) as f64 - c)) as f32)
        .collect();
    Grid::from_vec(size, size, CellSize::square(10.0), heights).unwrap()
}

#[test]
fn mfd_conserves_water_and_spreads_it_on_a_cone_as_the_specific_catchment_area_says() {
    // no erosion: one step only routes, so the areas are the cone's
    let size = 121;
    let still = Params { erodibility: 0.0, uplift: 0.0, diffusivity: 0.0, ..Params::default() };
    let areas = |flow: &str| {
        let mut st = state(&cone(size));
        let sim = run(&Params { flow: flow.into(), ..still.clone() }, &mut st, 1);
        (0..size * size).map(|i| sim.drainage_cells(i)).collect::<Vec<f64>>()
    };
    let (d8, mfd) = (areas("d8"), areas("mfd"));
    let c = (size as f64 - 1.0) / 2.0;
    let edge = |i: usize| i / size == 0 || i.is_multiple_of(size) || i / size == size - 1 || i % size == size - 1;
    // every cell's water leaves through the edges, none lost to the shares' rounding
    let out: f64 = (0..size * size).filter(|&i| edge(i)).map(|i| mfd[i]).sum();
    assert!((out - (size * size) as f64).abs() < 1e-9 * (size * size) as f64, "{out}");
    // a cell at radius r drains the ring inside it over its contour: r/2 (in cells) per cell width
    let error = |a: &[f64]| {
        let (mut sum, mut count) = (0.0, 0);
        for (i, &area) in a.iter().enumerate() {
            let r = ((i / size) as f64 - c).hypot((i % size) as f64 - c);
            if (15.0..50.0).contains(&r) {
                sum += (area / (r / 2.0) - 1.0).abs();
                count += 1;
            }
        }
        sum / f64::from(count)
    };
    let (e_d8, e_mfd) = (error(&d8), error(&mfd));
    assert!(e_mfd < 0.1 && e_mfd < e_d8 / 3.0, "mean relative error: mfd {e_mfd}, d8 {e_d8}");
}

#[test]
fn with_mfd_a_range_comes_to_erode_as_fast_as_it_rises_and_keeps_flints_law() {
    let plain = noisy_plain(96, 100.0, 3).unwrap();
    let p = Params { flow: "mfd".into(), diffusivity: 0.0, dt_years: 5e4, ..Params::default() };
    let mut st = state(&plain);
    // 100 Myr: MFD comes to no steady state to 1e-9 m as D8 does (divides wander as the
    // shares follow the slopes: still 1e-3 m a step after 3000 steps), but erosion balances uplift
    run(&p, &mut st, 2000);
    assert!(st.relative_error() < 1e-9, "{}", st.relative_error());
    let inner: Vec<usize> =
        (0..96 * 96).filter(|&i| (1..95).contains(&(i / 96)) && (1..95).contains(&(i % 96))).collect();
    let off =
        inner.iter().map(|&i| (f64::from(st.erosion_rate[i]) / p.uplift - 1.0).abs()).sum::<f64>() / inner.len() as f64;
    assert!(off < 1e-3, "erosion off uplift by {off} on average");
    let map = Heightmap::new(
        Grid::from_vec(96, 96, CellSize::square(100.0), st.terrain.iter().map(|&z| z as f32).collect()).unwrap(),
    )
    .unwrap();
    let fit = analyze(&map, &Options::default()).unwrap().figures.slope_area.unwrap();
    // the analysis, blind to the model's routing, finds the concavity m/n as with D8
    assert!((fit.theta - p.m / p.n).abs() <= 0.02, "θ {}", fit.theta);
    assert!(fit.r_squared >= 0.98, "R² {}", fit.r_squared);
    // the same bits on one and two threads
    let go = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut st = state(&plain);
            run(&p, &mut st, 20);
            st
        })
    };
    assert_eq!(go(1), go(2));
}

#[test]
fn rho8_grooves_the_grid_less_than_d8_keeps_its_books_and_bits_on_any_thread_count() {
    // the README's range, smaller: 10 Myr of 1 mm/yr in steps of 10,000 years
    let size = 192;
    let grown = |flow: &str, seed: u64| {
        let p = Params { flow: flow.into(), ..Params::default() };
        let mut st = state(&noisy_plain(size, 100.0, seed).unwrap());
        run(&p, &mut st, 1000);
        assert!(st.relative_error() < 1e-9, "{flow}: {}", st.relative_error());
        let heights = st.terrain.iter().map(|&z| z as f32).collect();
        let map = Heightmap::new(Grid::from_vec(size, size, CellSize::square(100.0), heights).unwrap()).unwrap();
        analyze(&map, &Options::default()).unwrap().figures
    };
    // the fine relief's power along the axes over the diagonals: D8 grooves the grid, Rho8 less
    // (by 0.03 to 0.21 on these three plains: one plain alone may show little of it)
    let power = |f: &erode::analysis::Figures| f.fine_relief.axis_to_diagonal.unwrap();
    let theta = |f: &erode::analysis::Figures| f.slope_area.as_ref().unwrap().theta;
    let mut less = 0.0;
    for seed in [5, 6, 7] {
        let (d8, rho8) = (grown("d8", seed), grown("rho8", seed));
        less += (power(&d8) - power(&rho8)) / 3.0;
        // and its rivers keep the law's concavity as D8's do
        assert!((theta(&rho8) - theta(&d8)).abs() < 0.05, "plain {seed}, θ: rho8 {}, d8 {}", theta(&rho8), theta(&d8));
    }
    assert!(less > 0.05, "Rho8 lowers the axis/diagonal power by {less} on average");
    let plain = noisy_plain(size, 100.0, 5).unwrap();
    // the random factors are keyed by step and cell: the same bits on 1 and 2 threads, and
    // across a resume
    let p = Params { flow: "rho8".into(), dt_years: 2e4, ..Params::default() };
    let go = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut st = state(&plain);
            run(&p, &mut st, 30);
            st
        })
    };
    let one = go(1);
    assert_eq!(one, go(2));
    let mut st = state(&plain);
    run(&p, &mut st, 12);
    let mut back = State::from_bytes(&st.to_bytes(params_fingerprint(&p)), params_fingerprint(&p), 1 << 20).unwrap();
    run(&p, &mut back, 18);
    assert_eq!(back, one);
}

#[test]
fn a_closed_domain_needs_a_base_level() {
    let plain = noisy_plain(20, 100.0, 1).unwrap();
    let st = state(&plain);
    let closed = Params { open_edges: String::new(), ..Params::default() };
    assert_eq!(CpuSim::new(closed.clone(), &st).unwrap_err(), erode::SimError::NoBaseLevel);
    // a sea is one
    let sea = Params { sea_level: 0.1, ..closed };
    assert!(CpuSim::new(sea, &st).is_ok());
}

/// Every rate at its bound (and past it refused): a run of 10⁶ years stays finite, with MFD and
/// the steepest exponents too.
#[test]
fn params_at_their_bounds_stay_finite() {
    use erode::models::stream_power::params::{MAX_DIFFUSIVITY, MAX_ERODIBILITY, MAX_UPLIFT};
    let mut plain = noisy_plain(48, 100.0, 3).unwrap();
    plain.set_cell_size(CellSize::square(100.0)).unwrap();
    let d = Params { dt_years: 1e5, ..Params::default() };
    for p in [
        Params { uplift: MAX_UPLIFT, ..d.clone() },
        Params { uplift: -MAX_UPLIFT, ..d.clone() },
        Params { erodibility: MAX_ERODIBILITY, m: 4.0, n: 4.0, ..d.clone() },
        Params { erodibility: MAX_ERODIBILITY, flow: "mfd".into(), ..d.clone() },
        Params { diffusivity: MAX_DIFFUSIVITY, uplift: MAX_UPLIFT, ..d.clone() },
    ] {
        p.validate().unwrap();
        let mut st = state(&plain);
        run(&p, &mut st, 10);
        assert!(st.terrain.iter().all(|z| z.is_finite()), "{p:?}: not finite");
    }
    for p in [
        Params { uplift: 2.0 * MAX_UPLIFT, ..d.clone() },
        Params { erodibility: 1e300, ..d.clone() },
        Params { diffusivity: 2.0 * MAX_DIFFUSIVITY, ..d.clone() },
    ] {
        assert!(p.validate().is_err(), "{p:?} passed");
    }
}
