//! Mirror particles: the fluid a particle's walls stand in for, as the fluid near it reflected
//! across each wall's plane (and across pairs and triples of nearly perpendicular walls, which
//! fill the quadrant and octant beyond a corner). A particle whose image lies within the
//! kernel's reach of another is itself within reach (both are on the fluid side of the mirrors,
//! which only moves the image further), so the neighbour scan finds every image.

use glam::DVec3;

/// A wall's plane as a mirror: `x ↦ x − 2·(n·x − offset)·n`, `n` pointing into the fluid.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Mirror {
    normal: DVec3,
    offset: f64,
}

impl Mirror {
    /// The plane `dist` from `x` along `-normal`.
    pub(super) fn new(normal: DVec3, x: DVec3, dist: f64) -> Self {
        Self { normal, offset: normal.dot(x) - dist }
    }

    fn side(&self, x: DVec3) -> f64 {
        self.normal.dot(x) - self.offset
    }

    fn point(&self, x: DVec3) -> DVec3 {
        x - self.normal * (2.0 * self.side(x))
    }

    fn vector(&self, v: DVec3) -> DVec3 {
        v - self.normal * (2.0 * self.normal.dot(v))
    }
}

/// Walls whose normals are closer to perpendicular than this (|cos|) make a corner together.
const PERPENDICULAR: f64 = 0.3;

/// One image of the fluid: reflected across one, two or three mirrors in turn.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Image {
    mirrors: [Mirror; 3],
    count: u8,
}

impl Image {
    fn mirrors(&self) -> &[Mirror] {
        &self.mirrors[..self.count as usize]
    }

    /// Where the image of a fluid particle at `x` lies.
    pub(super) fn point(&self, x: DVec3) -> DVec3 {
        self.mirrors().iter().fold(x, |x, m| m.point(x))
    }

    /// The image of a velocity (free slip: the normal parts reversed).
    pub(super) fn vector(&self, v: DVec3) -> DVec3 {
        self.mirrors().iter().fold(v, |v, m| m.vector(v))
    }

    /// The image of a neighbour at `xj` (`r2` = |x − xj|²) if it lies within `reach2` (squared)
    /// of `x`: `Some(x − image)`. One mirror: |x − image|² = r2 + 4·d(x)·d(xj) decides before
    /// the reflection is computed.
    #[inline]
    pub(super) fn near(&self, x: DVec3, xj: DVec3, r2: f64, reach2: f64) -> Option<DVec3> {
        if self.count == 1 {
            let m = &self.mirrors[0];
            let dj = m.side(xj);
            if dj <= 0.0 || r2 + 4.0 * m.side(x) * dj >= reach2 {
                return None;
            }
        } else if !self.reflects(xj) {
            return None;
        }
        let xij = x - self.point(xj);
        let d2 = xij.length_squared();
        (d2 < reach2 && d2 > 0.0).then_some(xij)
    }

    /// Whether a particle at `x` is on the fluid side of every mirror (only those have images).
    fn reflects(&self, x: DVec3) -> bool {
        self.mirrors().iter().all(|m| m.side(x) > 0.0)
    }
}

/// Most images a particle has: every wall, pair and triple of [`Images::of`]'s up to 4 walls.
const MAX_IMAGES: usize = 14;

/// The images of the fluid around one particle.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Images {
    images: [Image; MAX_IMAGES],
    count: u8,
}

impl Images {
    /// The images for a particle with these mirrors (at most 4): one per mirror, one per pair
    /// and triple of mutually nearly perpendicular mirrors.
    pub(super) fn of(mirrors: &[Mirror]) -> Self {
        let mut out = Self::default();
        let n = mirrors.len().min(4);
        let square = |a: usize, b: usize| mirrors[a].normal.dot(mirrors[b].normal).abs() < PERPENDICULAR;
        let mut push = |set: &[usize]| {
            let mut image = Image::default();
            for (k, &m) in set.iter().enumerate() {
                image.mirrors[k] = mirrors[m];
            }
            image.count = set.len() as u8;
            out.images[out.count as usize] = image;
            out.count += 1;
        };
        for a in 0..n {
            push(&[a]);
            for b in a + 1..n {
                if square(a, b) {
                    push(&[a, b]);
                    for c in b + 1..n {
                        if square(a, c) && square(b, c) {
                            push(&[a, b, c]);
                        }
                    }
                }
            }
        }
        out
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &Image> {
        self.images[..self.count as usize].iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A particle in the corner of a box (floor and two walls) has 7 images: 3 walls, 3 edges,
    /// the corner; `near` finds an image exactly when the reflected point is within reach.
    #[test]
    fn a_box_corner_has_seven_images_and_near_finds_them_as_brute_force_does() {
        let x = DVec3::new(0.03, 0.02, 0.01);
        let mirrors = [Mirror::new(DVec3::X, x, x.x), Mirror::new(DVec3::Y, x, x.y), Mirror::new(DVec3::Z, x, x.z)];
        let images = Images::of(&mirrors);
        assert_eq!(images.iter().count(), 7);
        // each image of a point is the point with some of its coordinates negated
        let p = DVec3::new(0.05, 0.01, 0.04);
        let mut seen: Vec<[i64; 3]> =
            images.iter().map(|im| (im.point(p) / p).round().as_i64vec3().to_array()).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 7);
        assert!(!seen.contains(&[1, 1, 1]));
        let reach2 = 0.06f64 * 0.06;
        let mut found = 0;
        for k in 0..1000 {
            let f = |s: u64| ((k * 7919 + s * 104729) % 1000) as f64 / 1000.0;
            let xj = DVec3::new(f(1), f(2), f(3)) * 0.08 - DVec3::splat(0.005);
            let r2 = (x - xj).length_squared();
            for im in images.iter() {
                let direct = im.reflects(xj) && {
                    let d2 = (x - im.point(xj)).length_squared();
                    d2 < reach2 && d2 > 0.0
                };
                assert_eq!(im.near(x, xj, r2, reach2).is_some(), direct, "{xj} through {im:?}");
                if direct {
                    // a particle whose image is in reach is itself in reach
                    assert!(r2 < reach2, "{xj}");
                    found += 1;
                }
            }
        }
        assert!(found > 100, "{found} images in reach");
    }
}
