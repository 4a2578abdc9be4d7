//! What the user tunes in the SPH model. SI units throughout: metres, seconds, kilograms.
//! Zero means "derive it" for the sound speed, the time step and the penalty coefficients.

use crate::error::ParamError;
use crate::models::info::ParamDoc;

/// SPH model parameters (Skorkovská et al.; names as the CLI's `--set` uses them).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Density of the fluid at rest, kg/m³. Default 1000 (water).
    pub rest_density: f64,
    /// Smoothing length over particle spacing (the kernel reaches twice this). Default 1.2.
    pub smoothing_ratio: f64,
    /// Speed of sound of the weakly compressible fluid, m/s; at least 10x the top speed the scene
    /// can reach (density varies by ~1 %). Default 0: exactly that, from the scene's drop.
    pub sound_speed: f64,
    /// Exponent of the Tait equation `p = ρ0·c²/γ·((ρ/ρ0)^γ − 1)`. Default 7 (water).
    pub tait_exponent: f64,
    /// Artificial viscosity (Monaghan's α; damps noise and shocks). Default 0.05.
    pub viscosity: f64,
    /// Density diffusion δ of δ-SPH (Molteni & Colagrossi 2009, with Fourtakas et al. 2019's
    /// hydrostatic correction so a still column is left alone): adds `δ·h·c·∇²(ρ − ρ_hydrostatic)`
    /// to the continuity equation, which smooths the density noise of weak compressibility.
    /// Dimensionless, 0 to 1; 0.1 is the usual value in the literature. Default 0 (Skorkovská et al. have none;
    /// in the still tank 0.1 slows the corner drift by ~20 % and 0.5 by ~40 %, neither stops it:
    /// docs/sph-model.md).
    pub density_diffusion: f64,
    /// How walls stand in for the fluid beyond them: 1 mirror particles (the fluid near a wall
    /// reflected across its plane, and across pairs and triples of perpendicular walls at
    /// corners; free slip, pressure continued hydrostatically), 0 the kernel's missing share
    /// from tables (a wall pressure term and a renormalised gradient). Default 1: a still tank
    /// stays still (0.02–0.05 of the still-tank speed bound `0.01·√(gH)`; the tables let the water along the
    /// walls sink at 1.6x it and growing) at ~10 % more time per iteration (docs/sph-model.md).
    pub mirror_walls: f64,
    /// Kinematic viscosity, m²/s (laminar, Lo & Shao's form; damps shear, which the artificial
    /// viscosity does not). Default 1e-6 (water).
    pub kinematic_viscosity: f64,
    /// Gravity, m/s², along −z. Default 9.81.
    pub gravity: f64,
    /// Time step, s. Default 0: the largest the CFL (`cfl·h/c`) and viscous limits allow; a
    /// larger value is refused.
    pub dt: f64,
    /// CFL number: the step is at most `cfl·h/c`. Default 0.1 (0.25 grew unstable in the tank
    /// test with this integrator).
    pub cfl: f64,
    /// How much the walls hold the water: 0 free slip (only the pressure and eq. 1's penalty,
    /// as Skorkovská et al.), 1 no-slip (the water's viscosity, the artificial one's equivalent `α·c·h/10`
    /// included, against a wall at rest; the layer along the walls slows, and with it the
    /// shear that erodes: the lake scene erodes ~4x less). Default 0.
    pub wall_friction: f64,
    /// A face pushes a particle closer than this many particle spacings (the particle's radius,
    /// eq. 1's reach); erosion happens within it too. Default 0.5.
    pub contact_ratio: f64,
    /// Penalty stiffness `k_s` of eq. 1, 1/s² (force per unit mass per metre of penetration).
    /// Default 0: `(0.2/dt)²`.
    pub penalty_stiffness: f64,
    /// Penalty damping `k_d` of eq. 1, 1/s (of the velocity into the face). Default 0:
    /// `0.4/dt` (half of critical for the default stiffness).
    pub penalty_damping: f64,
    /// Erosion constant `k` of eq. 2, m/s per unit of shear stress above the threshold (the
    /// surface recedes at `ε = k·(τ − τc)^a`). Default 2e-5.
    pub erosion_rate: f64,
    /// Critical shear stress `τc` of eq. 2 (units of `K·θ^m`, θ in 1/s). Default 40.
    pub critical_shear: f64,
    /// Exponent `a` of eq. 2. Default 1.
    pub rate_exponent: f64,
    /// Constant `K` of eq. 3. Default 1 (Skorkovská et al.).
    pub shear_constant: f64,
    /// Material exponent `m` of eq. 3. Default 1.
    pub shear_exponent: f64,
    /// Morphological acceleration factor F: erosion and deposition are applied F times per
    /// fluid step, as sediment-transport codes do (Roelvink 2006's "morfac"), so the surface
    /// changes as in F times the simulated time while the water moves as in one. The water only
    /// sees the surface move F times faster; at most [`MAX_MORPHOLOGICAL_FACTOR`], where the
    /// built-in scenes' meshes stay valid and their books balance (docs/sph-model.md).
    /// Default 1.
    pub morphological_factor: f64,
    /// Largest vertex move per iteration, particle spacings; the rest of a vertex's volume waits
    /// for the next iteration (books keep it as pending). Default 0.05.
    pub max_move: f64,
    /// A face smaller than this share of the mesh's starting mean face area makes the mesh
    /// inconsistent. Default 1e-4.
    pub min_area_ratio: f64,
}

/// The largest morphological factor accepted.
pub const MAX_MORPHOLOGICAL_FACTOR: f64 = 1000.0;

impl Default for Params {
    fn default() -> Self {
        Self {
            rest_density: 1000.0,
            smoothing_ratio: 1.2,
            sound_speed: 0.0,
            tait_exponent: 7.0,
            viscosity: 0.05,
            density_diffusion: 0.0,
            mirror_walls: 1.0,
            kinematic_viscosity: 1e-6,
            gravity: 9.81,
            dt: 0.0,
            cfl: 0.1,
            wall_friction: 0.0,
            contact_ratio: 0.5,
            penalty_stiffness: 0.0,
            penalty_damping: 0.0,
            erosion_rate: 2e-5,
            critical_shear: 40.0,
            rate_exponent: 1.0,
            shear_constant: 1.0,
            shear_exponent: 1.0,
            morphological_factor: 1.0,
            max_move: 0.05,
            min_area_ratio: 1e-4,
        }
    }
}

/// One line of documentation per parameter, for `erode params sph`.
pub const PARAM_DOCS: &[ParamDoc] = &[
    ParamDoc::new("rest_density", "fluid density at rest, kg/m³").linear(500.0, 3000.0, "kg/m³"),
    ParamDoc::new("smoothing_ratio", "smoothing length / particle spacing (kernel support is twice it)").linear(1.0, 2.0, ""),
    ParamDoc::new("sound_speed", "m/s, >= 10x the scene's top speed, at most 1e5; 0 = exactly that").linear(0.0, 1000.0, "m/s"),
    ParamDoc::new("tait_exponent", "gamma of the Tait equation of state").linear(1.0, 7.0, ""),
    ParamDoc::new("viscosity", "artificial viscosity alpha (Monaghan)").linear(0.0, 0.5, ""),
    ParamDoc::new("density_diffusion", "delta of delta-SPH (density noise smoothing); 0 = off").linear(0.0, 0.5, ""),
    ParamDoc::new("mirror_walls", "1 = walls as mirror particles, 0 = as the kernel's missing share (tables)"),
    ParamDoc::new("kinematic_viscosity", "laminar viscosity, m²/s (0 to 1e4)").log(1e-7, 1e4, "m²/s"),
    ParamDoc::new("gravity", "m/s², along -z").linear(0.0, 20.0, "m/s²"),
    ParamDoc::new("dt", "time step, s; 0 = the largest the CFL and viscous limits allow").linear(0.0, 0.01, "s"),
    ParamDoc::new("cfl", "the step is at most cfl·h/c").linear(0.01, 0.5, ""),
    ParamDoc::new(
        "wall_friction",
        "0 = free-slip walls (Skorkovská et al.), 1 = no-slip (the fluid's viscosity against them)",
    ).linear(0.0, 1.0, ""),
    ParamDoc::new("contact_ratio", "particle radius (penalty and erosion reach), particle spacings").linear(0.1, 1.0, "particle spacings"),
    ParamDoc::new("penalty_stiffness", "k_s of eq. 1, 1/s²; 0 = (0.2/dt)²").linear(0.0, 1e6, "1/s²"),
    ParamDoc::new("penalty_damping", "k_d of eq. 1, 1/s; 0 = 0.4/dt").linear(0.0, 1e3, "1/s"),
    ParamDoc::new("erosion_rate", "k of eq. 2: surface recession m/s per unit shear above critical").log(1e-8, 1e-2, "m/s"),
    ParamDoc::new("critical_shear", "tau_c of eq. 2 (units of K·theta^m, theta in 1/s)").linear(0.0, 200.0, ""),
    ParamDoc::new("rate_exponent", "a of eq. 2: the surface recedes at k·(tau - tau_c)^a").linear(0.5, 3.0, ""),
    ParamDoc::new("shear_constant", "K of eq. 3: shear stress tau = K·theta^m from the shear rate theta").log(1e-3, 1e3, ""),
    ParamDoc::new("shear_exponent", "m of eq. 3 (material)").linear(0.5, 2.0, ""),
    ParamDoc::new(
        "morphological_factor",
        "erosion and deposition applied F times per fluid step (time acceleration), 1 to 1000",
    ).log(1.0, 1000.0, ""),
    ParamDoc::new("max_move", "largest vertex move per iteration, particle spacings").linear(0.001, 0.5, "particle spacings"),
    ParamDoc::new("min_area_ratio", "smallest face area, share of the starting mean face area").log(1e-6, 0.1, ""),
];

/// Largest sound speed, m/s (water's is 1,480; SPH takes ten times the top flow speed).
pub const MAX_SOUND_SPEED: f64 = 1e5;
/// Largest kinematic viscosity, m²/s (water's is 1e-6, honey's ~1e-2, lava's up to ~1e3).
pub const MAX_KINEMATIC_VISCOSITY: f64 = 1e4;

impl Params {
    /// Checks every range; the limits that depend on the scene (sound speed, time step) are
    /// checked when the simulator is built.
    pub fn validate(&self) -> Result<(), ParamError> {
        let check = |name: &'static str, value: f64, ok: bool, expected: &'static str| {
            if ok && value.is_finite() { Ok(()) } else { Err(ParamError { name, value, expected }) }
        };
        check("rest_density", self.rest_density, self.rest_density > 0.0, "> 0 kg/m³")?;
        check("smoothing_ratio", self.smoothing_ratio, (1.0..=2.0).contains(&self.smoothing_ratio), "1 to 2")?;
        // the step shrinks with the sound speed and the viscosity: past these it is so small that
        // the derived wall stiffness (0.2/dt)² overflows
        check(
            "sound_speed",
            self.sound_speed,
            (0.0..=MAX_SOUND_SPEED).contains(&self.sound_speed),
            "0 to 1e5 m/s (0 = derived)",
        )?;
        check("tait_exponent", self.tait_exponent, (1.0..=10.0).contains(&self.tait_exponent), "1 to 10")?;
        check("viscosity", self.viscosity, (0.0..=1.0).contains(&self.viscosity), "0 to 1")?;
        check("density_diffusion", self.density_diffusion, (0.0..=1.0).contains(&self.density_diffusion), "0 to 1")?;
        check("mirror_walls", self.mirror_walls, self.mirror_walls == 0.0 || self.mirror_walls == 1.0, "0 or 1")?;
        check(
            "kinematic_viscosity",
            self.kinematic_viscosity,
            (0.0..=MAX_KINEMATIC_VISCOSITY).contains(&self.kinematic_viscosity),
            "0 to 1e4 m²/s",
        )?;
        check("gravity", self.gravity, self.gravity >= 0.0, ">= 0 m/s²")?;
        check("dt", self.dt, self.dt >= 0.0, ">= 0 s (0 = derived)")?;
        check("cfl", self.cfl, self.cfl > 0.0 && self.cfl <= 0.4, "in (0, 0.4]")?;
        check("wall_friction", self.wall_friction, (0.0..=1.0).contains(&self.wall_friction), "0 to 1")?;
        check("contact_ratio", self.contact_ratio, (0.1..=1.0).contains(&self.contact_ratio), "0.1 to 1")?;
        check("penalty_stiffness", self.penalty_stiffness, self.penalty_stiffness >= 0.0, ">= 0 1/s² (0 = derived)")?;
        check("penalty_damping", self.penalty_damping, self.penalty_damping >= 0.0, ">= 0 1/s (0 = derived)")?;
        check("erosion_rate", self.erosion_rate, self.erosion_rate >= 0.0, ">= 0 m/s")?;
        check("critical_shear", self.critical_shear, self.critical_shear >= 0.0, ">= 0")?;
        check("rate_exponent", self.rate_exponent, (0.1..=4.0).contains(&self.rate_exponent), "0.1 to 4")?;
        check("shear_constant", self.shear_constant, self.shear_constant > 0.0, "> 0")?;
        check("shear_exponent", self.shear_exponent, (0.1..=4.0).contains(&self.shear_exponent), "0.1 to 4")?;
        check(
            "morphological_factor",
            self.morphological_factor,
            (1.0..=MAX_MORPHOLOGICAL_FACTOR).contains(&self.morphological_factor),
            "1 to 1000 (the largest at which the built-in scenes' meshes stay valid; docs/sph-model.md)",
        )?;
        check("max_move", self.max_move, self.max_move > 0.0 && self.max_move <= 0.5, "in (0, 0.5] spacings")?;
        check("min_area_ratio", self.min_area_ratio, (0.0..0.5).contains(&self.min_area_ratio), "0 to 0.5")?;
        Ok(())
    }
}
