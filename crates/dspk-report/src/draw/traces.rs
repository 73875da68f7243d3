//! Traces of a few channels, each drawn as the envelope of its samples at the picture's width,
//! one under the other, with a scale bar in their unit and the known spikes marked.

use plotters::prelude::*;

use super::{FONT, drawn};
use crate::model::SpikeMark;
use crate::values::{median, nice_below, percentile};
use dspk_types::DspResult;

/// Pixels per trace.
const ROW: u32 = 56;
const Y_LABELS: u32 = 40;
const X_LABELS: u32 = 30;
const MARGIN: u32 = 8;
/// Room right of the traces for the scale bar's label.
const RIGHT: u32 = 64;

/// The traces' SVG: `envelopes[k]` (per column (min, max)) of channel `channels[k]`, from `t0`
/// to `t1` seconds; `spikes` marked at their samples (`rate` Hz, the window starting at sample
/// `start`); the scale bar in `unit`.
#[allow(clippy::too_many_arguments)]
pub fn svg(
    envelopes: &[Vec<(f32, f32)>],
    channels: &[usize],
    plot_width: u32,
    t0: f64,
    t1: f64,
    start: u64,
    rate: f64,
    spikes: &[SpikeMark],
    unit: &str,
) -> DspResult<String> {
    let n = envelopes.len().max(1);
    // One spacing for all traces of the panel: the widest channel's 5–95 % extent, so that
    // traces keep their relative sizes and seldom overlap.
    let spacing = envelopes
        .iter()
        .map(|e| {
            let lo: Vec<f32> = e.iter().map(|p| p.0).collect();
            let hi: Vec<f32> = e.iter().map(|p| p.1).collect();
            percentile(&hi, 95.0) - percentile(&lo, 5.0)
        })
        .filter(|s| s.is_finite())
        .fold(0.0f64, f64::max)
        .max(1e-3)
        * 1.25;
    let height = ROW * n as u32 + X_LABELS + 2 * MARGIN;
    let width = plot_width + Y_LABELS + 2 * MARGIN + RIGHT;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        drawn(root.fill(&WHITE))?;
        let (area, side) = root.split_horizontally(width - RIGHT);
        let y_lo = -(n as f64 - 0.5) * spacing;
        let y_hi = 0.5 * spacing;
        let mut chart = drawn(
            ChartBuilder::on(&area)
                .margin(MARGIN)
                .x_label_area_size(X_LABELS)
                .y_label_area_size(Y_LABELS)
                .build_cartesian_2d(t0..t1, y_lo..y_hi),
        )?;
        drawn(
            chart
                .configure_mesh()
                .disable_mesh()
                .disable_y_axis()
                .x_labels(3)
                .x_label_formatter(&|t| format!("{t:.2} s"))
                .label_style((FONT, 11))
                .draw(),
        )?;
        let columns = envelopes.first().map_or(1, Vec::len).max(1);
        let dt = (t1 - t0) / columns as f64;
        for (k, env) in envelopes.iter().enumerate() {
            let mids: Vec<f32> = env.iter().map(|p| (p.0 + p.1) / 2.0).collect();
            let centre = median(&mids);
            let base = -(k as f64) * spacing;
            let mut outline: Vec<(f64, f64)> = env
                .iter()
                .enumerate()
                .map(|(j, p)| (t0 + (j as f64 + 0.5) * dt, base + f64::from(p.1) - centre))
                .collect();
            outline.extend(
                env.iter()
                    .enumerate()
                    .rev()
                    .map(|(j, p)| (t0 + (j as f64 + 0.5) * dt, base + f64::from(p.0) - centre)),
            );
            drawn(chart.draw_series(std::iter::once(Polygon::new(
                outline.clone(),
                RGBColor(0x1f, 0x3b, 0x73).filled(),
            ))))?;
            drawn(chart.draw_series(std::iter::once(PathElement::new(
                outline,
                RGBColor(0x1f, 0x3b, 0x73).stroke_width(1),
            ))))?;
            drawn(chart.draw_series(std::iter::once(Text::new(
                format!("ch {}", channels.get(k).copied().unwrap_or(k)),
                (t0, base + 0.48 * spacing),
                (FONT, 10).into_font().color(&RGBColor(0x66, 0x66, 0x66)),
            ))))?;
            let marks = spikes
                .iter()
                .filter(|s| channels.get(k) == Some(&s.channel))
                .map(|s| {
                    let t = t0 + (s.sample.saturating_sub(start)) as f64 / rate;
                    TriangleMarker::new(
                        (t, base - 0.42 * spacing),
                        4,
                        RGBColor(0xd0, 0x30, 0x20).filled(),
                    )
                });
            drawn(chart.draw_series(marks))?;
        }
        // The scale bar, right of the last trace.
        let length = nice_below(spacing * 0.8);
        let bottom = -(n as f64 - 0.5) * spacing + 0.05 * spacing;
        let mut bar_chart = drawn(
            ChartBuilder::on(&side)
                .margin(MARGIN)
                .x_label_area_size(X_LABELS)
                .build_cartesian_2d(0.0..1.0, y_lo..y_hi),
        )?;
        drawn(bar_chart.draw_series(std::iter::once(PathElement::new(
            vec![(0.1, bottom), (0.1, bottom + length)],
            BLACK.stroke_width(2),
        ))))?;
        drawn(bar_chart.draw_series(std::iter::once(Text::new(
            format!("{length} {unit}"),
            (0.2, bottom + length * 0.6),
            (FONT, 11).into_font(),
        ))))?;
        drawn(root.present())?;
    }
    Ok(out)
}
