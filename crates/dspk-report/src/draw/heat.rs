//! Heat maps: a window of every channel as colours (time across, channels down) under plotters'
//! axes, with its colour bar; and a whitening matrix the same way.

use plotters::prelude::*;

use super::{FONT, drawn, image, put_under};
use crate::colour;
use crate::png::{data_uri, palette_png};
use dspk_types::DspResult;

/// Width of a heat map's plot, pixels: also the columns a window is reduced to.
pub const COLUMNS: usize = 240;
/// Width of the area left of a heat map for its channel labels.
const Y_LABELS: u32 = 40;
/// Height of the area under it for its time labels.
const X_LABELS: u32 = 34;
const MARGIN: u32 = 8;
/// The colour bar's width with its labels.
const BAR: u32 = 64;

/// The pixel height of a heat map of `channels` rows.
pub fn plot_height(channels: usize) -> u32 {
    (channels as u32).clamp(160, 384)
}

/// A heat map's SVG: `values` (`channels × columns`, row-major) from `t0` to `t1` seconds,
/// coloured from `vmin` (blue) to `vmax` (red), with the colour bar labelled in `unit`.
#[allow(clippy::too_many_arguments)]
pub fn svg(
    values: &[f32],
    channels: usize,
    columns: usize,
    t0: f64,
    t1: f64,
    vmin: f64,
    vmax: f64,
    unit: &str,
) -> DspResult<String> {
    let palette = colour::diverging();
    let indices: Vec<u8> = values
        .iter()
        .map(|&v| colour::index(v, vmin, vmax))
        .collect();
    let picture = data_uri(&palette_png(
        columns as u32,
        channels as u32,
        &indices,
        &palette,
    ));
    let bar_indices: Vec<u8> = (0..=255u8).rev().collect();
    let bar = data_uri(&palette_png(1, 256, &bar_indices, &palette));
    let height = plot_height(channels) + 2 * MARGIN + X_LABELS;
    let width = COLUMNS as u32 + Y_LABELS + 2 * MARGIN + BAR;
    let mut out = String::new();
    let boxes;
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        let (left, right) = root.split_horizontally(width - BAR);
        let mut chart = drawn(
            ChartBuilder::on(&left)
                .margin(MARGIN)
                .x_label_area_size(X_LABELS)
                .y_label_area_size(Y_LABELS)
                .build_cartesian_2d(t0..t1, (channels as f64)..0.0),
        )?;
        drawn(
            chart
                .configure_mesh()
                .disable_mesh()
                .x_labels(3)
                .y_labels(6)
                .x_label_formatter(&|t| format!("{t:.2} s"))
                .y_label_formatter(&|c| format!("{c:.0}"))
                .y_desc("channel")
                .label_style((FONT, 11))
                .draw(),
        )?;
        let plot = chart.plotting_area().get_pixel_range();
        let mut bar_chart = drawn(
            ChartBuilder::on(&right)
                .margin(MARGIN)
                .margin_left(4)
                .x_label_area_size(X_LABELS)
                .right_y_label_area_size(BAR - 4 - MARGIN - 12)
                .build_cartesian_2d(0.0..1.0, vmin.min(vmax - 1e-9)..vmax),
        )?;
        drawn(
            bar_chart
                .configure_mesh()
                .disable_mesh()
                .disable_x_axis()
                .y_labels(5)
                .y_label_formatter(&|v| format!("{v:.0}"))
                .x_desc(unit)
                .label_style((FONT, 10))
                .draw(),
        )?;
        let bar_box = bar_chart.plotting_area().get_pixel_range();
        boxes = (plot, bar_box);
        drawn(root.present())?;
    }
    let (plot, bar_box) = boxes;
    let out = put_under(&out, &image_in(&bar, &bar_box));
    Ok(on_white(
        &put_under(&out, &image_in(&picture, &plot)),
        width,
        height,
    ))
}

/// A whitening matrix's SVG: `weights` (`n × n`, row-major) from `-limit` (blue) to `limit`
/// (red), input channel across, output channel down.
pub fn matrix_svg(weights: &[f32], n: usize, limit: f64) -> DspResult<String> {
    let palette = colour::diverging();
    let indices: Vec<u8> = weights
        .iter()
        .map(|&v| colour::index(v, -limit, limit))
        .collect();
    let picture = data_uri(&palette_png(n as u32, n as u32, &indices, &palette));
    let side = 240u32;
    let (width, height) = (side + Y_LABELS + 2 * MARGIN, side + X_LABELS + 2 * MARGIN);
    let mut out = String::new();
    let plot;
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        let mut chart = drawn(
            ChartBuilder::on(&root)
                .margin(MARGIN)
                .x_label_area_size(X_LABELS)
                .y_label_area_size(Y_LABELS)
                .build_cartesian_2d(0.0..n as f64, n as f64..0.0),
        )?;
        drawn(
            chart
                .configure_mesh()
                .disable_mesh()
                .x_labels(4)
                .y_labels(4)
                .x_label_formatter(&|c| format!("{c:.0}"))
                .y_label_formatter(&|c| format!("{c:.0}"))
                .x_desc("input channel")
                .label_style((FONT, 11))
                .draw(),
        )?;
        plot = chart.plotting_area().get_pixel_range();
        drawn(root.present())?;
    }
    Ok(on_white(
        &put_under(&out, &image_in(&picture, &plot)),
        width,
        height,
    ))
}

/// An `<image>` of `picture` filling the pixel box `area` (x range, y range).
fn image_in(picture: &str, area: &(std::ops::Range<i32>, std::ops::Range<i32>)) -> String {
    let (x, y) = area;
    image(picture, x.start, y.start, x.end - x.start, y.end - y.start)
}

/// `svg` (`width × height`) on a white background laid under everything in it.
fn on_white(svg: &str, width: u32, height: u32) -> String {
    put_under(
        svg,
        &format!("<rect x=\"0\" y=\"0\" width=\"{width}\" height=\"{height}\" fill=\"#ffffff\"/>"),
    )
}
