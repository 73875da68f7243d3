//! The frame packer's kernels: channel-major `f32` rows cut and laid out time-major, as `int16`
//! (two to a `u32` word) or `f32`.

use cubecl::prelude::*;

/// The `i16` the whole number `x` (in `[-32768, 32767]`) holds, as its 16 little-endian bits
/// (the low half of a `u32`). Offset to be non-negative before the integer casts, so that no
/// backend's signed-to-unsigned conversion is relied on.
#[cube]
fn i16_bits(x: f32) -> u32 {
    let offset = u32::cast_from(i32::cast_from(x) + 32768i32);
    // x + 32768 in 16 bits is x's two's complement with its top bit flipped.
    offset ^ 0x8000u32
}

/// Word `w` of the time-major `int16` frames of samples `first..first + count` of each of
/// `channels` rows of `stride`: elements `2w` and `2w + 1` (frame `e / channels`, channel
/// `e % channels`), the second 0 past the last element.
#[cube(launch)]
pub(super) fn pack_i16(
    input: &[f32],
    output: &mut [u32],
    channels: usize,
    stride: usize,
    first: usize,
    count: usize,
) {
    let w = dspk_kernels::element_position();
    let elements = channels * count;
    let e = 2 * w;
    if e < elements {
        let t = e / channels;
        let c = e % channels;
        let mut word = i16_bits(input[c * stride + first + t]);
        let e1 = e + 1;
        if e1 < elements {
            let t1 = e1 / channels;
            let c1 = e1 % channels;
            word |= i16_bits(input[c1 * stride + first + t1]) << 16u32;
        }
        output[w] = word;
    }
}

/// Element `e` of the time-major `f32` frames of samples `first..first + count` of each of
/// `channels` rows of `stride`.
#[cube(launch)]
pub(super) fn pack_f32(
    input: &[f32],
    output: &mut [f32],
    channels: usize,
    stride: usize,
    first: usize,
    count: usize,
) {
    let e = dspk_kernels::element_position();
    if e < channels * count {
        let t = e / channels;
        let c = e % channels;
        output[e] = input[c * stride + first + t];
    }
}
