//! Bad-channel interpolation (SpikeInterface's `interpolate_bad_channels`): each bad channel
//! replaced, at every sample, by a distance-weighted sum of the good channels.
//!
//! Parts: `weights` ([`InterpolationWeights`], computed on the host in `f64` as SpikeInterface
//! does, and [`recommended_sigma_um`], its default σ), `host` ([`host`], the `f64` reference
//! the tests hold the device to), `kernel` (the device pass).
//!
//! # On the device
//!
//! The weights travel as one sparse list per bad channel (the good channels with a non-zero
//! weight, ascending, and their weights rounded to `f32`); one unit per (channel, sample)
//! copies a good channel's value or sums a bad channel's list in that fixed order in `f32`.
//! Compilers may fuse each multiply-add (see `dspk_kernels::decode`): the result is then the
//! same bits on one kind of device for any windows, and within a few roundings of the `f64`
//! host everywhere.

mod host;
mod kernel;
mod weights;

use crate::upload::upload;
use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_kernels::{GridLimits, LaunchGeometry, device_elements, f32_arg, u32_arg};
use dspk_types::{DspError, DspResult, InterpolateSpec, RecordingInfo};

pub use host::host;
pub use weights::{InterpolationWeights, recommended_sigma_um};

use crate::{Halo, Span, Stage};

/// Bad-channel interpolation on one device (pointwise in time: [`Halo::NONE`]).
pub struct InterpolateStage {
    client: Client,
    weights: InterpolationWeights,
    starts: Handle,
    sources: Handle,
    values: Handle,
    bad_of: Handle,
    limits: GridLimits,
}

impl std::fmt::Debug for InterpolateStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InterpolateStage")
            .field("weights", &self.weights)
            .finish_non_exhaustive()
    }
}

impl InterpolateStage {
    /// The interpolation `spec` asks for over the channels of `info` (their geometry in
    /// `info.probe`), on `client`'s device. `spec` is expected checked
    /// (`PipelineSpec::check`).
    ///
    /// # Errors
    /// What [`InterpolationWeights::of`] refuses.
    pub fn new(client: &Client, spec: &InterpolateSpec, info: &RecordingInfo) -> DspResult<Self> {
        let weights = InterpolationWeights::of(spec, info)?;
        let (starts, sources, values, bad_of) = weights.device_lists();
        Ok(Self {
            client: client.clone(),
            starts: upload(client, starts.iter().map(|v| v.to_le_bytes())),
            sources: upload(client, sources.iter().map(|v| v.to_le_bytes())),
            values: upload(client, values.iter().map(|v| v.to_le_bytes())),
            bad_of: upload(client, bad_of.iter().map(|v| v.to_le_bytes())),
            weights,
            limits: GridLimits::of(client),
        })
    }

    /// The weights the stage applies (in `f64`; the device holds them rounded to `f32`).
    pub fn weights(&self) -> &InterpolationWeights {
        &self.weights
    }
}

/// A device buffer of 4-byte words (at least one: an empty list binds a buffer no unit reads).
impl Stage for InterpolateStage {
    fn kind(&self) -> &'static str {
        "interpolate_bad"
    }

    fn halo(&self) -> Halo {
        Halo::NONE
    }

    fn launch(&mut self, input: &Handle, output: &Handle, span: &Span) -> DspResult<()> {
        span.check()?;
        let channels = self.weights.channel_count();
        if span.channels != channels {
            return Err(DspError::shape(
                "channels of a span to interpolate",
                channels,
                span.channels,
            ));
        }
        if span.is_empty() {
            return Ok(());
        }
        device_elements("interpolated window", &[channels, span.stride])?;
        let len = span.produce.len();
        let listed: usize = self.weights.rows().iter().map(Vec::len).sum();
        let g = LaunchGeometry::channels_samples_with(&self.limits, channels, len)?;
        kernel::interpolate_bad::launch(
            &self.client,
            g.cube_count(),
            g.cube_dim(),
            f32_arg(input, span.len())?,
            f32_arg(output, span.len())?,
            u32_arg(&self.starts, self.weights.bad().len() + 1)?,
            u32_arg(&self.sources, listed.max(1))?,
            f32_arg(&self.values, listed.max(1))?,
            u32_arg(&self.bad_of, channels)?,
            channels,
            span.stride,
            span.produce.start,
            len,
        );
        Ok(())
    }
}
