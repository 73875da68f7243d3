use std::sync::Arc;

use proptest::prelude::*;

use super::*;
use crate::test_support::fresh_seed;
use crate::{ChunkSchedule, EdgeMode, MemoryRecording, SampleFormat, WindowLoader};

const CH: usize = 3;

/// splitmix64: fresh values from a seed, without a dependency.
struct StdRng(u64);

impl StdRng {
    fn seed_from_u64(seed: u64) -> Self {
        Self(seed)
    }

    fn value(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        // −100..100 in steps of 1/1024.
        ((z >> 40) as i64 % 204_800 - 102_400) as f32 / 1024.0
    }
}

fn rate() -> SampleRate {
    SampleRate::from_ratio(1000, 1).unwrap()
}

/// A part of `samples` samples placed at clock sample `first` at `rate`, random values.
fn part(
    name: &str,
    samples: u64,
    first: u64,
    rate: SampleRate,
    rng: &mut StdRng,
) -> (Arc<dyn RecordingSource>, Vec<f32>) {
    let mut info = RecordingInfo::new(
        name,
        CH,
        samples,
        rate,
        SampleFormat::F32,
        MemoryOrder::ChannelMajor,
    );
    info.start_time = RationalTime::from_samples(first, rate).unwrap();
    let data: Vec<f32> = (0..CH * samples as usize).map(|_| rng.value()).collect();
    (
        Arc::new(MemoryRecording::new(info, data.clone()).unwrap()),
        data,
    )
}

/// Channel `c` of channel-major `data` of `n` samples.
fn channel(data: &[f32], n: usize, c: usize) -> &[f32] {
    &data[c * n..(c + 1) * n]
}

#[test]
fn contiguous_parts_are_one_segment_read_across_the_seam() {
    let mut rng = StdRng::seed_from_u64(fresh_seed("concat contiguous"));
    let (a, da) = part("t0", 100, 500, rate(), &mut rng);
    let (b, db) = part("t1", 60, 600, rate(), &mut rng);
    let (c, dc) = part("t2", 40, 660, rate(), &mut rng);
    let cat = ConcatRecording::new(vec![a, b, c], ConcatOptions::default()).unwrap();
    let info = cat.info();
    assert_eq!((info.samples, info.segments.is_none()), (200, true));
    assert_eq!(info.start_time, RationalTime::new(1, 2).unwrap());
    // Every channel, 90..170: the end of t0, all of t1, the start of t2.
    let mut out = vec![0f32; CH * 80];
    cat.read(&[0, 1, 2], 90..170, &mut out).unwrap();
    for ch in 0..CH {
        let mut want = channel(&da, 100, ch)[90..].to_vec();
        want.extend_from_slice(channel(&db, 60, ch));
        want.extend_from_slice(&channel(&dc, 40, ch)[..10]);
        assert_eq!(&out[ch * 80..(ch + 1) * 80], &want[..], "channel {ch}");
    }
    // The stored bytes agree with the values (gain 1, offset 0).
    let mut bytes = vec![0u8; 2 * 80 * 4];
    cat.read_stored(&[2, 0], 90..170, &mut bytes).unwrap();
    let got: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(&got[..80], &out[2 * 80..]);
    assert_eq!(&got[80..], &out[..80]);
}

#[test]
fn a_gap_starts_a_segment_or_is_zero_filled() {
    let mut rng = StdRng::seed_from_u64(fresh_seed("concat gap"));
    let (a, da) = part("t0", 100, 0, rate(), &mut rng);
    let (b, db) = part("t1", 50, 130, rate(), &mut rng);
    let split = ConcatRecording::new(vec![a.clone(), b.clone()], ConcatOptions::default()).unwrap();
    let segs = split.info().segments();
    let ranges: Vec<_> = segs.ranges().collect();
    assert_eq!(ranges, vec![0..100, 100..150]);
    assert_eq!(segs.gaps()[0].samples, 30);
    assert_eq!(
        segs.list()[1].start_time,
        RationalTime::new(130, 1000).unwrap()
    );
    let mut out = vec![0f32; 20];
    let err = split.read(&[0], 90..110, &mut out).unwrap_err();
    assert!(
        matches!(err, DspError::CrossesSegment { segment: 0, .. }),
        "{err}"
    );

    let zeros = ConcatOptions {
        gaps: GapFill::Zeros,
        ..Default::default()
    };
    let filled = ConcatRecording::new(vec![a, b], zeros).unwrap();
    assert_eq!(filled.info().samples, 180);
    assert!(filled.info().segments.is_none());
    assert_eq!(filled.zero_filled_samples(), 30);
    let mut out = vec![0f32; 100];
    filled.read(&[1], 80..180, &mut out).unwrap();
    assert_eq!(&out[..20], &channel(&da, 100, 1)[80..]);
    assert!(out[20..50].iter().all(|&v| v == 0.0));
    assert_eq!(&out[50..], channel(&db, 50, 1));
}

#[test]
fn overlapping_parts_and_unlike_parts_are_refused_by_name() {
    let mut rng = StdRng::seed_from_u64(fresh_seed("concat refuse"));
    let (a, _) = part("t0", 100, 0, rate(), &mut rng);
    let (b, _) = part("t1", 50, 90, rate(), &mut rng);
    let err = ConcatRecording::new(vec![a.clone(), b], ConcatOptions::default()).unwrap_err();
    assert!(
        err.to_string()
            .contains("t1: segment 0 starts at clock sample 90, before the end (100) of t0"),
        "{err}"
    );
    let mut info = RecordingInfo::new(
        "t9",
        2,
        10,
        rate(),
        SampleFormat::F32,
        MemoryOrder::ChannelMajor,
    );
    info.start_time = RationalTime::new(1, 10).unwrap();
    let two: Arc<dyn RecordingSource> =
        Arc::new(MemoryRecording::new(info, vec![0.0; 20]).unwrap());
    let err = ConcatRecording::new(vec![a, two], ConcatOptions::default()).unwrap_err();
    assert!(
        err.to_string()
            .contains("t9 cannot continue t0: it has 2 channels, not 3"),
        "{err}"
    );
    assert!(ConcatRecording::new(Vec::new(), ConcatOptions::default()).is_err());
}

#[test]
fn a_rate_off_by_94_ppm_needs_a_tolerance_and_both_messages_state_the_drift() {
    let mut rng = StdRng::seed_from_u64(fresh_seed("concat rates"));
    let nominal = SampleRate::from_ratio(30_000, 1).unwrap();
    // 94.2 ppm fast: an hour of samples at 30 kHz lasts 339.1 ms less at this rate.
    let fast = SampleRate::from_ratio(15_001_413, 500).unwrap();
    let (a, _) = part("t0", 3_000, 0, nominal, &mut rng);
    let (b, _) = part("t1", 3_000, 3_000, fast, &mut rng);
    let err = ConcatRecording::new(vec![a.clone(), b.clone()], ConcatOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("+94.2 ppm, 339.1 ms per hour"), "{err}");
    assert!(err.contains("give a tolerance"), "{err}");
    let tight = ConcatOptions {
        rate_tolerance_ppm: Some(50.0),
        ..Default::default()
    };
    let err = ConcatRecording::new(vec![a.clone(), b.clone()], tight)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("339.1 ms per hour") && err.contains("tolerance of 50 ppm"),
        "{err}"
    );
    let loose = ConcatOptions {
        rate_tolerance_ppm: Some(100.0),
        ..Default::default()
    };
    let cat = ConcatRecording::new(vec![a, b], loose).unwrap();
    let warning = &cat.warnings()[0];
    assert!(
        warning.contains("+94.2 ppm, 339.1 ms per hour"),
        "{warning}"
    );
    assert!(
        warning.contains("accepted (tolerance 100 ppm)"),
        "{warning}"
    );
    // The drift over the 0.2 s of the two: 339.1 ms/h × 0.2 s / 3600 s.
    assert!(warning.contains("0.0 ms over the 0.2 s"), "{warning}");
    assert_eq!(cat.info().sample_rate, nominal);
}

#[test]
fn each_part_its_own_segment_when_asked() {
    let mut rng = StdRng::seed_from_u64(fresh_seed("concat per part"));
    let (a, _) = part("r1", 100, 0, rate(), &mut rng);
    let (b, _) = part("r2", 50, 100, rate(), &mut rng);
    let (c, _) = part("r3", 70, 20, rate(), &mut rng);
    let each = ConcatOptions {
        part_per_segment: true,
        ..Default::default()
    };
    let cat = ConcatRecording::new(vec![a, b, c], each).unwrap();
    let segs = cat.info().segments();
    let got: Vec<_> = segs
        .list()
        .iter()
        .map(|s| (s.start, s.samples, s.first_sample))
        .collect();
    assert_eq!(got, vec![(0, 100, 0), (100, 50, 100), (150, 70, 20)]);
    // The clock restarted before r3.
    assert_eq!(segs.gaps()[1].samples, -130);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Over random layouts of parts and gaps, halo windows tile each segment exactly, never
    /// read outside it, and the loader's windows equal the parts' own samples.
    #[test]
    fn windows_over_random_segments_tile_each_and_never_cross(
        lengths in prop::collection::vec(1u64..300, 1..6),
        gaps in prop::collection::vec(prop_oneof![Just(0u64), 1u64..50], 6),
        batch in 1u64..120,
        halo in 0u64..40,
        seed in any::<u64>(),
    ) {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut clock = 0u64;
        let mut parts = Vec::new();
        let mut truth: Vec<Vec<f32>> = vec![Vec::new(); CH];
        for (k, &len) in lengths.iter().enumerate() {
            clock += if k == 0 { 0 } else { gaps[k] };
            let (p, d) = part(&format!("p{k}"), len, clock, rate(), &mut rng);
            for (c, t) in truth.iter_mut().enumerate() {
                t.extend_from_slice(channel(&d, len as usize, c));
            }
            parts.push(p);
            clock += len;
        }
        let cat = ConcatRecording::new(parts, ConcatOptions::default()).unwrap();
        let info = cat.info();
        let segs = info.segments();
        let schedule = ChunkSchedule::for_recording(info, 0..info.samples, batch, halo, halo).unwrap();
        let mut owned = vec![0u32; info.samples as usize];
        for w in schedule.windows() {
            let seg = segs.list()[segs.containing(w.valid_global.start)].range();
            prop_assert!(seg.start <= w.read_global.start && w.read_global.end <= seg.end);
            prop_assert!(w.read_global.start == seg.start.max(w.valid_global.start.saturating_sub(halo)));
            prop_assert!(w.read_global.end == seg.end.min(w.valid_global.end + halo));
            for i in w.valid_global.clone() {
                owned[i as usize] += 1;
            }
        }
        prop_assert!(owned.iter().all(|&n| n == 1));
        let loader = WindowLoader::new(&cat);
        let mut seen = 0;
        loader.stream(schedule.windows(), |w, data| {
            let n = w.read_len();
            for (c, t) in truth.iter().enumerate() {
                let want = &t[w.read_global.start as usize..w.read_global.end as usize];
                assert_eq!(&data[c * n..(c + 1) * n], want);
            }
            seen += 1;
            Ok(())
        }).unwrap();
        prop_assert_eq!(seen, schedule.len());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A segment's ends are padded exactly as the ends of a recording holding only that
    /// segment (whose padding equals `numpy.pad` / scipy's `odd_ext`, see `edge/tests.rs`):
    /// the loader's padded windows of a segmented schedule equal those of each segment alone.
    #[test]
    fn segment_ends_are_padded_as_recording_ends(
        lengths in prop::collection::vec(1u64..200, 2..5),
        batch in 1u64..80,
        halo in 0u64..30,
        mode in prop::sample::select(EdgeMode::ALL.to_vec()),
        seed in any::<u64>(),
    ) {
        let mut rng = StdRng::seed_from_u64(seed);
        let (mut clock, mut parts, mut datas) = (0u64, Vec::new(), Vec::new());
        for (k, &len) in lengths.iter().enumerate() {
            let (p, d) = part(&format!("p{k}"), len, clock, rate(), &mut rng);
            parts.push(p);
            datas.push((len, d));
            clock += len + 7;
        }
        let cat = ConcatRecording::new(parts, ConcatOptions::default()).unwrap();
        let info = cat.info();
        let plain = ChunkSchedule::for_recording(info, 0..info.samples, batch, halo, halo).unwrap();
        let Ok(padded) = plain.with_edge(mode) else {
            // Refused (reflect and odd need more data than a short segment has): each
            // segment alone must refuse too.
            let refused = datas.iter().any(|(len, _)| {
                ChunkSchedule::full_recording(*len, batch, halo, halo)
                    .unwrap()
                    .with_edge(mode)
                    .is_err()
            });
            prop_assert!(refused);
            return Ok(());
        };
        let mut got: Vec<Vec<f32>> = Vec::new();
        WindowLoader::new(&cat).stream(padded.windows(), |_, d| {
            got.push(d.to_vec());
            Ok(())
        }).unwrap();
        let mut want: Vec<Vec<f32>> = Vec::new();
        for (len, data) in &datas {
            let mut one = RecordingInfo::new("one", CH, *len, rate(), SampleFormat::F32, MemoryOrder::ChannelMajor);
            one.start_time = RationalTime::ZERO;
            let alone = MemoryRecording::new(one, data.clone()).unwrap();
            let s = ChunkSchedule::full_recording(*len, batch, halo, halo).unwrap().with_edge(mode).unwrap();
            WindowLoader::new(&alone).stream(s.windows(), |_, d| {
                want.push(d.to_vec());
                Ok(())
            }).unwrap();
        }
        prop_assert_eq!(got, want);
    }
}

#[test]
fn parts_that_state_no_clock_join_end_to_end_in_the_order_given() {
    let mut rng = StdRng::seed_from_u64(fresh_seed("concat unclocked"));
    let unclocked = |name: &str, samples: u64, rng: &mut StdRng| {
        let (p, data) = part(name, samples, 0, rate(), rng);
        let mut info = p.info().clone();
        info.clock = Clock::Unstated;
        let p: Arc<dyn RecordingSource> =
            Arc::new(MemoryRecording::new(info, data.clone()).unwrap());
        (p, data)
    };
    let (a, da) = unclocked("a", 100, &mut rng);
    let (b, db) = unclocked("b", 50, &mut rng);
    let joined =
        ConcatRecording::new(vec![b.clone(), a.clone()], ConcatOptions::default()).unwrap();
    assert_eq!(joined.info().samples, 150);
    assert!(
        joined.info().segments.is_none(),
        "{:?}",
        joined.info().segments
    );
    assert_eq!(joined.info().clock, Clock::Unstated);
    let mut out = vec![0f32; 150];
    joined.read(&[2], 0..150, &mut out).unwrap();
    assert_eq!(&out[..50], channel(&db, 50, 2));
    assert_eq!(&out[50..], channel(&da, 100, 2));
    // After a part that states its clock, one that does not continues it; the whole states one.
    let (c, _) = part("c", 80, 1_000, rate(), &mut rng);
    let mixed = ConcatRecording::new(vec![c, a], ConcatOptions::default()).unwrap();
    assert_eq!(mixed.info().samples, 180);
    assert!(mixed.info().segments.is_none());
    assert_eq!(mixed.info().segments().list()[0].first_sample, 1_000);
    assert_eq!(mixed.info().clock, Clock::Stated);
}
