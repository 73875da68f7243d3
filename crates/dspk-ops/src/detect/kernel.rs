//! The detection kernels: threshold-crossing candidates, their local exclusion (a bitmask per
//! 32 owned samples of a channel) and the gather of the kept peaks' values.

use cubecl::prelude::*;
use dspk_kernels::{channel_position, sample_position};

/// One unit per (channel, sample of `first..first + len`): `values` gets `|x|` where the
/// sample is a candidate (past its channel's threshold in a chosen direction and a local
/// extremum: strictly beyond the sample before, at least as far as the one after; a neighbour
/// outside `seg_lo..seg_hi` does not count), `-1` elsewhere. A threshold that is not `> 0`
/// makes no candidates.
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub(super) fn candidates(
    input: &[f32],
    values: &mut [f32],
    thresholds: &[f32],
    channels: usize,
    stride: usize,
    first: usize,
    len: usize,
    seg_lo: usize,
    seg_hi: usize,
    neg: u32,
    pos: u32,
) {
    let c = channel_position(len);
    let s = sample_position(len);
    if c < channels && s < len {
        let p = first + s;
        let e = c * stride + p;
        let x = input[e];
        let thr = thresholds[c];
        let mut prev = x;
        let mut has_prev = 0u32;
        if p > seg_lo {
            prev = input[e - 1];
            has_prev = 1u32;
        }
        let mut next = x;
        let mut has_next = 0u32;
        if p + 1 < seg_hi {
            next = input[e + 1];
            has_next = 1u32;
        }
        let mut v = f32::new(-1.0);
        if thr > 0.0 {
            if neg == 1 && x <= -thr {
                let mut ok = 1u32;
                if has_prev == 1 && x >= prev {
                    ok = 0u32;
                }
                if has_next == 1 && x > next {
                    ok = 0u32;
                }
                if ok == 1 {
                    v = -x;
                }
            }
            if pos == 1 && x >= thr {
                let mut ok = 1u32;
                if has_prev == 1 && x <= prev {
                    ok = 0u32;
                }
                if has_next == 1 && x < next {
                    ok = 0u32;
                }
                if ok == 1 {
                    v = x;
                }
            }
        }
        values[e] = v;
    }
}

/// One unit per (channel `c`, word `w` of 32 owned samples): bit `b` of `mask[c·words + w]`
/// set where owned sample `first + 32w + b` is a candidate no other candidate beats within
/// `sweep` samples (inside `lo..hi`) on a channel of `c`'s neighbourhood
/// (`neighbours[starts[c]..starts[c + 1]]`, `c` itself included). Candidate `j` beats `i`
/// where `|x_j|·thr_i > |x_i|·thr_j` (the larger amplitude in units of its own threshold, as
/// `f32` products), or on equality where `j` has the lower sample, then the lower channel.
#[cube(launch)]
#[allow(
    clippy::too_many_arguments,
    clippy::needless_range_loop,
    reason = "a kernel indexes its lists"
)]
pub(super) fn exclusive(
    values: &[f32],
    thresholds: &[f32],
    starts: &[u32],
    neighbours: &[u32],
    mask: &mut [u32],
    channels: usize,
    stride: usize,
    first: usize,
    len: usize,
    words: usize,
    lo: usize,
    hi: usize,
    sweep: usize,
) {
    let unit = dspk_kernels::element_position();
    if unit < channels * words {
        let c = unit / words;
        let w = unit % words;
        let a0 = usize::cast_from(starts[c]);
        let b0 = usize::cast_from(starts[c + 1]);
        let tc = thresholds[c];
        let mut bits = 0u32;
        for b in 0..32u32 {
            let s = w * 32 + usize::cast_from(b);
            if s < len {
                let t = first + s;
                let a = values[c * stride + t];
                if a >= 0.0 {
                    let mut keep = 1u32;
                    let mut ulo = lo;
                    if t >= lo + sweep {
                        ulo = t - sweep;
                    }
                    let uhi = min(t + sweep + 1, hi);
                    for i in a0..b0 {
                        let n = usize::cast_from(neighbours[i]);
                        let tn = thresholds[n];
                        let right = a * tn;
                        for u in ulo..uhi {
                            let other = values[n * stride + u];
                            if other >= 0.0 {
                                let left = other * tc;
                                // Beaten: larger, or equal and earlier (then lower).
                                let earlier = u < t || (u == t && n < c);
                                if left > right || (left == right && earlier) {
                                    keep = 0u32;
                                }
                            }
                        }
                    }
                    if keep == 1 {
                        bits |= 1u32 << b;
                    }
                }
            }
        }
        mask[unit] = bits;
    }
}

/// One unit per listed index: `out[k] = input[indices[k]]`.
#[cube(launch)]
pub(super) fn gather(input: &[f32], indices: &[u32], out: &mut [f32], count: usize) {
    let k = dspk_kernels::element_position();
    if k < count {
        out[k] = input[usize::cast_from(indices[k])];
    }
}
