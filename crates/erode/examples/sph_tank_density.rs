//! The still tank's densities beside the side walls (the drift along the walls): after the test's settling
//! (3375 particles, 1500 damped iterations), by distance to the side walls (as
//! `sph_tank_forces`), at mid-depth: the continuity density the pressure comes from, and the
//! summation density `Σ m·W / γ` (the walls' cut `γ` from the kernel's tables, the walls of the
//! 0.4 m box taken from its geometry), both against hydrostatic.
//! `cargo run --release -p erode-core --example sph_tank_density`
use erode::models::sph::SceneKind;
use erode::models::sph::kernel::Kernel;
fn main() {
    let mut scene = SceneKind::Tank.build(3375, 0).unwrap();
    // the table walls, whose imbalance this example locates (mirror walls have none)
    scene.params.mirror_walls = 0.0;
    let (mut st, mut sim) = scene.start().unwrap();
    sim.start_hydrostatic(&mut st);
    sim.settle(&mut st, 1500, 0.02);
    let s = st.spacing;
    let h = sim.derived().h;
    let m = sim.derived().mass;
    let mut k = Kernel::new(h);
    let reach = (2.0 * h / s).ceil() as i32 + 1;
    let mut lattice = 0.0;
    for a in -reach..=reach {
        for b in -reach..=reach {
            for c in -reach..=reach {
                lattice += k.w(glam::DVec3::new(f64::from(a), f64::from(b), f64::from(c)).length() * s);
            }
        }
    }
    k.fit_wall(s, 1.0 / lattice);
    let top = st.positions.iter().map(|x| x.z).fold(0.0, f64::max);
    let c = sim.derived().sound_speed;
    let mut acc = std::collections::BTreeMap::<(u32, u32), (f64, f64, f64, usize)>::new();
    let n = st.positions.len();
    for i in 0..n {
        let x = st.positions[i];
        let dx = ((x.x.min(0.4 - x.x)) / s).floor() as u32;
        let dy = ((x.y.min(0.4 - x.y)) / s).floor() as u32;
        let (near, far) = (dx.min(dy).min(3), dx.max(dy).min(3));
        let layer = ((top - x.z) / s).floor() as u32;
        if !(3..=12).contains(&layer) {
            continue;
        }
        let mut sum = 0.0;
        for j in 0..n {
            let r = (x - st.positions[j]).length();
            if r < 2.0 * h {
                sum += m * k.w(r);
            }
        }
        let gamma: f64 = [x.x, 0.4 - x.x, x.y, 0.4 - x.y, x.z].iter().map(|&d| 1.0 - k.beyond(d)).product();
        let hydro = 1000.0 * (1.0 + 9.81 * (top + 0.5 * s - x.z) / (c * c));
        let e = acc.entry((near, far)).or_insert((0.0, 0.0, 0.0, 0));
        e.0 += st.density[i] / hydro - 1.0;
        e.1 += sum / gamma / hydro - 1.0;
        e.2 += gamma;
        e.3 += 1;
    }
    println!("sound speed {c:.2} m/s");
    println!("near far: continuity ρ/ρ_hydrostatic − 1, summation ρ/γ/ρ_hydrostatic − 1, mean γ, particles");
    for ((a, b), (r, sm, g, cnt)) in acc {
        if b == 3 || a == b {
            let c = cnt as f64;
            println!("{a} {b}: {:9.5} {:9.5} {:6.3} {cnt}", r / c, sm / c, g / c);
        }
    }
}
