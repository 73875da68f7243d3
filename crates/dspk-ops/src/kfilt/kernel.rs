//! The spatial high-pass's kernels: the gain and the gain-normalised samples, then the
//! per-shank mix multiplied by the gain again.

use cubecl::prelude::*;
use dspk_kernels::{channel_position, sample_position};

/// One unit per (channel, block `k`): over local samples `k·B − off_b .. (k+1)·B − off_b` (a
/// fixed grid of `B`-sample blocks from the segment's start) when they lie within `lo..hi`,
/// `Σ|x|`, `Σ cos θ·|x|` and `Σ sin θ·|x|` in sample order in `f32`, with `θ` of the sample's
/// offset from the segment's start modulo the window's period `P` (`trig` holds `cos, sin`
/// of `2π·n/P` for `n < P`); at `3·(c·blocks + k)`.
#[cube(launch)]
pub(super) fn block_sums(
    input: &[f32],
    sums: &mut [f32],
    trig: &[f32],
    channels: usize,
    stride: usize,
    blocks: usize,
    lo: usize,
    hi: usize,
    off_b: usize,
    off_p: usize,
    period: usize,
    #[comptime] block: usize,
) {
    let unit = dspk_kernels::element_position();
    if unit < channels * blocks {
        let c = unit / blocks;
        let k = unit % blocks;
        let first = k * block;
        // Local start first − off_b, whole block within lo..hi.
        if first >= off_b + lo && first + block <= hi + off_b {
            let u0 = first - off_b;
            let row = c * stride;
            let mut a = 0.0f32;
            let mut cs = 0.0f32;
            let mut sn = 0.0f32;
            let mut n = 0;
            while n < block {
                let u = u0 + n;
                let v = f32::abs(input[row + u]);
                let phase = (u + off_p) % period;
                a += v;
                cs += trig[2 * phase] * v;
                sn += trig[2 * phase + 1] * v;
                n += 1;
            }
            sums[3 * unit] = a;
            sums[3 * unit + 1] = cs;
            sums[3 * unit + 2] = sn;
        }
    }
}

/// One unit per (channel, produced sample `t`): the gain `g = Σ_j w(j)·|x[t + j]|`, `|j| <=
/// half`, over the readable samples `lo..hi`, `w(j) = (1 + cos(2πj/P)) / (2S)` (the Hann
/// taps). The blocks of [`block_sums`] wholly inside the range are taken through `cos(θ_s −
/// θ_t) = cos θ_s·cos θ_t + sin θ_s·sin θ_t`; the samples before and after them are summed with
/// the taps directly; each part in a fixed order in `f32`. Writes `g` to `gain` and
/// `x / max(floor, g)` to `scaled`.
#[cube(launch)]
pub(super) fn agc(
    input: &[f32],
    gain: &mut [f32],
    scaled: &mut [f32],
    taps: &[f32],
    sums: &[f32],
    trig: &[f32],
    channels: usize,
    stride: usize,
    start: usize,
    len: usize,
    lo: usize,
    hi: usize,
    half: usize,
    blocks: usize,
    off_b: usize,
    off_p: usize,
    period: usize,
    half_inv_sum: f32,
    floor: f32,
    #[comptime] block: usize,
) {
    let c = channel_position(len);
    let p = sample_position(len);
    if c < channels && p < len {
        let t = start + p;
        let row = c * stride;
        // The samples r0..r1 the gain reads, kept in unsigned arithmetic.
        let mut r0 = lo;
        if t > lo + half {
            r0 = t - half;
        }
        let r1 = min(hi, t + half + 1);
        // Whole blocks kb..ke inside r0..r1.
        let mut kb = (r0 + off_b) / block;
        if kb * block < r0 + off_b {
            kb += 1;
        }
        let ke = (r1 + off_b) / block;
        let mut left_end = r1;
        let mut right_start = r1;
        if kb < ke {
            left_end = kb * block - off_b;
            right_start = ke * block - off_b;
        }
        let mut acc = 0.0f32;
        let mut u = r0;
        while u < left_end {
            acc += taps[u + half - t] * f32::abs(input[row + u]);
            u += 1;
        }
        if kb < ke {
            let mut a = 0.0f32;
            let mut cs = 0.0f32;
            let mut sn = 0.0f32;
            let mut k = kb;
            while k < ke {
                let at = 3 * (c * blocks + k);
                a += sums[at];
                cs += sums[at + 1];
                sn += sums[at + 2];
                k += 1;
            }
            let phase = (t + off_p) % period;
            acc += half_inv_sum * (a + trig[2 * phase] * cs + trig[2 * phase + 1] * sn);
        }
        u = right_start;
        while u < r1 {
            acc += taps[u + half - t] * f32::abs(input[row + u]);
            u += 1;
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
