//! Meshes the SPH model erodes, built from a heightmap (with finer triangles where asked, as
//! Skorkovská et al.'s adaptive resolution) or from shapes: a block with a tube through it, a closed tank.

use std::collections::HashMap;

use glam::DVec3;

use super::mesh::TriMesh;
use crate::error::{MeshError, TerrainError};
use crate::grid::Grid;

/// Where a heightmap mesh gets finer triangles.
#[derive(Clone, Debug, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Refine {
    /// Uniform triangles.
    #[default]
    None,
    /// Squares overlapping this rectangle (metres, the mesh's x and y) are refined to the finest
    /// level.
    Region {
        /// Smallest x, metres.
        x0: f64,
        /// Smallest y, metres.
        y0: f64,
        /// Largest x, metres.
        x1: f64,
        /// Largest y, metres.
        y1: f64,
    },
    /// Squares whose largest |Laplacian| of height exceeds `threshold` (1/m) are refined, level by
    /// level.
    Curvature {
        /// 1/m.
        threshold: f64,
    },
}

/// How a heightmap becomes a closed solid: its surface on top, vertical walls around, a flat
/// bottom.
#[derive(Clone, Debug, PartialEq)]
pub struct HeightmapMesh {
    /// Coarsest squares across x (each two triangles unless refined). At least 1.
    pub columns: usize,
    /// Coarsest squares across y. At least 1.
    pub rows: usize,
    /// Times a square may be halved where `refine` asks (0 = uniform, at most 8).
    pub levels: u32,
    /// Where to refine.
    pub refine: Refine,
    /// The bottom lies this far below the lowest height, metres (> 0).
    pub base_depth: f64,
}

/// Bilinear height at fractional column `c`, row `r`.
fn bilinear(h: &Grid<f32>, c: f64, r: f64) -> f64 {
    let (w, hh) = (h.width(), h.height());
    let c = c.clamp(0.0, (w - 1) as f64);
    let r = r.clamp(0.0, (hh - 1) as f64);
    let (c0, r0) = (c.floor() as usize, r.floor() as usize);
    let (c1, r1) = ((c0 + 1).min(w - 1), (r0 + 1).min(hh - 1));
    let (fc, fr) = (c - c0 as f64, r - r0 as f64);
    let at = |r: usize, c: usize| f64::from(h.as_slice()[r * w + c]);
    let top = at(r0, c0) * (1.0 - fc) + at(r0, c1) * fc;
    let bottom = at(r1, c0) * (1.0 - fc) + at(r1, c1) * fc;
    top * (1.0 - fr) + bottom * fr
}

/// A square of the quadtree: corner on the finest lattice, size `1 << (levels - level)`.
#[derive(Clone, Copy)]
struct Leaf {
    x: u32,
    y: u32,
    level: u32,
}

impl HeightmapMesh {
    /// The closed mesh of `heights` (x along columns, y along rows with row 0 the north edge at
    /// the largest y, z up; metres).
    pub fn build(&self, heights: &Grid<f32>) -> Result<TriMesh, TerrainError> {
        self.build_with_holes(heights, None)
    }

    /// As [`HeightmapMesh::build`], without the squares that would read a nodata cell of
    /// `nodata` (`true` = no data, row-major): their edges get walls down to the bottom, so the
    /// solid has a shaft through it where the terrain is unknown, and fluid entering one falls
    /// out of the domain (booked as outflow). Two squares meeting only at a corner would pinch
    /// the surface there, so one of them is left out too. Holes need a uniform mesh
    /// (`levels` 0).
    pub fn build_with_holes(&self, heights: &Grid<f32>, nodata: Option<&[bool]>) -> Result<TriMesh, TerrainError> {
        let bad = |name, value: f64, expected| TerrainError::Parameter { name, value, expected };
        if self.columns == 0 || self.rows == 0 || self.columns > 4096 || self.rows > 4096 {
            return Err(bad("columns", self.columns.min(self.rows) as f64, "1 to 4096 squares"));
        }
        if self.levels > 8 {
            return Err(bad("levels", f64::from(self.levels), "0 to 8"));
        }
        if !(self.base_depth > 0.0 && self.base_depth.is_finite()) {
            return Err(bad("base_depth", self.base_depth, "a positive number of metres"));
        }
        if heights.width() < 2 || heights.height() < 2 {
            return Err(bad("width", heights.width().min(heights.height()) as f64, "at least 2 x 2 cells"));
        }
        let cell = heights.cell_size();
        let (w, h) = (heights.width(), heights.height());
        let size0 = 1u32 << self.levels;
        let (nx, ny) = (self.columns as u32 * size0, self.rows as u32 * size0);
        let col_of = |u: f64| u / f64::from(nx) * (w - 1) as f64;
        let row_of = |v: f64| v / f64::from(ny) * (h - 1) as f64;
        let extent = DVec3::new((w - 1) as f64 * cell.x, (h - 1) as f64 * cell.y, 0.0);
        // lattice (u, v) -> metres
        let x_of = |u: f64| u / f64::from(nx) * extent.x;
        let y_of = |v: f64| extent.y - v / f64::from(ny) * extent.y;
        let curvature = match self.refine {
            Refine::Curvature { .. } => Some(laplacian(heights)?),
            _ => None,
        };
        let wants = |leaf: &Leaf| -> bool {
            let size = f64::from(size0 >> leaf.level);
            let (u0, v0) = (f64::from(leaf.x), f64::from(leaf.y));
            match &self.refine {
                Refine::None => false,
                Refine::Region { x0, y0, x1, y1 } => {
                    let (ax, bx) = (x_of(u0), x_of(u0 + size));
                    let (ay, by) = (y_of(v0 + size), y_of(v0));
                    ax <= *x1 && bx >= *x0 && ay <= *y1 && by >= *y0
                }
                Refine::Curvature { threshold } => {
                    let lap = curvature.as_ref().map_or(&[][..], |l| l.as_slice());
                    let (c0, c1) = (col_of(u0).floor() as usize, (col_of(u0 + size).ceil() as usize).min(w - 1));
                    let (r0, r1) = (row_of(v0).floor() as usize, (row_of(v0 + size).ceil() as usize).min(h - 1));
                    (r0..=r1).any(|r| (c0..=c1).any(|c| f64::from(lap[r * w + c]) > *threshold))
                }
            }
        };
        // 1. refine where asked
        let mut stack: Vec<Leaf> = (0..self.rows as u32)
            .rev()
            .flat_map(|j| (0..self.columns as u32).rev().map(move |i| (i, j)))
            .map(|(i, j)| Leaf { x: i * size0, y: j * size0, level: 0 })
            .collect();
        let mut leaves = Vec::new();
        while let Some(leaf) = stack.pop() {
            if leaf.level < self.levels && wants(&leaf) {
                stack.extend(children(leaf, size0).into_iter().rev());
            } else {
                leaves.push(leaf);
            }
        }
        // 2. balance: neighbours differ by one level at most, so an edge has at most a midpoint
        let mut level = vec![0u8; (nx * ny) as usize];
        let paint = |level: &mut Vec<u8>, leaf: &Leaf| {
            let s = size0 >> leaf.level;
            for v in leaf.y..leaf.y + s {
                for u in leaf.x..leaf.x + s {
                    level[(v * nx + u) as usize] = leaf.level as u8;
                }
            }
        };
        for leaf in &leaves {
            paint(&mut level, leaf);
        }
        let level_at = |level: &[u8], u: i64, v: i64| -> Option<u32> {
            (u >= 0 && v >= 0 && u < i64::from(nx) && v < i64::from(ny))
                .then(|| u32::from(level[(v as u32 * nx + u as u32) as usize]))
        };
        loop {
            let mut next = Vec::with_capacity(leaves.len());
            let mut changed = false;
            for leaf in &leaves {
                let s = i64::from(size0 >> leaf.level);
                let (x, y) = (i64::from(leaf.x), i64::from(leaf.y));
                let too_fine = (0..s).any(|k| {
                    [(x + k, y - 1), (x + k, y + s), (x - 1, y + k), (x + s, y + k)]
                        .iter()
                        .any(|&(u, v)| level_at(&level, u, v).is_some_and(|l| l > leaf.level + 1))
                });
                if too_fine {
                    changed = true;
                    for c in children(*leaf, size0) {
                        paint(&mut level, &c);
                        next.push(c);
                    }
                } else {
                    next.push(*leaf);
                }
            }
            leaves = next;
            if !changed {
                break;
            }
        }
        // holes: squares reading a nodata cell are left out (uniform squares only)
        let holes = nodata.filter(|m| m.contains(&true));
        if let Some(mask) = holes {
            if mask.len() != w * h {
                return Err(bad("nodata", mask.len() as f64, "a mask of one value per cell"));
            }
            if self.levels > 0 {
                return Err(bad("levels", f64::from(self.levels), "0 with nodata holes (a uniform mesh)"));
            }
            let keep = squares_with_data(mask, w, h, nx as usize, ny as usize);
            leaves.retain(|l| keep[(l.y * nx + l.x) as usize]);
            if leaves.is_empty() {
                let nodata = mask.iter().filter(|&&m| m).count();
                return Err(TerrainError::AllNodata { nodata, cells: mask.len() });
            }
        }
        // 3. triangulate each leaf: two triangles, or a fan around its centre through the
        //    midpoints its finer neighbours put on its edges
        let mut positions = Vec::new();
        let mut index: HashMap<(u32, u32), u32> = HashMap::new();
        let mut vertex = |u2: u32, v2: u32| -> u32 {
            *index.entry((u2, v2)).or_insert_with(|| {
                let (u, v) = (f64::from(u2) / 2.0, f64::from(v2) / 2.0);
                positions.push(DVec3::new(x_of(u), y_of(v), bilinear(heights, col_of(u), row_of(v))));
                (positions.len() - 1) as u32
            })
        };
        let mut faces = Vec::new();
        for leaf in &leaves {
            let s = size0 >> leaf.level;
            let (x, y) = (i64::from(leaf.x), i64::from(leaf.y));
            let (u0, v0, s2) = (leaf.x * 2, leaf.y * 2, s * 2);
            let half = i64::from(s / 2);
            let finer = |u: i64, v: i64| s > 1 && level_at(&level, u, v).is_some_and(|l| l > leaf.level);
            // boundary cycle: corners and the midpoints that exist, going round the square
            let mut ring = vec![vertex(u0, v0)];
            if finer(x + half, y - 1) {
                ring.push(vertex(u0 + s, v0));
            }
            ring.push(vertex(u0 + s2, v0));
            if finer(x + i64::from(s), y + half) {
                ring.push(vertex(u0 + s2, v0 + s));
            }
            ring.push(vertex(u0 + s2, v0 + s2));
            if finer(x + half, y + i64::from(s)) {
                ring.push(vertex(u0 + s, v0 + s2));
            }
            ring.push(vertex(u0, v0 + s2));
            if finer(x - 1, y + half) {
                ring.push(vertex(u0, v0 + s));
            }
            if ring.len() == 4 {
                faces.push([ring[0], ring[1], ring[2]]);
                faces.push([ring[0], ring[2], ring[3]]);
            } else {
                let centre = vertex(u0 + s, v0 + s);
                for k in 0..ring.len() {
                    faces.push([centre, ring[k], ring[(k + 1) % ring.len()]]);
                }
            }
        }
        // 4. walls under each boundary edge and a bottom fanned from its centre
        let mut uses: HashMap<(u32, u32), u32> = HashMap::new();
        for f in &faces {
            for k in 0..3 {
                let (a, b) = (f[k], f[(k + 1) % 3]);
                *uses.entry((a.min(b), a.max(b))).or_default() += 1;
            }
        }
        let mut boundary: Vec<(u32, u32)> = uses.into_iter().filter(|&(_, n)| n == 1).map(|(e, _)| e).collect();
        boundary.sort_unstable();
        let min_z = positions.iter().map(|p| p.z).fold(f64::INFINITY, f64::min);
        let base = min_z - self.base_depth;
        let mut below: HashMap<u32, u32> = HashMap::new();
        let mut lower = |positions: &mut Vec<DVec3>, v: u32| -> u32 {
            *below.entry(v).or_insert_with(|| {
                let p = positions[v as usize];
                positions.push(DVec3::new(p.x, p.y, base));
                (positions.len() - 1) as u32
            })
        };
        if holes.is_none() {
            let centre = {
                positions.push(DVec3::new(extent.x / 2.0, extent.y / 2.0, base));
                (positions.len() - 1) as u32
            };
            for &(a, b) in &boundary {
                let (a2, b2) = (lower(&mut positions, a), lower(&mut positions, b));
                faces.push([a, b, b2]);
                faces.push([a, b2, a2]);
                faces.push([centre, a2, b2]);
            }
        } else {
            // with holes the outline is not star-shaped: the bottom is each top face lowered
            let top = faces.len();
            for &(a, b) in &boundary {
                let (a2, b2) = (lower(&mut positions, a), lower(&mut positions, b));
                faces.push([a, b, b2]);
                faces.push([a, b2, a2]);
            }
            for k in 0..top {
                let [a, b, c] = faces[k];
                let (a2, b2, c2) = (lower(&mut positions, a), lower(&mut positions, b), lower(&mut positions, c));
                faces.push([a2, c2, b2]);
            }
        }
        let mut mesh = TriMesh::new(positions, faces).map_err(|e| bad_mesh(&e))?;
        mesh.orient_outward();
        Ok(mesh)
    }
}

/// Which of the `nx` × `ny` squares of a uniform heightmap mesh read no nodata cell (the
/// bilinear heights at their corners and inside read the cells they span and the ones beside),
/// less one of each pair of squares that meet only at a corner.
fn squares_with_data(mask: &[bool], w: usize, h: usize, nx: usize, ny: usize) -> Vec<bool> {
    let col = |u: usize| u as f64 / nx as f64 * (w - 1) as f64;
    let row = |v: usize| v as f64 / ny as f64 * (h - 1) as f64;
    let mut keep: Vec<bool> = (0..nx * ny)
        .map(|k| {
            let (u, v) = (k % nx, k / nx);
            let (c0, c1) = (col(u).floor() as usize, (col(u + 1).ceil() as usize).min(w - 1));
            let (r0, r1) = (row(v).floor() as usize, (row(v + 1).ceil() as usize).min(h - 1));
            (r0..=r1).all(|r| (c0..=c1).all(|c| !mask[r * w + c]))
        })
        .collect();
    // a pinch: of the four squares around an inner corner, two diagonal ones kept and the other
    // two not; dropping one of them can make another pinch, hence the loop
    loop {
        let mut changed = false;
        for v in 1..ny {
            for u in 1..nx {
                let at = |du: usize, dv: usize| (v - 1 + dv) * nx + (u - 1 + du);
                let [a, b, c, d] = [at(0, 0), at(1, 0), at(0, 1), at(1, 1)].map(|i| keep[i]);
                if a && d && !b && !c {
                    keep[at(1, 1)] = false;
                    changed = true;
                } else if b && c && !a && !d {
                    keep[at(0, 1)] = false;
                    changed = true;
                }
            }
        }
        if !changed {
            return keep;
        }
    }
}

fn bad_mesh(e: &MeshError) -> TerrainError {
    // the builders make valid meshes; this only reports non-finite heights
    let _ = e;
    TerrainError::Parameter { name: "heights", value: f64::NAN, expected: "finite heights" }
}

fn children(leaf: Leaf, size0: u32) -> [Leaf; 4] {
    let h = (size0 >> leaf.level) / 2;
    let l = leaf.level + 1;
    [
        Leaf { x: leaf.x, y: leaf.y, level: l },
        Leaf { x: leaf.x + h, y: leaf.y, level: l },
        Leaf { x: leaf.x, y: leaf.y + h, level: l },
        Leaf { x: leaf.x + h, y: leaf.y + h, level: l },
    ]
}

/// |Laplacian| of height per cell, 1/m.
fn laplacian(h: &Grid<f32>) -> Result<Grid<f32>, TerrainError> {
    let (w, hh) = (h.width(), h.height());
    let cell = h.cell_size();
    let d = h.as_slice();
    Grid::from_fn(w, hh, cell, |r, c| {
        let at = |r: usize, c: usize| f64::from(d[r * w + c]);
        let (cl, cr) = (c.saturating_sub(1), (c + 1).min(w - 1));
        let (ru, rd) = (r.saturating_sub(1), (r + 1).min(hh - 1));
        let lx = (at(r, cl) + at(r, cr) - 2.0 * at(r, c)) / (cell.x * cell.x);
        let ly = (at(ru, c) + at(rd, c) - 2.0 * at(r, c)) / (cell.y * cell.y);
        (lx + ly).abs() as f32
    })
    .map_err(TerrainError::from)
}

/// A block of solid with a round tube through it along x (Skorkovská et al.'s Fig. 7): the block spans
/// `0..length` in x and `-half_width..half_width` in y and z, the tube has `radius`, `around`
/// vertices round it (a multiple of 8, so the block's corners are vertices) and `along` rings
/// from end to end. The block's outside has one ring per end, the tube's inside `along + 1`.
pub fn tube_block(length: f64, half_width: f64, radius: f64, around: u32, along: u32) -> Result<TriMesh, TerrainError> {
    let bad = |name, value: f64, expected| TerrainError::Parameter { name, value, expected };
    if !(length > 0.0 && half_width > 0.0 && radius > 0.0 && radius < half_width * 0.99) {
        return Err(bad("radius", radius, "0 < radius < 0.99 x half_width, positive length"));
    }
    if around < 8 || !around.is_multiple_of(8) || around > 4096 {
        return Err(bad("around", f64::from(around), "a multiple of 8 from 8 to 4096"));
    }
    if along == 0 || along > 100_000 {
        return Err(bad("along", f64::from(along), "1 to 100000"));
    }
    let n = around as usize;
    let angle = |k: usize| std::f64::consts::TAU * k as f64 / n as f64;
    let mut positions = Vec::new();
    // inner rings
    for i in 0..=along as usize {
        let x = length * i as f64 / f64::from(along);
        for k in 0..n {
            positions.push(DVec3::new(x, radius * angle(k).cos(), radius * angle(k).sin()));
        }
    }
    // outer rings at both ends: the square seen at the same angles
    let outer = |x: f64, k: usize| {
        let (c, s) = (angle(k).cos(), angle(k).sin());
        let scale = half_width / c.abs().max(s.abs());
        DVec3::new(x, c * scale, s * scale)
    };
    let outer0 = positions.len();
    for &x in &[0.0, length] {
        for k in 0..n {
            positions.push(outer(x, k));
        }
    }
    let inner = |i: usize, k: usize| (i * n + k % n) as u32;
    let out = |end: usize, k: usize| (outer0 + end * n + k % n) as u32;
    let mut faces = Vec::new();
    let quad = |faces: &mut Vec<[u32; 3]>, a, b, c, d| {
        faces.push([a, b, c]);
        faces.push([a, c, d]);
    };
    for i in 0..along as usize {
        for k in 0..n {
            quad(&mut faces, inner(i, k), inner(i, k + 1), inner(i + 1, k + 1), inner(i + 1, k));
        }
    }
    for k in 0..n {
        quad(&mut faces, out(0, k), out(0, k + 1), out(1, k + 1), out(1, k));
        quad(&mut faces, inner(0, k), inner(0, k + 1), out(0, k + 1), out(0, k));
        quad(&mut faces, inner(along as usize, k), inner(along as usize, k + 1), out(1, k + 1), out(1, k));
    }
    let mut mesh = TriMesh::new(positions, faces).map_err(|e| bad_mesh(&e))?;
    mesh.orient_outward();
    Ok(mesh)
}

/// A closed box `0..size` holding fluid: its faces point inwards (the solid is outside), each
/// side split into `divisions` squares along each axis.
pub fn tank(size: DVec3, divisions: [u32; 3]) -> Result<TriMesh, TerrainError> {
    if !(size.min_element() > 0.0 && size.is_finite()) {
        return Err(TerrainError::Parameter { name: "size", value: size.min_element(), expected: "positive metres" });
    }
    if divisions.iter().any(|&d| d == 0 || d > 1024) {
        return Err(TerrainError::Parameter {
            name: "divisions",
            value: f64::from(*divisions.iter().min().unwrap_or(&0)),
            expected: "1 to 1024",
        });
    }
    let d = divisions;
    let mut positions = Vec::new();
    let mut index: HashMap<[u32; 3], u32> = HashMap::new();
    let mut vertex = |l: [u32; 3]| -> u32 {
        *index.entry(l).or_insert_with(|| {
            positions.push(DVec3::new(
                size.x * f64::from(l[0]) / f64::from(d[0]),
                size.y * f64::from(l[1]) / f64::from(d[1]),
                size.z * f64::from(l[2]) / f64::from(d[2]),
            ));
            (positions.len() - 1) as u32
        })
    };
    let mut faces = Vec::new();
    // each side: the axis it is normal to, which end; the two axes it spans
    for axis in 0..3 {
        let (p, q) = ((axis + 1) % 3, (axis + 2) % 3);
        for end in [0, d[axis]] {
            for i in 0..d[p] {
                for j in 0..d[q] {
                    let at = |i: u32, j: u32| {
                        let mut l = [0u32; 3];
                        l[axis] = end;
                        l[p] = i;
                        l[q] = j;
                        l
                    };
                    let (a, b, c, e) =
                        (vertex(at(i, j)), vertex(at(i + 1, j)), vertex(at(i + 1, j + 1)), vertex(at(i, j + 1)));
                    faces.push([a, b, c]);
                    faces.push([a, c, e]);
                }
            }
        }
    }
    let mut mesh = TriMesh::new(positions, faces).map_err(|e| bad_mesh(&e))?;
    mesh.orient_outward();
    Ok(mesh.flipped())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squares_meeting_only_at_a_corner_lose_one() {
        // 5 x 5 cells, a square per cell gap: the cells (row 1, col 3) and (row 3, col 1) take
        // out the squares around them, leaving (1, 1) and (2, 2) to meet at one corner
        let mut mask = vec![false; 25];
        mask[5 + 3] = true;
        mask[3 * 5 + 1] = true;
        let keep = squares_with_data(&mask, 5, 5, 4, 4);
        assert!(keep[4 + 1], "square (1, 1) has data");
        assert!(!keep[2 * 4 + 1] && !keep[4 + 2], "the squares beside read a nodata cell");
        assert!(!keep[2 * 4 + 2], "square (2, 2) would pinch the surface at the corner it shares with (1, 1)");
        let heights = Grid::from_fn(5, 5, crate::grid::CellSize::square(1.0), |r, c| (r + c) as f32).unwrap();
        let spec = HeightmapMesh { columns: 4, rows: 4, levels: 0, refine: Refine::None, base_depth: 1.0 };
        let mesh = spec.build_with_holes(&heights, Some(&mask)).unwrap();
        crate::models::sph::check_mesh(&mesh, mesh.default_min_area()).unwrap();
        // a nodata cell in every square: said as it is (it read as a parameter `nodata` before)
        let every: Vec<bool> = (0..25).map(|i| (i / 5) % 2 == 1 && (i % 5) % 2 == 1).collect();
        let e = spec.build_with_holes(&heights, Some(&every)).unwrap_err();
        assert_eq!(e, TerrainError::AllNodata { nodata: 4, cells: 25 });
        assert!(e.to_string().starts_with("every square of the mesh reads a nodata cell"), "{e}");
    }
    use crate::grid::CellSize;

    #[test]
    fn heightmap_mesh_is_closed_and_holds_the_volume_under_the_surface() {
        let h =
            Grid::from_fn(33, 17, CellSize::square(2.0), |r, c| (r as f32 * 0.3 + c as f32 * 0.1).sin() + 5.0).unwrap();
        for refine in [
            Refine::None,
            Refine::Region { x0: 10.0, y0: 5.0, x1: 20.0, y1: 12.0 },
            Refine::Curvature { threshold: 0.05 },
        ] {
            let m = HeightmapMesh { columns: 8, rows: 4, levels: 2, refine: refine.clone(), base_depth: 1.0 }
                .build(&h)
                .unwrap();
            m.validate(true, 1e-9).unwrap();
            let (lo, hi) = m.bounds();
            assert!((hi.x - 64.0).abs() < 1e-9 && (hi.y - 32.0).abs() < 1e-9 && lo.x == 0.0 && lo.y == 0.0);
            // heights 4..6 m, bottom 1 m under the lowest: about 2 m of solid on average
            let v = m.signed_volume();
            assert!(v > 64.0 * 32.0 * 1.6 && v < 64.0 * 32.0 * 2.4, "{refine:?}: {v}");
            if refine != Refine::None {
                assert!(m.faces.len() > 8 * 4 * 2 + 24 * 3, "{refine:?} refined nothing");
            }
        }
    }

    #[test]
    fn tube_block_and_tank_are_closed() {
        let t = tube_block(4.0, 1.0, 0.5, 16, 10).unwrap();
        t.validate(true, 1e-9).unwrap();
        let expect = 4.0 * 4.0 - 4.0 * std::f64::consts::PI * 0.25;
        assert!((t.signed_volume() - expect).abs() < 0.05 * expect, "{}", t.signed_volume());
        let k = tank(DVec3::new(1.0, 2.0, 3.0), [2, 3, 4]).unwrap();
        k.validate(true, 1e-9).unwrap();
        assert!((k.signed_volume() + 6.0).abs() < 1e-12);
    }
}
