//! The error type shared by every dspk crate that reads, shapes or schedules data.

use std::path::PathBuf;

/// Result alias for operations that can fail with a [`DspError`].
pub type DspResult<T> = Result<T, DspError>;

/// What went wrong, with the offending values.
///
/// Messages are lowercase, one sentence, no trailing full stop, so that callers can embed them
/// (`error: {e}`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DspError {
    /// A channel index at or past the number of channels.
    #[error("channel {index} does not exist: the recording has {count} channels")]
    InvalidChannel {
        /// The index asked for.
        index: usize,
        /// The number of channels there are.
        count: usize,
    },
    /// A buffer or shape of the wrong size.
    #[error("shape mismatch in {what}: expected {expected}, got {actual}")]
    ShapeMismatch {
        /// What was being shaped (e.g. "output buffer").
        what: String,
        /// The size that was required.
        expected: usize,
        /// The size that was given.
        actual: usize,
    },
    /// A sample rate that is not a finite positive number.
    #[error("invalid sample rate {value}: a sample rate must be a finite number of hertz above 0")]
    InvalidSampleRate {
        /// The rate as given, in text (it may be NaN or a ratio).
        value: String,
    },
    /// More data than a buffer can hold.
    #[error("buffer overrun in {what}: capacity {capacity}, needed {needed}")]
    BufferOverrun {
        /// Which buffer.
        what: String,
        /// Its capacity, in elements or bytes as `what` says.
        capacity: usize,
        /// What was needed.
        needed: usize,
    },
    /// Less data than was required.
    #[error("buffer underrun in {what}: needed {needed}, only {available} available")]
    BufferUnderrun {
        /// Which buffer.
        what: String,
        /// What was needed.
        needed: usize,
        /// What there was.
        available: usize,
    },
    /// A sample range that is reversed or reaches past the end of the recording.
    #[error("sample range {start}..{end} is outside the recording of {total} samples")]
    SampleRange {
        /// First sample asked for.
        start: u64,
        /// One past the last sample asked for.
        end: u64,
        /// Samples in the recording.
        total: u64,
    },
    /// A read whose sample range crosses a segment boundary.
    #[error(
        "sample range {start}..{end} crosses the end of segment {segment} (samples {segment_start}..{segment_end}): a read must lie inside one segment"
    )]
    CrossesSegment {
        /// First sample asked for.
        start: u64,
        /// One past the last sample asked for.
        end: u64,
        /// The segment the range starts in.
        segment: usize,
        /// That segment's first recording index.
        segment_start: u64,
        /// One past that segment's last recording index.
        segment_end: u64,
    },
    /// A configuration value or combination that cannot work.
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),
    /// An input/output failure, with the path where one is known.
    #[error("{}", io_message(.message, .path))]
    Io {
        /// What failed (including the operating system's reason).
        message: String,
        /// The file concerned, where known.
        path: Option<PathBuf>,
    },
    /// A file or directory that is not there, named with what it is for (`-o out/x.bin: the
    /// directory`).
    #[error("{what} {} does not exist", .path.display())]
    NotFound {
        /// What the path is, as the user named it.
        what: String,
        /// The path that is not there.
        path: PathBuf,
    },
    /// A selection (a time range, a channel list) that does not fit the recording; the message
    /// names what was asked as the user wrote it.
    #[error("{0}")]
    Selection(String),
    /// A recording file (or folder) that is not there, said before format detection would
    /// word it after the files it looked for.
    #[error("{}: no such file", .path.display())]
    NoSuchFile {
        /// The path as given.
        path: PathBuf,
    },
    /// `measured` asked as the rate of a recording whose format states no measured rate.
    #[error(
        "{recording} states no measured rate (Open Ephys 0.6+ sample numbers with timestamps \
         and SpikeGLX imec files do)"
    )]
    NoMeasuredRate {
        /// The recording, as its label names it.
        recording: String,
    },
    /// A format, type or feature that is not supported.
    #[error("unsupported format: {0}")]
    UnsupportedFormat(String),
    /// Arithmetic that would overflow the exact representation.
    #[error("arithmetic overflow in {0}")]
    Overflow(String),
    /// An error on one device of several, naming the device.
    #[error("on device {device}: {error}")]
    OnDevice {
        /// The device, as the pass names it (`1 (NVIDIA H200)`).
        device: String,
        /// What went wrong there.
        error: Box<DspError>,
    },
    /// A compute device that failed or could not be had, where a [`DspResult`] is returned
    /// (dspk-device reports a failed device as [`crate::ComputeError::DeviceFailure`], in
    /// this variant or on its own).
    #[error(transparent)]
    Compute(#[from] crate::ComputeError),
    /// A probe that cannot be, or a question its geometry cannot answer.
    #[error("probe geometry: {0}")]
    Probe(#[from] crate::ProbeError),
    /// A preprocessing pipeline that cannot be read or cannot run on its recording.
    #[error(transparent)]
    Pipeline(#[from] crate::PipelineError),
}

fn io_message(message: &str, path: &Option<PathBuf>) -> String {
    match path {
        Some(p) => format!("{}: {message}", p.display()),
        None => message.to_string(),
    }
}

impl DspError {
    /// An I/O error about `path`, keeping the operating system's reason.
    pub fn io(path: impl Into<PathBuf>, what: &str, err: &std::io::Error) -> Self {
        DspError::Io {
            message: format!("{what}: {err}"),
            path: Some(path.into()),
        }
    }

    /// A [`DspError::ShapeMismatch`] about `what`.
    pub fn shape(what: impl Into<String>, expected: usize, actual: usize) -> Self {
        DspError::ShapeMismatch {
            what: what.into(),
            expected,
            actual,
        }
    }

    /// `error` as it happened on `device` ([`DspError::OnDevice`]); an error that names its
    /// device already is kept as it is.
    pub fn on_device(device: impl Into<String>, error: DspError) -> Self {
        match error {
            e @ DspError::OnDevice { .. } => e,
            e => DspError::OnDevice {
                device: device.into(),
                error: Box::new(e),
            },
        }
    }

    /// A [`DspError::InvalidConfig`] with the given text.
    pub fn config(text: impl Into<String>) -> Self {
        DspError::InvalidConfig(text.into())
    }
}

impl From<std::io::Error> for DspError {
    /// An I/O error without a path; prefixed so that the message starts lowercase whatever the
    /// operating system's text looks like.
    fn from(err: std::io::Error) -> Self {
        DspError::Io {
            message: format!("i/o error: {err}"),
            path: None,
        }
    }
}

#[cfg(test)]
#[path = "tests/error.rs"]
mod tests;
