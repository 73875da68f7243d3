//! The decode kernel: stored samples, as they come off the disk, to scaled `f32`
//! channel-major on the device.
//!
//! # Arithmetic
//!
//! One rule, the host's ([`SampleFormat::decode`]): convert the stored value to `f32`, then
//! `x * gain + offset` in `f32` with the product rounded before the add. CubeCL 0.11's
//! compilers (SPIR-V and WGSL alike) fuse every `a * b + c` whose product has no other use
//! into `fma(a, b, c)` (their `InstCombine` pass, whatever the fast-math settings), and
//! drivers may contract a multiply and an add on their own. Measured with
//! [`contraction_probe`](crate::contraction_probe) on 262 144 int16 values with random gains
//! and offsets: on the H200 (NVIDIA Vulkan, `wgpu<spirv>`) the plain expression matched the
//! host's `mul_add` everywhere and differed from the host's unfused result in 25 % of the
//! values (last bit); lavapipe's `Fma` is not fused (all equal to the unfused result). The
//! kernel therefore passes the product through `bits | zero`, where `zero` is a launch
//! argument no compiler can see is 0: at the add the product is an integer result, nothing can
//! fuse, and the device equals the host bit for bit on both (0 differences), with the host
//! keeping its plain, fast `x * gain + offset`. (Subnormal `f32` products are an exception a
//! GPU may flush to 0; µV-scaled samples are nowhere near them.)
//!
//! # No shared memory
//!
//! On lavapipe (Mesa 22.3, LLVM 15, the CI device) every kernel that CubeCL 0.11's SPIR-V
//! compiler emits with shared memory crashes the driver's pipeline compiler (segfault) or
//! poisons the device, so the time-major kernel transposes in registers instead: each unit
//! reads one 32-byte sector of a sample's neighbouring channels and writes them to their rows.
//!
//! # Packing
//!
//! WGSL (and Vulkan without its 8/16-bit storage extensions) has no 8- or 16-bit storage:
//! stored bytes travel as little-endian `u32` words (the host pads the window's bytes with
//! zeros to a whole word) and the kernel unpacks them, so a window crosses the bus once,
//! compact, whatever the channel and sample counts. `float64` needs 64-bit floats in kernels
//! ([`supports_f64`]): lavapipe through `wgpu<spirv>` has them (tested), a WGSL-only wgpu
//! build does not, and there [`Decoder::new`] refuses `float64` clearly.

use cubecl::bytes::Bytes;
use cubecl::ir::{ElemType, FloatKind, UIntKind};
use cubecl::prelude::*;
use cubecl::server::Handle;
use dspk_types::{DspError, DspResult, MemoryOrder, SampleFormat};

use crate::args::{f32_arg, u32_arg};
use crate::geometry::{GridLimits, LaunchGeometry, channel_position, sample_position};
use crate::limits::{check_window_fits, device_elements, stored_window_bytes};
use crate::timing::device_error;

/// Largest piece of one upload: writes through wgpu collapse above ~8 MiB on the H200, so a
/// window goes up in pieces of at most this many bytes.
pub const UPLOAD_PIECE_BYTES: usize = 8 << 20;

/// Stored bytes one unit of the time-major kernel reads: one 32-byte memory sector.
const GROUP_BYTES: usize = 32;

/// The stored type, as the kernel sees it (a compile-time choice).
#[derive(CubeType, Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub(crate) enum Stored {
    I8,
    I16,
    U16,
    I32,
    F32,
    F64,
}

impl Stored {
    fn of(format: SampleFormat) -> Self {
        match format {
            SampleFormat::I8 => Stored::I8,
            SampleFormat::I16 => Stored::I16,
            SampleFormat::U16 => Stored::U16,
            SampleFormat::I32 => Stored::I32,
            SampleFormat::F32 => Stored::F32,
            SampleFormat::F64 => Stored::F64,
        }
    }
}

/// Stored element `e` of the packed words, converted to `f32` (exactly for 8/16-bit integers,
/// rounded to nearest for `int32` and `float64`, as `as f32` on the host).
#[cube]
fn load_stored(input: &[u32], e: usize, #[comptime] stored: Stored) -> f32 {
    match stored {
        Stored::I8 => {
            let word = input[e / 4];
            let byte = (word >> (u32::cast_from(e % 4) * 8)) & 0xff;
            // Sign extension without a signed shift: (b ^ 0x80) - 0x80.
            f32::cast_from(i32::reinterpret(byte ^ 0x80) - 0x80)
        }
        Stored::I16 => {
            let word = input[e / 2];
            let half = (word >> (u32::cast_from(e % 2) * 16)) & 0xffff;
            f32::cast_from(i32::reinterpret(half ^ 0x8000) - 0x8000)
        }
        Stored::U16 => {
            let word = input[e / 2];
            let half = (word >> (u32::cast_from(e % 2) * 16)) & 0xffff;
            f32::cast_from(half)
        }
        Stored::I32 => f32::cast_from(i32::reinterpret(input[e])),
        Stored::F32 => f32::reinterpret(input[e]),
        Stored::F64 => {
            let lo = u64::cast_from(input[2 * e]);
            let hi = u64::cast_from(input[2 * e + 1]);
            f32::cast_from(f64::reinterpret((hi << 32) | lo))
        }
    }
}

/// `x * gain + offset` with the product rounded to `f32` before the add (see the module docs);
/// `guard` false gives the plain expression, which compilers may fuse (for the probe).
#[cube]
fn scale(x: f32, gain: f32, offset: f32, zero: u32, #[comptime] guard: bool) -> f32 {
    if comptime![guard] {
        let product = x * gain;
        let product = f32::reinterpret(u32::reinterpret(product) | zero);
        product + offset
    } else {
        x * gain + offset
    }
}

/// Channel-major stored → channel-major `f32`: one unit per sample
/// ([`LaunchGeometry::channels_samples`]).
#[cube(launch)]
fn decode_channel_major(
    input: &[u32],
    gains: &[f32],
    offsets: &[f32],
    output: &mut [f32],
    channels: usize,
    samples: usize,
    zero: u32,
    #[comptime] stored: Stored,
    #[comptime] guard: bool,
) {
    let c = channel_position(samples);
    let s = sample_position(samples);
    if c < channels && s < samples {
        let e = c * samples + s;
        let x = load_stored(input, e, stored);
        output[e] = scale(x, gains[c], offsets[c], zero, guard);
    }
}

/// Time-major stored → channel-major `f32` without shared memory: one unit per sample and
/// group of `group` neighbouring channels ([`LaunchGeometry::channels_samples`] over channel
/// groups). A unit reads its group's `group × bytes` = 32 contiguous stored bytes (one memory
/// sector, used whole) and writes `group` values, each store coalesced with the neighbouring
/// units' (neighbouring samples of the same channel).
#[cube(launch)]
fn decode_time_major(
    input: &[u32],
    gains: &[f32],
    offsets: &[f32],
    output: &mut [f32],
    channels: usize,
    samples: usize,
    zero: u32,
    #[comptime] stored: Stored,
    #[comptime] guard: bool,
    #[comptime] group: usize,
) {
    let c0 = channel_position(samples) * group;
    let s = sample_position(samples);
    if c0 < channels && s < samples {
        let row = s * channels;
        if comptime![stored == Stored::I16 || stored == Stored::U16] {
            if ((row + c0) & 1) == 0 && c0 + group <= channels {
                // A whole group starting on a word: load each word once, unpack both halves.
                let w0 = (row + c0) / 2;
                #[unroll]
                for k in 0..comptime![group / 2] {
                    let word = input[w0 + k];
                    let c = c0 + 2 * k;
                    let lo = unpack_half(word & 0xffff, stored);
                    let hi = unpack_half(word >> 16, stored);
                    output[c * samples + s] = scale(lo, gains[c], offsets[c], zero, guard);
                    output[(c + 1) * samples + s] =
                        scale(hi, gains[c + 1], offsets[c + 1], zero, guard);
                }
            } else {
                decode_group(
                    input, gains, offsets, output, channels, samples, zero, c0, s, stored, guard,
                    group,
                );
            }
        } else {
            decode_group(
                input, gains, offsets, output, channels, samples, zero, c0, s, stored, guard, group,
            );
        }
    }
}

/// One unit's group of the time-major kernel, element by element (any format, any alignment).
#[cube]
#[allow(clippy::too_many_arguments)]
fn decode_group(
    input: &[u32],
    gains: &[f32],
    offsets: &[f32],
    output: &mut [f32],
    channels: usize,
    samples: usize,
    zero: u32,
    c0: usize,
    s: usize,
    #[comptime] stored: Stored,
    #[comptime] guard: bool,
    #[comptime] group: usize,
) {
    let row = s * channels;
    #[unroll]
    for j in 0..group {
        let c = c0 + j;
        if c < channels {
            let x = load_stored(input, row + c, stored);
            output[c * samples + s] = scale(x, gains[c], offsets[c], zero, guard);
        }
    }
}

/// A 16-bit stored value (in the low half of `half`) as `f32`.
#[cube]
fn unpack_half(half: u32, #[comptime] stored: Stored) -> f32 {
    if comptime![stored == Stored::I16] {
        f32::cast_from(i32::reinterpret(half ^ 0x8000) - 0x8000)
    } else {
        f32::cast_from(half)
    }
}

/// Whether the client's device computes with 64-bit floats (and integers) in kernels.
pub fn supports_f64(client: &Client) -> bool {
    let props = client.properties();
    props.supports_type(ElemType::Float(FloatKind::F64))
        && props.supports_type(ElemType::UInt(UIntKind::U64))
}

/// Refuses a format the client's device cannot decode (`float64` without 64-bit floats, as on
/// WGSL), with a clear [`DspError::UnsupportedFormat`].
pub fn check_format_supported(client: &Client, format: SampleFormat) -> DspResult<()> {
    if format == SampleFormat::F64 && !supports_f64(client) {
        return Err(DspError::UnsupportedFormat(format!(
            "float64 samples cannot be decoded on the '{}' runtime of this device: it has no \
             64-bit floats (WGSL has none); decode them on the host or use a runtime with f64",
            client.name()
        )));
    }
    Ok(())
}

/// Decodes windows of stored samples on the device into a reused `f32` buffer.
///
/// Created once per recording pass with the largest window it will see (e.g.
/// `ChunkSchedule::max_read_samples`); it allocates its device buffers then, and
/// [`decode`](Self::decode) reuses them for every window: upload the window's stored bytes
/// (as `WindowLoader::stream_stored` hands them over, or time-major bytes straight from a
/// file), then one kernel launch writes `channels × samples` scaled `f32`, channel-major.
pub struct Decoder {
    client: Client,
    channels: usize,
    max_samples: usize,
    format: SampleFormat,
    order: MemoryOrder,
    /// The device input buffer, allocated at its first use (a pass that decodes in staging
    /// never uses it).
    stored: std::sync::OnceLock<Handle>,
    stored_bytes: usize,
    decoded: Handle,
    gains: Handle,
    offsets: Handle,
    guard: bool,
    limits: GridLimits,
}

impl std::fmt::Debug for Decoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder")
            .field("runtime", &self.client.name())
            .field("channels", &self.channels)
            .field("max_samples", &self.max_samples)
            .field("format", &self.format)
            .field("order", &self.order)
            .finish_non_exhaustive()
    }
}

impl Decoder {
    /// A decoder for windows of up to `max_samples` samples of `channels` channels stored as
    /// `format` in `order`, scaled per channel by `gains` and `offsets` (one each per channel).
    ///
    /// Refuses, before allocating anything: zero channels or samples, gains or offsets of the
    /// wrong length, `float64` on a device without f64, and a window larger than one device
    /// buffer (the error says how many samples per window fit).
    pub fn new(
        client: &Client,
        channels: usize,
        max_samples: usize,
        format: SampleFormat,
        order: MemoryOrder,
        gains: &[f32],
        offsets: &[f32],
    ) -> DspResult<Self> {
        let mut decoder =
            Self::new_for_staging(client, channels, max_samples, format, order, gains, offsets)?;
        decoder.warm_up()?;
        Ok(decoder)
    }

    /// [`new`](Self::new) without compiling the decode kernel ahead or allocating its input
    /// buffer: for a pass that decodes in staging ([`staged_decode`](Self::staged_decode)),
    /// where neither may ever be used and both would hold up the device's thread at the start
    /// of the pass (they come at the first [`upload`](Self::upload),
    /// [`stored_handle`](Self::stored_handle) or [`decode_uploaded`](Self::decode_uploaded), if
    /// any).
    pub fn new_for_staging(
        client: &Client,
        channels: usize,
        max_samples: usize,
        format: SampleFormat,
        order: MemoryOrder,
        gains: &[f32],
        offsets: &[f32],
    ) -> DspResult<Self> {
        Self::build(
            client,
            channels,
            max_samples,
            format,
            order,
            gains,
            offsets,
            true,
        )
    }

    /// One launch over one sample, which [`new`](Self::new) makes: the kernel is compiled (or
    /// loaded from the kernel cache) on the device's thread while the caller sets up the rest,
    /// instead of when the first window is waiting for it. Its output is overwritten by every
    /// window.
    pub fn warm_up(&mut self) -> DspResult<()> {
        self.decode_uploaded(1).map(drop)
    }

    /// [`new`](Self::new) with or without the contraction guard (the probe compares both).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn build(
        client: &Client,
        channels: usize,
        max_samples: usize,
        format: SampleFormat,
        order: MemoryOrder,
        gains: &[f32],
        offsets: &[f32],
        guard: bool,
    ) -> DspResult<Self> {
        if channels == 0 || max_samples == 0 {
            return Err(DspError::config(format!(
                "a decoder needs at least one channel and one sample per window, got \
                 {channels} channels × {max_samples} samples"
            )));
        }
        if gains.len() != channels {
            return Err(DspError::shape("decoder gains", channels, gains.len()));
        }
        if offsets.len() != channels {
            return Err(DspError::shape("decoder offsets", channels, offsets.len()));
        }
        check_format_supported(client, format)?;
        check_window_fits(client, channels, max_samples, format)?;
        device_elements("decoded window", &[channels, max_samples])?;
        let stored_bytes = stored_window_bytes(channels, max_samples, format)? as usize;
        let decoded_bytes = channels * max_samples * 4;
        let decoder = Decoder {
            client: client.clone(),
            channels,
            max_samples,
            format,
            order,
            stored: std::sync::OnceLock::new(),
            stored_bytes,
            decoded: client.empty(decoded_bytes),
            gains: client.create_from_slice(&f32_bytes(gains)),
            offsets: client.create_from_slice(&f32_bytes(offsets)),
            guard,
            limits: GridLimits::of(client),
        };
        Ok(decoder)
    }

    /// Channels per window.
    pub fn channels(&self) -> usize {
        self.channels
    }

    /// The most samples per window.
    pub fn max_samples(&self) -> usize {
        self.max_samples
    }

    /// The stored format.
    pub fn format(&self) -> SampleFormat {
        self.format
    }

    /// The order of the stored bytes handed to [`decode`](Self::decode).
    pub fn order(&self) -> MemoryOrder {
        self.order
    }

    /// The client the decoder's buffers live on.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The device buffer the stored bytes of a window go into (for an upload path outside
    /// [`upload`](Self::upload); then call [`decode_uploaded`](Self::decode_uploaded)). It holds
    /// `channels × max_samples` stored values, padded to whole 4-byte words, and is allocated at
    /// its first use.
    pub fn stored_handle(&self) -> &Handle {
        self.stored
            .get_or_init(|| self.client.empty(self.stored_bytes))
    }

    /// Replaces the per-channel gains and offsets (one each per channel).
    pub fn set_scaling(&mut self, gains: &[f32], offsets: &[f32]) -> DspResult<()> {
        if gains.len() != self.channels {
            return Err(DspError::shape("decoder gains", self.channels, gains.len()));
        }
        if offsets.len() != self.channels {
            return Err(DspError::shape(
                "decoder offsets",
                self.channels,
                offsets.len(),
            ));
        }
        self.client
            .write(&self.gains, Bytes::from_bytes_vec(f32_bytes(gains)));
        self.client
            .write(&self.offsets, Bytes::from_bytes_vec(f32_bytes(offsets)));
        Ok(())
    }

    /// Uploads one window of `samples` samples (`stored`: `channels × samples ×
    /// format.bytes()` bytes in the decoder's order) and decodes it into the reused output
    /// buffer. The returned view is valid until the next call.
    pub fn decode(&mut self, stored: &[u8], samples: usize) -> DspResult<DecodedWindow<'_>> {
        self.upload(stored, samples)?;
        self.decode_uploaded(samples)
    }

    /// Uploads one window's stored bytes into the reused device buffer without decoding
    /// (see [`decode`](Self::decode)), through `Client::write` in pieces: the simple path.
    /// A device pass streams its windows through dspk-device's `Uploader` instead, into
    /// [`stored_handle`](Self::stored_handle) or a decode in staging.
    pub fn upload(&mut self, stored: &[u8], samples: usize) -> DspResult<()> {
        self.check_samples(samples)?;
        let expected = self.channels * samples * self.format.bytes();
        if stored.len() != expected {
            return Err(DspError::shape(
                format!(
                    "stored window of {samples} samples × {} channels ({}) in bytes",
                    self.channels, self.format
                ),
                expected,
                stored.len(),
            ));
        }
        let padded = expected.next_multiple_of(4);
        // Offsets add to the handle's own (a pooled allocation may carve it out of a larger
        // buffer), so pieces are placed within what the handle uses.
        let total = self.stored_handle().size_in_used();
        let mut offset = 0;
        while offset < padded {
            let len = UPLOAD_PIECE_BYTES.min(padded - offset);
            let mut piece = Vec::with_capacity(len);
            let end = (offset + len).min(expected);
            piece.extend_from_slice(&stored[offset..end]);
            piece.resize(len, 0);
            let target = self
                .stored_handle()
                .clone()
                .offset_start(offset as u64)
                .offset_end(total - (offset + len) as u64);
            self.client.write(&target, Bytes::from_bytes_vec(piece));
            offset += len;
        }
        Ok(())
    }

    /// Decodes the window last uploaded, as `samples` samples per channel.
    pub fn decode_uploaded(&mut self, samples: usize) -> DspResult<DecodedWindow<'_>> {
        self.check_samples(samples)?;
        if samples == 0 {
            return Ok(DecodedWindow::over(
                &self.client,
                &self.decoded,
                self.channels,
                samples,
            ));
        }
        let n = self.channels * samples;
        let words = stored_window_bytes(self.channels, samples, self.format)? as usize / 4;
        let stored = Stored::of(self.format);
        let c = self.channels;
        match self.order {
            MemoryOrder::ChannelMajor => {
                let g = LaunchGeometry::channels_samples_with(&self.limits, c, samples)?;
                decode_channel_major::launch(
                    &self.client,
                    g.cube_count(),
                    g.cube_dim(),
                    u32_arg(self.stored_handle(), words)?,
                    f32_arg(&self.gains, c)?,
                    f32_arg(&self.offsets, c)?,
                    f32_arg(&self.decoded, n)?,
                    c,
                    samples,
                    0u32,
                    stored,
                    self.guard,
                );
            }
            MemoryOrder::TimeMajor => {
                let group = GROUP_BYTES / self.format.bytes();
                let groups = c.div_ceil(group);
                let g = LaunchGeometry::channels_samples_with(&self.limits, groups, samples)?;
                decode_time_major::launch(
                    &self.client,
                    g.cube_count(),
                    g.cube_dim(),
                    u32_arg(self.stored_handle(), words)?,
                    f32_arg(&self.gains, c)?,
                    f32_arg(&self.offsets, c)?,
                    f32_arg(&self.decoded, n)?,
                    c,
                    samples,
                    0u32,
                    stored,
                    self.guard,
                    group,
                );
            }
        }
        Ok(DecodedWindow::over(
            &self.client,
            &self.decoded,
            self.channels,
            samples,
        ))
    }

    fn check_samples(&self, samples: usize) -> DspResult<()> {
        if samples > self.max_samples {
            return Err(DspError::BufferOverrun {
                what: "decoder window (samples per channel)".into(),
                capacity: self.max_samples,
                needed: samples,
            });
        }
        Ok(())
    }
}

/// The WGSL of the decode that reads an int16 window (time-major or channel-major) in place,
/// in the host staging buffer it was filled into (dspk-device's `Destination::Kernel`),
/// instead of from a device input buffer the window was copied to first: the window crosses
/// the bus once, pulled by the kernel, and the copy and the decode no longer take turns on the
/// device's queue. The arithmetic is the CubeCL kernel's (bit for bit the host's). Written in
/// WGSL because a CubeCL kernel can only bind buffers CubeCL allocated.
pub const STAGED_DECODE_WGSL: &str = include_str!("decode_staged.wgsl");

/// The entry point of [`STAGED_DECODE_WGSL`].
pub const STAGED_DECODE_ENTRY: &str = "decode_i16";

/// Device buffers [`STAGED_DECODE_WGSL`] binds after the staging buffer: decoded, gains,
/// offsets.
pub const STAGED_DECODE_BUFFERS: usize = 3;

/// Invocations per workgroup of [`STAGED_DECODE_WGSL`].
const STAGED_DECODE_WORKGROUP: usize = 64;

/// Workgroups one launch of [`STAGED_DECODE_WGSL`] takes at most (WebGPU's minimum limit per
/// dimension); each invocation loops over the rest.
const STAGED_DECODE_MAX_GROUPS: usize = 65_535;

/// One launch of [`STAGED_DECODE_WGSL`] over a window in a staging buffer: the buffers to bind
/// after it (in order), the launch parameters, and the workgroups.
#[derive(Debug, Clone)]
pub struct StagedDecode {
    /// Decoded output, gains, offsets.
    pub buffers: [Handle; STAGED_DECODE_BUFFERS],
    /// Values, channels, samples, the contraction guard's zero, and the window's order (0
    /// time-major, 1 channel-major).
    pub params: [u32; 5],
    /// Workgroups along x.
    pub workgroups: u32,
}

impl Decoder {
    /// Whether this decoder's windows can be decoded where they are staged
    /// ([`STAGED_DECODE_WGSL`]): int16 (time-major or channel-major), with the contraction
    /// guard, and indices that fit `u32`.
    pub fn decodes_in_staging(&self) -> bool {
        self.guard
            && Self::decodes_in_staging_for(
                self.format,
                self.order,
                self.channels,
                self.max_samples,
            )
    }

    /// Whether a decoder of windows of up to `max_samples` samples of `channels` channels
    /// stored as `format` in `order` decodes in staging (see
    /// [`decodes_in_staging`](Self::decodes_in_staging)), before making one.
    pub fn decodes_in_staging_for(
        format: SampleFormat,
        order: MemoryOrder,
        channels: usize,
        max_samples: usize,
    ) -> bool {
        // Both orders have a branch of the kernel.
        let ordered = matches!(order, MemoryOrder::TimeMajor | MemoryOrder::ChannelMajor);
        format == SampleFormat::I16
            && ordered
            && (channels as u64)
                .checked_mul(max_samples as u64)
                .is_some_and(|v| v + 8 <= u64::from(u32::MAX))
    }

    /// The launch that decodes a window of `samples` samples in its staging buffer into this
    /// decoder's output buffer; `None` where [`decodes_in_staging`](Self::decodes_in_staging)
    /// does not hold. Afterwards [`staged_window`](Self::staged_window) is the decoded window.
    pub fn staged_decode(&self, samples: usize) -> DspResult<Option<StagedDecode>> {
        self.check_samples(samples)?;
        if !self.decodes_in_staging() {
            return Ok(None);
        }
        let values = self.channels * samples;
        let groups = values
            .div_ceil(8 * STAGED_DECODE_WORKGROUP)
            .clamp(1, STAGED_DECODE_MAX_GROUPS);
        // `decodes_in_staging` bounds every count by u32::MAX.
        let word = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Ok(Some(StagedDecode {
            buffers: [
                self.decoded.clone(),
                self.gains.clone(),
                self.offsets.clone(),
            ],
            params: [
                word(values),
                word(self.channels),
                word(samples),
                0,
                u32::from(self.order == MemoryOrder::ChannelMajor),
            ],
            workgroups: word(groups),
        }))
    }

    /// The window of `samples` samples that the launch of [`staged_decode`](Self::staged_decode)
    /// decodes (no launch of its own: its values are there once that launch ran).
    pub fn staged_window(&self, samples: usize) -> DspResult<DecodedWindow<'_>> {
        self.check_samples(samples)?;
        Ok(DecodedWindow::over(
            &self.client,
            &self.decoded,
            self.channels,
            samples,
        ))
    }
}

/// A decoded window on the device: `channels × samples` `f32`, channel-major (channel `c`
/// at `c * samples ..`), in the decoder's reused output buffer.
pub struct DecodedWindow<'a> {
    client: &'a Client,
    handle: &'a Handle,
    channels: usize,
    samples: usize,
}

impl std::fmt::Debug for DecodedWindow<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DecodedWindow")
            .field("channels", &self.channels)
            .field("samples", &self.samples)
            .finish()
    }
}

impl<'a> DecodedWindow<'a> {
    /// The window of `channels × samples` values at the start of `handle` (crate-internal:
    /// decoders and the edge padder make windows over their own buffers).
    pub(crate) fn over(
        client: &'a Client,
        handle: &'a Handle,
        channels: usize,
        samples: usize,
    ) -> Self {
        Self {
            client,
            handle,
            channels,
            samples,
        }
    }

    /// Channels.
    pub fn channels(&self) -> usize {
        self.channels
    }

    /// Samples per channel.
    pub fn samples(&self) -> usize {
        self.samples
    }

    /// Values (`channels × samples`).
    pub fn len(&self) -> usize {
        self.channels * self.samples
    }

    /// Whether the window is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The device buffer; its first [`len`](Self::len) `f32` are this window (the buffer is
    /// sized for the decoder's largest window).
    pub fn handle(&self) -> &Handle {
        self.handle
    }

    /// The client the buffer lives on.
    pub fn client(&self) -> &Client {
        self.client
    }

    /// A `&[f32]` kernel argument over this window's values.
    pub fn arg(&self) -> DspResult<BufferArg> {
        f32_arg(self.handle, self.len())
    }

    /// Reads the window back to the host (waits for the device).
    pub fn to_vec(&self) -> DspResult<Vec<f32>> {
        read_f32(self.client, self.handle, self.len())
    }
}

/// The first `len` `f32` of a device buffer, read back to the host.
pub fn read_f32(client: &Client, handle: &Handle, len: usize) -> DspResult<Vec<f32>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    let bytes_len = len as u64 * 4;
    if bytes_len > handle.size_in_used() {
        return Err(DspError::BufferUnderrun {
            what: "device buffer read back (bytes)".into(),
            needed: bytes_len as usize,
            available: handle.size_in_used() as usize,
        });
    }
    let trimmed = handle.clone().offset_end(handle.size_in_used() - bytes_len);
    let bytes = client
        .read_one(trimmed)
        .map_err(|e| device_error("reading a buffer back", e))?;
    Ok(bytes
        .chunks_exact(4)
        .take(len)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// Little-endian bytes of `values`.
pub(crate) fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}
