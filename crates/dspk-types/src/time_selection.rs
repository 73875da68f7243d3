//! The part of a recording a command selects in time: a start, and an end or a duration, each
//! a [`TimeSpec`] — resolved to a sample range exactly, with messages that name the options as
//! the face calls them.

use std::ops::Range;

use crate::{DspError, DspResult, RecordingInfo, TimeSpec};

/// What a face calls its time options, for the messages of a refused selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeNames<'a> {
    /// The start (`--start`, `start`).
    pub start: &'a str,
    /// The end (`--end`, `end`).
    pub end: &'a str,
    /// The duration (`--duration`, `duration`).
    pub duration: &'a str,
}

/// The part of a recording in time that a command selects: a start, and an end or a duration,
/// each a [`TimeSpec`]; none is the whole recording.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeSelection {
    /// First sample wanted (default: the first).
    pub start: Option<TimeSpec>,
    /// One past the last sample wanted (default: the end).
    pub end: Option<TimeSpec>,
    /// How much from the start (at most; cut at the end of the recording).
    pub duration: Option<TimeSpec>,
}

impl TimeSelection {
    /// The sample range these options select in `info`: times are relative to the first
    /// sample, in exact arithmetic at the recording's own rate.
    ///
    /// Refused ([`DspError::Selection`], the options called by `names`, the recording by
    /// `label`): an end and a duration together, an end before the start, a start or end past
    /// the end of the recording, an empty range, a recording without samples.
    pub fn range(
        &self,
        info: &RecordingInfo,
        label: &str,
        names: TimeNames<'_>,
    ) -> DspResult<Range<u64>> {
        let rate = info.sample_rate;
        let total = info.samples;
        if total == 0 {
            return Err(DspError::Selection(format!(
                "{label}: the recording has no samples (not one whole frame of {} channels)",
                info.channel_count()
            )));
        }
        let index = |t: &TimeSpec, flag: &str| {
            t.to_sample_index(rate)
                .map_err(|e| DspError::Selection(format!("{flag}: {e}")))
        };
        let describe_total = || match info.duration() {
            Ok(d) => format!("{d}, {total} samples"),
            Err(_) => format!("{total} samples"),
        };
        let start = match &self.start {
            Some(t) => index(t, names.start)?,
            None => 0,
        };
        if let Some(t) = &self.start
            && start >= total
        {
            return Err(DspError::Selection(format!(
                "{} {t} is at or past the end of the recording ({})",
                names.start,
                describe_total()
            )));
        }
        let end = match (&self.end, &self.duration) {
            (Some(_), Some(_)) => {
                return Err(DspError::Selection(format!(
                    "give {} or {}, not both",
                    names.end, names.duration
                )));
            }
            (Some(t), None) => {
                let end = index(t, names.end)?;
                if end > total {
                    return Err(DspError::Selection(format!(
                        "{} {t} is past the end of the recording ({})",
                        names.end,
                        describe_total()
                    )));
                }
                end
            }
            (None, Some(d)) => start.saturating_add(index(d, names.duration)?).min(total),
            (None, None) => total,
        };
        if end < start {
            return Err(DspError::Selection(format!(
                "{} ({}) is before {} ({})",
                names.end,
                self.end
                    .map_or_else(|| format!("sample {end}"), |t| t.to_string()),
                names.start,
                self.start
                    .map_or_else(|| format!("sample {start}"), |t| t.to_string()),
            )));
        }
        if end == start {
            let period = rate
                .duration_for_samples(1)
                .map_or_else(|_| String::from("one period"), |t| t.to_string());
            let (what, verb) = match (&self.start, &self.end, &self.duration) {
                (_, _, Some(d)) => (format!("{} {d}", names.duration), "selects"),
                (Some(s), Some(e), None) => (
                    format!("{} {s} and {} {e}", names.start, names.end),
                    "select",
                ),
                (None, Some(e), None) => (format!("{} {e}", names.end), "selects"),
                _ => ("the time range".to_string(), "selects"),
            };
            return Err(DspError::Selection(format!(
                "{what} {verb} no samples (both ends are sample {start}): at {rate} a sample \
                 lasts {period}"
            )));
        }
        Ok(start..end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MemoryOrder, SampleFormat, SampleRate};

    const FLAGS: TimeNames<'static> = TimeNames {
        start: "--start",
        end: "--end",
        duration: "--duration",
    };

    fn info(rate: &str, samples: u64) -> RecordingInfo {
        let rate: SampleRate = rate.parse().unwrap();
        RecordingInfo::new(
            "r",
            2,
            samples,
            rate,
            SampleFormat::I16,
            MemoryOrder::TimeMajor,
        )
    }

    fn opts(start: Option<&str>, end: Option<&str>, duration: Option<&str>) -> TimeSelection {
        let p = |s: Option<&str>| s.map(|s| TimeSpec::parse(s).unwrap());
        TimeSelection {
            start: p(start),
            end: p(end),
            duration: p(duration),
        }
    }

    #[test]
    fn ranges() {
        let i = info("30000", 1_800_000);
        assert_eq!(
            opts(None, None, None).range(&i, "r.bin", FLAGS).unwrap(),
            0..1_800_000
        );
        assert_eq!(
            opts(Some("1.5"), Some("2"), None)
                .range(&i, "r.bin", FLAGS)
                .unwrap(),
            45_000..60_000
        );
        assert_eq!(
            opts(Some("100smp"), None, Some("0.01"))
                .range(&i, "r.bin", FLAGS)
                .unwrap(),
            100..400
        );
        assert_eq!(
            opts(Some("59"), None, Some("10"))
                .range(&i, "r.bin", FLAGS)
                .unwrap(),
            1_770_000..1_800_000
        );
        assert_eq!(
            opts(None, Some("1:00"), None)
                .range(&i, "r.bin", FLAGS)
                .unwrap(),
            0..1_800_000
        );
    }

    #[test]
    fn bad_ranges_are_one_line() {
        let i = info("30000", 1_800_000);
        let cases = [
            (
                opts(Some("2"), Some("1"), None),
                "--end (1 s) is before --start (2 s)",
            ),
            (
                opts(Some("1"), Some("1"), None),
                "--start 1 s and --end 1 s select no samples",
            ),
            (opts(None, Some("61"), None), "past the end"),
            (opts(Some("60"), None, None), "at or past the end"),
            (opts(None, Some("1"), Some("1")), "not both"),
        ];
        for (o, want) in cases {
            let err = o.range(&i, "r.bin", FLAGS).unwrap_err().to_string();
            assert!(err.contains(want), "{o:?}: {err}");
            assert!(!err.contains('\n'));
        }
        // Exact times, no float noise; the flag is named.
        let err = opts(None, None, Some("0"))
            .range(&i, "r.bin", FLAGS)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "--duration 0 s selects no samples (both ends are sample 0): at 30000 Hz a sample \
             lasts 1/30000 s"
        );
        // An empty recording names the file.
        let err = opts(None, None, None)
            .range(&info("30000", 0), "empty.bin", FLAGS)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "empty.bin: the recording has no samples (not one whole frame of 2 channels)"
        );
    }
}
