//! Water entering and leaving a run while it goes: emitters (a disc or rectangle that water
//! leaves at a set velocity and rate, m³/s) and sinks (boxes that take every particle entering
//! them), with a cap on the particles alive at once. Particles leaving the domain are taken out
//! as they always were; a sink is the same for a region inside it.
//!
//! An emitter releases water in layers: its opening is covered by a square lattice of the run's
//! particle spacing, and each time the volume it owes (`rate·Δt` per step) reaches one layer
//! (`points·spacing³`), a particle is put at each point, moving at the emitter's velocity. At the
//! rate the opening carries at its speed (`points·spacing²·|v|`, the default) each layer has
//! moved one spacing by the time the next comes, so the stream enters at the fluid's rest
//! density; a faster rate would pack the layers closer than that and is refused.

use glam::DVec3;

use super::mesh::TriMesh;
use crate::error::ParamError;

/// Where water enters: an opening (a disc of `radius`, or a rectangle of `size`) across
/// `velocity`, centred at `centre`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Emitter {
    /// Centre of the opening, metres.
    pub centre: [f64; 3],
    /// Velocity of the water leaving it, m/s (the opening faces along it; not zero).
    pub velocity: [f64; 3],
    /// Radius of a round opening, metres (0: the rectangle of `size`).
    #[serde(default)]
    pub radius: f64,
    /// Width and height of a rectangular opening, metres: the width horizontal and across the
    /// velocity (along y if the velocity is vertical), the height across both.
    #[serde(default)]
    pub size: [f64; 2],
    /// Volume of water per second, m³/s. Default 0: what the opening carries at its speed
    /// (its area times the speed), the most it may.
    #[serde(default)]
    pub rate: f64,
}

/// A box that takes out every particle entering it (its water and sediment booked as outflow).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sink {
    /// Smallest corner, metres.
    pub min: [f64; 3],
    /// Largest corner, metres.
    pub max: [f64; 3],
}

impl Sink {
    /// Whether `x` is inside.
    pub fn contains(&self, x: DVec3) -> bool {
        (0..3).all(|k| x[k] >= self.min[k] && x[k] <= self.max[k])
    }
}

/// The water a run gains and loses while it goes.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Inflow {
    /// Where water enters.
    #[serde(default)]
    pub emitters: Vec<Emitter>,
    /// Where water leaves (besides the domain's edges).
    #[serde(default)]
    pub sinks: Vec<Sink>,
    /// Particles alive at most; emitters wait while a layer would go past it (the water they
    /// would have let in is booked as `inflow_held`). Default 0: 4x the starting particles, at
    /// least 10,000.
    #[serde(default)]
    pub particle_cap: usize,
}

/// Why an emitter, sink or cap cannot be used.
fn bad(name: &'static str, value: f64, expected: &'static str) -> ParamError {
    ParamError { name, value, expected }
}

impl Emitter {
    /// Unit vectors across the velocity: the width's (horizontal) and the height's.
    fn across(&self) -> (DVec3, DVec3) {
        let v = DVec3::from(self.velocity).normalize_or_zero();
        let side = v.cross(DVec3::Z);
        let width = if side.length() > 1e-9 { side.normalize() } else { DVec3::Y };
        (width, v.cross(width).normalize_or_zero())
    }

    /// The opening's area, m².
    pub fn area(&self) -> f64 {
        if self.radius > 0.0 { std::f64::consts::PI * self.radius * self.radius } else { self.size[0] * self.size[1] }
    }

    /// Where one layer's particles start: a square lattice of `spacing` over the opening (at
    /// least its centre).
    pub fn points(&self, spacing: f64) -> Vec<DVec3> {
        let (u, w) = self.across();
        let centre = DVec3::from(self.centre);
        let (half_u, half_w) =
            if self.radius > 0.0 { (self.radius, self.radius) } else { (0.5 * self.size[0], 0.5 * self.size[1]) };
        let (nu, nw) = ((half_u / spacing).floor() as i64, (half_w / spacing).floor() as i64);
        let mut points = Vec::new();
        for j in -nw..=nw {
            for i in -nu..=nu {
                let (a, b) = (i as f64 * spacing, j as f64 * spacing);
                if self.radius > 0.0 && a * a + b * b > self.radius * self.radius {
                    continue;
                }
                points.push(centre + u * a + w * b);
            }
        }
        if points.is_empty() {
            points.push(centre);
        }
        points
    }

    /// The emitter's rate, m³/s: its own or what its opening carries at its speed.
    pub fn rate_at(&self, spacing: f64) -> f64 {
        if self.rate > 0.0 { self.rate } else { self.max_rate(spacing) }
    }

    /// The most the opening carries: its layer's volume each time the water has moved one
    /// spacing, m³/s.
    pub fn max_rate(&self, spacing: f64) -> f64 {
        self.points(spacing).len() as f64 * spacing * spacing * DVec3::from(self.velocity).length()
    }

    /// Checks the emitter's own values (the mesh and domain are checked by [`Inflow::check`]).
    fn validate(&self, spacing: f64) -> Result<(), ParamError> {
        let finite = |v: &[f64]| v.iter().all(|c| c.is_finite());
        if !finite(&self.centre) || !finite(&self.size) || !self.radius.is_finite() || !self.rate.is_finite() {
            return Err(bad("emitter", f64::NAN, "finite numbers"));
        }
        let speed = DVec3::from(self.velocity).length();
        if !(speed > 0.0 && speed.is_finite()) {
            return Err(bad("emitter velocity", speed, "a speed > 0 m/s"));
        }
        let rect = self.size[0] > 0.0 && self.size[1] > 0.0;
        if (self.radius > 0.0) == rect || self.radius < 0.0 || self.size.iter().any(|&s| s < 0.0) {
            return Err(bad("emitter radius", self.radius, "either a radius > 0 m or a size [width, height] > 0 m"));
        }
        if self.area() > 1e6 * spacing * spacing {
            return Err(bad("emitter radius", self.radius.max(self.size[0]), "an opening of at most 10^6 particles"));
        }
        if self.rate < 0.0 || self.rate > self.max_rate(spacing) * (1.0 + 1e-9) {
            return Err(bad(
                "emitter rate",
                self.rate,
                "0 to what the opening carries at its speed (its points x spacing² x speed; 0 = that)",
            ));
        }
        Ok(())
    }
}

impl Inflow {
    /// Whether any water comes in or goes out other than over the domain's edges.
    pub fn is_empty(&self) -> bool {
        self.emitters.is_empty() && self.sinks.is_empty()
    }

    /// The cap on particles alive with `start` particles at the start.
    pub fn cap(&self, start: usize) -> usize {
        if self.particle_cap > 0 { self.particle_cap } else { (4 * start).max(10_000) }
    }

    /// Checks emitters, sinks and cap against the mesh: an emitter's points are out of the
    /// solid (at least half a spacing from any face, on the fluid side); a layer fits under the
    /// cap. (That the openings lie in the run's domain is checked with the domain, by
    /// [`super::CpuSim::new`].)
    pub fn check(&self, mesh: &TriMesh, spacing: f64, start: usize) -> Result<(), ParamError> {
        let cap = self.cap(start);
        if cap > u32::MAX as usize / 2 {
            return Err(bad("particle_cap", cap as f64, "at most 2^31 particles"));
        }
        if start > cap {
            return Err(bad("particle_cap", cap as f64, "at least the particles the run starts with"));
        }
        for s in &self.sinks {
            if !(0..3).all(|k| s.min[k].is_finite() && s.max[k].is_finite() && s.min[k] < s.max[k]) {
                return Err(bad("sink", f64::NAN, "finite corners with min < max on every axis"));
            }
        }
        for e in &self.emitters {
            e.validate(spacing)?;
            let points = e.points(spacing);
            if points.len() > cap {
                return Err(bad("particle_cap", cap as f64, "at least one layer of every emitter"));
            }
            if super::state::solid_points(mesh, spacing, &points) > 0 {
                return Err(bad(
                    "emitter centre",
                    e.centre[0],
                    "an opening in open space, not in or within half a spacing of the solid",
                ));
            }
        }
        Ok(())
    }

    /// Bytes for the run's input hash.
    pub fn hash_bytes(&self, bytes: &mut Vec<u8>) {
        for e in &self.emitters {
            e.centre
                .iter()
                .chain(&e.velocity)
                .chain(&[e.radius])
                .chain(&e.size)
                .chain(&[e.rate])
                .for_each(|c| bytes.extend(c.to_le_bytes()));
        }
        for s in &self.sinks {
            s.min.iter().chain(&s.max).for_each(|c| bytes.extend(c.to_le_bytes()));
        }
        bytes.extend((self.particle_cap as u64).to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_opening_is_covered_by_its_lattice_and_carries_its_area_times_its_speed() {
        let s = 0.01;
        let disc = Emitter { centre: [0.0; 3], velocity: [0.0, 0.0, -2.0], radius: 0.1, size: [0.0; 2], rate: 0.0 };
        let points = disc.points(s);
        // a lattice of 1 cm over a disc of 10 cm: ~π·100 points, all within the disc, across v
        assert!((points.len() as f64 - std::f64::consts::PI * 100.0).abs() < 15.0, "{}", points.len());
        assert!(points.iter().all(|p| p.z == 0.0 && p.length() <= 0.1 + 1e-12));
        assert!((disc.max_rate(s) / (disc.area() * 2.0) - 1.0).abs() < 0.05);
        let rect =
            Emitter { centre: [1.0, 0.0, 0.0], velocity: [3.0, 0.0, 0.0], radius: 0.0, size: [0.2, 0.1], rate: 0.0 };
        let points = rect.points(s);
        assert_eq!(points.len(), 21 * 11);
        // width along y (horizontal, across +x), height along z
        let span = |k: usize| {
            points.iter().map(|p| p[k]).fold(f64::MIN, f64::max) - points.iter().map(|p| p[k]).fold(f64::MAX, f64::min)
        };
        assert!((span(1) - 0.2).abs() < 1e-9 && (span(2) - 0.1).abs() < 1e-9 && span(0) == 0.0);
        for (e, ok) in [
            (Emitter { rate: rect.max_rate(s) * 1.01, ..rect }, false),
            (Emitter { rate: rect.max_rate(s) * 0.5, ..rect }, true),
            (Emitter { velocity: [0.0; 3], ..rect }, false),
            (Emitter { radius: 0.1, ..rect }, false),
            (Emitter { size: [0.0; 2], ..rect }, false),
        ] {
            assert_eq!(e.validate(s).is_ok(), ok, "{e:?}");
        }
    }
}
