//! Tests of truth scoring on hand-made tables whose pairings are counted by hand.

use dspk_ops::Fits;
use dspk_ops::detect::{DetectSpec, Peak};
use dspk_types::{
    DspError, PipelineSpec, PlantedSpike, RecordingSource, SyntheticConfig, SyntheticRecording,
};

use super::*;
use crate::detect::Detected;
use crate::detect_report::DetectReport;

fn spike(channel: usize, trough: u64) -> PlantedSpike {
    PlantedSpike {
        channel,
        start: trough.saturating_sub(18),
        trough,
        depth_counts: 300,
        depth_uv: 58.5,
    }
}

fn peak(channel: u32, sample: u64) -> Peak {
    Peak {
        sample,
        channel,
        amplitude: -80.0,
        segment: 0,
    }
}

#[test]
fn a_peak_finds_a_spike_of_its_channel_within_the_tolerance() {
    let truth = [spike(0, 100), spike(1, 500), spike(0, 1000)];
    let peaks = [
        peak(0, 105),  // 5 after ch0's 100: found
        peak(2, 100),  // right sample, channel without spikes: false
        peak(1, 488),  // exactly 12 before ch1's 500: found
        peak(0, 1013), // 13 after ch0's 1000: out by one, false
    ];
    let s = score_peaks(&peaks, &truth, 12, 0.4);
    assert_eq!(
        s,
        TruthScore {
            planted: 3,
            found: 2,
            peaks: 4,
            false_positives: 2,
            recall: Some(2.0 / 3.0),
            precision: Some(0.5),
            tolerance_ms: 0.4,
            tolerance_samples: 12,
        }
    );
    // A peak on the wrong channel finds nothing even at the trough itself.
    let s = score_peaks(&[peak(1, 100)], &[spike(0, 100)], 12, 0.4);
    assert_eq!((s.found, s.false_positives), (0, 1));
}

#[test]
fn each_peak_and_each_spike_pair_at_most_once() {
    // Two spikes, one peak between them: one found.
    let s = score_peaks(&[peak(0, 105)], &[spike(0, 100), spike(0, 110)], 12, 0.4);
    assert_eq!((s.planted, s.found, s.false_positives), (2, 1, 0));
    assert_eq!(s.recall, Some(0.5));
    assert_eq!(s.precision, Some(1.0));
    // Two peaks on one spike: one finds it, the other is false.
    let s = score_peaks(&[peak(0, 104), peak(0, 106)], &[spike(0, 105)], 12, 0.4);
    assert_eq!((s.found, s.false_positives), (1, 1));
    assert_eq!(s.precision, Some(0.5));
    // 100 can take 90 or 111, 112 only 111: both are found only if 100 takes 90 (the nearer
    // for 100 is 90 at 10, but a greedy "nearest peak" in peak order would have to choose).
    let s = score_peaks(
        &[peak(0, 111), peak(0, 90)],
        &[spike(0, 112), spike(0, 100)],
        12,
        0.4,
    );
    assert_eq!((s.found, s.false_positives), (2, 0));
    // 100 can take 95 or 105, 90 only 95: the earliest trough takes the earliest peak.
    let s = score_peaks(
        &[peak(0, 105), peak(0, 95)],
        &[spike(0, 100), spike(0, 90)],
        5,
        0.4,
    );
    assert_eq!(s.found, 2);
    // Tolerance 0: the trough's own sample only, near sample 0 without underflow.
    let s = score_peaks(
        &[peak(0, 0), peak(0, 8)],
        &[spike(0, 0), spike(0, 7)],
        0,
        0.0,
    );
    assert_eq!((s.found, s.false_positives), (1, 1));
}

#[test]
fn nothing_planted_or_nothing_found_has_no_ratio() {
    let s = score_peaks(&[], &[], 12, 0.4);
    assert_eq!((s.recall, s.precision), (None, None));
    let s = score_peaks(&[peak(3, 7)], &[], 12, 0.4);
    assert_eq!(
        (s.recall, s.precision, s.false_positives),
        (None, Some(0.0), 1)
    );
    let s = score_peaks(&[], &[spike(3, 7)], 12, 0.4);
    assert_eq!((s.recall, s.precision), (Some(0.0), None));
}

fn detected(rec: &SyntheticRecording, peaks: Vec<Peak>) -> Detected {
    let info = rec.info();
    let noise = vec![10.0; info.channel_count()];
    let report = DetectReport::of(
        info,
        &PipelineSpec::default(),
        &DetectSpec::default(),
        &noise,
        &peaks,
        (1000, 1),
        (0.0, 0.0),
        vec![],
    )
    .expect("a duration");
    Detected {
        peaks,
        noise,
        fits: Fits::default(),
        report,
    }
}

#[test]
fn a_detection_is_scored_against_the_synthetic_recordings_spikes() {
    let mut cfg = SyntheticConfig::default()
        .with_samples(15_000)
        .with_channels(4, vec![1], vec![]);
    cfg.spike_rate_hz = 20.0;
    let rec = SyntheticRecording::new(cfg).expect("valid");
    // 1500-sample bins: 10 per live channel, 3 live channels.
    let truth = rec.planted_spikes(0..15_000).expect("in range");
    assert_eq!(truth.len(), 30);
    // Every spike but the first found, 12 samples off at most (0.4 ms at 30 kHz), plus three
    // peaks off every spike (on the dead channel, and 13 samples after a trough).
    let mut peaks: Vec<Peak> = truth[1..]
        .iter()
        .enumerate()
        .map(|(i, s)| peak(s.channel as u32, s.trough + (i as u64 % 25) - 12))
        .collect();
    peaks.push(peak(1, truth[0].trough));
    peaks.push(peak(truth[0].channel as u32, truth[0].trough + 13));
    peaks.push(peak(0, 14_999));
    let mut done = detected(&rec, peaks);
    let s = done.score_against(&rec).expect("same shape").clone();
    assert_eq!((s.planted, s.found, s.peaks), (30, 29, 32));
    assert_eq!(s.tolerance_samples, 12);
    assert_eq!(done.report.truth, Some(s));
    let text = serde_json::to_string(&done.report).expect("plain data");
    assert!(text.contains("\"recall\":0.9666"), "{text}");

    let other =
        SyntheticRecording::new(SyntheticConfig::default().with_samples(15_000)).expect("valid");
    match done.score_against(&other) {
        Err(DspError::InvalidConfig(text)) => assert_eq!(
            text,
            "ground truth of 384 channels × 15000 samples cannot score peaks of 4 channels × \
             15000 samples"
        ),
        other => panic!("{other:?}"),
    }
}
