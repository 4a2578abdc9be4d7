//! A run's blocks cut again another way: bands of rows into tiles of rows and columns, or back.
//! Every rank sends every other the cells it owns that the other's new window holds (its own
//! cells and its halos), each per-cell field of the state and the sources' rates, in turns (in
//! turn `d` rank `k` sends to rank `k + d` and hears from rank `k − d`); the new blocks then go
//! on as the old would have, byte for byte. What starts and writes a run by bands of whole rows
//! (the strips of a TIFF, the rows of a checkpoint) can so run it in tiles.

use std::ops::Range;

use super::{Block, BlockError, Layout, get_f32s, put_f32s};
use crate::error::SimError;

/// Runs of cells one rank sends another: `(the sender's cells in its old window, where they
/// start in the receiver's new window)`, in the receiver's window order.
type Runs = Vec<(Range<usize>, usize)>;

impl Block {
    /// This rank's block of the same run cut by `layout` instead (see the module's text). Every
    /// rank calls it together; for the exchange's time a rank holds its old block and its new
    /// window.
    pub fn retile(self, layout: Layout) -> Result<Block, SimError> {
        let old = &self.rows.layout;
        let (w, h) = (self.rows.map_width, old.height);
        let ex = self.rows.exchange.clone();
        let (rank, ranks) = (ex.rank(), ex.ranks());
        if layout.height != h || layout.len() != ranks || layout.columns.is_some_and(|(lw, _)| lw != w) {
            return Err(BlockError::Message(format!(
                "a layout of {} rows over {} ranks for a run of {h} rows over {ranks}",
                layout.height,
                layout.len()
            ))
            .into());
        }
        let (rows, cols) = (layout.window(rank), layout.window_columns(rank, w));
        let mut head = self.state.rows(&[]);
        head.width = cols.len();
        let mut state = head.with_rows(rows.len());
        let mut rates = if self.sim.source_rate().is_empty() { Vec::new() } else { vec![0.0; state.len()] };
        let (mut send, mut recv) = (Vec::new(), Vec::new());
        for d in 0..ranks {
            let (to, from) = ((rank + d) % ranks, (rank + ranks - d) % ranks);
            let out = runs_between(old, &layout, rank, to, w);
            let into = runs_between(old, &layout, from, rank, w);
            send.clear();
            for field in self.state.frame_cells() {
                for (cells, _) in &out {
                    field.append_to(cells.clone(), &mut send);
                }
            }
            for (cells, _) in out.iter().filter(|_| !rates.is_empty()) {
                put_f32s(&mut send, &self.sim.source_rate()[cells.clone()]);
            }
            let cells: usize = into.iter().map(|(c, _)| c.len()).sum();
            let mut fields = state.frame_cells_mut(super::super::state::VERSION);
            let bytes: usize = fields.iter().map(|f| f.bytes_per_cell()).sum::<usize>() + if rates.is_empty() { 0 } else { 4 };
            recv.resize(cells * bytes, 0);
            if d == 0 {
                recv.copy_from_slice(&send);
            } else {
                ex.shift(&send, Some(to), &mut recv, Some(from));
            }
            let mut at = 0;
            for field in &mut fields {
                let per = field.bytes_per_cell();
                for (c, start) in &into {
                    field.fill(*start, &recv[at..at + c.len() * per]);
                    at += c.len() * per;
                }
            }
            drop(fields);
            if !rates.is_empty() {
                for (c, start) in &into {
                    get_f32s(&recv[at..at + c.len() * 4], &mut rates[*start..start + c.len()]);
                    at += c.len() * 4;
                }
            }
        }
        let params = self.sim.params().clone();
        drop(self);
        Block::from_window(params, state, rates, layout, ex)
    }

}

/// The runs of rank `from`'s own cells in `old` that rank `to`'s window in `new` holds, on a map
/// `w` columns wide: the sender and the receiver find the same from the two layouts alone.
fn runs_between(old: &Layout, new: &Layout, from: usize, to: usize, w: usize) -> Runs {
    let (own_rows, own_cols) = (old.owned(from), old.owned_columns(from, w));
    let (in_rows, in_cols) = (old.owned_in_window(from), old.owned_columns_in_window(from, w));
    let old_width = old.window_columns(from, w).len();
    let (rows, cols) = (new.window(to), new.window_columns(to, w));
    let mut runs: Runs = Vec::new();
    for (i, &r) in rows.iter().enumerate() {
        if !own_rows.contains(&r) {
            continue;
        }
        let row = (r - own_rows.start + in_rows.start) * old_width;
        for (j, &c) in cols.iter().enumerate() {
            if !own_cols.contains(&c) {
                continue;
            }
            let cell = row + c - own_cols.start + in_cols.start;
            let place = i * cols.len() + j;
            match runs.last_mut() {
                Some((cells, start)) if cells.end == cell && *start + cells.len() == place => cells.end += 1,
                _ => runs.push((cell..cell + 1, place)),
            }
        }
    }
    runs
}
