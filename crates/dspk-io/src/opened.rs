//! An opened recording: its source, where it came from, and what its reader noticed — the one
//! way the program and the Python package open what a user names (a file, files joined end to
//! end, the built-in synthetic recording) and narrow it (a rate, a segment, a probe file).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dspk_types::{
    ConcatOptions, DspError, DspResult, RateChoice, RatedRecording, RecordingInfo, RecordingSource,
    SlicedRecording, SyntheticConfig, SyntheticRecording,
};

use crate::{FileFormat, OpenOptions};

/// Where a recording came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The built-in synthetic recording, with the channels it planted.
    Synthetic {
        /// Planted dead (flat) channels.
        dead: Vec<usize>,
        /// Planted noisy channels.
        noisy: Vec<usize>,
    },
    /// A file (or Open Ephys folder) dspk-io reads.
    File {
        /// The path as given.
        path: PathBuf,
        /// Its format.
        format: FileFormat,
    },
    /// Several files read end to end as one recording.
    Joined {
        /// The files, in the order joined (never empty).
        paths: Vec<PathBuf>,
        /// The first file's format.
        format: FileFormat,
    },
    /// A recording of the caller's own (a Python object read through its reader).
    Other {
        /// What to call it in messages.
        label: String,
    },
}

/// An opened recording: its source, its origin and what the reader noticed without refusing
/// it (a dropped partial frame, an accepted rate drift).
#[derive(Clone)]
pub struct OpenedRecording {
    /// The recording.
    pub source: Arc<dyn RecordingSource>,
    /// Where it came from.
    pub origin: Origin,
    /// What the reader noticed without refusing the recording, one sentence each.
    pub warnings: Vec<String>,
    /// The built-in synthetic recording it is, for its ground truth.
    synthetic: Option<SyntheticRecording>,
}

impl std::fmt::Debug for OpenedRecording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenedRecording")
            .field("recording", &self.source.info().name)
            .field("origin", &self.origin)
            .field("warnings", &self.warnings)
            .finish()
    }
}

impl OpenedRecording {
    /// Opens the recording file (or Open Ephys folder) `path` in any format dspk-io reads.
    /// A path that is not there is [`DspError::NoSuchFile`], said before format detection
    /// would word it after the files it looked for.
    pub fn open(path: &Path, options: &OpenOptions) -> DspResult<Self> {
        if !path.exists() {
            return Err(DspError::NoSuchFile {
                path: path.to_path_buf(),
            });
        }
        let rec = crate::open_with(path, options)?;
        let warnings = rec.warnings().to_vec();
        let format = rec.format();
        Ok(Self {
            origin: Origin::File {
                path: path.to_path_buf(),
                format,
            },
            source: rec.into_source(),
            warnings,
            synthetic: None,
        })
    }

    /// `paths` read end to end as one recording (SpikeGLX trigger files in trigger order,
    /// placed by their clocks; gaps start segments or are zero-filled, as `options` says).
    /// The first path that is not there is [`DspError::NoSuchFile`]; `options` is validated
    /// first ([`ConcatOptions::validate`]).
    pub fn joined(
        paths: &[PathBuf],
        options: ConcatOptions,
        open: &OpenOptions,
    ) -> DspResult<Self> {
        options.validate()?;
        if let Some(missing) = paths.iter().find(|p| !p.exists()) {
            return Err(DspError::NoSuchFile {
                path: missing.clone(),
            });
        }
        let joined = crate::open_joined_with(paths, options, open)?;
        Ok(Self {
            origin: Origin::Joined {
                paths: joined.paths,
                format: joined.format,
            },
            source: Arc::new(joined.recording),
            warnings: joined.warnings,
            synthetic: None,
        })
    }

    /// The built-in synthetic recording `config` describes.
    pub fn synthetic(config: SyntheticConfig) -> DspResult<Self> {
        let rec = SyntheticRecording::new(config)?;
        Ok(Self {
            origin: Origin::Synthetic {
                dead: rec.dead_channels().to_vec(),
                noisy: rec.noisy_channels().to_vec(),
            },
            source: Arc::new(rec.clone()),
            warnings: Vec::new(),
            synthetic: Some(rec),
        })
    }

    /// A recording of the caller's own, called `label` in messages.
    pub fn other(source: Arc<dyn RecordingSource>, label: impl Into<String>) -> Self {
        Self {
            source,
            origin: Origin::Other {
                label: label.into(),
            },
            warnings: Vec::new(),
            synthetic: None,
        }
    }

    /// The recording read at the rate `choice` names instead of the one it is timed at
    /// (unchanged where that is its own rate). `measured` of a recording whose format states
    /// none is [`DspError::NoMeasuredRate`].
    pub fn with_rate(mut self, choice: RateChoice) -> DspResult<Self> {
        let rate = choice.rate_for(self.source.info(), &self.label())?;
        if rate != self.source.info().sample_rate {
            self.source = Arc::new(RatedRecording::new(self.source, rate));
        }
        Ok(self)
    }

    /// Only segment `index` of the recording (an error naming the segments it has where
    /// there is no such segment).
    pub fn with_segment(mut self, index: usize) -> DspResult<Self> {
        let range = self.source.info().segments().get(index)?.range();
        self.source = Arc::new(SlicedRecording::new(self.source, range, None)?);
        Ok(self)
    }

    /// The recording with the probe of the probeinterface JSON file `path`, in place of any
    /// it had ([`crate::attach_probe_file`]).
    pub fn with_probe_file(mut self, path: &Path) -> DspResult<Self> {
        self.source = crate::attach_probe_file(self.source, path)?;
        Ok(self)
    }

    /// The built-in synthetic recording this is (its planted spikes are the ground truth of a
    /// detection on it, [`SyntheticRecording::planted_spikes`]); `None` for any other. Kept
    /// through [`Self::with_rate`], [`Self::with_segment`] and [`Self::with_probe_file`], which
    /// keep every sample where it is.
    pub fn as_synthetic(&self) -> Option<&SyntheticRecording> {
        self.synthetic.as_ref()
    }

    /// The recording's description.
    pub fn info(&self) -> &RecordingInfo {
        self.source.info()
    }

    /// What it is, for people: the format's label (`SpikeGLX`, `raw binary + JSON sidecar`),
    /// `SpikeGLX, 3 files joined`, `built-in synthetic` or `recording`.
    pub fn kind(&self) -> String {
        match &self.origin {
            Origin::Synthetic { .. } => "built-in synthetic".to_string(),
            Origin::File { format, .. } => format.label().to_string(),
            Origin::Joined { paths, format } => {
                format!("{}, {} files joined", format.label(), paths.len())
            }
            Origin::Other { .. } => "recording".to_string(),
        }
    }

    /// The path, `<first> + N more joined`, `built-in synthetic recording`, or the label of a
    /// recording of the caller's.
    pub fn label(&self) -> String {
        match &self.origin {
            Origin::Synthetic { .. } => "built-in synthetic recording".to_string(),
            Origin::File { path, .. } => path.display().to_string(),
            Origin::Joined { paths, .. } => match paths.as_slice() {
                [first, rest @ ..] => {
                    format!("{} + {} more joined", first.display(), rest.len())
                }
                [] => "no files joined".to_string(),
            },
            Origin::Other { label } => label.clone(),
        }
    }

    /// The path it was opened from (the first of those joined), where it is a file.
    pub fn path(&self) -> Option<&Path> {
        match &self.origin {
            Origin::File { path, .. } => Some(path),
            Origin::Joined { paths, .. } => paths.first().map(PathBuf::as_path),
            Origin::Synthetic { .. } | Origin::Other { .. } => None,
        }
    }

    /// The files this recording consists of, each with what it is (its data file, sidecar or
    /// `.meta`), for refusing an output that would overwrite one; none unless it is a file.
    pub fn files(&self) -> DspResult<Vec<(PathBuf, String)>> {
        match &self.origin {
            Origin::File { path, .. } => crate::recording_inputs(path),
            Origin::Joined { paths, .. } => crate::recordings_inputs(paths),
            Origin::Synthetic { .. } | Origin::Other { .. } => Ok(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests;
