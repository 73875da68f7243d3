//! Which windows whitening's covariance is fitted on: a seeded, deterministic choice.
//!
//! Each segment is cut into whole windows of `window_samples` on a grid that starts at a
//! seeded offset into the segment (below one window's remainder); `windows` of all these slots
//! are drawn without replacement (a partial Fisher–Yates shuffle driven by SplitMix64 from
//! `seed`), so every slot is equally likely (segments in proportion to their length), windows
//! never overlap and never cross a segment's end, and they come back sorted. When the
//! recording holds fewer slots than `windows`, all of them are taken; when no segment holds a
//! whole window, each non-empty segment is one window (the first `windows`). The same
//! recording layout and spec always give the same windows (SpikeInterface draws 20 chunks of
//! 500 ms per segment, overlapping, unseeded by default).
//!
//! With `every = k` the choice is Kilosort4's instead (`get_whitening_matrix`, `nskip = 25`:
//! `for j in range(0, n_batches - 1, nskip)`): each segment is cut into windows of
//! `window_samples` from its start, the last one (whole or not) is left out, and windows 0, k,
//! 2k, … of the rest are taken, at most `windows` in all; a recording where no segment holds
//! more than one window falls back as above.

use std::ops::Range;

use dspk_types::{FitSpec, RecordingInfo};

/// SplitMix64 (Steele, Lea and Flood 2014): small, fast, and the same everywhere.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value below `bound` (> 0), by the high half of a 128-bit product.
    fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(bound)) >> 64) as u64
    }
}

/// The windows (recording sample ranges) the covariance of `info` is fitted on, as `fit` says;
/// see the module docs for the rule.
pub fn fit_windows(info: &RecordingInfo, fit: &FitSpec) -> Vec<Range<u64>> {
    let want = fit.windows as usize;
    let size = fit.window_samples;
    let segments: Vec<Range<u64>> = info
        .segments()
        .ranges()
        .filter(|r| r.end > r.start)
        .collect();
    if want == 0 || size == 0 {
        return Vec::new();
    }
    if let Some(every) = fit.every {
        let every = usize::try_from(every.max(1)).unwrap_or(usize::MAX);
        let mut taken: Vec<Range<u64>> = segments
            .iter()
            .flat_map(|seg| {
                // Kilosort's batches of the segment, the last one left out.
                let eligible = (seg.end - seg.start).div_ceil(size) - 1;
                (0..eligible).step_by(every).map(move |j| {
                    let start = seg.start + j * size;
                    start..start + size
                })
            })
            .take(want)
            .collect();
        if taken.is_empty() {
            taken = segments.into_iter().take(want).collect();
        }
        return taken;
    }
    let mut rng = SplitMix64(fit.seed);
    let mut slots: Vec<Range<u64>> = Vec::new();
    for seg in &segments {
        let len = seg.end - seg.start;
        let whole = len / size;
        if whole == 0 {
            continue;
        }
        let offset = rng.below(len % size + 1);
        slots.extend((0..whole).map(|k| {
            let start = seg.start + offset + k * size;
            start..start + size
        }));
    }
    if slots.is_empty() {
        return segments.into_iter().take(want).collect();
    }
    let take = want.min(slots.len());
    for i in 0..take {
        let j = i + rng.below((slots.len() - i) as u64) as usize;
        slots.swap(i, j);
    }
    slots.truncate(take);
    slots.sort_by_key(|r| r.start);
    slots
}
