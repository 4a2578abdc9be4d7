//! The slope–area plot of `erode analyze`: channel cells, the binned medians and the fitted
//! line on log–log axes, drawn with plotters into an RGB image.

use erode::analysis::Figures;
use erode::preview::Rgb8Image;
use plotters::prelude::*;

pub const FONT: &str = "erode-sans";

/// Registers the labels' font once (plotters looks fonts up by name).
pub fn font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // the font is compiled in; registering it cannot meet a missing file
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, epaint_default_fonts::UBUNTU_LIGHT);
    });
}

/// Draws `samples` (drainage area m², slope m/m; a thinned sample is enough) with the fit of
/// `figures`.
pub fn slope_area(figures: &Figures, samples: &[(f64, f64)], title: &str) -> anyhow::Result<Rgb8Image> {
    font();
    let (w, h) = (900u32, 640u32);
    let mut pixels = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        let pos: Vec<(f64, f64)> = samples.iter().copied().filter(|&(a, s)| a > 0.0 && s > 0.0).collect();
        let fold = |f: fn(f64, f64) -> f64, init: f64, k: usize| {
            pos.iter().map(|p| if k == 0 { p.0 } else { p.1 }).fold(init, f)
        };
        let (amin, amax) = (fold(f64::min, f64::INFINITY, 0), fold(f64::max, 0.0, 0));
        let (smin, smax) = (fold(f64::min, f64::INFINITY, 1), fold(f64::max, 0.0, 1));
        let (amin, amax) = if amin < amax { (amin, amax * 1.5) } else { (1.0, 10.0) };
        let (smin, smax) = if smin < smax { (smin.max(smax * 1e-6), smax * 1.5) } else { (1e-3, 1.0) };
        let caption = match &figures.slope_area {
            Some(f) => format!("{title}: θ = {:.3}, R² = {:.2}, ks = {:.3e}", f.theta, f.r_squared, f.steepness),
            None => format!("{title}: no fit (too few channel cells)"),
        };
        let err = |e: &dyn std::fmt::Display| anyhow::anyhow!("plot: {e}");
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, (FONT, 22))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d((amin..amax).log_scale(), (smin..smax).log_scale())
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("drainage area (m²)")
            .y_desc("slope (m/m)")
            .label_style((FONT, 15))
            .x_label_formatter(&|v| format!("{v:.0e}"))
            .y_label_formatter(&|v| format!("{v:.0e}"))
            .draw()
            .map_err(|e| err(&e))?;
        chart
            .draw_series(pos.iter().map(|&(a, s)| Circle::new((a, s), 1, RGBColor(150, 150, 150).mix(0.35).filled())))
            .map_err(|e| err(&e))?;
        chart
            .draw_series(
                figures
                    .slope_area_bins
                    .iter()
                    .map(|b| Circle::new((b.area_m2, b.slope), 4, RGBColor(20, 60, 170).filled())),
            )
            .map_err(|e| err(&e))?
            .label("median slope of each 0.1-decade area bin")
            .legend(|(x, y)| Circle::new((x + 10, y), 4, RGBColor(20, 60, 170).filled()));
        if let Some(f) = &figures.slope_area {
            let line = [f.min_area_m2, f.max_area_m2].map(|a| (a, f.steepness * a.powf(-f.theta)));
            chart
                .draw_series(LineSeries::new(line, RGBColor(210, 40, 40).stroke_width(3)))
                .map_err(|e| err(&e))?
                .label(format!("S = {:.3e} · A^-{:.3}", f.steepness, f.theta))
                .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], RGBColor(210, 40, 40).stroke_width(3)));
        }
        chart
            .configure_series_labels()
            .label_font((FONT, 15))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(Rgb8Image { width: w as usize, height: h as usize, pixels })
}
