//! Device limits: 32-bit indexing, and the largest buffer one kernel binding can address.

use cubecl::prelude::*;
use dspk_types::{DspError, DspResult, SampleFormat};

/// The most elements a dspk kernel indexes in one buffer or one launch.
///
/// Kernels index with 32-bit integers because WGSL has no 64-bit ones; the limit stays one
/// 65 536-element margin below 2^32 so that a position plus a cube's worth of rounding
/// (`n + CUBE_DIM - 1`) never wraps.
pub const MAX_DEVICE_ELEMENTS: u64 = (1 << 32) - (1 << 16);

/// Bytes per 32-bit word; packed stored samples travel in these.
const WORD_BYTES: u64 = 4;

/// The element count of a buffer of shape `dims`, checked against [`MAX_DEVICE_ELEMENTS`].
///
/// `what` names the buffer in the error (e.g. `"decoded window"`).
pub fn device_elements(what: &str, dims: &[usize]) -> DspResult<u32> {
    let mut n: u64 = 1;
    for &d in dims {
        n = n
            .checked_mul(d as u64)
            .ok_or_else(|| DspError::Overflow(format!("{what} of shape {dims:?}")))?;
    }
    if n > MAX_DEVICE_ELEMENTS {
        return Err(DspError::config(format!(
            "{what} of shape {dims:?} has {n} elements, more than the {MAX_DEVICE_ELEMENTS} a \
             kernel can index with 32 bits"
        )));
    }
    Ok(n as u32)
}

/// The largest buffer, in bytes, that one kernel binding can address on the client's device.
///
/// On wgpu this is the device's `max_storage_buffer_binding_size` (also capped by
/// `max_buffer_size`); other runtimes report their largest single allocation. Seen through
/// `wgpu<spirv>`: 134 217 728 bytes (128 MiB) on lavapipe, 2 147 483 644 bytes (2 GiB − 4) on
/// the H200, where a 2 GiB decoded window ran.
pub fn max_binding_bytes(client: &Client) -> u64 {
    client.properties().memory.max_page_size
}

/// Bytes of the packed stored buffer of a window: `channels × samples × format.bytes()`,
/// rounded up to whole 32-bit words.
pub fn stored_window_bytes(
    channels: usize,
    samples: usize,
    format: SampleFormat,
) -> DspResult<u64> {
    let bytes = (channels as u64)
        .checked_mul(samples as u64)
        .and_then(|n| n.checked_mul(format.bytes() as u64))
        .ok_or_else(|| DspError::Overflow(format!("{channels} channels × {samples} samples")))?;
    Ok(bytes.div_ceil(WORD_BYTES) * WORD_BYTES)
}

/// The most samples per window of `channels` channels in `format` that fit one device buffer
/// for both the stored window and its decoded `f32` values, and 32-bit indexing (0 for 0
/// channels).
pub fn max_window_samples(client: &Client, channels: usize, format: SampleFormat) -> u64 {
    max_window_samples_with(max_binding_bytes(client), channels, format)
}

/// [`max_window_samples`] for a given largest binding.
pub fn max_window_samples_with(binding_bytes: u64, channels: usize, format: SampleFormat) -> u64 {
    if channels == 0 {
        return 0;
    }
    let c = channels as u64;
    // Decoded f32 (4 bytes) or the stored window, whichever is the larger per sample.
    let per_sample = c * (format.bytes() as u64).max(4);
    let by_binding = binding_bytes / per_sample;
    // Word-packed elements: the stored index of an f64 sample is 2 words.
    let words_per_sample = (format.bytes() as u64).div_ceil(WORD_BYTES).max(1);
    let by_index = MAX_DEVICE_ELEMENTS / (c * words_per_sample);
    by_binding.min(by_index)
}

/// Refuses a window of `channels × samples` in `format` that would not fit one device buffer
/// (or 32-bit indexing), before anything is allocated; the error says how many samples per
/// window fit.
pub fn check_window_fits(
    client: &Client,
    channels: usize,
    samples: usize,
    format: SampleFormat,
) -> DspResult<()> {
    check_window_fits_with(max_binding_bytes(client), channels, samples, format)
}

/// [`check_window_fits`] for a given largest binding.
pub fn check_window_fits_with(
    binding_bytes: u64,
    channels: usize,
    samples: usize,
    format: SampleFormat,
) -> DspResult<()> {
    let fit = max_window_samples_with(binding_bytes, channels, format);
    if (samples as u64) <= fit {
        return Ok(());
    }
    let stored = stored_window_bytes(channels, samples, format)?;
    let decoded = (channels as u64)
        .saturating_mul(samples as u64)
        .saturating_mul(4);
    Err(DspError::config(format!(
        "a window of {samples} samples × {channels} channels ({format}) needs {} bytes in one \
         device buffer, more than this device's largest storage binding of {binding_bytes} bytes \
         (or 32-bit indexing): at most {fit} samples per window fit",
        stored.max(decoded)
    )))
}

#[cfg(test)]
#[path = "tests/limits.rs"]
mod tests;
