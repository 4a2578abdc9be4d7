//! The thermal model under the run contract, and how front ends make it from the list.

use std::time::Duration;

use super::cpu::CpuSim;
use super::params::{Params, preset};
use super::state::{State, params_fingerprint};
use crate::SimError;
use crate::contract::{Balance, Model, Term, Unit, edit_len, not_editable};
use crate::models::make::{Inputs, Make};

/// A thermal run: parameters, state and simulator.
pub struct ThermalRun {
    state: State,
    sim: CpuSim,
}

impl ThermalRun {
    /// A run of `params` from `state`.
    pub fn new(params: Params, state: State) -> Result<Self, SimError> {
        let sim = CpuSim::new(params, &state)?;
        Ok(Self { state, sim })
    }

    /// The state.
    pub fn state(&self) -> &State {
        &self.state
    }
}

impl Make for ThermalRun {
    type Params = Params;
    fn preset(name: &str) -> Result<Params, SimError> {
        Ok(preset(name)?)
    }
    fn check(params: &Params) -> Result<(), SimError> {
        Ok(params.validate()?)
    }
    fn start(params: Params, inputs: &Inputs) -> Result<Self, SimError> {
        params.validate()?;
        Self::new(params, State::new(inputs)?)
    }
    fn resume(params: Params, bytes: &[u8], max_cells: u64) -> Result<Self, SimError> {
        let state = State::from_bytes(bytes, params_fingerprint(&params), max_cells)?;
        Self::new(params, state)
    }
}

impl Model for ThermalRun {
    fn name(&self) -> &'static str {
        super::NAME
    }
    fn unit(&self) -> Unit {
        Unit::Iteration
    }
    fn done(&self) -> u64 {
        self.state.iterations
    }
    fn advance(&mut self, n: u64, progress: &mut dyn FnMut(u64)) -> Result<(), SimError> {
        for _ in 0..n {
            self.sim.step(&mut self.state);
            progress(self.state.iterations);
        }
        Ok(())
    }
    fn sync(&mut self) -> Result<(), SimError> {
        Ok(())
    }
    fn balance(&self) -> Balance {
        let b = &self.state.books;
        let volume = |name, value| Term { name, value, unit: "m³" };
        Balance {
            relative_error: self.state.relative_error(),
            terms: vec![volume("eroded", b.eroded), volume("deposited", b.deposited)],
        }
    }
    fn checkpoint(&self) -> Vec<u8> {
        self.state.to_bytes(self.fingerprint())
    }
    fn editable(&self) -> &'static [&'static str] {
        &["height", "hardness"]
    }
    fn set_map(&mut self, name: &str, values: &[f32]) -> Result<(), SimError> {
        let st = &mut self.state;
        edit_len(name, values, st.width * st.height)?;
        match name {
            "height" => {
                let before = st.volume();
                for (z, &v) in st.terrain.iter_mut().zip(values) {
                    *z = f64::from(v);
                }
                st.start_volume += st.volume() - before;
            }
            "hardness" => {
                st.hardness = Some(values.to_vec());
                // the simulator keeps each cell's slope of repose, from its hardness
                self.sim = CpuSim::new(self.sim.params().clone(), &self.state)?;
            }
            _ => return Err(not_editable(super::NAME, name, self.editable())),
        }
        Ok(())
    }
    fn fingerprint(&self) -> u64 {
        params_fingerprint(self.sim.params())
    }
    fn input_hash(&self) -> u64 {
        self.state.input
    }
    fn stage_times(&self) -> Vec<(&'static str, Duration)> {
        self.sim.stage_times()
    }
    fn map(&self, name: &str) -> Option<Vec<f32>> {
        let st = &self.state;
        match name {
            "height" => Some(st.terrain.iter().map(|&z| z as f32).collect()),
            "change" => Some(st.terrain.iter().zip(&st.start).map(|(&z, &s)| (z - f64::from(s)) as f32).collect()),
            _ => None,
        }
    }
    fn is_finite(&self) -> bool {
        self.state.terrain.iter().all(|z| z.is_finite())
    }
    fn shape(&self) -> Option<(usize, usize, crate::CellSize)> {
        Some((self.state.width, self.state.height, self.state.cell_size))
    }
}
