//! Centring: each channel minus a constant fitted once per recording, its mean over the fit
//! windows (Kilosort4 removes each channel's mean per 2 s batch before its median reference;
//! a constant fitted once gives the same output on a one-batch recording and no seams on a
//! long one).
//!
//! - **The fit** ([`MeanKernel`]): each window's samples summed per channel on the device in
//!   `f32` partials of [`MEAN_CHUNK`] samples, read back and summed in `f64` in window and
//!   chunk order, divided by the samples: a pure function of the windows.
//! - **The stage** ([`CenterStage`]): `y = x − m` with `m` the mean rounded to `f32` once, one
//!   `f32` subtraction per sample (pointwise in time, no halo).
//!
//! [`host_means`] and [`host`] are the references in `f64`.

mod kernel;

use std::ops::Range;

use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_kernels::{GridLimits, LaunchGeometry, device_elements, f32_arg, read_f32};
use dspk_types::{DspError, DspResult};

use crate::stage::{Halo, Span, Stage};
use crate::upload::upload;

/// Samples one unit of the fit sums in `f32`.
pub const MEAN_CHUNK: usize = 256;

/// Each channel's mean over the windows given to [`accumulate`](Self::accumulate), on the
/// device.
pub struct MeanKernel {
    client: Client,
    channels: usize,
    windows: Vec<(Handle, usize)>,
    samples: u64,
    limits: GridLimits,
}

impl std::fmt::Debug for MeanKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MeanKernel")
            .field("channels", &self.channels)
            .field("windows", &self.windows.len())
            .field("samples", &self.samples)
            .finish_non_exhaustive()
    }
}

impl MeanKernel {
    /// A kernel for windows of `channels` rows.
    ///
    /// # Errors
    /// No channels.
    pub fn new(client: &Client, channels: usize) -> DspResult<Self> {
        if channels == 0 {
            return Err(DspError::config("channel means need at least one channel"));
        }
        Ok(Self {
            client: client.clone(),
            channels,
            windows: Vec::new(),
            samples: 0,
            limits: GridLimits::of(client),
        })
    }

    /// Adds the samples `span.produce` of `input` (launches only; one buffer of partials per
    /// window is kept on the device until [`finish`](Self::finish)).
    ///
    /// # Errors
    /// A span of another channel count, an incoherent span, a buffer shorter than the span.
    pub fn accumulate(&mut self, input: &Handle, span: &Span) -> DspResult<()> {
        span.check()?;
        if span.channels != self.channels {
            return Err(DspError::shape(
                "channels of a window to take the means of",
                self.channels,
                span.channels,
            ));
        }
        let len = span.produce.len();
        if len == 0 {
            return Ok(());
        }
        let chunks = len.div_ceil(MEAN_CHUNK);
        device_elements("channel-mean partials", &[self.channels, chunks])?;
        let partials = self.client.empty(self.channels * chunks * 4);
        let g = LaunchGeometry::elementwise_with(&self.limits, self.channels * chunks)?;
        kernel::chunk_sums::launch(
            &self.client,
            g.cube_count(),
            g.cube_dim(),
            f32_arg(input, span.len())?,
            f32_arg(&partials, self.channels * chunks)?,
            self.channels,
            span.stride,
            span.produce.start,
            len,
            chunks,
            MEAN_CHUNK,
        );
        self.windows.push((partials, chunks));
        self.samples += len as u64;
        Ok(())
    }

    /// Reads the partials back and returns each channel's mean, summed in `f64` in window and
    /// chunk order.
    ///
    /// # Errors
    /// No samples accumulated, a failed read, a mean that is not finite.
    pub fn finish(self) -> DspResult<Vec<f64>> {
        if self.samples == 0 {
            return Err(DspError::config(format!(
                "the means of {} channels have no samples to be fitted on",
                self.channels
            )));
        }
        let mut sums = vec![0.0f64; self.channels];
        for (partials, chunks) in &self.windows {
            let part = read_f32(&self.client, partials, self.channels * chunks)?;
            for (c, sum) in sums.iter_mut().enumerate() {
                for v in &part[c * chunks..(c + 1) * chunks] {
                    *sum += f64::from(*v);
                }
            }
        }
        let means: Vec<f64> = sums.iter().map(|s| s / self.samples as f64).collect();
        if let Some(c) = means.iter().position(|m| !m.is_finite()) {
            return Err(DspError::config(format!(
                "channel {c}'s mean is {}, not a finite number",
                means[c]
            )));
        }
        Ok(means)
    }
}

/// The centring stage on one device: each channel's constant, uploaded once as `f32`.
pub struct CenterStage {
    client: Client,
    channels: usize,
    means: Handle,
    limits: GridLimits,
}

impl std::fmt::Debug for CenterStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CenterStage")
            .field("channels", &self.channels)
            .finish_non_exhaustive()
    }
}

impl CenterStage {
    /// The stage subtracting `means[c]` from channel `c`.
    ///
    /// # Errors
    /// No channels, a mean that is not finite or not an `f32`.
    pub fn new(client: &Client, means: &[f64]) -> DspResult<Self> {
        if means.is_empty() {
            return Err(DspError::config("centring needs at least one channel"));
        }
        if let Some((c, m)) = means
            .iter()
            .enumerate()
            .find(|(_, m)| !(m.is_finite() && (**m as f32).is_finite()))
        {
            return Err(DspError::config(format!(
                "channel {c}'s mean {m} is not a finite 32-bit number"
            )));
        }
        Ok(Self {
            client: client.clone(),
            channels: means.len(),
            means: upload(client, means.iter().map(|&m| (m as f32).to_le_bytes())),
            limits: GridLimits::of(client),
        })
    }
}

impl Stage for CenterStage {
    fn kind(&self) -> &'static str {
        "center"
    }

    fn halo(&self) -> Halo {
        Halo::NONE
    }

    fn launch(&mut self, input: &Handle, output: &Handle, span: &Span) -> DspResult<()> {
        span.check()?;
        if span.channels != self.channels {
            return Err(DspError::shape(
                "channels of a centring's span",
                self.channels,
                span.channels,
            ));
        }
        if span.is_empty() {
            return Ok(());
        }
        let count = span.produce.len();
        let g = LaunchGeometry::channels_samples_with(&self.limits, self.channels, count)?;
        kernel::subtract_means::launch(
            &self.client,
            g.cube_count(),
            g.cube_dim(),
            f32_arg(input, span.len())?,
            f32_arg(output, span.len())?,
            f32_arg(&self.means, self.channels)?,
            self.channels,
            span.stride,
            span.produce.start,
            count,
        );
        Ok(())
    }
}

/// The reference of the fit in `f64`: each of `channels` rows' (of `stride` values) mean over
/// the local samples of `ranges` together.
///
/// # Errors
/// `data` shorter than `channels × stride`, a range past the row, no samples.
pub fn host_means(
    data: &[f32],
    channels: usize,
    stride: usize,
    ranges: &[Range<usize>],
) -> DspResult<Vec<f64>> {
    if data.len() < channels * stride {
        return Err(DspError::shape(
            "values of a window to take the means of",
            channels * stride,
            data.len(),
        ));
    }
    if let Some(r) = ranges.iter().find(|r| r.start > r.end || r.end > stride) {
        return Err(DspError::config(format!(
            "samples {r:?} of a row of {stride} to take the means over"
        )));
    }
    let samples: usize = ranges.iter().map(Range::len).sum();
    if samples == 0 {
        return Err(DspError::config("means over no samples"));
    }
    Ok((0..channels)
        .map(|c| {
            let row = &data[c * stride..(c + 1) * stride];
            let sum: f64 = ranges
                .iter()
                .flat_map(|r| row[r.clone()].iter())
                .map(|&v| f64::from(v))
                .sum();
            sum / samples as f64
        })
        .collect())
}

/// The reference of the stage in `f64`: one row minus its mean.
pub fn host(values: &[f32], mean: f64) -> Vec<f64> {
    values.iter().map(|&v| f64::from(v) - mean).collect()
}
