//! Writing raw binary files with their sidecar: a window-at-a-time writer and a streaming copy
//! of any recording.

use std::io::Write;
#[cfg(not(unix))]
use std::io::{Seek, SeekFrom};
use std::ops::Range;
use std::path::{Path, PathBuf};

use dspk_types::{
    ChunkSchedule, DspError, DspResult, MemoryOrder, ProgressEvent, ProgressSink, RationalTime,
    RecordingInfo, RecordingSource, SampleFormat, SignalUnit, check_sample_range,
};

use crate::binary::{BinarySidecar, sidecar_path};
use crate::durable::{self, TempFile};
use crate::encode::{self, OutputFormat};
use crate::frames;
use crate::raw::file_error;

/// The stage name of [`write_binary`]'s progress events (unit `"samples"`).
pub const WRITE_STAGE: &str = "write";

/// The default window of [`write_binary`], in samples.
pub const DEFAULT_WRITE_WINDOW: u64 = 65_536;

/// What a finished write produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteSummary {
    /// The data file.
    pub path: PathBuf,
    /// Its sidecar (`<path>.json`).
    pub sidecar_path: PathBuf,
    /// Channels written.
    pub channels: usize,
    /// Samples per channel written.
    pub samples: u64,
    /// The stored format of the file.
    pub format: SampleFormat,
    /// The order of the file.
    pub order: MemoryOrder,
    /// Bytes of sample data written.
    pub bytes: u64,
}

/// Writes a raw binary file and its sidecar one channel-major window at a time.
///
/// The data goes to a temporary file in the output directory, renamed into place by
/// [`BinaryWriter::finish`] together with the sidecar ([`durable`](crate::durable)): a writer
/// dropped without `finish` (an error, a panic, a cancelled run) leaves no partial output
/// behind, and a killed one's temporary is removed by the next write of the same file. The number of samples is
/// fixed at creation (`info.samples`), so that channel-major files can be written window by
/// window; `finish` refuses a file with fewer.
///
/// ```
/// use dspk_io::{BinaryRecording, BinaryWriter};
/// use dspk_types::{MemoryOrder, RecordingInfo, RecordingSource, SampleFormat, SampleRate};
///
/// let dir = std::env::temp_dir().join(format!("dspk-io-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("out.bin");
/// let rate = SampleRate::new(1000.0).unwrap();
/// let info = RecordingInfo::new("demo", 2, 4, rate, SampleFormat::F32, MemoryOrder::ChannelMajor);
/// let mut w = BinaryWriter::create(&path, &info, MemoryOrder::TimeMajor).unwrap();
/// w.write_window(&[1.0, 2.0, 10.0, 20.0]).unwrap(); // 2 channels × 2 samples
/// w.write_window(&[3.0, 4.0, 30.0, 40.0]).unwrap();
/// w.finish().unwrap();
/// let rec = BinaryRecording::open(&path).unwrap();
/// let mut out = [0f32; 4];
/// rec.read(&[1], 0..4, &mut out).unwrap();
/// assert_eq!(out, [10.0, 20.0, 30.0, 40.0]);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub struct BinaryWriter {
    path: PathBuf,
    sidecar: BinarySidecar,
    data: TempFile,
    total: u64,
    written: u64,
    /// Whether an integer file takes [`write_window`](Self::write_window)'s values (made by
    /// [`create_as`](Self::create_as); one made by `create_stored` has the source's gains and
    /// takes stored bytes only).
    whole_numbers: bool,
    /// Encoded values of the current window, channel-major.
    encoded: Vec<u8>,
    /// The current window transposed to time-major.
    transposed: Vec<u8>,
}

impl std::fmt::Debug for BinaryWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BinaryWriter")
            .field("path", &self.path)
            .field("format", &self.sidecar.format)
            .field("order", &self.sidecar.order)
            .field("channels", &self.sidecar.channel_count)
            .field("total", &self.total)
            .field("written", &self.written)
            .finish()
    }
}

impl BinaryWriter {
    /// A writer of scaled `float32` values: `info`'s channel names and units, rate, start time
    /// and metadata, gain 1 and offset 0 (the values written are the scaled values), in
    /// `order`. `info.samples` is the number of samples that will be written.
    pub fn create(
        path: impl AsRef<Path>,
        info: &RecordingInfo,
        order: MemoryOrder,
    ) -> DspResult<Self> {
        Self::create_scaled(path.as_ref(), info, order, SampleFormat::F32)
    }

    /// A writer of scaled values stored as `format` says: `float32` as [`create`](Self::create),
    /// or `int16` ([`OutputFormat::Int16`]: the values handed to
    /// [`write_window`](Self::write_window) are whole numbers already multiplied by the gain,
    /// stored as they are; the sidecar's gain of every channel is `1 / gain`, offset 0, units
    /// `info`'s).
    pub fn create_as(
        path: impl AsRef<Path>,
        info: &RecordingInfo,
        order: MemoryOrder,
        format: OutputFormat,
    ) -> DspResult<Self> {
        let gain = format.stored_gain()?;
        let mut sidecar = BinarySidecar::from_info(info, order);
        sidecar.format = format.sample_format();
        for c in &mut sidecar.channels {
            c.gain = gain;
            c.offset = 0.0;
        }
        let mut writer = Self::with_sidecar(path.as_ref(), sidecar, info.samples)?;
        writer.whole_numbers = true;
        Ok(writer)
    }

    /// A writer of stored values in `info.format`, with `info`'s gains and offsets in the
    /// sidecar (see [`BinaryWriter::write_stored_window`]).
    pub fn create_stored(
        path: impl AsRef<Path>,
        info: &RecordingInfo,
        order: MemoryOrder,
    ) -> DspResult<Self> {
        let sidecar = BinarySidecar::from_info(info, order);
        Self::with_sidecar(path.as_ref(), sidecar, info.samples)
    }

    /// A writer of scaled values in the float `format` (gain 1, offset 0).
    fn create_scaled(
        path: &Path,
        info: &RecordingInfo,
        order: MemoryOrder,
        format: SampleFormat,
    ) -> DspResult<Self> {
        if !format.is_float() {
            return Err(DspError::UnsupportedFormat(format!(
                "scaled values are written as float32 or float64, not {format}"
            )));
        }
        let mut sidecar = BinarySidecar::from_info(info, order);
        sidecar.format = format;
        for c in &mut sidecar.channels {
            c.gain = 1.0;
            c.offset = 0.0;
        }
        Self::with_sidecar(path, sidecar, info.samples)
    }

    fn with_sidecar(path: &Path, sidecar: BinarySidecar, total: u64) -> DspResult<Self> {
        sidecar.check(&sidecar_path(path))?;
        check_output_path(path)?;
        check_output_path(&sidecar_path(path))?;
        let mut data = TempFile::create(path)?;
        if sidecar.order == MemoryOrder::ChannelMajor {
            let len = (sidecar.channel_count as u64)
                .checked_mul(sidecar.format.bytes() as u64)
                .and_then(|f| f.checked_mul(total))
                .ok_or_else(|| DspError::Overflow(format!("size of {}", path.display())))?;
            data.file()
                .set_len(len)
                .map_err(|e| DspError::io(path, "cannot size the output file", &e))?;
        }
        Ok(Self {
            path: path.to_path_buf(),
            sidecar,
            data,
            total,
            written: 0,
            whole_numbers: false,
            encoded: Vec::new(),
            transposed: Vec::new(),
        })
    }

    /// The stored format of the file being written.
    pub fn format(&self) -> SampleFormat {
        self.sidecar.format
    }

    /// Channels per frame.
    pub fn channels(&self) -> usize {
        self.sidecar.channel_count
    }

    /// Samples per channel written so far.
    pub fn samples_written(&self) -> u64 {
        self.written
    }

    /// Records where the file came from (the sidecar's `provenance`, written by
    /// [`finish`](Self::finish)); a later call replaces an earlier one.
    pub fn set_provenance(&mut self, provenance: serde_json::Value) {
        self.sidecar.provenance = Some(provenance);
    }

    /// Appends a window of values, channel-major (`channels × n`, any `n`), as the file stores
    /// them: scaled values in a `float32` or `float64` file (gain 1), whole numbers in range in
    /// an `int16` file ([`create_as`](Self::create_as); any other value is an error naming it
    /// and nothing of the window is written). Other formats take
    /// [`write_stored_window`](Self::write_stored_window).
    pub fn write_window(&mut self, data: &[f32]) -> DspResult<()> {
        let c = self.channels();
        if !data.len().is_multiple_of(c) {
            return Err(DspError::shape(
                format!("window of {c} channels (its length must be a multiple of {c})"),
                data.len() / c * c,
                data.len(),
            ));
        }
        let format = self.sidecar.format;
        if format == SampleFormat::F32 {
            // The values are the bytes: no copy before the write.
            return self.write_stored_window(&encode::f32_bytes(data));
        }
        let mut encoded = std::mem::take(&mut self.encoded);
        let encoding = if format.is_float() || self.whole_numbers {
            encode::encode(data, format, &mut encoded)
        } else {
            Err(None)
        };
        let result = match encoding {
            Ok(()) => self.write_stored_window(&encoded),
            Err(Some(bad)) => Err(self.unstorable(bad, data.len() / c)),
            Err(None) => Err(DspError::UnsupportedFormat(format!(
                "{} holds stored {format} values; write them with write_stored_window (scaled values go to float32 or float64 files, or to an int16 file made by create_as)",
                self.path.display()
            ))),
        };
        self.encoded = encoded;
        result
    }

    /// The error of a value `bad` of a window of `n` samples that the file cannot store.
    fn unstorable(&self, bad: encode::Unstorable, n: usize) -> DspError {
        let ch = bad.index / n;
        let name = self
            .sidecar
            .channels
            .get(ch)
            .and_then(|c| c.name.clone())
            .unwrap_or_else(|| format!("ch{ch}"));
        DspError::config(format!(
            "value {} of channel {ch} ({name}) at sample {} cannot be stored in {}: an {} file holds whole numbers from {} to {} (the last stage rounds and saturates to them)",
            bad.value,
            self.written + (bad.index % n) as u64,
            self.path.display(),
            self.sidecar.format,
            i16::MIN,
            i16::MAX,
        ))
    }

    /// Appends a window of stored little-endian values in the file's format, channel-major
    /// (`channels × n × format.bytes()` bytes, any `n`).
    pub fn write_stored_window(&mut self, bytes: &[u8]) -> DspResult<()> {
        let c = self.channels();
        let b = self.sidecar.format.bytes();
        let n = self.frames_in(bytes.len())?;
        if n == 0 {
            return Ok(());
        }
        let io_err = |e: std::io::Error| DspError::io(&self.path, "cannot write", &e);
        match self.sidecar.order {
            MemoryOrder::TimeMajor => {
                self.transposed.resize(bytes.len(), 0);
                frames::to_frames(b, bytes, c, n, &mut self.transposed);
                self.data
                    .file()
                    .write_all(&self.transposed)
                    .map_err(io_err)?;
            }
            MemoryOrder::ChannelMajor => {
                let file = self.data.file();
                for (ch, run) in bytes.chunks_exact(n * b).enumerate() {
                    let at = (ch as u64 * self.total + self.written) * b as u64;
                    write_at(file, run, at).map_err(io_err)?;
                }
            }
        }
        self.written += n as u64;
        Ok(())
    }

    /// Appends a window of stored frames: time-major little-endian values in the file's
    /// format, `channels` to a frame (any number of frames), written as they are to a
    /// time-major file in one write. Nothing checks the values: an `int16` file takes whatever
    /// bits come (a device that laid them out from the output scaling's whole numbers).
    pub fn write_frames(&mut self, bytes: &[u8]) -> DspResult<()> {
        if self.sidecar.order != MemoryOrder::TimeMajor {
            return Err(DspError::config(format!(
                "{} is channel-major: it takes windows, not {} bytes of time-major frames",
                self.path.display(),
                bytes.len()
            )));
        }
        let n = self.frames_in(bytes.len())?;
        if n == 0 {
            return Ok(());
        }
        self.data
            .file()
            .write_all(bytes)
            .map_err(|e| DspError::io(&self.path, "cannot write", &e))?;
        self.written += n as u64;
        Ok(())
    }

    /// Frames in `len` bytes of stored values: refused unless whole frames that fit in what
    /// is left of the file.
    fn frames_in(&self, len: usize) -> DspResult<usize> {
        let c = self.channels();
        let frame = c * self.sidecar.format.bytes();
        if !len.is_multiple_of(frame) {
            return Err(DspError::shape(
                format!(
                    "stored window of {c} {} channels (bytes must be whole frames of {frame})",
                    self.sidecar.format
                ),
                len / frame * frame,
                len,
            ));
        }
        let n = len / frame;
        let remaining = self.total - self.written;
        if n as u64 > remaining {
            return Err(DspError::BufferOverrun {
                what: format!(
                    "output file {} of {} samples",
                    self.path.display(),
                    self.total
                ),
                capacity: usize::try_from(remaining).unwrap_or(usize::MAX),
                needed: n,
            });
        }
        Ok(n)
    }

    /// Checks that every sample was written, writes the sidecar and moves both files into
    /// place. On error nothing is left at the output paths' temporary names.
    pub fn finish(self) -> DspResult<WriteSummary> {
        if self.written != self.total {
            return Err(DspError::config(format!(
                "{} was to hold {} samples but only {} were written",
                self.path.display(),
                self.total,
                self.written
            )));
        }
        let side_path = sidecar_path(&self.path);
        let mut side = TempFile::create(&side_path)?;
        let text = serde_json::to_string_pretty(&self.sidecar).map_err(|e| DspError::Io {
            message: format!("cannot encode the sidecar: {e}"),
            path: Some(side_path.clone()),
        })?;
        side.file()
            .write_all(text.as_bytes())
            .and_then(|()| side.file().write_all(b"\n"))
            .map_err(|e| DspError::io(&side_path, "cannot write the sidecar", &e))?;
        let summary = WriteSummary {
            path: self.path.clone(),
            sidecar_path: side_path.clone(),
            channels: self.sidecar.channel_count,
            samples: self.written,
            format: self.sidecar.format,
            order: self.sidecar.order,
            bytes: self.written * (self.sidecar.channel_count * self.sidecar.format.bytes()) as u64,
        };
        check_output_path(&self.path)?;
        check_output_path(&side_path)?;
        // Both files move in together: a failed move leaves the previous pair as it was.
        durable::persist_all(vec![self.data, side])?;
        Ok(summary)
    }
}

/// Writes all of `bytes` at `offset` of `file` (one `pwrite` where there is one).
fn write_at(file: &mut std::fs::File, bytes: &[u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_all_at(file, bytes, offset)
    }
    #[cfg(not(unix))]
    {
        file.seek(SeekFrom::Start(offset))?;
        file.write_all(bytes)
    }
}

/// Refuses an output path that is a directory (or any other non-file), before anything is
/// written.
fn check_output_path(path: &Path) -> DspResult<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(file_error(
            path,
            "is a directory: an output file cannot be written there",
        )),
        Ok(m) if !m.is_file() => Err(file_error(
            path,
            "is not a regular file: an output file cannot be written there",
        )),
        _ => Ok(()),
    }
}

/// How [`write_binary`] writes a recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOptions {
    /// The stored format of the output. Default: the source's format where the source serves
    /// its stored values, else `float32`.
    pub format: Option<SampleFormat>,
    /// The order of the output. Default: the source's order.
    pub order: Option<MemoryOrder>,
    /// The channels to write, in this order (repeats allowed). Default: all.
    pub channels: Option<Vec<usize>>,
    /// The samples to write. Default: all.
    pub samples: Option<Range<u64>>,
    /// Samples per window read and written at a time (at least 1).
    pub window_samples: u64,
}

impl Default for WriteOptions {
    fn default() -> Self {
        Self {
            format: None,
            order: None,
            channels: None,
            samples: None,
            window_samples: DEFAULT_WRITE_WINDOW,
        }
    }
}

/// How values travel from the source to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The stored bytes, unchanged (same format).
    Stored,
    /// Stored integers converted to another integer type, keeping gains (checked: a value that
    /// does not fit is an error).
    Integers,
    /// Scaled values in a float format, gain 1.
    Scaled,
}

/// Streams `source` through windows into a new raw binary file at `path` and its sidecar
/// `<path>.json`, reporting progress (stage [`WRITE_STAGE`], samples).
///
/// When the output format is the source's stored format, the stored bytes are copied
/// unchanged with the source's gains and offsets (a round trip is exact). A float output
/// format otherwise gets the scaled values (gain 1, offset 0). An integer output format of an
/// integer source gets the stored integers converted, keeping the gains; a value that does not
/// fit is an error. Output goes to a temporary file renamed at the end: a failure leaves no
/// partial file.
pub fn write_binary(
    source: &dyn RecordingSource,
    path: impl AsRef<Path>,
    options: &WriteOptions,
    progress: &dyn ProgressSink,
) -> DspResult<WriteSummary> {
    let path = path.as_ref();
    let info = source.info();
    let channels: Vec<usize> = match &options.channels {
        Some(c) => c.clone(),
        None => (0..info.channel_count()).collect(),
    };
    if channels.is_empty() {
        return Err(DspError::config("no channels to write"));
    }
    if let Some(&bad) = channels.iter().find(|&&c| c >= info.channel_count()) {
        return Err(DspError::InvalidChannel {
            index: bad,
            count: info.channel_count(),
        });
    }
    if options.window_samples == 0 {
        return Err(DspError::config("write window of 0 samples"));
    }
    let range = options.samples.clone().unwrap_or(0..info.samples);
    check_sample_range(&range, info.samples)?;
    let total = range.end - range.start;

    let stored_ok = {
        let probe = range.start..(range.start + 1).min(range.end);
        let mut buf = vec![0u8; info.format.bytes() * (probe.end - probe.start) as usize];
        source.read_stored(&channels[..1], probe, &mut buf).is_ok()
    };
    let format = options.format.unwrap_or(if stored_ok {
        info.format
    } else {
        SampleFormat::F32
    });
    let mode = if format == info.format && stored_ok {
        Mode::Stored
    } else if format.is_float() {
        Mode::Scaled
    } else if stored_ok && !info.format.is_float() {
        Mode::Integers
    } else {
        return Err(DspError::UnsupportedFormat(format!(
            "cannot write {} as {format}: it has no stored integer values to convert (write float32 or float64)",
            info.name
        )));
    };
    let order = options.order.unwrap_or(info.order);

    let offset = RationalTime::from_samples(range.start, info.sample_rate)?;
    let cut = match &info.segments {
        Some(segs) => Some(segs.slice(&range, info.sample_rate)?),
        None => None,
    };
    let out_info = RecordingInfo {
        name: info.name.clone(),
        channels: channels.iter().map(|&c| info.channels[c].clone()).collect(),
        samples: total,
        sample_rate: info.sample_rate,
        format,
        order,
        start_time: match &cut {
            Some(segs) => segs.list()[0].start_time,
            None => info.start_time.checked_add(offset)?,
        },
        clock: info.clock,
        segments: cut.filter(|s| s.len() > 1),
        nominal_rate: info.nominal_rate,
        measured_rate: info.measured_rate,
        probe: info.probe.as_ref().and_then(|p| p.select(&channels).ok()),
        metadata: info.metadata.clone(),
    };
    let mut writer = match mode {
        Mode::Stored | Mode::Integers => BinaryWriter::create_stored(path, &out_info, order)?,
        Mode::Scaled => BinaryWriter::create_scaled(path, &out_info, order, format)?,
    };

    progress.report(&ProgressEvent::new(WRITE_STAGE, 0, total, "samples"));
    if total > 0 {
        let schedule =
            ChunkSchedule::for_recording(info, range.clone(), options.window_samples, 0, 0)?;
        let loader = dspk_types::WindowLoader::with_channels(source, channels.clone())?;
        let mut done = 0u64;
        let mut report = |w: &dspk_types::HaloWindow| {
            done += w.valid_len() as u64;
            progress.report(&ProgressEvent::new(WRITE_STAGE, done, total, "samples"));
        };
        match mode {
            Mode::Stored => loader.stream_stored(schedule.windows(), |w, bytes| {
                writer.write_stored_window(bytes)?;
                report(w);
                Ok(())
            })?,
            Mode::Integers => {
                let mut converted = Vec::new();
                loader.stream_stored(schedule.windows(), |w, bytes| {
                    convert_integers(
                        info,
                        &channels,
                        w.read_global.clone(),
                        bytes,
                        format,
                        &mut converted,
                    )?;
                    writer.write_stored_window(&converted)?;
                    report(w);
                    Ok(())
                })?
            }
            Mode::Scaled => loader.stream(schedule.windows(), |w, data| {
                writer.write_window(data)?;
                report(w);
                Ok(())
            })?,
        }
    }
    writer.finish()
}

/// Converts channel-major stored integers of `info.format` to `format`, checking each fits.
fn convert_integers(
    info: &RecordingInfo,
    channels: &[usize],
    samples: Range<u64>,
    bytes: &[u8],
    format: SampleFormat,
    out: &mut Vec<u8>,
) -> DspResult<()> {
    let from = info.format;
    let n = (samples.end - samples.start) as usize;
    out.clear();
    for (i, v) in bytes.chunks_exact(from.bytes()).enumerate() {
        let x = stored_integer(from, v);
        let fits = match format {
            SampleFormat::I8 => i8::try_from(x).map(|y| out.extend(y.to_le_bytes())).is_ok(),
            SampleFormat::I16 => i16::try_from(x)
                .map(|y| out.extend(y.to_le_bytes()))
                .is_ok(),
            SampleFormat::U16 => u16::try_from(x)
                .map(|y| out.extend(y.to_le_bytes()))
                .is_ok(),
            SampleFormat::I32 => i32::try_from(x)
                .map(|y| out.extend(y.to_le_bytes()))
                .is_ok(),
            SampleFormat::F32 | SampleFormat::F64 => {
                unreachable!("float outputs take scaled values")
            }
        };
        if !fits {
            let ch = channels[i / n.max(1)];
            return Err(DspError::config(format!(
                "stored value {x} of channel {} ({}) at sample {} of {} does not fit in {format}",
                ch,
                info.channels[ch].name,
                samples.start + (i % n.max(1)) as u64,
                info.name
            )));
        }
    }
    Ok(())
}

/// One stored integer of an integer format.
fn stored_integer(format: SampleFormat, b: &[u8]) -> i64 {
    match format {
        SampleFormat::I8 => i64::from(i8::from_le_bytes([b[0]])),
        SampleFormat::I16 => i64::from(i16::from_le_bytes([b[0], b[1]])),
        SampleFormat::U16 => i64::from(u16::from_le_bytes([b[0], b[1]])),
        SampleFormat::I32 => i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        SampleFormat::F32 | SampleFormat::F64 => unreachable!("only integer formats are converted"),
    }
}

/// What a converted recording holds: `info`'s channels and time as `float32` in `units` (one per
/// channel, the scaled units; gain 1, offset 0), with where it came from (`from`) and its
/// stored format in the metadata (`dspk_converted_from`, `dspk_source_format`). `dspk convert`
/// and the Python package's `convert` write this.
pub fn converted_info(info: &RecordingInfo, units: &[SignalUnit], from: &str) -> RecordingInfo {
    let mut out = info.clone();
    out.format = SampleFormat::F32;
    for (ch, unit) in out.channels.iter_mut().zip(units) {
        ch.gain = 1.0;
        ch.offset = 0.0;
        ch.unit = unit.clone();
    }
    out.metadata
        .insert("dspk_converted_from".to_string(), from.to_string());
    out.metadata.insert(
        "dspk_source_format".to_string(),
        info.format.name().to_string(),
    );
    out
}
