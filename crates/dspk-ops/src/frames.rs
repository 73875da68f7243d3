//! Frames: a chain's output cut to the samples a window owns and laid out time-major in the
//! stored format, on the device, so that only the bytes an output file holds cross the bus
//! (a runtime that reads whole buffers only, wgpu, would otherwise read the halo too, as
//! `f32`, and leave the cut, the encoding and the transpose to the host).
//!
//! - **`int16`**: the rows must hold whole numbers in `[-32768, 32767]` (what the output
//!   scaling writes); each becomes the `i16` it is, exactly, two to a little-endian `u32`.
//! - **`float32`**: the values' bits, unchanged.
//!
//! [`host`] is the reference: the same frames laid out on the host.

mod kernel;

use std::ops::Range;

use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_kernels::{GridLimits, LaunchGeometry, f32_arg, u32_arg};
use dspk_types::{DspError, DspResult, OutputType};

/// Lays out rows of `f32` as time-major frames of the output type, on one device.
pub struct FramePacker {
    client: Client,
    channels: usize,
    output: OutputType,
    limits: GridLimits,
}

impl std::fmt::Debug for FramePacker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FramePacker")
            .field("channels", &self.channels)
            .field("output", &self.output)
            .finish_non_exhaustive()
    }
}

impl FramePacker {
    /// A packer of `channels` rows into frames of `output` values.
    ///
    /// # Errors
    /// No channels.
    pub fn new(client: &Client, channels: usize, output: OutputType) -> DspResult<Self> {
        if channels == 0 {
            return Err(DspError::config("frames need at least one channel"));
        }
        Ok(Self {
            client: client.clone(),
            channels,
            output,
            limits: GridLimits::of(client),
        })
    }

    /// The output type of the frames.
    pub fn output(&self) -> OutputType {
        self.output
    }

    /// Bytes of the frames of `samples` samples (what [`pack`](Self::pack)'s buffer holds
    /// first; the buffer itself is rounded up to whole 4-byte words).
    pub fn frame_bytes(&self, samples: usize) -> usize {
        self.channels * samples * value_bytes(self.output)
    }

    /// Samples `part` of each of the channels' rows of `stride` `f32` at the start of `input`,
    /// as time-major frames in a new buffer of
    /// [`frame_bytes(part.len())`](Self::frame_bytes) rounded up to 4.
    ///
    /// # Errors
    /// A part past the rows' end, an input buffer smaller than the rows, and a launch the
    /// device cannot take.
    pub fn pack(&self, input: &Handle, stride: usize, part: Range<usize>) -> DspResult<Handle> {
        if part.start > part.end || part.end > stride {
            return Err(DspError::config(format!(
                "samples {}..{} are not within rows of {stride}",
                part.start, part.end
            )));
        }
        let rows = f32_arg(input, self.channels * stride)?;
        let count = part.len();
        let bytes = self.frame_bytes(count);
        let words = bytes.div_ceil(4).max(1);
        let output = self.client.empty(words * 4);
        if count == 0 {
            return Ok(output);
        }
        match self.output {
            OutputType::Int16 => {
                let g = LaunchGeometry::elementwise_with(&self.limits, words)?;
                kernel::pack_i16::launch(
                    &self.client,
                    g.cube_count(),
                    g.cube_dim(),
                    rows,
                    u32_arg(&output, words)?,
                    self.channels,
                    stride,
                    part.start,
                    count,
                );
            }
            OutputType::Float32 => {
                let g = LaunchGeometry::elementwise_with(&self.limits, words)?;
                kernel::pack_f32::launch(
                    &self.client,
                    g.cube_count(),
                    g.cube_dim(),
                    rows,
                    f32_arg(&output, words)?,
                    self.channels,
                    stride,
                    part.start,
                    count,
                );
            }
        }
        Ok(output)
    }
}

/// Bytes of one stored value of `output`.
fn value_bytes(output: OutputType) -> usize {
    match output {
        OutputType::Int16 => 2,
        OutputType::Float32 => 4,
    }
}

/// The host reference: samples `part` of each of `channels` rows of `stride` in `rows`, as
/// time-major little-endian frames of `output` (an `int16` value must be a whole number in
/// range; `None` names none of them but refuses any other).
pub fn host(
    rows: &[f32],
    channels: usize,
    stride: usize,
    part: Range<usize>,
    output: OutputType,
) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(channels * part.len() * value_bytes(output));
    for t in part {
        for c in 0..channels {
            let x = rows[c * stride + t];
            match output {
                OutputType::Float32 => out.extend_from_slice(&x.to_le_bytes()),
                OutputType::Int16 => {
                    let whole = x.fract() == 0.0
                        && (f32::from(i16::MIN)..=f32::from(i16::MAX)).contains(&x);
                    if !whole {
                        return None;
                    }
                    out.extend_from_slice(&(x as i16).to_le_bytes());
                }
            }
        }
    }
    Some(out)
}
