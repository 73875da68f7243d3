//! Per-channel noise and mean along the probe's depth, beside the probe and on its vertical
//! scale: standard deviation and MAD noise with the noisy threshold and the median drawn, and
//! the mean.

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::probe::{Depth, MARGIN, X_LABELS};
use super::{FONT, drawn};
use crate::colour;
use crate::model::ChannelRow;
use dspk_types::DspResult;

/// Width of one chart, pixels.
const WIDTH: u32 = 300;
/// Width of the area left of a chart for its y labels.
const Y_LABELS: u32 = 44;

/// The charts' SVG: noise (std, MAD σ, thresholds) then mean, each against depth.
pub fn svg(
    rows: &[ChannelRow],
    depth: Depth,
    median_std: f64,
    noisy_threshold: f64,
) -> DspResult<String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (2 * WIDTH, depth.height)).into_drawing_area();
        drawn(root.fill(&WHITE))?;
        let (left, right) = root.split_horizontally(WIDTH);
        let top_noise = rows
            .iter()
            .flat_map(|r| [r.std, r.mad_std])
            .chain([noisy_threshold])
            .filter(|v| v.is_finite())
            .fold(1.0f64, f64::max)
            * 1.08;
        let mut chart = against_depth(&left, 0.0..top_noise, depth, "noise (µV): std ●, MAD σ +")?;
        for (value, style, name) in [
            (
                median_std,
                RGBColor(0x88, 0x88, 0x88).stroke_width(1),
                "median std",
            ),
            (
                noisy_threshold,
                RGBColor(0xd0, 0x30, 0x20).stroke_width(2),
                "noisy above",
            ),
        ] {
            if value.is_finite() {
                drawn(chart.draw_series(std::iter::once(PathElement::new(
                    vec![(value, depth.range.0), (value, depth.range.1)],
                    style,
                ))))?
                .label(format!("{name} {value:.1} µV"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], style));
            }
        }
        drawn(
            chart.draw_series(rows.iter().filter(|r| r.mad_std.is_finite()).map(|r| {
                Cross::new(
                    (r.mad_std, r.y_um),
                    2,
                    RGBColor(0x55, 0x55, 0x99).stroke_width(1),
                )
            })),
        )?;
        drawn(
            chart.draw_series(rows.iter().filter(|r| r.std.is_finite()).map(|r| {
                let [red, green, blue] = colour::of_class(&r.class);
                Circle::new((r.std, r.y_um), 2, RGBColor(red, green, blue).filled())
            })),
        )?;
        drawn(
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.85))
                .border_style(RGBColor(0xcc, 0xcc, 0xcc))
                .label_font((FONT, 11))
                .draw(),
        )?;

        let means: Vec<f64> = rows
            .iter()
            .map(|r| r.mean)
            .filter(|v| v.is_finite())
            .collect();
        let lo = means.iter().copied().fold(0.0f64, f64::min);
        let hi = means.iter().copied().fold(0.0f64, f64::max);
        let pad = ((hi - lo) * 0.08).max(1.0);
        let mut chart = against_depth(&right, (lo - pad)..(hi + pad), depth, "mean (µV)")?;
        drawn(chart.draw_series(std::iter::once(PathElement::new(
            vec![(0.0, depth.range.0), (0.0, depth.range.1)],
            RGBColor(0xbb, 0xbb, 0xbb).stroke_width(1),
        ))))?;
        drawn(
            chart.draw_series(rows.iter().filter(|r| r.mean.is_finite()).map(|r| {
                let [red, green, blue] = colour::of_class(&r.class);
                Circle::new((r.mean, r.y_um), 2, RGBColor(red, green, blue).filled())
            })),
        )?;
        drawn(root.present())?;
    }
    Ok(out)
}

/// A chart on `area` of `x` (labelled `desc`) against the probe's depth, its axes drawn.
fn against_depth<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    x: std::ops::Range<f64>,
    depth: Depth,
    desc: &str,
) -> DspResult<ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>> {
    let mut chart = drawn(
        ChartBuilder::on(area)
            .margin(MARGIN)
            .x_label_area_size(X_LABELS)
            .y_label_area_size(Y_LABELS)
            .build_cartesian_2d(x, depth.range.0..depth.range.1),
    )?;
    drawn(
        chart
            .configure_mesh()
            .disable_y_mesh()
            .light_line_style(WHITE)
            .x_labels(5)
            .y_labels(8)
            .y_label_formatter(&|v| format!("{v:.0}"))
            .x_desc(desc)
            .label_style((FONT, 11))
            .draw(),
    )?;
    Ok(chart)
}
