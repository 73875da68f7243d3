//! IBL's "k-filter" (`ibldsp.voltage.kfilt`, the spatial step of `destripe`): at each sample,
//! each channel divided by its automatic gain, the channels of each shank high-passed across
//! channels, and the gain multiplied back.
//!
//! Parts: `agc` ([`hann_taps`], [`host_gain`]: the gain's window and its `f64` reference),
//! `spatial` ([`SpatialOperator`]: shanks, mirrored padding and `sosfiltfilt` across channels
//! in `f64`, and that linear map as a matrix), `host` ([`host`], the `f64` reference of the
//! stage the tests hold the device to), `kernel` (the device passes).
//!
//! # What follows IBL, and where it differs
//!
//! - **The gain** is `ibldsp.voltage.agc`'s: `|x|` convolved with a Hann window of
//!   `2·round(lagc/2) + 1` points normalised to sum 1, centred, zero past the ends
//!   (`fourier.convolve(..., mode="same")`); each sample divided by `max(ε, gain)`. IBL's ε is
//!   `0.003 ×` the standard deviation of the whole array it is given, which depends on where
//!   the array starts and ends; here it is a constant of the spec (`agc_floor_uv`). The two
//!   differ only where the 0.1 s mean of `|x|` falls below ε (a flat stretch): a dead
//!   channel (gain 0) comes out 0 in both.
//! - **The spatial filter** is `kfilt`'s with `ntr_tap = 0` (as `destripe` calls it): per
//!   shank (`collection = h["shank"]`), the channels in array order padded with
//!   `min(ntr_pad, n)` mirrored channels on each side, `scipy.signal.sosfiltfilt` of
//!   `butter(order, cutoff, "highpass")` along the channels (its own odd extension and
//!   `sosfilt_zi` start), the padding cut off. Being linear and the same at every sample, it
//!   is a fixed matrix per shank, computed on the host in `f64` from unit vectors and applied
//!   on the device as sparse rows (each channel's shank), weights rounded to `f32` once.
//!
//! # On the device
//!
//! The halo is the gain window's half length (1 499 samples for 3 000). One unit per
//! (channel, sample) sums the window's taps in a fixed order in `f32` over the samples inside
//! the segment, so a sample's gain — and the output — depends on the recording only, never on
//! the window; a second pass sums each channel's matrix row in a fixed order and multiplies by
//! the gain. Compilers may fuse the multiply-adds (see `dspk_kernels::decode`): the same bits on
//! one kind of device for any windows, within a few roundings of the `f64` host everywhere.

mod agc;
mod host;
mod kernel;
mod spatial;

use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_kernels::{GridLimits, LaunchGeometry, device_elements, f32_arg, u32_arg};
use dspk_types::{DspError, DspResult, RecordingInfo, SpatialHighpassSpec};

pub use agc::{hann_taps, host_gain};
pub use host::host;
pub use spatial::SpatialOperator;

use crate::upload::upload;
use crate::{Halo, Span, Stage};

/// The spatial high-pass with its automatic gain control on one device.
pub struct SpatialHighpassStage {
    client: Client,
    channels: usize,
    taps: Handle,
    tap_count: usize,
    floor: f32,
    offsets: Handle,
    columns: Handle,
    weights: Handle,
    entries: usize,
    scratch: Option<(Handle, Handle, usize)>,
    limits: GridLimits,
}

impl std::fmt::Debug for SpatialHighpassStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpatialHighpassStage")
            .field("channels", &self.channels)
            .field("taps", &self.tap_count)
            .field("entries", &self.entries)
            .finish_non_exhaustive()
    }
}

impl SpatialHighpassStage {
    /// The stage `spec` asks for over the channels of `info` (their shanks from `info.probe`),
    /// on `client`'s device. `spec` is expected checked (`PipelineSpec::check`).
    ///
    /// # Errors
    /// What [`SpatialOperator::new`] refuses; a matrix larger than a kernel can index.
    pub fn new(
        client: &Client,
        spec: &SpatialHighpassSpec,
        info: &RecordingInfo,
    ) -> DspResult<Self> {
        let op = SpatialOperator::new(spec, info)?;
        let rows = op.rows();
        let entries: usize = rows.iter().map(Vec::len).sum();
        device_elements("spatial high-pass matrix", &[entries.max(1)])?;
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        let mut at = 0u32;
        offsets.push(at);
        for row in &rows {
            at += row.len() as u32;
            offsets.push(at);
        }
        let taps = hann_taps(spec.agc_points());
        Ok(Self {
            client: client.clone(),
            channels: info.channel_count(),
            tap_count: taps.len(),
            taps: upload(client, taps.iter().map(|&w| (w as f32).to_le_bytes())),
            floor: spec.agc_floor_uv as f32,
            offsets: upload(client, offsets.into_iter().map(u32::to_le_bytes)),
            columns: upload(client, rows.iter().flatten().map(|&(k, _)| k.to_le_bytes())),
            weights: upload(
                client,
                rows.iter()
                    .flatten()
                    .map(|&(_, w)| (w as f32).to_le_bytes()),
            ),
            entries,
            scratch: None,
            limits: GridLimits::of(client),
        })
    }

    /// Two scratch buffers (the gain and the normalised samples) of at least `len` values.
    fn scratch(&mut self, len: usize) -> DspResult<(Handle, Handle)> {
        match &self.scratch {
            Some((g, s, n)) if *n >= len => Ok((g.clone(), s.clone())),
            _ => {
                device_elements("spatial high-pass scratch", &[len])?;
                let (g, s) = (
                    self.client.empty(len.max(1) * 4),
                    self.client.empty(len.max(1) * 4),
                );
                self.scratch = Some((g.clone(), s.clone(), len));
                Ok((g, s))
            }
        }
    }
}

impl Stage for SpatialHighpassStage {
    fn kind(&self) -> &'static str {
        "spatial_highpass"
    }

    fn halo(&self) -> Halo {
        Halo::both(((self.tap_count - 1) / 2) as u64)
    }

    fn launch(&mut self, input: &Handle, output: &Handle, span: &Span) -> DspResult<()> {
        span.check()?;
        if span.channels != self.channels {
            return Err(DspError::shape(
                "channels of a window to high-pass across channels",
                self.channels,
                span.channels,
            ));
        }
        let len = span.produce.len();
        if len == 0 {
            return Ok(());
        }
        let readable = span.input_range(self.halo());
        let (gain, scaled) = self.scratch(span.len())?;
        let n = self.channels;
        let g = LaunchGeometry::channels_samples_with(&self.limits, n, len)?;
        kernel::agc::launch(
            &self.client,
            g.cube_count(),
            g.cube_dim(),
            f32_arg(input, span.len())?,
            f32_arg(&gain, span.len())?,
            f32_arg(&scaled, span.len())?,
            f32_arg(&self.taps, self.tap_count)?,
            n,
            span.stride,
            span.produce.start,
            len,
            readable.start,
            readable.end,
            (self.tap_count - 1) / 2,
            self.tap_count,
            self.floor,
        );
        kernel::mix::launch(
            &self.client,
            g.cube_count(),
            g.cube_dim(),
            f32_arg(&scaled, span.len())?,
            f32_arg(&gain, span.len())?,
            f32_arg(output, span.len())?,
            u32_arg(&self.offsets, n + 1)?,
            u32_arg(&self.columns, self.entries.max(1))?,
            f32_arg(&self.weights, self.entries.max(1))?,
            n,
            span.stride,
            span.produce.start,
            len,
        );
        Ok(())
    }
}
