//! Edge padding of decoded windows on the device: the halo samples a window's read could not
//! take from the recording (before its first sample, after its last), made up as the window's
//! [`EdgeMode`] says. dspk-types' host padding ([`dspk_types::pad_channel_major`]) is the
//! reference; the values are the same bit for bit (`odd` is `2·edge − mirror` in `f32` on both).

use cubecl::client::Client;
use cubecl::prelude::*;
use cubecl::server::Handle;
use dspk_types::{DspError, DspResult, EdgeMode, SampleFormat};

use crate::args::f32_arg;
use crate::decode::DecodedWindow;
use crate::geometry::{GridLimits, LaunchGeometry, channel_position, sample_position};
use crate::limits::{check_window_fits, device_elements};

/// The modes as the kernel takes them (comptime).
const ZEROS: u32 = 0;
const REFLECT: u32 = 1;
const ODD: u32 = 2;
const NEAREST: u32 = 3;

/// `dst` (rows of `padded` values) = `src` (rows of `samples` values) with `pad_left` values
/// before and `padded − pad_left − samples` after each row, made up by `mode`.
#[cube(launch)]
fn pad_rows(
    src: &[f32],
    dst: &mut [f32],
    channels: usize,
    samples: usize,
    padded: usize,
    pad_left: usize,
    #[comptime] mode: u32,
) {
    let c = channel_position(padded);
    let p = sample_position(padded);
    if c < channels && p < padded {
        let row = c * samples;
        let out = c * padded + p;
        if p >= pad_left && p < pad_left + samples {
            dst[out] = src[row + p - pad_left];
        } else if p < pad_left {
            // `d` samples before the first.
            let d = pad_left - p;
            if comptime![mode == ZEROS] {
                dst[out] = 0.0;
            } else if comptime![mode == REFLECT] {
                dst[out] = src[row + d];
            } else if comptime![mode == ODD] {
                dst[out] = 2.0 * src[row] - src[row + d];
            } else {
                dst[out] = src[row];
            }
        } else {
            // `d` samples after the last.
            let d = p + 1 - pad_left - samples;
            let last = row + samples - 1;
            if comptime![mode == ZEROS] {
                dst[out] = 0.0;
            } else if comptime![mode == REFLECT] {
                dst[out] = src[last - d];
            } else if comptime![mode == ODD] {
                dst[out] = 2.0 * src[last] - src[last - d];
            } else {
                dst[out] = src[last];
            }
        }
    }
}

/// Pads decoded windows on the device into a reused buffer of its own (sized for the longest
/// padded window): what a device pass hands on for a window whose halo reaches past the
/// recording, so a filter sees full-width windows whatever the edge.
pub struct EdgePadder {
    client: Client,
    channels: usize,
    max_samples: usize,
    padded: Handle,
    limits: GridLimits,
}

impl std::fmt::Debug for EdgePadder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EdgePadder")
            .field("channels", &self.channels)
            .field("max_samples", &self.max_samples)
            .finish_non_exhaustive()
    }
}

impl EdgePadder {
    /// A padder for windows of `channels` channels and up to `max_samples` samples once
    /// padded.
    ///
    /// # Errors
    /// No channels or samples, or a padded window larger than one device buffer.
    pub fn new(client: &Client, channels: usize, max_samples: usize) -> DspResult<Self> {
        if channels == 0 || max_samples == 0 {
            return Err(DspError::config(format!(
                "edge padding needs at least one channel and one sample, got {channels} \
                 channels × {max_samples} samples"
            )));
        }
        device_elements("padded window", &[channels, max_samples])?;
        check_window_fits(client, channels, max_samples, SampleFormat::F32)?;
        Ok(Self {
            client: client.clone(),
            channels,
            max_samples,
            padded: client.empty(channels * max_samples * 4),
            limits: GridLimits::of(client),
        })
    }

    /// `window` with `pad_left` samples before and `pad_right` after each channel, made up by
    /// `mode`, in this padder's buffer (valid until the next call).
    ///
    /// # Errors
    /// A window of another channel count, a padded length over this padder's, and pads the
    /// mode cannot make from the window ([`EdgeMode::check_pad`]: `clamp` makes none,
    /// `reflect` and `odd` need more samples than they pad).
    pub fn pad(
        &mut self,
        window: &DecodedWindow<'_>,
        pad_left: usize,
        pad_right: usize,
        mode: EdgeMode,
    ) -> DspResult<DecodedWindow<'_>> {
        if window.channels() != self.channels {
            return Err(DspError::shape(
                "channels of a window to pad",
                self.channels,
                window.channels(),
            ));
        }
        let samples = window.samples();
        mode.check_pad(samples, pad_left, pad_right)?;
        let padded = samples
            .checked_add(pad_left)
            .and_then(|n| n.checked_add(pad_right))
            .ok_or_else(|| DspError::Overflow("a padded window's length".into()))?;
        if padded > self.max_samples {
            return Err(DspError::BufferOverrun {
                what: "edge padding buffer (samples per channel)".into(),
                capacity: self.max_samples,
                needed: padded,
            });
        }
        let code = match mode {
            EdgeMode::Zeros => ZEROS,
            EdgeMode::Reflect => REFLECT,
            EdgeMode::Odd => ODD,
            // `check_pad` refused any pad for clamp; without pads it copies.
            EdgeMode::Nearest | EdgeMode::Clamp => NEAREST,
        };
        if padded > 0 {
            let g = LaunchGeometry::channels_samples_with(&self.limits, self.channels, padded)?;
            pad_rows::launch(
                &self.client,
                g.cube_count(),
                g.cube_dim(),
                f32_arg(window.handle(), window.len())?,
                f32_arg(&self.padded, self.channels * padded)?,
                self.channels,
                samples,
                padded,
                pad_left,
                code,
            );
        }
        Ok(DecodedWindow::over(
            &self.client,
            &self.padded,
            self.channels,
            padded,
        ))
    }
}
