//! What evolves in the SPH model: the mesh, the particles, what each vertex owes the surface, and
//! the books.

use glam::DVec3;
use rayon::prelude::*;

use super::mesh::TriMesh;
use crate::error::{MeshError, SimError};

/// A box of fluid filled with particles on a cubic lattice (where it is not solid).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FluidBlock {
    /// Smallest corner, metres.
    pub min: [f64; 3],
    /// Largest corner, metres.
    pub max: [f64; 3],
    /// Starting velocity, m/s.
    #[serde(default)]
    pub velocity: [f64; 3],
}

/// Volumes booked so far, m³ (f64 sums in a fixed order).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct SphBooks {
    /// Taken from the surface by particles.
    pub eroded: f64,
    /// Put back on the surface.
    pub deposited: f64,
    /// Carried away by particles that left the domain.
    pub outflow: f64,
    /// Particles that left the domain.
    pub particles_lost: u64,
}

/// How well the books balance.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct SphBalance {
    /// Change of the mesh's volume since the start (divergence theorem), m³.
    pub mesh_volume_change: f64,
    /// Sediment the particles carry now, m³.
    pub carried: f64,
    /// Volume the vertices still owe the surface (moves clamped to `max_move`), m³.
    pub pending: f64,
    /// `|mesh change + pending + carried + outflow|` over the volume eroded (0 when nothing was).
    pub relative_error: f64,
}

/// The state of an SPH erosion run.
#[derive(Clone, Debug, PartialEq)]
pub struct SphState {
    /// The eroded surface.
    pub mesh: TriMesh,
    /// Particle spacing at rest, metres (the lattice the fluid started on).
    pub spacing: f64,
    /// Particle positions, metres.
    pub positions: Vec<DVec3>,
    /// Particle velocities, m/s.
    pub velocities: Vec<DVec3>,
    /// Sediment each particle carries, m³.
    pub sediment: Vec<f64>,
    /// Each particle's number at the start (they are reordered as they move).
    pub ids: Vec<u32>,
    /// Density at the last step, kg/m³.
    pub density: Vec<f64>,
    /// Pressure at the last step, Pa.
    pub pressure: Vec<f64>,
    /// Signed volume each vertex still owes the surface (+ deposit, − erosion), m³.
    pub pending: Vec<f64>,
    /// Volume eroded at each vertex so far, m³.
    pub eroded: Vec<f64>,
    /// Volume deposited at each vertex so far, m³.
    pub deposited: Vec<f64>,
    /// The books.
    pub books: SphBooks,
    /// Iterations done.
    pub iteration: u64,
    /// Simulated time, s.
    pub time: f64,
    /// The mesh's signed volume at the start, m³.
    pub start_volume: f64,
    /// Particles at the start.
    pub start_particles: usize,
    /// The fastest particle at the end of any iteration so far, m/s (kept in checkpoints, so a
    /// resumed run reports the whole run's).
    pub top_speed: f64,
}

impl SphState {
    /// A state with `mesh` (validated: closed, consistently oriented, no face below
    /// `min_area` m²) and particles on a lattice of `spacing` metres filling `blocks` where the
    /// space is fluid, at most `max_particles` (lowest first).
    pub fn new(
        mesh: TriMesh,
        spacing: f64,
        blocks: &[FluidBlock],
        max_particles: usize,
        min_area: f64,
    ) -> Result<Self, SimError> {
        mesh.validate(true, min_area)?;
        if !(spacing > 0.0 && spacing.is_finite()) {
            return Err(crate::error::ParamError { name: "spacing", value: spacing, expected: "> 0 m" }.into());
        }
        let (positions, velocities) = fill(&mesh, spacing, blocks, max_particles);
        let n = positions.len();
        let v = mesh.positions.len();
        Ok(Self {
            start_volume: mesh.signed_volume(),
            mesh,
            spacing,
            ids: (0..n as u32).collect(),
            sediment: vec![0.0; n],
            density: vec![0.0; n],
            pressure: vec![0.0; n],
            positions,
            velocities,
            pending: vec![0.0; v],
            eroded: vec![0.0; v],
            deposited: vec![0.0; v],
            books: SphBooks::default(),
            iteration: 0,
            time: 0.0,
            start_particles: n,
            top_speed: 0.0,
        })
    }

    /// The books: mesh volume change + pending + carried + outflow should be 0.
    pub fn balance(&self) -> SphBalance {
        let mesh_volume_change = self.mesh.signed_volume() - self.start_volume;
        let carried: f64 = self.sediment.iter().sum();
        let pending: f64 = self.pending.iter().sum();
        let residual = mesh_volume_change + pending + carried + self.books.outflow;
        let scale = self.books.eroded.max(f64::MIN_POSITIVE);
        SphBalance {
            mesh_volume_change,
            carried,
            pending,
            relative_error: if self.books.eroded > 0.0 { residual.abs() / scale } else { residual.abs() },
        }
    }
}

/// How many lattice points of `blocks` at `spacing` are fluid (at most `max`).
pub(crate) fn fluid_points(mesh: &TriMesh, spacing: f64, blocks: &[FluidBlock], max: usize) -> usize {
    fill(mesh, spacing, blocks, max).0.len()
}

/// Lattice points of the blocks that are fluid: the first face straight above faces down (or
/// none is above and the mesh is a solid under open sky), and no face is within half a spacing.
fn fill(mesh: &TriMesh, spacing: f64, blocks: &[FluidBlock], max: usize) -> (Vec<DVec3>, Vec<DVec3>) {
    let grid = super::intersect::FaceGrid::build(mesh, spacing * 4.0, 0.0);
    let (lo, hi) = mesh.bounds();
    // with nothing above, a point is fluid over a solid (open sky), solid around a tank
    let open_sky = mesh.signed_volume() > 0.0;
    let mut points: Vec<(DVec3, DVec3)> = Vec::new();
    for b in blocks {
        let (bmin, bmax) = (DVec3::from(b.min), DVec3::from(b.max));
        let counts = ((bmax - bmin) / spacing).floor();
        if counts.is_nan() || counts.min_element() < 1.0 || counts.x * counts.y * counts.z > 5e7 {
            continue;
        }
        let (nx, ny, nz) = (counts.x as usize, counts.y as usize, counts.z as usize);
        // layers in parallel (each point's test casts a ray through the face grid; scenes
        // bisect the spacing with ~40 fills); collect keeps the layers' order
        let layers: Vec<Vec<(DVec3, DVec3)>> = (0..nz)
            .into_par_iter()
            .map(|k| {
                let mut layer = Vec::new();
                for j in 0..ny {
                    for i in 0..nx {
                        let p = bmin + (DVec3::new(i as f64, j as f64, k as f64) + 0.5) * spacing;
                        if is_fluid(mesh, &grid, p, spacing * 0.45, lo, hi, open_sky) {
                            layer.push((p, DVec3::from(b.velocity)));
                        }
                    }
                }
                layer
            })
            .collect();
        points.extend(layers.into_iter().flatten());
    }
    // lowest first, so a budget cuts the top layer
    points.sort_by(|a, b| a.0.z.total_cmp(&b.0.z).then(a.0.y.total_cmp(&b.0.y)).then(a.0.x.total_cmp(&b.0.x)));
    points.truncate(max);
    points.into_iter().unzip()
}

fn is_fluid(
    mesh: &TriMesh,
    grid: &super::intersect::FaceGrid,
    p: DVec3,
    clearance: f64,
    lo: DVec3,
    hi: DVec3,
    open_sky: bool,
) -> bool {
    // the first face above along +z
    let mut first: Option<(f64, f64)> = None;
    let top = DVec3::new(p.x, p.y, hi.z + 1.0);
    let mut near = false;
    grid.in_box(DVec3::new(p.x, p.y, p.z.min(lo.z)) - clearance, top + clearance, |f| {
        let [a, b, c] = mesh.corners(f as usize);
        let n = mesh.normal(f as usize);
        if let Some(d) = super::mesh::distance_along_normal(p, a, b, c, n)
            && d.abs() < clearance
        {
            near = true;
        }
        if let Some(t) = ray_up(p, a, b, c)
            && first.is_none_or(|(best, _)| t < best)
        {
            first = Some((t, n.z));
        }
    });
    !near && first.map_or(open_sky, |(t, nz)| nz < 0.0 && t > clearance)
}

/// Height above `p` at which the vertical line through `p` meets triangle `abc`, if it does.
fn ray_up(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> Option<f64> {
    let area = |u: DVec3, v: DVec3, w: DVec3| (v.x - u.x) * (w.y - u.y) - (w.x - u.x) * (v.y - u.y);
    let total = area(a, b, c);
    if total.abs() < 1e-300 {
        return None;
    }
    let (wa, wb, wc) = (area(p, b, c) / total, area(a, p, c) / total, area(a, b, p) / total);
    if wa < 0.0 || wb < 0.0 || wc < 0.0 {
        return None;
    }
    let z = wa * a.z + wb * b.z + wc * c.z;
    (z > p.z).then_some(z - p.z)
}

/// Whether a mesh is valid: consistent, closed, no face below `min_area`, no two faces crossing.
pub fn check_mesh(mesh: &TriMesh, min_area: f64) -> Result<(), MeshError> {
    mesh.validate(true, min_area)?;
    let edge = (mesh.surface_area() / mesh.faces.len().max(1) as f64).sqrt() * 2.0;
    let grid = super::intersect::FaceGrid::build(mesh, edge, 0.0);
    match super::intersect::find_crossing(mesh, &grid, None) {
        Some((face_a, face_b)) => Err(MeshError::SelfIntersection { face_a, face_b }),
        None => Ok(()),
    }
}
