//! The SPH simulator: `step()` runs Skorkovská et al.'s iteration as named stages, in order.

use std::time::{Duration, Instant};

use glam::DVec3;
use rayon::prelude::*;

use super::intersect::{FaceGrid, find_crossing};
use super::kernel::Kernel;
use super::mesh::{VertexFaces, closest_point};
use super::mirror::{Images, Mirror};
use super::neighbors::{NeighbourLists, ParticleGrid, REACH};
use super::params::Params;
use super::state::State;
use crate::error::{MeshError, ParamError, SimError};

/// The stages of one iteration, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Water enters at the emitters and leaves in the sinks.
    Inflow,
    /// Particles sorted into the neighbour grid; those outside the domain leave.
    Sort,
    /// The walls near each particle (faces within reach, merged by direction).
    Contacts,
    /// Pressure from density (Tait); every [`FILTER_EVERY`] iterations the densities are first
    /// re-averaged (Shepard).
    Pressure,
    /// Pressure, viscosity, gravity, walls and the penalty force of eq. 1; velocities advance.
    Forces,
    /// The density's rate of change from the new velocities (continuity equation).
    Continuity,
    /// Densities and positions advance.
    Advance,
    /// Shear stress at each contact: erosion or deposition (eqs. 2–4).
    ErodeDeposit,
    /// Vertices moved along their normals by the volume they owe (eqs. 5–7), then checked.
    MoveMesh,
}

/// Stages in an iteration.
pub const STAGES: usize = 9;

impl Stage {
    /// Every stage in order.
    pub const ALL: [Stage; STAGES] = [
        Stage::Inflow,
        Stage::Sort,
        Stage::Contacts,
        Stage::Pressure,
        Stage::Forces,
        Stage::Continuity,
        Stage::Advance,
        Stage::ErodeDeposit,
        Stage::MoveMesh,
    ];

    /// The stage's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Inflow => "inflow",
            Stage::Sort => "sort",
            Stage::Contacts => "contacts",
            Stage::Pressure => "pressure",
            Stage::Forces => "forces",
            Stage::Continuity => "continuity",
            Stage::Advance => "advance",
            Stage::ErodeDeposit => "erode_deposit",
            Stage::MoveMesh => "move_mesh",
        }
    }
}

/// What the parameters and the scene imply.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Derived {
    /// Smoothing length, metres.
    pub h: f64,
    /// Particle mass, kg (rest density on the starting lattice).
    pub mass: f64,
    /// Top speed the scene can reach, m/s: `√(v0² + 2·g·drop)`.
    pub top_speed_bound: f64,
    /// Speed of sound, m/s.
    pub sound_speed: f64,
    /// Time step, s.
    pub dt: f64,
    /// Largest step the CFL and viscous limits allow, s.
    pub dt_limit: f64,
    /// Penalty stiffness, 1/s².
    pub stiffness: f64,
    /// Penalty damping, 1/s.
    pub damping: f64,
    /// Particle radius (penalty and erosion reach), metres.
    pub contact: f64,
    /// Smallest face area accepted, m².
    pub min_area: f64,
    /// The fluid's domain: particles leaving it are taken out (booked as outflow), metres.
    pub domain: [[f64; 3]; 2],
}

/// What a run derives from its first state and keeps: the top speed the scene can reach (the
/// sound speed and time step follow from it) and the fluid's domain. A resumed run takes it from
/// its checkpoint.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    /// `√(v0² + 2·g·drop)` of the first state, m/s.
    pub top_speed_bound: f64,
    /// The domain particles may not leave, metres: the mesh and fluid's box grown by `4h`,
    /// with a quarter of its height of headroom.
    pub domain: [[f64; 3]; 2],
}

impl Frame {
    /// The frame of a run starting from `st` with `params`.
    pub fn of(params: &Params, st: &State) -> Self {
        let (mlo, mhi) = st.mesh.bounds();
        let (mut lo, mut hi) = (mlo, mhi);
        for &x in &st.positions {
            lo = lo.min(x);
            hi = hi.max(x);
        }
        // water that will enter starts at its emitter, at its speed
        let emitters = st.inflow.emitters.iter();
        let top_fluid = st
            .positions
            .iter()
            .map(|x| x.z)
            .chain(emitters.clone().map(|e| e.centre[2]))
            .fold(f64::NEG_INFINITY, f64::max);
        let v0 = st
            .velocities
            .iter()
            .map(|v| v.length())
            .chain(emitters.map(|e| DVec3::from(e.velocity).length()))
            .fold(0.0, f64::max);
        let drop = (top_fluid - mlo.z).max(0.0);
        let top_speed_bound = (v0 * v0 + 2.0 * params.gravity * drop).sqrt().max(1e-3);
        let h = params.smoothing_ratio * st.spacing;
        let margin = DVec3::splat(4.0 * h);
        let headroom = DVec3::new(0.0, 0.0, 0.25 * (hi.z - lo.z));
        Self { top_speed_bound, domain: [(lo - margin).to_array(), (hi + margin + headroom).to_array()] }
    }
}

/// Keeps the items of `v` whose `keep` is true, in order.
fn retain_kept<T>(v: &mut Vec<T>, keep: &[bool]) {
    let mut k = keep.iter();
    v.retain(|_| *k.next().unwrap_or(&true));
}

/// Runs the SPH model on a state: owns the neighbour grids, tables and scratch.
pub struct CpuSim {
    params: Params,
    derived: Derived,
    kernel: Kernel,
    grid: ParticleGrid,
    /// Each particle's neighbours this iteration (built by `sort`).
    neighbours: NeighbourLists,
    faces: FaceGrid,
    vertex_faces: VertexFaces,
    rates: Vec<f64>,
    contacts: Vec<Walls>,
    drift: f64,
    planes: Vec<(DVec3, f64)>,
    /// Where each emitter's layer of particles starts.
    emitter_points: Vec<Vec<DVec3>>,
    times: [Duration; STAGES],
}

/// How strongly a wall pushes: its share of the density's gradient times this.
/// Slack of the face grid beyond the kernel's support, smoothing lengths.
const GRID_SLACK: f64 = 0.5;

/// The faces binned for contacts: cells of `2h`, each face listed within `(2 + GRID_SLACK)·h`.
/// Each face's unit normal and offset (`n·x` on its plane).
fn face_planes(mesh: &super::mesh::TriMesh) -> Vec<(DVec3, f64)> {
    (0..mesh.faces.len())
        .into_par_iter()
        .with_min_len(1024)
        .map(|f| {
            let n = mesh.normal(f);
            (n, n.dot(mesh.positions[mesh.faces[f][0] as usize]))
        })
        .collect()
}

fn face_grid(mesh: &super::mesh::TriMesh, h: f64) -> FaceGrid {
    FaceGrid::build(mesh, 2.0 * h, (2.0 + GRID_SLACK) * h)
}

/// Walls a particle keeps track of (a corner has three).
const MAX_WALLS: usize = 4;

/// One wall near a particle.
#[derive(Clone, Copy, Debug, Default)]
pub struct Wall {
    /// The nearest face of it.
    pub face: u32,
    /// Signed distance from the wall, metres (negative: the particle has gone through).
    pub dist: f64,
    /// Unit direction from the wall to the particle.
    pub normal: DVec3,
}

/// The walls near a particle, at most `MAX_WALLS` (the nearest kept).
#[derive(Clone, Copy, Debug, Default)]
pub struct Walls {
    walls: [Wall; MAX_WALLS],
    count: u8,
}

impl Walls {
    /// The walls.
    pub fn iter(&self) -> impl Iterator<Item = &Wall> {
        self.walls[..self.count as usize].iter()
    }

    /// Adds `w`, or keeps the nearer of it and a wall facing about the same way.
    fn add(&mut self, w: Wall) {
        let n = self.count as usize;
        if let Some(same) = self.walls[..n].iter_mut().find(|o| o.normal.dot(w.normal) > 0.8) {
            if w.dist < same.dist {
                *same = w;
            }
            return;
        }
        if n < MAX_WALLS {
            self.walls[n] = w;
            self.count += 1;
        } else if let Some(far) = self.walls.iter_mut().max_by(|a, b| a.dist.total_cmp(&b.dist))
            && w.dist < far.dist
        {
            *far = w;
        }
    }
}

/// Smallest first moment of the kernel that renormalises the pressure gradient, as a share of
/// what the walls leave of it: the free surface and spray are renormalised at most this much.
const MIN_MOMENT: f64 = 0.5;

/// Iterations between two Shepard filters of the density.
pub const FILTER_EVERY: u64 = 30;

/// Cells the neighbour grid may have.
const MAX_GRID_CELLS: usize = 1 << 24;

impl CpuSim {
    /// A simulator for `st` with `params` (validated, with the limits the scene implies: a sound
    /// speed under 10x the top speed or a step over the CFL/viscous limit is refused).
    pub fn new(params: Params, st: &State) -> Result<Self, SimError> {
        let frame = Frame::of(&params, st);
        Self::with_frame(params, st, frame)
    }

    /// A simulator for `st` with what a run derived from its first state (a resumed run's
    /// checkpoint holds it, so it continues with the same step, sound speed and domain).
    pub fn with_frame(params: Params, st: &State, frame: Frame) -> Result<Self, SimError> {
        params.validate()?;
        let p = &params;
        let h = p.smoothing_ratio * st.spacing;
        let mut kernel = Kernel::new(h);
        // rest density on the lattice the fluid starts on
        let reach = (2.0 * p.smoothing_ratio).ceil() as i32 + 1;
        let mut lattice = 0.0;
        for k in -reach..=reach {
            for j in -reach..=reach {
                for i in -reach..=reach {
                    lattice += kernel.w(DVec3::new(f64::from(i), f64::from(j), f64::from(k)).length() * st.spacing);
                }
            }
        }
        let mass = p.rest_density / lattice;
        kernel.fit_wall(st.spacing, 1.0 / lattice);
        let top_speed_bound = frame.top_speed_bound;
        if !(top_speed_bound > 0.0 && top_speed_bound.is_finite()) {
            return Err(ParamError { name: "top_speed_bound", value: top_speed_bound, expected: "> 0 m/s" }.into());
        }
        let (lo, hi) = (DVec3::from_array(frame.domain[0]), DVec3::from_array(frame.domain[1]));
        let sound_speed = if p.sound_speed > 0.0 { p.sound_speed } else { 10.0 * top_speed_bound };
        if sound_speed < 10.0 * top_speed_bound * (1.0 - 1e-12) {
            return Err(ParamError {
                name: "sound_speed",
                value: sound_speed,
                expected: "at least 10x the top speed this scene can reach (see the report's top_speed_bound; 0 derives it)",
            }
            .into());
        }
        let cfl_dt = p.cfl * h / sound_speed;
        // artificial viscosity acts like ν = α·c·h/10; the explicit limit is 0.125·h²/ν
        let nu = p.viscosity * sound_speed * h / 10.0 + p.kinematic_viscosity;
        let viscous_dt = if nu > 0.0 { 0.125 * h * h / nu } else { f64::INFINITY };
        let dt_limit = cfl_dt.min(viscous_dt);
        let dt = if p.dt > 0.0 { p.dt } else { dt_limit };
        if dt > dt_limit * (1.0 + 1e-12) {
            return Err(ParamError {
                name: "dt",
                value: dt,
                expected: "at most the CFL and viscous limit (0 derives it)",
            }
            .into());
        }
        let stiffness = if p.penalty_stiffness > 0.0 { p.penalty_stiffness } else { (0.2 / dt).powi(2) };
        let damping = if p.penalty_damping > 0.0 { p.penalty_damping } else { 0.4 / dt };
        if stiffness.sqrt() * dt > 0.5 {
            return Err(
                ParamError { name: "penalty_stiffness", value: stiffness, expected: "at most (0.5/dt)²" }.into()
            );
        }
        if damping * dt > 1.0 {
            return Err(ParamError { name: "penalty_damping", value: damping, expected: "at most 1/dt" }.into());
        }
        let grid = ParticleGrid::new(lo, hi, 2.0 * h / REACH as f64, MAX_GRID_CELLS).ok_or(ParamError {
            name: "smoothing_ratio",
            value: p.smoothing_ratio,
            expected: "a kernel not so small against the scene (the neighbour grid would exceed 16M cells)",
        })?;
        let emitter_points: Vec<Vec<DVec3>> = st.inflow.emitters.iter().map(|e| e.points(st.spacing)).collect();
        if let Some(&x) = emitter_points.iter().flatten().find(|x| (0..3).any(|k| x[k] < lo[k] || x[k] > hi[k])) {
            return Err(ParamError {
                name: "emitter centre",
                value: x.x,
                expected: "an opening inside the run's domain (the box of the mesh and the starting fluid)",
            }
            .into());
        }
        let contact = p.contact_ratio * st.spacing;
        let faces = face_grid(&st.mesh, h);
        let mean_area = st.mesh.surface_area() / st.mesh.faces.len().max(1) as f64;
        let derived = Derived {
            h,
            mass,
            top_speed_bound,
            sound_speed,
            dt,
            dt_limit,
            stiffness,
            damping,
            contact,
            min_area: p.min_area_ratio * mean_area,
            domain: [lo.to_array(), hi.to_array()],
        };
        Ok(Self {
            params,
            derived,
            kernel,
            grid,
            neighbours: NeighbourLists::default(),
            faces,
            vertex_faces: st.mesh.vertex_faces(),
            rates: Vec::new(),
            contacts: Vec::new(),
            drift: 0.0,
            planes: Vec::new(),
            emitter_points,
            times: [Duration::ZERO; STAGES],
        })
    }

    /// What this simulator derived from the run's first state (for checkpoints).
    pub fn frame(&self) -> Frame {
        Frame { top_speed_bound: self.derived.top_speed_bound, domain: self.derived.domain }
    }

    /// Sets each particle's density to what a fluid at rest needs at its depth below the
    /// highest particle (plus half a spacing), so a still fluid starts still instead of first
    /// settling under its own weight. For fluid that starts as one body of water.
    pub fn start_hydrostatic(&self, st: &mut State) {
        let top = st.positions.iter().map(|x| x.z).fold(f64::NEG_INFINITY, f64::max) + 0.5 * st.spacing;
        let (rho0, gamma) = (self.params.rest_density, self.params.tait_exponent);
        let b = rho0 * self.derived.sound_speed.powi(2) / gamma;
        for (r, x) in st.density.iter_mut().zip(&st.positions) {
            let p = rho0 * self.params.gravity * (top - x.z).max(0.0);
            *r = rho0 * (1.0 + p / b).powf(1.0 / gamma);
        }
    }

    /// Lets the fluid settle without eroding: `iterations` steps whose velocities are scaled by
    /// `1 − damping` (0..1) after each. A lattice of particles is not how SPH packs them at rest;
    /// this trades the energy of the repacking for a still start. Time and iterations do not
    /// count; the mesh does not move.
    pub fn settle(&mut self, st: &mut State, iterations: u32, damping: f64) {
        let keep = 1.0 - damping.clamp(0.0, 1.0);
        for _ in 0..iterations {
            self.sort(st);
            self.contacts(st);
            self.pressure(st);
            self.forces(st);
            for v in &mut st.velocities {
                *v *= keep;
            }
            self.continuity(st);
            self.advance(st);
        }
    }

    /// What the parameters and scene imply.
    pub fn derived(&self) -> &Derived {
        &self.derived
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Time spent in each stage so far, in [`Stage::ALL`]'s order.
    pub fn stage_times(&self) -> [Duration; STAGES] {
        self.times
    }

    /// One iteration of Skorkovská et al.'s model: the stages of [`Stage::ALL`] in order. If the mesh would become
    /// inconsistent, the move is undone (the state keeps the last consistent mesh, the volume
    /// stays pending) and the error names the iteration and the faces.
    pub fn step(&mut self, st: &mut State) -> Result<(), SimError> {
        let mut t = Instant::now();
        let mut lap = |times: &mut [Duration; STAGES], stage: Stage| {
            let now = Instant::now();
            times[stage as usize] += now - t;
            t = now;
        };
        self.inflow(st);
        lap(&mut self.times, Stage::Inflow);
        self.sort(st);
        lap(&mut self.times, Stage::Sort);
        self.contacts(st);
        lap(&mut self.times, Stage::Contacts);
        self.pressure(st);
        lap(&mut self.times, Stage::Pressure);
        self.forces(st);
        lap(&mut self.times, Stage::Forces);
        self.continuity(st);
        lap(&mut self.times, Stage::Continuity);
        self.advance(st);
        lap(&mut self.times, Stage::Advance);
        self.erode_deposit(st);
        lap(&mut self.times, Stage::ErodeDeposit);
        let moved = self.move_mesh(st);
        lap(&mut self.times, Stage::MoveMesh);
        st.iteration += 1;
        st.time += self.derived.dt;
        let fastest = st.velocities.iter().map(|v| v.length_squared()).fold(0.0, f64::max).sqrt();
        st.top_speed = st.top_speed.max(fastest);
        moved.map_err(|source| SimError::MeshInconsistent { iteration: st.iteration, source })
    }

    /// Particles in a sink leave with their sediment; then each emitter lets in the layers its
    /// rate owes this step (while the cap allows), each moved on by the time since it was due.
    fn inflow(&mut self, st: &mut State) {
        if !st.inflow.sinks.is_empty() {
            let sinks = std::mem::take(&mut st.inflow.sinks);
            let keep: Vec<bool> = st.positions.iter().map(|&x| !sinks.iter().any(|s| s.contains(x))).collect();
            st.inflow.sinks = sinks;
            if keep.contains(&false) {
                for (i, _) in keep.iter().enumerate().filter(|(_, k)| !**k) {
                    st.books.outflow += st.sediment[i];
                    st.books.particles_lost += 1;
                }
                retain_kept(&mut st.positions, &keep);
                retain_kept(&mut st.velocities, &keep);
                retain_kept(&mut st.sediment, &keep);
                retain_kept(&mut st.density, &keep);
                retain_kept(&mut st.pressure, &keep);
                retain_kept(&mut st.ids, &keep);
            }
        }
        let (dt, rho0) = (self.derived.dt, self.params.rest_density);
        let cap = st.inflow.cap(st.start_particles);
        let particle_volume = st.spacing.powi(3);
        for (k, e) in st.inflow.emitters.iter().enumerate() {
            let points = &self.emitter_points[k];
            let layer = points.len() as f64 * particle_volume;
            let rate = e.rate_at(st.spacing);
            let v = DVec3::from(e.velocity);
            st.owed[k] += rate * dt;
            while st.owed[k] >= layer {
                if st.positions.len() + points.len() > cap {
                    // the cap holds the water back: what is owed beyond one layer is not let in
                    st.books.inflow_held += st.owed[k] - layer;
                    st.owed[k] = layer;
                    break;
                }
                st.owed[k] -= layer;
                // the layer was due `owed / rate` seconds ago (< dt) and has moved on since
                let since = st.owed[k] / rate;
                for &x in points {
                    st.positions.push(x + v * since);
                    st.velocities.push(v);
                    st.sediment.push(0.0);
                    st.density.push(rho0);
                    st.pressure.push(0.0);
                    st.ids.push((st.start_particles as u64 + st.books.particles_emitted) as u32);
                    st.books.particles_emitted += 1;
                }
                st.books.inflow += layer;
            }
        }
    }

    /// Sorts particles by neighbour cell; those outside the domain leave with their sediment.
    fn sort(&mut self, st: &mut State) {
        let order = self.grid.sort(&st.positions);
        if order.len() < st.positions.len() {
            let mut kept = vec![false; st.positions.len()];
            for &i in &order {
                kept[i as usize] = true;
            }
            for (i, k) in kept.iter().enumerate() {
                if !k {
                    st.books.outflow += st.sediment[i];
                    st.books.particles_lost += 1;
                }
            }
        }
        let permute = |v: &mut Vec<DVec3>| *v = order.iter().map(|&i| v[i as usize]).collect();
        permute(&mut st.positions);
        permute(&mut st.velocities);
        st.sediment = order.iter().map(|&i| st.sediment[i as usize]).collect();
        st.ids = order.iter().map(|&i| st.ids[i as usize]).collect();
        st.density = order.iter().map(|&i| st.density[i as usize]).collect();
        st.pressure = order.iter().map(|&i| st.pressure[i as usize]).collect();
        self.neighbours.rebuild(&self.grid, &st.positions, 2.0 * self.derived.h);
    }

    /// The walls near each particle ([`Walls`]), found once per iteration.
    fn contacts(&mut self, st: &State) {
        self.planes = face_planes(&st.mesh);
        let this = &*self;
        let contacts: Vec<Walls> = st.positions.par_iter().with_min_len(256).map(|&x| this.walls_at(st, x)).collect();
        self.contacts = contacts;
    }

    /// The walls near `x`: each face whose plane's foot point lies inside it, within
    /// `(−contact, 2h)`, gives its distance and normal; faces whose normals differ by less than
    /// ~37° are one wall (the nearest), so a curved or finely meshed surface counts once and a
    /// corner twice. Then the edges and corners of faces near `x` that lie on none of those
    /// walls' planes (a convex ridge) add walls pointing from them to `x`.
    fn walls_at(&self, st: &State, x: DVec3) -> Walls {
        let support = 2.0 * self.derived.h;
        let contact = self.derived.contact;
        let mut walls = Walls::default();
        // (face, distance, closest point) of edge and corner candidates, the nearest kept
        let mut edges = [(0u32, 0.0f64, DVec3::ZERO); 8];
        let mut n_edges = 0;
        // a foot point this close to a face (squared, m²) lies on it
        let on_face = 1e-9 * support * support;
        for &face in self.faces.near(x) {
            let (n_face, offset) = self.planes[face as usize];
            let plane = n_face.dot(x) - offset;
            if plane <= -contact || plane >= support {
                continue;
            }
            let [a, b, c] = st.mesh.corners(face as usize);
            let (q, inside) = closest_point(x, a, b, c);
            let v = x - q;
            let len2 = v.length_squared();
            // a foot point on the edge two faces share is on both (closest_point calls it
            // inside neither), so a particle over a flat wall's seam sees the wall, not its edges
            if inside || len2 - plane * plane <= on_face {
                walls.add(Wall { face, dist: plane, normal: n_face });
                continue;
            }
            let len = len2.sqrt();
            // beside an edge or corner, only from the fluid side
            if len < 1e-12 || len >= support || v.dot(n_face) <= 0.0 {
                continue;
            }
            let slot = if n_edges < edges.len() {
                n_edges += 1;
                n_edges - 1
            } else {
                match (0..edges.len()).max_by(|&i, &j| edges[i].1.total_cmp(&edges[j].1)) {
                    Some(far) if edges[far].1 > len => far,
                    _ => continue,
                }
            };
            edges[slot] = (face, len, q);
        }
        let planes = walls;
        for &(face, dist, q) in &edges[..n_edges] {
            let covered = planes.iter().any(|w| (w.normal.dot(x - q) - w.dist).abs() < 1e-6 * support);
            if !covered {
                walls.add(Wall { face, dist, normal: (x - q) / dist });
            }
        }
        walls
    }

    /// The walls [`CpuSim::step`] finds near `x` on `st`'s mesh: (face, distance m, unit normal
    /// from the wall to `x`). For tests and tools.
    #[doc(hidden)]
    pub fn walls_near(&mut self, st: &State, x: DVec3) -> Vec<(u32, f64, DVec3)> {
        self.planes = face_planes(&st.mesh);
        self.walls_at(st, x).iter().map(|w| (w.face, w.dist, w.normal)).collect()
    }

    /// `γ = Π (1 − beyond(d))` over the walls near `x` (the share of the kernel left to the
    /// fluid, walls taken as independent) and its gradient `∇γ` (1/m, pointing away from them).
    #[inline]
    fn wall_share(&self, walls: &Walls) -> (f64, DVec3) {
        let found: Vec<(f64, f64, DVec3)> =
            walls.iter().map(|w| (self.kernel.beyond(w.dist), -self.kernel.beyond_slope(w.dist), w.normal)).collect();
        let gamma: f64 = found.iter().map(|w| 1.0 - w.0).product();
        let mut grad = DVec3::ZERO;
        for (k, &(_, slope, n)) in found.iter().enumerate() {
            let others: f64 = found.iter().enumerate().filter(|&(l, _)| l != k).map(|(_, w)| 1.0 - w.0).product();
            grad += n * (slope * others);
        }
        (gamma, grad)
    }

    /// The images of the fluid around particle `i` at `x` (none unless `mirror_walls`).
    fn images(&self, i: usize, x: DVec3) -> Images {
        if self.params.mirror_walls == 0.0 {
            return Images::default();
        }
        let mut mirrors = [Mirror::default(); MAX_WALLS];
        let mut n = 0;
        for w in self.contacts[i].iter() {
            mirrors[n] = Mirror::new(w.normal, x, w.dist);
            n += 1;
        }
        Images::of(&mirrors[..n])
    }

    /// Calls `f(x − x_j, |x − x_j|², v_j, p_j, ρ_j)` for every neighbour `j` of particle `i`
    /// (at `x`) within the kernel's reach, and then for every image of a particle within reach
    /// of `x`. An image's pressure is its particle's plus the hydrostatic difference of their
    /// depths (`ρ0·g·Δz`), its density likewise (`Δp/c²`), so a still column's images continue
    /// it. A particle whose image is within reach of `x` is itself within reach (it is on the
    /// fluid side of every mirror, as `x` is), so the neighbours' scan finds every image.
    fn for_pairs(
        &self,
        i: usize,
        x: DVec3,
        images: &Images,
        st: &State,
        mut f: impl FnMut(DVec3, f64, DVec3, f64, f64),
    ) {
        let support2 = (2.0 * self.derived.h).powi(2);
        let (rho0, g, c) = (self.params.rest_density, self.params.gravity, self.derived.sound_speed);
        let (pos, vel, pr, rho) = (&st.positions, &st.velocities, &st.pressure, &st.density);
        for &j in self.neighbours.of(i) {
            let j = j as usize;
            let xij = x - pos[j];
            let r2 = xij.length_squared();
            if j != i {
                f(xij, r2, vel[j], pr[j], rho[j]);
            }
            for image in images.iter() {
                if let Some(xij) = image.near(x, pos[j], r2, support2) {
                    // the image is x − xij
                    let dp = rho0 * g * (pos[j].z - (x.z - xij.z));
                    f(xij, xij.length_squared(), image.vector(vel[j]), (pr[j] + dp).max(0.0), rho[j] + dp / (c * c));
                }
            }
        }
    }

    /// Pressure from density (Tait, clamped at 0 so nothing pulls). New particles start at rest
    /// density; every [`FILTER_EVERY`] iterations the densities are first replaced by their
    /// Shepard average (`Σ m·W / Σ (m/ρ)·W`), which keeps the continuity equation from drifting.
    fn pressure(&mut self, st: &mut State) {
        let rho0 = self.params.rest_density;
        for r in &mut st.density {
            if *r <= 0.0 {
                *r = rho0;
            }
        }
        if st.iteration % FILTER_EVERY == FILTER_EVERY - 1 {
            let m = self.derived.mass;
            let (pos, rho) = (&st.positions, &st.density);
            let state = &*st;
            let this = &*self;
            let filtered: Vec<f64> = (0..pos.len())
                .into_par_iter()
                .with_min_len(256)
                .map(|i| {
                    // the particle itself, then its neighbours and images
                    let w0 = this.kernel.w(0.0);
                    let (mut num, mut den) = (m * w0, m / rho[i] * w0);
                    this.for_pairs(i, pos[i], &this.images(i, pos[i]), state, |_, r2, _, _, rho_j| {
                        let w = this.kernel.w(r2.sqrt());
                        num += m * w;
                        den += m / rho_j * w;
                    });
                    num / den
                })
                .collect();
            st.density = filtered;
        }
        let gamma = self.params.tait_exponent;
        let b = rho0 * self.derived.sound_speed.powi(2) / gamma;
        for (p, r) in st.pressure.iter_mut().zip(&st.density) {
            *p = (b * ((r / rho0).powf(gamma) - 1.0)).max(0.0);
        }
    }

    /// `dρ/dt = Σ m·(v_i − v_j)·∇W` with the velocities just advanced (so density and velocity
    /// update as a symplectic pair), plus each wall's mirror image approaching at twice the
    /// normal speed.
    fn continuity(&mut self, st: &mut State) {
        let (m, rho0) = (self.derived.mass, self.params.rest_density);
        let this = &*self;
        let (pos, vel, rho) = (&st.positions, &st.velocities, &st.density);
        // δ-SPH: `2·δ·h·c·Σ (ρ_ij − ρ_ij^H)·(x_ij·∇W)/r²·m/ρ_j`, with the hydrostatic difference
        // `ρ_ij^H = ρ0·g·(z_j − z_i)/c²` taken out (Fourtakas et al. 2019's, to first order: the
        // second is ~1e-4 of it over a kernel's reach)
        let c = self.derived.sound_speed;
        let diffusion = 2.0 * self.params.density_diffusion * self.derived.h * c;
        let head = rho0 * self.params.gravity / (c * c);
        let mirrored = self.params.mirror_walls != 0.0;
        let state = &*st;
        let rates: Vec<f64> = (0..pos.len())
            .into_par_iter()
            .with_min_len(256)
            .map(|i| {
                let (x, v) = (pos[i], vel[i]);
                let mut rate = DVec3::ZERO;
                let mut diffused = 0.0;
                let pair = |xij: DVec3, r2: f64, vj: DVec3, _: f64, rho_j: f64| {
                    let grad = this.kernel.grad(xij, r2.sqrt());
                    rate += (v - vj) * grad * m;
                    if diffusion > 0.0 {
                        // z_j − z_i = −xij.z
                        let hydrostatic = -head * xij.z;
                        diffused += (rho[i] - rho_j - hydrostatic) * xij.dot(grad) / r2 * (m / rho_j);
                    }
                };
                this.for_pairs(i, x, &this.images(i, x), state, pair);
                if !mirrored {
                    // the wall's mirror image approaches at twice the normal speed
                    let (_, grad_gamma) = this.wall_share(&this.contacts[i]);
                    rate -= grad_gamma * v * (2.0 * rho0);
                }
                rate.element_sum() + diffusion * diffused
            })
            .collect();
        self.rates = rates;
    }

    fn forces(&mut self, st: &mut State) {
        let d = &self.derived;
        let (m, rho0, g) = (d.mass, self.params.rest_density, self.params.gravity);
        let (alpha, c, h) = (self.params.viscosity, d.sound_speed, d.h);
        let nu4 = 4.0 * self.params.kinematic_viscosity;
        let wall_nu4 = 4.0 * self.params.wall_friction * (alpha * c * h / 10.0 + self.params.kinematic_viscosity);
        let (ks, kd, contact) = (d.stiffness, d.damping, d.contact);
        let this = &*self;
        let (pos, vel, rho, pr) = (&st.positions, &st.velocities, &st.density, &st.pressure);
        let dt = d.dt;
        let mirrored = self.params.mirror_walls != 0.0;
        let state = &*st;
        let velocities: Vec<DVec3> = (0..pos.len())
            .into_par_iter()
            .with_min_len(256)
            .map(|i| {
                let (x, v) = (pos[i], vel[i]);
                let pi = pr[i] / (rho[i] * rho[i]);
                // walls first: γ, the share of the kernel they leave to the fluid (a product,
                // so two walls at a corner do not both take the quadrant beyond them), their
                // pressure push, and the penalty of eq. 1
                let mut wall = DVec3::ZERO;
                // the floor of the renormalisation: MIN_MOMENT of what the walls leave (it is
                // for the free surface and spray; a wall's cut is always renormalised)
                let mut left = DVec3::ONE;
                if !mirrored {
                    let (_, grad_gamma) = this.wall_share(&this.contacts[i]);
                    wall += grad_gamma * (2.0 * pi * rho0);
                    for w in this.contacts[i].iter() {
                        let (normal, along) = this.kernel.beyond_moment(w.dist);
                        let n2 = w.normal * w.normal;
                        left *= DVec3::ONE - (n2 * normal + (DVec3::ONE - n2) * along);
                    }
                }
                let floor = left * MIN_MOMENT;
                let mut moment = DVec3::ZERO;
                // no-slip walls: the viscous pair term over the fluid a wall stands in for,
                // moving against the particle along the wall (the normal part is the penalty's)
                for w in this.contacts[i].iter() {
                    let along = v - w.normal * v.dot(w.normal);
                    wall += along * (wall_nu4 * this.kernel.beyond_friction(w.dist));
                }
                for w in this.contacts[i].iter().filter(|w| w.dist < contact) {
                    // eq. 1: penalty against the penetration, damping the normal velocity
                    wall += w.normal * (ks * (contact - w.dist) - kd * v.dot(w.normal));
                }
                // the neighbours' pressures (the gradient estimate), the particle's own
                // (which the walls' term closes) and viscosity, kept apart
                let (mut gradient, mut grad_sum, mut viscous) = (DVec3::ZERO, DVec3::ZERO, DVec3::ZERO);
                // (two divisions a pair: 1/ρ_j, and 1/((ρ_i + ρ_j)·(r² + 0.01h²)) that both
                // viscosities share)
                let pair = |xij: DVec3, r2: f64, vj: DVec3, p_j: f64, rho_j: f64| {
                    let grad = this.kernel.grad(xij, r2.sqrt());
                    let inv_rho = 1.0 / rho_j;
                    let volume = m * inv_rho;
                    moment -= xij * grad * volume;
                    gradient -= grad * (volume * p_j * inv_rho);
                    grad_sum += grad;
                    let vij = v - vj;
                    let inv = 1.0 / ((rho[i] + rho_j) * (r2 + 0.01 * h * h));
                    let vx = vij.dot(xij);
                    if vx < 0.0 {
                        // Monaghan: μ = h·v·x/(r² + 0.01h²) over the mean density
                        viscous += grad * (2.0 * m * alpha * c * h * vx * inv);
                    }
                    // laminar viscosity (Lo & Shao): damps shear too
                    viscous += vij * (m * nu4 * xij.dot(grad) * inv);
                };
                this.for_pairs(i, x, &this.images(i, x), state, pair);
                let own = grad_sum * (-m * pi);
                // the gradient estimate renormalised per axis by the kernel's first moment along
                // it (1 inside the fluid, less where a wall or the surface cuts the kernel): a
                // linear pressure field gives its exact gradient, so particles along walls and
                // in corners are held up as well as any; spray (few neighbours, low pressure)
                // is left alone
                let a = DVec3::new(0.0, 0.0, -g) + gradient / moment.max(floor) + own + wall + viscous;
                v + a * dt
            })
            .collect();
        st.velocities = velocities;
    }

    fn advance(&mut self, st: &mut State) {
        let dt = self.derived.dt;
        for ((x, v), (r, drho)) in
            st.positions.iter_mut().zip(&st.velocities).zip(st.density.iter_mut().zip(&self.rates))
        {
            *r += drho * dt;
            *x += *v * dt;
        }
    }

    /// Eqs. 2–4 at every contact: each particle's changes in its faces' order; the volumes are
    /// then added to the vertices in particle order (the same bits for any thread count).
    fn erode_deposit(&mut self, st: &mut State) {
        let p = &self.params;
        let (dt, contact) = (self.derived.dt, self.derived.contact);
        // the morphological factor: each fluid step moves the surface as F steps would
        let area = st.spacing * st.spacing * p.morphological_factor;
        let this = &*self;
        let (pos, vel, sed) = (&st.positions, &st.velocities, &st.sediment);
        let events: Vec<(f64, Vec<(u32, f64)>)> = (0..pos.len())
            .into_par_iter()
            .with_min_len(256)
            .map(|i| {
                let v = vel[i];
                let mut carried = sed[i];
                let mut list = Vec::new();
                for &Wall { face, dist: d, normal: n } in this.contacts[i].iter() {
                    if d >= contact {
                        continue;
                    }
                    let v_rel = (v - n * v.dot(n)).length();
                    let theta = v_rel / d.max(0.1 * contact); // eq. 4
                    let tau = p.shear_constant * theta.powf(p.shear_exponent); // eq. 3
                    if tau > p.critical_shear {
                        let volume = p.erosion_rate * (tau - p.critical_shear).powf(p.rate_exponent) * dt * area; // eq. 2
                        carried += volume;
                        list.push((face, -volume));
                    } else if carried > 0.0 {
                        let rate = p.erosion_rate * (p.critical_shear - tau).powf(p.rate_exponent);
                        let volume = (rate * dt * area).min(carried);
                        carried -= volume;
                        list.push((face, volume));
                    }
                }
                (carried, list)
            })
            .collect();
        for (i, (carried, list)) in events.into_iter().enumerate() {
            st.sediment[i] = carried;
            for (face, volume) in list {
                if volume < 0.0 {
                    st.books.eroded -= volume;
                } else {
                    st.books.deposited += volume;
                }
                for &v in &st.mesh.faces[face as usize] {
                    let v = v as usize;
                    st.pending[v] += volume / 3.0;
                    if volume < 0.0 {
                        st.eroded[v] -= volume / 3.0;
                    } else {
                        st.deposited[v] += volume / 3.0;
                    }
                }
            }
        }
    }

    /// Eqs. 5–7, one vertex after the other in index order: vertex `v` moves along its normal by
    /// `s/V`, `V = |Σ (b−v)×(c−v)|/6` over its faces with the neighbours as already moved, so
    /// the enclosed volume changes by exactly `s` (at most `max_move` per iteration; the rest
    /// stays pending). Then the faces around moved vertices are checked; on a problem every move
    /// of this iteration is undone.
    fn move_mesh(&mut self, st: &mut State) -> Result<(), MeshError> {
        let max_move = self.params.max_move * st.spacing;
        let mut moved: f64 = 0.0;
        let mut undo: Vec<(u32, DVec3, f64)> = Vec::new();
        for v in 0..st.pending.len() {
            let s = st.pending[v];
            if s == 0.0 {
                continue;
            }
            let x = st.mesh.positions[v];
            let mut sum = DVec3::ZERO;
            for &f in self.vertex_faces.of(v) {
                let [a, b, c] = st.mesh.faces[f as usize];
                let (p, q) = if a as usize == v {
                    (b, c)
                } else if b as usize == v {
                    (c, a)
                } else {
                    (a, b)
                };
                sum += (st.mesh.positions[p as usize] - x).cross(st.mesh.positions[q as usize] - x);
            }
            let unit_volume = sum.length() / 6.0; // eqs. 5–6
            if unit_volume.is_nan() || unit_volume <= 0.0 {
                continue;
            }
            let normal = sum / sum.length();
            let shift = (s / unit_volume).clamp(-max_move, max_move); // eq. 7
            undo.push((v as u32, x, s));
            st.mesh.positions[v] = x + normal * shift;
            st.pending[v] = if shift.abs() < max_move { 0.0 } else { s - shift * unit_volume };
            moved = moved.max(shift.abs());
        }
        if undo.is_empty() {
            return Ok(());
        }
        let found = self.check_moved(st, &undo);
        if found.is_err() {
            for &(v, x, s) in undo.iter().rev() {
                st.mesh.positions[v as usize] = x;
                st.pending[v as usize] = s;
            }
            return found;
        }
        // the face grid lists faces within 2h + GRID_SLACK·h: rebuilt once the surface may have
        // moved by the slack since it was built
        self.drift += moved;
        if self.drift > GRID_SLACK * self.derived.h {
            self.faces = face_grid(&st.mesh, self.derived.h);
            self.drift = 0.0;
        }
        Ok(())
    }

    /// Faces around the moved vertices: not below the smallest area, not turned over, not
    /// crossing another face.
    fn check_moved(&self, st: &State, undo: &[(u32, DVec3, f64)]) -> Result<(), MeshError> {
        let mut seen = vec![false; st.mesh.faces.len()];
        let mut faces = Vec::new();
        for &(v, _, _) in undo {
            for &f in self.vertex_faces.of(v as usize) {
                if !std::mem::replace(&mut seen[f as usize], true) {
                    faces.push(f);
                }
            }
        }
        faces.sort_unstable();
        // positions before this iteration's moves, for the turn-over test
        let mut before = std::collections::HashMap::with_capacity(undo.len());
        for &(v, x, _) in undo {
            before.insert(v, x);
        }
        for &f in &faces {
            let f = f as usize;
            let now = st.mesh.area_vector2(f);
            if 0.5 * now.length() < self.derived.min_area {
                return Err(MeshError::Degenerate {
                    face: f,
                    area: 0.5 * now.length(),
                    min_area: self.derived.min_area,
                });
            }
            let [a, b, c] = st.mesh.faces[f].map(|v| before.get(&v).copied().unwrap_or(st.mesh.positions[v as usize]));
            if now.dot((b - a).cross(c - a)) <= 0.0 {
                return Err(MeshError::Flipped { face: f });
            }
        }
        // the contact grid lists every face near the moved ones (they moved far less than its
        // slack since it was built)
        match find_crossing(&st.mesh, &self.faces, Some(&faces)) {
            Some((face_a, face_b)) => Err(MeshError::SelfIntersection { face_a, face_b }),
            None => Ok(()),
        }
    }
}
