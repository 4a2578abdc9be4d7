//! What evolves in the SPH model: the mesh, the particles, what each vertex owes the surface, and
//! the books.

use glam::DVec3;
use rayon::prelude::*;

use super::inflow::Inflow;
use super::mesh::TriMesh;
use crate::error::{MeshError, SimError};

/// A box of fluid filled with particles on a cubic lattice (where it is not solid), or only its
/// points lying within `depth` above a surface: a sheet of water on the terrain.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FluidBlock {
    /// Smallest corner, metres.
    pub min: [f64; 3],
    /// Largest corner, metres.
    pub max: [f64; 3],
    /// Starting velocity, m/s.
    #[serde(default)]
    pub velocity: [f64; 3],
    /// 0: the whole box. Else, metres: only the points at most this high above the first
    /// upward-facing surface straight below them (a sheet following the terrain). Default 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub depth: f64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

/// Volumes booked so far, m³ (f64 sums in a fixed order).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Books {
    /// Taken from the surface by particles.
    pub eroded: f64,
    /// Put back on the surface.
    pub deposited: f64,
    /// Carried away by particles that left the domain.
    pub outflow: f64,
    /// Particles that left the domain or entered a sink.
    pub particles_lost: u64,
    /// Water let in by emitters, m³ (a particle stands for `spacing³`).
    pub inflow: f64,
    /// Water emitters held back because the particle cap was reached, m³.
    pub inflow_held: f64,
    /// Particles let in by emitters.
    pub particles_emitted: u64,
}

/// How well the books balance.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Balance {
    /// Change of the mesh's volume since the start (divergence theorem), m³.
    pub mesh_volume_change: f64,
    /// Sediment the particles carry now, m³.
    pub carried: f64,
    /// Volume the vertices still owe the surface (moves clamped to `max_move`), m³.
    pub pending: f64,
    /// Particles the water's books miss: at the start + let in − taken out − now (0 when they
    /// balance).
    pub particles_unaccounted: i64,
    /// `|mesh change + pending + carried + outflow|` over the volume eroded (0 when nothing was).
    pub relative_error: f64,
}

/// The state of an SPH erosion run.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// The input this run began from: [`input_hash`] of its mesh and fluid (0: not recorded, in
    /// checkpoints older than it). Checkpoints carry it, so a resume from another input can be
    /// refused.
    pub input: u64,
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
    /// Each particle's number: its place in the starting fluid, then in order of entry
    /// (they are reordered as they move).
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
    pub books: Books,
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
    /// Emitters, sinks and the particle cap.
    pub inflow: Inflow,
    /// Volume each emitter owes the run, m³ (let in a layer at a time).
    pub owed: Vec<f64>,
}

/// The input hash of an SPH run: the mesh's vertices and faces, the spacing, the fluid blocks
/// and the starting particle count, all [`State::new`] builds a run from, and the inflow
/// ([`State::with_inflow`]; none leaves the hash as it was before runs had inflow). Equal inputs
/// give equal hashes.
pub fn input_hash(mesh: &TriMesh, spacing: f64, blocks: &[FluidBlock], max_particles: usize, inflow: &Inflow) -> u64 {
    with_inflow_hash(start_hash(mesh, spacing, blocks, max_particles), inflow)
}

/// The hash of a run's start with its inflow added.
fn with_inflow_hash(start: u64, inflow: &Inflow) -> u64 {
    if *inflow == Inflow::default() {
        return start;
    }
    let mut bytes = start.to_le_bytes().to_vec();
    inflow.hash_bytes(&mut bytes);
    crate::checkpoint::fnv1a64(&bytes)
}

fn start_hash(mesh: &TriMesh, spacing: f64, blocks: &[FluidBlock], max_particles: usize) -> u64 {
    let mut bytes = Vec::with_capacity(mesh.positions.len() * 24 + mesh.faces.len() * 12 + 64);
    for p in &mesh.positions {
        p.to_array().iter().for_each(|c| bytes.extend(c.to_le_bytes()));
    }
    for f in &mesh.faces {
        f.iter().for_each(|i| bytes.extend(i.to_le_bytes()));
    }
    bytes.extend(spacing.to_le_bytes());
    for b in blocks {
        b.min.iter().chain(&b.max).chain(&b.velocity).for_each(|c| bytes.extend(c.to_le_bytes()));
        // a whole box hashes as it did before sheets existed
        if b.depth != 0.0 {
            bytes.extend(b.depth.to_le_bytes());
        }
    }
    bytes.extend((max_particles as u64).to_le_bytes());
    crate::checkpoint::fnv1a64(&bytes)
}

impl State {
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
            input: start_hash(&mesh, spacing, blocks, max_particles),
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
            books: Books::default(),
            iteration: 0,
            time: 0.0,
            start_particles: n,
            top_speed: 0.0,
            inflow: Inflow::default(),
            owed: Vec::new(),
        })
    }

    /// The state with water entering and leaving as `inflow` says (checked: openings in open
    /// space, a layer under the cap, sinks with corners in order).
    pub fn with_inflow(mut self, inflow: Inflow) -> Result<Self, SimError> {
        inflow.check(&self.mesh, self.spacing, self.positions.len())?;
        self.input = with_inflow_hash(self.input, &inflow);
        self.owed = vec![0.0; inflow.emitters.len()];
        self.inflow = inflow;
        Ok(self)
    }

    /// Water now in the run, m³ (a particle stands for `spacing³`).
    pub fn water(&self) -> f64 {
        self.positions.len() as f64 * self.spacing.powi(3)
    }

    /// The books: mesh volume change + pending + carried + outflow should be 0.
    pub fn balance(&self) -> Balance {
        let mesh_volume_change = self.mesh.signed_volume() - self.start_volume;
        let carried: f64 = self.sediment.iter().sum();
        let pending: f64 = self.pending.iter().sum();
        let residual = mesh_volume_change + pending + carried + self.books.outflow;
        let scale = self.books.eroded.max(f64::MIN_POSITIVE);
        let particles_unaccounted = self.start_particles as i64 + self.books.particles_emitted as i64
            - self.books.particles_lost as i64
            - self.positions.len() as i64;
        Balance {
            particles_unaccounted,
            mesh_volume_change,
            carried,
            pending,
            relative_error: if self.books.eroded > 0.0 { residual.abs() / scale } else { residual.abs() },
        }
    }
}

/// How many of `points` are not fluid (in the solid, or within half a spacing of a face).
pub(crate) fn solid_points(mesh: &TriMesh, spacing: f64, points: &[DVec3]) -> usize {
    let grid = super::intersect::FaceGrid::build(mesh, spacing * 4.0, 0.0);
    let (lo, hi) = mesh.bounds();
    let open_sky = mesh.signed_volume() > 0.0;
    let clearance = spacing * 0.45;
    points
        .iter()
        .filter(|p| !Line::new(mesh, &grid, p.x, p.y, clearance, lo, hi).is_fluid(mesh, **p, clearance, open_sky))
        .count()
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
        // the faces along each vertical line of the lattice are gathered once for all its
        // points, rows of lines in parallel (scenes bisect the spacing with ~40 fills); the
        // sort below puts the points in one order whatever the order found
        let clearance = spacing * 0.45;
        let rows: Vec<Vec<(DVec3, DVec3)>> = (0..ny)
            .into_par_iter()
            .map(|j| {
                let mut row = Vec::new();
                for i in 0..nx {
                    let base = bmin + (DVec3::new(i as f64, j as f64, 0.0) + 0.5) * spacing;
                    let line = Line::new(mesh, &grid, base.x, base.y, clearance, lo, hi);
                    for k in 0..nz {
                        let p = bmin + (DVec3::new(i as f64, j as f64, k as f64) + 0.5) * spacing;
                        let in_sheet = b.depth <= 0.0 || line.height_above_ground(p.z).is_some_and(|h| h <= b.depth);
                        if in_sheet && line.is_fluid(mesh, p, clearance, open_sky) {
                            row.push((p, DVec3::from(b.velocity)));
                        }
                    }
                }
                row
            })
            .collect();
        points.extend(rows.into_iter().flatten());
    }
    // lowest first, so a budget cuts the top layer
    points.sort_by(|a, b| a.0.z.total_cmp(&b.0.z).then(a.0.y.total_cmp(&b.0.y)).then(a.0.x.total_cmp(&b.0.x)));
    points.truncate(max);
    points.into_iter().unzip()
}

/// The faces near the vertical line through `(x, y)`, for the fluid test of every lattice point
/// on it: the faces within `clearance` of the line's column of face-grid cells (with their
/// lowest and highest z) and the heights where the line crosses faces (with the face normal's
/// z), both in the order the grid lists them.
struct Line {
    faces: Vec<(u32, f64, f64)>,
    crossings: Vec<(f64, f64)>,
}

impl Line {
    fn new(
        mesh: &TriMesh,
        grid: &super::intersect::FaceGrid,
        x: f64,
        y: f64,
        clearance: f64,
        lo: DVec3,
        hi: DVec3,
    ) -> Self {
        let (mut faces, mut crossings) = (Vec::new(), Vec::new());
        // the column spans the mesh's height (cells below it clamp to the lowest), so every
        // point of the line searches the same cells
        let (bottom, top) = (DVec3::new(x, y, lo.z), DVec3::new(x, y, hi.z + 1.0));
        grid.in_box(bottom - clearance, top + clearance, |f| {
            let [a, b, c] = mesh.corners(f as usize);
            faces.push((f, a.z.min(b.z).min(c.z), a.z.max(b.z).max(c.z)));
            if let Some(z) = crossing_height(x, y, a, b, c) {
                crossings.push((z, mesh.normal(f as usize).z));
            }
        });
        Self { faces, crossings }
    }

    /// How high `z` lies above the first face straight below it, if that face faces up (the
    /// ground under a point of water).
    fn height_above_ground(&self, z: f64) -> Option<f64> {
        let mut below: Option<(f64, f64)> = None;
        for &(c, nz) in &self.crossings {
            if c <= z && below.is_none_or(|(best, _)| c > best) {
                below = Some((c, nz));
            }
        }
        below.filter(|&(_, nz)| nz > 0.0).map(|(c, _)| z - c)
    }

    /// Whether `p` (on the line) is fluid: no face within `clearance`, and the first face
    /// straight above faces down (or none is above and the mesh is a solid under open sky).
    fn is_fluid(&self, mesh: &TriMesh, p: DVec3, clearance: f64, open_sky: bool) -> bool {
        // a face within `clearance` of `p` has a point within `clearance` of `p` in height, so
        // faces farther than that (twice, against rounding) are skipped
        let near = self.faces.iter().any(|&(f, zmin, zmax)| {
            if p.z <= zmin - 2.0 * clearance || p.z >= zmax + 2.0 * clearance {
                return false;
            }
            // the nearest point of the face, its edges included: over a convex crease the foot
            // point on either face's plane may fall outside both faces
            let [a, b, c] = mesh.corners(f as usize);
            (p - super::mesh::closest_point(p, a, b, c).0).length_squared() < clearance * clearance
        });
        // the first face above along +z (the first listed of equally near ones)
        let mut first: Option<(f64, f64)> = None;
        for &(z, nz) in &self.crossings {
            if z > p.z {
                let t = z - p.z;
                if first.is_none_or(|(best, _)| t < best) {
                    first = Some((t, nz));
                }
            }
        }
        !near && first.map_or(open_sky, |(t, nz)| nz < 0.0 && t > clearance)
    }
}

/// Height at which the vertical line through `(x, y)` meets triangle `abc`, if it does.
fn crossing_height(x: f64, y: f64, a: DVec3, b: DVec3, c: DVec3) -> Option<f64> {
    let area = |u: DVec3, v: DVec3, w: DVec3| (v.x - u.x) * (w.y - u.y) - (w.x - u.x) * (v.y - u.y);
    let total = area(a, b, c);
    if total.abs() < 1e-300 {
        return None;
    }
    let p = DVec3::new(x, y, 0.0);
    let (wa, wb, wc) = (area(p, b, c) / total, area(a, p, c) / total, area(a, b, p) / total);
    if wa < 0.0 || wb < 0.0 || wc < 0.0 {
        return None;
    }
    Some(wa * a.z + wb * b.z + wc * c.z)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::sph::scenes::SceneKind;

    /// The fluid test as each point made it before lines gathered their faces: the face grid
    /// searched around the point itself, every face's tests made in full.
    fn is_fluid_alone(
        mesh: &TriMesh,
        grid: &super::super::intersect::FaceGrid,
        p: DVec3,
        clearance: f64,
        (lo, hi): (DVec3, DVec3),
        open_sky: bool,
    ) -> bool {
        let mut first: Option<(f64, f64)> = None;
        let mut near = false;
        let top = DVec3::new(p.x, p.y, hi.z + 1.0);
        grid.in_box(DVec3::new(p.x, p.y, p.z.min(lo.z)) - clearance, top + clearance, |f| {
            let [a, b, c] = mesh.corners(f as usize);
            let n = mesh.normal(f as usize);
            if (p - super::super::mesh::closest_point(p, a, b, c).0).length() < clearance {
                near = true;
            }
            if let Some(z) = crossing_height(p.x, p.y, a, b, c)
                && z > p.z
                && first.is_none_or(|(best, _)| z - p.z < best)
            {
                first = Some((z - p.z, n.z));
            }
        });
        !near && first.map_or(open_sky, |(t, nz)| nz < 0.0 && t > clearance)
    }

    #[test]
    fn lines_find_the_fluid_points_each_point_finds_alone() {
        let mut solid = 0;
        for kind in [SceneKind::Lake, SceneKind::Tunnel, SceneKind::Tank] {
            let scene = kind.build(3000, 0).unwrap();
            let (mesh, spacing) = (&scene.mesh, scene.spacing);
            let grid = super::super::intersect::FaceGrid::build(mesh, spacing * 4.0, 0.0);
            let bounds = mesh.bounds();
            let open_sky = mesh.signed_volume() > 0.0;
            let clearance = spacing * 0.45;
            let (mut fluid, mut checked) = (0, 0);
            // the tunnel starts empty (its jet fills it): the box its jet enters through
            let slug =
                FluidBlock { min: [0.05, -0.12, -0.12], max: [0.45, 0.12, 0.12], velocity: [0.0; 3], depth: 0.0 };
            let blocks = if scene.blocks.is_empty() { vec![slug] } else { scene.blocks.clone() };
            for b in &blocks {
                let (bmin, bmax) = (DVec3::from(b.min), DVec3::from(b.max));
                // a lattice a little off the scene's, so points also fall near faces, and
                // reaching below and above the block
                let step = spacing * 1.37;
                let n = ((bmax - bmin) / step).floor();
                for j in 0..n.y as usize {
                    for i in 0..n.x as usize {
                        let base = bmin + DVec3::new(i as f64 + 0.3, j as f64 + 0.6, 0.0) * step;
                        let line = Line::new(mesh, &grid, base.x, base.y, clearance, bounds.0, bounds.1);
                        for k in -3..n.z as i64 + 3 {
                            let p = DVec3::new(base.x, base.y, bmin.z + (k as f64 + 0.1) * step);
                            let alone = is_fluid_alone(mesh, &grid, p, clearance, bounds, open_sky);
                            assert_eq!(line.is_fluid(mesh, p, clearance, open_sky), alone, "{kind:?} at {p}");
                            fluid += usize::from(alone);
                            checked += 1;
                        }
                    }
                }
            }
            assert!(fluid > 100, "{kind:?}: {fluid} fluid of {checked}");
            solid += checked - fluid;
        }
        assert!(solid > 100, "{solid} points not fluid: both answers are tested");
    }
}
