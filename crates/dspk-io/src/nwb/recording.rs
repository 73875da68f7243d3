//! One series as a recording: its description, read without sample reads ([`NwbLayout`], what
//! `detect` reports), and [`NwbRecording`], which reads `data` by chunks through the decoder's
//! chunk cache.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dspk_types::{
    ChannelInfo, ChannelKind, Clock, DspError, DspResult, MemoryOrder, RecordingInfo,
    RecordingSource, SampleFormat, SignalUnit, check_native_range, check_read, check_read_stored,
};
use hdf5_reader::{Dataset, Datatype, SliceInfo, SliceInfoElem};

use super::electrodes::electrodes;
use super::h5::{H5, MAX_READ_BYTES, attr_string, type_name};
use super::scaling::scaling;
use super::series::{choose, find_series};
use super::timing::{start_time, timing};
use crate::decode::{decode_frames, decode_run, transpose_bytes};

/// The chunk cache of an opened series: two rows of chunks across all channels (a window that
/// ends inside a chunk row finds it cached for the next window), within these bounds.
const MIN_CACHE_BYTES: usize = 16 << 20;
const MAX_CACHE_BYTES: usize = 1 << 30;

/// Everything read about one series without reading samples.
#[derive(Debug)]
pub(crate) struct NwbLayout {
    pub(crate) h5: H5,
    pub(crate) series: String,
    pub(crate) info: RecordingInfo,
    pub(crate) warnings: Vec<String>,
    chunk_rows: Option<u64>,
}

/// The sample format of an HDF5 type, where dspk has one.
fn sample_format(t: &Datatype) -> Option<SampleFormat> {
    Some(match t {
        Datatype::FixedPoint {
            size: 1,
            signed: true,
            ..
        } => SampleFormat::I8,
        Datatype::FixedPoint {
            size: 2,
            signed: true,
            ..
        } => SampleFormat::I16,
        Datatype::FixedPoint {
            size: 2,
            signed: false,
            ..
        } => SampleFormat::U16,
        Datatype::FixedPoint {
            size: 4,
            signed: true,
            ..
        } => SampleFormat::I32,
        Datatype::FloatingPoint { size: 4, .. } => SampleFormat::F32,
        Datatype::FloatingPoint { size: 8, .. } => SampleFormat::F64,
        _ => return None,
    })
}

impl NwbLayout {
    /// The description of the series `stream` names (see [`choose`]) of the NWB file `path`.
    pub(crate) fn read(path: &Path, stream: Option<&str>) -> DspResult<Self> {
        Self::describe(H5::open(path, MIN_CACHE_BYTES)?, stream)
    }

    /// The description of the series `stream` names in the open file `h5`.
    fn describe(h5: H5, stream: Option<&str>) -> DspResult<Self> {
        let path = h5.path.clone();
        let path = path.as_path();
        let all = find_series(&h5)?;
        let series = choose(&h5, &all, stream)?;
        let data_path = format!("{series}/data");
        let data = h5.dataset(&data_path)?;
        let (samples, channels) = match *data.shape() {
            [n] => (n, 1u64),
            [n, c] => (n, c),
            ref other => {
                return Err(h5.err(
                    &data_path,
                    format!("has shape {other:?}: an ElectricalSeries' data is [time, channel]"),
                ));
            }
        };
        let format = sample_format(data.dtype()).ok_or_else(|| {
            DspError::UnsupportedFormat(format!(
                "{}: /{data_path} holds {}, which dspk does not read (int8, int16, uint16, int32, \
                 float32, float64)",
                h5.path.display(),
                type_name(data.dtype())
            ))
        })?;
        if channels == 0 {
            return Err(h5.err(&data_path, "has no channels"));
        }
        let channels = usize::try_from(channels)
            .ok()
            .filter(|&c| c <= crate::MAX_CHANNELS)
            .ok_or_else(|| {
                h5.err(
                    &data_path,
                    format!(
                        "has {channels} channels, more than dspk reads ({})",
                        crate::MAX_CHANNELS
                    ),
                )
            })?;
        let chunk_rows = data.chunks().and_then(|c| c.first().map(|&r| u64::from(r)));

        let mut warnings = Vec::new();
        let mut metadata = BTreeMap::new();
        metadata.insert("format".into(), "nwb".into());
        metadata.insert("series".into(), series.clone());
        metadata.insert("data_dtype".into(), type_name(data.dtype()));
        if let Some(c) = data.chunks() {
            metadata.insert("chunk_shape".into(), format!("{c:?}"));
        }
        if let Ok(root) = h5.file.root_group()
            && let Some(v) = attr_string(root.attribute("nwb_version"))
        {
            metadata.insert("nwb_version".into(), v);
        }
        let group = h5.group(&series)?;
        if let Some(d) = attr_string(group.attribute("description")) {
            metadata.insert("description".into(), d);
        }
        let el = electrodes(&h5, &series, channels, &mut warnings)?;
        let sc = scaling(
            &h5,
            &series,
            channels,
            el.offsets_v.as_deref(),
            &mut warnings,
        )?;
        metadata.insert("conversion".into(), super::scaling::shortest(sc.conversion));
        metadata.insert(
            "channel_conversion".into(),
            if sc.channel_conversion { "yes" } else { "no" }.into(),
        );
        if let Some(groups) = &el.groups {
            let mut g = groups.clone();
            g.dedup();
            metadata.insert("electrode_groups".into(), g.join(", "));
        }
        let t = timing(&h5, &series, samples, &mut metadata, &mut warnings)?;
        let start = start_time(&h5, &series, t.start_s, &mut warnings);
        let channel_infos = el
            .names
            .into_iter()
            .zip(sc.gains.iter().zip(&sc.offsets))
            .map(|(name, (&gain, &offset))| ChannelInfo {
                name,
                gain,
                offset,
                unit: SignalUnit::Microvolt,
                kind: ChannelKind::Signal,
            })
            .collect();
        let file_name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let info = RecordingInfo {
            name: format!("{file_name} {series}"),
            channels: channel_infos,
            samples,
            sample_rate: t.rate,
            format,
            order: MemoryOrder::TimeMajor,
            start_time: start,
            clock: Clock::Stated,
            segments: None,
            nominal_rate: None,
            measured_rate: t.measured,
            probe: el.probe,
            metadata,
        };
        Ok(Self {
            h5,
            series,
            info,
            warnings,
            chunk_rows,
        })
    }
}

/// One `ElectricalSeries` of an NWB file, read lazily: each read decodes only the chunks of
/// `data` it touches (deflate-compressed or not), through a chunk cache of two chunk rows.
///
/// Channels are the series' columns, named by the electrodes table's `channel_name` (else the
/// electrode ids), scaled to µV by `conversion`, `channel_conversion` and `offset`; the probe
/// is the table's `rel_x`/`rel_y` with a shank per electrode group. The file must not be
/// modified while it is open.
pub struct NwbRecording {
    h5: H5,
    data: Dataset,
    series: String,
    info: RecordingInfo,
    warnings: Vec<String>,
    chunk_rows: Option<u64>,
    read_threads: usize,
}

impl std::fmt::Debug for NwbRecording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NwbRecording")
            .field("path", &self.h5.path)
            .field("series", &self.series)
            .field("info", &self.info.name)
            .finish()
    }
}

impl NwbRecording {
    /// Opens one `ElectricalSeries` of the NWB file `path`.
    ///
    /// `stream` names the series by its path in the file (`acquisition/ElectricalSeries`, with
    /// or without the leading `/`) or by its last part where that is unique; `None` takes the
    /// only series (several are an error listing them, as is a file with none).
    ///
    /// Errors name the file and the HDF5 object: data of a rank other than 1 or 2 or of a type
    /// dspk does not read, an electrodes region or `channel_conversion` whose length is not the
    /// channel count, rows past the electrodes table, `timestamps` of another length than
    /// `data`, a rate that is not above 0. A series whose `conversion` and
    /// `channel_conversion` are the same value, or that starts before 0 s, opens with a
    /// warning ([`NwbRecording::warnings`]).
    pub fn open(path: impl AsRef<Path>, stream: Option<&str>) -> DspResult<Self> {
        let path = path.as_ref();
        let l = NwbLayout::read(path, stream)?;
        // Reopened with the cache sized for this series' chunks (the description was read
        // with a small one).
        let h5 = H5::open(path, l.cache_bytes())?;
        Self::with_layout(l, h5)
    }

    /// Opens one `ElectricalSeries` (chosen as by [`NwbRecording::open`]) of the NWB file held
    /// in `bytes` (fetched over the network, say), called `label` in messages.
    pub fn from_bytes(bytes: Arc<[u8]>, label: &Path, stream: Option<&str>) -> DspResult<Self> {
        let h5 = H5::from_bytes(bytes.clone(), label, MIN_CACHE_BYTES)?;
        let l = NwbLayout::describe(h5, stream)?;
        let h5 = H5::from_bytes(bytes, label, l.cache_bytes())?;
        Self::with_layout(l, h5)
    }

    fn with_layout(l: NwbLayout, h5: H5) -> DspResult<Self> {
        let data_path = format!("{}/data", l.series);
        let data = h5.dataset(&data_path)?;
        Ok(Self {
            h5,
            data,
            series: l.series,
            info: l.info,
            warnings: l.warnings,
            chunk_rows: l.chunk_rows,
            read_threads: crate::raw::default_read_threads(),
        })
    }

    /// Problems that did not stop the series from opening (double scaling, a start before 0).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The NWB file.
    pub fn path(&self) -> &Path {
        &self.h5.path
    }

    /// The series' path in the file (`acquisition/ElectricalSeries`).
    pub fn series(&self) -> &str {
        &self.series
    }

    /// The stored values of frames `samples`, channels `cols`, time-major, little-endian: read
    /// in pieces cut on the chunk grid (each chunk row decoded by one thread), up to
    /// [`NwbRecording::read_threads`] at a time, each at most [`MAX_READ_BYTES`].
    fn frames(&self, samples: Range<u64>, cols: Range<usize>) -> DspResult<Vec<u8>> {
        let row_bytes = cols.len() * self.info.format.bytes();
        let n = usize::try_from(samples.end - samples.start)
            .map_err(|_| DspError::Overflow(format!("{} samples", samples.end - samples.start)))?;
        let total = n.checked_mul(row_bytes).ok_or_else(|| {
            DspError::Overflow(format!("a read of {n} samples × {} channels", cols.len()))
        })?;
        let mut out = vec![0u8; total];
        let pieces = self.pieces(&samples, row_bytes);
        let mut slices = Vec::with_capacity(pieces.len());
        let mut rest = out.as_mut_slice();
        for r in &pieces {
            let (head, tail) = rest.split_at_mut((r.end - r.start) as usize * row_bytes);
            slices.push(head);
            rest = tail;
        }
        let mut jobs: Vec<(Range<u64>, &mut [u8])> = pieces.into_iter().zip(slices).collect();
        if self.read_threads <= 1 || jobs.len() == 1 {
            for (r, buf) in jobs {
                self.piece(r, &cols, buf)?;
            }
            return Ok(out);
        }
        while !jobs.is_empty() {
            let group: Vec<_> = jobs.drain(..jobs.len().min(self.read_threads)).collect();
            let results: Vec<DspResult<()>> = std::thread::scope(|s| {
                let handles: Vec<_> = group
                    .into_iter()
                    .map(|(r, buf)| {
                        let cols = cols.clone();
                        s.spawn(move || self.piece(r, &cols, buf))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("a piece read does not panic"))
                    .collect()
            });
            results.into_iter().collect::<DspResult<()>>()?;
        }
        Ok(out)
    }

    /// `samples` cut into pieces for [`NwbRecording::frames`]: about one per read thread, on
    /// multiples of the chunk rows, none over [`MAX_READ_BYTES`].
    fn pieces(&self, samples: &Range<u64>, row_bytes: usize) -> Vec<Range<u64>> {
        let n = samples.end - samples.start;
        if n == 0 {
            return vec![samples.clone()];
        }
        let max_rows = (MAX_READ_BYTES / row_bytes.max(1)).max(1) as u64;
        let chunk = self.chunk_rows.filter(|&c| c > 0).unwrap_or(n);
        let mut per = n.div_ceil(self.read_threads.max(1) as u64).div_ceil(chunk) * chunk;
        per = per.min(max_rows);
        if per >= chunk {
            per = per / chunk * chunk;
        }
        let mut cuts = Vec::new();
        let mut at = samples.start / chunk * chunk + per;
        while at < samples.end {
            if at > samples.start {
                cuts.push(at);
            }
            at += per;
        }
        let mut pieces = Vec::with_capacity(cuts.len() + 1);
        let mut from = samples.start;
        for c in cuts {
            pieces.push(from..c);
            from = c;
        }
        pieces.push(from..samples.end);
        pieces
    }

    /// Reads frames `samples` (at most [`MAX_READ_BYTES`]), channels `cols`, into `out`.
    fn piece(&self, samples: Range<u64>, cols: &Range<usize>, out: &mut [u8]) -> DspResult<()> {
        let (start, end) = (samples.start, samples.end);
        let mut selections = vec![SliceInfoElem::Slice {
            start,
            end,
            step: 1,
        }];
        if self.data.ndim() == 2 {
            selections.push(SliceInfoElem::Slice {
                start: cols.start as u64,
                end: cols.end as u64,
                step: 1,
            });
        }
        let sel = SliceInfo { selections };
        let bad = |e: hdf5_reader::error::Error| {
            self.h5.err(
                &format!("{}/data", self.series),
                format!("cannot read samples {start}..{end}: {e}"),
            )
        };
        let short = |got: usize| {
            self.h5.err(
                &format!("{}/data", self.series),
                format!(
                    "a read of samples {start}..{end} gave {got} bytes, not {}",
                    out.len()
                ),
            )
        };
        macro_rules! read_as {
            ($t:ty) => {{
                let a = self.data.read_slice::<$t>(&sel).map_err(bad)?;
                let got = a.len() * std::mem::size_of::<$t>();
                if got != out.len() {
                    return Err(short(got));
                }
                match a.as_slice() {
                    Some(v) => out.copy_from_slice(bytemuck::cast_slice(v)),
                    None => {
                        for (dst, v) in out
                            .chunks_exact_mut(std::mem::size_of::<$t>())
                            .zip(a.iter())
                        {
                            dst.copy_from_slice(&v.to_le_bytes());
                        }
                    }
                }
            }};
        }
        match self.info.format {
            SampleFormat::I8 => read_as!(i8),
            SampleFormat::I16 => read_as!(i16),
            SampleFormat::U16 => read_as!(u16),
            SampleFormat::I32 => read_as!(i32),
            SampleFormat::F32 => read_as!(f32),
            SampleFormat::F64 => read_as!(f64),
        }
        Ok(())
    }

    /// The most threads one read is split across (pieces of whole chunk rows).
    pub fn read_threads(&self) -> usize {
        self.read_threads
    }

    /// Sets the most threads one read is split across (0 counts as 1).
    pub fn set_read_threads(&mut self, threads: usize) {
        self.read_threads = threads.max(1);
    }

    /// The stored values of `channels` over `samples`, channel-major: the columns from the
    /// lowest to the highest channel asked for are read, then gathered.
    fn gathered(
        &self,
        channels: &[usize],
        samples: Range<u64>,
        n: usize,
        out: &mut [u8],
    ) -> DspResult<()> {
        let (Some(&lo), Some(&hi)) = (channels.iter().min(), channels.iter().max()) else {
            return Ok(());
        };
        if n == 0 {
            return Ok(());
        }
        let frames = self.frames(samples, lo..hi + 1)?;
        let cols: Vec<usize> = channels.iter().map(|&c| c - lo).collect();
        transpose_bytes(
            self.info.format.bytes(),
            &frames,
            n,
            hi + 1 - lo,
            &cols,
            out,
        );
        Ok(())
    }
}

impl RecordingSource for NwbRecording {
    fn info(&self) -> &RecordingInfo {
        &self.info
    }

    fn read(&self, channels: &[usize], samples: Range<u64>, out: &mut [f32]) -> DspResult<()> {
        let n = check_read(&self.info, channels, &samples, out.len())?;
        let elem = self.info.format.bytes();
        let mut stored = vec![0u8; n * channels.len() * elem];
        self.gathered(channels, samples, n, &mut stored)?;
        for (j, &c) in channels.iter().enumerate() {
            let ch = &self.info.channels[c];
            decode_run(
                self.info.format,
                &stored[j * n * elem..(j + 1) * n * elem],
                ch.gain,
                ch.offset,
                &mut out[j * n..(j + 1) * n],
            );
        }
        Ok(())
    }

    fn read_stored(
        &self,
        channels: &[usize],
        samples: Range<u64>,
        out: &mut [u8],
    ) -> DspResult<()> {
        let n = check_read_stored(&self.info, channels, &samples, out.len())?;
        self.gathered(channels, samples, n, out)
    }

    fn read_native(&self, samples: Range<u64>, out: &mut [f32]) -> DspResult<MemoryOrder> {
        let n = check_native_range(&self.info, &samples)?;
        let c = self.info.channel_count();
        if out.len() != n * c {
            return Err(DspError::shape(
                format!("output of a read of {c} channels × {n} samples"),
                n * c,
                out.len(),
            ));
        }
        let frames = self.frames(samples, 0..c)?;
        let gains: Vec<f32> = self.info.channels.iter().map(|ch| ch.gain).collect();
        let offsets: Vec<f32> = self.info.channels.iter().map(|ch| ch.offset).collect();
        decode_frames(self.info.format, &frames, &gains, &offsets, out);
        Ok(MemoryOrder::TimeMajor)
    }

    fn read_stored_native(&self, samples: Range<u64>, out: &mut [u8]) -> DspResult<MemoryOrder> {
        let n = check_native_range(&self.info, &samples)?;
        let c = self.info.channel_count();
        let bytes = n * c * self.info.format.bytes();
        if out.len() != bytes {
            return Err(DspError::shape(
                format!("byte output of a read of {c} channels × {n} samples"),
                bytes,
                out.len(),
            ));
        }
        out.copy_from_slice(&self.frames(samples, 0..c)?);
        Ok(MemoryOrder::TimeMajor)
    }

    fn native_stored_order(&self) -> MemoryOrder {
        MemoryOrder::TimeMajor
    }

    fn chunk_samples(&self) -> Option<u64> {
        self.chunk_rows
    }
}

impl NwbLayout {
    /// The chunk cache for reading this series: two rows of chunks across all channels.
    fn cache_bytes(&self) -> usize {
        let row_bytes = self.info.channel_count() * self.info.format.bytes();
        self.chunk_rows
            .and_then(|r| usize::try_from(r).ok())
            .map_or(MIN_CACHE_BYTES, |r| {
                r.saturating_mul(row_bytes).saturating_mul(2)
            })
            .clamp(MIN_CACHE_BYTES, MAX_CACHE_BYTES)
    }

    /// The file.
    pub(crate) fn path(&self) -> PathBuf {
        self.h5.path.clone()
    }
}
