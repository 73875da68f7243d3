//! `SampleFormat::decode` against values worked out by hand from the bytes (issue 28: the
//! decode was the only reference its own tests compared with). Every format's extremes, written
//! as the little-endian bytes a file holds, and the scaling `stored × gain + offset` with
//! gains and offsets whose results are exact in `f32`.

use dspk_types::{DspError, SampleFormat};

fn decode(format: SampleFormat, bytes: &[u8], gain: f32, offset: f32) -> Vec<f32> {
    let mut out = vec![f32::NAN; bytes.len() / format.bytes()];
    format
        .decode(bytes, &mut out, gain, offset)
        .unwrap_or_else(|e| panic!("{format}: {e}"));
    out
}

/// `got` equals `want` bit for bit (so that −0.0 and NaN are checked too).
fn same(format: SampleFormat, got: &[f32], want: &[f32]) {
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(got), bits(want), "{format}: {got:?} vs {want:?}");
}

#[test]
fn int8_extremes_and_scaling() {
    let f = SampleFormat::I8;
    let bytes = [0x80, 0x7f, 0xff, 0x00, 0x01];
    same(
        f,
        &decode(f, &bytes, 1.0, 0.0),
        &[-128.0, 127.0, -1.0, 0.0, 1.0],
    );
    // × 0.5 + 1: −63, 64.5, 0.5, 1, 1.5.
    same(
        f,
        &decode(f, &bytes, 0.5, 1.0),
        &[-63.0, 64.5, 0.5, 1.0, 1.5],
    );
}

#[test]
// 76 797.656 25 = 2 457 525 / 32 is exact in f32; clippy counts digits, not bits.
#[allow(clippy::excessive_precision)]
fn int16_extremes_and_a_neuropixels_gain() {
    let f = SampleFormat::I16;
    // −32768 (0x8000), 32767 (0x7fff), −1 (0xffff), 1, 256 (0x0100: the high byte second).
    let bytes = [0x00, 0x80, 0xff, 0x7f, 0xff, 0xff, 0x01, 0x00, 0x00, 0x01];
    same(
        f,
        &decode(f, &bytes, 1.0, 0.0),
        &[-32768.0, 32767.0, -1.0, 1.0, 256.0],
    );
    // 2.34375 µV per count (75/32): −76 800, 76 797.656 25, −2.343 75, 2.343 75, 600.
    same(
        f,
        &decode(f, &bytes, 2.343_75, 0.0),
        &[-76_800.0, 76_797.656_25, -2.343_75, 2.343_75, 600.0],
    );
    // × 0.25 − 1000.5: −9192.5, 7191.25, −1000.75, −1000.25, −936.5.
    same(
        f,
        &decode(f, &bytes, 0.25, -1000.5),
        &[-9192.5, 7191.25, -1000.75, -1000.25, -936.5],
    );
}

#[test]
fn uint16_extremes_and_an_offset_binary_centre() {
    let f = SampleFormat::U16;
    // 0, 65535, 32768 (0x8000), 1.
    let bytes = [0x00, 0x00, 0xff, 0xff, 0x00, 0x80, 0x01, 0x00];
    same(
        f,
        &decode(f, &bytes, 1.0, 0.0),
        &[0.0, 65535.0, 32768.0, 1.0],
    );
    // Intan's offset binary: (v − 32768) × 0.195 µV, written as × 0.5 − 16384 here to stay
    // exact: −16384, 16383.5, 0, −16383.5.
    same(
        f,
        &decode(f, &bytes, 0.5, -16384.0),
        &[-16384.0, 16383.5, 0.0, -16383.5],
    );
}

#[test]
fn int32_rounds_to_the_nearest_float() {
    let f = SampleFormat::I32;
    let words: [i32; 5] = [i32::MIN, i32::MAX, 16_777_217, 16_777_219, -3];
    let bytes: Vec<u8> = [
        [0x00, 0x00, 0x00, 0x80], // −2³¹
        [0xff, 0xff, 0xff, 0x7f], // 2³¹ − 1: rounds up to 2³¹
        [0x01, 0x00, 0x00, 0x01], // 2²⁴ + 1: a tie, to even (2²⁴)
        [0x03, 0x00, 0x00, 0x01], // 2²⁴ + 3: a tie, to even (2²⁴ + 4)
        [0xfd, 0xff, 0xff, 0xff], // −3
    ]
    .concat();
    assert_eq!(
        bytes,
        words
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect::<Vec<_>>()
    );
    same(
        f,
        &decode(f, &bytes, 1.0, 0.0),
        &[
            -2_147_483_648.0,
            2_147_483_648.0,
            16_777_216.0,
            16_777_220.0,
            -3.0,
        ],
    );
}

#[test]
fn float32_passes_through_special_values() {
    let f = SampleFormat::F32;
    let bytes = [
        0x00, 0x00, 0xc0, 0x3f, // 1.5
        0x00, 0x00, 0x00, 0x80, // −0.0: −0 × 1 + 0 is +0 in IEEE 754
        0x00, 0x00, 0x80, 0x7f, // +∞
        0xff, 0xff, 0x7f, 0x7f, // f32::MAX
        0x01, 0x00, 0x00, 0x00, // the smallest subnormal
    ];
    same(
        f,
        &decode(f, &bytes, 1.0, 0.0),
        &[1.5, 0.0, f32::INFINITY, f32::MAX, f32::from_bits(1)],
    );
    // × 2 + 0.5: 3.5, 0.5, +∞, +∞ (overflow), 0.5.
    same(
        f,
        &decode(f, &bytes, 2.0, 0.5),
        &[3.5, 0.5, f32::INFINITY, f32::INFINITY, 0.5],
    );
}

#[test]
fn float64_rounds_to_float32() {
    let f = SampleFormat::F64;
    let values = [1.0f64, 0.1, -2.5e-3, f64::MAX, -0.0];
    let bytes: Vec<u8> = [
        [0, 0, 0, 0, 0, 0, 0xf0, 0x3f],                   // 1.0
        [0x9a, 0x99, 0x99, 0x99, 0x99, 0x99, 0xb9, 0x3f], // 0.1
        [0x7b, 0x14, 0xae, 0x47, 0xe1, 0x7a, 0x64, 0xbf], // −0.0025
        [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xef, 0x7f], // f64::MAX
        [0, 0, 0, 0, 0, 0, 0, 0x80],                      // −0.0 (+0 after + 0)
    ]
    .concat();
    assert_eq!(
        bytes,
        values
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<_>>()
    );
    // 0.1 and 0.0025 to the nearest f32 (0x3dcccccd, 0xbb23d70a); f64::MAX beyond f32: +∞;
    // −0 × 1 + 0: +0.
    same(
        f,
        &decode(f, &bytes, 1.0, 0.0),
        &[
            1.0,
            f32::from_bits(0x3dcc_cccd),
            f32::from_bits(0xbb23_d70a),
            f32::INFINITY,
            0.0,
        ],
    );
}

#[test]
fn short_input_is_refused_with_the_sizes() {
    let mut out = [0f32; 3];
    let err = SampleFormat::I16
        .decode(&[0u8; 5], &mut out, 1.0, 0.0)
        .unwrap_err();
    assert!(
        matches!(
            err,
            DspError::BufferUnderrun {
                needed: 6,
                available: 5,
                ..
            }
        ),
        "{err}"
    );
}
