//! `dspk_stream::detect` on the synthetic recording, scored against the spikes it planted:
//! recall and precision reported, and bounded by what the planted depths and the noise allow.
//!
//! The recording: 16 channels × 1 s at 30 kHz (seeded), 20 spikes/s on each live channel
//! (bins of 1500 samples), depths 50–150 µV, channel 3 dead, channel 9 noisy (8× the noise).
//! The synthetic recording has no probe geometry, so detection is per channel (each channel
//! its own neighbourhood); its channels' spikes are independent, so that is the right model.
//! Pipeline: a 300–6000 Hz Butterworth band-pass (order 5, zero phase), which removes the
//! 60 Hz line and keeps the spike.
//!
//! The bounds, from the model (figures from `scipy.signal` on the documented waveform and
//! noise, not from a run of dspk):
//! - the noise (10 µV RMS, low-passed by a 4-sample moving sum) is 9.0 µV RMS after the
//!   band-pass, and the in-band 3 µV sinusoid brings it to about 9.3 µV: each channel's noise
//!   level (MAD / 0.6745) lies in 8–11 µV, so the threshold (5×) is at most 55 µV;
//! - the band-pass keeps 0.93 of the trough's depth, at the trough's own sample;
//! - so a spike of at least 100 µV on a normal channel has a filtered trough of at least
//!   93 µV, 38 µV (4σ) past the threshold: missing one has odds about 3·10⁻⁵, so every such
//!   spike must be found (about 140 of them);
//! - over the depths (uniform in 50–150 µV) a normal channel's spike is found with
//!   probability above 0.85, and the noisy channel's almost never (its threshold, about
//!   370 µV, is past every depth): recall above 0.75 of all 300 planted;
//! - the filtered waveform has no second dip deeper than 4 % of its trough, and a 5σ
//!   crossing of the noise alone happens about once in 3·10⁶ samples: precision above 0.98.

use std::sync::Arc;

use dspk_ops::Fits;
use dspk_stream::{DetectOptions, PassDevice, detect};
use dspk_tests::{for_each_runtime, test_rng, visible};
use dspk_types::{NoProgress, PipelineSpec, RecordingSource, SyntheticConfig, SyntheticRecording};

const SPEC: &str = r#"
    [[stages]]
    kind = "filter"
    band = "bandpass"
    cutoff_hz = [300.0, 6000.0]
    order = 5
"#;

#[test]
fn recall_and_precision_on_the_synthetic_recording_are_what_its_depths_allow() {
    const NAME: &str =
        "detect_truth_recall_and_precision_on_the_synthetic_recording_are_what_its_depths_allow";
    for_each_runtime(NAME, |target, client| {
        let (seed, _) = test_rng(NAME);
        let mut config = SyntheticConfig::default()
            .with_seed(seed)
            .with_samples(30_000)
            .with_channels(16, vec![3], vec![9]);
        config.spike_rate_hz = 20.0;
        let rec = SyntheticRecording::new(config).expect("a valid configuration");
        let source: Arc<dyn RecordingSource> = Arc::new(rec.clone());
        let spec = PipelineSpec::from_toml(SPEC).expect("the spec reads");
        let devices = vec![PassDevice {
            client: client.clone(),
            label: "one".into(),
        }];
        let mut done = detect(
            &devices,
            source,
            &spec,
            Fits::default(),
            &DetectOptions::default(),
            &NoProgress,
        )
        .expect("detection runs");
        assert!(
            done.report.by_channel,
            "the synthetic recording has no geometry"
        );
        let score = done
            .score_against(&rec)
            .expect("the same recording")
            .clone();
        visible(&format!(
            "{target:?}: seed {seed}: found {} of {} planted, {} false of {} peaks: recall {:?}, \
             precision {:?}; noise {:?} µV",
            score.found,
            score.planted,
            score.false_positives,
            score.peaks,
            score.recall,
            score.precision,
            done.noise
        ));
        let planted = rec.planted_spikes(0..30_000).expect("in range");
        // 20 bins on each of 15 live channels, every spike wholly inside the second.
        assert_eq!(score.planted, 300);
        assert_eq!(planted.len(), 300);
        assert_eq!(score.tolerance_samples, 12);
        for (c, &n) in done.noise.iter().enumerate() {
            match c {
                3 => assert_eq!(n, 0.0, "the dead channel"),
                9 => assert!(n > 50.0, "the noisy channel's noise {n} µV (seed {seed})"),
                _ => assert!(
                    (8.0..11.0).contains(&n),
                    "channel {c}: noise {n} µV (seed {seed})"
                ),
            }
        }
        // Every spike of at least 100 µV on a normal channel has a peak within 0.4 ms.
        for s in planted
            .iter()
            .filter(|s| s.channel != 9 && s.depth_uv >= 100.0)
        {
            let near = done
                .peaks
                .iter()
                .any(|p| p.channel as usize == s.channel && p.sample.abs_diff(s.trough) <= 12);
            assert!(near, "{s:?} not found (seed {seed})");
        }
        let recall = score.recall.expect("spikes were planted");
        let precision = score.precision.expect("peaks were found");
        assert!(recall > 0.75, "recall {recall} (seed {seed})");
        assert!(precision > 0.98, "precision {precision} (seed {seed})");
        assert_eq!(score.found + score.false_positives, score.peaks);
        assert_eq!(done.report.truth.as_ref(), Some(&score));
    });
}
