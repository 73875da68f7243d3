//! Scaling to the output: `float32` times a gain, or `int16` rounded and saturated with every
//! clipped sample counted per channel on the device.
//!
//! - **`float32`**: `y = x · gain` in `f32` (a gain of 1 copies the bits).
//! - **`int16`**: `y = round(x · gain)`, the product in `f32`, rounded half to even (NumPy's
//!   `np.round`, which SpikeInterface's `astype(..., round=True)` and its integer outputs use),
//!   then saturated to `[−32768, 32767]`. NumPy's `astype("int16")` wraps a value out of range
//!   round (32768 becomes −32768); this stage holds it at the nearest end instead and **counts
//!   it**: each saturated sample, and each NaN (written as 0), adds 1 to its channel's count in
//!   [`ScaleStage::clipped_counts`], accumulated over launches until [`ScaleStage::reset`].
//!   The output buffer holds the integers as `f32` values (exact: every `i16` is an `f32`;
//!   a zero may carry either sign, the same `i16`);
//!   the chain converts them to `i16` when it reads back, and reads the counts with them, so a
//!   clipped sample is never silent.
//!
//! [`host`] is the reference (the same arithmetic on the host, and the counts).

mod kernel;

use cubecl::client::Client;
use cubecl::features::AtomicUsage;
use cubecl::ir::Type;
use cubecl::prelude::*;
use cubecl::server::Handle;
use dspk_kernels::{GridLimits, LaunchGeometry, f32_arg, u32_arg};
use dspk_types::{DspError, DspResult, OutputType, ScaleSpec};

use crate::stage::{Halo, Span, Stage};

/// The output scaling on one device, with its per-channel clip counts.
pub struct ScaleStage {
    client: Client,
    channels: usize,
    output: OutputType,
    gain: f32,
    clipped: Handle,
    limits: GridLimits,
}

impl std::fmt::Debug for ScaleStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScaleStage")
            .field("channels", &self.channels)
            .field("output", &self.output)
            .field("gain", &self.gain)
            .finish_non_exhaustive()
    }
}

impl ScaleStage {
    /// The scaling `spec` asks for over `channels` channels, its counts at 0.
    ///
    /// # Errors
    /// No channels, a gain that is not finite or not an `f32` (0 and negative gains are
    /// allowed), and for `int16` a device without atomic 32-bit integer addition (the clip
    /// counts need it).
    pub fn new(client: &Client, spec: &ScaleSpec, channels: usize) -> DspResult<Self> {
        if channels == 0 {
            return Err(DspError::config(
                "output scaling needs at least one channel",
            ));
        }
        let gain = spec.gain as f32;
        if !spec.gain.is_finite() || !gain.is_finite() {
            return Err(DspError::config(format!(
                "the output gain {} is not a finite 32-bit number",
                spec.gain
            )));
        }
        if spec.output == OutputType::Int16 {
            let ty = Type::atomic(u32::elem_type_native());
            if !client
                .properties()
                .atomic_type_usage(ty)
                .contains(AtomicUsage::Add)
            {
                return Err(DspError::config(
                    "int16 output counts clipped samples with atomic u32 additions, which \
                     this device does not offer",
                ));
            }
        }
        Ok(Self {
            client: client.clone(),
            channels,
            output: spec.output,
            gain,
            clipped: client.create_from_slice(&vec![0u8; 4 * channels]),
            limits: GridLimits::of(client),
        })
    }

    /// The output type.
    pub fn output(&self) -> OutputType {
        self.output
    }

    /// The gain as the device applies it (`f32`).
    pub fn gain(&self) -> f32 {
        self.gain
    }

    /// One `u32` per channel (little-endian, channel order): the samples saturated or NaN
    /// since the stage was made or last [`reset`](Self::reset). Always 0 for `float32`.
    pub fn clipped_counts(&self) -> &Handle {
        &self.clipped
    }

    /// Sets the clip counts to 0 (a launch on the same buffer, ordered after the launches
    /// before it).
    ///
    /// # Errors
    /// A launch geometry the device cannot take.
    pub fn reset(&mut self) -> DspResult<()> {
        let g = LaunchGeometry::elementwise_with(&self.limits, self.channels)?;
        kernel::zero_counts::launch(
            &self.client,
            g.cube_count(),
            g.cube_dim(),
            u32_arg(&self.clipped, self.channels)?,
            self.channels,
        );
        Ok(())
    }
}

impl Stage for ScaleStage {
    fn kind(&self) -> &'static str {
        "scale"
    }

    fn clipped(&self) -> Option<&Handle> {
        Some(&self.clipped)
    }

    fn halo(&self) -> Halo {
        Halo::NONE
    }

    fn launch(&mut self, input: &Handle, output: &Handle, span: &Span) -> DspResult<()> {
        span.check()?;
        if span.channels != self.channels {
            return Err(DspError::shape(
                "channels of an output scaling's span",
                self.channels,
                span.channels,
            ));
        }
        if span.is_empty() {
            return Ok(());
        }
        let count = span.produce.len();
        let g = LaunchGeometry::channels_samples_with(&self.limits, self.channels, count)?;
        let (input, output) = (f32_arg(input, span.len())?, f32_arg(output, span.len())?);
        match self.output {
            OutputType::Float32 => kernel::scale_rows::launch(
                &self.client,
                g.cube_count(),
                g.cube_dim(),
                input,
                output,
                self.gain,
                self.channels,
                span.stride,
                span.produce.start,
                count,
            ),
            OutputType::Int16 => kernel::scale_rows_i16::launch(
                &self.client,
                g.cube_count(),
                g.cube_dim(),
                input,
                output,
                u32_arg(&self.clipped, self.channels)?,
                self.gain,
                self.channels,
                span.stride,
                span.produce.start,
                count,
            ),
        }
        Ok(())
    }
}

/// The host reference of one row: each value as the stage writes it, and how many were
/// clipped (saturated or NaN). `gain` is applied in `f32`, as on the device.
pub fn host(values: &[f32], output: OutputType, gain: f32) -> (Vec<f32>, u32) {
    match output {
        OutputType::Float32 => (values.iter().map(|&x| x * gain).collect(), 0),
        OutputType::Int16 => {
            let mut clipped = 0;
            let out = values
                .iter()
                .map(|&x| {
                    let r = (x * gain).round_ties_even();
                    if (f32::from(i16::MIN)..=f32::from(i16::MAX)).contains(&r) {
                        r
                    } else {
                        clipped += 1;
                        if r.is_nan() {
                            0.0
                        } else {
                            r.clamp(f32::from(i16::MIN), f32::from(i16::MAX))
                        }
                    }
                })
                .collect();
            (out, clipped)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_reference_rounds_half_to_even_and_counts_what_it_saturates() {
        let x = [
            0.5,
            1.5,
            2.5,
            -0.5,
            -1.5,
            2.4999,
            32767.4,
            32767.5,
            -32768.5,
            -32769.0,
            f32::NAN,
            f32::INFINITY,
        ];
        let (y, clipped) = host(&x, OutputType::Int16, 1.0);
        assert_eq!(
            y,
            [
                0.0, 2.0, 2.0, -0.0, -2.0, 2.0, 32767.0, 32767.0, -32768.0, -32768.0, 0.0, 32767.0
            ]
        );
        assert_eq!(clipped, 4);
        assert_eq!(host(&[1.25], OutputType::Float32, 2.0), (vec![2.5], 0));
    }
}
