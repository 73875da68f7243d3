//! The median of a set of channels at one sample, computed by one unit from global memory
//! (no shared memory, no local arrays indexed at run time): exact selections on the values'
//! order keys for larger sets, rank counting for small ones.

use cubecl::prelude::*;

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

/// The key `K` of rank `rank` among the members' [`order_key`]s, by passes over the members
/// that each count the keys below three thresholds (in registers, each unit's loads coalesced
/// with its neighbours': the GPU's way, and on a CPU device faster than a histogram in a local
/// array). `K` is kept in a bracket `[lo, hi]` of keys with `below` keys under `lo` and
/// `inside` keys in it; each pass counts the keys under thresholds `lo < t1 ≤ t2 ≤ t3 ≤ hi` and
/// keeps the part of the bracket the rank falls in. A radix selection would fix two bits of `K`
/// a pass (16 passes); here the thresholds are guessed from the values:
///
/// 1. a first pass sums the values and their squares (in member order); the thresholds of the
///    next are the mean and the mean ± σ / 8, where about a tenth of a noise-like set lies;
/// 2. later passes interpolate the rank's value linearly inside the bracket, ± a margin of
///    about `√inside / 2 + 1` keys' share of it;
/// 3. after [`GUESSES`] guessed passes, the rest split the bracket's keys in quarters, as a
///    radix selection does, so that ties or odd values end within 16 more passes;
/// 4. once [`COLLECTED`] keys or fewer lie in the bracket, one pass keeps them, sorted, in
///    registers, and the rank is read among them.
///
/// Any thresholds inside the bracket shrink it, so the key is the same exact key whatever the
/// values. Counted on the host with the same arithmetic (`bench/median_passes.py`, the stats
/// and the sorting pass included), over 200 sets of 384 each: Gaussian noise, with or without
/// channel offsets or int16 steps, 4.0–4.1 passes on average (at most 11); with 5 % of the
/// channels 300 µV down, 10.6 (at most 12: the mean and σ miss the rank, and the bracket stays
/// open at one end); small integers, each value tied with dozens of others, 21 (the radix
/// selection's 16 do better there). Closing an open bracket 4 σ from its other end took the
/// spiky sets to 6.0 passes but made K1a 3 % slower on the H200's noise, and was not kept.
#[cube]
#[allow(clippy::too_many_arguments)]
fn key_of_rank_by_brackets(
    input: &[f32],
    members: &[u32],
    first: usize,
    end: usize,
    stride: usize,
    p: usize,
    rank: u32,
) -> u32 {
    let n = u32::cast_from(end - first);
    // The first pass: the values' mean and spread.
    let mut sum = 0.0f32;
    let mut squares = 0.0f32;
    let mut values = Array::<f32>::new(AHEAD);
    let mut i = first;
    while i + AHEAD <= end {
        #[unroll]
        for j in 0..AHEAD {
            values[j] = input[usize::cast_from(members[i + j]) * stride + p];
        }
        #[unroll]
        for j in 0..AHEAD {
            sum += values[j];
            squares += values[j] * values[j];
        }
        i += AHEAD;
    }
    while i < end {
        let v = input[usize::cast_from(members[i]) * stride + p];
        sum += v;
        squares += v * v;
        i += 1;
    }
    let count = f32::cast_from(n);
    let mean = sum / count;
    let variance = squares / count - mean * mean;
    // A spread of rounding (below 0) or of infinities (NaN) guesses the mean alone.
    let mut margin = 0.0f32;
    if variance > 0.0 {
        margin = f32::sqrt(variance) * 0.125;
    }
    let mut g1 = mean - margin;
    let mut g2 = mean;
    let mut g3 = mean + margin;

    let mut lo = 0u32;
    let mut hi = 0xFFFF_FFFFu32;
    let mut below = 0u32;
    let mut inside = n;
    let mut passes = 0u32;
    let mut done = false;
    let mut key = 0u32;
    while !done {
        if lo == hi {
            key = lo;
            done = true;
        } else if inside <= COLLECTED_U32 {
            key = collect(input, members, first, end, stride, p, lo, hi, rank - below);
            done = true;
        } else {
            // Thresholds: guessed, then quarters of the bracket's keys; clamped into
            // `(lo, hi]` and ordered, so that every pass shrinks the bracket.
            let mut t1 = order_key(g1);
            let mut t2 = order_key(g2);
            let mut t3 = order_key(g3);
            if passes >= GUESSES {
                let quarter = (hi - lo) / 4 + 1;
                t1 = lo + quarter;
                t2 = t1 + quarter.min(hi - t1);
                t3 = t2 + quarter.min(hi - t2);
            }
            t1 = t1.clamp(lo + 1, hi);
            t2 = t2.clamp(t1, hi);
            t3 = t3.clamp(t2, hi);
            let mut c1 = 0u32;
            let mut c2 = 0u32;
            let mut c3 = 0u32;
            count_keys(
                input, members, first, end, stride, p, t1, t2, t3, &mut c1, &mut c2, &mut c3,
            );
            // `count(key < t) <= rank` holds for the largest threshold the rank lies at or
            // above; the keys below the bracket's new `hi` follow.
            let mut under_hi = below + inside;
            if c3 <= rank {
                lo = t3;
                below = c3;
            } else if c2 <= rank {
                lo = t2;
                below = c2;
                hi = t3 - 1;
                under_hi = c3;
            } else if c1 <= rank {
                lo = t1;
                below = c1;
                hi = t2 - 1;
                under_hi = c2;
            } else {
                hi = t1 - 1;
                under_hi = c1;
            }
            inside = under_hi - below;
            passes += 1;
            // The next guess: the rank's value interpolated between the bracket's ends.
            let v_lo = from_key(lo);
            let v_hi = from_key(hi);
            let width = v_hi - v_lo;
            let share = width / f32::cast_from(inside);
            let at = v_lo + share * (f32::cast_from(rank - below) + 0.5);
            let spread = share * (f32::sqrt(f32::cast_from(inside)) * 0.5 + 1.0);
            g1 = at - spread;
            g2 = at;
            g3 = at + spread;
        }
    }
    key
}

/// The key of `offset` among the keys in `[lo, hi]`, of which there are at most
/// [`COLLECTED`]: one pass inserts each into a sorted list in registers.
#[cube]
#[allow(clippy::too_many_arguments)]
fn collect(
    input: &[f32],
    members: &[u32],
    first: usize,
    end: usize,
    stride: usize,
    p: usize,
    lo: u32,
    hi: u32,
    offset: u32,
) -> u32 {
    let mut sorted = Array::<u32>::new(COLLECTED);
    #[unroll]
    for j in 0..COLLECTED {
        sorted[j] = 0xFFFF_FFFFu32;
    }
    for i in first..end {
        let key = member_key(input, members, i, stride, p);
        if key >= lo && key <= hi {
            let mut carry = key;
            #[unroll]
            for j in 0..COLLECTED {
                let here = sorted[j];
                if carry < here {
                    sorted[j] = carry;
                    carry = here;
                }
            }
        }
    }
    let mut key = 0xFFFF_FFFFu32;
    #[unroll]
    for j in 0..COLLECTED {
        if u32::cast_from(j) == offset {
            key = sorted[j];
        }
    }
    key
}

/// Counts the members' keys under each of the thresholds `t1 ≤ t2 ≤ t3`, loading [`AHEAD`]
/// members' keys before counting them.
#[cube]
#[allow(clippy::too_many_arguments)]
fn count_keys(
    input: &[f32],
    members: &[u32],
    first: usize,
    end: usize,
    stride: usize,
    p: usize,
    t1: u32,
    t2: u32,
    t3: u32,
    c1: &mut u32,
    c2: &mut u32,
    c3: &mut u32,
) {
    let mut keys = Array::<u32>::new(AHEAD);
    let mut i = first;
    while i + AHEAD <= end {
        #[unroll]
        for j in 0..AHEAD {
            keys[j] = member_key(input, members, i + j, stride, p);
        }
        #[unroll]
        for j in 0..AHEAD {
            count_below(keys[j], t1, t2, t3, c1, c2, c3);
        }
        i += AHEAD;
    }
    while i < end {
        let key = member_key(input, members, i, stride, p);
        count_below(key, t1, t2, t3, c1, c2, c3);
        i += 1;
    }
}

/// Guessed passes of [`key_of_rank_by_brackets`] before it splits brackets in quarters.
const GUESSES: u32 = 4;

/// Keys [`key_of_rank_by_brackets`] sorts in registers to end its selection.
const COLLECTED: usize = 8;
const COLLECTED_U32: u32 = 8;

/// Members whose keys a pass of [`key_of_rank_by_brackets`] loads before counting them: a set's
/// values lie in rows far apart, in L2 rather than L1 for a window of 384 channels, and one
/// load at a time waits out each one's latency in turn.
const AHEAD: usize = 8;

/// The median of [`statistic`] for a larger set, by a selection on the values'
/// [`order_key`]s: the key `K` of rank `(n − 1) / 2` ([`key_of_rank_by_brackets`]), then a last
/// pass counts the
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
) -> f32 {
    let n = u32::cast_from(end - first);
    let k_lo = (n - 1) / 2;
    let k_hi = n / 2;
    let prefix = key_of_rank_by_brackets(input, members, first, end, stride, p, k_lo);
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
    middle(lo, hi, (n & 1) == 0, numpy)
}

/// The median from the values of ranks `(n − 1) / 2` (`lo`) and `n / 2` (`hi`): NumPy's
/// average of the two for an `even` count where `numpy`, else `lo`.
#[cube]
fn middle(lo: f32, hi: f32, even: bool, #[comptime] numpy: bool) -> f32 {
    let mut result = lo;
    if comptime![numpy] {
        let average = (lo + hi) * 0.5;
        if even {
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
    middle(lo, hi, (n & 1) == 0, numpy)
}

/// The median of [`statistic`]: [`median_by_ranks`] for small sets, [`median_by_selection`]
/// for larger ones. Both give the same value, a zero's sign included.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(super) fn median(
    input: &[f32],
    members: &[u32],
    first: usize,
    end: usize,
    stride: usize,
    p: usize,
    #[comptime] numpy: bool,
) -> f32 {
    if end - first <= RANKED {
        median_by_ranks(input, members, first, end, stride, p, numpy)
    } else {
        median_by_selection(input, members, first, end, stride, p, numpy)
    }
}

/// Largest set whose median is found by counting ranks (about `n² / 2` loads against the
/// selection's `6 n` to `23 n`; set when the selection took `17 n`, not measured since).
const RANKED: usize = 32;
