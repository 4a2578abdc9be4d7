//! The flow graph: where water goes on a grid of heights, built once and shared by every eroder
//! and the analysis, as fastscapelib's one flow graph serves all of its eroders. The
//! stream-power model erodes along it, `erode analyze` measures drainage on it, and the grid
//! model's steady start reads its discharge.
//!
//! | stage | file |
//! | --- | --- |
//! | the eight neighbours, one table | [`neighbours`] |
//! | the cells and which hold data | [`domain`], [`routing::Cells`] |
//! | depressions filled by Priority-Flood (Barnes, Lehman & Mulla 2014), on a bucket queue of heights | [`fill`], `height_queue` |
//! | D8 receivers (O'Callaghan & Mark 1984; Rho8, Fairfield & Leymarie 1991), flats, the stack (Braun & Willett 2013), drainage area | [`routing`] |
//! | closed depressions through a basin graph (Cordonnier, Bovy & Braun 2019) | [`depressions`], [`lakes`] |
//! | multiple flow directions (Freeman 1991) and their drainage area | [`multiple`] |
//! | visiting cells in dependency order on every thread | [`dependency`] |
//!
//! Every pass gives the same bits on any thread count: rows computed cell by cell, trees in a
//! fixed number of groups, sums reduced in order.

pub mod dependency;
pub mod depressions;
pub mod domain;
pub mod fill;
mod height_queue;
pub mod lakes;
pub mod multiple;
pub mod neighbours;
pub mod routing;

pub use domain::Domain;
