//! Tests of what an opened recording keeps: the synthetic recording behind its source.

use std::sync::Arc;

use dspk_types::{RateChoice, SampleRate, SyntheticConfig};

use super::*;

#[test]
fn the_synthetic_recording_is_kept_through_every_narrowing() {
    let config = SyntheticConfig::default()
        .with_samples(12_000)
        .with_channels(4, vec![1], vec![]);
    let opened = OpenedRecording::synthetic(config).expect("valid");
    let whole = |o: &OpenedRecording| {
        o.as_synthetic()
            .expect("the synthetic recording")
            .planted_spikes(0..12_000)
            .expect("in range")
    };
    let truth = whole(&opened);
    // 5 spikes/s: two 6000-sample bins on each of 3 live channels.
    assert_eq!(truth.len(), 6);
    let rate = SampleRate::from_ratio(60_001, 2).expect("a rate");
    let narrowed = opened
        .clone()
        .with_segment(0)
        .expect("its one segment")
        .with_rate(RateChoice::Hz(rate))
        .expect("a rate of the user's");
    assert_eq!(narrowed.info().samples, 12_000);
    assert_eq!(narrowed.info().sample_rate, rate, "read at another rate");
    assert_eq!(whole(&narrowed), truth);

    let other = OpenedRecording::other(Arc::clone(&opened.source), "mine");
    assert!(other.as_synthetic().is_none());
}
