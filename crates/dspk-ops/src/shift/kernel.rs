//! The phase shift's kernel: one unit per run of output samples, each sample's taps summed in
//! order.

use cubecl::prelude::*;
use dspk_kernels::{channel_position, sample_position};

/// The most taps a side whose sum is unrolled (the default is 32; the spec allows 1024).
const UNROLLED_HALF_TAPS: usize = 64;

/// One output sample `n` by the general rule: the odd extension tested at every tap, or the
/// unrolled inner sum where all its taps lie inside `lo..hi`.
#[cube]
#[allow(clippy::too_many_arguments)]
fn one_sample(
    input: &[f32],
    taps: &[f32],
    row: usize,
    tap_row: usize,
    n: usize,
    lo: usize,
    hi: usize,
    #[comptime] half_taps: usize,
) -> f32 {
    let width = 2 * half_taps;
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
    acc
}

/// `output[c][n] = Σ_i taps[c][i] · x_c[n + half_taps − 1 − i]` for `n` in `first..first +
/// count`, `i` from 0 up (a fixed order, so a sample's bits do not depend on the window).
///
/// `x_c` is row `c` of `input` (rows of `stride`) on its valid local range `lo..hi`; the
/// samples before `lo` and from `hi` on are the odd extension about `x[lo]` and `x[hi − 1]`,
/// the mirrored index held inside `lo..hi`. The launch guarantees that an index outside
/// `lo..hi` is only read where `lo` or `hi` is a segment's end. Indices are kept unsigned by
/// working with `a = j + half_taps`.
///
/// One unit per (channel, run of `per_unit` samples; `runs` of them cover `count`). A sample
/// whose taps all fall inside `lo..hi` (all but `half_taps` at each segment end, the same in
/// every window) sums them in an unrolled loop with no test of the index. A whole run of such
/// samples keeps the `per_unit` inputs its sums need at one tap in registers, shifting one new
/// input in per tap: `per_unit + 2·half_taps − 1` loads for its `per_unit · 2·half_taps`
/// products (a CPU device's SIMD lanes gather each load). Every output adds the same products
/// in the same order, whatever `per_unit`: the same bits.
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
    runs: usize,
    lo: usize,
    hi: usize,
    #[comptime] half_taps: usize,
    #[comptime] per_unit: usize,
) {
    let c = channel_position(runs);
    let q = sample_position(runs);
    if c < channels && q < runs {
        let row = c * stride;
        let width = 2 * half_taps;
        let tap_row = c * width;
        let n0 = first + q * per_unit;
        let mut n_run = count - q * per_unit;
        if n_run > per_unit {
            n_run = per_unit;
        }
        if comptime![per_unit > 1]
            && n_run == per_unit
            && n0 >= lo + half_taps
            && n0 + per_unit + half_taps <= hi + 1
        {
            // Output `j` at tap `i` reads `input[base + j − i]`, `x[j]` here.
            let base = row + n0 + half_taps - 1;
            let mut acc = Array::<f32>::new(per_unit);
            let mut x = Array::<f32>::new(per_unit);
            #[unroll]
            for j in 0..per_unit {
                acc[j] = 0.0;
                x[j] = input[base + j];
            }
            #[unroll(half_taps <= UNROLLED_HALF_TAPS)]
            for i in 0..comptime![2 * half_taps] {
                let t = taps[tap_row + i];
                #[unroll]
                for j in 0..per_unit {
                    acc[j] += t * x[j];
                }
                if i + 1 < width {
                    #[unroll]
                    for k in 1..per_unit {
                        let j = per_unit - k;
                        x[j] = x[j - 1];
                    }
                    x[0] = input[base - i - 1];
                }
            }
            #[unroll]
            for j in 0..per_unit {
                output[row + n0 + j] = acc[j];
            }
        } else {
            for j in 0..n_run {
                let n = n0 + j;
                output[row + n] = one_sample(input, taps, row, tap_row, n, lo, hi, half_taps);
            }
        }
    }
}
