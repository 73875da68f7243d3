//! The probe drawn to scale: each shank's outline, each contact a rectangle of its size in its
//! class's colour, with the channel, its contact and its statistics on hover.

use plotters::prelude::*;

use super::{FONT, drawn, escape, put_over};
use crate::colour;
use crate::model::{ChannelRow, ColourBy, ProbeView};
use dspk_types::DspResult;

/// Margin around a chart, pixels.
pub const MARGIN: u32 = 10;
/// Height of the area under a chart for its x labels, pixels.
pub const X_LABELS: u32 = 36;
/// Width of the area left of the probe for its y labels, pixels.
const Y_LABELS: u32 = 56;
/// The tallest and widest a probe is drawn, pixels (a longer probe is drawn smaller).
const MAX_HEIGHT: f64 = 960.0;
const MAX_WIDTH: f64 = 200.0;
/// The most pixels per µm (a short probe is not blown up past this).
const MAX_SCALE: f64 = 4.0;
/// The smallest a contact is drawn, pixels (so that its colour can be seen).
const MIN_CONTACT_PX: f64 = 3.0;
/// µm of probe drawn around the outermost contacts, and the tip's length.
const PAD_UM: f64 = 10.0;
const TIP_UM: f64 = 40.0;

/// The vertical placement a probe drawing sets, which the charts beside it share so that a
/// channel's row lines up across them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Depth {
    /// The y range drawn, µm (bottom, top).
    pub range: (f64, f64),
    /// The whole picture's height, pixels.
    pub height: u32,
}

/// Where and how large the probe of `rows` is drawn, its contacts `contact_um` (across,
/// along) in size.
pub fn layout(
    rows: &[ChannelRow],
    contact_um: (f64, f64),
    stated: bool,
    model: Option<String>,
) -> (ProbeView, Depth, (f64, f64)) {
    let (mut x_lo, mut x_hi, mut y_lo, mut y_hi) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for r in rows {
        x_lo = x_lo.min(r.x_um);
        x_hi = x_hi.max(r.x_um);
        y_lo = y_lo.min(r.y_um);
        y_hi = y_hi.max(r.y_um);
    }
    if rows.is_empty() {
        (x_lo, x_hi, y_lo, y_hi) = (0.0, 0.0, 0.0, 0.0);
    }
    let x_range = (
        x_lo - contact_um.0 / 2.0 - 2.0 * PAD_UM,
        x_hi + contact_um.0 / 2.0 + 2.0 * PAD_UM,
    );
    let y_bottom = y_lo - contact_um.1 / 2.0 - PAD_UM - TIP_UM;
    let y_top = y_hi + contact_um.1 / 2.0 + PAD_UM;
    let scale = (MAX_HEIGHT / (y_top - y_bottom))
        .min(MAX_WIDTH / (x_range.1 - x_range.0))
        .min(MAX_SCALE);
    let plot_w = ((x_range.1 - x_range.0) * scale).round().max(1.0);
    let plot_h = ((y_top - y_bottom) * scale).round().max(1.0);
    // The ranges that make the scale exact in both directions for the pixels given.
    let x_range = (x_range.0, x_range.0 + plot_w / scale);
    let y_range = (y_bottom, y_bottom + plot_h / scale);
    let width = plot_w as u32 + 2 * MARGIN + Y_LABELS;
    let height = plot_h as u32 + 2 * MARGIN + X_LABELS;
    let left = f64::from(MARGIN + Y_LABELS);
    let top = f64::from(MARGIN);
    let drawn_um = (
        contact_um.0.max(MIN_CONTACT_PX / scale),
        contact_um.1.max(MIN_CONTACT_PX / scale),
    );
    let view = ProbeView {
        stated,
        model,
        px_per_um: scale,
        origin_px: (
            left + (0.0 - x_range.0) * scale,
            top + (y_range.1 - 0.0) * scale,
        ),
        size_px: (width, height),
        contact_um: drawn_um,
    };
    (
        view,
        Depth {
            range: y_range,
            height,
        },
        x_range,
    )
}

/// The probe's SVG: `rows` placed as `view` says (from [`layout`]).
pub fn svg(
    colour_by: ColourBy,
    rows: &[ChannelRow],
    view: &ProbeView,
    depth: Depth,
    x_range: (f64, f64),
) -> DspResult<String> {
    let mut out = String::new();
    let (cw, ch) = view.contact_um;
    let mut titles = String::new();
    {
        let root = SVGBackend::with_string(&mut out, view.size_px).into_drawing_area();
        drawn(root.fill(&WHITE))?;
        let mut chart = drawn(
            ChartBuilder::on(&root)
                .margin(MARGIN)
                .x_label_area_size(X_LABELS)
                .y_label_area_size(Y_LABELS)
                .build_cartesian_2d(x_range.0..x_range.1, depth.range.0..depth.range.1),
        )?;
        drawn(
            chart
                .configure_mesh()
                .disable_mesh()
                .x_labels(2)
                .y_labels(8)
                .x_label_formatter(&|v| format!("{v:.0}"))
                .y_label_formatter(&|v| format!("{v:.0}"))
                .x_desc("x (µm)")
                .y_desc("y (µm)")
                .label_style((FONT, 11))
                .draw(),
        )?;
        // Each shank's outline, with its tip.
        let mut shanks: Vec<u32> = rows.iter().map(|r| r.shank).collect();
        shanks.sort_unstable();
        shanks.dedup();
        for shank in shanks {
            let on: Vec<&ChannelRow> = rows.iter().filter(|r| r.shank == shank).collect();
            let lo = on.iter().map(|r| r.x_um).fold(f64::INFINITY, f64::min) - cw / 2.0 - PAD_UM;
            let hi =
                on.iter().map(|r| r.x_um).fold(f64::NEG_INFINITY, f64::max) + cw / 2.0 + PAD_UM;
            let bottom =
                on.iter().map(|r| r.y_um).fold(f64::INFINITY, f64::min) - ch / 2.0 - PAD_UM;
            let top = depth.range.1;
            let outline = vec![
                (lo, top),
                (hi, top),
                (hi, bottom),
                ((lo + hi) / 2.0, bottom - TIP_UM),
                (lo, bottom),
            ];
            drawn(chart.draw_series(std::iter::once(Polygon::new(
                outline,
                RGBColor(0xe4, 0xe4, 0xe4).filled(),
            ))))?;
        }
        let (lo, hi) = value_range(colour_by, rows);
        for r in rows {
            let [red, green, blue] = match colour_by.value(r) {
                None => colour::of_class(&r.class),
                Some(v) => colour::sequential((v - lo) / (hi - lo)),
            };
            let corners = [
                (r.x_um - cw / 2.0, r.y_um + ch / 2.0),
                (r.x_um + cw / 2.0, r.y_um - ch / 2.0),
            ];
            drawn(chart.draw_series(std::iter::once(Rectangle::new(
                corners,
                RGBColor(red, green, blue).filled(),
            ))))?;
            let (a, b) = (
                chart.backend_coord(&corners[0]),
                chart.backend_coord(&corners[1]),
            );
            let contact = escape(
                &r.contact
                    .as_deref()
                    .map_or(String::new(), |c| format!(" ({c})")),
            );
            titles.push_str(&format!(
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#000\" fill-opacity=\"0\"><title>channel {} {}{contact}: {}, std {:.2} µV, MAD σ {:.2} µV, mean {:.2} µV, at x {} µm, y {} µm</title></rect>\n",
                a.0,
                a.1,
                (b.0 - a.0).max(1),
                (b.1 - a.1).max(1),
                r.index,
                escape(&r.name),
                r.class,
                r.std,
                r.mad_std,
                r.mean,
                r.x_um,
                r.y_um,
            ));
        }
        drawn(root.present())?;
    }
    Ok(put_over(
        &out,
        &format!("<g class=\"hover\">\n{titles}</g>"),
    ))
}

/// The range of `colour_by`'s values over `rows` (finite ones; `(0, 1)` where there are none
/// or, where all are equal, that value ± 1).
pub fn value_range(colour_by: ColourBy, rows: &[ChannelRow]) -> (f64, f64) {
    let values: Vec<f64> = rows
        .iter()
        .filter_map(|r| colour_by.value(r))
        .filter(|v| v.is_finite())
        .collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !(lo.is_finite() && hi.is_finite()) {
        (0.0, 1.0)
    } else if hi > lo {
        (lo, hi)
    } else {
        (lo - 1.0, hi + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(index: usize, x: f64, y: f64, class: &str) -> ChannelRow {
        ChannelRow {
            index,
            name: format!("ch{index}"),
            contact: Some(format!("e{index}")),
            x_um: x,
            y_um: y,
            shank: 0,
            on_probe: true,
            class: class.to_string(),
            std: 10.0,
            mad_std: 10.0,
            mean: 0.0,
        }
    }

    #[test]
    fn contacts_are_where_the_view_says() {
        let rows: Vec<ChannelRow> = (0..384)
            .map(|i| {
                row(
                    i,
                    [16.0, 48.0, 0.0, 32.0][i % 4],
                    20.0 * (i / 2) as f64,
                    if i == 3 { "dead" } else { "good" },
                )
            })
            .collect();
        let (view, depth, x_range) = layout(&rows, (12.0, 12.0), true, None);
        assert!(view.size_px.1 <= 960 + 2 * MARGIN + X_LABELS + 1);
        let svg = svg(ColourBy::Class, &rows, &view, depth, x_range).unwrap();
        assert!(svg.contains("<title>channel 3 ch3 (e3): dead"));
        // Channel 3's hover box is centred on the pixel the view gives for its contact.
        let want = (
            view.origin_px.0 + 32.0 * view.px_per_um,
            view.origin_px.1 - 20.0 * view.px_per_um,
        );
        let at = svg.find("<title>channel 3 ").unwrap();
        let rect = &svg[svg[..at].rfind("<rect").unwrap()..at];
        let num = |name: &str| -> f64 {
            let i = rect.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
            rect[i..].split('"').next().unwrap().parse().unwrap()
        };
        let centre = (
            num("x") + num("width") / 2.0,
            num("y") + num("height") / 2.0,
        );
        assert!(
            (centre.0 - want.0).abs() <= 1.5 && (centre.1 - want.1).abs() <= 1.5,
            "{centre:?} vs {want:?}"
        );
    }
}
