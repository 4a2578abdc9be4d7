//! The slope–area relation of channels, `S = ks·A^−θ` (Flint's law; Hack 1957, Flint 1974): in a
//! fluvially eroded landscape the channel slope falls with drainage area (θ ≈ 0.35–0.6 in real
//! mountains), in noise it hardly does (θ ≈ 0.1).
//!
//! The fit follows the usual practice (e.g. Wobus et al. 2006): the D8 slope of every cell with
//! at least the minimum drainage area, not raised by depression filling and with a positive
//! slope, is binned by log10 of its area (bins 0.1 decade wide); each bin with at least
//! [`MIN_BIN_CELLS`] cells gives the median log10 area and slope; a least-squares line through the bins
//! gives θ (minus the slope of the line), `ks` (10^intercept) and R² over the bins.

use serde::Serialize;

/// Width of an area bin, decades.
pub const BIN_WIDTH: f64 = 0.1;
/// Fewest cells a bin needs to enter the fit.
pub const MIN_BIN_CELLS: usize = 10;
/// Smallest slope a cell needs to enter the fit, m/m: leaves out flats, whose ε slopes carry no
/// information.
pub const MIN_SLOPE: f64 = 1e-6;
/// Reference concavity of the normalised steepness index `ksn` (Wobus et al. 2006).
pub const THETA_REF: f64 = 0.45;

/// One area bin.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bin {
    /// Median drainage area of its cells, m².
    pub area_m2: f64,
    /// Median slope of its cells, m/m.
    pub slope: f64,
    /// Cells in the bin.
    pub cells: usize,
}

/// The fitted line and what it was fitted over.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fit {
    /// Concavity θ in `S = ks·A^−θ`.
    pub theta: f64,
    /// Steepness index `ks`, m^(2θ).
    pub steepness: f64,
    /// Normalised steepness `ksn`: median of `S·A^θref` over the fitted cells, θref =
    /// [`THETA_REF`], m^(2·θref).
    pub normalized_steepness: f64,
    /// Coefficient of determination of the line through the bins.
    pub r_squared: f64,
    /// Smallest drainage area fitted (the bins' lower edge), m².
    pub min_area_m2: f64,
    /// Largest drainage area fitted (the last bin's upper edge), m².
    pub max_area_m2: f64,
    /// Bins in the fit.
    pub bins: usize,
    /// Cells in the fit.
    pub cells: usize,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_unstable_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 { v[m] } else { 0.5 * (v[m - 1] + v[m]) }
}

/// Bins `(area m², slope)` samples with area >= `min_area` and fits the line; `None` when fewer
/// than three bins qualify.
pub fn fit(samples: &[(f64, f64)], min_area: f64) -> (Vec<Bin>, Option<Fit>) {
    let lo = min_area.max(f64::MIN_POSITIVE).log10();
    let mut by_bin: std::collections::BTreeMap<i64, (Vec<f64>, Vec<f64>)> = Default::default();
    for &(a, s) in samples {
        if a >= min_area && s > MIN_SLOPE && a.is_finite() && s.is_finite() {
            let b = ((a.log10() - lo) / BIN_WIDTH).floor() as i64;
            let bin = by_bin.entry(b).or_default();
            bin.0.push(a.log10());
            bin.1.push(s.log10());
        }
    }
    let mut bins = Vec::new();
    let mut points = Vec::new();
    let mut used = Vec::new();
    for (b, (mut log_a, mut log_s)) in by_bin {
        if log_s.len() < MIN_BIN_CELLS {
            continue;
        }
        let (x, y) = (median(&mut log_a), median(&mut log_s));
        bins.push(Bin { area_m2: 10f64.powf(x), slope: 10f64.powf(y), cells: log_s.len() });
        points.push((x, y));
        used.push(b);
    }
    if points.len() < 3 {
        return (bins, None);
    }
    let n = points.len() as f64;
    let (mx, my) = (points.iter().map(|p| p.0).sum::<f64>() / n, points.iter().map(|p| p.1).sum::<f64>() / n);
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    let k = sxy / sxx;
    let intercept = my - k * mx;
    let r_squared = if syy > 0.0 { (sxy * sxy / (sxx * syy)).clamp(0.0, 1.0) } else { 1.0 };
    let (first, last) = (used[0], used[used.len() - 1]);
    let in_fit = |a: f64| {
        let b = ((a.log10() - lo) / BIN_WIDTH).floor() as i64;
        used.binary_search(&b).is_ok()
    };
    let mut ksn: Vec<f64> = samples
        .iter()
        .filter(|&&(a, s)| a >= min_area && s > MIN_SLOPE && a.is_finite() && s.is_finite() && in_fit(a))
        .map(|&(a, s)| s * a.powf(THETA_REF))
        .collect();
    let cells = ksn.len();
    let fit = Fit {
        theta: -k,
        steepness: 10f64.powf(intercept),
        normalized_steepness: median(&mut ksn),
        r_squared,
        min_area_m2: 10f64.powf(lo + first as f64 * BIN_WIDTH),
        max_area_m2: 10f64.powf(lo + (last + 1) as f64 * BIN_WIDTH),
        bins: points.len(),
        cells,
    };
    (bins, Some(fit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_an_exact_power_law() {
        let samples: Vec<(f64, f64)> = (0..4000)
            .map(|i| {
                let a = 10f64.powf(2.0 + i as f64 / 1000.0);
                (a, 3.0 * a.powf(-0.45))
            })
            .collect();
        let (_, fit) = fit(&samples, 100.0);
        let fit = fit.unwrap();
        assert!((fit.theta - 0.45).abs() < 1e-9, "{}", fit.theta);
        assert!((fit.steepness - 3.0).abs() < 1e-6);
        assert!((fit.normalized_steepness - 3.0).abs() < 1e-6);
        assert!(fit.r_squared > 0.999_999);
        assert_eq!(fit.bins, 40);
    }

    #[test]
    fn too_few_cells_give_no_fit() {
        let (bins, fit) = fit(&[(1000.0, 0.1), (2000.0, 0.05)], 100.0);
        assert!(bins.is_empty() && fit.is_none());
    }
}
