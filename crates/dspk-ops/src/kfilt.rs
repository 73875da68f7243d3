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
//! The halo is the gain window's half length (1 499 samples for 3 000). The Hann taps are
//! `(1 + cos(2πj/P)) / (2S)`, so the gain splits into `Σ|x|`, `Σ cos θ·|x|` and `Σ sin θ·|x|`
//! (`θ` the sample's phase modulo `P` from the segment's start): one pass sums them over a
//! fixed grid of 64-sample blocks from the segment's start, and one unit per (channel, sample)
//! takes the blocks wholly inside its reach through `cos(θ_s − θ_t)` and sums the samples
//! before and after them with the taps directly — about 170 terms a sample instead of 2 999,
//! each part in a fixed order in `f32` over the samples inside the segment, so a sample's
//! gain — and the output — depends on the recording only, never on the window. A second pass
//! sums each channel's matrix row in a fixed order and multiplies by the gain. Compilers may
//! fuse the multiply-adds (see `dspk_kernels::decode`): the same bits on
//! one kind of device for any windows, within a few roundings of the `f64` host everywhere.

mod agc;
mod host;
mod kernel;
mod spatial;

use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_kernels::{GridLimits, LaunchGeometry, device_elements, f32_arg, u32_arg};
use dspk_types::{DspError, DspResult, RecordingInfo, SpatialHighpassSpec};

pub use agc::{hann_sum, hann_taps, host_gain};
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
    trig: Handle,
    period: usize,
    half_inv_sum: f32,
    floor: f32,
    offsets: Handle,
    columns: Handle,
    weights: Handle,
    entries: usize,
    scratch: Option<(Handle, Handle, usize)>,
    sums: Option<(Handle, usize)>,
    limits: GridLimits,
}

/// Samples per block of the gain's block sums.
const GAIN_BLOCK: usize = 64;

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
        let points = spec.agc_points();
        let taps = hann_taps(points);
        // The Hann window's period P = points − 1 (≥ 1) and its full sum S: the taps are
        // (1 + cos(2πj/P)) / (2S), the phases' table cos, sin of 2πn/P.
        let period = (points as usize).saturating_sub(1).max(1);
        let full_sum = hann_sum(points);
        let trig = (0..period).flat_map(|n| {
            let angle = 2.0 * std::f64::consts::PI * n as f64 / period as f64;
            [
                (angle.cos() as f32).to_le_bytes(),
                (angle.sin() as f32).to_le_bytes(),
            ]
        });
        Ok(Self {
            client: client.clone(),
            channels: info.channel_count(),
            tap_count: taps.len(),
            taps: upload(client, taps.iter().map(|&w| (w as f32).to_le_bytes())),
            trig: upload(client, trig),
            period,
            half_inv_sum: (0.5 / full_sum) as f32,
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
            sums: None,
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

impl SpatialHighpassStage {
    /// The block sums' scratch buffer, of at least `len` values.
    fn sums(&mut self, len: usize) -> DspResult<Handle> {
        match &self.sums {
            Some((h, n)) if *n >= len => Ok(h.clone()),
            _ => {
                device_elements("spatial high-pass block sums", &[len])?;
                let h = self.client.empty(len.max(1) * 4);
                self.sums = Some((h.clone(), len));
                Ok(h)
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
        // The block grid and the phases start at the segment's first sample.
        let from_segment = i128::from(span.origin) - i128::from(span.segment.start);
        let off_b = from_segment.rem_euclid(GAIN_BLOCK as i128) as usize;
        let off_p = from_segment.rem_euclid(self.period as i128) as usize;
        let blocks = (span.stride + off_b) / GAIN_BLOCK + 1;
        let sums = self.sums(3 * n * blocks)?;
        let units = n * blocks;
        let geometry = LaunchGeometry::elementwise_with(&self.limits, units)?;
        kernel::block_sums::launch(
            &self.client,
            geometry.cube_count(),
            geometry.cube_dim(),
            f32_arg(input, span.len())?,
            f32_arg(&sums, 3 * units)?,
            f32_arg(&self.trig, 2 * self.period)?,
            n,
            span.stride,
            blocks,
            readable.start,
            readable.end,
            off_b,
            off_p,
            self.period,
            GAIN_BLOCK,
        );
        let g = LaunchGeometry::channels_samples_with(&self.limits, n, len)?;
        kernel::agc::launch(
            &self.client,
            g.cube_count(),
            g.cube_dim(),
            f32_arg(input, span.len())?,
            f32_arg(&gain, span.len())?,
            f32_arg(&scaled, span.len())?,
            f32_arg(&self.taps, self.tap_count)?,
            f32_arg(&sums, 3 * units)?,
            f32_arg(&self.trig, 2 * self.period)?,
            n,
            span.stride,
            span.produce.start,
            len,
            readable.start,
            readable.end,
            (self.tap_count - 1) / 2,
            blocks,
            off_b,
            off_p,
            self.period,
            self.half_inv_sum,
            self.floor,
            GAIN_BLOCK,
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
