//! A table of peaks in the formats it is written in: a NumPy `.npy` structured array of
//! SpikeInterface's peak dtype (`base_peak_dtype`: `sample_index` int64, `channel_index` int64,
//! `amplitude` float64, `segment_index` int64), JSON lines or CSV.

use dspk_ops::detect::Peak;
use dspk_types::{DspError, DspResult};

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

/// `peaks` encoded as `format`.
pub fn encode_peaks(peaks: &[Peak], format: TableFormat) -> Vec<u8> {
    match format {
        TableFormat::Npy => npy(peaks),
        TableFormat::JsonLines => peaks
            .iter()
            .map(|p| {
                format!(
                    "{{\"sample_index\":{},\"channel_index\":{},\"amplitude\":{},\
                     \"segment_index\":{}}}\n",
                    p.sample,
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
                    p.sample,
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
fn npy(peaks: &[Peak]) -> Vec<u8> {
    let mut header = format!(
        "{{'descr': {DESCR}, 'fortran_order': False, 'shape': ({},), }}",
        peaks.len()
    );
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + 32 * peaks.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&peak_records(peaks));
    out
}

/// The records of `peaks` as the `.npy` data holds them: 32 bytes each, little-endian
/// `sample_index` i64, `channel_index` i64, `amplitude` f64, `segment_index` i64.
pub fn peak_records(peaks: &[Peak]) -> Vec<u8> {
    let mut out = Vec::with_capacity(32 * peaks.len());
    for p in peaks {
        out.extend_from_slice(&(p.sample as i64).to_le_bytes());
        out.extend_from_slice(&i64::from(p.channel).to_le_bytes());
        out.extend_from_slice(&f64::from(p.amplitude).to_le_bytes());
        out.extend_from_slice(&i64::from(p.segment).to_le_bytes());
    }
    out
}
