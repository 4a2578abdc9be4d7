//! Closed depressions: connected groups of cells (8-neighbours) that a plain fill raises, i.e.
//! where water would stand with no way out. Counted when their deepest cell is at least a given
//! depth, the usual way to leave out the noise of a DEM's rounding.

use serde::Serialize;

use crate::flow::Domain;

/// What the closed depressions add up to.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Depressions {
    /// Depressions at least `min_depth_m` deep.
    pub count: usize,
    /// `count` per km² of the domain.
    pub per_km2: f64,
    /// Depth a depression needs to count, m.
    pub min_depth_m: f64,
    /// Water they hold when full, m³ (the counted ones).
    pub volume_m3: f64,
    /// Cells in them (the counted ones).
    pub cells: usize,
}

/// The depressions of `z` whose plain fill is `spill`, counting those at least `min_depth` m deep.
pub fn depressions(domain: &Domain<'_>, z: &[f32], spill: &[f32], min_depth: f64) -> Depressions {
    let n = domain.len();
    let mut seen = vec![false; n];
    let mut stack = Vec::new();
    let (mut count, mut volume, mut cells) = (0usize, 0.0f64, 0usize);
    for start in 0..n {
        if seen[start] || !domain.inside(start) || spill[start] <= z[start] {
            continue;
        }
        seen[start] = true;
        stack.push(start);
        let (mut deepest, mut vol, mut size) = (0.0f64, 0.0f64, 0usize);
        while let Some(i) = stack.pop() {
            let depth = f64::from(spill[i]) - f64::from(z[i]);
            deepest = deepest.max(depth);
            vol += depth;
            size += 1;
            for k in 0..8 {
                if let Some(j) = domain.neighbour(i, k)
                    && !seen[j]
                    && domain.inside(j)
                    && spill[j] > z[j]
                {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        if deepest >= min_depth {
            count += 1;
            volume += vol * domain.cell.area();
            cells += size;
        }
    }
    let km2 = domain.valid_cells() as f64 * domain.cell.area() / 1e6;
    Depressions { count, per_km2: count as f64 / km2, min_depth_m: min_depth, volume_m3: volume, cells }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::fill::priority_flood;
    use crate::grid::CellSize;

    #[test]
    fn counts_separate_pits_above_the_depth() {
        // two pits on a slope (one 0.5 m, one 0.001 m deep), 10 m cells
        let (w, h) = (12, 5);
        let mut z: Vec<f32> = (0..w * h).map(|i| 100.0 - (i % w) as f32).collect();
        z[2 * w + 3] -= 1.5; // its lowest neighbour downhill is 1 m lower: 0.5 m deep
        z[2 * w + 8] -= 1.001;
        let d = Domain { width: w, height: h, cell: CellSize::square(10.0), nodata: None };
        let f = priority_flood(&d, &z);
        let all = depressions(&d, &z, &f.spill, 0.0);
        assert_eq!(all.count, 2);
        let deep = depressions(&d, &z, &f.spill, 0.01);
        assert_eq!(deep.count, 1);
        assert!((deep.volume_m3 - 50.0).abs() < 1e-3, "{}", deep.volume_m3);
        assert!((deep.per_km2 - 1.0 / 0.006).abs() < 1e-9);
    }
}
