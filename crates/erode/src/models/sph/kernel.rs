//! The smoothing kernel (Wendland C2 in 3D, support `2h`) and what a wall takes from it: the
//! share of the kernel beyond a plane at distance `d`, for the density and pressure a flat wall
//! stands in for (the fluid it replaces, at rest density).

use glam::DVec3;

/// Wendland C2 kernel with smoothing length `h` (metres; support radius `2h`).
#[derive(Clone, Debug)]
pub struct Kernel {
    /// Smoothing length, metres.
    pub h: f64,
    sigma: f64,
    /// `1/(2h)` and `−5σ/h²`, so a pair's gradient takes no division.
    half_inv_h: f64,
    slope_scale: f64,
    /// `beyond[k]`: share of the kernel's integral beyond a plane at `d = k·2h/(N−1)`.
    beyond: Vec<f64>,
    /// `slope[k]`: its derivative with `d`, 1/m (negative).
    slope: Vec<f64>,
    /// `normal_moment[k]`, `along_moment[k]`: the share of the kernel's second moment
    /// `−∫ s_a² W'(r)/r dV` (1 over all space, along any axis a) that lies beyond the plane,
    /// along its normal and along one direction in it.
    normal_moment: Vec<f64>,
    along_moment: Vec<f64>,
    /// `friction[k]`: `∫ W'(r)/r dV` over the half-space beyond the plane, 1/m² (negative): the
    /// viscous pair term summed over the fluid a no-slip wall stands in for.
    friction: Vec<f64>,
    /// Added to a wall distance before the tables are read, metres: fitted so a particle on a
    /// lattice half a spacing from a wall has rest density (see [`Kernel::fit_wall`]).
    wall_shift: f64,
}

const TABLE: usize = 513;

impl Kernel {
    /// The kernel for smoothing length `h`, with its wall tables.
    pub fn new(h: f64) -> Self {
        let sigma = 21.0 / (16.0 * std::f64::consts::PI * h * h * h);
        let mut k = Self {
            h,
            sigma,
            half_inv_h: 0.5 / h,
            slope_scale: -5.0 * sigma / (h * h),
            beyond: vec![0.0; TABLE],
            slope: vec![0.0; TABLE],
            friction: vec![0.0; TABLE],
            normal_moment: vec![0.0; TABLE],
            along_moment: vec![0.0; TABLE],
            wall_shift: 0.0,
        };
        let support = 2.0 * h;
        for i in 0..TABLE {
            let d = support * i as f64 / (TABLE - 1) as f64;
            // over spheres of radius r > d: cap area beyond the plane is 2πr(r − d)
            let (a, b) = simpson(d, support, 256, |r| {
                let w = k.w(r);
                (w * 2.0 * std::f64::consts::PI * r * (r - d), -w * 2.0 * std::f64::consts::PI * r)
            });
            k.beyond[i] = a;
            k.slope[i] = b;
            let (f, _) =
                simpson(d, support, 256, |r| (k.w_slope_over_r(r) * 2.0 * std::f64::consts::PI * r * (r - d), 0.0));
            k.friction[i] = f;
            // over the cap of the sphere of radius r beyond the plane (cos θ from u0 = d/r to
            // 1): ∫ cos²θ dΩ = 2π(1 − u0³)/3 and ∫ sin²θ cos²φ dΩ = π((1 − u0) − (1 − u0³)/3)
            let pi = std::f64::consts::PI;
            let (normal, along) = simpson(d, support, 256, |r| {
                if r <= 0.0 {
                    return (0.0, 0.0);
                }
                let (u0, m) = (d / r, -k.w_slope_over_r(r) * r.powi(4));
                (m * 2.0 * pi * (1.0 - u0.powi(3)) / 3.0, m * pi * ((1.0 - u0) - (1.0 - u0.powi(3)) / 3.0))
            });
            k.normal_moment[i] = normal;
            k.along_moment[i] = along;
        }
        k
    }

    /// `W(r)`, 1/m³.
    #[inline]
    pub fn w(&self, r: f64) -> f64 {
        let q = r / self.h;
        if q >= 2.0 {
            return 0.0;
        }
        let t = 1.0 - 0.5 * q;
        let t2 = t * t;
        self.sigma * t2 * t2 * (2.0 * q + 1.0)
    }

    /// `∇W` at offset `x` (from the neighbour to the particle), 1/m⁴.
    #[inline]
    pub fn grad(&self, x: DVec3, r: f64) -> DVec3 {
        x * self.w_slope_over_r(r)
    }

    /// `W'(r)/r`, 1/m⁵ (≤ 0): [`Kernel::grad`] is the offset times this.
    #[inline]
    pub fn w_slope_over_r(&self, r: f64) -> f64 {
        let t = 1.0 - r * self.half_inv_h;
        if t <= 0.0 {
            return 0.0;
        }
        self.slope_scale * t * t * t
    }

    /// Fits the wall shift so that the lattice of `spacing` (kernel sums `lattice_mass·W`) over a
    /// half-space, seen from a particle half a spacing from its wall, plus the wall's share, is
    /// the full density: the continuum share the tables hold overstates what a lattice misses.
    pub fn fit_wall(&mut self, spacing: f64, mass_per_density: f64) {
        let reach = (2.0 * self.h / spacing).ceil() as i32 + 1;
        let mut half = 0.0;
        for k in 0..=reach {
            for j in -reach..=reach {
                for i in -reach..=reach {
                    let x = DVec3::new(f64::from(i), f64::from(j), f64::from(k)) * spacing;
                    half += mass_per_density * self.w(x.length());
                }
            }
        }
        let missing = (1.0 - half).max(0.0);
        // beyond(d + shift) falls with shift: bisect for the shift that gives `missing`
        let d = 0.5 * spacing;
        let (mut lo, mut hi) = (-d, 2.0 * self.h);
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            self.wall_shift = mid;
            if self.beyond(d) > missing { lo = mid } else { hi = mid }
        }
        self.wall_shift = 0.5 * (lo + hi);
    }

    fn table(&self, t: &[f64], d: f64) -> f64 {
        let x = ((d + self.wall_shift).max(0.0) / (2.0 * self.h)) * (TABLE - 1) as f64;
        if x >= (TABLE - 1) as f64 {
            return 0.0;
        }
        let i = x as usize;
        let f = x - i as f64;
        t[i] * (1.0 - f) + t[i + 1] * f
    }

    /// Share of the kernel's integral lying beyond a plane at distance `d` (0.5 at `d <= 0`).
    #[inline]
    pub fn beyond(&self, d: f64) -> f64 {
        self.table(&self.beyond, d)
    }

    /// Derivative of [`Kernel::beyond`] with `d`, 1/m (≤ 0).
    #[inline]
    pub fn beyond_slope(&self, d: f64) -> f64 {
        self.table(&self.slope, d)
    }

    /// The share of the kernel's second moment beyond a plane at distance `d`, along its normal
    /// and along a direction in it (each 0.5 at `d <= 0`, 0 beyond the support): what a wall
    /// takes from the first moment that renormalises the pressure gradient.
    #[inline]
    pub fn beyond_moment(&self, d: f64) -> (f64, f64) {
        (self.table(&self.normal_moment, d), self.table(&self.along_moment, d))
    }

    /// `∫ W'(r)/r dV` over the half-space beyond a plane at distance `d`, 1/m² (≤ 0): a no-slip
    /// wall's viscous drag per unit of kinematic viscosity and of the particle's speed along it
    /// is `−4·` this.
    #[inline]
    pub fn beyond_friction(&self, d: f64) -> f64 {
        self.table(&self.friction, d)
    }
}

/// Simpson's rule for two integrands at once over `a..b` with `n` (even) intervals.
fn simpson(a: f64, b: f64, n: usize, f: impl Fn(f64) -> (f64, f64)) -> (f64, f64) {
    if b <= a {
        return (0.0, 0.0);
    }
    let dx = (b - a) / n as f64;
    let mut s = (0.0, 0.0);
    for i in 0..=n {
        let wgt = if i == 0 || i == n {
            1.0
        } else if i % 2 == 1 {
            4.0
        } else {
            2.0
        };
        let v = f(a + dx * i as f64);
        s.0 += wgt * v.0;
        s.1 += wgt * v.1;
    }
    (s.0 * dx / 3.0, s.1 * dx / 3.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_integrates_to_one_and_half_lies_beyond_a_plane_through_the_centre() {
        let k = Kernel::new(0.1);
        let (total, _) = simpson(0.0, 0.2, 512, |r| (k.w(r) * 4.0 * std::f64::consts::PI * r * r, 0.0));
        assert!((total - 1.0).abs() < 1e-9, "{total}");
        assert!((k.beyond(0.0) - 0.5).abs() < 1e-9);
        assert_eq!(k.beyond(0.25), 0.0);
        // slope = derivative of beyond
        let d = 0.07;
        let fd = (k.beyond(d + 1e-5) - k.beyond(d - 1e-5)) / 2e-5;
        assert!((fd - k.beyond_slope(d)).abs() < 1e-2 * fd.abs(), "{fd} {}", k.beyond_slope(d));
        // gradient = dW/dr along the offset
        let x = DVec3::new(0.03, 0.04, 0.0);
        let g = k.grad(x, 0.05);
        let fd = (k.w(0.05 + 1e-7) - k.w(0.05 - 1e-7)) / 2e-7;
        assert!((g.length() - fd.abs()).abs() < 1e-5 * fd.abs());
        // a wall through the centre holds half of ∫ W'(r)/r dV; none beyond the support
        let (full, _) = simpson(0.0, 0.2, 512, |r| (k.w_slope_over_r(r) * 4.0 * std::f64::consts::PI * r * r, 0.0));
        assert!(full < 0.0 && (k.beyond_friction(0.0) - 0.5 * full).abs() < 1e-6 * full.abs());
        assert!(k.beyond_friction(0.05) > k.beyond_friction(0.02) && k.beyond_friction(0.25) == 0.0);
        // half of each axis's second moment lies beyond a plane through the centre
        let (normal, along) = k.beyond_moment(0.0);
        assert!((normal - 0.5).abs() < 1e-6 && (along - 0.5).abs() < 1e-6, "{normal} {along}");
        assert_eq!(k.beyond_moment(0.25), (0.0, 0.0));
    }
}
