//! The legacy reader: every channel file mapped, its records checked once at open, samples
//! read big-endian from the records; gaps in the record timestamps start segments.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use dspk_types::{
    ChannelInfo, ChannelKind, Clock, DspResult, MemoryOrder, RationalTime, RecordingInfo,
    RecordingSource, SampleFormat, Segments, SignalUnit, check_read, check_read_stored,
};

use super::files::channel_files;
use super::header::{LEGACY_HEADER_BYTES, LegacyHeader};
use crate::mapped::MappedFile;
use crate::raw::file_error;

/// Samples in one record.
pub const LEGACY_RECORD_SAMPLES: u64 = 1024;
/// Bytes of one record: int64 timestamp, uint16 sample count, uint16 recording number (all
/// little-endian), 1024 big-endian int16 samples, a 10-byte marker.
pub const LEGACY_RECORD_BYTES: usize = 8 + 2 + 2 + 2 * 1024 + 10;
/// The marker closing every record.
const MARKER: [u8; 10] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 255];

/// One recording's files (one per channel) and where its records start in the whole.
#[derive(Debug)]
struct Part {
    maps: Vec<MappedFile>,
    first_record: u64,
}

/// The description of a legacy recording without keeping its files mapped (what `detect`
/// reports), and the mapped files when opening.
pub(crate) struct LegacyLayout {
    pub(crate) dir: PathBuf,
    pub(crate) files: Vec<PathBuf>,
    pub(crate) info: RecordingInfo,
    pub(crate) warnings: Vec<String>,
    parts: Vec<Part>,
}

fn timestamp(bytes: &[u8], record: usize) -> i64 {
    let at = LEGACY_HEADER_BYTES + record * LEGACY_RECORD_BYTES;
    i64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

impl LegacyLayout {
    /// Reads and checks every file of the recording at `path` (a folder or one of its
    /// `.continuous` files).
    pub(crate) fn read(path: &Path) -> DspResult<Self> {
        let (dir, groups) = channel_files(path)?;
        let mut warnings = Vec::new();
        let mut headers: Vec<LegacyHeader> = Vec::new();
        let mut parts = Vec::new();
        let mut seg_parts: Vec<(u64, u64, RationalTime)> = Vec::new();
        let mut all_files = Vec::new();
        let mut total_records = 0u64;
        let mut bit_volts = Vec::new();
        for (gi, group) in groups.iter().enumerate() {
            let mut maps: Vec<MappedFile> = Vec::with_capacity(group.len());
            let mut records: Option<(usize, &Path)> = None;
            for (c, f) in group.iter().enumerate() {
                let map = MappedFile::open(&f.path)?;
                let bytes = map.bytes();
                if bytes.len() < LEGACY_HEADER_BYTES {
                    return Err(file_error(
                        &f.path,
                        format!(
                            "holds {} bytes, less than the {LEGACY_HEADER_BYTES}-byte header",
                            bytes.len()
                        ),
                    ));
                }
                let h = LegacyHeader::parse(&bytes[..LEGACY_HEADER_BYTES], &f.path)?;
                if let Some(h0) = headers.first()
                    && h.sample_rate != h0.sample_rate
                {
                    return Err(file_error(
                        &f.path,
                        format!(
                            "header.sampleRate {} differs from {}'s {}: one recording has one rate",
                            h.sample_rate,
                            groups[0][0].path.display(),
                            h0.sample_rate
                        ),
                    ));
                }
                let body = bytes.len() - LEGACY_HEADER_BYTES;
                let n = body / LEGACY_RECORD_BYTES;
                if !body.is_multiple_of(LEGACY_RECORD_BYTES) {
                    warnings.push(format!(
                        "{}: {} trailing bytes are not a whole record; the partial last record is dropped",
                        f.path.display(),
                        body % LEGACY_RECORD_BYTES
                    ));
                }
                match records {
                    None => records = Some((n, &f.path)),
                    Some((n0, f0)) if n0 != n => {
                        return Err(file_error(
                            &f.path,
                            format!(
                                "holds {n} records but {} holds {n0}: the channels of a recording must have the same records",
                                f0.display()
                            ),
                        ));
                    }
                    Some(_) => {}
                }
                for r in 0..n {
                    let at = LEGACY_HEADER_BYTES + r * LEGACY_RECORD_BYTES;
                    let count = u16::from_le_bytes([bytes[at + 8], bytes[at + 9]]);
                    if u64::from(count) != LEGACY_RECORD_SAMPLES {
                        return Err(file_error(
                            &f.path,
                            format!(
                                "record {r} holds {count} samples, not {LEGACY_RECORD_SAMPLES}"
                            ),
                        ));
                    }
                    if bytes[at + LEGACY_RECORD_BYTES - 10..at + LEGACY_RECORD_BYTES] != MARKER {
                        return Err(file_error(
                            &f.path,
                            format!(
                                "record {r} does not end with the marker 0 1 2 … 8 255: the file is corrupt"
                            ),
                        ));
                    }
                    if c > 0 {
                        let t0 = timestamp(maps[0].bytes(), r);
                        let t = timestamp(bytes, r);
                        if t != t0 {
                            return Err(file_error(
                                &f.path,
                                format!(
                                    "record {r} has timestamp {t} but the same record of {} has {t0}",
                                    group[0].path.display()
                                ),
                            ));
                        }
                    }
                }
                if gi == 0 {
                    bit_volts.push(h.bit_volts);
                }
                if c == 0 {
                    headers.push(h);
                }
                maps.push(map);
                all_files.push(f.path.clone());
            }
            let n = records.map_or(0, |r| r.0);
            // Segments: a run of records whose timestamps step by exactly one record.
            let rate = headers[0].sample_rate;
            let b = maps[0].bytes();
            let mut run_start = 0usize;
            for r in 0..n {
                let end_of_run = r + 1 == n
                    || timestamp(b, r + 1)
                        != timestamp(b, r).wrapping_add(LEGACY_RECORD_SAMPLES as i64);
                if end_of_run {
                    let first = timestamp(b, run_start);
                    let first = u64::try_from(first).map_err(|_| {
                        file_error(
                            &group[0].path,
                            format!("record {run_start} has a negative timestamp {first}"),
                        )
                    })?;
                    let samples = (r + 1 - run_start) as u64 * LEGACY_RECORD_SAMPLES;
                    seg_parts.push((samples, first, RationalTime::from_samples(first, rate)?));
                    run_start = r + 1;
                }
            }
            parts.push(Part {
                maps,
                first_record: total_records,
            });
            total_records += n as u64;
        }
        let h0 = &headers[0];
        let channels = groups[0]
            .iter()
            .zip(&bit_volts)
            .map(|(f, &bv)| ChannelInfo {
                name: f.name.clone(),
                gain: bv as f32,
                offset: 0.0,
                // As Neo: headstage channels in µV, ADC and AUX channels in volts.
                unit: if f.kind == "CH" {
                    SignalUnit::Microvolt
                } else {
                    SignalUnit::Volt
                },
                kind: ChannelKind::Signal,
            })
            .collect();
        let samples = total_records * LEGACY_RECORD_SAMPLES;
        let (segments, start_time) = match seg_parts.as_slice() {
            [] => (None, RationalTime::ZERO),
            [one] => (None, one.2),
            many => (Some(Segments::new(many.iter().cloned())?), many[0].2),
        };
        if let Some(s) = &segments {
            warnings.push(format!(
                "{}: the record timestamps jump {} times; read as {} segments",
                dir.display(),
                s.len() - 1,
                s.len()
            ));
        }
        let mut metadata = BTreeMap::new();
        metadata.insert("format".to_string(), "openephys-legacy".to_string());
        metadata.insert("processor".to_string(), groups[0][0].processor.clone());
        if let Some(v) = &h0.version {
            metadata.insert("header_version".to_string(), v.clone());
        }
        let name = dir.file_name().map_or_else(
            || dir.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let info = RecordingInfo {
            name,
            channels,
            samples,
            sample_rate: h0.sample_rate,
            format: SampleFormat::I16,
            order: MemoryOrder::ChannelMajor,
            start_time,
            clock: Clock::Stated,
            segments,
            nominal_rate: None,
            measured_rate: None,
            probe: None,
            metadata,
        };
        Ok(Self {
            dir,
            files: all_files,
            info,
            warnings,
            parts,
        })
    }
}

/// An Open Ephys legacy recording: a folder of `.continuous` files, one per channel, of one
/// processor; recordings `_2`, `_3` … follow the first, and each jump in the record timestamps
/// starts a segment.
///
/// Channels are `CH` channels by number, then ADC/AUX channels, named from their files
/// (`CH1`), scaled by the header's `bitVolts` (µV for `CH`, V otherwise). The start time is
/// the first record's timestamp over `sampleRate`. Every record is checked at open: 1024
/// samples, the closing marker, the same timestamp in every channel.
#[derive(Debug)]
pub struct OpenEphysLegacyRecording {
    dir: PathBuf,
    files: Vec<PathBuf>,
    info: RecordingInfo,
    warnings: Vec<String>,
    parts: Vec<Part>,
}

impl OpenEphysLegacyRecording {
    /// Opens the recording at `path`: a folder of `.continuous` files, or one of them.
    pub fn open(path: impl AsRef<Path>) -> DspResult<Self> {
        let l = LegacyLayout::read(path.as_ref())?;
        Ok(Self {
            dir: l.dir,
            files: l.files,
            info: l.info,
            warnings: l.warnings,
            parts: l.parts,
        })
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The `.continuous` files, recording by recording, each in channel order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Problems that did not stop the recording from opening (partial records, segments).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Calls `f(stored value, k)` for channel `ch`'s samples, `k` counting from 0.
    fn each(&self, ch: usize, samples: Range<u64>, mut f: impl FnMut(i16, usize)) {
        let mut k = 0usize;
        let mut s = samples.start;
        while s < samples.end {
            let record = s / LEGACY_RECORD_SAMPLES;
            let p = self.parts.partition_point(|p| p.first_record <= record) - 1;
            let part = &self.parts[p];
            let bytes = part.maps[ch].bytes();
            let local = (record - part.first_record) as usize;
            let in_rec = (s % LEGACY_RECORD_SAMPLES) as usize;
            let take =
                ((LEGACY_RECORD_SAMPLES as usize - in_rec) as u64).min(samples.end - s) as usize;
            let at = LEGACY_HEADER_BYTES + local * LEGACY_RECORD_BYTES + 12 + 2 * in_rec;
            for pair in bytes[at..at + 2 * take].chunks_exact(2) {
                f(i16::from_be_bytes([pair[0], pair[1]]), k);
                k += 1;
            }
            s += take as u64;
        }
    }
}

impl RecordingSource for OpenEphysLegacyRecording {
    fn info(&self) -> &RecordingInfo {
        &self.info
    }

    fn read(&self, channels: &[usize], samples: Range<u64>, out: &mut [f32]) -> DspResult<()> {
        let n = check_read(&self.info, channels, &samples, out.len())?;
        for (i, &ch) in channels.iter().enumerate() {
            let (g, o) = (self.info.channels[ch].gain, self.info.channels[ch].offset);
            let dst = &mut out[i * n..(i + 1) * n];
            self.each(ch, samples.clone(), |v, k| dst[k] = f32::from(v) * g + o);
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
        for (i, &ch) in channels.iter().enumerate() {
            let dst = &mut out[2 * i * n..2 * (i + 1) * n];
            self.each(ch, samples.clone(), |v, k| {
                dst[2 * k..2 * k + 2].copy_from_slice(&v.to_le_bytes());
            });
        }
        Ok(())
    }
}
