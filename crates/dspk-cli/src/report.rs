//! Formatting shared by the commands: exact durations as h:m:s, gain summaries, lists.

use dspk_types::{RationalTime, RecordingInfo, SignalUnit};
use serde::Serialize;

/// `h:mm:ss` with milliseconds when the time has a fraction (`0:01:00`, `1:02:03.500`); the
/// milliseconds are rounded down.
pub(crate) fn hms(t: RationalTime) -> String {
    let (n, d) = t.as_ratio();
    let whole = n / d;
    let millis = (n % d) * 1000 / d;
    let (h, m, s) = (whole / 3600, whole / 60 % 60, whole % 60);
    if n % d == 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{h}:{m:02}:{s:02}.{millis:03}")
    }
}

/// A time's exact text without the unit (`12.5`, `1/3`), as dspk's JSON writes times.
pub(crate) fn exact_seconds(t: RationalTime) -> String {
    let text = t.to_string();
    text.strip_suffix(" s").unwrap_or(&text).to_string()
}

/// A time for people: its exact decimal (`12.5 s`), or `≈` and six decimals when it has none
/// (`≈1.633333 s`).
pub(crate) fn seconds_text(t: RationalTime) -> String {
    let exact = t.to_string();
    if exact.contains('/') {
        format!("≈{:.6} s", t.as_seconds_f64())
    } else {
        exact
    }
}

/// Channels that share one scaling.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct GainGroup {
    /// Stored-to-unit multiplier.
    pub(crate) gain: f32,
    /// Added after the gain.
    pub(crate) offset: f32,
    /// The unit of the scaled values.
    pub(crate) unit: String,
    /// How many channels use it.
    pub(crate) channels: usize,
}

/// The distinct scalings of `info`'s channels, in order of first appearance.
pub(crate) fn gain_groups(info: &RecordingInfo) -> Vec<GainGroup> {
    let mut groups: Vec<GainGroup> = Vec::new();
    for ch in &info.channels {
        let unit = unit_name(&ch.unit);
        match groups.iter_mut().find(|g| {
            g.gain.to_bits() == ch.gain.to_bits()
                && g.offset.to_bits() == ch.offset.to_bits()
                && g.unit == unit
        }) {
            Some(g) => g.channels += 1,
            None => groups.push(GainGroup {
                gain: ch.gain,
                offset: ch.offset,
                unit,
                channels: 1,
            }),
        }
    }
    groups
}

/// A unit's name for output (`µV`, `dimensionless`).
pub(crate) fn unit_name(unit: &SignalUnit) -> String {
    unit.to_string()
}

/// One line per gain group: `0.195 µV per count, offset 0 (384 channels)`.
pub(crate) fn gain_lines(groups: &[GainGroup]) -> Vec<String> {
    groups
        .iter()
        .map(|g| {
            let per = match g.unit.as_str() {
                "dimensionless" => String::new(),
                u => format!(" {u}"),
            };
            let offset = if g.offset == 0.0 {
                String::new()
            } else {
                format!(" + {}{per}", g.offset)
            };
            let plural = if g.channels == 1 { "" } else { "s" };
            format!(
                "{}{per} per count{offset} ({} channel{plural})",
                g.gain, g.channels
            )
        })
        .collect()
}

/// `text` with its control characters shown as escapes (`\x1b`, `\x07`, `\x00`, `\x7f`), so
/// that text from a file (a `.meta` line, a channel name) cannot reach the terminal as
/// commands; line breaks are kept when `keep_newlines`.
pub(crate) fn escape_controls(text: &str, keep_newlines: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' if keep_newlines => out.push('\n'),
            c if c.is_control() => {
                let code = u32::from(c);
                if code <= 0xff {
                    out.push_str(&format!("\\x{code:02x}"));
                } else {
                    out.push_str(&format!("\\u{{{code:04x}}}"));
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// `3, 190` or `none`.
pub(crate) fn index_list(indices: &[usize]) -> String {
    if indices.is_empty() {
        return "none".to_string();
    }
    indices
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use dspk_types::{ChannelInfo, MemoryOrder, SampleFormat, SampleRate};

    #[test]
    fn clock_format() {
        assert_eq!(hms(RationalTime::new(60, 1).unwrap()), "0:01:00");
        assert_eq!(hms(RationalTime::new(7447, 2).unwrap()), "1:02:03.500");
        assert_eq!(
            hms(RationalTime::new(3600 * 10 + 1, 1).unwrap()),
            "10:00:01"
        );
        assert_eq!(hms(RationalTime::new(1, 3).unwrap()), "0:00:00.333");
        assert_eq!(exact_seconds(RationalTime::new(25, 2).unwrap()), "12.5");
        assert_eq!(exact_seconds(RationalTime::new(1, 3).unwrap()), "1/3");
        assert_eq!(seconds_text(RationalTime::new(25, 2).unwrap()), "12.5 s");
        assert_eq!(
            seconds_text(RationalTime::new(49, 30).unwrap()),
            "≈1.633333 s"
        );
    }

    #[test]
    fn gains_are_grouped() {
        let rate = SampleRate::from_ratio(1000, 1).unwrap();
        let mut info =
            RecordingInfo::new("r", 5, 10, rate, SampleFormat::I16, MemoryOrder::TimeMajor);
        let uv = |gain| ChannelInfo {
            name: "c".into(),
            gain,
            offset: 0.0,
            unit: SignalUnit::Microvolt,
            kind: dspk_types::ChannelKind::Signal,
        };
        info.channels = vec![uv(0.5), uv(2.0), uv(0.5), uv(0.5), ChannelInfo::new("sync")];
        let groups = gain_groups(&info);
        assert_eq!(groups.len(), 3);
        assert_eq!((groups[0].gain, groups[0].channels), (0.5, 3));
        assert_eq!((groups[1].gain, groups[1].channels), (2.0, 1));
        assert_eq!(groups[2].unit, "dimensionless");
        let lines = gain_lines(&groups);
        assert_eq!(lines[0], "0.5 µV per count (3 channels)");
        assert_eq!(lines[2], "1 per count (1 channel)");
        assert_eq!(index_list(&[3, 190]), "3, 190");
        assert_eq!(index_list(&[]), "none");
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(
            escape_controls("a\u{1b}[31mb\u{7}c\0d\u{7f}\u{9b}e\tf", false),
            "a\\x1b[31mb\\x07c\\x00d\\x7f\\x9be\\x09f"
        );
        assert_eq!(escape_controls("µV\nnext", true), "µV\nnext");
        assert_eq!(escape_controls("a\nb", false), "a\\x0ab");
    }
}
