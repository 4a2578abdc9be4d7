//! A picture of a triangle mesh coloured by how its surface changed: an orthographic view from a
//! direction, shaded by the light from over the viewer's shoulder, eroded parts red and
//! deposited ones blue; optionally cut open by a plane, so the inside of a tunnel or cave shows.
//! A software z-buffer: no GPU, the same pixels everywhere.

use glam::DVec3;

use crate::models::sph::TriMesh;
use crate::preview::Rgb8Image;

/// Where a mesh is seen from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    /// Direction the viewer looks along (towards the mesh); not vertical.
    pub looking: DVec3,
    /// Faces whose centre lies on the positive side of this plane (`n·x > d`, given as
    /// `(n, d)`) are left out: the mesh cut open.
    pub cut: Option<(DVec3, f64)>,
}

impl View {
    /// From the south-west, 35° above the horizon, the whole mesh.
    pub fn oblique() -> Self {
        Self { looking: DVec3::new(1.0, 1.0, -0.99).normalize(), cut: None }
    }
}

/// Colour of unchanged surface (a light stone), RGB 0–1.
const STONE: [f64; 3] = [0.80, 0.76, 0.68];
/// Colour of the most eroded surface.
const ERODED: [f64; 3] = [0.85, 0.15, 0.10];
/// Colour of the most deposited surface.
const DEPOSITED: [f64; 3] = [0.15, 0.35, 0.90];

/// `mesh` seen as `view` says, `width` x `height` pixels (the mesh fills it, aspect kept), each
/// vertex tinted by `change` (metres of surface change, − eroded, + deposited; empty: none)
/// relative to `full_scale` metres (0: the largest |change|).
pub fn render(mesh: &TriMesh, change: &[f64], full_scale: f64, view: View, width: usize, height: usize) -> Rgb8Image {
    let forward = view.looking.normalize();
    let right = forward.cross(DVec3::Z).normalize();
    let up = right.cross(forward);
    let keep = |f: usize| {
        view.cut.is_none_or(|(n, d)| {
            let [a, b, c] = mesh.corners(f);
            n.dot((a + b + c) / 3.0) <= d
        })
    };
    let faces: Vec<usize> = (0..mesh.faces.len()).filter(|&f| keep(f)).collect();
    // screen coordinates of every vertex kept, fitted to the image with a margin
    let project = |p: DVec3| (p.dot(right), p.dot(up), p.dot(forward));
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for &f in &faces {
        for p in mesh.corners(f) {
            let (x, y, _) = project(p);
            lo = [lo[0].min(x), lo[1].min(y)];
            hi = [hi[0].max(x), hi[1].max(y)];
        }
    }
    let scale = 0.94 * (width as f64 / (hi[0] - lo[0])).min(height as f64 / (hi[1] - lo[1]));
    let (cx, cy) = (0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]));
    let to_pixel = |p: DVec3| {
        let (x, y, z) = project(p);
        (0.5 * width as f64 + (x - cx) * scale, 0.5 * height as f64 - (y - cy) * scale, z)
    };
    let full = if full_scale > 0.0 { full_scale } else { change.iter().fold(0.0f64, |m, c| m.max(c.abs())) };
    let light = (-forward + up * 0.8 - right * 0.5).normalize();
    let mut depth = vec![f64::INFINITY; width * height];
    let mut pixels = vec![[0.93, 0.94, 0.96]; width * height];
    for &f in &faces {
        let n = mesh.normal(f);
        // both sides lit alike: inside a tunnel the viewer sees faces turned towards it
        let facing = if n.dot(forward) > 0.0 { -n } else { n };
        let shade = 0.35 + 0.65 * facing.dot(light).max(0.0);
        let idx = mesh.faces[f];
        let corners = idx.map(|v| to_pixel(mesh.positions[v as usize]));
        let tint = idx.map(|v| change.get(v as usize).copied().unwrap_or(0.0));
        raster(&corners, width, height, |px, w| {
            let z = w[0] * corners[0].2 + w[1] * corners[1].2 + w[2] * corners[2].2;
            if z >= depth[px] {
                return;
            }
            depth[px] = z;
            let c = w[0] * tint[0] + w[1] * tint[1] + w[2] * tint[2];
            let t = if full > 0.0 { (c.abs() / full).min(1.0).sqrt() } else { 0.0 };
            let towards = if c < 0.0 { ERODED } else { DEPOSITED };
            pixels[px] = std::array::from_fn(|k| shade * (STONE[k] + (towards[k] - STONE[k]) * t));
        });
    }
    Rgb8Image {
        width,
        height,
        pixels: pixels.iter().flat_map(|c| c.map(|v| (v.clamp(0.0, 1.0) * 255.0).round() as u8)).collect(),
    }
}

/// Calls `pixel(index, barycentric weights)` for every pixel centre inside the triangle.
fn raster(t: &[(f64, f64, f64); 3], width: usize, height: usize, mut pixel: impl FnMut(usize, [f64; 3])) {
    let edge =
        |a: (f64, f64, f64), b: (f64, f64, f64), x: f64, y: f64| (b.0 - a.0) * (y - a.1) - (b.1 - a.1) * (x - a.0);
    let area = edge(t[0], t[1], t[2].0, t[2].1);
    if area.abs() < 1e-12 {
        return;
    }
    let xs = [t[0].0, t[1].0, t[2].0];
    let ys = [t[0].1, t[1].1, t[2].1];
    let x0 = xs.iter().fold(f64::INFINITY, |m, &v| m.min(v)).floor().max(0.0) as usize;
    let x1 = (xs.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v)).ceil().max(0.0) as usize).min(width);
    let y0 = ys.iter().fold(f64::INFINITY, |m, &v| m.min(v)).floor().max(0.0) as usize;
    let y1 = (ys.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v)).ceil().max(0.0) as usize).min(height);
    for y in y0..y1 {
        for x in x0..x1 {
            let (px, py) = (x as f64 + 0.5, y as f64 + 0.5);
            let w = [edge(t[1], t[2], px, py) / area, edge(t[2], t[0], px, py) / area, edge(t[0], t[1], px, py) / area];
            if w.iter().all(|&v| v >= 0.0) {
                pixel(y * width + x, w);
            }
        }
    }
}

/// Surface change at each vertex, metres (− eroded, + deposited): the volume booked at it over
/// a third of the area of its faces.
pub fn vertex_change(mesh: &TriMesh, eroded: &[f64], deposited: &[f64]) -> Vec<f64> {
    let mut area = vec![0.0; mesh.positions.len()];
    for (f, face) in mesh.faces.iter().enumerate() {
        let [a, b, c] = mesh.corners(f);
        let third = (b - a).cross(c - a).length() / 6.0;
        for &v in face {
            area[v as usize] += third;
        }
    }
    (0..mesh.positions.len())
        .map(|v| {
            let net = deposited.get(v).copied().unwrap_or(0.0) - eroded.get(v).copied().unwrap_or(0.0);
            if area[v] > 0.0 { net / area[v] } else { 0.0 }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::sph::build::tank;

    #[test]
    fn a_box_fills_the_picture_and_its_eroded_corner_shows_red() {
        let mesh = tank(DVec3::new(1.0, 1.0, 1.0), [4, 4, 4]).unwrap();
        let mut change = vec![0.0; mesh.positions.len()];
        let corner = (0..mesh.positions.len()).min_by(|&a, &b| {
            let d = |v: usize| (mesh.positions[v] - DVec3::new(0.0, 0.0, 1.0)).length();
            d(a).total_cmp(&d(b))
        });
        change[corner.unwrap()] = -0.1;
        let img = render(&mesh, &change, 0.0, View::oblique(), 200, 150);
        assert_eq!(img.pixels.len(), 200 * 150 * 3);
        let background = img.pixels.chunks(3).filter(|p| p == &[237, 240, 245]).count();
        assert!(background > 1000 && background < 200 * 150 - 5000, "{background} background pixels");
        let red = img
            .pixels
            .chunks(3)
            .filter(|p| {
                let [r, g, b] = [p[0], p[1], p[2]].map(i32::from);
                r > g + 60 && r > b + 60
            })
            .count();
        assert!(red > 20, "{red} red pixels");
        // cut open, the box shows less of itself
        let cut = View { cut: Some((DVec3::Y, 0.5)), ..View::oblique() };
        let open = render(&mesh, &change, 0.0, cut, 200, 150);
        assert_ne!(open.pixels, img.pixels);
    }
}
