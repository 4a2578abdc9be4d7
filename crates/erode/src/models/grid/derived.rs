//! Coefficients computed once from `Params` and the cell size, and the stable time step.
//!
//! Stability of the pipe model. Linearised, the water surface `η` obeys
//! `d²η/dt² = A·g/(lx·ly) · Σ_pipes (η_nb − η)/l_e`, integrated with symplectic Euler (fluxes
//! first, then depths with the new fluxes), which is stable while `ω·Δt <= 2` for the fastest
//! mode. With `a = 2/lx`, `b = 2/ly`, `c = 2/l_diag` the fastest mode's
//! `ω² = A·g/(lx·ly) · max(2a + 2b, 2a + 4c, 2b + 4c)` (the last two only with diagonal pipes):
//! the sum over pipe pairs of `2(1 − cos k·e)/l_e` is bilinear in `(cos kx, cos ky)`, so its
//! maximum is at a corner. One-way pipes double `ω²` once both pipes of an interface carry water,
//! hence half the stable `Δt²`. On square cells with 4 pipes this is `g·A·Δt²/l³ <= 0.5`
//! (signed) and `<= 0.25` (one-way).
//!
//! Thermal erosion moves up to `Kt·Δt·R·H/2` from each of up to 8 donors into one cell; with
//! `Kt·Δt <= 2/9` no cell is lifted above its donors, so sub-steps also keep that bound.

use super::params::{FluxForm, Params};
use super::topology::{pipe_length, unit};
use crate::grid::CellSize;

/// Largest `Kt·Δt` of one sub-step (see the module docs).
pub const MAX_THERMAL_STEP: f64 = 2.0 / 9.0;

/// Coefficients of one sub-step.
#[derive(Clone, Debug, PartialEq)]
pub struct Derived {
    /// Sub-steps per iteration.
    pub substeps: u32,
    /// Time step of one sub-step, s.
    pub dt: f64,
    /// The largest stable water time step, s.
    pub stable_dt: f64,
    /// Cell area, m².
    pub area: f64,
    /// Pipe cross-section, m².
    pub pipe_area: f64,
    /// Flux gain per unit height difference per sub-step, `Δt·A·g/l_e`, m²/s, per direction.
    pub pipe_gain: [f32; 8],
    /// Unit vector of each direction, x (east) part.
    pub unit_x: [f32; 8],
    /// Unit vector of each direction, y (south) part.
    pub unit_y: [f32; 8],
    /// Distance between cell centres per direction, m.
    pub distance: [f32; 8],
}

impl Params {
    /// Cross-section of the pipes, m²: `pipe_area`, or the cell area when it is 0.
    pub fn pipe_cross_section(&self, cell: CellSize) -> f64 {
        if self.pipe_area > 0.0 { self.pipe_area } else { cell.area() }
    }

    /// The largest stable time step of the water flow, s, for these parameters and cells.
    pub fn stable_dt(&self, cell: CellSize) -> f64 {
        let (a, b) = (2.0 / cell.x, 2.0 / cell.y);
        let c = 2.0 / cell.x.hypot(cell.y);
        let mut worst = 2.0 * a + 2.0 * b;
        if self.pipes == 8 {
            worst = worst.max(2.0 * a + 4.0 * c).max(2.0 * b + 4.0 * c);
        }
        let mut omega2 = self.pipe_cross_section(cell) * self.gravity / cell.area() * worst;
        if self.flux_form == FluxForm::OneWay {
            omega2 *= 2.0;
        }
        2.0 / omega2.sqrt()
    }

    /// Sub-steps per iteration: enough that each is within the stable water step and the thermal
    /// bound.
    pub fn substeps(&self, cell: CellSize) -> u32 {
        let water = (self.dt / self.stable_dt(cell)).ceil();
        let thermal = (self.thermal_rate * self.dt / MAX_THERMAL_STEP).ceil();
        water.max(thermal).clamp(1.0, f64::from(u32::MAX)) as u32
    }

    /// Everything both backends need, computed once.
    pub fn derived(&self, cell: CellSize) -> Derived {
        self.derived_with_substeps(cell, self.substeps(cell))
    }

    /// [`Params::derived`] with a given number of sub-steps (at least 1), whatever the stability
    /// analysis says.
    pub fn derived_with_substeps(&self, cell: CellSize, substeps: u32) -> Derived {
        let substeps = substeps.max(1);
        let dt = self.dt / f64::from(substeps);
        let pipe_area = self.pipe_cross_section(cell);
        Derived {
            substeps,
            dt,
            stable_dt: self.stable_dt(cell),
            area: cell.area(),
            pipe_area,
            pipe_gain: std::array::from_fn(|e| (dt * pipe_area * self.gravity / pipe_length(cell, e)) as f32),
            unit_x: std::array::from_fn(|e| unit(cell, e).0 as f32),
            unit_y: std::array::from_fn(|e| unit(cell, e).1 as f32),
            distance: std::array::from_fn(|e| pipe_length(cell, e) as f32),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_cell_limits_match_the_known_numbers() {
        let cell = CellSize::square(2.0);
        for (form, limit) in [(FluxForm::OneWay, 0.25), (FluxForm::Signed, 0.5)] {
            let p = Params { flux_form: form, pipe_area: 3.0, ..Default::default() };
            let dt = p.stable_dt(cell);
            let number = p.gravity * 3.0 * dt * dt / 8.0;
            assert!((number - limit).abs() < 1e-12, "{form:?}: {number}");
        }
    }

    #[test]
    fn sub_steps_appear_past_the_limit() {
        let cell = CellSize::square(1.0);
        let p = Params::default();
        let limit = p.stable_dt(cell);
        let under = Params { dt: 0.9 * limit, thermal_rate: 0.0, ..Default::default() };
        let over = Params { dt: 2.5 * limit, thermal_rate: 0.0, ..Default::default() };
        assert_eq!(under.substeps(cell), 1);
        assert_eq!(over.substeps(cell), 3);
    }
}
