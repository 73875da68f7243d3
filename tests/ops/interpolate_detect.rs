//! dspk's own bad-channel detection inside a pipeline (`interpolate_bad` with `detect = true`,
//! the `ibl` preset's third stage): the channels it finds are the planted dead and noisy ones,
//! found once by the fitting pass (a scan of the whole recording), and the chain then gives the
//! same bits as the same stage with those channels written in the spec; a recording without
//! bad channels passes through unchanged; channels handed in as fits are used as given.

use std::sync::Arc;

use crate::two_column_probe;
use dspk_ops::Fits;
use dspk_stream::{
    DecodeRoute, PassDevice, PreprocessOptions, detect_bad_channels, fit, preprocess,
};
use dspk_tests::{for_each_runtime, test_rng};
use dspk_types::{
    DspResult, MemoryOrder, MemoryRecording, NoProgress, PipelineSpec, RecordingInfo,
    RecordingSource, SampleFormat, SampleRate, SignalUnit, WindowSink,
};
use rand::Rng as _;

const CHANNELS: usize = 10;
const SAMPLES: usize = 7_000;
const DEAD: usize = 2;
const NOISY: usize = 7;

fn detecting() -> PipelineSpec {
    PipelineSpec::from_toml(
        "[[stages]]\nkind = \"interpolate_bad\"\ndetect = true\nsigma_um = 20.0\np = 1.3\n",
    )
    .unwrap()
}

fn given(channels: &[usize]) -> PipelineSpec {
    PipelineSpec::from_toml(&format!(
        "[[stages]]\nkind = \"interpolate_bad\"\nchannels = {channels:?}\nsigma_um = 20.0\np = 1.3\n"
    ))
    .unwrap()
}

/// Noise of ±20 µV on a DC offset per channel; `bad`: channel DEAD flat at 5 µV and channel
/// NOISY's noise 25 times larger.
fn recording(name: &str, bad: bool) -> (Arc<dyn RecordingSource>, Vec<f32>) {
    let (_, mut rng) = test_rng(name);
    let mut info = RecordingInfo::new(
        "bad",
        CHANNELS,
        SAMPLES as u64,
        SampleRate::new(30_000.0).unwrap(),
        SampleFormat::F32,
        MemoryOrder::ChannelMajor,
    );
    info.probe = Some(two_column_probe(CHANNELS));
    let data: Vec<f32> = (0..CHANNELS * SAMPLES)
        .map(|i| {
            let c = i / SAMPLES;
            let noise = rng.random_range(-20.0f32..20.0);
            match c {
                DEAD if bad => 5.0,
                NOISY if bad => 100.0 * c as f32 + 25.0 * noise,
                _ => 100.0 * c as f32 + noise,
            }
        })
        .collect();
    let source = MemoryRecording::new(info, data.clone()).expect("a memory recording");
    (Arc::new(source), data)
}

/// `data` (channel-major, whole rows) laid out as the sink receives it: windows of `window`
/// samples, each channel-major.
fn in_windows(data: &[f32], window: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(data.len());
    for start in (0..SAMPLES).step_by(window) {
        let end = (start + window).min(SAMPLES);
        for c in 0..CHANNELS {
            out.extend_from_slice(&data[c * SAMPLES + start..c * SAMPLES + end]);
        }
    }
    out
}

/// Every window's values, channel-major, concatenated in window order.
#[derive(Default)]
struct Collect(Vec<Vec<f32>>);

impl WindowSink for Collect {
    fn begin(&mut self, _: &RecordingInfo, _: &[SignalUnit]) -> DspResult<()> {
        Ok(())
    }
    fn write_window(&mut self, values: &[f32]) -> DspResult<()> {
        self.0.push(values.to_vec());
        Ok(())
    }
    fn finish(&mut self) -> DspResult<()> {
        Ok(())
    }
}

fn run(
    devices: &[PassDevice],
    source: &Arc<dyn RecordingSource>,
    spec: &PipelineSpec,
    fits: Fits,
) -> (Vec<f32>, dspk_stream::Preprocessed) {
    let mut sink = Collect::default();
    let options = PreprocessOptions {
        window_samples: Some(3_001),
        ..PreprocessOptions::default()
    };
    let done = preprocess(
        devices,
        source.clone(),
        spec,
        fits,
        &options,
        &NoProgress,
        &mut sink,
    )
    .expect("the pipeline runs");
    (sink.0.concat(), done)
}

#[test]
fn detected_bad_channels_are_the_planted_ones_and_interpolated_as_if_given() {
    for_each_runtime("interpolate_detect", |target, client| {
        let devices = [PassDevice {
            client: client.clone(),
            label: target.name().into(),
        }];
        let (source, _) = recording("interpolate_detect", true);
        let found = detect_bad_channels(&devices, &source, DecodeRoute::Staging).unwrap();
        assert_eq!(found, vec![DEAD, NOISY]);
        let fits = fit(
            &devices,
            &source,
            &detecting(),
            Fits::default(),
            DecodeRoute::Staging,
        )
        .unwrap();
        assert_eq!(fits.bad_channels.get(&0), Some(&vec![DEAD, NOISY]));

        let (ours, done) = run(&devices, &source, &detecting(), Fits::default());
        let (want, _) = run(&devices, &source, &given(&[DEAD, NOISY]), Fits::default());
        assert_eq!(ours.len(), want.len());
        assert!(
            ours.iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        );
        let summary = &done.report.fitted;
        assert_eq!(summary.len(), 1);
        assert_eq!(summary[0].kind, "interpolate_bad");
        assert_eq!(summary[0].source, "fitted");
        assert_eq!(summary[0].channels, vec![DEAD, NOISY]);
        // The dead channel really was replaced (it was flat at 5 µV; its neighbours sit at
        // 0–400 µV offsets with noise).
        let dead_row = &ours[DEAD * 3_001..DEAD * 3_001 + 100];
        assert!(dead_row.iter().any(|v| (v - 5.0).abs() > 1.0));

        // Channels given as fits are used as given, and not detected again.
        let mut handed = Fits::default();
        handed.bad_channels.insert(0, vec![4]);
        let (ours, done) = run(&devices, &source, &detecting(), handed);
        let (want, _) = run(&devices, &source, &given(&[4]), Fits::default());
        assert!(
            ours.iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        );
        assert_eq!(done.report.fitted[0].source, "given");

        // No bad channel: nothing found, the stage changes nothing.
        let (clean, data) = recording("interpolate_detect_clean", false);
        let (ours, done) = run(&devices, &clean, &detecting(), Fits::default());
        assert_eq!(done.fits.bad_channels.get(&0), Some(&Vec::new()));
        let want = in_windows(&data, 3_001);
        assert_eq!(ours.len(), want.len());
        assert!(
            ours.iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        );
    });
}
