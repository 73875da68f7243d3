//! The spatial high-pass's kernels: the gain and the gain-normalised samples, then the
//! per-shank mix multiplied by the gain again.

use cubecl::prelude::*;
use dspk_kernels::{channel_position, sample_position};

/// One unit per (channel, produced sample `t`): `g = Σ_i taps[i]·|x[t + i − half]|` over the
/// readable indices `lo..hi` (the segment's and the row's), `i` ascending in `f32`; writes
/// `g` to `gain` and `x / max(floor, g)` to `scaled`.
#[cube(launch)]
pub(super) fn agc(
    input: &[f32],
    gain: &mut [f32],
    scaled: &mut [f32],
    taps: &[f32],
    channels: usize,
    stride: usize,
    start: usize,
    len: usize,
    lo: usize,
    hi: usize,
    half: usize,
    count: usize,
    floor: f32,
) {
    let c = channel_position(len);
    let p = sample_position(len);
    if c < channels && p < len {
        let t = start + p;
        let row = c * stride;
        // Taps i with lo <= t + i − half < hi, kept in unsigned arithmetic.
        let mut i = 0;
        if lo + half > t {
            i = lo + half - t;
        }
        let end = min(count, hi + half - t);
        let mut acc = 0.0f32;
        while i < end {
            acc += taps[i] * f32::abs(input[row + (t + i - half)]);
            i += 1;
        }
        gain[row + t] = acc;
        scaled[row + t] = input[row + t] / f32::max(floor, acc);
    }
}

/// One unit per (channel, produced sample): `gain · Σ_k w[k]·scaled[column[k]]` over the
/// channel's row `offsets[c]..offsets[c + 1]`, in order.
#[cube(launch)]
pub(super) fn mix(
    scaled: &[f32],
    gain: &[f32],
    output: &mut [f32],
    offsets: &[u32],
    columns: &[u32],
    weights: &[f32],
    channels: usize,
    stride: usize,
    start: usize,
    len: usize,
) {
    let c = channel_position(len);
    let p = sample_position(len);
    if c < channels && p < len {
        let t = start + p;
        let mut acc = 0.0f32;
        let mut k = usize::cast_from(offsets[c]);
        let end = usize::cast_from(offsets[c + 1]);
        while k < end {
            acc += weights[k] * scaled[usize::cast_from(columns[k]) * stride + t];
            k += 1;
        }
        output[c * stride + t] = gain[c * stride + t] * acc;
    }
}
