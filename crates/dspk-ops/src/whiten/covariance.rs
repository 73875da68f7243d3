//! The channels' covariance `Σ x·xᵀ` over the fit windows: accumulated on the device in `f32`
//! partials over short chunks, merged on the host in `f64` in window order.
//!
//! It is not mean-centred, as in both anchors: Kilosort4's `get_whitening_matrix` averages
//! `X·Xᵀ/n` of high-passed batches, SpikeInterface's `compute_whitening_matrix` takes
//! `data.T @ data / n` unless `apply_mean=True` (default `False`). Whitening comes after a
//! high-pass, where the mean is ~0.

use std::ops::Range;

use cubecl::client::Client;
use cubecl::prelude::*;
use cubecl::server::Handle;
use dspk_kernels::{
    GridLimits, LaunchGeometry, device_elements, element_position, f32_arg, read_f32,
};
use dspk_types::{DspError, DspResult};
use serde::{Deserialize, Serialize};

use crate::Span;

/// Samples one unit sums in `f32` (one partial); the partials are summed per window on the
/// device, and the windows on the host in `f64`.
pub const COVARIANCE_CHUNK: usize = 256;

/// Partials one launch of the covariance keeps at most (`chunks × channels²` values): 2²⁴,
/// 64 MiB of `f32`. A longer window is taken in groups of chunks, each summed to its own
/// `channels²` result; a constant, so that a window is grouped the same way on every device.
pub const COVARIANCE_PARTIALS: usize = 1 << 24;

/// Chunks one launch takes for `channels` channels (at least one).
fn group_chunks(channels: usize) -> usize {
    (COVARIANCE_PARTIALS / (channels * channels).max(1)).max(1)
}

/// `Σ x·xᵀ` of the channels over some samples, in `f64`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Covariance {
    /// The channels (the matrix is `channels × channels`).
    pub channels: usize,
    /// The samples summed over.
    pub samples: u64,
    /// `Σ x_i·x_j` at `i·channels + j`, row-major, symmetric; not mean-centred.
    pub sums: Vec<f64>,
}

impl Covariance {
    /// No samples of `channels` channels.
    pub fn empty(channels: usize) -> Self {
        Self {
            channels,
            samples: 0,
            sums: vec![0.0; channels * channels],
        }
    }

    /// The covariance of a given matrix as if of `samples` samples (`sums = matrix·samples`):
    /// for a covariance computed elsewhere (the oracles, a saved one).
    ///
    /// # Errors
    /// A matrix not of `channels²` values.
    pub fn from_matrix(channels: usize, matrix: &[f64], samples: u64) -> DspResult<Self> {
        if matrix.len() != channels * channels {
            return Err(DspError::shape(
                "values of a covariance matrix",
                channels * channels,
                matrix.len(),
            ));
        }
        Ok(Self {
            channels,
            samples,
            sums: matrix.iter().map(|v| v * samples as f64).collect(),
        })
    }

    /// The host reference in `f64`: `Σ x·xᵀ` of `data` (`channels` rows of `stride` values)
    /// over the local samples `range`.
    ///
    /// # Errors
    /// `data` shorter than `channels × stride`, a range past the row.
    pub fn from_host(
        data: &[f32],
        channels: usize,
        stride: usize,
        range: Range<usize>,
    ) -> DspResult<Self> {
        if data.len() < channels * stride {
            return Err(DspError::shape(
                "values of a window to take the covariance of",
                channels * stride,
                data.len(),
            ));
        }
        if range.start > range.end || range.end > stride {
            return Err(DspError::config(format!(
                "samples {range:?} of a row of {stride} to take the covariance over"
            )));
        }
        let mut out = Self::empty(channels);
        for i in 0..channels {
            for j in i..channels {
                let (a, b) = (&data[i * stride..], &data[j * stride..]);
                let s: f64 = range
                    .clone()
                    .map(|t| f64::from(a[t]) * f64::from(b[t]))
                    .sum();
                out.sums[i * channels + j] = s;
                out.sums[j * channels + i] = s;
            }
        }
        out.samples = range.len() as u64;
        Ok(out)
    }

    /// Adds `other`'s samples to these.
    ///
    /// # Errors
    /// Another channel count.
    pub fn merge(&mut self, other: &Covariance) -> DspResult<()> {
        if other.channels != self.channels || other.sums.len() != self.sums.len() {
            return Err(DspError::shape(
                "channels of a covariance to merge",
                self.channels,
                other.channels,
            ));
        }
        self.samples += other.samples;
        for (s, o) in self.sums.iter_mut().zip(&other.sums) {
            *s += o;
        }
        Ok(())
    }

    /// The covariance matrix, `Σ x·xᵀ / samples`, row-major.
    ///
    /// # Errors
    /// No samples, sums not of `channels²` values, or a sum that is not finite.
    pub fn matrix(&self) -> DspResult<Vec<f64>> {
        let n = self.channels;
        if self.sums.len() != n * n {
            return Err(DspError::shape(
                "values of a covariance's sums",
                n * n,
                self.sums.len(),
            ));
        }
        if self.samples == 0 {
            return Err(DspError::config(format!(
                "the covariance of {n} channels has no samples to fit a whitening matrix on"
            )));
        }
        if let Some(i) = self.sums.iter().position(|v| !v.is_finite()) {
            return Err(DspError::config(format!(
                "the covariance's sum ({}, {}) is {}, not a finite number",
                i / n,
                i % n,
                self.sums[i]
            )));
        }
        let samples = self.samples as f64;
        Ok(self.sums.iter().map(|s| s / samples).collect())
    }
}

/// First pass: one unit per (chunk, i, j), `i ≤ j`: `Σ x_i·x_j` over the chunk's samples in
/// `f32`, at `chunk·channels² + i·channels + j`. Units with `i > j` write nothing.
#[cube(launch)]
fn covariance_chunks(
    input: &[f32],
    partials: &mut [f32],
    channels: usize,
    stride: usize,
    start: usize,
    len: usize,
    chunks: usize,
    #[comptime] chunk: usize,
) {
    let unit = element_position();
    let pairs = channels * channels;
    if unit < pairs * chunks {
        let k = unit / pairs;
        let pair = unit % pairs;
        let i = pair / channels;
        let j = pair % channels;
        if i <= j {
            let first = k * chunk;
            let end = min(first + chunk, len);
            let a = i * stride + start;
            let b = j * stride + start;
            let mut acc = 0.0f32;
            let mut t = first;
            while t < end {
                acc += input[a + t] * input[b + t];
                t += 1;
            }
            partials[unit] = acc;
        }
    }
}

/// Second pass: one unit per (i, j), `i ≤ j`: the chunks' partials summed in chunk order.
#[cube(launch)]
fn covariance_reduce(partials: &[f32], out: &mut [f32], channels: usize, chunks: usize) {
    let pair = element_position();
    let pairs = channels * channels;
    if pair < pairs {
        let i = pair / channels;
        let j = pair % channels;
        if i <= j {
            let mut acc = 0.0f32;
            let mut k = 0;
            while k < chunks {
                acc += partials[k * pairs + pair];
                k += 1;
            }
            out[pair] = acc;
        }
    }
}

/// Accumulates the covariance of windows on the device: [`accumulate`](Self::accumulate)
/// launches and keeps one `channels²` partial per window on the device; [`finish`](Self::finish)
/// reads them back and sums them in `f64` in the order they were accumulated, so the result
/// depends only on the windows, never on timing.
pub struct CovarianceKernel {
    client: Client,
    channels: usize,
    max_stride: usize,
    scratch: Handle,
    windows: Vec<Handle>,
    samples: u64,
    limits: GridLimits,
}

impl std::fmt::Debug for CovarianceKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CovarianceKernel")
            .field("channels", &self.channels)
            .field("max_stride", &self.max_stride)
            .field("windows", &self.windows.len())
            .field("samples", &self.samples)
            .finish_non_exhaustive()
    }
}

impl CovarianceKernel {
    /// A kernel for windows of `channels` rows of up to `max_stride` values.
    ///
    /// # Errors
    /// No channels or samples, or partials larger than a kernel can index.
    pub fn new(client: &Client, channels: usize, max_stride: usize) -> DspResult<Self> {
        if channels == 0 || max_stride == 0 {
            return Err(DspError::config(format!(
                "a covariance needs at least one channel and one sample, got {channels} \
                 channels × {max_stride} samples"
            )));
        }
        let chunks = max_stride
            .div_ceil(COVARIANCE_CHUNK)
            .min(group_chunks(channels));
        device_elements("covariance partials", &[chunks, channels, channels])?;
        Ok(Self {
            client: client.clone(),
            channels,
            max_stride,
            scratch: client.empty(chunks * channels * channels * 4),
            windows: Vec::new(),
            samples: 0,
            limits: GridLimits::of(client),
        })
    }

    /// Adds `Σ x·xᵀ` over `span.produce` of `input` (launches only).
    ///
    /// # Errors
    /// A span of another channel count, a row longer than the kernel's, an incoherent span, a
    /// buffer shorter than the span.
    pub fn accumulate(&mut self, input: &Handle, span: &Span) -> DspResult<()> {
        span.check()?;
        if span.channels != self.channels {
            return Err(DspError::shape(
                "channels of a window to take the covariance of",
                self.channels,
                span.channels,
            ));
        }
        if span.stride > self.max_stride {
            return Err(DspError::BufferOverrun {
                what: "covariance partials (samples per channel)".into(),
                capacity: self.max_stride,
                needed: span.stride,
            });
        }
        let len = span.produce.len();
        if len == 0 {
            return Ok(());
        }
        let n = self.channels;
        let group = group_chunks(n) * COVARIANCE_CHUNK;
        let mut first = span.produce.start;
        while first < span.produce.end {
            let part = group.min(span.produce.end - first);
            self.accumulate_group(input, span, first, part)?;
            first += part;
        }
        self.samples += len as u64;
        Ok(())
    }

    /// Launches the covariance of samples `first..first + len` of `input`'s rows (at most one
    /// group of chunks), its result kept as the next partial.
    fn accumulate_group(
        &mut self,
        input: &Handle,
        span: &Span,
        first: usize,
        len: usize,
    ) -> DspResult<()> {
        let n = self.channels;
        let chunks = len.div_ceil(COVARIANCE_CHUNK);
        let g = LaunchGeometry::elementwise_with(&self.limits, chunks * n * n)?;
        covariance_chunks::launch(
            &self.client,
            g.cube_count(),
            g.cube_dim(),
            f32_arg(input, span.len())?,
            f32_arg(&self.scratch, chunks * n * n)?,
            n,
            span.stride,
            first,
            len,
            chunks,
            COVARIANCE_CHUNK,
        );
        let out = self.client.empty(n * n * 4);
        let g = LaunchGeometry::elementwise_with(&self.limits, n * n)?;
        covariance_reduce::launch(
            &self.client,
            g.cube_count(),
            g.cube_dim(),
            f32_arg(&self.scratch, chunks * n * n)?,
            f32_arg(&out, n * n)?,
            n,
            chunks,
        );
        self.windows.push(out);
        Ok(())
    }

    /// Reads the windows' partials back and sums them in `f64` in window order.
    ///
    /// # Errors
    /// A failed read.
    pub fn finish(self) -> DspResult<Covariance> {
        let n = self.channels;
        let mut out = Covariance::empty(n);
        for window in &self.windows {
            let part = read_f32(&self.client, window, n * n)?;
            for i in 0..n {
                for j in i..n {
                    out.sums[i * n + j] += f64::from(part[i * n + j]);
                }
            }
        }
        for i in 0..n {
            for j in 0..i {
                out.sums[i * n + j] = out.sums[j * n + i];
            }
        }
        out.samples = self.samples;
        Ok(out)
    }
}
