//! Preprocessing's way back on every runtime: a time-major file whose frames were laid out on
//! the device (only the owned samples' stored bytes read back) holds the same bits as the
//! chain's values read back and laid out on the host, for `int16` (with clipped samples) and
//! `float32`, any window size and an odd channel count; the chain kept on the device covers
//! every window and clips the same samples.

use std::sync::Arc;

use dspk_io::{BinarySink, OutputFormat};
use dspk_ops::Fits;
use dspk_stream::{
    DecodeRoute, PassDevice, PreprocessOptions, preprocess, preprocess_plan, run_on_device,
};
use dspk_tests::{TempDir, for_each_runtime};
use dspk_types::{
    ChunkSchedule, DspResult, MemoryOrder, NoProgress, OutputType, PipelineSpec, RecordingInfo,
    RecordingSource, ScaleSpec, SignalUnit, StageSpec, SyntheticConfig, SyntheticRecording,
    WindowSink,
};

const CHANNELS: usize = 5;
const SAMPLES: u64 = 12_001;

/// A sink that keeps the values of every window (channel-major) and takes no frames.
#[derive(Default)]
struct Values(Vec<Vec<f32>>);

impl WindowSink for Values {
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

/// The windows' values as time-major little-endian frames of `output`, on the host.
fn host_frames(windows: &[Vec<f32>], output: OutputType) -> Vec<u8> {
    let mut out = Vec::new();
    for w in windows {
        let n = w.len() / CHANNELS;
        for t in 0..n {
            for c in 0..CHANNELS {
                let x = w[c * n + t];
                match output {
                    OutputType::Float32 => out.extend_from_slice(&x.to_le_bytes()),
                    OutputType::Int16 => {
                        assert!(
                            x.fract() == 0.0 && (-32768.0..=32767.0).contains(&x),
                            "the chain's int16 output holds {x}"
                        );
                        out.extend_from_slice(&(x as i16).to_le_bytes());
                    }
                }
            }
        }
    }
    out
}

fn spec(output: OutputType, gain: f64) -> PipelineSpec {
    let mut spec = PipelineSpec::preset("spikeinterface").expect("the preset");
    spec.stages
        .push(StageSpec::Scale(ScaleSpec { output, gain }));
    spec
}

#[test]
fn frames_laid_out_on_the_device_equal_the_values_laid_out_on_the_host() {
    const NAME: &str = "frames_laid_out_on_the_device_equal_the_values_laid_out_on_the_host";
    for_each_runtime(NAME, |_, client| {
        let dir = TempDir::new(NAME);
        let config = SyntheticConfig::default()
            .with_samples(SAMPLES)
            .with_channels(CHANNELS, vec![], vec![]);
        let source: Arc<dyn RecordingSource> =
            Arc::new(SyntheticRecording::new(config).expect("synthetic"));
        let devices = [PassDevice {
            client: client.clone(),
            label: "test".into(),
        }];
        for (output, gain) in [(OutputType::Int16, 400.0), (OutputType::Float32, 1.0)] {
            let spec = spec(output, gain);
            let options = |window: u64| PreprocessOptions {
                window_samples: Some(window),
                ..PreprocessOptions::default()
            };
            let mut values = Values::default();
            let by_values = preprocess(
                &devices,
                source.clone(),
                &spec,
                Fits::default(),
                &options(5_000),
                &NoProgress,
                &mut values,
            )
            .expect("preprocess to values");
            let want = host_frames(&values.0, output);
            let value_bytes = if output == OutputType::Int16 { 2 } else { 4 };
            assert_eq!(want.len(), CHANNELS * SAMPLES as usize * value_bytes);
            let format = match output {
                OutputType::Int16 => OutputFormat::Int16 { gain },
                OutputType::Float32 => OutputFormat::Float32,
            };
            for window in [3_001, 12_001] {
                let path = dir.path().join(format!("{output:?}-{window}.bin"));
                let mut sink =
                    BinarySink::new(&path, MemoryOrder::TimeMajor, "synthetic").format(format);
                assert_eq!(sink.frames(), Some(output));
                let by_frames = preprocess(
                    &devices,
                    source.clone(),
                    &spec,
                    Fits::default(),
                    &options(window),
                    &NoProgress,
                    &mut sink,
                )
                .expect("preprocess to a file");
                let got = std::fs::read(&path).expect("the output");
                assert_eq!(got.len(), want.len(), "{output:?}, windows of {window}");
                if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
                    panic!("{output:?}, windows of {window}: byte {i} of the file differs");
                }
                let per_channel = |p: &dspk_stream::Preprocessed| {
                    p.report.clipped.as_ref().map(|c| c.per_channel.clone())
                };
                assert_eq!(
                    per_channel(&by_frames),
                    per_channel(&by_values),
                    "{output:?}"
                );
            }
            if output == OutputType::Int16 {
                let clipped = by_values.report.clipped.as_ref().expect("clip counts");
                assert!(clipped.total > 0, "a gain of 400 clips some samples");
            }
            // Kept on the device: every window run, the same samples clipped.
            let plan = preprocess_plan(
                &devices,
                source.info(),
                &spec,
                &Fits::default(),
                &options(4_000),
            )
            .expect("the plan");
            let windows = ChunkSchedule::for_recording(
                source.info(),
                0..SAMPLES,
                plan.window_samples,
                plan.halo_before,
                plan.halo_after,
            )
            .expect("the schedule")
            .into_windows();
            let kept = run_on_device(
                &devices,
                source.clone(),
                &spec,
                &Fits::default(),
                windows,
                DecodeRoute::Staging,
                &NoProgress,
            )
            .expect("kept on the device");
            assert_eq!(kept.report.samples, SAMPLES);
            assert_eq!(kept.report.windows as u64, SAMPLES.div_ceil(4_000));
            let kept_total = kept.clipped.map(|c| c.iter().sum::<u64>());
            let want_total = by_values.report.clipped.as_ref().map(|c| c.total);
            assert_eq!(kept_total, want_total, "{output:?}");
        }
    });
}
