//! Tests of the planted-spike ground truth against the recording itself: the recording minus
//! the same one without spikes is non-zero exactly on the listed spikes, deepest at their
//! troughs by their depths.

use crate::conformance::SplitMix64;
use crate::test_support::fresh_seed;
use crate::{DspError, RecordingSource, SyntheticConfig, SyntheticRecording};

/// 8 channels (2 dead, 5 noisy) of 3 s at 30 kHz with 50 spikes/s, from `seed`.
fn config(seed: u64) -> SyntheticConfig {
    let mut c = SyntheticConfig::default()
        .with_seed(seed)
        .with_samples(90_000)
        .with_channels(8, vec![2], vec![5]);
    c.spike_rate_hz = 50.0;
    c
}

fn stored(rec: &SyntheticRecording, channel: usize) -> Vec<i32> {
    let n = rec.info().samples as usize;
    let mut bytes = vec![0u8; 2 * n];
    rec.read_stored(&[channel], 0..n as u64, &mut bytes)
        .expect("in-range read");
    bytes
        .chunks_exact(2)
        .map(|b| i32::from(i16::from_le_bytes([b[0], b[1]])))
        .collect()
}

/// The documented waveform in `f64`, independently of the generator: a trough 0.6 ms in and a
/// repolarisation, 2 ms at `rate_hz`, scaled so that its minimum is -1.
fn waveform(rate_hz: f64) -> Vec<f64> {
    let len = (0.002 * rate_hz).round() as usize;
    let raw: Vec<f64> = (0..len)
        .map(|k| {
            let ms = k as f64 * 1000.0 / rate_hz;
            -(-((ms - 0.6) / 0.15).powi(2)).exp() + 0.35 * (-((ms - 1.1) / 0.3).powi(2)).exp()
        })
        .collect();
    let depth = raw.iter().fold(0.0f64, |m, &v| m.min(v));
    raw.iter().map(|v| v / -depth).collect()
}

#[test]
fn the_recording_minus_its_spikeless_twin_is_the_listed_spikes() {
    let seed = fresh_seed("the_recording_minus_its_spikeless_twin_is_the_listed_spikes");
    let with = SyntheticRecording::new(config(seed)).expect("valid");
    let mut cfg = config(seed);
    cfg.spike_rate_hz = 0.0;
    let without = SyntheticRecording::new(cfg).expect("valid");
    let spikes = with.planted_spikes(0..90_000).expect("in range");
    let wave = waveform(30_000.0);
    let trough = wave
        .iter()
        .enumerate()
        .fold(
            (0, 0.0),
            |(bi, bv), (i, &v)| if v < bv { (i, v) } else { (bi, bv) },
        )
        .0;
    assert_eq!(with.spike_trough_offset(), Some(trough));
    let (lo, hi) = (
        (50.0f64 / 0.195).round() as u32,
        (150.0f64 / 0.195).round() as u32,
    );
    for c in 0..8 {
        let diff: Vec<i32> = stored(&with, c)
            .iter()
            .zip(stored(&without, c))
            .map(|(a, b)| a - b)
            .collect();
        let mine: Vec<_> = spikes.iter().filter(|s| s.channel == c).collect();
        if c == 2 {
            assert!(
                mine.is_empty(),
                "dead channel 2 lists {} spikes",
                mine.len()
            );
            assert!(diff.iter().all(|&d| d == 0), "dead channel 2 changed");
            continue;
        }
        // One spike per 600-sample bin: 150 bins, each wholly inside the recording.
        assert_eq!(mine.len(), 150, "channel {c}");
        let mut covered = vec![false; diff.len()];
        for s in &mine {
            assert!((lo..=hi).contains(&s.depth_counts), "{s:?}");
            assert_eq!(s.trough, s.start + trough as u64, "{s:?}");
            assert!((s.depth_uv - f64::from(s.depth_counts) * 0.195).abs() < 1e-4);
            let span = s.start as usize..s.start as usize + wave.len();
            let d = f64::from(s.depth_counts);
            for (k, t) in span.clone().enumerate() {
                covered[t] = true;
                // Rounding the sum and the spikeless value each moves them by at most half a
                // count.
                let expect = wave[k] * d;
                assert!(
                    (f64::from(diff[t]) - expect).abs() <= 1.0 + 1e-3,
                    "channel {c} sample {t}: {} against {expect} ({s:?}, seed {seed})",
                    diff[t]
                );
            }
            let min_at = span.clone().min_by_key(|&t| (diff[t], t)).expect("a span");
            assert_eq!(min_at as u64, s.trough, "{s:?}, seed {seed}");
            assert!((diff[min_at] + s.depth_counts as i32).abs() <= 1, "{s:?}");
        }
        for (t, (&d, &cov)) in diff.iter().zip(&covered).enumerate() {
            assert!(
                cov || d == 0,
                "channel {c} sample {t} differs by {d} off every spike"
            );
        }
    }
}

#[test]
fn any_range_lists_the_spikes_of_the_whole_that_overlap_it() {
    let seed = fresh_seed("any_range_lists_the_spikes_of_the_whole_that_overlap_it");
    let rec = SyntheticRecording::new(config(seed)).expect("valid");
    let whole = rec.planted_spikes(0..90_000).expect("in range");
    let wlen = rec.spike_samples() as u64;
    let mut rng = SplitMix64::new(seed);
    let mut ranges: Vec<_> = (0..40)
        .map(|_| {
            let a = rng.below(90_001);
            let b = rng.below(90_001);
            a.min(b)..a.max(b)
        })
        .collect();
    // Ranges cutting a spike: starting and ending inside one.
    for s in whole.iter().step_by(97) {
        ranges.push(s.start + 5..s.start + wlen - 3);
        ranges.push(s.start + 1..90_000);
        ranges.push(0..s.trough);
    }
    for r in ranges {
        let listed = rec.planted_spikes(r.clone()).expect("in range");
        let expect: Vec<_> = whole
            .iter()
            .filter(|s| s.start < r.end && s.start + wlen > r.start)
            .copied()
            .collect();
        assert_eq!(listed, expect, "range {r:?}, seed {seed}");
    }
    // Tiling the recording at random cuts lists every spike, a cut one in both neighbours.
    let mut cuts: Vec<u64> = (0..9).map(|_| rng.below(90_001)).collect();
    cuts.extend([0, 90_000]);
    cuts.sort_unstable();
    let mut joined: Vec<_> = cuts
        .windows(2)
        .flat_map(|w| rec.planted_spikes(w[0]..w[1]).expect("in range"))
        .collect();
    joined.sort_by_key(|s| (s.trough, s.channel));
    joined.dedup();
    assert_eq!(joined, whole, "cuts {cuts:?}");
}

#[test]
fn the_default_probe_plants_five_spikes_a_second_on_each_live_channel() {
    let rec = SyntheticRecording::default_probe();
    let spikes = rec.planted_spikes(0..rec.info().samples).expect("in range");
    // 60 s in bins of 6000 samples: 300 per channel, on 384 - 2 dead channels.
    assert_eq!(spikes.len(), 300 * 382);
    assert!(spikes.iter().all(|s| s.channel != 3 && s.channel != 190));
    assert!(
        spikes
            .windows(2)
            .all(|w| (w[0].trough, w[0].channel) < (w[1].trough, w[1].channel))
    );
    assert!(
        spikes
            .iter()
            .all(|s| (256..=769).contains(&s.depth_counts) && s.trough < rec.info().samples)
    );
}

#[test]
fn spikeless_recordings_list_none_and_bad_ranges_are_refused() {
    let mut cfg = config(1);
    cfg.spike_rate_hz = 0.0;
    let rec = SyntheticRecording::new(cfg).expect("valid");
    assert_eq!(rec.planted_spikes(0..90_000).expect("in range"), vec![]);
    assert_eq!(rec.spike_trough_offset(), None);
    let rec = SyntheticRecording::new(config(1)).expect("valid");
    assert_eq!(rec.planted_spikes(10..10).expect("empty"), vec![]);
    for (start, end) in [(5, 4), (0, 90_001)] {
        match rec.planted_spikes(start..end) {
            Err(DspError::SampleRange {
                start: s,
                end: e,
                total: 90_000,
            }) => assert_eq!((s, e), (start, end)),
            other => panic!("{start}..{end}: {other:?}"),
        }
    }
}
