//! The common reference's kernels: a set's median (`median`) or mean at one sample, computed
//! by one unit from global memory (no shared memory: see `dspk_kernels::decode` on lavapipe),
//! and the subtraction.

use cubecl::prelude::*;
use dspk_kernels::{channel_position, sample_position};

use super::median::median;

/// The operators as the kernels take them (comptime).
pub(super) const MEDIAN: u32 = 0;
pub(super) const MEAN: u32 = 1;

/// The median or mean of the values of channels `members[first..end]` at local sample `p` of
/// rows of `stride` (channel-major).
///
/// The mean sums in member order in `f32` and divides by the count. The median selects the
/// values of ranks `(n − 1) / 2` and `n / 2` (ties hold a run of ranks) by [`median`]'s
/// selection; `numpy` averages the two for an even count (`(a + b) · 0.5`, as `np.median` of
/// `float32`), otherwise the lower one is taken. Exact: no value is changed before the final
/// average. A NaN among the values gives an unspecified result.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(super) fn statistic(
    input: &[f32],
    members: &[u32],
    first: usize,
    end: usize,
    stride: usize,
    p: usize,
    #[comptime] operator: u32,
    #[comptime] numpy: bool,
) -> f32 {
    if comptime![operator == MEAN] {
        mean(input, members, first, end, stride, p)
    } else {
        median(input, members, first, end, stride, p, numpy)
    }
}

/// The mean of [`statistic`]: summed in member order, divided by the count.
#[cube]
fn mean(input: &[f32], members: &[u32], first: usize, end: usize, stride: usize, p: usize) -> f32 {
    let mut sum = 0.0f32;
    for i in first..end {
        sum += input[usize::cast_from(members[i]) * stride + p];
    }
    sum / f32::cast_from(end - first)
}

/// One unit per (set, produced sample): `references[k · len + s]` = set `k`'s statistic at
/// local sample `first + s`.
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub(super) fn set_references(
    input: &[f32],
    references: &mut [f32],
    starts: &[u32],
    members: &[u32],
    sets: usize,
    stride: usize,
    first: usize,
    len: usize,
    #[comptime] operator: u32,
    #[comptime] numpy: bool,
) {
    let k = channel_position(len);
    let s = sample_position(len);
    if k < sets && s < len {
        let a = usize::cast_from(starts[k]);
        let b = usize::cast_from(starts[k + 1]);
        references[k * len + s] =
            statistic(input, members, a, b, stride, first + s, operator, numpy);
    }
}

/// One unit per (channel, produced sample): the channel's value less its set's reference from
/// [`set_references`] (`set_of` holds the set plus one; 0 copies the value).
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub(super) fn subtract_references(
    input: &[f32],
    references: &[f32],
    set_of: &[u32],
    output: &mut [f32],
    channels: usize,
    stride: usize,
    first: usize,
    len: usize,
) {
    let c = channel_position(len);
    let s = sample_position(len);
    if c < channels && s < len {
        let e = c * stride + first + s;
        let k = set_of[c];
        if k == 0 {
            output[e] = input[e];
        } else {
            output[e] = input[e] - references[usize::cast_from(k - 1) * len + s];
        }
    }
}

/// One unit per (channel, produced sample), each channel with a set of its own (the local
/// reference): the statistic computed where it is subtracted.
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub(super) fn own_references(
    input: &[f32],
    output: &mut [f32],
    starts: &[u32],
    members: &[u32],
    set_of: &[u32],
    channels: usize,
    stride: usize,
    first: usize,
    len: usize,
    #[comptime] operator: u32,
    #[comptime] numpy: bool,
) {
    let c = channel_position(len);
    let s = sample_position(len);
    if c < channels && s < len {
        let p = first + s;
        let e = c * stride + p;
        let k = set_of[c];
        if k == 0 {
            output[e] = input[e];
        } else {
            let set = usize::cast_from(k - 1);
            let a = usize::cast_from(starts[set]);
            let b = usize::cast_from(starts[set + 1]);
            output[e] = input[e] - statistic(input, members, a, b, stride, p, operator, numpy);
        }
    }
}
