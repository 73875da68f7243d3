//! Open Ephys binary recordings: `structure.oebin` + `continuous/<stream>/continuous.dat` and
//! the stream's sample numbers (GUI 0.5 and 0.6+ layouts).
//!
//! The facts used, from the Open Ephys GUI documentation ("Binary format") and the readers built
//! on it (Neo's `OpenEphysBinaryRawIO`, which SpikeInterface's `read_openephys` uses):
//! - A folder holds `[Record Node N/]experimentK/recordingM/`; each recording folder has a
//!   `structure.oebin` (JSON) whose `continuous` list describes one entry per stream:
//!   `folder_name` (the stream's folder under `continuous/`, often with a trailing `/`),
//!   `sample_rate`, `num_channels`, `channels` (`channel_name`, `bit_volts`, `units`, …), and
//!   `source_processor_name`, `source_processor_id`, `stream_name` (0.6+). The top level has
//!   `GUI version`.
//! - `continuous.dat` is little-endian int16, time-major, `num_channels` per frame, no header.
//!   A value × the channel's `bit_volts` is µV for headstage channels and volts for ADC
//!   channels. Where `units` is empty (some GUI versions), Neo takes µV, and volts for
//!   channels whose name contains `ADC`; dspk does the same, and leaves channels whose name
//!   contains `SYNC` (Neuropixels' sync word, `bit_volts` 1) dimensionless.
//! - GUI 0.6+: `sample_numbers.npy` (int64, one per frame) and `timestamps.npy` (float64
//!   seconds, one per frame). GUI ≤ 0.5: `timestamps.npy` holds the int64 sample numbers. The
//!   first sample number over `sample_rate` is the start time (as Neo's `t_start`).
//!
//! The measured rate: in the 0.6+ layout, `(last − first sample number) / (last − first
//! timestamp)`, stated in [`RecordingInfo::metadata`] as `measured_sample_rate` (and its
//! difference from the nominal rate as `measured_rate_ppm`); `sample_rate` stays the nominal
//! rate of the `.oebin`.
//!
//! Each recording folder is its own recording and each stream its own source: a folder with
//! several recordings is listed by [`OpenEphysFolder::scan`] and opened by index or by the
//! recording folder's path; segments and concatenation are not handled here.

use std::path::{Path, PathBuf};

use dspk_types::{
    ChannelInfo, DspError, DspResult, MemoryOrder, RationalTime, RecordingInfo, SampleFormat,
    SampleRate, SignalUnit,
};
use serde::Deserialize;

use crate::binary::field_error;
use crate::mapped::MappedFile;
use crate::npy::{NpyArray, NpyDtype};
use crate::raw::{MAX_CHANNELS, RawData, file_error};

/// The name of the JSON description in every recording folder.
pub const OEBIN_FILE: &str = "structure.oebin";
/// The name of a stream's data file.
pub const CONTINUOUS_FILE: &str = "continuous.dat";
/// The sample numbers of a stream (GUI 0.6+).
pub const SAMPLE_NUMBERS_FILE: &str = "sample_numbers.npy";
/// The timestamps of a stream: float64 seconds (GUI 0.6+) or int64 sample numbers (≤ 0.5).
pub const TIMESTAMPS_FILE: &str = "timestamps.npy";
/// How deep below a folder [`OpenEphysFolder::scan`] looks for `structure.oebin`
/// (`Record Node N/experimentK/recordingM/structure.oebin` is 4 levels).
const SCAN_DEPTH: usize = 4;

/// `structure.oebin`, the fields dspk reads.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct Oebin {
    #[serde(rename = "GUI version", default)]
    gui_version: Option<String>,
    continuous: Vec<OebinContinuous>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct OebinContinuous {
    folder_name: String,
    sample_rate: serde_json::Number,
    num_channels: usize,
    channels: Vec<OebinChannel>,
    #[serde(default)]
    source_processor_name: Option<String>,
    #[serde(default)]
    source_processor_id: Option<serde_json::Value>,
    #[serde(default)]
    stream_name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct OebinChannel {
    channel_name: String,
    bit_volts: f64,
    #[serde(default)]
    units: Option<String>,
}

/// Which files hold a stream's sample numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpenEphysLayout {
    /// GUI 0.6 and later: `sample_numbers.npy` (int64) and `timestamps.npy` (float64 s).
    V06,
    /// GUI 0.5 and earlier: `timestamps.npy` holds int64 sample numbers.
    V05,
}

impl OpenEphysLayout {
    /// `0.6+` or `0.5`.
    pub fn name(&self) -> &'static str {
        match self {
            OpenEphysLayout::V06 => "0.6+",
            OpenEphysLayout::V05 => "0.5",
        }
    }
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
    oebin: Oebin,
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
        let mut de = serde_json::Deserializer::from_str(&text);
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
                    "{}: {n} continuous streams, choose one: {} (give the stream's folder or its continuous.dat)",
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

/// Every recording found in or below a folder.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenEphysFolder {
    /// The folder scanned.
    pub root: PathBuf,
    recordings: Vec<OpenEphysRecordingEntry>,
}

impl OpenEphysFolder {
    /// Finds every `structure.oebin` in `path` and up to four folder levels below it (the
    /// recording folder, an experiment, a record node, or the top folder the GUI writes), in
    /// order of record node, experiment and recording number, and reads each. `path` may also
    /// be a `structure.oebin`. No `structure.oebin` is an error naming the folder.
    pub fn scan(path: impl AsRef<Path>) -> DspResult<Self> {
        let path = path.as_ref();
        let root = if path.file_name().is_some_and(|n| n == OEBIN_FILE) {
            path.parent().unwrap_or(Path::new(".")).to_path_buf()
        } else {
            path.to_path_buf()
        };
        if !root.is_dir() {
            return Err(file_error(&root, "not a folder"));
        }
        let mut dirs = Vec::new();
        find_recordings(&root, SCAN_DEPTH, &mut dirs)?;
        if dirs.is_empty() {
            return Err(file_error(
                &root,
                format!("no {OEBIN_FILE} in this folder or up to {SCAN_DEPTH} levels below it"),
            ));
        }
        let mut recordings = dirs
            .iter()
            .map(|d| OpenEphysRecordingEntry::read(d))
            .collect::<DspResult<Vec<_>>>()?;
        recordings.sort_by(|a, b| {
            (&a.record_node, a.experiment, a.recording, &a.dir).cmp(&(
                &b.record_node,
                b.experiment,
                b.recording,
                &b.dir,
            ))
        });
        Ok(Self { root, recordings })
    }

    /// The recordings, in order.
    pub fn recordings(&self) -> &[OpenEphysRecordingEntry] {
        &self.recordings
    }

    /// Opens recording `index` (of [`OpenEphysFolder::recordings`]), stream `stream` (see
    /// [`OpenEphysRecordingEntry::stream_index`]).
    pub fn open(&self, index: usize, stream: Option<&str>) -> DspResult<OpenEphysRecording> {
        let entry = self.recordings.get(index).ok_or_else(|| {
            DspError::config(format!(
                "{}: no recording {index}: it holds {} (0 to {})",
                self.root.display(),
                self.recordings.len(),
                self.recordings.len().saturating_sub(1)
            ))
        })?;
        OpenEphysRecording::open_entry(entry.clone(), stream)
    }
}

/// Pushes every folder at or below `dir` (to `depth` levels) holding a `structure.oebin`; a
/// recording folder is not searched further.
fn find_recordings(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> DspResult<()> {
    if dir.join(OEBIN_FILE).is_file() {
        out.push(dir.to_path_buf());
        return Ok(());
    }
    if depth == 0 {
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).map_err(|e| DspError::io(dir, "cannot list", &e))?;
    let mut subdirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    for d in subdirs {
        find_recordings(&d, depth - 1, out)?;
    }
    Ok(())
}

/// What `path` names: a recording folder (or its `.oebin`), optionally with the stream its
/// path chose (`continuous/<stream>` or its `continuous.dat`).
pub(crate) fn openephys_target(path: &Path) -> Option<(PathBuf, Option<String>)> {
    let name = path.file_name()?.to_str()?;
    if name == OEBIN_FILE {
        return Some((path.parent()?.to_path_buf(), None));
    }
    let stream_dir = if name == CONTINUOUS_FILE {
        path.parent()?
    } else if path.is_dir() && path.join(OEBIN_FILE).is_file() {
        return Some((path.to_path_buf(), None));
    } else {
        path
    };
    let continuous = stream_dir.parent()?;
    if continuous.file_name()? != "continuous" {
        return None;
    }
    let rec = continuous.parent()?;
    rec.join(OEBIN_FILE).is_file().then(|| {
        let stream = stream_dir.file_name()?.to_str()?.to_string();
        Some((rec.to_path_buf(), Some(stream)))
    })?
}

/// Whether `path` is an Open Ephys recording: a `structure.oebin`, a stream's folder or
/// `continuous.dat` below one, or a folder with a `structure.oebin` in it or below it.
pub(crate) fn is_openephys(path: &Path) -> bool {
    if openephys_target(path).is_some() {
        return true;
    }
    let mut found = Vec::new();
    path.is_dir() && find_recordings(path, SCAN_DEPTH, &mut found).is_ok() && !found.is_empty()
}

/// Everything read from the `.oebin`, the sizes and the `.npy` headers, without mapping data.
#[derive(Debug)]
pub(crate) struct OpenEphysLayoutRead {
    pub(crate) entry: OpenEphysRecordingEntry,
    pub(crate) stream: usize,
    pub(crate) layout: OpenEphysLayout,
    pub(crate) data: PathBuf,
    pub(crate) index_files: Vec<PathBuf>,
    pub(crate) info: RecordingInfo,
    pub(crate) measured: Option<SampleRate>,
    pub(crate) warnings: Vec<String>,
    sample_numbers: NpyArray,
}

/// Resolves `path` (+ an explicit `stream`) to one recording entry and the stream to read.
fn resolve(
    path: &Path,
    stream: Option<&str>,
) -> DspResult<(OpenEphysRecordingEntry, Option<String>)> {
    let (dir, from_path) = match openephys_target(path) {
        Some(t) => t,
        None => {
            let folder = OpenEphysFolder::scan(path)?;
            match folder.recordings.as_slice() {
                [one] => (one.dir.clone(), None),
                many => {
                    let list: Vec<String> = many
                        .iter()
                        .map(|r| format!("{} ({})", r.label(), r.dir.display()))
                        .collect();
                    return Err(DspError::config(format!(
                        "{}: {} Open Ephys recordings, give one recording folder: {}",
                        path.display(),
                        many.len(),
                        list.join(", ")
                    )));
                }
            }
        }
    };
    let chosen = match (from_path, stream) {
        (Some(p), Some(s)) if p != s => {
            return Err(DspError::config(format!(
                "{}: the path names stream '{p}' but stream '{s}' was asked for",
                path.display()
            )));
        }
        (p, s) => p.or(s.map(str::to_string)),
    };
    Ok((OpenEphysRecordingEntry::read(&dir)?, chosen))
}

fn missing_stream_dir(entry: &OpenEphysRecordingEntry, s: &OpenEphysStream) -> DspError {
    file_error(
        &s.dir,
        format!(
            "missing stream folder: {} lists stream '{}'",
            entry.oebin_path.display(),
            s.name
        ),
    )
}

/// `(major, minor)` of a `GUI version` such as `0.6.4`.
fn gui_major_minor(v: &str) -> Option<(u32, u32)> {
    let mut parts = v.trim().split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// The unit of a channel: `units` when given, else µV, volts for `ADC` channels and none for
/// `SYNC` channels (as Neo reads an empty `units`).
fn channel_unit(c: &OebinChannel) -> SignalUnit {
    match c.units.as_deref().map(str::trim).unwrap_or("") {
        "" if c.channel_name.contains("ADC") => SignalUnit::Volt,
        "" if c.channel_name.contains("SYNC") => SignalUnit::Dimensionless,
        "" | "uV" | "µV" | "μV" => SignalUnit::Microvolt,
        "mV" => SignalUnit::Millivolt,
        "V" => SignalUnit::Volt,
        other => SignalUnit::Other(other.to_string()),
    }
}

impl OpenEphysLayoutRead {
    /// Reads the description of `path`'s recording and chosen stream, with the data file of
    /// `data_len` bytes (`None`: from the file system).
    fn read(
        entry: OpenEphysRecordingEntry,
        stream: Option<&str>,
        data_len: Option<(MappedFile, u64)>,
    ) -> DspResult<(Self, Option<MappedFile>)> {
        let si = entry.stream_index(stream)?;
        let s = &entry.streams[si];
        let c = &entry.oebin.continuous[si];
        let oebin = &entry.oebin_path;
        if !s.dir.is_dir() {
            return Err(missing_stream_dir(&entry, s));
        }
        let data = s.dir.join(CONTINUOUS_FILE);
        let (map, len) = match data_len {
            Some((m, l)) => (Some(m), l),
            None => {
                let m = std::fs::metadata(&data).map_err(|e| {
                    if e.kind() == std::io::ErrorKind::NotFound {
                        file_error(&data, "missing continuous.dat")
                    } else {
                        DspError::io(&data, "cannot open", &e)
                    }
                })?;
                if !m.is_file() {
                    return Err(file_error(&data, "not a regular file"));
                }
                (None, m.len())
            }
        };
        let mut channels = Vec::with_capacity(c.channels.len());
        for (k, ch) in c.channels.iter().enumerate() {
            if !(ch.bit_volts.is_finite() && ch.bit_volts > 0.0) {
                return Err(file_error(
                    oebin,
                    format!(
                        "continuous[{si}].channels[{k}] ({}): bit_volts {} is not above 0",
                        ch.channel_name, ch.bit_volts
                    ),
                ));
            }
            channels.push(ChannelInfo {
                name: ch.channel_name.clone(),
                gain: ch.bit_volts as f32,
                offset: 0.0,
                unit: channel_unit(ch),
            });
        }
        let frame = s.channel_count as u64 * 2;
        let samples = len / frame;
        let mut warnings = Vec::new();
        if len % frame != 0 {
            warnings.push(format!(
                "{}: {} trailing bytes are not a whole frame ({} int16 channels); the partial last frame is dropped",
                data.display(),
                len % frame,
                s.channel_count
            ));
        }

        let sn_path = s.dir.join(SAMPLE_NUMBERS_FILE);
        let ts_path = s.dir.join(TIMESTAMPS_FILE);
        let gui = entry.gui_version.as_deref().and_then(gui_major_minor);
        let layout = if sn_path.exists() {
            OpenEphysLayout::V06
        } else if gui.is_some_and(|v| v >= (0, 6)) {
            return Err(file_error(
                &sn_path,
                format!(
                    "missing file: GUI version {} writes the sample numbers there",
                    entry.gui_version.as_deref().unwrap_or("")
                ),
            ));
        } else if ts_path.exists() {
            OpenEphysLayout::V05
        } else {
            return Err(file_error(
                &s.dir,
                format!(
                    "missing {SAMPLE_NUMBERS_FILE} (GUI 0.6+) and {TIMESTAMPS_FILE} (GUI 0.5): no sample numbers"
                ),
            ));
        };
        let (sample_numbers, timestamps) = match layout {
            OpenEphysLayout::V06 => {
                let sn = NpyArray::open(&sn_path, NpyDtype::I64)?;
                let ts = if ts_path.exists() {
                    Some(NpyArray::open(&ts_path, NpyDtype::F64)?)
                } else {
                    warnings.push(format!("{}: missing; no measured rate", ts_path.display()));
                    None
                };
                (sn, ts)
            }
            OpenEphysLayout::V05 => (NpyArray::open(&ts_path, NpyDtype::I64)?, None),
        };
        for a in std::iter::once(&sample_numbers).chain(timestamps.as_ref()) {
            if a.len() != samples {
                return Err(file_error(
                    a.path(),
                    format!(
                        "{} values, but {} holds {samples} frames of {} channels: the files disagree on the stream's length",
                        a.len(),
                        data.display(),
                        s.channel_count
                    ),
                ));
            }
        }
        let sn_file = sample_numbers.path().to_path_buf();
        let first = sample_numbers.get_i64(0);
        let last = samples
            .checked_sub(1)
            .and_then(|i| sample_numbers.get_i64(i));
        let first_u = match first {
            Some(v) => u64::try_from(v).map_err(|_| {
                file_error(&sn_file, format!("first sample number {v} is negative"))
            })?,
            None => 0,
        };
        if let (Some(f), Some(l)) = (first, last)
            && l < f
        {
            return Err(file_error(
                &sn_file,
                format!("sample numbers go backwards: the last ({l}) is below the first ({f})"),
            ));
        }
        let start_time = RationalTime::from_samples(first_u, s.sample_rate)?;

        let mut metadata = std::collections::BTreeMap::new();
        let mut put = |k: &str, v: String| {
            metadata.insert(k.to_string(), v);
        };
        put("format", "openephys".into());
        put("layout", layout.name().into());
        put("stream", s.name.clone());
        put("recording_folder", entry.dir.display().to_string());
        if let Some(v) = &entry.gui_version {
            put("gui_version", v.clone());
        }
        if let Some(v) = &entry.record_node {
            put("record_node", v.clone());
        }
        if let Some(v) = entry.experiment {
            put("experiment", v.to_string());
        }
        if let Some(v) = entry.recording {
            put("recording", v.to_string());
        }
        if let Some(v) = &s.stream_name {
            put("stream_name", v.clone());
        }
        if let Some(v) = &s.source_processor_name {
            put("source_processor_name", v.clone());
        }
        if let Some(v) = &c.source_processor_id {
            put(
                "source_processor_id",
                v.as_str().map_or_else(|| v.to_string(), str::to_string),
            );
        }
        if let (Some(f), Some(l)) = (first, last) {
            put("first_sample_number", f.to_string());
            put("last_sample_number", l.to_string());
        }
        let mut measured = None;
        if let (Some(ts), Some(f), Some(l)) = (&timestamps, first, last) {
            let t0 = ts.get_f64(0).unwrap_or(f64::NAN);
            let t1 = ts.get_f64(samples - 1).unwrap_or(f64::NAN);
            if !(t0.is_finite() && t1.is_finite()) {
                return Err(file_error(
                    ts.path(),
                    format!("timestamps {t0} … {t1} are not finite seconds"),
                ));
            }
            put("first_timestamp_s", format!("{t0}"));
            put("last_timestamp_s", format!("{t1}"));
            if t1 > t0 && l > f {
                let hz = (l - f) as f64 / (t1 - t0);
                if let Ok(rate) = SampleRate::new(hz) {
                    let ppm = (hz / s.sample_rate.rate_hz() - 1.0) * 1e6;
                    put("measured_sample_rate", format!("{hz}"));
                    put("measured_rate_ppm", format!("{ppm:.3}"));
                    measured = Some(rate);
                }
            } else if samples > 1 {
                warnings.push(format!(
                    "{}: timestamps do not increase ({t0} s to {t1} s); no measured rate",
                    ts.path().display()
                ));
            }
        }

        let info = RecordingInfo {
            name: format!("{} {}", entry.label(), s.name),
            channels,
            samples,
            sample_rate: s.sample_rate,
            format: SampleFormat::I16,
            order: MemoryOrder::TimeMajor,
            start_time,
            metadata,
        };
        let mut index_files = vec![sn_file];
        if let Some(ts) = &timestamps {
            index_files.push(ts.path().to_path_buf());
        }
        Ok((
            Self {
                stream: si,
                layout,
                data,
                index_files,
                info,
                measured,
                warnings,
                entry,
                sample_numbers,
            },
            map,
        ))
    }

    /// The description of `path`'s stream (see [`OpenEphysRecording::open`]), data unmapped.
    pub(crate) fn detect(path: &Path, stream: Option<&str>) -> DspResult<Self> {
        let (entry, chosen) = resolve(path, stream)?;
        Ok(Self::read(entry, chosen.as_deref(), None)?.0)
    }

    /// One pass over the sample numbers: each must be above the one before; jumps of more
    /// than one are gaps, reported as a warning.
    fn check_sample_numbers(&mut self) -> DspResult<()> {
        let mut prev: Option<i64> = None;
        let (mut gaps, mut missing) = (0u64, 0u128);
        for (i, v) in self.sample_numbers.iter_i64().enumerate() {
            if let Some(p) = prev {
                if v <= p {
                    return Err(file_error(
                        self.sample_numbers.path(),
                        format!(
                            "sample numbers go backwards: value {i} ({v}) is not above the one before ({p})"
                        ),
                    ));
                }
                if v - p > 1 {
                    gaps += 1;
                    missing += (v - p - 1) as u128;
                }
            }
            prev = Some(v);
        }
        if gaps > 0 {
            self.warnings.push(format!(
                "{}: {gaps} gaps in the sample numbers ({missing} samples missing); the samples are read as one contiguous run from the first sample number",
                self.sample_numbers.path().display()
            ));
        }
        Ok(())
    }
}

/// One continuous stream of an Open Ephys binary recording, memory-mapped.
///
/// Channels are the stream's channels in file order, named by `channel_name`, scaled by
/// `bit_volts` to the unit of `units` (µV for headstage channels, V for ADC channels). The
/// start time is the first sample number over the nominal rate. The file must not be modified
/// or truncated while it is open.
#[derive(Debug)]
pub struct OpenEphysRecording {
    raw: RawData,
    entry: OpenEphysRecordingEntry,
    stream: usize,
    layout: OpenEphysLayout,
    index_files: Vec<PathBuf>,
    measured: Option<SampleRate>,
    warnings: Vec<String>,
}

impl OpenEphysRecording {
    /// Opens one stream of one recording.
    ///
    /// `path` is a recording folder or its `structure.oebin`, a stream's folder under
    /// `continuous/` or its `continuous.dat` (which choose the stream), or a folder above
    /// recordings holding exactly one (several are an error listing them: give one, or use
    /// [`OpenEphysFolder`]). `stream` chooses by folder name or unique `stream_name`; `None`
    /// takes the only stream (several are an error listing their names).
    ///
    /// Errors name the file: a missing or malformed `.oebin` (each missing field by its
    /// path), `num_channels` disagreeing with `channels`, missing files, `.npy` files of the
    /// wrong dtype, shape or size, stream files of different lengths, sample numbers that go
    /// backwards. A partial last frame is dropped and reported in
    /// [`OpenEphysRecording::warnings`], as are gaps in the sample numbers.
    pub fn open(path: impl AsRef<Path>, stream: Option<&str>) -> DspResult<Self> {
        let (entry, chosen) = resolve(path.as_ref(), stream)?;
        Self::open_entry(entry, chosen.as_deref())
    }

    fn open_entry(entry: OpenEphysRecordingEntry, stream: Option<&str>) -> DspResult<Self> {
        let si = entry.stream_index(stream)?;
        let s = &entry.streams[si];
        if !s.dir.is_dir() {
            return Err(missing_stream_dir(&entry, s));
        }
        let data = s.dir.join(CONTINUOUS_FILE);
        if !data.exists() {
            return Err(file_error(&data, "missing continuous.dat"));
        }
        let map = MappedFile::open(&data)?;
        let len = map.bytes().len() as u64;
        let name = entry.streams[si].name.clone();
        let (mut l, map) = OpenEphysLayoutRead::read(entry, Some(&name), Some((map, len)))?;
        l.check_sample_numbers()?;
        let map = map.expect("read hands back the mapping it was given");
        let raw = RawData::new(map, 0, l.info)?;
        Ok(Self {
            raw,
            entry: l.entry,
            stream: l.stream,
            layout: l.layout,
            index_files: l.index_files,
            measured: l.measured,
            warnings: l.warnings,
        })
    }

    /// Problems that did not stop the stream from opening (a dropped partial frame, gaps).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The `continuous.dat` file.
    pub fn path(&self) -> &Path {
        self.raw.path()
    }

    /// The `structure.oebin` file.
    pub fn oebin_path(&self) -> &Path {
        &self.entry.oebin_path
    }

    /// The `.npy` files read: the sample numbers, then the timestamps where there are some.
    pub fn index_files(&self) -> &[PathBuf] {
        &self.index_files
    }

    /// The recording this stream belongs to.
    pub fn recording(&self) -> &OpenEphysRecordingEntry {
        &self.entry
    }

    /// The stream.
    pub fn stream(&self) -> &OpenEphysStream {
        &self.entry.streams[self.stream]
    }

    /// Which GUI layout the sample numbers are in.
    pub fn layout(&self) -> OpenEphysLayout {
        self.layout
    }

    /// The rate the clock ran at, from sample numbers and timestamps (0.6+ layout), as the
    /// shortest decimal that reads back as the measured `f64`; `info().sample_rate` is the
    /// nominal one.
    pub fn measured_sample_rate(&self) -> Option<SampleRate> {
        self.measured
    }

    /// The most threads one large read is split across (see
    /// [`BinaryRecording::read_threads`](crate::BinaryRecording::read_threads)).
    pub fn read_threads(&self) -> usize {
        self.raw.read_threads()
    }

    /// Sets the most threads one large read is split across (0 counts as 1).
    pub fn set_read_threads(&mut self, threads: usize) {
        self.raw.set_read_threads(threads);
    }
}

source_via_raw!(OpenEphysRecording);
