//! The centring stage's kernels: per-channel partial sums (the fit) and `x − mean` (the stage).

use cubecl::prelude::*;
use dspk_kernels::channel_position;

/// One unit per (channel, chunk): `Σ x` over the chunk's samples in `f32`, in sample order, at
/// `channel·chunks + chunk`.
#[cube(launch)]
pub(super) fn chunk_sums(
    input: &[f32],
    partials: &mut [f32],
    channels: usize,
    stride: usize,
    start: usize,
    len: usize,
    chunks: usize,
    #[comptime] chunk: usize,
) {
    let unit = dspk_kernels::element_position();
    if unit < channels * chunks {
        let c = unit / chunks;
        let k = unit % chunks;
        let first = k * chunk;
        let end = min(first + chunk, len);
        let row = c * stride + start;
        let mut acc = 0.0f32;
        let mut t = first;
        while t < end {
            acc += input[row + t];
            t += 1;
        }
        partials[unit] = acc;
    }
}

/// `output = input − means[channel]` on `first..first + count` of each row.
#[cube(launch)]
pub(super) fn subtract_means(
    input: &[f32],
    output: &mut [f32],
    means: &[f32],
    channels: usize,
    stride: usize,
    first: usize,
    count: usize,
) {
    let c = channel_position(count);
    let p = dspk_kernels::sample_position(count);
    if c < channels && p < count {
        let i = c * stride + first + p;
        output[i] = input[i] - means[c];
    }
}
