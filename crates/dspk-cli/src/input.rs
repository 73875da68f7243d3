//! The recording a command works on: a file, or the built-in synthetic recording; and the
//! sample range its time options select.

use std::ops::Deref;
use std::path::{Path, PathBuf};

use dspk_io::{OpenOptions, OpenedRecording};
use dspk_types::{
    ConcatOptions, GapFill, RateChoice, SyntheticConfig, TimeNames, TimeSelection, TimeSpec,
};

use crate::error::{CliError, CliResult, Context as _};

/// `--rate`'s name and syntax, put before a rate that does not parse.
pub(crate) const RATE_FLAG: &str = "--rate (a rate in Hz, `nominal` or `measured`)";

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

/// An open recording ([`OpenedRecording`], dspk-io's), with the program's flags named in its
/// errors.
pub(crate) struct Input(OpenedRecording);

impl Deref for Input {
    type Target = OpenedRecording;

    fn deref(&self) -> &OpenedRecording {
        &self.0
    }
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
                let options = OpenOptions {
                    stream: stream.map(str::to_string),
                };
                Ok(Self(OpenedRecording::open(path, &options)?))
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
        Ok(Self(OpenedRecording::synthetic(
            config.with_samples(samples),
        )?))
    }

    /// `paths` read end to end as one recording (`--concat`): SpikeGLX trigger files in
    /// trigger order, placed by their clocks; gaps start segments or are zero-filled.
    pub(crate) fn open_joined(paths: &[PathBuf], join: JoinOptions) -> CliResult<Self> {
        let options = ConcatOptions {
            gaps: if join.zero_fill {
                GapFill::Zeros
            } else {
                GapFill::Segments
            },
            rate_tolerance_ppm: join.tolerance_ppm,
            part_per_segment: false,
        };
        options.validate().context("--rate-tolerance")?;
        let open = OpenOptions {
            stream: join.stream.clone(),
        };
        Ok(Self(OpenedRecording::joined(paths, options, &open)?))
    }

    /// The recording read at the rate `--rate` chose instead of the one it is timed at, where
    /// one is given.
    pub(crate) fn with_rate(self, rate: Option<RateChoice>) -> CliResult<Self> {
        match rate {
            None => Ok(self),
            Some(choice) => Ok(Self(self.0.with_rate(choice).map_err(|e| {
                let flag = match choice {
                    RateChoice::Measured => "--rate measured",
                    _ => "--rate",
                };
                CliError::from(e).context(flag)
            })?)),
        }
    }

    /// Only segment `index` of the recording, where one is given (`--segment`).
    pub(crate) fn with_segment(self, index: Option<usize>) -> CliResult<Self> {
        match index {
            None => Ok(self),
            Some(k) => Ok(Self(self.0.with_segment(k).context("--segment")?)),
        }
    }

    /// The recording with the probe of the probeinterface JSON file `--probe` names, where
    /// one is given.
    pub(crate) fn with_probe(self, path: Option<&Path>) -> CliResult<Self> {
        match path {
            None => Ok(self),
            Some(path) => Ok(Self(self.0.with_probe_file(path).context("--probe")?)),
        }
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
        Ok(self.0.files()?)
    }
}

/// The time options of a command (`--start`, `--end`, `--duration`): dspk-types'
/// [`TimeSelection`], its messages naming the flags.
pub(crate) type TimeOptions = TimeSelection;

/// How the program's time flags are named in a refused selection's message.
pub(crate) const TIME_FLAGS: TimeNames = TimeNames {
    start: "--start",
    end: "--end",
    duration: "--duration",
};

/// `--window-samples` checked: at least 1 when given.
pub(crate) fn window_option(asked: Option<u64>) -> CliResult<Option<u64>> {
    match asked {
        Some(0) => Err(CliError::new("--window-samples must be at least 1")),
        other => Ok(other),
    }
}
