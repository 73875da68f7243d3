//! The detection kernels: threshold-crossing candidates, and their local exclusion, which lists
//! the kept peaks' positions and values.

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

/// One unit per (channel `c`, word `w` of 32 owned samples): each owned sample `first + 32w + b`
/// that is a candidate no other candidate beats within `sweep` samples (inside `lo..hi`) on a
/// channel of `c`'s neighbourhood is appended to the kept list: a slot `k` (each unit takes a
/// range for its word from `count[0]`), its position `c·stride + t` in `found[2k]` and the bits of `input`'s value there
/// in `found[2k + 1]` (slots past `capacity` are counted, not written). `near` holds the
/// neighbourhoods' starts (`channels + 1` of them), then their channels: `c`'s are
/// `near[channels + 1 + near[c]..channels + 1 + near[c + 1]]`, `c` itself included. (Six
/// buffers in all: what a device with WebGPU's default limits binds.) Candidate `j` beats `i` where `|x_j|·thr_i >
/// |x_i|·thr_j` (the larger amplitude in units of its own threshold, as `f32` products), or on
/// equality where `j` has the lower sample, then the lower channel. The list's order depends on
/// the units' timing; its contents do not.
#[cube(launch)]
#[allow(
    clippy::too_many_arguments,
    clippy::needless_range_loop,
    reason = "a kernel indexes its lists"
)]
pub(super) fn exclusive(
    input: &[f32],
    values: &[f32],
    thresholds: &[f32],
    near: &[u32],
    count: &[Atomic<u32>],
    found: &mut [u32],
    capacity: usize,
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
    let mut bits = 0u32;
    let mut c = 0usize;
    let mut w = 0usize;
    if unit < channels * words {
        c = unit / words;
        w = unit % words;
        let a0 = channels + 1 + usize::cast_from(near[c]);
        let b0 = channels + 1 + usize::cast_from(near[c + 1]);
        let tc = thresholds[c];
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
                        let n = usize::cast_from(near[i]);
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
    }
    // Every unit takes its range of slots, outside any branch (a unit past the last takes 0):
    // an atomic taken per peak, inside the branches, lost slots on lavapipe.
    let mut slot = usize::cast_from(count[0].fetch_add(u32::cast_from(bits.count_ones())));
    while bits != 0 {
        let b = usize::cast_from(bits.trailing_zeros());
        bits &= bits - 1;
        if slot < capacity {
            let e = c * stride + first + w * 32 + b;
            found[2 * slot] = u32::cast_from(e);
            found[2 * slot + 1] = u32::reinterpret(input[e]);
        }
        slot += 1;
    }
}
