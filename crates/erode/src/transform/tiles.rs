//! Shared-edge tiles: a map cut into square tiles of `size` samples a side whose neighbours
//! share their border row or column, as engines' terrain tiles do (Unity's terrains of 2^n + 1
//! samples, Unreal's landscape sizes), so the seams match sample for sample.

use crate::error::TransformError;
use crate::transform::Window;

/// Largest tile side, samples.
pub const MAX_TILE: usize = 1 << 16;

/// A map's cut into shared-edge tiles: `across` x `down` tiles of `size` x `size` samples, tile
/// `(row, column)` starting at sample `(row, column) · (size − 1)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tiles {
    /// Samples a side of each tile.
    pub size: usize,
    /// Tiles across (columns of tiles).
    pub across: usize,
    /// Tiles down (rows of tiles).
    pub down: usize,
}

impl Tiles {
    /// The tiles of `size` samples a side over a map of `width` x `height` samples, which must be
    /// `across·(size − 1) + 1` by `down·(size − 1) + 1` ([`Tiles::fit`] gives the nearest such).
    ///
    /// ```
    /// use erode::transform::Tiles;
    /// let t = Tiles::new(97, 65, 33)?;
    /// assert_eq!((t.across, t.down), (3, 2));
    /// assert_eq!(t.window(1, 2).col, 64); // the third tile starts on the second's last column
    /// assert!(Tiles::new(100, 65, 33).is_err());
    /// # Ok::<(), erode::error::TransformError>(())
    /// ```
    pub fn new(width: usize, height: usize, size: usize) -> Result<Self, TransformError> {
        check_size(size)?;
        let step = size - 1;
        let count = |n: usize| (n >= size && (n - 1).is_multiple_of(step)).then_some((n - 1) / step);
        match (count(width), count(height)) {
            (Some(across), Some(down)) => Ok(Self { size, across, down }),
            _ => Err(TransformError::Parameter {
                name: "tile",
                value: size as f64,
                expected: "a side that cuts the map into whole tiles: the map k·(tile − 1) + 1 samples a side",
            }),
        }
    }

    /// The map size nearest `width` x `height` that tiles of `size` cover exactly (each side
    /// `k·(size − 1) + 1`, at least one tile): where to resample a map before cutting it.
    pub fn fit(width: usize, height: usize, size: usize) -> Result<(usize, usize), TransformError> {
        check_size(size)?;
        let step = size - 1;
        let side = |n: usize| ((n.saturating_sub(1) as f64 / step as f64).round() as usize).max(1) * step + 1;
        Ok((side(width), side(height)))
    }

    /// How many tiles.
    pub fn len(&self) -> usize {
        self.across * self.down
    }

    /// Whether there are none (never, for tiles [`Tiles::new`] made).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The window of tile `(row, column)`: `size` x `size` samples from `(row, column)·(size − 1)`.
    pub fn window(&self, row: usize, column: usize) -> Window {
        let step = self.size - 1;
        Window { col: column * step, row: row * step, width: self.size, height: self.size }
    }
}

fn check_size(size: usize) -> Result<(), TransformError> {
    if (2..=MAX_TILE).contains(&size) {
        Ok(())
    } else {
        Err(TransformError::Parameter { name: "tile", value: size as f64, expected: "2 to 65536 samples a side" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_share_their_border_and_the_tiles_cover_the_map() {
        let t = Tiles::new(97, 65, 33).unwrap();
        assert_eq!((t.across, t.down, t.len()), (3, 2, 6));
        let mut covered = vec![0u32; 97 * 65];
        for r in 0..t.down {
            for c in 0..t.across {
                let w = t.window(r, c);
                assert!(w.col + w.width <= 97 && w.row + w.height <= 65);
                for y in w.row..w.row + w.height {
                    for x in w.col..w.col + w.width {
                        covered[y * 97 + x] += 1;
                    }
                }
            }
        }
        // every sample in a tile; the shared borders in two, their crossings in four
        assert!(covered.iter().all(|&n| n >= 1));
        assert_eq!(covered[32 * 97 + 10], 2);
        assert_eq!(covered[32 * 97 + 32], 4);
        assert_eq!(covered[10 * 97 + 10], 1);
    }

    #[test]
    fn fit_rounds_to_whole_tiles_and_bad_sizes_are_refused() {
        assert_eq!(Tiles::fit(1000, 1000, 1025).unwrap(), (1025, 1025));
        assert_eq!(Tiles::fit(4096, 2100, 1025).unwrap(), (4097, 2049));
        assert_eq!(Tiles::fit(10, 10, 1025).unwrap(), (1025, 1025));
        for bad in [0, 1, MAX_TILE + 1] {
            assert!(Tiles::fit(100, 100, bad).is_err() && Tiles::new(100, 100, bad).is_err());
        }
        assert!(Tiles::new(33, 33, 33).is_ok());
        assert!(Tiles::new(32, 33, 33).is_err());
    }
}
