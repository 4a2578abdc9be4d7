//! Heights rescaled: a new relief, a vertical factor, a new base.

use crate::error::TransformError;
use crate::grid::Heightmap;

/// Largest height magnitude a rescaled map may hold, metres: ten times Earth's relief already
/// makes no terrain, and beyond this f32 heights lose the centimetres models work in.
pub const MAX_HEIGHT: f64 = 1e6;

/// How to rescale heights. Every form keeps the shape: heights move linearly, nodata stays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rescale {
    /// The relief (highest minus lowest valid height) becomes this many metres, scaled about the
    /// lowest cell, which keeps its height unless `base` is given.
    Relief {
        /// New relief, metres (> 0).
        relief: f64,
        /// Height of the lowest cell afterwards, metres.
        base: Option<f64>,
    },
    /// Heights times `factor` about 0 m (sea level stays where it is); with `base`, about the
    /// lowest cell, which then lies at `base`.
    Factor {
        /// Vertical factor (> 0).
        factor: f64,
        /// Height of the lowest cell afterwards, metres.
        base: Option<f64>,
    },
}

/// `map` with its heights rescaled as `how` says (in place: no second copy of a large map). Refuses a relief on a flat map (there is no
/// slope to stretch), factors and reliefs that are not positive and finite, and results beyond
/// [`MAX_HEIGHT`].
pub fn rescale(mut map: Heightmap, how: Rescale) -> Result<Heightmap, TransformError> {
    let stats = map.stats();
    let (min, max) = (f64::from(stats.min), f64::from(stats.max));
    let positive = |name: &'static str, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(TransformError::Parameter { name, value: v, expected: "a positive finite number" })
        }
    };
    let finite = |name: &'static str, v: Option<f64>| match v {
        Some(b) if !(b.is_finite() && b.abs() <= MAX_HEIGHT) => {
            Err(TransformError::Parameter { name, value: b, expected: "a height within ±1e6 m" })
        }
        _ => Ok(v),
    };
    // h' = target + (h - pivot) * factor
    let (factor, pivot, target) = match how {
        Rescale::Relief { relief, base } => {
            let relief = positive("relief", relief)?;
            let base = finite("base", base)?;
            if max <= min {
                return Err(TransformError::Flat { height: min });
            }
            (relief / (max - min), min, base.unwrap_or(min))
        }
        Rescale::Factor { factor, base } => {
            let factor = positive("factor", factor)?;
            match finite("base", base)? {
                Some(b) => (factor, min, b),
                None => (factor, 0.0, 0.0),
            }
        }
    };
    let new = |h: f64| target + (h - pivot) * factor;
    let (lo, hi) = (new(min), new(max));
    if !(lo.abs() <= MAX_HEIGHT && hi.abs() <= MAX_HEIGHT) {
        return Err(TransformError::OutOfRange { low: lo, high: hi, limit: MAX_HEIGHT });
    }
    // nodata cells hold the valid cells' mean: rescaled too, they stay that mean
    for h in map.heights.as_mut_slice() {
        *h = new(f64::from(*h)) as f32;
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CellSize, Grid};

    fn map(values: &[f32]) -> Heightmap {
        Heightmap::new(Grid::from_vec(values.len(), 1, CellSize::square(5.0), values.to_vec()).unwrap()).unwrap()
    }

    #[test]
    fn relief_stretches_about_the_lowest_cell_or_onto_a_base() {
        let m = map(&[100.0, 150.0, 300.0]);
        let out = rescale(m.clone(), Rescale::Relief { relief: 1000.0, base: None }).unwrap();
        assert_eq!(out.heights.as_slice(), &[100.0, 350.0, 1100.0]);
        let out = rescale(m.clone(), Rescale::Relief { relief: 20.0, base: Some(-5.0) }).unwrap();
        assert_eq!(out.heights.as_slice(), &[-5.0, 0.0, 15.0]);
        assert_eq!(out.heights.cell_size(), CellSize::square(5.0));
    }

    #[test]
    fn a_factor_keeps_sea_level_unless_a_base_is_given() {
        let m = map(&[-10.0, 0.0, 40.0]);
        assert_eq!(
            rescale(m.clone(), Rescale::Factor { factor: 2.0, base: None }).unwrap().heights.as_slice(),
            &[-20.0, 0.0, 80.0]
        );
        assert_eq!(
            rescale(m.clone(), Rescale::Factor { factor: 0.5, base: Some(0.0) }).unwrap().heights.as_slice(),
            &[0.0, 5.0, 25.0]
        );
    }

    #[test]
    fn nodata_stays_and_bad_requests_are_refused() {
        let g = Grid::from_vec(3, 1, CellSize::default(), vec![1.0, f32::NAN, 3.0]).unwrap();
        let m = Heightmap::with_nodata(g, Some(vec![false, true, false])).unwrap();
        let out = rescale(m.clone(), Rescale::Relief { relief: 4.0, base: None }).unwrap();
        assert!(out.is_nodata(1));
        assert_eq!((out.heights.as_slice()[0], out.heights.as_slice()[2]), (1.0, 5.0));

        let flat = map(&[7.0, 7.0]);
        assert_eq!(
            rescale(flat, Rescale::Relief { relief: 10.0, base: None }),
            Err(TransformError::Flat { height: 7.0 })
        );
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                rescale(m.clone(), Rescale::Factor { factor: bad, base: None }),
                Err(TransformError::Parameter { name: "factor", .. })
            ));
            assert!(matches!(
                rescale(m.clone(), Rescale::Relief { relief: bad, base: None }),
                Err(TransformError::Parameter { name: "relief", .. })
            ));
        }
        assert!(matches!(
            rescale(m.clone(), Rescale::Factor { factor: 1.0, base: Some(f64::NAN) }),
            Err(TransformError::Parameter { name: "base", .. })
        ));
        assert!(matches!(
            rescale(m.clone(), Rescale::Factor { factor: 1e300, base: None }),
            Err(TransformError::OutOfRange { .. })
        ));
    }
}
