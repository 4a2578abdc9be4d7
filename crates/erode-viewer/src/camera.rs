//! The orbit camera and picking: which cell of the terrain is under a point of the view.
//!
//! World space is metres, right-handed, y up: cell `(c, r)` (its centre at `(c + 0.5, r + 0.5)`
//! cells) sits at `x = (c + 0.5 − w/2)·cell_x`, `z = (r + 0.5 − h/2)·cell_y`, `y = height·exaggeration`.

use glam::{Mat4, Vec3, Vec4Swizzles};

/// An orbit camera around a target point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// Point looked at, world metres.
    pub target: Vec3,
    /// Distance from the target, m.
    pub distance: f32,
    /// Angle around the vertical axis, radians.
    pub yaw: f32,
    /// Angle above the horizon, radians (0.05..1.55).
    pub pitch: f32,
    /// Vertical field of view, radians.
    pub fov: f32,
}

impl Camera {
    /// A camera that frames a terrain `extent_x` by `extent_z` metres, centred at `centre`.
    pub fn framing(extent_x: f32, extent_z: f32, centre: Vec3) -> Self {
        let size = extent_x.max(extent_z).max(1e-3);
        Self { target: centre, distance: size * 1.75, yaw: 0.6, pitch: 0.8, fov: 45f32.to_radians() }
    }

    /// Eye position, world metres.
    pub fn eye(&self) -> Vec3 {
        let (sy, cy) = self.yaw.sin_cos();
        let (sp, cp) = self.pitch.sin_cos();
        self.target + Vec3::new(cp * sy, sp, cp * cy) * self.distance
    }

    /// View-projection matrix (wgpu clip space, depth 0..1) for a view of this aspect ratio.
    pub fn view_proj(&self, aspect: f32) -> Mat4 {
        let near = (self.distance * 0.005).max(1e-3);
        let far = self.distance * 20.0 + 1.0;
        let proj = glam::camera::rh::proj::directx::perspective(self.fov, aspect.max(1e-3), near, far);
        let view = glam::camera::rh::view::look_at_mat4(self.eye(), self.target, Vec3::Y);
        proj * view
    }

    /// Turns by a pointer drag, pixels.
    pub fn orbit(&mut self, dx: f32, dy: f32) {
        self.yaw -= dx * 0.008;
        self.pitch = (self.pitch + dy * 0.008).clamp(0.05, 1.55);
    }

    /// Moves the target in the ground plane by a pointer drag, pixels of a view `view_height` tall.
    pub fn pan(&mut self, dx: f32, dy: f32, view_height: f32) {
        let scale = self.distance * (self.fov * 0.5).tan() * 2.0 / view_height.max(1.0);
        let (sy, cy) = self.yaw.sin_cos();
        let right = Vec3::new(cy, 0.0, -sy);
        let forward = Vec3::new(-sy, 0.0, -cy);
        self.target += (-right * dx + forward * dy) * scale;
    }

    /// Zooms by a scroll amount (positive: closer).
    pub fn zoom(&mut self, scroll: f32) {
        self.distance = (self.distance * (-scroll * 0.002).exp()).max(1e-2);
    }

    /// The ray through a point of the view: `(origin, direction)` in world metres; `u, v` in
    /// 0..1 from the top-left corner.
    pub fn ray(&self, u: f32, v: f32, aspect: f32) -> (Vec3, Vec3) {
        let inv = self.view_proj(aspect).inverse();
        let ndc = glam::Vec2::new(u * 2.0 - 1.0, 1.0 - v * 2.0);
        let near = inv * ndc.extend(0.0).extend(1.0);
        let far = inv * ndc.extend(1.0).extend(1.0);
        let (near, far) = (near.xyz() / near.w, far.xyz() / far.w);
        (near, (far - near).normalize_or_zero())
    }
}

/// How the terrain's cells map to world space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placement {
    /// Columns and rows.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Cell size east and south, m.
    pub cell: (f32, f32),
    /// Vertical exaggeration.
    pub exaggeration: f32,
}

impl Placement {
    /// World position of a point given in cells and a height in metres.
    pub fn world(&self, x: f32, y: f32, height: f32) -> Vec3 {
        Vec3::new(
            (x - self.width as f32 * 0.5) * self.cell.0,
            height * self.exaggeration,
            (y - self.height as f32 * 0.5) * self.cell.1,
        )
    }

    /// The cell coordinates (x east, y south, cells) of a world point.
    pub fn cells(&self, p: Vec3) -> (f32, f32) {
        (p.x / self.cell.0 + self.width as f32 * 0.5, p.z / self.cell.1 + self.height as f32 * 0.5)
    }
}

/// Where a ray first meets the terrain, in cells; `None` if it misses. Marches in steps of half
/// a cell, then refines the crossing by bisection.
pub fn pick(terrain: &[f32], at: &Placement, origin: Vec3, dir: Vec3) -> Option<(f32, f32)> {
    let (w, h) = (at.width, at.height);
    if terrain.len() != w * h || w == 0 || dir.length_squared() == 0.0 {
        return None;
    }
    let ground = |p: Vec3| -> Option<f32> {
        let (x, y) = at.cells(p);
        if x < 0.0 || y < 0.0 || x >= w as f32 || y >= h as f32 {
            return None;
        }
        let (c, r) = ((x as usize).min(w - 1), (y as usize).min(h - 1));
        Some(terrain[r * w + c] * at.exaggeration)
    };
    let (lo, hi) = terrain.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    let (lo, hi) = (lo * at.exaggeration, hi * at.exaggeration);
    // march only across the slab between the lowest and highest ground
    let span = |y: f32| if dir.y.abs() > 1e-9 { (y - origin.y) / dir.y } else { f32::INFINITY };
    let (t_a, t_b) = (span(hi), span(lo));
    let (mut t, t_end) = if dir.y < 0.0 { (t_a.max(0.0), t_b) } else { (0.0, t_a.max(t_b)) };
    let t_end = t_end.min(1e9);
    let step = at.cell.0.min(at.cell.1) * 0.5;
    let mut prev = t;
    let limit = 4 * (w + h) * 4;
    for _ in 0..limit.max(16) {
        if t > t_end + step {
            break;
        }
        let p = origin + dir * t;
        if ground(p).is_some_and(|g| p.y <= g) {
            let (mut a, mut b) = (prev, t);
            for _ in 0..20 {
                let m = 0.5 * (a + b);
                let q = origin + dir * m;
                if ground(q).is_some_and(|g| q.y <= g) { b = m } else { a = m }
            }
            return Some(at.cells(origin + dir * b));
        }
        prev = t;
        t += step;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ray_from_the_eye_through_the_centre_hits_the_target_cell() {
        let at = Placement { width: 64, height: 64, cell: (2.0, 2.0), exaggeration: 1.0 };
        let terrain = vec![5.0f32; 64 * 64];
        let cam = Camera::framing(128.0, 128.0, at.world(20.5, 40.5, 5.0));
        let (o, d) = cam.ray(0.5, 0.5, 1.5);
        let (x, y) = pick(&terrain, &at, o, d).unwrap_or((-1.0, -1.0));
        assert!((x - 20.5).abs() < 0.1 && (y - 40.5).abs() < 0.1, "picked {x} {y}");
    }
}
