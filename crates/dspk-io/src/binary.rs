//! Raw binary recordings described by a JSON sidecar (`data.bin` + `data.bin.json`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use dspk_types::{
    ChannelInfo, Clock, DspError, DspResult, MemoryOrder, Probe, RationalTime, RecordingInfo,
    SampleFormat, SampleRate, Segments, SignalUnit,
};
use serde::{Deserialize, Serialize};

use crate::mapped::MappedFile;
use crate::raw::{MAX_CHANNELS, RawData, file_error};

/// The sidecar schema version this crate writes and reads.
pub const SIDECAR_VERSION: u32 = 1;

/// The JSON sidecar that describes a raw binary file: `<file>.json` next to `<file>`
/// (`data.bin` → `data.bin.json`).
///
/// ```json
/// {
///   "version": 1,
///   "sample_rate": "30000",
///   "channel_count": 2,
///   "format": "int16",
///   "order": "time-major",
///   "header_offset_bytes": 0,
///   "channels": [
///     {"name": "A0", "gain": 2.34375, "offset": 0, "unit": "uV"},
///     {"name": "A1", "gain": 2.34375, "offset": 0, "unit": "uV"}
///   ],
///   "start_time": "0",
///   "metadata": {"probe": "NP1.0"}
/// }
/// ```
///
/// `sample_rate` is a number or exact text (`"29999.4325"`, `"750003/25"`); `format` a NumPy
/// name (`int8`, `int16`, `uint16`, `int32`, `float32`, `float64`); `order` `time-major`
/// (frames of every channel, as acquisition writes) or `channel-major`. Optional:
/// `version` (1), `header_offset_bytes` (0, bytes skipped before the samples), `channels`
/// (default names `ch0…`, gain 1, offset 0, dimensionless; each field of an entry is optional
/// too), `start_time` (seconds, number or exact text; none: the file has no clock, it starts
/// at 0 and [`open_joined`](crate::open_joined) joins it end to end), `metadata` (text values),
/// `probe` (the geometry, [`Probe`]'s fields: `channels` holds one contact or `null` per
/// channel), `provenance` (any JSON: how the file was made; not read). Unknown fields are refused, so a typo is an error rather than a silently ignored
/// setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BinarySidecar {
    /// Schema version (1); optional when reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// The exact sample rate.
    pub sample_rate: SampleRate,
    /// Channels per frame.
    pub channel_count: usize,
    /// How one sample is stored.
    #[serde(with = "format_name")]
    pub format: SampleFormat,
    /// How samples are laid out.
    #[serde(with = "order_name")]
    pub order: MemoryOrder,
    /// Bytes before the first sample.
    #[serde(default)]
    pub header_offset_bytes: u64,
    /// Per-channel names and scaling; empty means defaults.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<SidecarChannel>,
    /// The time of sample 0; none stated (and no `segments`): the file has no clock to place
    /// it by ([`Clock::Unstated`]), it starts at 0 and joins where the file before it ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<RationalTime>,
    /// The segments, where the file holds more than one run of the clock, in file order;
    /// their lengths must add up to the samples in the file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub segments: Vec<SidecarSegment>,
    /// The format's nominal rate, where `sample_rate` is another (a measured or chosen one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nominal_sample_rate: Option<SampleRate>,
    /// The rate the clock was measured to run at, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_sample_rate: Option<SampleRate>,
    /// Where each channel sits on its probe, where known (one entry per channel, `null` for a
    /// channel without a contact); checked as it is read. Sidecars without it still read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<Probe>,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    /// How the file was made (a preprocessing pass writes its pipeline, fitted parameters,
    /// inputs, version, device and timings here), any JSON; readers carry it and ignore it.
    /// Sidecars without it still read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<serde_json::Value>,
}

/// One segment of a [`BinarySidecar`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SidecarSegment {
    /// Its length in samples.
    pub samples: u64,
    /// The clock number of its first sample (default 0).
    #[serde(default)]
    pub first_sample: u64,
    /// The time of its first sample (default 0).
    #[serde(default)]
    pub start_time: RationalTime,
}

/// One channel of a [`BinarySidecar`]: every field optional.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SidecarChannel {
    /// The name (default `ch<index>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Multiplier from stored value to `unit` (default 1).
    #[serde(default = "one")]
    pub gain: f32,
    /// Added after the gain (default 0).
    #[serde(default)]
    pub offset: f32,
    /// The unit of scaled values (default dimensionless).
    #[serde(default)]
    pub unit: SignalUnit,
}

fn one() -> f32 {
    1.0
}

mod format_name {
    use dspk_types::SampleFormat;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(f: &SampleFormat, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(f.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SampleFormat, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

mod order_name {
    use dspk_types::MemoryOrder;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(o: &MemoryOrder, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(o.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<MemoryOrder, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl BinarySidecar {
    /// The sidecar describing `info` stored in `order` (channel names, gains, offsets, units,
    /// rate, start time, metadata; `info.samples` is implied by the file size).
    pub fn from_info(info: &RecordingInfo, order: MemoryOrder) -> Self {
        Self {
            version: Some(SIDECAR_VERSION),
            sample_rate: info.sample_rate,
            channel_count: info.channel_count(),
            format: info.format,
            order,
            header_offset_bytes: 0,
            channels: info
                .channels
                .iter()
                .map(|c| SidecarChannel {
                    name: Some(c.name.clone()),
                    gain: c.gain,
                    offset: c.offset,
                    unit: c.unit.clone(),
                })
                .collect(),
            // Written when the recording states it, or when a cut moved it from 0.
            start_time: (info.clock.is_stated() || info.start_time != RationalTime::ZERO)
                .then_some(info.start_time),
            segments: info.segments.as_ref().map_or_else(Vec::new, |segs| {
                segs.list()
                    .iter()
                    .map(|g| SidecarSegment {
                        samples: g.samples,
                        first_sample: g.first_sample,
                        start_time: g.start_time,
                    })
                    .collect()
            }),
            nominal_sample_rate: info.nominal_rate,
            measured_sample_rate: info.measured_rate,
            probe: info.probe.clone(),
            metadata: info.metadata.clone(),
            provenance: None,
        }
    }

    /// The segments of a file of `samples` samples, `None` for one (checked: their lengths
    /// must add up to `samples`); `path` names the sidecar in errors.
    pub fn segments_of(&self, samples: u64, path: &Path) -> DspResult<Option<Segments>> {
        if self.segments.len() < 2 {
            if let Some(one) = self.segments.first()
                && one.samples != samples
            {
                return Err(file_error(
                    path,
                    format!(
                        "invalid sidecar: its one segment holds {} samples but the data file holds {samples}",
                        one.samples
                    ),
                ));
            }
            return Ok(None);
        }
        let segs = Segments::new(
            self.segments
                .iter()
                .map(|g| (g.samples, g.first_sample, g.start_time)),
        )
        .map_err(|e| file_error(path, format!("invalid sidecar segments: {e}")))?;
        if segs.total() != samples {
            return Err(file_error(
                path,
                format!(
                    "invalid sidecar: its {} segments hold {} samples but the data file holds {samples}",
                    segs.len(),
                    segs.total()
                ),
            ));
        }
        Ok(Some(segs))
    }

    /// Reads and checks the sidecar at `path`.
    pub fn read(path: &Path) -> DspResult<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                file_error(path, "missing sidecar: a raw binary file needs a JSON sidecar next to it describing rate, channels and format")
            } else {
                DspError::io(path, "cannot read the sidecar", &e)
            }
        })?;
        Self::parse(&text, path)
    }

    /// Parses and checks sidecar text; `path` names the file in errors.
    pub fn parse(text: &str, path: &Path) -> DspResult<Self> {
        // The path of the field at fault leads the message (`sample_rate: invalid type: …`).
        let mut de = serde_json::Deserializer::from_str(text);
        let sidecar: Self = serde_path_to_error::deserialize(&mut de)
            .map_err(|e| file_error(path, format!("invalid sidecar: {}", field_error(&e))))?;
        de.end()
            .map_err(|e| file_error(path, format!("invalid sidecar: {e}")))?;
        sidecar.check(path)?;
        Ok(sidecar)
    }

    /// Checks the fields against each other; `path` names the file in errors.
    pub fn check(&self, path: &Path) -> DspResult<()> {
        if let Some(v) = self.version
            && v != SIDECAR_VERSION
        {
            return Err(file_error(
                path,
                format!(
                    "unsupported sidecar version {v} (this reader knows version {SIDECAR_VERSION})"
                ),
            ));
        }
        if self.channel_count == 0 {
            return Err(file_error(path, "invalid sidecar: channel_count is 0"));
        }
        if self.channel_count > MAX_CHANNELS {
            return Err(file_error(
                path,
                format!(
                    "invalid sidecar: channel_count {} exceeds the supported maximum of {MAX_CHANNELS}",
                    self.channel_count
                ),
            ));
        }
        if !self.channels.is_empty() && self.channels.len() != self.channel_count {
            return Err(file_error(
                path,
                format!(
                    "invalid sidecar: channel_count is {} but {} channels are described",
                    self.channel_count,
                    self.channels.len()
                ),
            ));
        }
        if let Some((i, c)) = self
            .channels
            .iter()
            .enumerate()
            .find(|(_, c)| !c.gain.is_finite() || !c.offset.is_finite())
        {
            return Err(file_error(
                path,
                format!(
                    "invalid sidecar: channel {i} has gain {} and offset {}",
                    c.gain, c.offset
                ),
            ));
        }
        if let Some(probe) = &self.probe {
            probe
                .check_channel_count(self.channel_count)
                .map_err(|e| file_error(path, format!("invalid sidecar: {e}")))?;
        }
        Ok(())
    }

    /// The channel descriptions, with defaults filled in.
    pub fn channel_infos(&self) -> Vec<ChannelInfo> {
        (0..self.channel_count)
            .map(|i| match self.channels.get(i) {
                Some(c) => ChannelInfo {
                    name: c.name.clone().unwrap_or_else(|| format!("ch{i}")),
                    gain: c.gain,
                    offset: c.offset,
                    unit: c.unit.clone(),
                    kind: dspk_types::ChannelKind::Signal,
                },
                None => ChannelInfo::new(format!("ch{i}")),
            })
            .collect()
    }
}

/// The sidecar path of a data file: `<file>.json`.
pub fn sidecar_path(data: &Path) -> PathBuf {
    let mut s: OsString = data.as_os_str().to_owned();
    s.push(".json");
    PathBuf::from(s)
}

/// A sidecar parse error as `field: what is wrong`, with only the fields known (none for errors
/// of the whole text, such as a file cut short, which says where it ends).
pub(crate) fn field_error(e: &serde_path_to_error::Error<serde_json::Error>) -> String {
    use serde_path_to_error::Segment;
    let mut path = String::new();
    // A field not yet named (the parser stopped inside its key) is left out rather than `?`.
    for segment in e.path() {
        match segment {
            Segment::Seq { index } => path.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Segment::Unknown => {}
        }
    }
    let inner = e.inner();
    let what = if inner.is_eof() {
        format!(
            "the file ends at line {} column {} before its JSON is complete ({inner})",
            inner.line(),
            inner.column()
        )
    } else {
        inner.to_string()
    };
    if path.is_empty() {
        what
    } else {
        format!("{path}: {what}")
    }
}

/// `(data, sidecar)` for a path naming either: a path ending in `.json` is taken as the
/// sidecar when its stem exists, or when it is a file with no sidecar of its own (so a sidecar
/// whose data file is missing is reported as that).
pub(crate) fn binary_paths(path: &Path) -> (PathBuf, PathBuf) {
    if path.extension().is_some_and(|e| e == "json") {
        let data = path.with_extension("");
        if data.is_file() || (path.is_file() && !sidecar_path(path).exists()) {
            return (data, path.to_path_buf());
        }
    }
    (path.to_path_buf(), sidecar_path(path))
}

/// What a binary file's sidecar and size say, without mapping or reading samples.
pub(crate) struct BinaryLayout {
    pub(crate) data: PathBuf,
    pub(crate) sidecar_path: PathBuf,
    pub(crate) sidecar: BinarySidecar,
    pub(crate) info: RecordingInfo,
    pub(crate) warnings: Vec<String>,
}

impl BinaryLayout {
    /// Reads the sidecar and takes the data length from the file's metadata (no mapping).
    pub(crate) fn read(path: &Path) -> DspResult<Self> {
        let (data, sidecar_path, sidecar) = Self::read_sidecar(path)?;
        let len = std::fs::metadata(&data)
            .map_err(|e| DspError::io(&data, "cannot read the size", &e))?
            .len();
        Self::from_parts(data, sidecar_path, sidecar, len)
    }

    /// `(data, sidecar path, sidecar)` for a path naming the data file or its sidecar.
    fn read_sidecar(path: &Path) -> DspResult<(PathBuf, PathBuf, BinarySidecar)> {
        let (data, sidecar_path) = binary_paths(path);
        let meta = std::fs::metadata(&data).map_err(|e| DspError::io(&data, "cannot open", &e))?;
        if !meta.is_file() {
            return Err(file_error(&data, "not a regular file"));
        }
        let sidecar = BinarySidecar::read(&sidecar_path)?;
        Ok((data, sidecar_path, sidecar))
    }

    fn from_parts(
        data: PathBuf,
        sidecar_path: PathBuf,
        sidecar: BinarySidecar,
        len: u64,
    ) -> DspResult<Self> {
        let header = sidecar.header_offset_bytes;
        if len < header {
            return Err(file_error(
                &data,
                format!(
                    "file is shorter than its header: {len} bytes, header_offset_bytes {header} (sidecar {})",
                    sidecar_path.display()
                ),
            ));
        }
        // Bounded by MAX_CHANNELS (checked with the sidecar): no overflow.
        let frame = sidecar.channel_count as u64 * sidecar.format.bytes() as u64;
        let body = len - header;
        let samples = body / frame;
        let rest = body % frame;
        let mut warnings = Vec::new();
        if rest != 0 {
            match sidecar.order {
                MemoryOrder::TimeMajor => warnings.push(format!(
                    "{}: {rest} trailing bytes are not a whole frame ({} channels × {} bytes); the partial last frame is dropped",
                    data.display(),
                    sidecar.channel_count,
                    sidecar.format.bytes()
                )),
                MemoryOrder::ChannelMajor => {
                    return Err(file_error(
                        &data,
                        format!(
                            "{body} data bytes are not {} whole channels of {} samples: a channel-major file cannot be cut to whole frames ({rest} bytes left over)",
                            sidecar.channel_count,
                            sidecar.format
                        ),
                    ));
                }
            }
        }
        let name = data.file_name().map_or_else(
            || data.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let info = RecordingInfo {
            name,
            channels: sidecar.channel_infos(),
            samples,
            sample_rate: sidecar.sample_rate,
            format: sidecar.format,
            order: sidecar.order,
            start_time: sidecar
                .segments
                .first()
                .map_or(sidecar.start_time.unwrap_or(RationalTime::ZERO), |g| {
                    g.start_time
                }),
            clock: if sidecar.start_time.is_none() && sidecar.segments.is_empty() {
                Clock::Unstated
            } else {
                Clock::Stated
            },
            segments: sidecar.segments_of(samples, &sidecar_path)?,
            nominal_rate: sidecar.nominal_sample_rate,
            measured_rate: sidecar.measured_sample_rate,
            probe: sidecar.probe.clone(),
            metadata: sidecar.metadata.clone(),
        };
        Ok(Self {
            data,
            sidecar_path,
            sidecar,
            info,
            warnings,
        })
    }
}

/// A raw binary file described by a [`BinarySidecar`], memory-mapped.
///
/// `read`, `read_stored` and `read_native` are served straight from the mapping: the
/// time-major → channel-major decode is a blocked transpose that keeps source and destination
/// rows in cache. The file must not be modified or truncated while it is open.
#[derive(Debug)]
pub struct BinaryRecording {
    raw: RawData,
    sidecar_path: PathBuf,
    sidecar: BinarySidecar,
    warnings: Vec<String>,
}

impl BinaryRecording {
    /// Opens `path` (the data file, or its `.json` sidecar) and maps the data.
    ///
    /// Errors name the file: a missing or invalid sidecar, unknown fields or format, a channel
    /// count of 0, a file shorter than its header offset. A partial last frame is dropped and
    /// reported in [`BinaryRecording::warnings`].
    pub fn open(path: impl AsRef<Path>) -> DspResult<Self> {
        let (data, sidecar_path, sidecar) = BinaryLayout::read_sidecar(path.as_ref())?;
        let map = MappedFile::open(&data)?;
        let len = map.bytes().len() as u64;
        let layout = BinaryLayout::from_parts(data, sidecar_path, sidecar, len)?;
        let raw = RawData::new(map, layout.sidecar.header_offset_bytes, layout.info)?;
        Ok(Self {
            raw,
            sidecar_path: layout.sidecar_path,
            sidecar: layout.sidecar,
            warnings: layout.warnings,
        })
    }

    /// Problems found that did not stop the file from opening (a dropped partial frame).
    /// Libraries do not print; programs show these.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The data file.
    pub fn path(&self) -> &Path {
        self.raw.path()
    }

    /// The sidecar file.
    pub fn sidecar_path(&self) -> &Path {
        &self.sidecar_path
    }

    /// The sidecar as read.
    pub fn sidecar(&self) -> &BinarySidecar {
        &self.sidecar
    }

    /// The most threads one large read is split across (default: the available parallelism,
    /// at most [`DEFAULT_MAX_READ_THREADS`](crate::DEFAULT_MAX_READ_THREADS); reads under half a million values use one).
    pub fn read_threads(&self) -> usize {
        self.raw.read_threads()
    }

    /// Sets the most threads one large read is split across (1: every read on the caller's
    /// thread; 0 counts as 1).
    pub fn set_read_threads(&mut self, threads: usize) {
        self.raw.set_read_threads(threads);
    }
}

source_via_raw!(BinaryRecording);
