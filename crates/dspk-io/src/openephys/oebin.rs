//! `structure.oebin`: the JSON fields dspk reads, and one recording folder's description.

use std::path::{Path, PathBuf};

use dspk_types::{DspError, DspResult, SampleRate, SignalUnit};
use serde::Deserialize;

use super::OEBIN_FILE;
use crate::binary::field_error;
use crate::raw::{MAX_CHANNELS, file_error};

/// `structure.oebin`, the fields dspk reads.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct Oebin {
    #[serde(rename = "GUI version", default)]
    pub(super) gui_version: Option<String>,
    pub(super) continuous: Vec<OebinContinuous>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct OebinContinuous {
    pub(super) folder_name: String,
    pub(super) sample_rate: serde_json::Number,
    pub(super) num_channels: usize,
    pub(super) channels: Vec<OebinChannel>,
    #[serde(default)]
    pub(super) source_processor_name: Option<String>,
    #[serde(default)]
    pub(super) source_processor_id: Option<serde_json::Value>,
    #[serde(default)]
    pub(super) stream_name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct OebinChannel {
    pub(super) channel_name: String,
    pub(super) bit_volts: f64,
    #[serde(default)]
    pub(super) units: Option<String>,
}

/// One continuous stream of a recording, as its `structure.oebin` describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenEphysStream {
    /// The stream's folder under `continuous/` (the `.oebin`'s `folder_name` without its
    /// trailing `/`): the name streams are selected by.
    pub name: String,
    /// The `.oebin`'s `stream_name` (0.6+), also accepted when selecting a stream if unique.
    pub stream_name: Option<String>,
    /// The `.oebin`'s `source_processor_name`.
    pub source_processor_name: Option<String>,
    /// The nominal rate (`sample_rate`).
    pub sample_rate: SampleRate,
    /// `num_channels`.
    pub channel_count: usize,
    /// The stream's folder.
    pub dir: PathBuf,
}

/// One recording folder (`recordingM`) of an Open Ephys folder.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenEphysRecordingEntry {
    /// The record node's folder name (`Record Node 101`), when the recording is in one.
    pub record_node: Option<String>,
    /// `K` of the `experimentK` folder above the recording, when so named.
    pub experiment: Option<u32>,
    /// `M` of the `recordingM` folder, when so named.
    pub recording: Option<u32>,
    /// The recording folder.
    pub dir: PathBuf,
    /// Its `structure.oebin`.
    pub oebin_path: PathBuf,
    /// The `.oebin`'s `GUI version`.
    pub gui_version: Option<String>,
    /// Its continuous streams, in `.oebin` order.
    pub streams: Vec<OpenEphysStream>,
    pub(super) oebin: Oebin,
}

impl OpenEphysRecordingEntry {
    /// Reads the `structure.oebin` of the recording folder `dir`.
    pub fn read(dir: &Path) -> DspResult<Self> {
        let oebin_path = dir.join(OEBIN_FILE);
        let text = std::fs::read_to_string(&oebin_path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                file_error(&oebin_path, "missing structure.oebin")
            } else {
                DspError::io(&oebin_path, "cannot read the structure.oebin", &e)
            }
        })?;
        Self::parse(&text, dir)
    }

    /// Parses the text of the `structure.oebin` of the recording folder `dir`, with the checks
    /// of [`OpenEphysRecordingEntry::read`] (the file system is not touched: `dir` places the
    /// streams and names the file in errors).
    pub fn parse(text: &str, dir: &Path) -> DspResult<Self> {
        let oebin_path = dir.join(OEBIN_FILE);
        let mut de = serde_json::Deserializer::from_str(text);
        let oebin: Oebin = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            file_error(
                &oebin_path,
                format!("invalid structure.oebin: {}", field_error(&e)),
            )
        })?;
        de.end()
            .map_err(|e| file_error(&oebin_path, format!("invalid structure.oebin: {e}")))?;
        let mut streams = Vec::with_capacity(oebin.continuous.len());
        for (i, c) in oebin.continuous.iter().enumerate() {
            let bad = |what: String| file_error(&oebin_path, format!("continuous[{i}]: {what}"));
            let name = c.folder_name.trim_end_matches(['/', '\\']).to_string();
            if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
                return Err(bad(format!(
                    "folder_name '{}' is not the name of one folder",
                    c.folder_name
                )));
            }
            let rate_text = c.sample_rate.to_string();
            let sample_rate: SampleRate = rate_text
                .parse()
                .map_err(|_| bad(format!("sample_rate {rate_text} is not a rate above 0 Hz")))?;
            if c.num_channels == 0 || c.num_channels > MAX_CHANNELS {
                return Err(bad(format!(
                    "num_channels {} is not from 1 to {MAX_CHANNELS}",
                    c.num_channels
                )));
            }
            if c.num_channels != c.channels.len() {
                return Err(bad(format!(
                    "num_channels is {} but channels lists {}",
                    c.num_channels,
                    c.channels.len()
                )));
            }
            if streams.iter().any(|s: &OpenEphysStream| s.name == name) {
                return Err(bad(format!("folder_name '{name}' is listed twice")));
            }
            streams.push(OpenEphysStream {
                dir: dir.join("continuous").join(&name),
                name,
                stream_name: c.stream_name.clone(),
                source_processor_name: c.source_processor_name.clone(),
                sample_rate,
                channel_count: c.num_channels,
            });
        }
        let numbered = |p: Option<&Path>, prefix: &str| -> Option<u32> {
            p?.file_name()?.to_str()?.strip_prefix(prefix)?.parse().ok()
        };
        let experiment_dir = dir.parent();
        let node = experiment_dir
            .and_then(Path::parent)
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .filter(|n| n.starts_with("Record Node"))
            .map(str::to_string);
        Ok(Self {
            record_node: node,
            experiment: numbered(experiment_dir, "experiment"),
            recording: numbered(Some(dir), "recording"),
            dir: dir.to_path_buf(),
            oebin_path,
            gui_version: oebin.gui_version.clone(),
            streams,
            oebin,
        })
    }

    /// `Record Node 101/experiment1/recording2` (the parts that are known), else the folder.
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        if let Some(n) = &self.record_node {
            parts.push(n.clone());
        }
        if let Some(e) = self.experiment {
            parts.push(format!("experiment{e}"));
        }
        match self.recording {
            Some(r) => parts.push(format!("recording{r}")),
            None => return self.dir.display().to_string(),
        }
        parts.join("/")
    }

    /// The index of the stream named `name` (its folder name, or a unique `stream_name`);
    /// `None` takes the only stream. An unknown or ambiguous choice is an error listing the
    /// stream names.
    pub fn stream_index(&self, name: Option<&str>) -> DspResult<usize> {
        let names = || {
            self.streams
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match name {
            None => match self.streams.len() {
                1 => Ok(0),
                0 => Err(file_error(
                    &self.oebin_path,
                    "no continuous streams in this recording",
                )),
                n => Err(DspError::config(format!(
                    "{}: {n} continuous streams, choose one: {} (give the stream's folder or its continuous.dat, or its name)",
                    self.oebin_path.display(),
                    names()
                ))),
            },
            Some(want) => {
                if let Some(i) = self.streams.iter().position(|s| s.name == want) {
                    return Ok(i);
                }
                let by_stream_name: Vec<usize> = (0..self.streams.len())
                    .filter(|&i| self.streams[i].stream_name.as_deref() == Some(want))
                    .collect();
                match by_stream_name.as_slice() {
                    [i] => Ok(*i),
                    [] => Err(DspError::config(format!(
                        "{}: no continuous stream '{want}' (streams: {})",
                        self.oebin_path.display(),
                        names()
                    ))),
                    _ => Err(DspError::config(format!(
                        "{}: stream_name '{want}' names several streams, choose one: {}",
                        self.oebin_path.display(),
                        names()
                    ))),
                }
            }
        }
    }
}

/// `(major, minor)` of a `GUI version` such as `0.6.4`.
pub(super) fn gui_major_minor(v: &str) -> Option<(u32, u32)> {
    let mut parts = v.trim().split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// The unit of a channel: `units` when given, else µV, volts for `ADC` channels and none for
/// `SYNC` channels (as Neo reads an empty `units`).
pub(super) fn channel_unit(c: &OebinChannel) -> SignalUnit {
    match c.units.as_deref().map(str::trim).unwrap_or("") {
        "" if c.channel_name.contains("ADC") => SignalUnit::Volt,
        "" if c.channel_name.contains("SYNC") => SignalUnit::Dimensionless,
        "" | "uV" | "µV" | "μV" => SignalUnit::Microvolt,
        "mV" => SignalUnit::Millivolt,
        "V" => SignalUnit::Volt,
        other => SignalUnit::Other(other.to_string()),
    }
}
