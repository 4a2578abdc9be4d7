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
    /// This rank's block of the same run cut by `layout` from now on (see the module's text).
    /// Every rank calls it together. A field at a time, each old field let go once sent, so that
    /// a rank holds its block and one field of its new window (and that field's messages) at
    /// most, then the new simulator's scratch beside the old one's for a moment.
    pub fn retile(&mut self, layout: Layout) -> Result<(), SimError> {
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
        // the new window without cells; each field comes in turn and the old one goes, so that
        // a rank holds its old block and a field of its new window (and a field's messages)
        let mut state = self.state.rows(&[]);
        (state.width, state.height) = (cols.len(), rows.len());
        let n = state.len();
        let turns: Vec<(usize, usize, Runs, Runs)> = (0..ranks)
            .map(|d| {
                let (to, from) = ((rank + d) % ranks, (rank + ranks - d) % ranks);
                (to, from, runs_between(old, &layout, rank, to, w), runs_between(old, &layout, from, rank, w))
            })
            .collect();
        let (mut send, mut recv) = (Vec::new(), Vec::new());
        let version = super::super::state::VERSION;
        let (mut olds, mut news) = (self.state.frame_vecs_mut(version), state.frame_vecs_mut(version));
        for (old_field, new_field) in olds.iter_mut().zip(news.iter_mut()) {
            new_field.resize(n);
            for (to, from, out, into) in &turns {
                send.clear();
                let cells = old_field.cells();
                for (c, _) in out {
                    cells.append_to(c.clone(), &mut send);
                }
                let per = cells.bytes_per_cell();
                recv.resize(into.iter().map(|(c, _)| c.len()).sum::<usize>() * per, 0);
                exchange(&*ex, rank, (&send, *to), (&mut recv, *from));
                let mut at = 0;
                let mut fill = new_field.cells_mut();
                for (c, start) in into {
                    fill.fill(*start, &recv[at..at + c.len() * per]);
                    at += c.len() * per;
                }
            }
            old_field.release();
        }
        drop((olds, news));
        // and the sources' rates, the simulator's
        let sources = !self.sim.source_rate().is_empty();
        let mut rates = if sources { vec![0.0; n] } else { Vec::new() };
        for (to, from, out, into) in turns.iter().filter(|_| sources) {
            send.clear();
            for (c, _) in out {
                put_f32s(&mut send, &self.sim.source_rate()[c.clone()]);
            }
            recv.resize(into.iter().map(|(c, _)| c.len()).sum::<usize>() * 4, 0);
            exchange(&*ex, rank, (&send, *to), (&mut recv, *from));
            let mut at = 0;
            for (c, start) in into {
                get_f32s(&recv[at..at + c.len() * 4], &mut rates[*start..start + c.len()]);
                at += c.len() * 4;
            }
        }
        let params = self.sim.params().clone();
        self.state = state;
        (self.sim, self.rows) = Block::stepper(params, &self.state, rates, layout, ex)?;
        Ok(())
    }

}

/// Sends `send` to rank `to` while receiving `recv` from rank `from` (this rank's own: a copy).
fn exchange(ex: &dyn crate::ranks::Exchange, rank: usize, (send, to): (&[u8], usize), (recv, from): (&mut [u8], usize)) {
    if to == rank && from == rank {
        recv.copy_from_slice(send);
    } else {
        ex.shift(send, Some(to), recv, Some(from));
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
