//! A table of peaks in the formats it is written in: a NumPy `.npy` structured array of
//! SpikeInterface's peak dtype (`base_peak_dtype`: `sample_index` int64, `channel_index` int64,
//! `amplitude` float64, `segment_index` int64), JSON lines or CSV.
//!
//! A table's `sample_index` counts from its segment's first sample, as SpikeInterface's peaks
//! do (each segment's frames start at 0); a [`Peak`]'s `sample` counts from the recording's
//! first sample (segments end to end). [`segment_starts`] gives what converts one to the other.

use dspk_ops::detect::Peak;
use dspk_types::{DspError, DspResult, RecordingInfo};

/// Each segment's first sample in the recording (segments end to end from 0): what a table's
/// segment-relative `sample_index` is added to.
pub fn segment_starts(info: &RecordingInfo) -> Vec<u64> {
    info.segments().ranges().map(|r| r.start).collect()
}

/// `peak`'s sample counted from its segment's first sample.
fn in_segment(peak: &Peak, starts: &[u64]) -> u64 {
    let start = starts.get(peak.segment as usize).copied().unwrap_or(0);
    peak.sample.saturating_sub(start)
}

/// A peak table's file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    /// NumPy `.npy` (version 1.0), SpikeInterface's peak dtype.
    Npy,
    /// One JSON object per line.
    JsonLines,
    /// Comma-separated, with a header line.
    Csv,
}

impl TableFormat {
    /// The format a file name's extension names (`.npy`, `.jsonl`/`.ndjson`, `.csv`).
    ///
    /// # Errors
    /// Another extension.
    pub fn of_path(path: &std::path::Path) -> DspResult<Self> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("npy") => Ok(TableFormat::Npy),
            Some("jsonl" | "ndjson") => Ok(TableFormat::JsonLines),
            Some("csv") => Ok(TableFormat::Csv),
            _ => Err(DspError::config(format!(
                "a peak table is written as .npy, .jsonl or .csv, and {} is none of them",
                path.display()
            ))),
        }
    }
}

/// The dtype of SpikeInterface's `base_peak_dtype`, as an `.npy` header spells it.
const DESCR: &str = "[('sample_index', '<i8'), ('channel_index', '<i8'), ('amplitude', '<f8'), \
                     ('segment_index', '<i8')]";

/// `peaks` encoded as `format`, each `sample_index` counted from its segment's first sample
/// (`starts`: [`segment_starts`] of the recording).
pub fn encode_peaks(peaks: &[Peak], format: TableFormat, starts: &[u64]) -> Vec<u8> {
    match format {
        TableFormat::Npy => npy(peaks, starts),
        TableFormat::JsonLines => peaks
            .iter()
            .map(|p| {
                format!(
                    "{{\"sample_index\":{},\"channel_index\":{},\"amplitude\":{},\
                     \"segment_index\":{}}}\n",
                    in_segment(p, starts),
                    p.channel,
                    f64::from(p.amplitude),
                    p.segment
                )
            })
            .collect::<String>()
            .into_bytes(),
        TableFormat::Csv => {
            let mut text = String::from("sample_index,channel_index,amplitude,segment_index\n");
            for p in peaks {
                text.push_str(&format!(
                    "{},{},{},{}\n",
                    in_segment(p, starts),
                    p.channel,
                    f64::from(p.amplitude),
                    p.segment
                ));
            }
            text.into_bytes()
        }
    }
}

/// Version 1.0 `.npy`: magic, header length, the header dict padded with spaces to a multiple
/// of 64 bytes (newline last), then the records little-endian.
fn npy(peaks: &[Peak], starts: &[u64]) -> Vec<u8> {
    let mut out = npy_preamble(peaks.len() as u64);
    out.extend_from_slice(&peak_records(peaks, starts));
    out
}

/// The bytes of a `.npy` table of `count` peaks before its records.
fn npy_preamble(count: u64) -> Vec<u8> {
    let mut header = format!("{{'descr': {DESCR}, 'fortran_order': False, 'shape': ({count},), }}");
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + 32 * count as usize);
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out
}

/// The peaks of a `.npy` table as [`encode_peaks`] writes it (a part of a cluster run read
/// back): its header must be the one written for its record count, its data that many
/// records; each sample is put back in recording samples with `starts` ([`segment_starts`]).
///
/// # Errors
/// Bytes that are not such a table (named by what differs: the preamble, or the data's length
/// against the header's count), or a record out of a peak's range (a negative sample, a channel
/// past `u32`, a segment the recording does not have).
pub fn decode_npy_peaks(bytes: &[u8], starts: &[u64]) -> DspResult<Vec<Peak>> {
    let not_table =
        || DspError::config("not a peak table as dspk writes it (.npy of SpikeInterface's dtype)");
    let header_len = bytes
        .get(8..10)
        .map(|b| usize::from(u16::from_le_bytes([b[0], b[1]])))
        .ok_or_else(not_table)?;
    let preamble = bytes.get(..10 + header_len).ok_or_else(not_table)?;
    let count: u64 = std::str::from_utf8(&preamble[10..])
        .ok()
        .and_then(|h| h.split_once("'shape': (")?.1.split_once(",)"))
        .and_then(|(n, _)| n.parse().ok())
        .ok_or_else(not_table)?;
    if preamble != npy_preamble(count).as_slice() {
        return Err(not_table());
    }
    let data = &bytes[preamble.len()..];
    if data.len() as u64 != count.saturating_mul(32) {
        return Err(DspError::config(format!(
            "a peak table whose header counts {count} peaks ({} bytes of records) holds {} \
             bytes of records: it was cut or written over",
            count.saturating_mul(32),
            data.len()
        )));
    }
    data.chunks_exact(32)
        .map(|r| {
            let field = |i: usize| {
                let mut b = [0u8; 8];
                b.copy_from_slice(&r[8 * i..8 * i + 8]);
                b
            };
            let (sample, channel) = (i64::from_le_bytes(field(0)), i64::from_le_bytes(field(1)));
            let segment = i64::from_le_bytes(field(3));
            let start = usize::try_from(segment)
                .ok()
                .and_then(|s| starts.get(s).copied());
            match (
                u64::try_from(sample),
                u32::try_from(channel),
                u32::try_from(segment),
                start,
            ) {
                (Ok(sample), Ok(channel), Ok(segment), Some(start)) => Ok(Peak {
                    sample: start + sample,
                    channel,
                    // Written from an f32: the f64 holds it exactly.
                    amplitude: f64::from_le_bytes(field(2)) as f32,
                    segment,
                }),
                _ => Err(DspError::config(format!(
                    "a peak table's record (sample {sample}, channel {channel}, segment \
                     {segment}) is out of a peak's range (the recording has {} segments)",
                    starts.len()
                ))),
            }
        })
        .collect()
}

/// The records of `peaks` as the `.npy` data holds them: 32 bytes each, little-endian
/// `sample_index` i64 (from its segment's first sample, `starts`: [`segment_starts`]),
/// `channel_index` i64, `amplitude` f64, `segment_index` i64.
pub fn peak_records(peaks: &[Peak], starts: &[u64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(32 * peaks.len());
    for p in peaks {
        out.extend_from_slice(&(in_segment(p, starts) as i64).to_le_bytes());
        out.extend_from_slice(&i64::from(p.channel).to_le_bytes());
        out.extend_from_slice(&f64::from(p.amplitude).to_le_bytes());
        out.extend_from_slice(&i64::from(p.segment).to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_npy_table_reads_back_and_a_cut_one_is_refused() {
        let peaks: Vec<Peak> = (0..70u32)
            .map(|i| Peak {
                sample: 1_000_003 * u64::from(i),
                channel: i % 7,
                amplitude: -(i as f32) * 1.25 - 0.1,
                segment: i / 50,
            })
            .collect();
        // Segment 1 starts at sample 50_000_150 (peak 50's sample).
        let starts = [0, 50_000_150];
        let bytes = encode_peaks(&peaks, TableFormat::Npy, &starts);
        assert_eq!(decode_npy_peaks(&bytes, &starts).unwrap(), peaks);
        // The records count samples from their segment's start, as SpikeInterface does.
        let records = peak_records(&peaks, &starts);
        let first_of_1 = i64::from_le_bytes(records[50 * 32..50 * 32 + 8].try_into().unwrap());
        assert_eq!(first_of_1, 0);
        let last = i64::from_le_bytes(records[69 * 32..69 * 32 + 8].try_into().unwrap());
        assert_eq!(last, 1_000_003 * 69 - 50_000_150);
        let csv =
            String::from_utf8(encode_peaks(&peaks[50..51], TableFormat::Csv, &starts)).unwrap();
        assert!(
            csv.ends_with(&format!("\n0,1,{},1\n", f64::from(-62.6f32))),
            "{csv}"
        );
        let err = decode_npy_peaks(&bytes, &starts[..1])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("segment 1") && err.contains("has 1 segments"),
            "{err}"
        );
        assert_eq!(
            decode_npy_peaks(&encode_peaks(&[], TableFormat::Npy, &starts), &starts).unwrap(),
            []
        );
        let err = decode_npy_peaks(&bytes[..bytes.len() - 32], &starts)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("counts 70 peaks (2240 bytes of records) holds 2208"),
            "{err}"
        );
        let err = decode_npy_peaks(&bytes[..40], &starts)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a peak table"), "{err}");
    }
}
