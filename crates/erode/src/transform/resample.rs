//! A map resampled to another size by a separable filter, as image libraries resample pictures
//! (Pillow, libvips): each output cell weighs the source cells around its centre with a kernel,
//! stretched over the source cells it covers when the map shrinks, so shrinking averages instead
//! of aliasing. The map's extent stays: cells grow or shrink to fill it.
//!
//! Cells are areas (a cell's centre at `i + 0.5` cells from the edge), beyond the edge the edge
//! cells repeat, and nodata cells weigh nothing: the valid cells' weights are normalised again
//! (normalised convolution, Knutsson & Westin 1993), and an output cell whose nearest source
//! cell has no data has none either.

use crate::error::{GridError, TransformError};
use crate::grid::{CellSize, Grid, Heightmap};
use crate::par;

/// The kernel that weighs source cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    /// The nearest cell when growing, the mean of the covered cells when shrinking.
    Box,
    /// Linear between the two nearest cells (a tent; bilinear in 2-D).
    Bilinear,
    /// Keys' cubic convolution with a = −0.5 (Catmull–Rom; bicubic in 2-D): passes through the
    /// samples, continuous slopes, reproduces quadratics.
    Cubic,
    /// Lanczos with three lobes: the sharpest, a little ringing at cliffs.
    Lanczos3,
}

impl Filter {
    /// Every filter, in the order the help lists them.
    pub const ALL: [Filter; 4] = [Filter::Box, Filter::Bilinear, Filter::Cubic, Filter::Lanczos3];

    /// The name the command line and docs use.
    pub fn name(self) -> &'static str {
        match self {
            Filter::Box => "box",
            Filter::Bilinear => "bilinear",
            Filter::Cubic => "cubic",
            Filter::Lanczos3 => "lanczos3",
        }
    }

    /// The filter of that name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Half-width of the kernel, in source cells (unstretched).
    fn support(self) -> f64 {
        match self {
            Filter::Box => 0.5,
            Filter::Bilinear => 1.0,
            Filter::Cubic => 2.0,
            Filter::Lanczos3 => 3.0,
        }
    }

    /// The kernel at `x` source cells from an output cell's centre (unstretched).
    fn weight(self, x: f64) -> f64 {
        let a = x.abs();
        match self {
            Filter::Box => f64::from(u8::from((-0.5..0.5).contains(&x))),
            Filter::Bilinear => (1.0 - a).max(0.0),
            Filter::Cubic => {
                // Keys 1981, a = -0.5
                if a < 1.0 {
                    (1.5 * a - 2.5) * a * a + 1.0
                } else if a < 2.0 {
                    ((-0.5 * a + 2.5) * a - 4.0) * a + 2.0
                } else {
                    0.0
                }
            }
            Filter::Lanczos3 => {
                if a == 0.0 {
                    1.0
                } else if a < 3.0 {
                    let p = std::f64::consts::PI * a;
                    3.0 * p.sin() * (p / 3.0).sin() / (p * p)
                } else {
                    0.0
                }
            }
        }
    }
}

/// For each of `n_out` output cells along one axis: the source cells it reads and their weights
/// (summing to 1), source cells past the edge folded onto the edge cell.
fn taps(n_in: usize, n_out: usize, filter: Filter) -> Vec<Vec<(usize, f32)>> {
    let scale = n_in as f64 / n_out as f64;
    let stretch = scale.max(1.0);
    let support = filter.support() * stretch;
    let last = n_in as i64 - 1;
    (0..n_out)
        .map(|i| {
            let centre = (i as f64 + 0.5) * scale - 0.5;
            let mut taps: Vec<(usize, f64)> = Vec::new();
            for s in (centre - support).floor() as i64..=(centre + support).ceil() as i64 {
                let w = filter.weight((s as f64 - centre) / stretch);
                if w == 0.0 {
                    continue;
                }
                let source = s.clamp(0, last) as usize;
                match taps.last_mut() {
                    Some(t) if t.0 == source => t.1 += w,
                    _ => taps.push((source, w)),
                }
            }
            let sum: f64 = taps.iter().map(|t| t.1).sum();
            taps.into_iter().map(|(s, w)| (s, (w / sum) as f32)).collect()
        })
        .collect()
}

/// The nearest source cell of each output cell along one axis.
fn nearest(n_in: usize, n_out: usize) -> Vec<usize> {
    let scale = n_in as f64 / n_out as f64;
    (0..n_out).map(|i| (((i as f64 + 0.5) * scale) as usize).min(n_in - 1)).collect()
}

/// Filters the rows of `values` (rows of `w_in` cells, row-major) across to `w_out` cells each.
fn across_rows(values: &[f32], w_in: usize, w_out: usize, across: &[Vec<(usize, f32)>]) -> Vec<f32> {
    let h = values.len() / w_in.max(1);
    let mut wide = vec![0.0f32; w_out * h];
    par::rows::<1, _, _>(&mut [&mut wide], w_out, |r, out| {
        let source = &values[r * w_in..(r + 1) * w_in];
        for (o, taps) in out[0].iter_mut().zip(across) {
            *o = taps.iter().map(|&(s, w)| f64::from(source[s]) * f64::from(w)).sum::<f64>() as f32;
        }
        [0.0]
    });
    wide
}

/// Filters `wide` (rows of `w_out` cells, every source row) down to `down.len()` rows.
fn down_rows(wide: &[f32], w_out: usize, down: &[Vec<(usize, f32)>]) -> Vec<f32> {
    let mut result = vec![0.0f32; w_out * down.len()];
    par::rows::<1, _, _>(&mut [&mut result], w_out, |r, out| {
        let mut sum = vec![0.0f64; w_out];
        for &(s, w) in &down[r] {
            for (acc, &v) in sum.iter_mut().zip(&wide[s * w_out..(s + 1) * w_out]) {
                *acc += f64::from(v) * f64::from(w);
            }
        }
        for (o, s) in out[0].iter_mut().zip(sum) {
            *o = s as f32;
        }
        [0.0]
    });
    result
}

/// The heights and the weight of the valid cells to filter (normalised convolution): a nodata
/// cell weighs 0 and counts as 0 m, whatever its height.
fn weighted(values: &[f32], mask: &[bool]) -> [Vec<f32>; 2] {
    let weight: Vec<f32> = mask.iter().map(|&m| if m { 0.0 } else { 1.0 }).collect();
    let heights = values.iter().zip(mask).map(|(&h, &m)| if m { 0.0 } else { h }).collect();
    [heights, weight]
}

/// A resampling to `width` x `height` cells of a map of `w_in` x `h_in`, as [`resample`] does
/// it, in two passes that the holders of a map's blocks of rows (the ranks of a run) share:
/// each filters its own rows across ([`ByRows::across`]), then one gathers those rows of every
/// block, in row order, and filters them down ([`ByRows::down`]). The bits of [`resample`].
#[derive(Clone, Debug)]
pub struct ByRows {
    w_in: usize,
    cell_size: CellSize,
    width: usize,
    across: Vec<Vec<(usize, f32)>>,
    down: Vec<Vec<(usize, f32)>>,
    near_col: Vec<usize>,
    near_row: Vec<usize>,
}

/// One block of rows filtered across (see [`ByRows::across`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Across {
    /// The rows filtered across: the heights, and with nodata cells the valid cells' weight
    /// (each `rows x width` cells).
    pub wide: Vec<Vec<f32>>,
    /// With nodata cells, for the output rows whose nearest source row is in the block (in
    /// order): the source cells nearest each output column, then whether each is nodata (1)
    /// or not (0).
    pub nearest: Vec<f32>,
}

impl ByRows {
    /// The resampling of a map of `w_in` x `h_in` cells of `cell` to `width` x `height` with
    /// `filter` (see [`resample`]).
    pub fn new(
        (w_in, h_in, cell): (usize, usize, CellSize),
        width: usize,
        height: usize,
        filter: Filter,
    ) -> Result<Self, TransformError> {
        if width == 0 || height == 0 {
            return Err(GridError::Empty { width, height }.into());
        }
        width.checked_mul(height).ok_or(GridError::TooLarge { width, height })?;
        Ok(Self {
            w_in,
            cell_size: CellSize { x: cell.x * w_in as f64 / width as f64, y: cell.y * h_in as f64 / height as f64 },
            width,
            across: taps(w_in, width, filter),
            down: taps(h_in, height, filter),
            near_col: nearest(w_in, width),
            near_row: nearest(h_in, height),
        })
    }

    /// Columns of the resampled map.
    pub fn width(&self) -> usize {
        self.width
    }

    /// How many values of [`Across::nearest`] a block of source rows `rows` gives, of a map
    /// with nodata cells (`masked`) or without.
    pub fn nearest_len(&self, rows: std::ops::Range<usize>, masked: bool) -> usize {
        if !masked {
            return 0;
        }
        self.near_row.iter().filter(|r| rows.contains(r)).count() * self.width * 2
    }

    /// Source rows `rows` of the map, `values` (row-major) with their `nodata` (`Some` on every
    /// block when any cell of the map is nodata, else `None` on every block), filtered across.
    pub fn across(&self, rows: std::ops::Range<usize>, values: &[f32], nodata: Option<&[bool]>) -> Across {
        let Some(mask) = nodata else {
            return Across {
                wide: vec![across_rows(values, self.w_in, self.width, &self.across)],
                nearest: Vec::new(),
            };
        };
        let wide = weighted(values, mask).map(|v| across_rows(&v, self.w_in, self.width, &self.across)).into();
        let mut nearest = Vec::new();
        for &r in self.near_row.iter().filter(|r| rows.contains(r)) {
            let at = (r - rows.start) * self.w_in;
            nearest.extend(self.near_col.iter().map(|&c| values[at + c]));
            nearest.extend(self.near_col.iter().map(|&c| f32::from(u8::from(mask[at + c]))));
        }
        Across { wide, nearest }
    }

    /// The resampled map from every block's [`Across`] joined in row order: each of `wide`
    /// the blocks' in turn, `nearest` too.
    pub fn down(&self, wide: &[Vec<f32>], nearest: &[f32]) -> Result<Heightmap, TransformError> {
        let (width, height) = (self.width, self.down.len());
        let short = || TransformError::from(GridError::LengthMismatch { width, height, len: nearest.len() });
        let [sum, weight] = match wide {
            [heights] => {
                let heights = down_rows(heights, width, &self.down);
                return Ok(Heightmap::new(Grid::from_vec(width, height, self.cell_size, heights)?)?);
            }
            [sum, weight] => [down_rows(sum, width, &self.down), down_rows(weight, width, &self.down)],
            _ => return Err(short()),
        };
        if nearest.len() != height * width * 2 {
            return Err(short());
        }
        let mut heights = vec![0.0f32; width * height];
        let mut out_mask = vec![false; width * height];
        for (r, near) in nearest.chunks_exact(width * 2).enumerate() {
            let (values, mask) = near.split_at(width);
            for c in 0..width {
                let i = r * width + c;
                if mask[c] != 0.0 {
                    out_mask[i] = true;
                } else if weight[i] > 0.25 {
                    heights[i] = sum[i] / weight[i];
                } else {
                    // mostly nodata around it (or cancelling lobes): the nearest valid cell
                    heights[i] = values[c];
                }
            }
        }
        Ok(Heightmap::with_nodata(Grid::from_vec(width, height, self.cell_size, heights)?, Some(out_mask))?)
    }
}

/// `map` resampled to `width` x `height` cells with `filter`, covering the same extent: the cell
/// size becomes the old one times the old count over the new, per axis. The same bits on any
/// number of threads, and in blocks of rows ([`ByRows`]).
pub fn resample(map: &Heightmap, width: usize, height: usize, filter: Filter) -> Result<Heightmap, TransformError> {
    let g = &map.heights;
    let by_rows = ByRows::new((g.width(), g.height(), g.cell_size()), width, height, filter)?;
    let Across { wide, nearest } = by_rows.across(0..g.height(), g.as_slice(), map.nodata_mask());
    by_rows.down(&wide, &nearest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map_of(width: usize, height: usize, f: impl Fn(f64, f64) -> f64) -> Heightmap {
        // f of the cell centre's position in source cells
        let g = Grid::from_fn(width, height, CellSize::square(10.0), |r, c| f(c as f64 + 0.5, r as f64 + 0.5) as f32);
        Heightmap::new(g.unwrap()).unwrap()
    }

    #[test]
    fn blocks_of_rows_filtered_across_then_down_give_the_bits_of_one_resample() {
        let m = map_of(301, 203, |x, y| (x * 0.31).sin() * 40.0 + (y * 0.07).cos() * 25.0 - 3.0);
        let holes: Vec<bool> =
            (0..301 * 203usize).map(|i| (i / 301).abs_diff(90) + (i % 301).abs_diff(150) < 30).collect();
        let holed = Heightmap::with_nodata(m.heights.clone(), Some(holes)).unwrap();
        for (map, filter) in [(&m, Filter::Box), (&holed, Filter::Box), (&holed, Filter::Cubic)] {
            let (w, h) = (71, 48);
            let one = resample(map, w, h, filter).unwrap();
            let by_rows = ByRows::new((301, 203, map.heights.cell_size()), w, h, filter).unwrap();
            for blocks in [2, 3, 7] {
                let parts: Vec<_> = (0..blocks).map(|k| k * 203 / blocks..(k + 1) * 203 / blocks).collect();
                let mut joined = Across {
                    wide: vec![Vec::new(); 1 + usize::from(map.nodata_mask().is_some())],
                    nearest: Vec::new(),
                };
                for rows in parts {
                    let cells = rows.start * 301..rows.end * 301;
                    let nodata = map.nodata_mask().map(|n| &n[cells.clone()]);
                    let part = by_rows.across(rows.clone(), &map.heights.as_slice()[cells], nodata);
                    let nodata = map.nodata_mask();
                    assert_eq!(part.nearest.len(), by_rows.nearest_len(rows, nodata.is_some()));
                    joined.wide.iter_mut().zip(part.wide).for_each(|(j, p)| j.extend(p));
                    joined.nearest.extend(part.nearest);
                }
                assert_eq!(
                    by_rows.down(&joined.wide, &joined.nearest).unwrap(),
                    one,
                    "{blocks} blocks, {}",
                    filter.name()
                );
            }
        }
    }

    #[test]
    fn the_same_size_gives_the_same_map() {
        let m = map_of(17, 9, |x, y| (x * 0.7).sin() * 30.0 + y * y);
        for f in Filter::ALL {
            assert_eq!(resample(&m, 17, 9, f).unwrap(), m, "{}", f.name());
        }
    }

    #[test]
    fn a_smooth_surface_grows_to_within_its_curvature_and_keeps_its_extent() {
        // heights of 100 m waves over 16 cells: the cubic's error is a small fraction of a metre
        let wave = |x: f64, y: f64| 100.0 * (x / 16.0 * std::f64::consts::TAU).sin() * (y / 20.0).cos();
        let m = map_of(64, 48, wave);
        for (f, tolerance) in [(Filter::Cubic, 0.6), (Filter::Lanczos3, 0.6), (Filter::Bilinear, 2.5)] {
            let big = resample(&m, 256, 192, f).unwrap();
            assert_eq!(big.heights.cell_size(), CellSize::square(2.5));
            let mut worst = 0.0f64;
            // away from the edges, where repeating the edge cell bends the surface
            for r in 16..176 {
                for c in 16..240 {
                    let want = wave((c as f64 + 0.5) / 4.0, (r as f64 + 0.5) / 4.0);
                    worst = worst.max((f64::from(big.heights.as_slice()[r * 256 + c]) - want).abs());
                }
            }
            assert!(worst < tolerance, "{}: worst error {worst} m", f.name());
        }
    }

    #[test]
    fn shrinking_keeps_a_plane_and_averages_a_checkerboard_away() {
        let plane = map_of(40, 40, |x, y| 3.0 * x - 2.0 * y + 50.0);
        for f in Filter::ALL {
            let small = resample(&plane, 10, 10, f).unwrap();
            assert_eq!(small.heights.cell_size(), CellSize::square(40.0));
            // where the stretched kernel stays inside the map (Lanczos's reaches 12 cells); its
            // lobes reproduce a plane only to ~1e-4 of the height change across one output cell
            let tolerance = if f == Filter::Lanczos3 { 1e-2 } else { 1e-3 };
            for r in 3..7 {
                for c in 3..7 {
                    let want = 3.0 * (c as f64 + 0.5) * 4.0 - 2.0 * (r as f64 + 0.5) * 4.0 + 50.0;
                    let got = f64::from(small.heights.as_slice()[r * 10 + c]);
                    assert!((got - want).abs() < tolerance, "{} ({r}, {c}): {got} vs {want}", f.name());
                }
            }
        }
        // a one-cell checkerboard has no place at half the resolution: it must average out, not
        // alias into stripes (picking every other cell would leave all 0 or all 10)
        let checker = map_of(32, 32, |x, y| if ((x - 0.5) as i64 + (y - 0.5) as i64) % 2 == 0 { 0.0 } else { 10.0 });
        for f in [Filter::Box, Filter::Bilinear, Filter::Cubic] {
            let small = resample(&checker, 16, 16, f).unwrap();
            let s = small.stats();
            assert!(s.min > 4.0 && s.max < 6.0, "{}: {} .. {}", f.name(), s.min, s.max);
        }
    }

    #[test]
    fn nodata_stays_a_hole_and_does_not_bleed() {
        let plane = |x: f64, y: f64| 2.0 * x + y;
        let mut g = map_of(20, 20, plane).heights;
        let mut mask = vec![false; 400];
        for r in 8..12 {
            for c in 8..12 {
                mask[r * 20 + c] = true;
                g.as_mut_slice()[r * 20 + c] = -9999.0;
            }
        }
        let m = Heightmap::with_nodata(g, Some(mask)).unwrap();
        let big = resample(&m, 40, 40, Filter::Cubic).unwrap();
        // the hole covers the same area: 8 x 8 cells of the doubled map
        assert_eq!(big.nodata_count(), 64);
        assert!(big.is_nodata(16 * 40 + 16) && big.is_nodata(23 * 40 + 23) && !big.is_nodata(15 * 40 + 16));
        // next to the hole the plane continues, no trace of the hole's fill or of -9999: the
        // valid cells' weights alone pull a sample there at most a quarter cell towards them
        // (0.5 m on this plane rising 2 m a source cell)
        for r in 12..28 {
            for c in 12..28 {
                let i = r * 40 + c;
                if !big.is_nodata(i) {
                    let want = plane((c as f64 + 0.5) / 2.0, (r as f64 + 0.5) / 2.0);
                    let got = f64::from(big.heights.as_slice()[i]);
                    assert!((got - want).abs() < 0.5, "({r}, {c}): {got} vs {want}");
                }
            }
        }
    }

    #[test]
    fn zero_sizes_are_refused() {
        let m = map_of(4, 4, |x, _| x);
        assert_eq!(
            resample(&m, 0, 4, Filter::Cubic),
            Err(TransformError::Grid(GridError::Empty { width: 0, height: 4 }))
        );
    }
}
