//! Sample numbers and the measured rate: which files hold a stream's sample numbers (GUI 0.5 or
//! 0.6+), their checks against the data and each other, and the rate the timestamps measure.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dspk_types::{DspResult, SampleRate};

use super::oebin::gui_major_minor;
use super::{SAMPLE_NUMBERS_FILE, TIMESTAMPS_FILE};
use crate::npy::{NpyArray, NpyDtype};
use crate::raw::file_error;

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

/// A stream's sample numbers (and 0.6+ timestamps), opened and checked against its frame count.
#[derive(Debug)]
pub(super) struct SampleIndex {
    pub(super) layout: OpenEphysLayout,
    pub(super) sample_numbers: NpyArray,
    pub(super) timestamps: Option<NpyArray>,
    /// The first sample number (none in an empty stream).
    pub(super) first: Option<i64>,
    /// The last sample number (none in an empty stream).
    pub(super) last: Option<i64>,
    /// The first sample number, 0 in an empty stream: the start in samples.
    pub(super) first_sample: u64,
}

impl SampleIndex {
    /// Opens the sample-number files of the stream folder `dir` (GUI `gui_version`), whose
    /// `data` file holds `samples` frames of `channel_count` channels. A missing `timestamps.npy`
    /// in the 0.6+ layout is pushed to `warnings`.
    pub(super) fn open(
        dir: &Path,
        gui_version: Option<&str>,
        data: &Path,
        samples: u64,
        channel_count: usize,
        warnings: &mut Vec<String>,
    ) -> DspResult<Self> {
        let sn_path = dir.join(SAMPLE_NUMBERS_FILE);
        let ts_path = dir.join(TIMESTAMPS_FILE);
        let gui = gui_version.and_then(gui_major_minor);
        let layout = if sn_path.exists() {
            OpenEphysLayout::V06
        } else if gui.is_some_and(|v| v >= (0, 6)) {
            return Err(file_error(
                &sn_path,
                format!(
                    "missing file: GUI version {} writes the sample numbers there",
                    gui_version.unwrap_or("")
                ),
            ));
        } else if ts_path.exists() {
            OpenEphysLayout::V05
        } else {
            return Err(file_error(
                dir,
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
                        "{} values, but {} holds {samples} frames of {channel_count} channels: the files disagree on the stream's length",
                        a.len(),
                        data.display(),
                    ),
                ));
            }
        }
        let sn_file = sample_numbers.path();
        let first = sample_numbers.get_i64(0);
        let last = samples
            .checked_sub(1)
            .and_then(|i| sample_numbers.get_i64(i));
        let first_sample = match first {
            Some(v) => u64::try_from(v)
                .map_err(|_| file_error(sn_file, format!("first sample number {v} is negative")))?,
            None => 0,
        };
        if let (Some(f), Some(l)) = (first, last)
            && l < f
        {
            return Err(file_error(
                sn_file,
                format!("sample numbers go backwards: the last ({l}) is below the first ({f})"),
            ));
        }
        Ok(Self {
            layout,
            sample_numbers,
            timestamps,
            first,
            last,
            first_sample,
        })
    }

    /// The `.npy` files read: the sample numbers, then the timestamps where there are some.
    pub(super) fn files(&self) -> Vec<PathBuf> {
        let mut files = vec![self.sample_numbers.path().to_path_buf()];
        if let Some(ts) = &self.timestamps {
            files.push(ts.path().to_path_buf());
        }
        files
    }

    /// The first and last sample numbers and timestamps, and the rate they measure (0.6+ with
    /// timestamps), put in `metadata`; `None` without timestamps, or where they do not
    /// increase (pushed to `warnings` when there are two samples or more). Timestamps that are
    /// not finite are an error naming the file.
    pub(super) fn measured_rate(
        &self,
        nominal: SampleRate,
        samples: u64,
        metadata: &mut BTreeMap<String, String>,
        warnings: &mut Vec<String>,
    ) -> DspResult<Option<SampleRate>> {
        let mut put = |k: &str, v: String| {
            metadata.insert(k.to_string(), v);
        };
        if let (Some(f), Some(l)) = (self.first, self.last) {
            put("first_sample_number", f.to_string());
            put("last_sample_number", l.to_string());
        }
        let mut measured = None;
        if let (Some(ts), Some(f), Some(l)) = (&self.timestamps, self.first, self.last) {
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
                    let ppm = (hz / nominal.rate_hz() - 1.0) * 1e6;
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
        Ok(measured)
    }

    /// One pass over the sample numbers: each must be above the one before; jumps of more
    /// than one are gaps, returned as a warning.
    pub(super) fn check_increasing(&self) -> DspResult<Option<String>> {
        let sample_numbers = &self.sample_numbers;
        let mut prev: Option<i64> = None;
        let (mut gaps, mut missing) = (0u64, 0u128);
        for (i, v) in sample_numbers.iter_i64().enumerate() {
            if let Some(p) = prev {
                if v <= p {
                    return Err(file_error(
                        sample_numbers.path(),
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
        Ok((gaps > 0).then(|| {
            format!(
                "{}: {gaps} gaps in the sample numbers ({missing} samples missing); the samples are read as one contiguous run from the first sample number",
                sample_numbers.path().display()
            )
        }))
    }
}
