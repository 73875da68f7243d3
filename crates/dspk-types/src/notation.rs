//! The written notations of times (`12.5`, `1:02:03.5`, `375000smp`), channel lists
//! (`0:5,100,384`) and rate choices (`nominal`, `measured`, `30000.12`): one parser of each,
//! used by the program's flags, the Python package's keyword arguments and the fuzz checks.

use std::fmt;
use std::ops::RangeInclusive;

use crate::{DspError, DspResult, RationalTime, SampleRate};

/// The suffixes that make a time a sample index (`375000smp`, `375000samples`).
const SAMPLE_SUFFIXES: [&str; 2] = ["samples", "smp"];

/// What a time argument accepts, for error messages and `--help`.
pub const TIME_SYNTAX: &str =
    "seconds (12.5, 12.5s, 1/3), h:m:s (1:02:03.5, 2:03.5) or a sample index (375000smp)";

/// A time as written on the command line: exact seconds, or a sample index.
///
/// Times are relative to the recording's first sample (sample 0 is time 0, whatever the
/// recording's own start time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeSpec {
    /// Exact seconds from the first sample.
    Seconds(RationalTime),
    /// A sample index.
    Samples(u64),
}

impl TimeSpec {
    /// Parses `12.5`, `12.5s`, `1/3`, `1:02:03.5`, `2:03.5`, `375000smp` or `375000samples`.
    pub fn parse(text: &str) -> DspResult<Self> {
        let t = text.trim();
        let invalid = || DspError::config(format!("'{text}' is not a time: write {TIME_SYNTAX}"));
        if let Some(digits) = SAMPLE_SUFFIXES.iter().find_map(|s| t.strip_suffix(s)) {
            let digits = digits.trim();
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(invalid());
            }
            return digits
                .parse()
                .map(TimeSpec::Samples)
                .map_err(|_| DspError::config(format!("'{text}' is too large a sample index")));
        }
        if t.contains(':') {
            return parse_clock(t)
                .ok_or_else(invalid)
                .and_then(|r| r.map(TimeSpec::Seconds));
        }
        // RationalTime takes "12.5", "1/3", "12.5s"; a sign or exponent it refuses.
        t.parse::<RationalTime>()
            .map(TimeSpec::Seconds)
            .map_err(|_| invalid())
    }

    /// The sample index this time names at `rate` (the sample at or before a time in seconds).
    pub fn to_sample_index(self, rate: SampleRate) -> DspResult<u64> {
        match self {
            TimeSpec::Seconds(t) => t.to_sample_index(rate),
            TimeSpec::Samples(n) => Ok(n),
        }
    }
}

impl fmt::Display for TimeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeSpec::Seconds(t) => write!(f, "{t}"),
            TimeSpec::Samples(n) => write!(f, "sample {n}"),
        }
    }
}

/// `h:m:s` or `m:s`, seconds with an optional exact fraction: `None` when the shape is wrong,
/// `Some(Err)` on overflow.
fn parse_clock(t: &str) -> Option<DspResult<RationalTime>> {
    let parts: Vec<&str> = t.split(':').collect();
    let (hours, minutes, seconds) = match parts.as_slice() {
        [m, s] => ("0", *m, *s),
        [h, m, s] => (*h, *m, *s),
        _ => return None,
    };
    let whole = |p: &str| -> Option<u64> {
        (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .then(|| p.parse().ok())
            .flatten()
    };
    let hours = whole(hours)?;
    let minutes = whole(minutes)?;
    if parts.len() == 3 && minutes >= 60 {
        return None;
    }
    let seconds_ok = seconds.bytes().next().is_some_and(|b| b.is_ascii_digit())
        && seconds.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    if !seconds_ok {
        return None;
    }
    let secs: RationalTime = seconds.parse().ok()?;
    if secs >= RationalTime::new(60, 1).expect("60/1 is a valid time") {
        return None;
    }
    let whole_seconds = hours
        .checked_mul(3600)
        .and_then(|h| minutes.checked_mul(60).and_then(|m| h.checked_add(m)));
    Some(match whole_seconds {
        Some(w) => RationalTime::new(u128::from(w), 1).and_then(|w| w.checked_add(secs)),
        None => Err(DspError::Overflow(format!("time {t}"))),
    })
}

/// A channel list as written (`0:5,100,384`): indices and inclusive ranges, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelList {
    spans: Vec<RangeInclusive<usize>>,
    text: String,
}

impl ChannelList {
    /// Parses comma-separated indices (`100`) and inclusive ranges (`0:5`), 0-based.
    ///
    /// Refused: an empty list or item, a reversed range, anything but digits, `:` and `,`.
    pub fn parse(text: &str) -> DspResult<Self> {
        let invalid = |why: String| {
            DspError::config(format!(
                "channel list '{text}' {why}: write 0-based indices and inclusive ranges \
                 separated by commas, e.g. 0:5,100,383"
            ))
        };
        let index = |item: &str| -> DspResult<usize> {
            let item = item.trim();
            if item.is_empty() || !item.bytes().all(|b| b.is_ascii_digit()) {
                return Err(invalid(format!(
                    "has '{item}' where a channel index belongs"
                )));
            }
            item.parse()
                .map_err(|_| invalid(format!("has an index too large: {item}")))
        };
        if text.trim().is_empty() {
            return Err(invalid("is empty".to_string()));
        }
        let mut spans = Vec::new();
        for item in text.split(',') {
            let span = match item.split_once(':') {
                Some((a, b)) => {
                    let (a, b) = (index(a)?, index(b)?);
                    if a > b {
                        return Err(invalid(format!("has the reversed range {a}:{b}")));
                    }
                    a..=b
                }
                None => {
                    let i = index(item)?;
                    i..=i
                }
            };
            spans.push(span);
        }
        Ok(Self {
            spans,
            text: text.to_string(),
        })
    }

    /// The list of exactly these indices, in this order (a list given as numbers, as Python
    /// gives it); refused where it is empty.
    pub fn from_indices(indices: &[usize]) -> DspResult<Self> {
        if indices.is_empty() {
            return Err(DspError::config(
                "the channel list is empty: give at least one channel index",
            ));
        }
        let text = indices
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",");
        Ok(Self {
            spans: indices.iter().map(|&i| i..=i).collect(),
            text,
        })
    }

    /// The channel indices, in the order written, checked against a recording of `count`
    /// channels; a channel listed twice is refused.
    pub fn resolve(&self, count: usize) -> DspResult<Vec<usize>> {
        let mut seen = vec![false; count];
        let mut out = Vec::new();
        for span in &self.spans {
            if *span.end() >= count {
                return Err(DspError::InvalidChannel {
                    index: *span.end(),
                    count,
                });
            }
            for c in span.clone() {
                if std::mem::replace(&mut seen[c], true) {
                    return Err(DspError::config(format!(
                        "channel list '{}' names channel {c} twice",
                        self.text
                    )));
                }
                out.push(c);
            }
        }
        Ok(out)
    }
}

/// Which rate a recording is read at (`--rate`, `rate=`): the format's nominal rate, the rate
/// it measured, or a rate of the user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateChoice {
    /// The format's nominal rate.
    Nominal,
    /// The rate the format measured.
    Measured,
    /// A rate of the user's, exact.
    Hz(SampleRate),
}

impl RateChoice {
    /// `nominal`, `measured`, or an exact rate (`30000.12`, `750003/25`).
    pub fn parse(text: &str) -> DspResult<Self> {
        match text {
            "nominal" => Ok(Self::Nominal),
            "measured" => Ok(Self::Measured),
            _ => text.parse::<SampleRate>().map(Self::Hz),
        }
    }

    /// The rate this choice names for the recording `info` describes (`label` names it in the
    /// error): refused where `measured` is asked of a recording that states no measured rate.
    pub fn rate_for(self, info: &crate::RecordingInfo, label: &str) -> DspResult<SampleRate> {
        match self {
            Self::Hz(rate) => Ok(rate),
            Self::Nominal => Ok(info.nominal()),
            Self::Measured => info.measured_rate.ok_or_else(|| DspError::NoMeasuredRate {
                recording: label.to_string(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(n: u128, d: u128) -> TimeSpec {
        TimeSpec::Seconds(RationalTime::new(n, d).unwrap())
    }

    #[test]
    fn seconds_are_exact() {
        assert_eq!(TimeSpec::parse("12.5").unwrap(), secs(25, 2));
        assert_eq!(TimeSpec::parse("12.5s").unwrap(), secs(25, 2));
        assert_eq!(TimeSpec::parse(" 0 ").unwrap(), secs(0, 1));
        assert_eq!(TimeSpec::parse("1/3").unwrap(), secs(1, 3));
        // 0.1 is one tenth exactly, not the nearest double.
        assert_eq!(TimeSpec::parse("0.1").unwrap(), secs(1, 10));
    }

    #[test]
    fn clock_times() {
        assert_eq!(TimeSpec::parse("1:02:03.5").unwrap(), secs(7447, 2));
        assert_eq!(TimeSpec::parse("2:03.25").unwrap(), secs(493, 4));
        assert_eq!(TimeSpec::parse("0:00").unwrap(), secs(0, 1));
        assert_eq!(TimeSpec::parse("100:00:00").unwrap(), secs(360_000, 1));
        // Minutes may exceed 59 in m:s form (90:00 is an hour and a half).
        assert_eq!(TimeSpec::parse("90:00").unwrap(), secs(5400, 1));
        for bad in [
            "1:60:00", "1:00:60", "1:2:3:4", ":30", "1:", "1:-2", "a:00", "1:0x1",
        ] {
            assert!(TimeSpec::parse(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn sample_indices() {
        assert_eq!(
            TimeSpec::parse("375000smp").unwrap(),
            TimeSpec::Samples(375_000)
        );
        assert_eq!(
            TimeSpec::parse("375000samples").unwrap(),
            TimeSpec::Samples(375_000)
        );
        assert_eq!(TimeSpec::parse("0smp").unwrap(), TimeSpec::Samples(0));
        assert_eq!(
            TimeSpec::parse("375000 smp").unwrap(),
            TimeSpec::Samples(375_000)
        );
        for bad in [
            "smp",
            "1.5smp",
            "-1smp",
            "99999999999999999999999smp",
            "1e3smp",
        ] {
            assert!(TimeSpec::parse(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn bad_times_say_the_syntax() {
        for bad in ["", "-1", "abc", "1e3", "12.5ms", "NaN", "inf", "1/0"] {
            let err = TimeSpec::parse(bad).unwrap_err().to_string();
            assert!(err.contains("375000smp"), "{bad}: {err}");
            assert!(!err.contains('\n'), "{bad}: {err}");
        }
    }

    #[test]
    fn seconds_become_sample_indices_exactly() {
        let rate = SampleRate::from_ratio(30_000, 1).unwrap();
        assert_eq!(
            TimeSpec::parse("12.5")
                .unwrap()
                .to_sample_index(rate)
                .unwrap(),
            375_000
        );
        assert_eq!(
            TimeSpec::parse("375000smp")
                .unwrap()
                .to_sample_index(rate)
                .unwrap(),
            375_000
        );
        // A calibrated SpikeGLX-like rate: floor(t * rate) exactly.
        let odd: SampleRate = "29999.4325".parse().unwrap();
        assert_eq!(
            TimeSpec::parse("10").unwrap().to_sample_index(odd).unwrap(),
            299_994
        );
        assert_eq!(
            TimeSpec::parse("1:00")
                .unwrap()
                .to_sample_index(odd)
                .unwrap(),
            1_799_965
        );
        // Every sample's own exact time maps back to it.
        let mut seed = 0x5eed_u64;
        for _ in 0..1000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let i = seed >> 24;
            let t = RationalTime::from_samples(i, odd).unwrap();
            let text = t.to_string();
            let back = TimeSpec::parse(&text)
                .unwrap()
                .to_sample_index(odd)
                .unwrap();
            assert_eq!(back, i, "seed {seed}: {text}");
        }
    }

    #[test]
    fn channel_lists() {
        let list = ChannelList::parse("0:5,100,383").unwrap();
        assert_eq!(list.resolve(384).unwrap(), vec![0, 1, 2, 3, 4, 5, 100, 383]);
        assert_eq!(
            ChannelList::parse(" 7 , 2:3 ").unwrap().resolve(8).unwrap(),
            vec![7, 2, 3]
        );
        assert_eq!(
            ChannelList::parse("4:4").unwrap().resolve(5).unwrap(),
            vec![4]
        );
    }

    #[test]
    fn bad_channel_lists() {
        for bad in ["", " ", "1,,2", "5:2", "a", "1-3", "-1", "1:", ":3", "1;2"] {
            let err = ChannelList::parse(bad).unwrap_err().to_string();
            assert!(err.contains("0:5,100,383"), "{bad}: {err}");
        }
        let err = ChannelList::parse("0:384")
            .unwrap()
            .resolve(384)
            .unwrap_err();
        assert_eq!(
            err,
            DspError::InvalidChannel {
                index: 384,
                count: 384
            }
        );
        // A huge range is refused before anything is allocated for it.
        let huge = format!("0:{}", usize::MAX);
        assert!(ChannelList::parse(&huge).unwrap().resolve(384).is_err());
        let err = ChannelList::parse("1:3,2")
            .unwrap()
            .resolve(10)
            .unwrap_err()
            .to_string();
        assert!(err.contains("channel 2 twice"), "{err}");
    }
}
