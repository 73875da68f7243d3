//! Per-channel statistics of decoded windows: min, max, sum and sum of squares in `f32`
//! partials over modest chunks on the device, merged on the host in `f64`.
//!
//! A channel of 30 000 values of ~±100 µV summed in one `f32` accumulator loses digits; here
//! each cube sums one chunk of [`STATS_CHUNK`] samples of one channel (a few values per unit,
//! then a tree over the cube), and the host adds the chunks' partials in `f64`, so hours of
//! data keep their accuracy.

use std::ops::Range;

use cubecl::prelude::*;
use cubecl::server::Handle;
use dspk_types::{DspError, DspResult};

use crate::args::f32_arg;
use crate::decode::{DecodedWindow, read_f32};
use crate::geometry::{GridLimits, LaunchGeometry, row_position, row_share};
use crate::limits::device_elements;
use crate::special::{negative_infinity, positive_infinity};

/// Samples of one channel that one cube reduces into one partial.
pub const STATS_CHUNK: usize = 1024;

/// Values in one partial: min, max, sum, sum of squares.
const PARTIAL: usize = 4;

/// Statistics of one channel over any number of samples, in `f64`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChannelStats {
    /// Samples counted.
    pub count: u64,
    /// Smallest value (`+∞` when empty).
    pub min: f64,
    /// Largest value (`−∞` when empty).
    pub max: f64,
    /// Sum of the values.
    pub sum: f64,
    /// Sum of the squared values.
    pub sum_sq: f64,
}

impl Default for ChannelStats {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl ChannelStats {
    /// No samples.
    pub const EMPTY: ChannelStats = ChannelStats {
        count: 0,
        min: f64::INFINITY,
        max: f64::NEG_INFINITY,
        sum: 0.0,
        sum_sq: 0.0,
    };

    /// The statistics of `values`, computed on the host in `f64` (the reference the kernel is
    /// tested against).
    pub fn from_values(values: &[f32]) -> Self {
        let mut s = Self::EMPTY;
        for &v in values {
            let v = f64::from(v);
            s.min = s.min.min(v);
            s.max = s.max.max(v);
            s.sum += v;
            s.sum_sq += v * v;
        }
        s.count = values.len() as u64;
        s
    }

    /// Adds `other`'s samples to these.
    pub fn merge(&mut self, other: &ChannelStats) {
        self.count += other.count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
    }

    /// The mean (NaN when empty).
    pub fn mean(&self) -> f64 {
        self.sum / self.count as f64
    }

    /// The root mean square (NaN when empty).
    pub fn rms(&self) -> f64 {
        (self.sum_sq / self.count as f64).sqrt()
    }

    /// The population standard deviation (NaN when empty); rounding can make the variance
    /// slightly negative for a constant channel, which is clamped to 0.
    pub fn std(&self) -> f64 {
        let mean = self.mean();
        (self.sum_sq / self.count as f64 - mean * mean)
            .max(0.0)
            .sqrt()
    }
}

/// One cube per (channel, chunk) row: `rows = channels × chunks`; the cube's units share the
/// chunk per [`row_share`], then reduce through shared memory. Spare cubes write nothing.
#[cube(launch)]
fn channel_stats_kernel(
    data: &[f32],
    partials: &mut [f32],
    samples: usize,
    valid_start: usize,
    valid_len: usize,
    chunks: usize,
    rows: usize,
    #[comptime] chunk: usize,
    #[comptime] units: usize,
    #[comptime] contiguous: bool,
) {
    let row = row_position();
    let channel = row / chunks;
    let first = (row % chunks) * chunk;
    let mut len = 0usize;
    if row < rows {
        len = min(chunk, valid_len - first);
    }
    let base = channel * samples + valid_start + first;

    let mut lo = positive_infinity();
    let mut hi = negative_infinity();
    let mut sum = 0.0f32;
    let mut sum_sq = 0.0f32;
    let share = row_share(len, contiguous);
    let mut i = share.start;
    while i < share.end {
        let v = data[base + i];
        lo = min(lo, v);
        hi = max(hi, v);
        sum += v;
        sum_sq += v * v;
        i += share.step;
    }

    let mut s_lo = Shared::<[f32]>::new_slice(units);
    let mut s_hi = Shared::<[f32]>::new_slice(units);
    let mut s_sum = Shared::<[f32]>::new_slice(units);
    let mut s_sq = Shared::<[f32]>::new_slice(units);
    let unit = UNIT_POS as usize;
    s_lo[unit] = lo;
    s_hi[unit] = hi;
    s_sum[unit] = sum;
    s_sq[unit] = sum_sq;
    sync_cube();

    let mut stride = comptime![units.next_power_of_two() / 2];
    while stride > 0 {
        if unit < stride && unit + stride < units {
            let o = unit + stride;
            s_lo[unit] = min(s_lo[unit], s_lo[o]);
            s_hi[unit] = max(s_hi[unit], s_hi[o]);
            s_sum[unit] += s_sum[o];
            s_sq[unit] += s_sq[o];
        }
        sync_cube();
        stride /= 2;
    }

    if unit == 0 && row < rows {
        let out = row * 4;
        partials[out] = s_lo[0];
        partials[out + 1] = s_hi[0];
        partials[out + 2] = s_sum[0];
        partials[out + 3] = s_sq[0];
    }
}

/// The channel-statistics kernel with its reused device buffer of partials.
pub struct ChannelStatsKernel {
    client: Client,
    channels: usize,
    max_samples: usize,
    partials: Handle,
    limits: GridLimits,
}

impl std::fmt::Debug for ChannelStatsKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChannelStatsKernel")
            .field("channels", &self.channels)
            .field("max_samples", &self.max_samples)
            .finish_non_exhaustive()
    }
}

impl ChannelStatsKernel {
    /// A kernel for windows of up to `max_samples` samples of `channels` channels.
    pub fn new(client: &Client, channels: usize, max_samples: usize) -> DspResult<Self> {
        if channels == 0 || max_samples == 0 {
            return Err(DspError::config(format!(
                "channel statistics need at least one channel and one sample per window, got \
                 {channels} channels × {max_samples} samples"
            )));
        }
        device_elements("statistics window", &[channels, max_samples])?;
        let rows = channels * max_samples.div_ceil(STATS_CHUNK);
        Ok(ChannelStatsKernel {
            client: client.clone(),
            channels,
            max_samples,
            partials: client.empty(rows * PARTIAL * 4),
            limits: GridLimits::of(client),
        })
    }

    /// Adds the statistics of `window`'s samples `valid_local` (its owned part, so halos are
    /// not counted twice) to `totals` (one per channel).
    pub fn accumulate(
        &mut self,
        window: &DecodedWindow<'_>,
        valid_local: Range<usize>,
        totals: &mut [ChannelStats],
    ) -> DspResult<()> {
        self.accumulate_buffer(
            window.handle(),
            window.channels(),
            window.samples(),
            valid_local,
            totals,
        )
    }

    /// The statistics of `window`'s samples `valid_local`, one per channel.
    pub fn window_stats(
        &mut self,
        window: &DecodedWindow<'_>,
        valid_local: Range<usize>,
    ) -> DspResult<Vec<ChannelStats>> {
        let mut totals = vec![ChannelStats::EMPTY; window.channels()];
        self.accumulate(window, valid_local, &mut totals)?;
        Ok(totals)
    }

    /// [`accumulate`](Self::accumulate) over any device buffer holding `channels × samples`
    /// `f32`, channel-major.
    pub fn accumulate_buffer(
        &mut self,
        data: &Handle,
        channels: usize,
        samples: usize,
        valid_local: Range<usize>,
        totals: &mut [ChannelStats],
    ) -> DspResult<()> {
        if channels != self.channels {
            return Err(DspError::shape(
                "statistics window channels",
                self.channels,
                channels,
            ));
        }
        if totals.len() != channels {
            return Err(DspError::shape("statistics totals", channels, totals.len()));
        }
        if samples > self.max_samples {
            return Err(DspError::BufferOverrun {
                what: "statistics window (samples per channel)".into(),
                capacity: self.max_samples,
                needed: samples,
            });
        }
        if valid_local.start > valid_local.end || valid_local.end > samples {
            return Err(DspError::SampleRange {
                start: valid_local.start as u64,
                end: valid_local.end as u64,
                total: samples as u64,
            });
        }
        let valid_len = valid_local.len();
        if valid_len == 0 {
            return Ok(());
        }
        let chunks = valid_len.div_ceil(STATS_CHUNK);
        let rows = channels * chunks;
        let g = LaunchGeometry::per_row_with(&self.limits, rows, STATS_CHUNK)?;
        channel_stats_kernel::launch(
            &self.client,
            g.cube_count(),
            g.cube_dim(),
            f32_arg(data, channels * samples)?,
            f32_arg(&self.partials, rows * PARTIAL)?,
            samples,
            valid_local.start,
            valid_len,
            chunks,
            rows,
            STATS_CHUNK,
            g.units_per_cube() as usize,
            g.contiguous_runs(),
        );
        let partials = read_f32(&self.client, &self.partials, rows * PARTIAL)?;
        for (ch, total) in totals.iter_mut().enumerate() {
            for k in 0..chunks {
                let p = &partials[(ch * chunks + k) * PARTIAL..][..PARTIAL];
                let n = STATS_CHUNK.min(valid_len - k * STATS_CHUNK) as u64;
                total.merge(&ChannelStats {
                    count: n,
                    min: f64::from(p[0]),
                    max: f64::from(p[1]),
                    sum: f64::from(p[2]),
                    sum_sq: f64::from(p[3]),
                });
            }
        }
        Ok(())
    }
}
