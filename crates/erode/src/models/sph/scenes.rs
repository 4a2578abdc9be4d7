//! Skorkovská et al.'s scenes, built at any particle and face count: a lake on a slope, at rest
//! until a stream fills it and it overflows (its Fig. 4/5), a block with a tube that a jet of water runs through,
//! fed continuously (its Fig. 7), and a tank at rest (for checking the fluid). The lake and the
//! tunnel run with a morphological factor of 100, so their surfaces change visibly within
//! minutes (docs/sph-model.md).

use glam::DVec3;

use super::build::{HeightmapMesh, Refine, tank, tube_block};
use super::cpu::CpuSim;
use super::inflow::{Emitter, Inflow, Sink};
use super::mesh::TriMesh;
use super::params::Params;
use super::state::{FluidBlock, State};
use crate::error::{SimError, TerrainError};
use crate::grid::{CellSize, Grid};

/// A mesh, the fluid to put on it, and parameters that suit it.
#[derive(Clone, Debug)]
pub struct Scene {
    /// The surface.
    pub mesh: TriMesh,
    /// Particle spacing, metres.
    pub spacing: f64,
    /// Where the fluid starts.
    pub blocks: Vec<FluidBlock>,
    /// Particles at most (the lowest lattice points of the blocks are kept).
    pub max_particles: usize,
    /// Water entering and leaving while the run goes.
    pub inflow: Inflow,
    /// Parameters tuned for the scene.
    pub params: Params,
}

impl Scene {
    /// The scene's state (its mesh validated, the fluid on its lattice) and a simulator for it
    /// with the scene's parameters.
    pub fn start(self) -> Result<(State, CpuSim), SimError> {
        let min_area = self.mesh.default_min_area();
        let st = State::new(self.mesh, self.spacing, &self.blocks, self.max_particles, min_area)?
            .with_inflow(self.inflow)?;
        let sim = CpuSim::new(self.params, &st)?;
        Ok((st, sim))
    }
}

/// The built-in scenes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SceneKind {
    /// A lake in a basin on a slope, at rest at its outlet's sill; a stream fills it until it
    /// overflows and cuts its outlet (Skorkovská et al.'s Fig. 4).
    Lake,
    /// A block of solid with a tube through it; a jet of water enters at one end.
    Tunnel,
    /// A closed box holding still water.
    Tank,
}

impl SceneKind {
    /// How the scene is best seen: the tunnel cut open along its axis and seen from the cut's
    /// side, the others from the south-west, above.
    pub fn view(self) -> crate::mesh_preview::View {
        use crate::mesh_preview::View;
        match self {
            SceneKind::Tunnel => {
                View { looking: DVec3::new(0.35, 1.0, -0.45).normalize(), cut: Some((-DVec3::Y, 0.0)) }
            }
            SceneKind::Lake | SceneKind::Tank => View::oblique(),
        }
    }

    /// The scene with about `faces` faces (0: the scene's default) and `particles` particles
    /// (0: the default): the tunnel's at most, the tank's exactly where the fluid has room. The
    /// lake's particles are as far apart as its basin full to the brim would hold `particles`
    /// ([`LAKE_FULL`]); at rest it holds fewer, and its stream adds up to a quarter more.
    pub fn build(self, particles: usize, faces: usize) -> Result<Scene, TerrainError> {
        match self {
            SceneKind::Lake => lake(or(particles, 12_528), or(faces, 9_068)),
            SceneKind::Tunnel => tunnel(or(particles, 12_528), or(faces, 4_706)),
            SceneKind::Tank => tank_scene(or(particles, 4_096), faces),
        }
    }
}

fn or(v: usize, default: usize) -> usize {
    if v == 0 { default } else { v }
}

fn check_counts(particles: usize, faces: usize) -> Result<(), TerrainError> {
    if !(64..=5_000_000).contains(&particles) {
        return Err(TerrainError::Parameter {
            name: "particles",
            value: particles as f64,
            expected: "64 to 5,000,000",
        });
    }
    if !(200..=5_000_000).contains(&faces) {
        return Err(TerrainError::Parameter { name: "faces", value: faces as f64, expected: "200 to 5,000,000" });
    }
    Ok(())
}

/// The lake's terrain, metres: a 4 x 2 m slope falling towards +x with a round basin near the
/// top and a shallow valley down its middle.
pub fn lake_terrain() -> Result<Grid<f32>, TerrainError> {
    let n = 256;
    let cell = 4.0 / n as f64;
    Grid::from_fn(n + 1, n / 2 + 1, CellSize::square(cell), |r, c| {
        let (x, y) = (c as f64 * cell, 2.0 - r as f64 * cell);
        let slope = 0.6 - 0.12 * x;
        let rr = ((x - 1.0).powi(2) + (y - 1.0).powi(2)) / 0.36;
        let basin = 0.3 * (1.0 - rr).max(0.0);
        let valley = 0.05 * (-((y - 1.0) / 0.4).powi(2)).exp();
        (slope - basin - valley) as f32
    })
    .map_err(TerrainError::from)
}

fn lake(particles: usize, faces: usize) -> Result<Scene, TerrainError> {
    check_counts(particles, faces)?;
    let terrain = lake_terrain()?;
    // finer triangles where the overflow runs
    let refine = Refine::Region { x0: 1.4, y0: 0.5, x1: 4.0, y1: 1.5 };
    let build = |columns: usize, rows: usize| {
        HeightmapMesh { columns, rows, levels: 1, refine: refine.clone(), base_depth: 0.05 }.build(&terrain)
    };
    // rows first (columns = 2·rows), then the columns around it that come nearest the count
    let rows = nearest(faces, |rows| build(2 * rows, rows).map(|m| m.faces.len()), 2, 400)?;
    let mut best = (usize::MAX, 2 * rows);
    for columns in (2 * rows).saturating_sub(6).max(2)..=2 * rows + 6 {
        let got = build(columns, rows)?.faces.len();
        if got.abs_diff(faces) < best.0 {
            best = (got.abs_diff(faces), columns);
        }
    }
    let mesh = build(best.1, rows)?;
    // the particle spacing at which the basin, full to 26 cm over its outlet, would hold
    // `particles` (the paper's lake size)
    let spacing = spacing_for(&mesh, &[LAKE_FULL], particles)?;
    // the lake starts at rest at its outlet's sill (z = 0.358 m at x = 1.6 m, y = 1 m); a stream
    // poured into the basin's upper end fills it until it overflows there and cuts the outlet;
    // the water running off the slope leaves the domain; at most a quarter over `particles`
    let at_rest = FluidBlock { max: [1.65, 1.65, 0.36], ..LAKE_FULL };
    let stream =
        Emitter { centre: [0.5, 1.0, 0.68], velocity: [0.5, 0.0, -2.0], radius: 0.2, size: [0.0; 2], rate: 0.0 };
    let inflow = Inflow { emitters: vec![stream], sinks: Vec::new(), particle_cap: particles + particles / 4 };
    let params = Params { erosion_rate: 5e-4, critical_shear: 30.0, morphological_factor: 100.0, ..Params::default() };
    Ok(Scene { mesh, spacing, blocks: vec![at_rest], max_particles: particles, params, inflow })
}

/// The lake at the paper's size, as the per-iteration benchmark runs it: its basin full to the
/// brim from the start ([`LAKE_FULL`], all `particles` in it; 0: 12,528) and the narrower,
/// higher stream it had before it started at rest.
pub fn lake_full(particles: usize, faces: usize) -> Result<Scene, TerrainError> {
    let mut scene = lake(or(particles, 12_528), or(faces, 9_068))?;
    scene.blocks = vec![LAKE_FULL];
    scene.inflow.emitters[0].radius = 0.1;
    scene.inflow.emitters[0].centre[2] = 0.75;
    Ok(scene)
}

/// The lake's basin full to 26 cm over its outlet: the block of water the lake's particle
/// spacing is set by (it holds the particle count asked for), metres.
pub const LAKE_FULL: FluidBlock =
    FluidBlock { min: [0.35, 0.35, 0.2], max: [1.65, 1.65, 0.62], velocity: [0.0; 3], depth: 0.0 };

fn tunnel(particles: usize, faces: usize) -> Result<Scene, TerrainError> {
    check_counts(particles, faces)?;
    // faces = 2·around·(along + 3): pick the pair nearest the count asked for
    let mut best = (usize::MAX, 16, 1);
    for around in (16..=256).step_by(8) {
        let along = (faces as f64 / (2.0 * around as f64) - 3.0).round().max(1.0) as usize;
        let got = 2 * around * (along + 3);
        let score = got.abs_diff(faces) * 4 + around.abs_diff(32); // prefer ~32 round
        if score < best.0 {
            best = (score, around, along);
        }
    }
    let mesh = tube_block(3.0, 0.6, 0.35, best.1 as u32, best.2 as u32)?;
    // the spacing at which a 0.4 m slug of the jet holds the particles asked for
    let slug = FluidBlock { min: [0.05, -0.12, -0.12], max: [0.45, 0.12, 0.12], velocity: [0.0; 3], depth: 0.0 };
    let spacing = spacing_for(&mesh, &[slug], particles)?;
    // a jet fed continuously from just inside the entrance, aimed down the tube at its floor;
    // water reaching the far end is taken out, and at most `particles` are in the tube at once
    let jet = Emitter { centre: [0.2, 0.0, 0.0], velocity: [2.0, 0.0, -3.0], radius: 0.12, size: [0.0; 2], rate: 0.0 };
    let outlet = Sink { min: [2.7, -0.4, -0.4], max: [3.5, 0.4, 0.4] };
    let inflow = Inflow { emitters: vec![jet], sinks: vec![outlet], particle_cap: particles };
    let params = Params { erosion_rate: 5e-4, critical_shear: 30.0, morphological_factor: 100.0, ..Params::default() };
    Ok(Scene { mesh, spacing, blocks: Vec::new(), max_particles: particles, params, inflow })
}

fn tank_scene(particles: usize, faces: usize) -> Result<Scene, TerrainError> {
    check_counts(particles, 200)?;
    // a 0.4 x 0.4 m tank, water 0.4 m deep on a lattice, room above
    let spacing = (0.4f64 * 0.4 * 0.4 / particles as f64).cbrt();
    let divisions = if faces == 0 {
        ((0.4 / (2.0 * spacing)).round() as u32).max(2)
    } else {
        ((faces as f64 / 12.0).sqrt().round() as u32).max(2)
    };
    let mesh = tank(DVec3::new(0.4, 0.4, 0.6), [divisions, divisions, divisions * 3 / 2])?;
    let block =
        FluidBlock { min: [0.0, 0.0, 0.0], max: [0.4 + 1e-9, 0.4 + 1e-9, 0.4 + 1e-9], velocity: [0.0; 3], depth: 0.0 };
    let params = Params { erosion_rate: 0.0, ..Params::default() };
    Ok(Scene { mesh, spacing, blocks: vec![block], max_particles: particles, params, inflow: Inflow::default() })
}

/// The `n` in `lo..=hi` whose `count(n)` is nearest `target` (count grows with `n`).
fn nearest(
    target: usize,
    count: impl Fn(usize) -> Result<usize, TerrainError>,
    lo: usize,
    hi: usize,
) -> Result<usize, TerrainError> {
    let (mut a, mut b) = (lo, hi);
    while a < b {
        let mid = (a + b) / 2;
        if count(mid)? < target { a = mid + 1 } else { b = mid }
    }
    let above = count(a)?.abs_diff(target);
    let below = if a > lo { count(a - 1)?.abs_diff(target) } else { usize::MAX };
    Ok(if below < above { a - 1 } else { a })
}

/// The largest lattice spacing (metres) at which the blocks hold at least `particles` fluid
/// points of `mesh`.
pub fn spacing_for(mesh: &TriMesh, blocks: &[FluidBlock], particles: usize) -> Result<f64, TerrainError> {
    let volume: f64 = blocks.iter().map(|b| (0..3).map(|k| b.max[k] - b.min[k]).product::<f64>()).sum();
    let count = |s: f64| super::state::fluid_points(mesh, s, blocks, usize::MAX);
    let (mut lo, mut hi) = ((volume / particles as f64).cbrt() * 0.3, (volume / particles as f64).cbrt());
    if count(lo) < particles {
        return Err(TerrainError::Parameter {
            name: "particles",
            value: particles as f64,
            expected: "a count the scene's fluid region can hold",
        });
    }
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        if count(mid) >= particles { lo = mid } else { hi = mid }
    }
    Ok(lo)
}
