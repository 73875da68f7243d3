//! The output scaling's kernels: `f32` times a gain, and `int16` rounding with clip counts.
#![expect(
    clippy::manual_range_contains,
    clippy::manual_clamp,
    reason = "a #[cube] function has no RangeInclusive, and a NaN must not reach a clamp"
)]

use cubecl::prelude::*;
use dspk_kernels::channel_position;

/// The largest `i16`, as the kernel compares in `f32`.
const I16_MAX: f32 = 32767.0;
/// The smallest `i16`.
const I16_MIN: f32 = -32768.0;

/// `x` rounded to the nearest integer, ties to even, in `f32` (written out rather than left
/// to each backend's `round`, which is half away from zero on some). `x` is only compared,
/// never subtracted from: a product passed in cannot be fused into an FMA here, which would
/// round from the exact product instead of the `f32` one the host rounds.
#[cube]
fn round_half_even(x: f32) -> f32 {
    let f = x.floor();
    // Exact below 2^23; from there on `x` is an integer and never above `f + 0.5`.
    let half = f + 0.5;
    let mut r = f;
    if x > half || (x == half && (f * 0.5).floor() * 2.0 != f) {
        r = f + 1.0;
    }
    r
}

/// `output = input · gain` on `first..first + count` of each row.
#[cube(launch)]
pub(super) fn scale_rows(
    input: &[f32],
    output: &mut [f32],
    gain: f32,
    channels: usize,
    stride: usize,
    first: usize,
    count: usize,
) {
    let c = channel_position(count);
    let p = dspk_kernels::sample_position(count);
    if c < channels && p < count {
        let i = c * stride + first + p;
        output[i] = input[i] * gain;
    }
}

/// `output = round(input · gain)` saturated to `i16`, counting each saturated or NaN sample
/// in `clipped[channel]`.
#[cube(launch)]
#[expect(
    clippy::too_many_arguments,
    reason = "a kernel's arguments are its interface"
)]
pub(super) fn scale_rows_i16(
    input: &[f32],
    output: &mut [f32],
    clipped: &mut [Atomic<u32>],
    gain: f32,
    channels: usize,
    stride: usize,
    first: usize,
    count: usize,
) {
    let c = channel_position(count);
    let p = dspk_kernels::sample_position(count);
    if c < channels && p < count {
        let i = c * stride + first + p;
        let r = round_half_even(input[i] * gain);
        if r >= I16_MIN && r <= I16_MAX {
            output[i] = r;
        } else {
            // Out of range, infinite or NaN (every comparison with NaN is false).
            let mut v = 0.0f32;
            if r > I16_MAX {
                v = I16_MAX;
            }
            if r < I16_MIN {
                v = I16_MIN;
            }
            output[i] = v;
            clipped[c].fetch_add(1u32);
        }
    }
}

/// Sets the first `channels` counts to 0.
#[cube(launch)]
pub(super) fn zero_counts(counts: &mut [u32], channels: usize) {
    let i = dspk_kernels::element_position();
    if i < channels {
        counts[i] = 0u32;
    }
}
