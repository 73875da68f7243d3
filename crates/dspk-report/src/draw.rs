//! The report's pictures, drawn by plotters as SVG: axes, ticks, labels, lines and markers
//! come from plotters; a heat map's pixels are a PNG placed under its axes; a contact's hover
//! text is an SVG `<title>` laid over it.
//!
//! Why plotters: it is the Rust plotting library in widest use (kept by its authors since 2019,
//! 0.3.7 current), it draws SVG into a `String` with no system fonts, no C library and no
//! JavaScript, and with only its SVG backend it builds in seconds: a self-contained page needs
//! nothing more.

use std::fmt::Display;

use dspk_types::{DspError, DspResult};

pub mod heat;
pub mod noise;
pub mod probe;
pub mod traces;

/// The font every label uses.
pub const FONT: &str = "sans-serif";

/// A plotters result as dspk's: drawing into a `String` fails only on a bug, named here.
pub fn drawn<T, E: Display>(result: Result<T, E>) -> DspResult<T> {
    result.map_err(|e| DspError::config(format!("a report chart does not draw: {e}")))
}

/// `svg` with `element` placed first inside its `<svg …>` element: under everything plotters
/// drew (a heat map's pixels under its axes).
pub fn put_under(svg: &str, element: &str) -> String {
    match svg
        .find("<svg")
        .and_then(|i| svg[i..].find('>').map(|j| i + j + 1))
    {
        Some(at) => format!("{}\n{element}{}", &svg[..at], &svg[at..]),
        None => svg.to_string(),
    }
}

/// `svg` with `element` placed last inside it: over everything plotters drew.
pub fn put_over(svg: &str, element: &str) -> String {
    match svg.rfind("</svg>") {
        Some(at) => format!("{}{element}\n{}", &svg[..at], &svg[at..]),
        None => svg.to_string(),
    }
}

/// An SVG `<image>` showing the PNG data URI `href` in the box `(x, y, w, h)`, its pixels
/// scaled without smoothing.
pub fn image(href: &str, x: i32, y: i32, w: i32, h: i32) -> String {
    format!(
        "<image x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" preserveAspectRatio=\"none\" \
         style=\"image-rendering:pixelated\" href=\"{href}\"/>"
    )
}

/// Text escaped for XML and HTML (`&`, `<`, `>`, `"`, `'`).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_go_under_and_over() {
        let svg = "<svg width=\"2\">\n<rect/>\n</svg>\n";
        assert_eq!(
            put_under(svg, "<a/>"),
            "<svg width=\"2\">\n<a/>\n<rect/>\n</svg>\n"
        );
        assert_eq!(
            put_over(svg, "<b/>"),
            "<svg width=\"2\">\n<rect/>\n<b/>\n</svg>\n"
        );
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
