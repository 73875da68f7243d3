//! One mtscomp chunk: inflated, put in time-major order, its differences undone with wrapping
//! int16 arithmetic (as numpy's `cumsum` into an int16 array).

use std::path::Path;

use flate2::{Decompress, FlushDecompress, Status};

use dspk_types::DspResult;

use super::header::{CbinChunkOrder, CbinHeader};
use crate::raw::file_error;

/// Decodes chunk `i` of `header` from its compressed bytes `data` (the whole `.cbin`, mapped)
/// into `out`, which it resizes to the chunk's samples × channels, time-major. `cbin` names
/// the file in errors: bytes past the end of the file, a zlib stream that is corrupt, ends
/// early or holds the wrong number of values.
pub(crate) fn decode_chunk(
    header: &CbinHeader,
    cbin: &Path,
    data: &[u8],
    i: usize,
    out: &mut Vec<i16>,
) -> DspResult<()> {
    let (start, end) = (header.chunk_offsets[i], header.chunk_offsets[i + 1]);
    let have = data.len() as u64;
    if end > have {
        return Err(file_error(
            cbin,
            format!(
                "chunk {i}: bytes {start}..{end} lie past the end of the file ({have} bytes): truncated, or not the file {} describes",
                header.path().display()
            ),
        ));
    }
    let compressed = &data[start as usize..end as usize];
    let samples = header.chunk_samples(i);
    let n_t = (samples.end - samples.start) as usize;
    let n_c = header.n_channels;
    let values = n_t * n_c;
    // Inflated straight into int16 storage (little-endian bytes, swapped below only on a
    // big-endian host): no byte buffer to convert from.
    let n_bytes = values * 2;
    let mut raw = vec![0i16; values];
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut raw);
    let mut z = Decompress::new(true);
    let status = z
        .decompress(compressed, bytes, FlushDecompress::Finish)
        .map_err(|e| file_error(cbin, format!("chunk {i}: corrupt zlib data: {e}")))?;
    let written = z.total_out();
    let read = z.total_in();
    match status {
        Status::StreamEnd if written == n_bytes as u64 && read == compressed.len() as u64 => {}
        Status::StreamEnd if written == n_bytes as u64 => {
            return Err(file_error(
                cbin,
                format!(
                    "chunk {i}: the zlib stream ends {} bytes before the chunk's end (byte {end}): wrong chunk_offsets in {}",
                    compressed.len() as u64 - read,
                    header.path().display()
                ),
            ));
        }
        Status::StreamEnd => {
            return Err(file_error(
                cbin,
                format!(
                    "chunk {i}: decompresses to {written} bytes, but {n_t} samples of {n_c} int16 channels are {}",
                    n_bytes
                ),
            ));
        }
        _ if written == n_bytes as u64 => {
            return Err(file_error(
                cbin,
                format!(
                    "chunk {i}: the zlib stream does not end after the {} bytes of {n_t} samples of {n_c} int16 channels: a damaged chunk, or wrong chunk_offsets or chunk_bounds in {}",
                    n_bytes,
                    header.path().display()
                ),
            ));
        }
        _ => {
            return Err(file_error(
                cbin,
                format!(
                    "chunk {i}: the zlib stream ends early ({read} of {} bytes read gave {written} of {} bytes): a truncated chunk, or wrong chunk_offsets in {}",
                    compressed.len(),
                    n_bytes,
                    header.path().display()
                ),
            ));
        }
    }
    if cfg!(target_endian = "big") {
        raw.iter_mut().for_each(|v| *v = i16::from_le(*v));
    }
    match header.chunk_order {
        CbinChunkOrder::TimeMajor => *out = raw,
        CbinChunkOrder::ChannelMajor => {
            out.clear();
            out.resize(values, 0);
            // Blocked transpose: a tile of channels × samples stays in cache on both sides.
            const TILE: usize = 64;
            for c0 in (0..n_c).step_by(TILE) {
                for t0 in (0..n_t).step_by(TILE) {
                    for c in c0..(c0 + TILE).min(n_c) {
                        let src = &raw[c * n_t..(c + 1) * n_t];
                        for t in t0..(t0 + TILE).min(n_t) {
                            out[t * n_c + c] = src[t];
                        }
                    }
                }
            }
        }
    }
    if header.do_spatial_diff {
        for frame in out.chunks_exact_mut(n_c) {
            for c in 1..n_c {
                frame[c] = frame[c].wrapping_add(frame[c - 1]);
            }
        }
    }
    if header.do_time_diff {
        for t in 1..n_t {
            let (before, rest) = out.split_at_mut(t * n_c);
            let prev = &before[(t - 1) * n_c..];
            for (v, p) in rest[..n_c].iter_mut().zip(prev) {
                *v = v.wrapping_add(*p);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cbin::tests::compress;

    #[test]
    fn chunks_decode_to_the_frames_in_either_order_with_wrapping_diffs() {
        let mut x = 12345u32;
        let frames: Vec<Vec<i16>> = (0..37)
            .map(|_| {
                (0..5)
                    .map(|_| {
                        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                        // Full-range values: differences wrap.
                        (x >> 16) as u16 as i16
                    })
                    .collect()
            })
            .collect();
        for order in ["C", "F"] {
            for spatial in [false, true] {
                let (ch, data) = compress(&frames, &[0, 16, 32, 37], order, spatial);
                let h = CbinHeader::parse(&ch, Path::new("t.ch")).expect("valid");
                let mut got = Vec::new();
                let mut out = Vec::new();
                for i in 0..h.chunk_count() {
                    decode_chunk(&h, Path::new("t.cbin"), &data, i, &mut out).expect("decodes");
                    got.extend_from_slice(&out);
                }
                let want: Vec<i16> = frames.iter().flatten().copied().collect();
                assert_eq!(got, want, "order {order}, spatial {spatial}");
            }
        }
    }

    #[test]
    fn a_truncated_file_or_chunk_names_the_chunk() {
        let frames: Vec<Vec<i16>> = (0..20).map(|t| vec![t as i16 * 7, -(t as i16)]).collect();
        let (ch, data) = compress(&frames, &[0, 10, 20], "F", false);
        let h = CbinHeader::parse(&ch, Path::new("t.ch")).expect("valid");
        let mut out = Vec::new();
        let e = decode_chunk(
            &h,
            Path::new("t.cbin"),
            &data[..data.len() - 3],
            1,
            &mut out,
        )
        .expect_err("past the end");
        assert!(e.to_string().contains("chunk 1: bytes"), "{e}");
        // A chunk cut short inside the file: the offsets say less than the stream holds.
        let mut short = h.clone();
        short.chunk_offsets[1] -= 4;
        let e = decode_chunk(&short, Path::new("t.cbin"), &data, 0, &mut out).expect_err("short");
        assert!(e.to_string().contains("chunk 0:"), "{e}");
        let e = decode_chunk(&short, Path::new("t.cbin"), &data, 1, &mut out).expect_err("shifted");
        assert!(e.to_string().contains("chunk 1:"), "{e}");
    }
}
