//! Where a settled still tank is out of balance (the drift along the walls): settles the test's tank
//! (3375 particles, `SETTLE` damped iterations, default 1500), runs one free step and prints the
//! mean vertical acceleration and pressure error (against `ρ0·g·depth`, depth below the top
//! particle plus half a spacing) by distance to the side walls (`near`/`far`: spacings to the
//! nearest and the farthest of the x and y walls, 3 = three or more) at mid-depth (3 to 12
//! spacings below the surface).
//! `cargo run --release -p erode-core --example sph_tank_forces`
use erode::models::sph::SceneKind;
fn main() {
    let mut scene = SceneKind::Tank.build(3375, 0).unwrap();
    // the table walls, whose imbalance this example locates (mirror walls have none)
    scene.params.mirror_walls = 0.0;
    let (mut st, mut sim) = scene.start().unwrap();
    sim.start_hydrostatic(&mut st);
    let settle: u32 = std::env::var("SETTLE").ok().and_then(|s| s.parse().ok()).unwrap_or(1500);
    sim.settle(&mut st, settle, 0.02);
    let v0 = st.velocities.clone();
    let dt = sim.derived().dt;
    sim.step(&mut st).unwrap();
    let s = st.spacing;
    let top = st.positions.iter().map(|x| x.z).fold(0.0, f64::max);
    // classes by distance to the x/y walls (in spacings) and layer from the top
    let mut acc = std::collections::BTreeMap::<(u32, u32), (f64, f64, usize)>::new();
    for (i, x) in st.positions.iter().enumerate() {
        let a = (st.velocities[i] - v0[i]) / dt;
        let dx = ((x.x.min(0.4 - x.x)) / s).floor() as u32;
        let dy = ((x.y.min(0.4 - x.y)) / s).floor() as u32;
        let (near, far) = (dx.min(dy).min(3), dx.max(dy).min(3));
        // mid-depth only: three or more spacings from the surface and the floor
        let layer = ((top - x.z) / s).floor() as u32;
        if !(3..=12).contains(&layer) {
            continue;
        }
        let e = acc.entry((near, far)).or_insert((0.0, 0.0, 0));
        e.0 += a.z;
        e.1 += st.pressure[i] / (1000.0 * 9.81 * (top + 0.5 * s - x.z)) - 1.0;
        e.2 += 1;
    }
    println!("near far: mean a_z (m/s²), mean p/(ρ0·g·depth) − 1, particles");
    for ((n, f), (az, perr, c)) in acc {
        if f == 3 || n == f {
            println!("{n} {f}: {:8.4} {:8.4} {c}", az / c as f64, perr / c as f64);
        }
    }
}
