//! A heightmap run as a hydraulic scale model (Froude similarity, vertically distorted where
//! flat; Heller 2011). SPH water on a 25 km mountain at real size would
//! fall at ~200 m/s, its particles would be tens of metres across and the shear rate that erodes
//! (eq. 3's θ, 1/s) would stay below any threshold that suits the built-in scenes. So, as a
//! hydraulics laboratory does, the terrain is built at model size: its longest side
//! [`MODEL_EXTENT`] metres across, heights by the same factor (Froude similarity: speeds scale
//! with the root of lengths), exaggerated vertically where the terrain is too flat to drain at
//! that size (up to [`MAX_EXAGGERATION`]x, as river models are distorted). The water starts as a
//! sheet on the terrain and runs off into its valleys; the parameters are the lake scene's. What
//! a run writes is scaled back to the terrain's metres ([`ModelScale`]).

use glam::DVec3;

use super::build::{HeightmapMesh, Refine};
use super::inflow::{Inflow, Sink};
use super::params::Params;
use super::scenes::Scene;
use super::state::FluidBlock;
use crate::error::TerrainError;
use crate::grid::{CellSize, Grid, Heightmap};

/// The model's longest horizontal side, metres (the lake scene's).
pub const MODEL_EXTENT: f64 = 4.0;
/// The least relief of the model, metres: flatter terrain is exaggerated vertically to it. A
/// flatter model's sheet of water is deep against its relief, and its front runs as a dam
/// break's (`2·√(g·h)`, Ritter 1892), past the speed bound the sound speed is set for.
pub const MODEL_RELIEF: f64 = 1.0;
/// The largest vertical exaggeration (the 1 km DEM in `testdata/`, 406 m of relief over 83 km,
/// takes it).
pub const MAX_EXAGGERATION: f64 = 50.0;
/// Layers of particles in the starting sheet of water.
pub const SHEET_LAYERS: f64 = 3.0;

/// How a terrain's metres map to its scale model's, and back.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct ModelScale {
    /// Model metres per terrain metre across (x, y).
    pub horizontal: f64,
    /// Model metres per terrain metre up (z): `horizontal` times the exaggeration.
    pub vertical: f64,
    /// The terrain's height at the model's z = 0 (its lowest valid height), metres.
    pub base: f64,
}

impl ModelScale {
    /// The scale of `map`'s model: the longest side [`MODEL_EXTENT`] across, the relief at least
    /// [`MODEL_RELIEF`] (exaggerated at most [`MAX_EXAGGERATION`]x).
    pub fn of(map: &Heightmap) -> Self {
        let h = &map.heights;
        let cell = h.cell_size();
        let extent = ((h.width() - 1) as f64 * cell.x).max((h.height() - 1) as f64 * cell.y);
        let stats = map.stats();
        let relief = f64::from(stats.max - stats.min);
        let horizontal = MODEL_EXTENT / extent;
        let exaggeration =
            if relief > 0.0 { (MODEL_RELIEF / (relief * horizontal)).clamp(1.0, MAX_EXAGGERATION) } else { 1.0 };
        Self { horizontal, vertical: horizontal * exaggeration, base: f64::from(stats.min) }
    }

    /// Vertical over horizontal scale (1: undistorted).
    pub fn exaggeration(&self) -> f64 {
        self.vertical / self.horizontal
    }

    /// A model point in the terrain's metres.
    pub fn to_terrain(&self, p: DVec3) -> DVec3 {
        DVec3::new(p.x / self.horizontal, p.y / self.horizontal, p.z / self.vertical + self.base)
    }

    /// A model volume (m³) in the terrain's cubic metres.
    pub fn volume_to_terrain(&self, v: f64) -> f64 {
        v / (self.horizontal * self.horizontal * self.vertical)
    }

    /// A model velocity (m/s) at the terrain's size: horizontal speeds go with the root of
    /// the vertical scale (Froude), vertical ones with it times the exaggeration.
    pub fn velocity_to_terrain(&self, v: DVec3) -> DVec3 {
        let root = self.vertical.sqrt();
        DVec3::new(v.x / root, v.y / root, v.z / root * self.horizontal / self.vertical)
    }

    /// A model duration (s) at the terrain's size: lengths over Froude speeds,
    /// `t·√vertical / horizontal`.
    pub fn seconds_to_terrain(&self, t: f64) -> f64 {
        t * self.vertical.sqrt() / self.horizontal
    }

    /// The model's heightmap: cells and heights scaled, the lowest valid height at z = 0.
    pub fn model(&self, map: &Heightmap) -> Result<Grid<f32>, TerrainError> {
        let h = &map.heights;
        let cell = h.cell_size();
        let size = CellSize { x: cell.x * self.horizontal, y: cell.y * self.horizontal };
        let w = h.width();
        let z = h.as_slice();
        Grid::from_fn(w, h.height(), size, |r, c| ((f64::from(z[r * w + c]) - self.base) * self.vertical) as f32)
            .map_err(TerrainError::from)
    }
}

/// A heightmap's scale model with about `faces` faces and `particles` particles in a sheet
/// [`SHEET_LAYERS`] deep over its upper half, the lake scene's parameters, and the scale. Nodata
/// cells become shafts through the solid (water reaching one leaves the domain, booked).
pub fn heightmap_scene(map: &Heightmap, particles: usize, faces: usize) -> Result<(Scene, ModelScale), TerrainError> {
    let h = &map.heights;
    if h.width() < 2 || h.height() < 2 {
        let cells = h.width().min(h.height()) as f64;
        return Err(TerrainError::Parameter { name: "width", value: cells, expected: "at least 2 x 2 cells" });
    }
    if !(64..=5_000_000).contains(&particles) {
        let expected = "64 to 5,000,000";
        return Err(TerrainError::Parameter { name: "particles", value: particles as f64, expected });
    }
    let scale = ModelScale::of(map);
    let terrain = scale.model(map)?;
    let cell = terrain.cell_size();
    let (width, height) = ((h.width() - 1) as f64 * cell.x, (h.height() - 1) as f64 * cell.y);
    let aspect = width / height;
    let rows = ((faces as f64 / (2.0 * aspect)).sqrt().round() as usize).clamp(1, h.height() - 1);
    let columns = ((rows as f64 * aspect).round() as usize).clamp(1, h.width() - 1);
    let stats = map.stats();
    let relief = f64::from(stats.max - stats.min) * scale.vertical;
    let base_depth = (0.05 * relief).max(cell.x.max(cell.y)).max(0.01);
    let spec = HeightmapMesh { columns, rows, levels: 0, refine: Refine::None, base_depth };
    let mesh = spec.build_with_holes(&terrain, map.nodata_mask())?;
    // the sheet: every lattice point at most SHEET_LAYERS spacings over the terrain's upper half
    // (above its median height), a spacing in from the edges: rain on the high ground, which
    // gathers in the valleys on its way down
    let median = median_height(&terrain, map.nodata_mask());
    let sheet = |spacing: f64| FluidBlock {
        min: [spacing, spacing, median],
        max: [width - spacing, height - spacing, relief + (SHEET_LAYERS + 1.0) * spacing],
        velocity: [0.0; 3],
        depth: SHEET_LAYERS * spacing,
    };
    let spacing = sheet_spacing(&mesh, &sheet, particles, width * height)?;
    // water reaching the edges or a nodata shaft leaves (as through the grid model's open
    // borders) before it pours over the solid's rim and scours it; water that falls anyway
    // leaves at the solid's bottom
    let (reach, edge) = (relief + base_depth + 1.0, spacing);
    let bottom = -base_depth;
    let sink = |min: [f64; 3], max: [f64; 3]| Sink { min, max };
    // a nodata cell's shaft takes the mesh squares reading it: grown by one square and a spacing
    let grow = 0.5 * cell.x.max(cell.y) + (width / columns as f64).max(height / rows as f64) + spacing;
    let mut sinks = nodata_sinks(map, [cell.x, cell.y], height, grow, reach);
    sinks.extend([
        sink([-1.0, -1.0, -reach], [edge, height + 1.0, reach]),
        sink([width - edge, -1.0, -reach], [width + 1.0, height + 1.0, reach]),
        sink([-1.0, -1.0, -reach], [width + 1.0, edge, reach]),
        sink([-1.0, height - edge, -reach], [width + 1.0, height + 1.0, reach]),
        sink([-1.0, -1.0, -reach], [width + 1.0, height + 1.0, bottom]),
    ]);
    let inflow = Inflow { sinks, ..Inflow::default() };
    let params = Params { erosion_rate: 5e-4, critical_shear: 30.0, morphological_factor: 100.0, ..Params::default() };
    let scene = Scene { mesh, spacing, blocks: vec![sheet(spacing)], max_particles: particles, inflow, params };
    Ok((scene, scale))
}

/// The median of the valid heights, metres.
fn median_height(terrain: &Grid<f32>, nodata: Option<&[bool]>) -> f64 {
    let mut z: Vec<f32> = (terrain.as_slice().iter().enumerate())
        .filter(|(i, _)| nodata.is_none_or(|m| !m[*i]))
        .map(|(_, &z)| z)
        .collect();
    z.sort_unstable_by(f32::total_cmp);
    z.get(z.len() / 2).map_or(0.0, |&m| f64::from(m))
}

/// Boxes over `map`'s nodata cells (model metres, cells of `cell`, row 0 at y = `height`),
/// each grown by `grow` across and reaching `reach` up and down: runs of cells along rows,
/// runs spanning the same columns in consecutive rows as one box.
fn nodata_sinks(map: &Heightmap, cell: [f64; 2], height: f64, grow: f64, reach: f64) -> Vec<Sink> {
    let Some(mask) = map.nodata_mask() else { return Vec::new() };
    let w = map.heights.width();
    // (first column, last column, first row, last row)
    let mut open: Vec<(usize, usize, usize, usize)> = Vec::new();
    let mut done = Vec::new();
    for (r, row) in mask.chunks(w).enumerate() {
        let mut runs = Vec::new();
        let mut c = 0;
        while c < w {
            if row[c] {
                let c0 = c;
                while c < w && row[c] {
                    c += 1;
                }
                runs.push((c0, c - 1));
            } else {
                c += 1;
            }
        }
        let mut next = Vec::new();
        for (c0, c1) in runs {
            match open.iter().position(|b| b.0 == c0 && b.1 == c1) {
                Some(k) => next.push((c0, c1, open.swap_remove(k).2, r)),
                None => next.push((c0, c1, r, r)),
            }
        }
        done.append(&mut open);
        open = next;
    }
    done.append(&mut open);
    done.sort_unstable();
    done.into_iter()
        .map(|(c0, c1, r0, r1)| Sink {
            min: [c0 as f64 * cell[0] - grow, height - r1 as f64 * cell[1] - grow, -reach],
            max: [c1 as f64 * cell[0] + grow, height - r0 as f64 * cell[1] + grow, reach],
        })
        .collect()
}

/// The largest spacing (metres) at which the sheet holds at least `particles` points.
fn sheet_spacing(
    mesh: &super::mesh::TriMesh,
    sheet: &impl Fn(f64) -> FluidBlock,
    particles: usize,
    area: f64,
) -> Result<f64, TerrainError> {
    let count = |s: f64| super::state::fluid_points(mesh, s, &[sheet(s)], usize::MAX);
    // a full sheet holds area·layers/s² points; shafts and steep slopes hold fewer
    let full = (area * SHEET_LAYERS / particles as f64).sqrt();
    let (mut lo, mut hi) = (full * 0.2, full * 1.5);
    if count(lo) < particles {
        let expected = "a count the terrain's sheet of water can hold";
        return Err(TerrainError::Parameter { name: "particles", value: particles as f64, expected });
    }
    for _ in 0..30 {
        let mid = 0.5 * (lo + hi);
        if count(mid) >= particles { lo = mid } else { hi = mid }
    }
    Ok(lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(cells: usize, cell: f64, relief: f64) -> Heightmap {
        let g =
            Grid::from_fn(cells, cells, CellSize::square(cell), |_, c| (relief * c as f64 / (cells - 1) as f64) as f32);
        Heightmap::new(g.unwrap()).unwrap()
    }

    #[test]
    fn steep_terrain_is_scaled_without_distortion_and_flatter_terrain_is_exaggerated() {
        // 25.6 km, 8000 m of relief: 4 m across, 1.25 m high
        let s = ModelScale::of(&ramp(257, 100.0, 8000.0));
        assert!((s.horizontal - 4.0 / 25_600.0).abs() < 1e-15);
        assert_eq!(s.exaggeration(), 1.0);
        // 25.6 km, 500 m: exaggerated to 1 m of relief; 50 m: at most 20x
        let s = ModelScale::of(&ramp(257, 100.0, 500.0));
        assert!((500.0 * s.vertical - MODEL_RELIEF).abs() < 1e-12, "{s:?}");
        assert_eq!(ModelScale::of(&ramp(257, 100.0, 50.0)).exaggeration(), MAX_EXAGGERATION);
        // and back: a model point, volume and time in terrain units
        let p = s.to_terrain(DVec3::new(2.0, 1.0, 0.15));
        assert!((p.x - 12_800.0).abs() < 1e-9 && (p.y - 6_400.0).abs() < 1e-9 && (p.z - 75.0).abs() < 1e-9);
        assert!((s.volume_to_terrain(1.0) - 1.0 / (s.horizontal.powi(2) * s.vertical)).abs() < 1e-6);
        assert!(s.seconds_to_terrain(1.0) > 1.0);
    }

    #[test]
    fn the_sheet_follows_the_terrain() {
        let (scene, scale) = heightmap_scene(&ramp(65, 100.0, 600.0), 3000, 2000).unwrap();
        let (st, _) = scene.start().unwrap();
        assert_eq!(st.positions.len(), 3000);
        // every particle within the sheet's depth above the ramp's upper half
        let slope = 600.0 * scale.vertical / 4.0;
        let depth = SHEET_LAYERS * st.spacing;
        for p in &st.positions {
            let ground = p.x * slope;
            assert!(p.z > ground && p.z - ground <= depth + 1e-9, "{p} over {ground}");
            assert!(p.z >= 2.0 * slope - 1e-9, "{p} below the median height");
        }
    }

    #[test]
    fn particles_start_clear_of_the_terrain() {
        use crate::terrain::{TerrainSpec, generate};
        // an fBm mountain whose lattice meets the mesh's diagonals: over a convex crease the
        // fill once took points a tenth of their clearance from the surface, and the penalty
        // threw them up at 3x the top speed the scene can reach
        let spec = TerrainSpec { relief: 2000.0, cell_size: CellSize::square(100.0), ..TerrainSpec::default() };
        let map = generate(&spec).unwrap();
        let (scene, _) = heightmap_scene(&map, 3000, 4000).unwrap();
        let (st, _) = scene.start().unwrap();
        let mut worst = (f64::INFINITY, 0, 0);
        for (k, &x) in st.positions.iter().enumerate() {
            for f in 0..st.mesh.faces.len() {
                let [a, b, c] = st.mesh.corners(f);
                let (q, _) = super::super::mesh::closest_point(x, a, b, c);
                let d = (x - q).length();
                if d < worst.0 {
                    worst = (d, k, f);
                }
            }
        }
        let (d, k, f) = worst;
        assert!(d > 0.45 * st.spacing * 0.999, "particle {k} {d} m from face {f}, spacing {}", st.spacing);
    }
}
