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
        // Each channel's level is its own arithmetic, so the channels are shared among threads
        // (contiguous runs, one per core) with the same result for any number of them.
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(channels);
        let per = channels.div_ceil(threads);
        let mut levels = vec![0.0f64; channels];
        std::thread::scope(|scope| {
            for (k, out) in levels.chunks_mut(per).enumerate() {
                let rows = &values[k * per * len..(k * per + out.len()) * len];
                scope.spawn(move || chunk_levels(rows, len, out));
            }
        });
        for (sum, level) in self.sums.iter_mut().zip(levels) {
            *sum += level;
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

/// Each row's (of `len` values in `rows`) MAD / 0.6745, into `out`, a row each.
fn chunk_levels(rows: &[f32], len: usize, out: &mut [f64]) {
    let mut row = vec![0.0f64; len];
    for (level, values) in out.iter_mut().zip(rows.chunks_exact(len)) {
        for (r, v) in row.iter_mut().zip(values) {
            *r = f64::from(*v);
        }
        let med = median(&mut row);
        for r in row.iter_mut() {
            *r = (*r - med).abs();
        }
        *level = median(&mut row) / MAD_TO_SIGMA;
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
