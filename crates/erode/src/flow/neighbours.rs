//! The eight neighbours of a cell, one table for every flow routing, analysis and model that
//! works on a cell's eight neighbours. Rows grow southwards (image order). The grid model's
//! pipes number the same steps in pairs (see `models::grid::topology::PIPE_STEPS`).

use crate::grid::CellSize;

/// Row and column steps of the eight neighbours: east, west, south, north, then the diagonals
/// south-east, south-west, north-east, north-west. Rows grow southwards.
pub const STEPS: [(isize, isize); 8] = [(0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (1, -1), (-1, 1), (-1, -1)];

/// The neighbour of cell `i` in direction `k` of [`STEPS`] on a `width` x `height` grid, if on it.
#[inline]
pub fn neighbour_on(width: usize, height: usize, i: usize, k: usize) -> Option<usize> {
    let (r, c) = ((i / width) as isize, (i % width) as isize);
    let (dr, dc) = STEPS[k];
    let (nr, nc) = (r + dr, c + dc);
    if nr < 0 || nc < 0 || nr >= height as isize || nc >= width as isize {
        None
    } else {
        Some(nr as usize * width + nc as usize)
    }
}

/// The direction opposite each of [`STEPS`].
pub const OPPOSITE: [u8; 8] = [1, 0, 3, 2, 7, 6, 5, 4];

/// Whether direction `k` of [`STEPS`] is diagonal.
#[inline]
pub fn diagonal(k: usize) -> bool {
    STEPS[k].0 != 0 && STEPS[k].1 != 0
}

/// The direction of [`STEPS`] from cell `i` to cell `j` on a grid `width` cells wide, if they
/// are neighbours.
pub fn direction_to(width: usize, i: usize, j: usize) -> Option<u8> {
    let w = width as isize;
    let (i, j) = (i as isize, j as isize);
    let step = (j / w - i / w, j % w - i % w);
    STEPS.iter().position(|&s| s == step).map(|k| k as u8)
}

/// Distance between the centres of a cell and its neighbour in each direction of [`STEPS`], m.
pub fn distances(cell: CellSize) -> [f64; 8] {
    STEPS.map(|step| match step {
        (0, _) => cell.x,
        (_, 0) => cell.y,
        _ => cell.x.hypot(cell.y),
    })
}

/// Index steps of [`STEPS`] on a row-major grid `width` cells wide.
pub fn offsets(width: usize) -> [isize; 8] {
    STEPS.map(|(dr, dc)| dr * width as isize + dc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opposite_steps_cancel_and_directions_are_found_back() {
        for k in 0..8 {
            let (a, b) = (STEPS[k], STEPS[OPPOSITE[k] as usize]);
            assert_eq!((a.0 + b.0, a.1 + b.1), (0, 0));
            let i = 5 * 7 + 3;
            let j = (i as isize + offsets(7)[k]) as usize;
            assert_eq!(direction_to(7, i, j), Some(k as u8));
            assert_eq!(neighbour_on(7, 9, i, k), Some(j));
        }
        assert_eq!(direction_to(7, 0, 20), None);
    }
}
