//! The recording a command works on: a file, or the built-in synthetic recording; and the
//! sample range its time options select.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dspk_types::{
    ConcatOptions, GapFill, RatedRecording, RecordingInfo, RecordingSource, SampleRate,
    SlicedRecording, SyntheticConfig, SyntheticRecording,
};

use crate::error::{CliError, CliResult};
use crate::parse::TimeSpec;

/// Where a recording came from.
#[derive(Debug, Clone)]
pub(crate) enum Origin {
    /// The built-in synthetic recording, with the channels it planted.
    Synthetic {
        /// Planted dead (flat) channels.
        dead: Vec<usize>,
        /// Planted noisy channels.
        noisy: Vec<usize>,
    },
    /// A file.
    File {
        /// The path given.
        path: PathBuf,
        /// What the reader says the file is (`raw binary + JSON sidecar`, `SpikeGLX`).
        kind: String,
    },
    /// Several files read end to end (`--concat`).
    Joined {
        /// The files, in the order joined.
        paths: Vec<PathBuf>,
        /// What the first file is.
        kind: String,
    },
}

/// The rate `--rate` chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RateChoice {
    /// The format's nominal rate.
    Nominal,
    /// The rate the format measured.
    Measured,
    /// A rate of the user's.
    Hz(SampleRate),
}

impl RateChoice {
    /// `nominal`, `measured`, or an exact rate (`30000.12`, `750003/25`).
    pub(crate) fn parse(text: &str) -> CliResult<Self> {
        match text {
            "nominal" => Ok(Self::Nominal),
            "measured" => Ok(Self::Measured),
            _ => text.parse::<SampleRate>().map(Self::Hz).map_err(|e| {
                CliError::from(e).context("--rate (a rate in Hz, `nominal` or `measured`)")
            }),
        }
    }
}

/// How `--concat` joins several files.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct JoinOptions {
    /// Fill gaps with zeros instead of starting segments (`--zero-fill-gaps`).
    pub(crate) zero_fill: bool,
    /// The rate difference accepted, in ppm (`--rate-tolerance`).
    pub(crate) tolerance_ppm: Option<f64>,
    /// The Open Ephys stream to read (`--stream`).
    pub(crate) stream: Option<String>,
}

/// An open recording.
pub(crate) struct Input {
    /// The recording.
    pub(crate) source: Arc<dyn RecordingSource>,
    /// Where it came from.
    pub(crate) origin: Origin,
    /// What the reader noticed without refusing the file (a dropped partial frame).
    pub(crate) warnings: Vec<String>,
}

impl Input {
    /// Opens `path`, or the built-in synthetic recording of `synthetic_length` (default 60 s)
    /// when there is no path.
    pub(crate) fn open(
        path: Option<&Path>,
        synthetic_length: Option<TimeSpec>,
        stream: Option<&str>,
    ) -> CliResult<Self> {
        match path {
            Some(path) => {
                if synthetic_length.is_some() {
                    return Err(CliError::new(
                        "--synthetic-duration applies to the built-in synthetic recording, not \
                         to a recording file",
                    ));
                }
                open_file(path, stream)
            }
            None => Self::synthetic(synthetic_length),
        }
    }

    /// The built-in synthetic recording (the default probe), `length` long (default 60 s).
    pub(crate) fn synthetic(length: Option<TimeSpec>) -> CliResult<Self> {
        let config = SyntheticConfig::default();
        let samples = match length {
            Some(t) => t
                .to_sample_index(config.sample_rate)
                .map_err(|e| CliError::from(e).context("--synthetic-duration"))?,
            None => config.samples,
        };
        if samples == 0 {
            return Err(CliError::new(
                "--synthetic-duration is shorter than one sample: the recording would be empty",
            ));
        }
        let rec = SyntheticRecording::new(config.with_samples(samples))?;
        Ok(Self {
            origin: Origin::Synthetic {
                dead: rec.dead_channels().to_vec(),
                noisy: rec.noisy_channels().to_vec(),
            },
            source: Arc::new(rec),
            warnings: Vec::new(),
        })
    }

    /// `paths` read end to end as one recording (`--concat`): SpikeGLX trigger files in
    /// trigger order, placed by their clocks; gaps start segments or are zero-filled.
    pub(crate) fn open_joined(paths: &[PathBuf], join: JoinOptions) -> CliResult<Self> {
        if let Some(missing) = paths.iter().find(|p| !p.exists()) {
            return Err(CliError::new(format!(
                "{}: no such file",
                missing.display()
            )));
        }
        let options = ConcatOptions {
            gaps: if join.zero_fill {
                GapFill::Zeros
            } else {
                GapFill::Segments
            },
            rate_tolerance_ppm: join.tolerance_ppm,
            part_per_segment: false,
        };
        let open = dspk_io::OpenOptions {
            stream: join.stream.clone(),
        };
        let joined = dspk_io::open_joined_with(paths, options, &open)?;
        let kind = joined.format.label();
        Ok(Self {
            origin: Origin::Joined {
                paths: joined.paths,
                kind: format!("{kind}, {} files joined", paths.len()),
            },
            source: Arc::new(joined.recording),
            warnings: joined.warnings,
        })
    }

    /// The recording read at the rate `--rate` chose instead of the one it is timed at, where
    /// one is given.
    pub(crate) fn with_rate(mut self, rate: Option<RateChoice>) -> CliResult<Self> {
        let info = self.source.info();
        let rate = match rate {
            None => return Ok(self),
            Some(RateChoice::Hz(r)) => r,
            Some(RateChoice::Nominal) => info.nominal(),
            Some(RateChoice::Measured) => info.measured_rate.ok_or_else(|| {
                CliError::new(format!(
                    "--rate measured: {} states no measured rate (Open Ephys 0.6+ sample \
                     numbers with timestamps and SpikeGLX imec files do)",
                    self.label()
                ))
            })?,
        };
        if rate != info.sample_rate {
            self.source = Arc::new(RatedRecording::new(self.source, rate));
        }
        Ok(self)
    }

    /// Only segment `index` of the recording, where one is given (`--segment`).
    pub(crate) fn with_segment(mut self, index: Option<usize>) -> CliResult<Self> {
        if let Some(k) = index {
            let segs = self.source.info().segments();
            let range = segs
                .get(k)
                .map_err(|e| CliError::from(e).context("--segment"))?
                .range();
            self.source = Arc::new(SlicedRecording::new(self.source, range, None)?);
        }
        Ok(self)
    }

    /// The recording with the probe of the probeinterface JSON file `--probe` names, where
    /// one is given.
    pub(crate) fn with_probe(mut self, path: Option<&Path>) -> CliResult<Self> {
        if let Some(path) = path {
            self.source = dspk_io::attach_probe_file(self.source, path)
                .map_err(|e| CliError::from(e).context("--probe"))?;
        }
        Ok(self)
    }

    /// The recording's description.
    pub(crate) fn info(&self) -> &RecordingInfo {
        self.source.info()
    }

    /// Prints what the reader noticed without refusing the file (a dropped partial frame) on
    /// stderr, escaped; `--json` output carries them too.
    pub(crate) fn report_warnings(&self) {
        for w in &self.warnings {
            // The readers' warnings name their file.
            crate::output::stderr_line("warning", w);
        }
    }

    /// The files this recording consists of, each with what it is, for refusing an output
    /// that would overwrite one (none for the synthetic recording).
    pub(crate) fn files(&self) -> CliResult<Vec<(PathBuf, String)>> {
        match &self.origin {
            Origin::Synthetic { .. } => Ok(Vec::new()),
            Origin::File { path, .. } => Ok(dspk_io::recording_inputs(path)?),
            Origin::Joined { paths, .. } => Ok(dspk_io::recordings_inputs(paths)?),
        }
    }

    /// The path, or `built-in synthetic recording`.
    pub(crate) fn label(&self) -> String {
        match &self.origin {
            Origin::Synthetic { .. } => "built-in synthetic recording".to_string(),
            Origin::File { path, .. } => path.display().to_string(),
            Origin::Joined { paths, .. } => {
                format!("{} + {} more joined", paths[0].display(), paths.len() - 1)
            }
        }
    }
}

/// Opens a recording file in any format dspk-io reads (raw binary + sidecar, SpikeGLX, Open
/// Ephys).
fn open_file(path: &Path, stream: Option<&str>) -> CliResult<Input> {
    if !path.exists() {
        // Say it plainly, before format detection words it after the files it looked for.
        return Err(CliError::new(format!("{}: no such file", path.display())));
    }
    let options = dspk_io::OpenOptions {
        stream: stream.map(str::to_string),
    };
    let rec = dspk_io::open_with(path, &options)?;
    let warnings = rec.warnings().to_vec();
    let kind = rec.format().label();
    Ok(Input {
        origin: Origin::File {
            path: path.to_path_buf(),
            kind: kind.to_string(),
        },
        source: rec.into_source(),
        warnings,
    })
}

/// The time options of a command: `--start`, `--end`, `--duration`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TimeOptions {
    /// First sample wanted (default: the first).
    pub(crate) start: Option<TimeSpec>,
    /// One past the last sample wanted (default: the end).
    pub(crate) end: Option<TimeSpec>,
    /// How much from the start (at most; cut at the end of the recording).
    pub(crate) duration: Option<TimeSpec>,
}

impl TimeOptions {
    /// The sample range these options select in `info`: times are relative to the first
    /// sample, in exact arithmetic at the recording's own rate.
    ///
    /// Refused: `--end` and `--duration` together, `--end` at or before `--start`, a start or
    /// end past the end of the recording, an empty range.
    pub(crate) fn range(&self, info: &RecordingInfo, label: &str) -> CliResult<Range<u64>> {
        let rate = info.sample_rate;
        let total = info.samples;
        if total == 0 {
            return Err(CliError::new(format!(
                "{label}: the recording has no samples (not one whole frame of {} channels)",
                info.channel_count()
            )));
        }
        let index = |t: &TimeSpec, flag: &str| {
            t.to_sample_index(rate)
                .map_err(|e| CliError::from(e).context(flag))
        };
        let describe_total = || match info.duration() {
            Ok(d) => format!("{d}, {total} samples"),
            Err(_) => format!("{total} samples"),
        };
        let start = match &self.start {
            Some(t) => index(t, "--start")?,
            None => 0,
        };
        if let Some(t) = &self.start
            && start >= total
        {
            return Err(CliError::new(format!(
                "--start {t} is at or past the end of the recording ({})",
                describe_total()
            )));
        }
        let end = match (&self.end, &self.duration) {
            (Some(_), Some(_)) => {
                return Err(CliError::new("give --end or --duration, not both"));
            }
            (Some(t), None) => {
                let end = index(t, "--end")?;
                if end > total {
                    return Err(CliError::new(format!(
                        "--end {t} is past the end of the recording ({})",
                        describe_total()
                    )));
                }
                end
            }
            (None, Some(d)) => start.saturating_add(index(d, "--duration")?).min(total),
            (None, None) => total,
        };
        if end < start {
            return Err(CliError::new(format!(
                "--end ({}) is before --start ({})",
                self.end
                    .map_or_else(|| format!("sample {end}"), |t| t.to_string()),
                self.start
                    .map_or_else(|| format!("sample {start}"), |t| t.to_string()),
            )));
        }
        if end == start {
            let period = rate
                .duration_for_samples(1)
                .map_or_else(|_| String::from("one period"), |t| t.to_string());
            let (what, verb) = match (&self.start, &self.end, &self.duration) {
                (_, _, Some(d)) => (format!("--duration {d}"), "selects"),
                (Some(s), Some(e), None) => (format!("--start {s} and --end {e}"), "select"),
                (None, Some(e), None) => (format!("--end {e}"), "selects"),
                _ => ("the time range".to_string(), "selects"),
            };
            return Err(CliError::new(format!(
                "{what} {verb} no samples (both ends are sample {start}): at {rate} a sample \
                 lasts {period}"
            )));
        }
        Ok(start..end)
    }
}

/// `--window-samples` checked: at least 1 when given.
pub(crate) fn window_option(asked: Option<u64>) -> CliResult<Option<u64>> {
    match asked {
        Some(0) => Err(CliError::new("--window-samples must be at least 1")),
        other => Ok(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dspk_types::{MemoryOrder, SampleFormat, SampleRate};

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

    fn opts(start: Option<&str>, end: Option<&str>, duration: Option<&str>) -> TimeOptions {
        let p = |s: Option<&str>| s.map(|s| TimeSpec::parse(s).unwrap());
        TimeOptions {
            start: p(start),
            end: p(end),
            duration: p(duration),
        }
    }

    #[test]
    fn ranges() {
        let i = info("30000", 1_800_000);
        assert_eq!(
            opts(None, None, None).range(&i, "r.bin").unwrap(),
            0..1_800_000
        );
        assert_eq!(
            opts(Some("1.5"), Some("2"), None)
                .range(&i, "r.bin")
                .unwrap(),
            45_000..60_000
        );
        assert_eq!(
            opts(Some("100smp"), None, Some("0.01"))
                .range(&i, "r.bin")
                .unwrap(),
            100..400
        );
        assert_eq!(
            opts(Some("59"), None, Some("10"))
                .range(&i, "r.bin")
                .unwrap(),
            1_770_000..1_800_000
        );
        assert_eq!(
            opts(None, Some("1:00"), None).range(&i, "r.bin").unwrap(),
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
            let err = o.range(&i, "r.bin").unwrap_err().to_string();
            assert!(err.contains(want), "{o:?}: {err}");
            assert!(!err.contains('\n'));
        }
        // Exact times, no float noise; the flag is named.
        let err = opts(None, None, Some("0")).range(&i, "r.bin").unwrap_err();
        assert_eq!(
            err.to_string(),
            "--duration 0 s selects no samples (both ends are sample 0): at 30000 Hz a sample \
             lasts 1/30000 s"
        );
        // An empty recording names the file.
        let err = opts(None, None, None)
            .range(&info("30000", 0), "empty.bin")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "empty.bin: the recording has no samples (not one whole frame of 2 channels)"
        );
    }
}
