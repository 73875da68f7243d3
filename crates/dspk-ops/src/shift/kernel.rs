//! The phase shift's kernel: one unit per output sample, its channel's taps summed in order.

use cubecl::prelude::*;
use dspk_kernels::{channel_position, sample_position};

/// The most taps a side whose sum is unrolled (the default is 32; the spec allows 1024).
const UNROLLED_HALF_TAPS: usize = 64;

/// `output[c][n] = Σ_i taps[c][i] · x_c[n + half_taps − 1 − i]` for `n` in `first..first +
/// count`, `i` from 0 up (a fixed order, so a sample's bits do not depend on the window).
///
/// `x_c` is row `c` of `input` (rows of `stride`) on its valid local range `lo..hi`; the
/// samples before `lo` and from `hi` on are the odd extension about `x[lo]` and `x[hi − 1]`,
/// the mirrored index held inside `lo..hi`. The launch guarantees that an index outside
/// `lo..hi` is only read where `lo` or `hi` is a segment's end. Indices are kept unsigned by
/// working with `a = j + half_taps`.
#[cube(launch)]
#[expect(
    clippy::too_many_arguments,
    reason = "a kernel's arguments are its interface"
)]
pub(super) fn shift_rows(
    input: &[f32],
    output: &mut [f32],
    taps: &[f32],
    channels: usize,
    stride: usize,
    first: usize,
    count: usize,
    lo: usize,
    hi: usize,
    #[comptime] half_taps: usize,
) {
    let c = channel_position(count);
    let p = sample_position(count);
    if c < channels && p < count {
        let n = first + p;
        let row = c * stride;
        let width = 2 * half_taps;
        let tap_row = c * width;
        let mut acc = 0.0f32;
        if n >= lo + half_taps && n + half_taps <= hi {
            // `x[n + half_taps − 1 − i]` is `input[base − i]`, inside `lo..hi`.
            let base = row + n + half_taps - 1;
            #[unroll(half_taps <= UNROLLED_HALF_TAPS)]
            for i in 0..comptime![2 * half_taps] {
                acc += taps[tap_row + i] * input[base - i];
            }
        } else {
            for i in 0..width {
                // `a − half_taps` is the local index `n + half_taps − 1 − i`.
                let a = n + width - 1 - i;
                let v = if a < lo + half_taps {
                    let m = min(2 * lo + half_taps - a, hi - 1);
                    2.0 * input[row + lo] - input[row + m]
                } else if a >= hi + half_taps {
                    let mut m = lo;
                    if 2 * hi + half_taps >= lo + a + 2 {
                        m = 2 * hi + half_taps - 2 - a;
                    }
                    2.0 * input[row + hi - 1] - input[row + m]
                } else {
                    input[row + a - half_taps]
                };
                acc += taps[tap_row + i] * v;
            }
        }
        output[row + n] = acc;
    }
}
