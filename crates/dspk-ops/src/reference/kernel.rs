//! The common reference's kernels: a set's median or mean at one sample, computed by one unit
//! from global memory (no shared memory, no local arrays: see `dspk_kernels::decode` on
//! lavapipe), and the subtraction.

use cubecl::prelude::*;
use dspk_kernels::{channel_position, sample_position};

/// The operators as the kernels take them (comptime).
pub(super) const MEDIAN: u32 = 0;
pub(super) const MEAN: u32 = 1;

/// The median or mean of the values of channels `members[first..end]` at local sample `p` of
/// rows of `stride` (channel-major).
///
/// The mean sums in member order in `f32` and divides by the count. The median selects the
/// values of ranks `(n − 1) / 2` and `n / 2` (ties hold a run of ranks) by [`median`]'s radix
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
    #[comptime] histogram: bool,
) -> f32 {
    if comptime![operator == MEAN] {
        mean(input, members, first, end, stride, p)
    } else {
        median(input, members, first, end, stride, p, numpy, histogram)
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

/// The sign bit of an `f32`'s bits, and every bit.
const SIGN: u32 = 0x8000_0000;
const ALL: u32 = 0xFFFF_FFFF;

/// The order key of an `f32`: unsigned integers in the order of the values, `-0.0` and `0.0`
/// one key (equal values, equal keys); [`from_key`] reverses it (zero as `0.0`).
#[cube]
fn order_key(x: f32) -> u32 {
    let bits = u32::reinterpret(x);
    let mut key = bits | SIGN;
    if bits > SIGN {
        key = bits ^ ALL;
    }
    key
}

/// The [`order_key`] of member `i`'s value at local sample `p` (rows of `stride`).
#[cube]
fn member_key(input: &[f32], members: &[u32], i: usize, stride: usize, p: usize) -> u32 {
    order_key(input[usize::cast_from(members[i]) * stride + p])
}

/// The value of an [`order_key`].
#[cube]
fn from_key(key: u32) -> f32 {
    let mut bits = key ^ ALL;
    if key >= SIGN {
        bits = key ^ SIGN;
    }
    f32::reinterpret(bits)
}

/// The key `K` of rank `rank` among the members' [`order_key`]s, by a radix selection of
/// sixteen passes over the members, each fixing two more bits of `K` by counting the keys below
/// three thresholds: no memory but registers, each unit's loads coalesced with its
/// neighbours' (the GPU's way). Each pass loads [`AHEAD`] members' keys before it counts them,
/// so that their loads wait together (the counts, whole numbers, do not depend on it).
#[cube]
#[allow(clippy::too_many_arguments)]
fn key_of_rank_by_passes(
    input: &[f32],
    members: &[u32],
    first: usize,
    end: usize,
    stride: usize,
    p: usize,
    rank: u32,
) -> u32 {
    let mut keys = Array::<u32>::new(AHEAD);
    let mut prefix = 0u32;
    let mut shift = 32u32;
    while shift > 0 {
        shift -= 2;
        let step = 1u32 << shift;
        let t1 = prefix + step;
        let t2 = t1 + step;
        let t3 = t2 + step;
        let mut c1 = 0u32;
        let mut c2 = 0u32;
        let mut c3 = 0u32;
        let mut i = first;
        while i + AHEAD <= end {
            #[unroll]
            for j in 0..AHEAD {
                keys[j] = member_key(input, members, i + j, stride, p);
            }
            #[unroll]
            for j in 0..AHEAD {
                let key = keys[j];
                count_below(key, t1, t2, t3, &mut c1, &mut c2, &mut c3);
            }
            i += AHEAD;
        }
        while i < end {
            let key = member_key(input, members, i, stride, p);
            count_below(key, t1, t2, t3, &mut c1, &mut c2, &mut c3);
            i += 1;
        }
        // `count(key < t) <= rank` holds for the largest threshold the rank lies at or above.
        if c3 <= rank {
            prefix = t3;
        } else if c2 <= rank {
            prefix = t2;
        } else if c1 <= rank {
            prefix = t1;
        }
    }
    prefix
}

/// Counts `key` under each of the thresholds `t1 < t2 < t3` it lies below.
#[cube]
#[allow(clippy::too_many_arguments)]
fn count_below(key: u32, t1: u32, t2: u32, t3: u32, c1: &mut u32, c2: &mut u32, c3: &mut u32) {
    if key < t1 {
        *c1 += 1;
    }
    if key < t2 {
        *c2 += 1;
    }
    if key < t3 {
        *c3 += 1;
    }
}

/// Members whose keys a pass of [`key_of_rank_by_passes`] loads before counting them: a set's
/// values lie in rows far apart, in L2 rather than L1 for a window of 384 channels, and one
/// load at a time waits out each one's latency in turn.
const AHEAD: usize = 8;

/// Digits of a key [`key_of_rank_by_histogram`] fixes per pass: 8 bits, four passes.
const DIGITS: usize = 256;

/// [`key_of_rank_by_passes`]'s key by four passes over the members, each counting the keys
/// that agree with `K`'s bits found so far in a histogram of their next 8 bits (a local array
/// of 256 counts) and taking the digit the rank falls in: a quarter of the other's passes over
/// the members, for a device that runs units as a CPU's SIMD lanes (lavapipe, where the stage
/// takes half the time), the counts in its caches; on a GPU the array would live in slow local
/// memory.
#[cube]
#[allow(clippy::too_many_arguments)]
fn key_of_rank_by_histogram(
    input: &[f32],
    members: &[u32],
    first: usize,
    end: usize,
    stride: usize,
    p: usize,
    rank: u32,
) -> u32 {
    let mut counts = Array::<u32>::new(DIGITS);
    let mut prefix = 0u32;
    let mut rank = rank;
    let mut pass = 0u32;
    while pass < 4 {
        let shift = 24 - 8 * pass;
        for d in 0..DIGITS {
            counts[d] = 0;
        }
        for i in first..end {
            let key = member_key(input, members, i, stride, p);
            // `prefix` is 0 in this digit and below, so the bits above it agree exactly when
            // what is left after the shift is the digit alone.
            let high = (key ^ prefix) >> shift;
            if high < 256 {
                let d = usize::cast_from(high);
                counts[d] += 1;
            }
        }
        // The digit whose keys hold the rank, and how many agreeing keys lie below it.
        let mut below = 0u32;
        let mut digit = 0u32;
        let mut found = false;
        for d in 0..DIGITS {
            let c = counts[d];
            if !found {
                if below + c > rank {
                    digit = u32::cast_from(d);
                    found = true;
                } else {
                    below += c;
                }
            }
        }
        prefix |= digit << shift;
        rank -= below;
        pass += 1;
    }
    prefix
}

/// The median of [`statistic`] for a larger set, by a radix selection on the values'
/// [`order_key`]s: the key `K` of rank `(n − 1) / 2` ([`key_of_rank_by_passes`], or
/// [`key_of_rank_by_histogram`] where `histogram`: the same key), then a last pass counts the
/// keys at most `K` and finds the smallest key above it, which holds rank `n / 2` where `K`
/// does not. Every value follows from its key but a zero's sign: a zero takes the sign of the
/// last member equal to it up to the first member where both ranks' values have appeared (the
/// one a scan of the members in order, stopping once both ranks are found, ends on), read in
/// one more pass only then.
#[cube]
#[allow(clippy::too_many_arguments)]
fn median_by_selection(
    input: &[f32],
    members: &[u32],
    first: usize,
    end: usize,
    stride: usize,
    p: usize,
    #[comptime] numpy: bool,
    #[comptime] histogram: bool,
) -> f32 {
    let n = u32::cast_from(end - first);
    let k_lo = (n - 1) / 2;
    let k_hi = n / 2;
    let prefix = if comptime![histogram] {
        key_of_rank_by_histogram(input, members, first, end, stride, p, k_lo)
    } else {
        key_of_rank_by_passes(input, members, first, end, stride, p, k_lo)
    };
    // Rank `n / 2`: `K` again, or the smallest key above it; and where each first appears.
    let mut at_most = 0u32;
    let mut next = 0xFFFF_FFFFu32;
    let mut first_lo = end;
    let mut first_next = end;
    for i in first..end {
        let key = member_key(input, members, i, stride, p);
        if key == prefix && first_lo == end {
            first_lo = i;
        }
        if key <= prefix {
            at_most += 1;
        } else if key < next {
            next = key;
            first_next = i;
        }
    }
    let mut key_hi = prefix;
    let mut first_hi = first_lo;
    if at_most <= k_hi {
        key_hi = next;
        first_hi = first_next;
    }
    let mut lo = from_key(prefix);
    let mut hi = from_key(key_hi);
    if prefix == SIGN || key_hi == SIGN {
        // A zero: the last member equal to it up to where both values have appeared.
        let mut stop = first_lo;
        if first_hi > stop {
            stop = first_hi;
        }
        for i in first..stop + 1 {
            let x = input[usize::cast_from(members[i]) * stride + p];
            let key = order_key(x);
            if key == prefix {
                lo = x;
            }
            if key == key_hi {
                hi = x;
            }
        }
    }
    let mut result = lo;
    if comptime![numpy] {
        let average = (lo + hi) * 0.5;
        if (n & 1) == 0 {
            result = average;
        }
    }
    result
}

/// The median of [`statistic`] for a set of at most [`RANKED`] members, by counting ranks:
/// for each candidate value in member order the members below and equal to it, until the
/// candidates holding ranks `(n − 1) / 2` and `n / 2` are found.
#[cube]
fn median_by_ranks(
    input: &[f32],
    members: &[u32],
    first: usize,
    end: usize,
    stride: usize,
    p: usize,
    #[comptime] numpy: bool,
) -> f32 {
    let n = end - first;
    let k_lo = (n - 1) / 2;
    let k_hi = n / 2;
    let mut lo = 0.0f32;
    let mut hi = 0.0f32;
    let mut found = 0u32;
    let mut i = first;
    while i < end {
        let x = input[usize::cast_from(members[i]) * stride + p];
        let mut below = 0usize;
        let mut equal = 0usize;
        for j in first..end {
            let y = input[usize::cast_from(members[j]) * stride + p];
            if y < x {
                below += 1;
            } else if y == x {
                equal += 1;
            }
        }
        // `x` holds ranks `below .. below + equal`.
        if below <= k_lo && k_lo < below + equal {
            lo = x;
            found |= 1;
        }
        if below <= k_hi && k_hi < below + equal {
            hi = x;
            found |= 2;
        }
        if found == 3 {
            i = end;
        } else {
            i += 1;
        }
    }
    let mut result = lo;
    if comptime![numpy] {
        let average = (lo + hi) * 0.5;
        if (n & 1) == 0 {
            result = average;
        }
    }
    result
}

/// The median of [`statistic`]: [`median_by_ranks`] for small sets (fewer loads than the
/// selection's 17 passes), [`median_by_selection`] for larger ones (its histogram form where
/// `histogram`). All give the same value, a zero's sign included.
#[cube]
#[allow(clippy::too_many_arguments)]
fn median(
    input: &[f32],
    members: &[u32],
    first: usize,
    end: usize,
    stride: usize,
    p: usize,
    #[comptime] numpy: bool,
    #[comptime] histogram: bool,
) -> f32 {
    if end - first <= RANKED {
        median_by_ranks(input, members, first, end, stride, p, numpy)
    } else {
        median_by_selection(input, members, first, end, stride, p, numpy, histogram)
    }
}

/// Largest set whose median is found by counting ranks (about `n² / 2` loads against the
/// selection's `17 n`).
const RANKED: usize = 32;

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
    #[comptime] histogram: bool,
) {
    let k = channel_position(len);
    let s = sample_position(len);
    if k < sets && s < len {
        let a = usize::cast_from(starts[k]);
        let b = usize::cast_from(starts[k + 1]);
        references[k * len + s] = statistic(
            input,
            members,
            a,
            b,
            stride,
            first + s,
            operator,
            numpy,
            histogram,
        );
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
    #[comptime] histogram: bool,
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
            output[e] =
                input[e] - statistic(input, members, a, b, stride, p, operator, numpy, histogram);
        }
    }
}
