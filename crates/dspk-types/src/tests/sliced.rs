//! Tests of sliced recordings: construction checks, start times, and reads against hand
//! indexing (a property test over random slices of slices).

use proptest::prelude::*;

use super::*;
use crate::{MemoryRecording, SampleFormat, SampleRate, SyntheticRecording};

fn memory(channels: usize, samples: usize) -> Arc<dyn RecordingSource> {
    let rate = SampleRate::new(30_000.0).unwrap();
    let data = (0..channels)
        .map(|c| (0..samples).map(|t| (c * 100_000 + t) as f32).collect())
        .collect();
    Arc::new(MemoryRecording::from_channels("mem", rate, data).unwrap())
}

/// The synthetic recording with time-major native reads (as a SpikeGLX file has): a parent
/// whose native order a slice must keep.
struct Interleaved(SyntheticRecording);

impl Interleaved {
    /// Transposes `read`'s channel-major values of every channel into time-major frames.
    fn interleave<T: Copy + Default>(
        &self,
        samples: Range<u64>,
        out: &mut [T],
        read: impl FnOnce(&[usize], Range<u64>, &mut [T]) -> DspResult<()>,
        per_value: usize,
    ) -> DspResult<MemoryOrder> {
        let count = self.0.info().channel_count();
        let all: Vec<usize> = (0..count).collect();
        let n = (samples.end - samples.start) as usize;
        let mut rows = vec![T::default(); out.len()];
        read(&all, samples, &mut rows)?;
        for c in 0..count {
            for t in 0..n {
                let (from, to) = ((c * n + t) * per_value, (t * count + c) * per_value);
                out[to..to + per_value].copy_from_slice(&rows[from..from + per_value]);
            }
        }
        Ok(MemoryOrder::TimeMajor)
    }
}

impl RecordingSource for Interleaved {
    fn info(&self) -> &RecordingInfo {
        self.0.info()
    }
    fn read(&self, channels: &[usize], samples: Range<u64>, out: &mut [f32]) -> DspResult<()> {
        self.0.read(channels, samples, out)
    }
    fn read_stored(
        &self,
        channels: &[usize],
        samples: Range<u64>,
        out: &mut [u8],
    ) -> DspResult<()> {
        self.0.read_stored(channels, samples, out)
    }
    fn read_native(&self, samples: Range<u64>, out: &mut [f32]) -> DspResult<MemoryOrder> {
        self.interleave(samples, out, |c, s, o| self.0.read(c, s, o), 1)
    }
    fn read_stored_native(&self, samples: Range<u64>, out: &mut [u8]) -> DspResult<MemoryOrder> {
        self.interleave(samples, out, |c, s, o| self.0.read_stored(c, s, o), 2)
    }
    fn native_stored_order(&self) -> MemoryOrder {
        MemoryOrder::TimeMajor
    }
}

#[test]
fn construction_refuses_bad_ranges_and_channels() {
    let parent = memory(4, 100);
    assert_eq!(
        SlicedRecording::new(parent.clone(), 50..101, None).unwrap_err(),
        DspError::SampleRange {
            start: 50,
            end: 101,
            total: 100
        }
    );
    #[expect(
        clippy::reversed_empty_ranges,
        reason = "a reversed range is the bad input under test"
    )]
    let reversed = 60..50;
    assert_eq!(
        SlicedRecording::new(parent.clone(), reversed, None).unwrap_err(),
        DspError::SampleRange {
            start: 60,
            end: 50,
            total: 100
        }
    );
    assert_eq!(
        SlicedRecording::new(parent.clone(), 0..10, Some(vec![0, 4])).unwrap_err(),
        DspError::InvalidChannel { index: 4, count: 4 }
    );
    assert!(matches!(
        SlicedRecording::new(parent.clone(), 0..10, Some(vec![])),
        Err(DspError::InvalidConfig(m)) if m.contains("at least one channel")
    ));
    // Empty ranges and the whole recording are fine.
    assert_eq!(
        SlicedRecording::new(parent.clone(), 100..100, None)
            .unwrap()
            .info()
            .samples,
        0
    );
    assert_eq!(
        SlicedRecording::new(parent, 0..100, None)
            .unwrap()
            .info()
            .samples,
        100
    );
}

#[test]
fn start_times_add_exactly_and_info_follows_the_selection() {
    // A parent that starts at 1/3 s, at 30 kHz; a slice from sample 7 starts at 1/3 + 7/30000 s.
    let rate = SampleRate::new(30_000.0).unwrap();
    let mut info = crate::RecordingInfo::new(
        "p",
        3,
        1000,
        rate,
        SampleFormat::F32,
        MemoryOrder::ChannelMajor,
    );
    info.start_time = RationalTime::new(1, 3).unwrap();
    info.channels[2].gain = 4.0;
    info.metadata.insert("probe".into(), "np".into());
    let parent: Arc<dyn RecordingSource> =
        Arc::new(MemoryRecording::new(info, vec![1.0; 3000]).unwrap());
    let slice = SlicedRecording::new(parent, 7..907, Some(vec![2, 0])).unwrap();
    assert_eq!(
        slice.info().start_time,
        RationalTime::new(10_000 + 7, 30_000).unwrap()
    );
    assert_eq!(slice.info().samples, 900);
    assert_eq!(slice.info().channels[0].name, "ch2");
    assert_eq!(slice.info().channels[0].gain, 4.0);
    assert_eq!(slice.info().channels[1].name, "ch0");
    assert_eq!(slice.info().metadata["probe"], "np");
    assert_eq!(slice.sample_offset(), 7);
    assert_eq!(slice.parent_channels(), vec![2, 0]);
    // Nested: offsets and start times compose.
    let inner = SlicedRecording::new(Arc::new(slice), 93..900, Some(vec![1])).unwrap();
    assert_eq!(
        inner.info().start_time,
        RationalTime::new(10_000 + 100, 30_000).unwrap()
    );
    assert_eq!(inner.info().channels[0].name, "ch0");
}

#[test]
fn slices_of_a_time_major_source_keep_its_native_order() {
    let syn: Arc<dyn RecordingSource> =
        Arc::new(Interleaved(SyntheticRecording::neuropixels(10_000)));
    let all = SlicedRecording::new(syn.clone(), 100..200, None).unwrap();
    let mut out = vec![0f32; 384 * 100];
    assert_eq!(
        all.read_native(0..100, &mut out).unwrap(),
        MemoryOrder::TimeMajor
    );
    // The same channels listed in order are "all channels".
    let listed = SlicedRecording::new(syn.clone(), 100..200, Some((0..384).collect())).unwrap();
    assert_eq!(
        listed.read_native(0..100, &mut out).unwrap(),
        MemoryOrder::TimeMajor
    );
    let some = SlicedRecording::new(syn.clone(), 100..200, Some(vec![5, 4])).unwrap();
    let mut out = vec![0f32; 2 * 100];
    assert_eq!(
        some.read_native(0..100, &mut out).unwrap(),
        MemoryOrder::ChannelMajor
    );

    // Stored bytes too: with every channel the parent's frames of the shifted range, bit for
    // bit; with some channels (reordered) the parent's frames keeping those channels.
    for view in [&all, &listed] {
        assert_eq!(view.native_stored_order(), MemoryOrder::TimeMajor);
        let mut got = vec![0u8; 384 * 2 * 37];
        assert_eq!(
            view.read_stored_native(13..50, &mut got).unwrap(),
            MemoryOrder::TimeMajor
        );
        let mut want = vec![0u8; 384 * 2 * 37];
        syn.read_stored_native(113..150, &mut want).unwrap();
        assert!(got == want, "the slice's frames differ from the parent's");
        // Past the slice's end (inside the parent) is refused.
        let mut past = vec![0u8; 384 * 2 * 2];
        assert!(view.read_stored_native(99..101, &mut past).is_err());
    }
    assert_eq!(some.native_stored_order(), MemoryOrder::TimeMajor);
    let mut got = vec![0u8; 2 * 2 * 37];
    assert_eq!(
        some.read_stored_native(13..50, &mut got).unwrap(),
        MemoryOrder::TimeMajor
    );
    let mut rows = vec![0u8; 2 * 2 * 37];
    syn.read_stored(&[5, 4], 113..150, &mut rows).unwrap();
    let frames: Vec<u8> = (0..37)
        .flat_map(|t| [0, 1].map(|c| [rows[(c * 37 + t) * 2], rows[(c * 37 + t) * 2 + 1]]))
        .flatten()
        .collect();
    assert!(got == frames, "the channel subset's frames differ");
    assert!(
        some.read_stored_native(13..50, &mut got[..2 * 2 * 36])
            .is_err()
    );
}

/// A probe's signal channels without its last (a SpikeGLX sync word): a run of consecutive
/// parent channels, read as the parent's frames cut down, over several of the pieces the
/// compaction reads in, at an offset, and through every conformance check.
#[test]
fn a_leading_run_of_a_time_major_source_reads_as_its_frames_cut_down() {
    let syn: Arc<dyn RecordingSource> =
        Arc::new(Interleaved(SyntheticRecording::neuropixels(5_000)));
    let view = SlicedRecording::new(syn.clone(), 7..5_000, Some((0..383).collect())).unwrap();
    assert_eq!(view.native_stored_order(), MemoryOrder::TimeMajor);
    let n = 2_500;
    assert!(
        n * 384 * 2 > 2 * COMPACT_PIECE_BYTES,
        "the read spans several pieces"
    );
    let mut got = vec![0u8; n * 383 * 2 + 5];
    got[n * 383 * 2..].fill(0xAB);
    assert_eq!(
        view.read_stored_native(1_000..1_000 + n as u64, &mut got)
            .unwrap(),
        MemoryOrder::TimeMajor
    );
    let mut whole = vec![0u8; n * 384 * 2];
    syn.read_stored_native(1_007..1_007 + n as u64, &mut whole)
        .unwrap();
    let want: Vec<u8> = whole
        .chunks_exact(384 * 2)
        .flat_map(|f| f[..383 * 2].to_vec())
        .collect();
    assert!(got[..n * 383 * 2] == want[..], "the cut frames differ");
    assert!(
        got[n * 383 * 2..].iter().all(|&b| b == 0xAB),
        "wrote past the frames"
    );
    crate::conformance::check_all(&view, 0x5EED);
}

proptest! {
    #[test]
    fn nested_slices_read_what_hand_indexing_gives(
        seed in any::<u64>(),
        depth in 1usize..4,
    ) {
        let mut rng = crate::conformance::SplitMix64::new(seed);
        let (channels, samples) = (6usize, 500usize);
        let mut src = memory(channels, samples);
        // What each current channel and sample is in the base recording.
        let mut chan_map: Vec<usize> = (0..channels).collect();
        let mut offset = 0u64;
        for _ in 0..depth {
            let total = src.info().samples;
            let a = rng.below(total + 1);
            let b = rng.in_range(a..total + 1);
            let pick = rng.below(2) == 0;
            let list: Option<Vec<usize>> = pick.then(|| {
                (0..1 + rng.below(6)).map(|_| rng.below(chan_map.len() as u64) as usize).collect()
            });
            src = Arc::new(SlicedRecording::new(src, a..b, list.clone()).unwrap());
            if let Some(list) = list {
                chan_map = list.iter().map(|&c| chan_map[c]).collect();
            }
            offset += a;
        }
        let n = src.info().samples;
        let a = rng.below(n + 1);
        let b = rng.in_range(a..n + 1);
        let picks: Vec<usize> = (0..1 + rng.below(4)).map(|_| rng.below(chan_map.len() as u64) as usize).collect();
        let len = (b - a) as usize;
        let mut out = vec![0f32; picks.len() * len];
        src.read(&picks, a..b, &mut out).unwrap();
        for (row, &c) in picks.iter().enumerate() {
            for s in 0..len {
                let want = (chan_map[c] * 100_000) as f32 + (offset + a + s as u64) as f32;
                prop_assert_eq!(out[row * len + s], want);
            }
        }
        let expected_start = RationalTime::new(u128::from(offset), 30_000).unwrap();
        prop_assert_eq!(src.info().start_time, expected_start);
    }
}
