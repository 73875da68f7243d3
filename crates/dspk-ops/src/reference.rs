//! The common reference (SpikeInterface's `common_reference`): at every sample, the median or
//! mean of a set of channels subtracted from each channel the set serves.
//!
//! Parts: `sets` ([`ReferenceSets`]: which channels each channel's reference is taken over,
//! global, per shank or local, with SpikeInterface's rules), `host` ([`host`], the `f64`
//! reference the tests hold the device to), `kernel` (the device's statistic and subtraction).
//!
//! # On the device
//!
//! Global and per-shank references launch twice: one unit per (set, sample) writes the set's
//! reference into a buffer the stage keeps (sized once for the longest span, then reused),
//! then one unit per (channel, sample) subtracts it. The local reference gives each channel a
//! set of its own, so one unit per (channel, sample) computes and subtracts it in one launch.
//! The median is selected from global memory (no shared memory, which lavapipe, the CI device,
//! does not run): for sets of more than 32 channels a selection on the values' bit patterns
//! whose passes over the set count keys below thresholds guessed from the values (their mean
//! and spread, then the rank's place in what is left), ending in a pass that sorts the last
//! few keys in registers: about 4 passes on noise-like sets of 384, 22 at most on any values,
//! then one for the second middle rank (the radix selection it replaced took 16 and that one);
//! for smaller sets (the local reference) by counting ranks, `n²/2` loads on average. Each
//! unit's loads are coalesced with its neighbours' (neighbouring samples of one row); exact,
//! and the same at every sample whatever the window and on every device (one algorithm
//! everywhere). The mean is summed in ascending channel order in `f32` (the devices dspk
//! targets have no fast `f64`); against the `f64` host it is off by at most about
//! `n · ε · max|x|` for a set of `n`, the median by one rounding of the average and one of the
//! subtraction.

mod host;
mod kernel;
mod median;
mod sets;

use crate::upload::upload;
use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_kernels::{GridLimits, LaunchGeometry, device_elements, f32_arg, u32_arg};
use dspk_types::{
    DspError, DspResult, MedianRule, RecordingInfo, ReferenceOperator, ReferenceSpec,
};

pub use host::host;
pub use sets::ReferenceSets;

use crate::{Halo, Span, Stage};

/// The common reference on one device (pointwise in time: [`Halo::NONE`]).
pub struct ReferenceStage {
    client: Client,
    sets: ReferenceSets,
    operator: ReferenceOperator,
    median: MedianRule,
    starts: Handle,
    members: Handle,
    set_of: Handle,
    /// Set references of the two-launch path, and how many values it holds.
    references: Option<(Handle, usize)>,
    limits: GridLimits,
}

impl std::fmt::Debug for ReferenceStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReferenceStage")
            .field("sets", &self.sets)
            .field("operator", &self.operator)
            .field("median", &self.median)
            .finish_non_exhaustive()
    }
}

impl ReferenceStage {
    /// The reference `spec` asks for over the channels of `info` (their geometry in
    /// `info.probe`), on `client`'s device. `spec` is expected checked
    /// (`PipelineSpec::check`).
    ///
    /// # Errors
    /// What [`ReferenceSets::of`] refuses.
    pub fn new(client: &Client, spec: &ReferenceSpec, info: &RecordingInfo) -> DspResult<Self> {
        let sets = ReferenceSets::of(spec, info)?;
        let (starts, members, set_of) = sets.device_lists();
        Ok(Self {
            client: client.clone(),
            operator: spec.operator,
            median: spec.median,
            starts: upload(client, starts.iter().map(|v| v.to_le_bytes())),
            members: upload(client, members.iter().map(|v| v.to_le_bytes())),
            set_of: upload(client, set_of.iter().map(|v| v.to_le_bytes())),
            sets,
            references: None,
            limits: GridLimits::of(client),
        })
    }

    /// The channels each channel's reference is taken over.
    pub fn sets(&self) -> &ReferenceSets {
        &self.sets
    }

    /// The set references' buffer of at least `len` values (grown, never shrunk).
    fn references(&mut self, len: usize) -> Handle {
        match &self.references {
            Some((handle, held)) if *held >= len => handle.clone(),
            _ => {
                let handle = self.client.empty(len * 4);
                self.references = Some((handle.clone(), len));
                handle
            }
        }
    }
}

impl Stage for ReferenceStage {
    fn kind(&self) -> &'static str {
        "common_reference"
    }

    fn halo(&self) -> Halo {
        Halo::NONE
    }

    fn launch(&mut self, input: &Handle, output: &Handle, span: &Span) -> DspResult<()> {
        span.check()?;
        let channels = self.sets.channel_count();
        if span.channels != channels {
            return Err(DspError::shape(
                "channels of a span to reference",
                channels,
                span.channels,
            ));
        }
        if span.is_empty() {
            return Ok(());
        }
        device_elements("referenced window", &[channels, span.stride])?;
        let len = span.produce.len();
        let first = span.produce.start;
        let operator = match self.operator {
            ReferenceOperator::Median => kernel::MEDIAN,
            ReferenceOperator::Mean => kernel::MEAN,
        };
        let numpy = self.median == MedianRule::Numpy;
        let (starts, members, set_of) = (
            u32_arg(&self.starts, self.sets.sets().len() + 1)?,
            u32_arg(
                &self.members,
                self.sets.sets().iter().map(Vec::len).sum::<usize>().max(1),
            )?,
            u32_arg(&self.set_of, channels)?,
        );
        let g = LaunchGeometry::channels_samples_with(&self.limits, channels, len)?;
        if self.sets.one_per_channel() {
            kernel::own_references::launch(
                &self.client,
                g.cube_count(),
                g.cube_dim(),
                f32_arg(input, span.len())?,
                f32_arg(output, span.len())?,
                starts,
                members,
                set_of,
                channels,
                span.stride,
                first,
                len,
                operator,
                numpy,
            );
            return Ok(());
        }
        let sets = self.sets.sets().len();
        let references = self.references(sets * len);
        let per_set = LaunchGeometry::channels_samples_with(&self.limits, sets, len)?;
        kernel::set_references::launch(
            &self.client,
            per_set.cube_count(),
            per_set.cube_dim(),
            f32_arg(input, span.len())?,
            f32_arg(&references, sets * len)?,
            starts,
            members,
            sets,
            span.stride,
            first,
            len,
            operator,
            numpy,
        );
        kernel::subtract_references::launch(
            &self.client,
            g.cube_count(),
            g.cube_dim(),
            f32_arg(input, span.len())?,
            f32_arg(&references, sets * len)?,
            u32_arg(&self.set_of, channels)?,
            f32_arg(output, span.len())?,
            channels,
            span.stride,
            first,
            len,
        );
        Ok(())
    }
}
