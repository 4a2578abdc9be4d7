//! Undo and redo of edits. A stroke keeps only the rectangle it changed (before and after
//! values), so a long session of small strokes costs little memory.

use erode::models::grid::Source;

use crate::brush::{Canvas, Field, field_mut};

/// The values of one field in a rectangle of cells.
#[derive(Clone, Debug, PartialEq)]
pub struct Patch {
    /// The field.
    pub field: Field,
    /// Columns `c0..c1`, rows `r0..r1`.
    pub rect: (usize, usize, usize, usize),
    /// Values before the edit, row-major over the rectangle.
    pub before: Vec<f32>,
    /// Values after the edit.
    pub after: Vec<f32>,
    /// Whether the field (the rain map) did not exist before the edit.
    pub created: bool,
}

/// One undoable edit.
#[derive(Clone, Debug, PartialEq)]
pub enum Edit {
    /// A brush stroke.
    Stroke(Patch),
    /// The list of river sources changed.
    Sources {
        /// Before.
        before: Vec<Source>,
        /// After.
        after: Vec<Source>,
    },
}

/// The smallest rectangle where `a` and `b` differ bit for bit, as a patch; `None` if equal.
pub fn diff(field: Field, width: usize, a: &[f32], b: &[f32], created: bool) -> Option<Patch> {
    let height = a.len() / width.max(1);
    let (mut c0, mut r0, mut c1, mut r1) = (usize::MAX, usize::MAX, 0, 0);
    for r in 0..height {
        for c in 0..width {
            let i = r * width + c;
            if a[i].to_bits() != b[i].to_bits() {
                c0 = c0.min(c);
                r0 = r0.min(r);
                c1 = c1.max(c + 1);
                r1 = r1.max(r + 1);
            }
        }
    }
    if c0 == usize::MAX && !created {
        return None;
    }
    if c0 == usize::MAX {
        (c0, r0, c1, r1) = (0, 0, 0, 0);
    }
    let take =
        |v: &[f32]| -> Vec<f32> { (r0..r1).flat_map(|r| v[r * width + c0..r * width + c1].iter().copied()).collect() };
    Some(Patch { field, rect: (c0, r0, c1, r1), before: take(a), after: take(b), created })
}

impl Patch {
    /// Writes the patch's before (`undo`) or after values into the canvas.
    pub fn write(&self, canvas: &mut Canvas<'_>, undo: bool) {
        let w = canvas.state.width;
        if undo && self.created {
            canvas.state.rain_map = None;
            return;
        }
        let (c0, r0, c1, r1) = self.rect;
        let src = if undo { &self.before } else { &self.after };
        let field = field_mut(canvas, self.field);
        let cw = c1 - c0;
        for (k, r) in (r0..r1).enumerate() {
            field[r * w + c0..r * w + c1].copy_from_slice(&src[k * cw..(k + 1) * cw]);
        }
    }

    /// Sum over the patch of after − before, in field units × cells.
    pub fn change(&self) -> f64 {
        self.after.iter().zip(&self.before).map(|(&a, &b)| f64::from(a) - f64::from(b)).sum()
    }
}

/// The undo and redo stacks.
#[derive(Default)]
pub struct History {
    undo: Vec<Edit>,
    redo: Vec<Edit>,
}

/// Edits kept for undo; the oldest go first.
const DEPTH: usize = 100;

impl History {
    /// Records a new edit; it clears the redo stack.
    pub fn push(&mut self, e: Edit) {
        self.undo.push(e);
        if self.undo.len() > DEPTH {
            self.undo.remove(0);
        }
        self.redo.clear();
    }

    /// The edit to undo, moved to the redo stack.
    pub fn undo(&mut self) -> Option<Edit> {
        let e = self.undo.pop()?;
        self.redo.push(e.clone());
        Some(e)
    }

    /// The edit to redo, moved back to the undo stack.
    pub fn redo(&mut self) -> Option<Edit> {
        let e = self.redo.pop()?;
        self.undo.push(e.clone());
        Some(e)
    }

    /// (edits that can be undone, edits that can be redone).
    pub fn depth(&self) -> (usize, usize) {
        (self.undo.len(), self.redo.len())
    }
}
