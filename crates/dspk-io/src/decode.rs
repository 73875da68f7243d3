//! Host decode kernels: stored little-endian samples to scaled `f32`, and the cache-friendly
//! transposes between time-major and channel-major.
//!
//! Every decode uses the rule of [`SampleFormat::decode`]: convert the stored value to `f32`,
//! then `x * gain + offset` in `f32` (one multiply, one add, no fused multiply-add), so the
//! results equal it bit for bit.

use dspk_types::SampleFormat;

/// A stored sample type: how to read element `i` of a little-endian byte slice as `f32`.
pub(crate) trait Stored {
    /// Bytes per value.
    const BYTES: usize;
    /// Element `i` of `bytes`, converted to `f32` by the rule of [`SampleFormat::decode`].
    fn at(bytes: &[u8], i: usize) -> f32;
    /// The first [`TILE`] elements of `bytes`, converted like [`Stored::at`] (a fixed-size
    /// load the compiler vectorizes).
    fn tile(bytes: &[u8]) -> [f32; TILE];
}

macro_rules! stored_type {
    ($name:ident, $t:ty, $n:expr, $conv:expr) => {
        /// Marker for one stored sample type.
        pub(crate) struct $name;
        impl Stored for $name {
            const BYTES: usize = $n;
            #[inline(always)]
            fn at(bytes: &[u8], i: usize) -> f32 {
                let mut b = [0u8; $n];
                b.copy_from_slice(&bytes[i * $n..i * $n + $n]);
                let conv: fn($t) -> f32 = $conv;
                conv(<$t>::from_le_bytes(b))
            }
            #[inline(always)]
            fn tile(bytes: &[u8]) -> [f32; TILE] {
                let seg: &[u8; TILE * $n] = bytes[..TILE * $n].try_into().expect("a whole tile");
                let conv: fn($t) -> f32 = $conv;
                let mut x = [0f32; TILE];
                for (j, xj) in x.iter_mut().enumerate() {
                    let b: [u8; $n] = seg[j * $n..j * $n + $n].try_into().expect("one value");
                    *xj = conv(<$t>::from_le_bytes(b));
                }
                x
            }
        }
    };
}

stored_type!(I8, i8, 1, f32::from);
stored_type!(I16, i16, 2, f32::from);
stored_type!(U16, u16, 2, f32::from);
stored_type!(I32, i32, 4, |v| v as f32);
stored_type!(F32, f32, 4, |v| v);
stored_type!(F64, f64, 8, |v| v as f32);

/// Runs `$body` with the type alias `$D` set to the [`Stored`] marker of `$format`.
macro_rules! with_stored {
    ($format:expr, $D:ident => $body:expr) => {
        match $format {
            dspk_types::SampleFormat::I8 => {
                type $D = $crate::decode::I8;
                $body
            }
            dspk_types::SampleFormat::I16 => {
                type $D = $crate::decode::I16;
                $body
            }
            dspk_types::SampleFormat::U16 => {
                type $D = $crate::decode::U16;
                $body
            }
            dspk_types::SampleFormat::I32 => {
                type $D = $crate::decode::I32;
                $body
            }
            dspk_types::SampleFormat::F32 => {
                type $D = $crate::decode::F32;
                $body
            }
            dspk_types::SampleFormat::F64 => {
                type $D = $crate::decode::F64;
                $body
            }
        }
    };
}

/// Side of the square tiles the transposes move at once (registers).
const TILE: usize = 8;
/// Samples per block: the rows of one block stay in cache while every channel is taken from
/// them.
const BLOCK: usize = 512;

/// If `channels` is `first, first + 1, …`, returns `first`.
pub(crate) fn contiguous_start(channels: &[usize]) -> Option<usize> {
    let first = *channels.first()?;
    channels
        .iter()
        .enumerate()
        .all(|(i, &c)| c == first + i)
        .then_some(first)
}

/// Decodes time-major frames into channel-major `f32`.
///
/// `src` holds `n` frames of `frame_channels` values; `out[i * n + s]` becomes frame `s`'s
/// value of channel `channels[i]`, times `gains[channel]` plus `offsets[channel]` (indexed by
/// file channel). The caller has checked every length and index.
#[expect(
    clippy::too_many_arguments,
    reason = "an internal kernel; the arguments are one shape"
)]
pub(crate) fn decode_transpose(
    format: SampleFormat,
    src: &[u8],
    frame_channels: usize,
    channels: &[usize],
    gains: &[f32],
    offsets: &[f32],
    n: usize,
    out: &mut [f32],
) {
    with_stored!(format, D => match contiguous_start(channels) {
        Some(first) => decode_transpose_run::<D>(
            src, frame_channels, first, channels.len(), gains, offsets, n, out,
        ),
        None => decode_transpose_with::<D>(
            src, frame_channels, channels.len(), |j| channels[j], gains, offsets, n, out,
        ),
    })
}

/// [`decode_transpose`] for the channels `first..first + k`, in tiles of [`TILE`] × [`TILE`]:
/// each tile row is one contiguous load of `TILE` values, scaled with the channels as vector
/// lanes, then transposed in registers and stored as `TILE` runs of `TILE` samples.
#[inline(always)]
#[expect(
    clippy::too_many_arguments,
    reason = "an internal kernel; the arguments are one shape"
)]
#[expect(
    clippy::needless_range_loop,
    reason = "a tile transpose indexes both axes"
)]
fn decode_transpose_run<D: Stored>(
    src: &[u8],
    frame_channels: usize,
    first: usize,
    k: usize,
    gains: &[f32],
    offsets: &[f32],
    n: usize,
    out: &mut [f32],
) {
    let frame = frame_channels * D::BYTES;
    let tile_bytes = TILE * D::BYTES;
    let full_c = k / TILE * TILE;
    let gains = &gains[first..first + k];
    let offsets = &offsets[first..first + k];
    for b0 in (0..n).step_by(BLOCK) {
        let bl = BLOCK.min(n - b0);
        let block = &src[b0 * frame..(b0 + bl) * frame];
        let full_s = bl / TILE * TILE;
        for c0 in (0..full_c).step_by(TILE) {
            let g: &[f32; TILE] = gains[c0..c0 + TILE].try_into().expect("a tile of gains");
            let o: &[f32; TILE] = offsets[c0..c0 + TILE]
                .try_into()
                .expect("a tile of offsets");
            let col = (first + c0) * D::BYTES;
            for s in (0..full_s).step_by(TILE) {
                let mut v = [[0f32; TILE]; TILE];
                for (r, vr) in v.iter_mut().enumerate() {
                    let at = (s + r) * frame + col;
                    let x = D::tile(&block[at..at + tile_bytes]);
                    for j in 0..TILE {
                        vr[j] = x[j] * g[j] + o[j];
                    }
                }
                for j in 0..TILE {
                    let start = (c0 + j) * n + b0 + s;
                    let dst: &mut [f32; TILE] = (&mut out[start..start + TILE])
                        .try_into()
                        .expect("a whole tile");
                    for (r, d) in dst.iter_mut().enumerate() {
                        *d = v[r][j];
                    }
                }
            }
            for s in full_s..bl {
                let seg = &block[s * frame + col..s * frame + col + tile_bytes];
                for j in 0..TILE {
                    out[(c0 + j) * n + b0 + s] = D::at(seg, j) * g[j] + o[j];
                }
            }
        }
        for c in full_c..k {
            let (g, o) = (gains[c], offsets[c]);
            let dst = &mut out[c * n + b0..c * n + b0 + bl];
            for (d, row) in dst.iter_mut().zip(block.chunks_exact(frame)) {
                *d = D::at(row, first + c) * g + o;
            }
        }
    }
}

#[inline(always)]
#[expect(
    clippy::too_many_arguments,
    reason = "an internal kernel; the arguments are one shape"
)]
fn decode_transpose_with<D: Stored>(
    src: &[u8],
    frame_channels: usize,
    k: usize,
    chan: impl Fn(usize) -> usize,
    gains: &[f32],
    offsets: &[f32],
    n: usize,
    out: &mut [f32],
) {
    let frame = frame_channels * D::BYTES;
    let full_c = k / TILE * TILE;
    for b0 in (0..n).step_by(BLOCK) {
        let bl = BLOCK.min(n - b0);
        let block = &src[b0 * frame..(b0 + bl) * frame];
        let full_s = bl / TILE * TILE;
        for c0 in (0..full_c).step_by(TILE) {
            let ch: [usize; TILE] = std::array::from_fn(|j| chan(c0 + j));
            let g: [f32; TILE] = std::array::from_fn(|j| gains[ch[j]]);
            let o: [f32; TILE] = std::array::from_fn(|j| offsets[ch[j]]);
            for s in (0..full_s).step_by(TILE) {
                let mut v = [[0f32; TILE]; TILE];
                for (r, vr) in v.iter_mut().enumerate() {
                    let row = &block[(s + r) * frame..(s + r + 1) * frame];
                    for (j, x) in vr.iter_mut().enumerate() {
                        *x = D::at(row, ch[j]);
                    }
                }
                for j in 0..TILE {
                    let start = (c0 + j) * n + b0 + s;
                    let dst = &mut out[start..start + TILE];
                    for (r, d) in dst.iter_mut().enumerate() {
                        *d = v[r][j] * g[j] + o[j];
                    }
                }
            }
            for s in full_s..bl {
                let row = &block[s * frame..(s + 1) * frame];
                for j in 0..TILE {
                    out[(c0 + j) * n + b0 + s] = D::at(row, ch[j]) * g[j] + o[j];
                }
            }
        }
        for c in full_c..k {
            let ch = chan(c);
            let (g, o) = (gains[ch], offsets[ch]);
            let dst = &mut out[c * n + b0..c * n + b0 + bl];
            for (d, row) in dst.iter_mut().zip(block.chunks_exact(frame)) {
                *d = D::at(row, ch) * g + o;
            }
        }
    }
}

/// Decodes time-major frames keeping the order: `out[s * C + c] = src[s * C + c] * gains[c] +
/// offsets[c]` for `C = gains.len()` channels.
pub(crate) fn decode_frames(
    format: SampleFormat,
    src: &[u8],
    gains: &[f32],
    offsets: &[f32],
    out: &mut [f32],
) {
    let c = gains.len();
    with_stored!(format, D => {
        for (orow, srow) in out.chunks_exact_mut(c).zip(src.chunks_exact(c * D::BYTES)) {
            for (j, ((o, &g), &off)) in orow.iter_mut().zip(gains).zip(offsets).enumerate() {
                *o = D::at(srow, j) * g + off;
            }
        }
    })
}

/// Decodes one contiguous run of values with one gain and offset.
pub(crate) fn decode_run(
    format: SampleFormat,
    src: &[u8],
    gain: f32,
    offset: f32,
    out: &mut [f32],
) {
    with_stored!(format, D => {
        for (o, chunk) in out.iter_mut().zip(src.chunks_exact(D::BYTES)) {
            *o = D::at(chunk, 0) * gain + offset;
        }
    })
}

/// Gathers and transposes elements of `elem` bytes: `dst[j * rows + r] = src[r * row_elems +
/// chan(j)]` for `r < rows`, `j < k`.
///
/// With rows = frames and `chan` = the selected channels this turns time-major into
/// channel-major; with rows = channels and `chan` the identity over samples it turns
/// channel-major into time-major.
pub(crate) fn transpose_bytes(
    elem: usize,
    src: &[u8],
    rows: usize,
    row_elems: usize,
    cols: &[usize],
    dst: &mut [u8],
) {
    match (elem, contiguous_start(cols)) {
        (1, Some(f)) => transpose_with::<1>(src, rows, row_elems, cols.len(), |j| f + j, dst),
        (2, Some(f)) => transpose_with::<2>(src, rows, row_elems, cols.len(), |j| f + j, dst),
        (4, Some(f)) => transpose_with::<4>(src, rows, row_elems, cols.len(), |j| f + j, dst),
        (8, Some(f)) => transpose_with::<8>(src, rows, row_elems, cols.len(), |j| f + j, dst),
        (1, None) => transpose_with::<1>(src, rows, row_elems, cols.len(), |j| cols[j], dst),
        (2, None) => transpose_with::<2>(src, rows, row_elems, cols.len(), |j| cols[j], dst),
        (4, None) => transpose_with::<4>(src, rows, row_elems, cols.len(), |j| cols[j], dst),
        (8, None) => transpose_with::<8>(src, rows, row_elems, cols.len(), |j| cols[j], dst),
        _ => unreachable!("sample formats are 1, 2, 4 or 8 bytes wide"),
    }
}

/// [`transpose_bytes`] over every column `0..cols` (the tests' round trip).
#[cfg(test)]
pub(crate) fn transpose_all_bytes(
    elem: usize,
    src: &[u8],
    rows: usize,
    cols: usize,
    dst: &mut [u8],
) {
    match elem {
        1 => transpose_with::<1>(src, rows, cols, cols, |j| j, dst),
        2 => transpose_with::<2>(src, rows, cols, cols, |j| j, dst),
        4 => transpose_with::<4>(src, rows, cols, cols, |j| j, dst),
        8 => transpose_with::<8>(src, rows, cols, cols, |j| j, dst),
        _ => unreachable!("sample formats are 1, 2, 4 or 8 bytes wide"),
    }
}

#[inline(always)]
#[expect(
    clippy::needless_range_loop,
    reason = "a tile transpose indexes both axes"
)]
fn transpose_with<const N: usize>(
    src: &[u8],
    rows: usize,
    row_elems: usize,
    k: usize,
    chan: impl Fn(usize) -> usize,
    dst: &mut [u8],
) {
    let row_bytes = row_elems * N;
    let full_c = k / TILE * TILE;
    for b0 in (0..rows).step_by(BLOCK) {
        let bl = BLOCK.min(rows - b0);
        let block = &src[b0 * row_bytes..(b0 + bl) * row_bytes];
        for c0 in (0..full_c).step_by(TILE) {
            let ch: [usize; TILE] = std::array::from_fn(|j| chan(c0 + j));
            let full_s = bl / TILE * TILE;
            for s in (0..full_s).step_by(TILE) {
                let mut v = [[[0u8; N]; TILE]; TILE];
                for (r, vr) in v.iter_mut().enumerate() {
                    let row = &block[(s + r) * row_bytes..(s + r + 1) * row_bytes];
                    for (j, x) in vr.iter_mut().enumerate() {
                        x.copy_from_slice(&row[ch[j] * N..ch[j] * N + N]);
                    }
                }
                for j in 0..TILE {
                    let start = ((c0 + j) * rows + b0 + s) * N;
                    let d = &mut dst[start..start + TILE * N];
                    for (r, dd) in d.chunks_exact_mut(N).enumerate() {
                        dd.copy_from_slice(&v[r][j]);
                    }
                }
            }
            for s in full_s..bl {
                let row = &block[s * row_bytes..(s + 1) * row_bytes];
                for j in 0..TILE {
                    let start = ((c0 + j) * rows + b0 + s) * N;
                    dst[start..start + N].copy_from_slice(&row[ch[j] * N..ch[j] * N + N]);
                }
            }
        }
        for c in full_c..k {
            let ch = chan(c);
            let start = (c * rows + b0) * N;
            let d = &mut dst[start..start + bl * N];
            for (dd, row) in d.chunks_exact_mut(N).zip(block.chunks_exact(row_bytes)) {
                dd.copy_from_slice(&row[ch * N..ch * N + N]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect()
    }

    /// Finite floats only: random bytes can spell NaNs, which never compare equal.
    fn sample_bytes(format: SampleFormat, values: usize, seed: u64) -> Vec<u8> {
        let raw = random_bytes(values * format.bytes(), seed);
        match format {
            SampleFormat::F32 => raw
                .chunks_exact(4)
                .flat_map(|c| {
                    let v = f32::from_le_bytes(c.try_into().expect("4 bytes"));
                    (if v.is_finite() { v } else { 1.5 }).to_le_bytes()
                })
                .collect(),
            SampleFormat::F64 => raw
                .chunks_exact(8)
                .flat_map(|c| {
                    let v = f64::from_le_bytes(c.try_into().expect("8 bytes"));
                    (if v.is_finite() && v.abs() < 1e30 {
                        v
                    } else {
                        -2.25
                    })
                    .to_le_bytes()
                })
                .collect(),
            _ => raw,
        }
    }

    #[test]
    fn decode_transpose_equals_sample_format_decode() {
        let seed = 0x5eed_0001;
        for format in SampleFormat::ALL {
            for (frame_channels, n) in [(1, 1), (3, 17), (13, 70), (16, 64), (385, 131)] {
                let src = sample_bytes(format, frame_channels * n, seed + n as u64);
                let gains: Vec<f32> = (0..frame_channels).map(|c| 0.5 + c as f32 * 0.37).collect();
                let offsets: Vec<f32> = (0..frame_channels).map(|c| c as f32 * -1.25).collect();
                let subsets: Vec<Vec<usize>> = vec![
                    (0..frame_channels).collect(),
                    (0..frame_channels).rev().collect(),
                    (0..frame_channels).step_by(2).chain([0, 0]).collect(),
                    (frame_channels / 2..frame_channels).collect(),
                ];
                for channels in subsets {
                    let mut out = vec![f32::NAN; channels.len() * n];
                    decode_transpose(
                        format,
                        &src,
                        frame_channels,
                        &channels,
                        &gains,
                        &offsets,
                        n,
                        &mut out,
                    );
                    for (i, &c) in channels.iter().enumerate() {
                        for s in 0..n {
                            let at = (s * frame_channels + c) * format.bytes();
                            let mut one = [0f32];
                            format
                                .decode(
                                    &src[at..at + format.bytes()],
                                    &mut one,
                                    gains[c],
                                    offsets[c],
                                )
                                .expect("decode one");
                            assert_eq!(
                                out[i * n + s].to_bits(),
                                one[0].to_bits(),
                                "seed {seed:#x} {format} C={frame_channels} n={n} channel {c} sample {s}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn transpose_bytes_moves_every_element() {
        let seed = 0x5eed_0002;
        for elem in [1, 2, 4, 8] {
            for (rows, row_elems) in [(1, 1), (9, 3), (70, 13), (64, 16), (200, 385)] {
                let src = random_bytes(rows * row_elems * elem, seed + rows as u64);
                let cols: Vec<usize> = (0..row_elems).rev().step_by(2).collect();
                let mut dst = vec![0u8; cols.len() * rows * elem];
                transpose_bytes(elem, &src, rows, row_elems, &cols, &mut dst);
                for (j, &c) in cols.iter().enumerate() {
                    for r in 0..rows {
                        let a = (j * rows + r) * elem;
                        let b = (r * row_elems + c) * elem;
                        assert_eq!(&dst[a..a + elem], &src[b..b + elem], "seed {seed:#x}");
                    }
                }
                let mut all = vec![0u8; rows * row_elems * elem];
                transpose_all_bytes(elem, &src, rows, row_elems, &mut all);
                let mut back = vec![0u8; all.len()];
                transpose_all_bytes(elem, &all, row_elems, rows, &mut back);
                assert_eq!(
                    back, src,
                    "seed {seed:#x}: transposing twice is the identity"
                );
            }
        }
    }

    #[test]
    fn frames_and_runs_decode_like_sample_format() {
        let seed = 0x5eed_0003;
        for format in SampleFormat::ALL {
            let c = 7;
            let n = 23;
            let src = sample_bytes(format, c * n, seed);
            let gains: Vec<f32> = (0..c).map(|i| 1.0 / (i as f32 + 3.0)).collect();
            let offsets: Vec<f32> = (0..c).map(|i| i as f32 * 0.1).collect();
            let mut out = vec![0f32; c * n];
            decode_frames(format, &src, &gains, &offsets, &mut out);
            let mut run = vec![0f32; c * n];
            decode_run(format, &src, 0.75, 2.0, &mut run);
            let mut expect_run = vec![0f32; c * n];
            format
                .decode(&src, &mut expect_run, 0.75, 2.0)
                .expect("decode");
            assert_eq!(run, expect_run, "seed {seed:#x} {format}");
            for s in 0..n {
                for j in 0..c {
                    let at = (s * c + j) * format.bytes();
                    let mut one = [0f32];
                    format
                        .decode(&src[at..], &mut one, gains[j], offsets[j])
                        .expect("decode");
                    assert_eq!(
                        out[s * c + j].to_bits(),
                        one[0].to_bits(),
                        "seed {seed:#x} {format}"
                    );
                }
            }
        }
    }
}
