//! Whether a map's cells suit a model's parameters. Each model's `Params::scale_note` says when
//! they do not: droplets whose path crosses a handful of cells, stream power (rivers over
//! kilometres and millions of years) on metre cells, the grid's shallow water on kilometre cells.
//! The run still goes ahead; front ends show the note before it starts.

use std::fmt;

/// A model's parameters meeting cells they were not made for.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleNote {
    /// The model, as the command line names it (`grid`, `droplet`, `stream-power`).
    pub model: &'static str,
    /// The map's cell size, metres (the larger axis where they differ).
    pub cell: f64,
    /// Cell sizes the parameters suit, metres: `(smallest, largest)`.
    pub fits: (f64, f64),
    /// What goes wrong on these cells, in a few words.
    pub why: String,
    /// The model to use instead, as the command line names it, where another one fits.
    pub instead: Option<&'static str>,
}

impl ScaleNote {
    /// The cell size, within [`ScaleNote::fits`], nearest to the map's: what a resample should
    /// aim for, metres.
    pub fn nearest_fit(&self) -> f64 {
        self.cell.clamp(self.fits.0, self.fits.1)
    }
}

impl fmt::Display for ScaleNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (lo, hi) = self.fits;
        let range = if lo > 0.0 { format!("cells of {lo} to {hi} m") } else { format!("cells up to {hi} m") };
        write!(
            f,
            "the {} model on cells of {} m: {}; its parameters suit {range}",
            self.model,
            short(self.cell),
            self.why
        )
    }
}

/// A cell size for a message: a few significant figures.
fn short(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v < 0.01 {
        crate::error::short_number(v)
    } else {
        format!("{:.3}", v).trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use crate::CellSize;
    use crate::models::{droplet, grid, stream_power};

    #[test]
    fn each_model_speaks_only_off_its_scale() {
        let d = droplet::Params::default();
        assert_eq!(d.scale_note(CellSize::square(2.0)), None);
        let note = d.scale_note(CellSize::square(30.0)).unwrap();
        assert_eq!((note.instead, note.fits.1), (Some("grid"), 15.0));
        assert!(note.to_string().contains("150 m") && note.to_string().contains("cells of 30 m"), "{note}");

        let s = stream_power::Params::default();
        assert_eq!(s.scale_note(CellSize::square(100.0)), None);
        let note = s.scale_note(CellSize { x: 2.0, y: 2.5 }).unwrap();
        assert_eq!((note.instead, note.cell, note.nearest_fit()), (Some("grid"), 2.5, 10.0));

        let g = grid::Params::default();
        assert_eq!(g.scale_note(CellSize::square(100.0)), None);
        assert_eq!(g.scale_note(CellSize::square(0.5)), None);
        let note = g.scale_note(CellSize::square(1000.0)).unwrap();
        assert_eq!((note.instead, note.nearest_fit()), (Some("stream-power"), 250.0));
        assert!(note.to_string().starts_with("the grid model on cells of 1000 m"), "{note}");
    }
}
