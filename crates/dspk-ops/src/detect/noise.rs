//! Per-channel noise levels as SpikeInterface's `get_noise_levels` estimates them (the median
//! absolute deviation over 0.6744897501960817 on each of 20 chunks of 500 ms per segment,
//! averaged over the chunks), on chunks placed deterministically instead of at random.

use std::ops::Range;

use dspk_types::{DspError, DspResult, RecordingInfo};

/// Chunks per segment (SpikeInterface's `num_chunks_per_segment`).
pub const NOISE_CHUNKS: u64 = 20;

/// Seconds per chunk (SpikeInterface's `chunk_duration="500ms"`).
pub const NOISE_CHUNK_S: f64 = 0.5;

/// The normal distribution's third quartile: MAD / this is σ for Gaussian noise.
const MAD_TO_SIGMA: f64 = 0.674_489_750_196_081_7;

/// The chunks of `info` the noise is fitted on (recording sample indices, in order): per
/// segment, [`NOISE_CHUNKS`] chunks of [`NOISE_CHUNK_S`] (the whole segment where it is
/// shorter), their starts evenly spread from the segment's start to its end less a chunk
/// (integer division; a start already listed is not listed twice).
pub fn noise_windows(info: &RecordingInfo) -> Vec<Range<u64>> {
    let rate = info.sample_rate.rate_hz();
    let chunk = ((NOISE_CHUNK_S * rate).floor() as u64).max(1);
    let mut out: Vec<Range<u64>> = Vec::new();
    for range in info.segments().ranges() {
        let len = range.end - range.start;
        if len == 0 {
            continue;
        }
        if len <= chunk {
            out.push(range);
            continue;
        }
        let span = len - chunk;
        for k in 0..NOISE_CHUNKS {
            let start = range.start + span * k / (NOISE_CHUNKS - 1);
            if out.last().is_none_or(|r| r.start != start) {
                out.push(start..start + chunk);
            }
        }
    }
    out
}

/// Sums each chunk's per-channel MAD / 0.6745 in `f64`; [`finish`](Self::finish) averages.
#[derive(Debug, Clone)]
pub struct NoiseLevels {
    sums: Vec<f64>,
    chunks: usize,
}

impl NoiseLevels {
    /// For `channels` channels.
    pub fn new(channels: usize) -> Self {
        Self {
            sums: vec![0.0; channels],
            chunks: 0,
        }
    }

    /// Adds one chunk: `values` holds the channels' rows of equal length (channel-major).
    ///
    /// # Errors
    /// Values that are not a whole number of rows, or an empty chunk.
    pub fn add(&mut self, values: &[f32]) -> DspResult<()> {
        let channels = self.sums.len();
        if channels == 0 || values.is_empty() || !values.len().is_multiple_of(channels) {
            return Err(DspError::config(format!(
                "a noise chunk of {} values is not whole rows of {channels} channels",
                values.len()
            )));
        }
        let len = values.len() / channels;
        let mut row = vec![0.0f64; len];
        for (c, sum) in self.sums.iter_mut().enumerate() {
            for (r, v) in row.iter_mut().zip(&values[c * len..(c + 1) * len]) {
                *r = f64::from(*v);
            }
            let med = median(&mut row);
            for r in row.iter_mut() {
                *r = (*r - med).abs();
            }
            *sum += median(&mut row) / MAD_TO_SIGMA;
        }
        self.chunks += 1;
        Ok(())
    }

    /// Each channel's noise level (the mean over the chunks).
    ///
    /// # Errors
    /// No chunk added.
    pub fn finish(self) -> DspResult<Vec<f64>> {
        if self.chunks == 0 {
            return Err(DspError::config(format!(
                "the noise levels of {} channels have no chunk to be fitted on",
                self.sums.len()
            )));
        }
        let n = self.chunks as f64;
        Ok(self.sums.into_iter().map(|s| s / n).collect())
    }
}

/// The median as NumPy takes it (the mean of the two middle values of an even count); `values`
/// is reordered. Not finite values sort last.
pub fn median(values: &mut [f64]) -> f64 {
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    let mid = n / 2;
    let (_, &mut upper, _) = values.select_nth_unstable_by(mid, f64::total_cmp);
    if n % 2 == 1 {
        return upper;
    }
    let lower = values[..mid]
        .iter()
        .copied()
        .max_by(f64::total_cmp)
        .unwrap_or(upper);
    (lower + upper) / 2.0
}
