//! The erosion brush: the cells within `radius` of a droplet's true position, weighted
//! `max(0, radius − distance)` and normalised, each yielding its share of the amount (scaled by
//! its erodibility, never below the floor).
//!
//! The brush is laid out as windows of [`LANES`] consecutive cells along a row (or [`NARROW`],
//! for brushes at most that wide, radius <= 4), so every loop runs whole vectors: a radius-5
//! brush covers at most 10 cells of a row, and loops over runs that short ran scalar. Lanes
//! outside the circle weigh zero and leave their cell as it was.
//!
//! Weights are f32 distances rounded to 2⁻²⁰ cell, exact integers in f64, so their total is the
//! same in any order, as are the quanta the cells yield. A window at a map's east edge is
//! shifted west to stay inside the map (the lanes the previous window holds weigh zero), and
//! the general path (wrapping maps, or maps narrower than a window) visits lanes one by one at
//! their wrapped cells; both give the same bits as an unshifted window would.

// Lanes index several arrays by the same lane.
#![allow(clippy::needless_range_loop)]

use super::state::QUANTA_PER_METRE;

/// Cells in a window.
pub(super) const LANES: usize = 16;

/// Cells in a window of a narrow brush (radius <= [`NARROW_RADIUS`]: a radius-3 brush is 6
/// cells wide, and would leave 10 of 16 lanes idle).
pub(super) const NARROW: usize = 8;

/// Largest radius whose brush fits [`NARROW`] windows (`2·⌈radius⌉` columns).
const NARROW_RADIUS: f64 = 4.0;

/// Weight units per cell of distance (weights are whole numbers of them).
pub(super) const WEIGHT_UNITS: f64 = 1_048_576.0;

/// 2⁵²: adding and removing it rounds an f64 in 0..2⁵² to a whole number without a conversion.
const TWO_52: f64 = 4_503_599_627_370_496.0;

/// Largest amount one quantisation takes, m (keeps quanta below 2⁵², where [`quanta_f`] is
/// exact).
pub(super) const MAX_AMOUNT: f64 = 1.0e6;

/// Metres (0..=`MAX_AMOUNT`) to quanta, rounded to nearest (ties to even), as an exact integer
/// in an f64, so the loops that use it vectorise.
#[inline(always)]
pub(super) fn quanta_f(metres: f64) -> f64 {
    (metres * QUANTA_PER_METRE + TWO_52) - TWO_52
}

/// Quanta a cell yields, as an exact integer in an f64: `want·erodibility`, no more than it holds
/// above `floor`.
#[inline(always)]
pub(super) fn share_f(want: f64, erodibility: f64, height: f32, floor: f64) -> f64 {
    let want = want * erodibility;
    let above = f64::from(height) - floor;
    let can = if want < above { want } else { above };
    let can = if can > 0.0 { can } else { 0.0 };
    quanta_f(if can < MAX_AMOUNT { can } else { MAX_AMOUNT })
}

/// One cell's erosion: removes its share of `want` metres from `height`, adds it to `eroded`,
/// returns the quanta the f32 height actually lost (a share below half its last digit is no
/// change at all, and is not booked). A zero `want` changes nothing.
#[inline(always)]
pub(super) fn erode_cell(want: f64, erodibility: f64, height: &mut f32, eroded: &mut f32, floor: f64) -> f64 {
    let q = share_f(want, erodibility, *height, floor);
    let old = f64::from(*height);
    *height = (old - q * (1.0 / QUANTA_PER_METRE)) as f32;
    let lost = old - f64::from(*height);
    *eroded += lost as f32;
    quanta_f(lost)
}

/// `x.floor()` as an integer, without a libm call.
#[inline]
pub(super) fn floor_i(x: f64) -> isize {
    let t = x as isize;
    if (t as f64) > x { t - 1 } else { t }
}

/// A row of the brush.
#[derive(Clone, Copy)]
struct Row {
    /// Map index of the row's first cell.
    start: usize,
    /// Row minus the droplet's cell row.
    ky: i32,
}

/// A window of columns of the brush: lane `l` is column `col0 + l` (wrapped on wrapping maps).
/// Every row of the brush has the same windows of columns.
#[derive(Clone, Copy)]
struct Columns {
    /// Column of lane 0 (unwrapped).
    col0: isize,
    /// Column of lane 0 minus the droplet's cell column.
    kx: i32,
    /// Only lanes `lo..hi` belong to this window; the others weigh zero.
    lo: u32,
    hi: u32,
}

/// The brush of one erosion step, reused from step to step: its rows, its windows of columns,
/// and the weights of each row's windows (row-major, `lanes` per window).
#[derive(Default)]
pub(super) struct Brush {
    rows: Vec<Row>,
    columns: Vec<Columns>,
    weights: Vec<f64>,
    /// Cells per window: [`LANES`] or [`NARROW`].
    lanes: usize,
}

/// The map a brush lies on.
#[derive(Clone, Copy)]
pub(super) struct Plane {
    /// Columns.
    pub w: usize,
    /// Rows.
    pub rows: usize,
    /// Whether the map wraps around.
    pub wrap: bool,
}

impl Plane {
    /// Whether windows of `lanes` cells are runs of consecutive cells inside the map (no
    /// wrapping).
    fn contiguous(&self, lanes: usize) -> bool {
        !self.wrap && self.w >= lanes
    }
}

impl Brush {
    /// Lays the brush of `radius` (> 0) cells around `(x, y)` on `plane` and weighs its cells.
    /// Returns the total weight (0 when no cell lies within the circle).
    pub(super) fn lay(&mut self, plane: Plane, x: f64, y: f64, radius: f64) -> f64 {
        self.rows.clear();
        self.columns.clear();
        let (w, rows) = (plane.w as isize, plane.rows as isize);
        let (ix, iy) = (floor_i(x), floor_i(y));
        let (fx, fy) = ((x - ix as f64) as f32, (y - iy as f64) as f32);
        let r = radius as f32;
        // cells strictly within the circle lie within `reach` columns and rows of the droplet's
        let reach = radius.ceil() as isize;
        let (mut r0, mut r1, mut c0, mut c1) = (iy - reach + 1, iy + reach, ix - reach + 1, ix + reach);
        if !plane.wrap {
            (r0, r1, c0, c1) = (r0.max(0), r1.min(rows - 1), c0.max(0), c1.min(w - 1));
        }
        for row in r0..=r1 {
            let ky = (row - iy) as i32;
            if (ky as f32 - fy).abs() < r {
                let row = if plane.wrap { row.rem_euclid(rows) } else { row };
                self.rows.push(Row { start: row as usize * plane.w, ky });
            }
        }
        self.lanes = if radius <= NARROW_RADIUS { NARROW } else { LANES };
        let lanes = self.lanes as isize;
        let contiguous = plane.contiguous(self.lanes);
        let mut start = c0;
        while start <= c1 {
            // an east-edge window shifts west; its first lanes are the previous window's
            let col0 = if contiguous { start.min(w - lanes) } else { start };
            let (lo, hi) = (start - col0, (c1 - col0 + 1).min(lanes));
            self.columns.push(Columns { col0, kx: (col0 - ix) as i32, lo: lo as u32, hi: hi as u32 });
            start += lanes;
        }
        let n = self.rows.len() * self.columns.len() * self.lanes;
        if self.weights.len() < n {
            self.weights.resize(n, 0.0);
        }
        let weights = &mut self.weights[..n];
        match self.lanes {
            NARROW => weigh::<NARROW>(&self.rows, &self.columns, weights, fx, fy, r),
            _ => weigh::<LANES>(&self.rows, &self.columns, weights, fx, fy, r),
        }
    }

    /// Removes `scale` times each cell's weight (metres, scaled by its erodibility, never below
    /// `floor`) from the cells of `terrain` (and adds it to `eroded`), which hold the map's
    /// cells from index `base` on. Returns the quanta removed.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn erode(
        &self,
        plane: Plane,
        terrain: &mut [f32],
        eroded: &mut [f32],
        base: usize,
        scale: f64,
        erodibility: Option<&[f32]>,
        floor: f64,
    ) -> i64 {
        let weights = &self.weights[..self.rows.len() * self.columns.len() * self.lanes];
        let (rows, columns) = (&self.rows[..], &self.columns[..]);
        let quanta = match (plane.contiguous(self.lanes), self.lanes) {
            (true, NARROW) => {
                erode_windows::<NARROW>(terrain, eroded, base, rows, columns, weights, scale, erodibility, floor)
            }
            (true, _) => {
                erode_windows::<LANES>(terrain, eroded, base, rows, columns, weights, scale, erodibility, floor)
            }
            (false, lanes) => {
                erode_lanes(plane, lanes, terrain, eroded, base, rows, columns, weights, scale, erodibility, floor)
            }
        };
        quanta as i64
    }
}

/// [`Brush::erode`] lane by lane at the wrapped cells (a brush wider than a wrapping map meets
/// the same cell twice; each sees what the one before did).
#[allow(clippy::too_many_arguments)]
fn erode_lanes(
    plane: Plane,
    lanes: usize,
    terrain: &mut [f32],
    eroded: &mut [f32],
    base: usize,
    rows: &[Row],
    columns: &[Columns],
    weights: &[f64],
    scale: f64,
    erodibility: Option<&[f32]>,
    floor: f64,
) -> f64 {
    let mut total = 0.0;
    for (row, weights) in rows.iter().zip(weights.chunks_exact(columns.len() * lanes)) {
        for (cols, wt) in columns.iter().zip(weights.chunks_exact(lanes)) {
            for l in cols.lo as usize..cols.hi as usize {
                let col = cols.col0 + l as isize;
                let cell = row.start + if plane.wrap { col.rem_euclid(plane.w as isize) } else { col } as usize;
                let r = erodibility.map_or(1.0, |h| f64::from(h[cell]));
                total += erode_cell(scale * wt[l], r, &mut terrain[cell - base], &mut eroded[cell - base], floor);
            }
        }
    }
    total
}

/// Weights `max(0, radius − distance)` of every window's lanes, in weight units (distances in
/// f32: `fx`, `fy` are the droplet's position within its cell). Returns their total.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512cd+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.2"
))]
fn weigh<const N: usize>(rows: &[Row], columns: &[Columns], weights: &mut [f64], fx: f32, fy: f32, radius: f32) -> f64 {
    let n = columns.len();
    let (windows, _) = weights.as_chunks_mut::<N>();
    for (c, cols) in columns.iter().enumerate() {
        // squared distances along the row, and which lanes are the window's (1) or not (0)
        let (mut dx2, mut live) = ([0.0f32; N], [0.0f32; N]);
        for l in 0..N {
            let dx = (cols.kx + l as i32) as f32 - fx;
            dx2[l] = dx * dx;
            live[l] = if (cols.lo..cols.hi).contains(&(l as u32)) { 1.0 } else { 0.0 };
        }
        for (row, wt) in rows.iter().zip(windows[c..].iter_mut().step_by(n)) {
            let dy = row.ky as f32 - fy;
            let dy2 = dy * dy;
            let v: [f32; N] = std::array::from_fn(|l| ((radius - (dx2[l] + dy2).sqrt()) * live[l]).max(0.0));
            *wt = std::array::from_fn(|l| (f64::from(v[l]) * WEIGHT_UNITS + TWO_52) - TWO_52);
        }
    }
    // whole numbers: the total is exact in any order
    let lanes = windows.iter().fold([0.0f64; N], |acc, wt| std::array::from_fn(|l| acc[l] + wt[l]));
    lanes.iter().sum()
}

/// [`Brush::erode`] on windows of consecutive cells, whole windows at a time.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512cd+avx512dq+avx512vl+avx2+fma",
    "x86_64+avx2+fma",
    "x86_64+sse4.2"
))]
#[allow(clippy::too_many_arguments)]
fn erode_windows<const N: usize>(
    terrain: &mut [f32],
    eroded: &mut [f32],
    base: usize,
    rows: &[Row],
    columns: &[Columns],
    weights: &[f64],
    scale: f64,
    erodibility: Option<&[f32]>,
    floor: f64,
) -> f64 {
    let mut lanes = [0.0f64; N];
    let (windows, _) = weights.as_chunks::<N>();
    for (row, weights) in rows.iter().zip(windows.chunks_exact(columns.len())) {
        for (cols, wt) in columns.iter().zip(weights) {
            let first = row.start + cols.col0 as usize;
            let held = first - base..first - base + N;
            let (t, e) = (&mut terrain[held.clone()], &mut eroded[held]);
            match erodibility {
                Some(h) => {
                    let h = &h[first..first + N];
                    for l in 0..N {
                        lanes[l] += erode_cell(scale * wt[l], f64::from(h[l]), &mut t[l], &mut e[l], floor);
                    }
                }
                None => {
                    for l in 0..N {
                        lanes[l] += erode_cell(scale * wt[l], 1.0, &mut t[l], &mut e[l], floor);
                    }
                }
            }
        }
    }
    lanes.iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    /// The brush by brute force: every cell near `(x, y)`, weighed as the windows weigh it, at
    /// its (wrapped) cell. Returns the total weight and the quanta removed.
    #[allow(clippy::too_many_arguments)]
    fn reference(
        plane: Plane,
        terrain: &mut [f32],
        eroded: &mut [f32],
        erodibility: &[f32],
        x: f64,
        y: f64,
        radius: f64,
        amount: f64,
        floor: f64,
    ) -> (f64, i64) {
        let (ix, iy) = (floor_i(x), floor_i(y));
        let (fx, fy) = ((x - ix as f64) as f32, (y - iy as f64) as f32);
        let reach = radius.ceil() as isize + 1;
        let mut cells = Vec::new();
        for ky in -reach..=reach {
            for kx in -reach..=reach {
                let (dx, dy) = (kx as f32 - fx, ky as f32 - fy);
                let v = radius as f32 - (dx * dx + dy * dy).sqrt();
                let (col, row) = (ix + kx, iy + ky);
                let (w, h) = (plane.w as isize, plane.rows as isize);
                let cell = if plane.wrap {
                    (row.rem_euclid(h) * w + col.rem_euclid(w)) as usize
                } else if (0..w).contains(&col) && (0..h).contains(&row) {
                    (row * w + col) as usize
                } else {
                    continue;
                };
                if v > 0.0 {
                    cells.push((cell, (f64::from(v) * WEIGHT_UNITS + TWO_52) - TWO_52));
                }
            }
        }
        let total: f64 = cells.iter().map(|c| c.1).sum();
        let mut q = 0.0;
        for (cell, weight) in cells {
            let r = f64::from(erodibility[cell]);
            q += erode_cell(amount / total * weight, r, &mut terrain[cell], &mut eroded[cell], floor);
        }
        (total, q as i64)
    }

    #[test]
    fn windows_erode_every_cell_within_the_radius_once_as_brute_force_does() {
        let mut rng = SplitMix64::keyed(7, 0);
        // wide maps run whole windows (shifted at the east edge), narrow or wrapping ones lane by lane
        let planes = [
            Plane { w: 40, rows: 30, wrap: false },
            Plane { w: 16, rows: 20, wrap: false },
            Plane { w: 9, rows: 12, wrap: false },
            Plane { w: 40, rows: 36, wrap: true },
        ];
        let mut brush = Brush::default();
        let mut cases = 0;
        for plane in planes {
            let n = plane.w * plane.rows;
            let floor = -1.0;
            for k in 0..400 {
                let radius = [0.5, 1.0, 1.5, 3.0, 5.0, 7.9, 8.0, 8.5, 12.0, 17.3][k % 10];
                if plane.wrap && 2.0 * (radius + 2.0) > plane.rows as f64 {
                    continue;
                }
                // heights near the floor, so some cells yield less than their share
                let terrain: Vec<f32> = (0..n).map(|_| (floor + rng.next_f64() * 0.02) as f32).collect();
                let erodibility: Vec<f32> = (0..n).map(|_| rng.next_f64() as f32).collect();
                let eroded: Vec<f32> = (0..n).map(|_| rng.next_f64() as f32).collect();
                let (x, y) = (rng.next_f64() * (plane.w - 1) as f64, rng.next_f64() * (plane.rows - 1) as f64);
                let amount = rng.next_f64() * 0.05;
                let (mut t1, mut e1) = (terrain.clone(), eroded.clone());
                let total = brush.lay(plane, x, y, radius);
                if total == 0.0 {
                    // no cell within the circle: the caller erodes the corners instead
                    assert!(radius < 1.0, "radius {radius} at ({x}, {y}) holds no cell");
                    continue;
                }
                let q1 = brush.erode(plane, &mut t1, &mut e1, 0, amount / total, Some(&erodibility), floor);
                let (mut t2, mut e2) = (terrain, eroded);
                let (total2, q2) = reference(plane, &mut t2, &mut e2, &erodibility, x, y, radius, amount, floor);
                let at = format!("map {}x{} wrap {} at ({x}, {y}) radius {radius}", plane.w, plane.rows, plane.wrap);
                assert_eq!(total, total2, "{at}: total weight");
                assert_eq!(q1, q2, "{at}: quanta");
                assert!(q1 > 0, "{at}: nothing eroded");
                for i in 0..n {
                    assert_eq!(t1[i].to_bits(), t2[i].to_bits(), "{at}: height of cell {i}");
                    assert_eq!(e1[i].to_bits(), e2[i].to_bits(), "{at}: eroded of cell {i}");
                }
                cases += 1;
            }
        }
        assert!(cases > 1300, "{cases} cases");
    }
}
