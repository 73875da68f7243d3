//! Channel-major windows laid out as time-major frames for a file: the readers' blocked
//! transpose, split by time over a few threads (each writes its own run of frames).

use crate::decode;

/// Frames per part are a multiple of this (the transpose's tile).
const TILE: usize = 16;

/// Frames per thread at least (smaller parts cost more to hand out than to transpose).
const MIN_FRAMES_PER_THREAD: usize = 2_048;

/// Threads one window's transpose is split over at most (it shares the machine with the pass's
/// fill threads and the device's driver).
const MAX_THREADS: usize = 8;

/// `src` (`channels` rows of `samples` values of `width` bytes) as `samples` frames of
/// `channels` values in `dst` (same length).
pub(crate) fn to_frames(width: usize, src: &[u8], channels: usize, samples: usize, dst: &mut [u8]) {
    debug_assert_eq!(src.len(), channels * samples * width);
    debug_assert_eq!(dst.len(), src.len());
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_THREADS)
        .min(samples / MIN_FRAMES_PER_THREAD)
        .max(1);
    // Parts of whole tiles, so that only the last part has a ragged edge.
    let per = samples.div_ceil(threads).div_ceil(TILE) * TILE;
    let frame = channels * width;
    if threads == 1 {
        part(width, src, channels, samples, 0..samples, dst);
        return;
    }
    std::thread::scope(|scope| {
        for (i, out) in dst.chunks_mut(per * frame).enumerate() {
            let start = i * per;
            let range = start..start + out.len() / frame;
            scope.spawn(move || part(width, src, channels, samples, range, out));
        }
    });
}

/// Frames `range` of `src` into `dst` (`range.len()` frames): the blocked transpose of the
/// readers, over those samples.
fn part(
    width: usize,
    src: &[u8],
    channels: usize,
    samples: usize,
    range: std::ops::Range<usize>,
    dst: &mut [u8],
) {
    let cols: Vec<usize> = range.collect();
    decode::transpose_bytes(width, src, channels, samples, &cols, dst);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_the_transpose_for_every_width_and_split() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for width in [1usize, 2, 4, 8] {
            // Ragged channels and samples; the last case is split over threads.
            for (channels, samples) in [
                (1, 1),
                (3, 17),
                (19, 45),
                (37, 3 * MIN_FRAMES_PER_THREAD + 5),
            ] {
                let src: Vec<u8> = (0..channels * samples * width)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        x as u8
                    })
                    .collect();
                let mut dst = vec![0u8; src.len()];
                to_frames(width, &src, channels, samples, &mut dst);
                for c in 0..channels {
                    for s in 0..samples {
                        let from = (c * samples + s) * width;
                        let to = (s * channels + c) * width;
                        assert_eq!(
                            dst[to..to + width],
                            src[from..from + width],
                            "width {width}, {channels} × {samples}: channel {c} sample {s}"
                        );
                    }
                }
            }
        }
    }
}
