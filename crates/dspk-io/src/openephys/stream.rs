//! One stream of a recording: its description read without mapping data
//! ([`OpenEphysLayoutRead`], what `detect` reports), and the memory-mapped reader.

use std::path::{Path, PathBuf};

use dspk_types::{
    ChannelInfo, Clock, DspError, DspResult, MemoryOrder, RationalTime, RecordingInfo,
    SampleFormat, SampleRate,
};

use super::CONTINUOUS_FILE;
use super::folder::{OpenEphysFolder, resolve};
use super::oebin::{OpenEphysRecordingEntry, OpenEphysStream, channel_unit};
use super::probe::stream_probe;
use super::samples::{OpenEphysLayout, SampleIndex};
use crate::mapped::MappedFile;
use crate::raw::{RawData, file_error};

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
    index: SampleIndex,
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
            // The gain is kept as f32: a value finite and above 0 as f64 may be neither as f32.
            let gain = ch.bit_volts as f32;
            if !(gain.is_finite() && gain > 0.0) {
                return Err(file_error(
                    oebin,
                    format!(
                        "continuous[{si}].channels[{k}] ({}): bit_volts {:?} is not a finite number above 0 as a 32-bit float",
                        ch.channel_name, ch.bit_volts
                    ),
                ));
            }
            channels.push(ChannelInfo {
                name: ch.channel_name.clone(),
                gain,
                offset: 0.0,
                unit: channel_unit(ch),
                kind: dspk_types::ChannelKind::Signal,
            });
        }
        let frame = s.channel_count as u64 * 2;
        let samples = len / frame;
        let mut warnings = Vec::new();
        let names: Vec<String> = channels.iter().map(|c| c.name.clone()).collect();
        let probe = stream_probe(&entry, s, &names).unwrap_or_else(|e| {
            warnings.push(e);
            None
        });
        if len % frame != 0 {
            warnings.push(format!(
                "{}: {} trailing bytes are not a whole frame ({} int16 channels); the partial last frame is dropped",
                data.display(),
                len % frame,
                s.channel_count
            ));
        }
        let index = SampleIndex::open(
            &s.dir,
            entry.gui_version.as_deref(),
            &data,
            samples,
            s.channel_count,
            &mut warnings,
        )?;
        let start_time = RationalTime::from_samples(index.first_sample, s.sample_rate)?;

        let mut metadata = std::collections::BTreeMap::new();
        let mut put = |k: &str, v: String| {
            metadata.insert(k.to_string(), v);
        };
        put("format", "openephys".into());
        put("layout", index.layout.name().into());
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
        let measured = index.measured_rate(s.sample_rate, samples, &mut metadata, &mut warnings)?;

        let info = RecordingInfo {
            name: format!("{} {}", entry.label(), s.name),
            channels,
            samples,
            sample_rate: s.sample_rate,
            format: SampleFormat::I16,
            order: MemoryOrder::TimeMajor,
            start_time,
            clock: Clock::Stated,
            segments: None,
            nominal_rate: None,
            measured_rate: measured,
            probe,
            metadata,
        };
        Ok((
            Self {
                stream: si,
                layout: index.layout,
                data,
                index_files: index.files(),
                info,
                measured,
                warnings,
                entry,
                index,
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
        if let Some(w) = self.index.check_increasing()? {
            self.warnings.push(w);
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
    /// [`OpenEphysFolder`](super::OpenEphysFolder)). `stream` chooses by folder name or unique
    /// `stream_name`; `None` takes the only stream (several are an error listing their names).
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

// Here rather than in `folder.rs`, so that the folder module does not depend on this one.
impl OpenEphysFolder {
    /// Opens recording `index` (of [`OpenEphysFolder::recordings`]), stream `stream` (see
    /// [`OpenEphysRecordingEntry::stream_index`]).
    pub fn open(&self, index: usize, stream: Option<&str>) -> DspResult<OpenEphysRecording> {
        let list = self.recordings();
        let entry = list.get(index).ok_or_else(|| {
            DspError::config(format!(
                "{}: no recording {index}: it holds {} (0 to {})",
                self.root.display(),
                list.len(),
                list.len().saturating_sub(1)
            ))
        })?;
        OpenEphysRecording::open_entry(entry.clone(), stream)
    }
}

source_via_raw!(OpenEphysRecording);
