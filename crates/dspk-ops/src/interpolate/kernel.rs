//! The interpolation kernel: each bad channel's sample as the weighted sum of its good
//! channels' samples, from global memory (no shared memory: see `dspk_kernels::decode` on
//! lavapipe); good channels copied.

use cubecl::prelude::*;
use dspk_kernels::{channel_position, sample_position};

/// One unit per (channel, produced sample): `bad_of[c]` 0 copies the value; `k + 1` writes
/// bad channel `k`'s sum of `weights[i] · input[sources[i]]` over `starts[k]..starts[k + 1]`,
/// in that order, in `f32` (0 where the list is empty).
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub(super) fn interpolate_bad(
    input: &[f32],
    output: &mut [f32],
    starts: &[u32],
    sources: &[u32],
    weights: &[f32],
    bad_of: &[u32],
    channels: usize,
    stride: usize,
    first: usize,
    len: usize,
) {
    let c = channel_position(len);
    let s = sample_position(len);
    if c < channels && s < len {
        let p = first + s;
        let e = c * stride + p;
        let k = bad_of[c];
        if k == 0 {
            output[e] = input[e];
        } else {
            let bad = usize::cast_from(k - 1);
            let a = usize::cast_from(starts[bad]);
            let b = usize::cast_from(starts[bad + 1]);
            let mut sum = 0.0f32;
            for i in a..b {
                sum += weights[i] * input[usize::cast_from(sources[i]) * stride + p];
            }
            output[e] = sum;
        }
    }
}
