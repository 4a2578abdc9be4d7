//! Analytic test shapes, as raw values in `[0, 1]` (row-major). Centred shapes are centred on
//! the grid's middle, `((w - 1) / 2, (h - 1) / 2)`, so they are exactly symmetric.

fn centred(width: usize, height: usize, f: impl Fn(f64) -> f64) -> Vec<f64> {
    let cx = (width as f64 - 1.0) / 2.0;
    let cy = (height as f64 - 1.0) / 2.0;
    let radius = cx.min(cy).max(0.5);
    let mut out = Vec::with_capacity(width * height);
    for row in 0..height {
        for col in 0..width {
            let r = ((col as f64 - cx).powi(2) + (row as f64 - cy).powi(2)).sqrt() / radius;
            out.push(f(r));
        }
    }
    out
}

/// A cone: 1 at the centre, falling linearly to 0 at the inscribed circle, 0 beyond.
pub fn cone(width: usize, height: usize) -> Vec<f64> {
    centred(width, height, |r| (1.0 - r).max(0.0))
}

/// A paraboloid bowl: 0 at the centre, 1 at the inscribed circle and beyond.
pub fn bowl(width: usize, height: usize) -> Vec<f64> {
    centred(width, height, |r| (r * r).min(1.0))
}

/// A plane at 1 with a smooth pit reaching 0 at the centre, radius 0.4 of the inscribed circle.
pub fn plane_with_pit(width: usize, height: usize) -> Vec<f64> {
    centred(width, height, |r| {
        let t = (r / 0.4).min(1.0);
        // smoothstep: zero slope at the rim and at the bottom
        t * t * (3.0 - 2.0 * t)
    })
}

/// A plane: 1 on the west (left) edge, 0 on the east edge.
pub fn ramp(width: usize, height: usize) -> Vec<f64> {
    let span = (width as f64 - 1.0).max(1.0);
    (0..height).flat_map(|_| (0..width).map(move |col| 1.0 - col as f64 / span)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cone_is_symmetric_and_peaks_at_centre() {
        let (w, h) = (21, 21);
        let c = cone(w, h);
        assert_eq!(c[10 * w + 10], 1.0);
        for row in 0..h {
            for col in 0..w {
                let v = c[row * w + col];
                assert_eq!(v, c[col * w + row]);
                assert_eq!(v, c[(h - 1 - row) * w + (w - 1 - col)]);
            }
        }
    }

    #[test]
    fn ramp_and_pit_shapes() {
        let r = ramp(5, 2);
        assert_eq!(&r[..5], &[1.0, 0.75, 0.5, 0.25, 0.0]);
        let p = plane_with_pit(31, 31);
        assert_eq!(p[15 * 31 + 15], 0.0);
        assert_eq!(p[0], 1.0);
        let b = bowl(11, 11);
        assert_eq!(b[5 * 11 + 5], 0.0);
    }
}
