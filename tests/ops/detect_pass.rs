//! `dspk_stream::detect` after a pipeline (band-pass, median reference): spikes planted on
//! both sides of the seams of windows of 0.1 s, 1 s and 7.3 s each found once, and the table
//! the same bits for those windows, for every third window detected alone plus the rest, and
//! for two devices against one.

use std::sync::Arc;

use crate::two_column_probe;
use dspk_ops::Fits;
use dspk_ops::detect::Peak;
use dspk_stream::{
    DecodeRoute, DetectOptions, PassDevice, detect, detect_windows, detection_halo, halo_window,
};
use dspk_tests::{for_each_runtime, test_rng, visible};
use dspk_types::{
    MemoryOrder, MemoryRecording, NoProgress, PipelineSpec, RecordingInfo, RecordingSource,
    SampleFormat, SampleRate,
};
use rand::Rng as _;

const SPEC: &str = r#"
    [[stages]]
    kind = "filter"
    band = "bandpass"
    cutoff_hz = [300.0, 6000.0]
    order = 5

    [[stages]]
    kind = "common_reference"
    operator = "median"
"#;

/// Noise of ±30 µV with a spike (a trough of 300–500 µV over ~0.5 ms, 60 % of it on the
/// next channel) at each planted (channel, sample).
fn recording(
    channels: usize,
    samples: usize,
    planted: &[(usize, usize)],
    name: &str,
) -> (u64, Arc<dyn RecordingSource>) {
    let (seed, mut rng) = test_rng(name);
    let mut info = RecordingInfo::new(
        "detect",
        channels,
        samples as u64,
        SampleRate::new(30_000.0).unwrap(),
        SampleFormat::F32,
        MemoryOrder::ChannelMajor,
    );
    info.probe = Some(two_column_probe(channels));
    let mut data: Vec<f32> = (0..channels * samples)
        .map(|_| rng.random_range(-30.0f32..30.0))
        .collect();
    for &(c, t) in planted {
        let a = rng.random_range(300.0f32..500.0);
        for (ch, scale) in [(c, 1.0f32), ((c + 1) % channels, 0.6)] {
            for d in -8i64..=8 {
                let s = t as i64 + d;
                if s >= 0 && (s as usize) < samples {
                    let shape = (-(d as f32 / 3.0).powi(2)).exp();
                    data[ch * samples + s as usize] -= a * scale * shape;
                }
            }
        }
    }
    (
        seed,
        Arc::new(MemoryRecording::new(info, data).expect("a memory recording")),
    )
}

#[test]
fn the_table_is_the_same_for_any_windows_and_devices() {
    const NAME: &str = "detect_pass_the_table_is_the_same_for_any_windows_and_devices";
    for_each_runtime(NAME, |target, client| {
        let (channels, samples) = (8usize, 36_000usize);
        // Both sides of every seam of 0.1 s windows, 1 s's seam, and both ends.
        let mut planted = vec![(0, 2), (5, samples - 3)];
        for (k, seam) in (3_000..samples).step_by(3_000).enumerate() {
            let c = (2 * k) % channels;
            planted.push((c, seam - 1 - (k % 4)));
            planted.push(((c + 4) % channels, seam + 60 + (k % 4)));
        }
        let (seed, source) = recording(channels, samples, &planted, NAME);
        let spec = PipelineSpec::from_toml(SPEC).expect("the spec reads");
        let one = vec![PassDevice {
            client: client.clone(),
            label: "one".into(),
        }];
        let run = |devices: &[PassDevice], window: u64, noise: Option<Vec<f64>>| {
            let options = DetectOptions {
                window_samples: Some(window),
                noise,
                ..DetectOptions::default()
            };
            detect(
                devices,
                source.clone(),
                &spec,
                Fits::default(),
                &options,
                &NoProgress,
            )
            .expect("detection runs")
        };
        let first = run(&one, 3_000, None);
        let reference = first.peaks.clone();
        let noise = first.noise.clone();
        let bits = |peaks: &[Peak]| {
            peaks
                .iter()
                .map(|p| (p.sample, p.channel, p.amplitude.to_bits(), p.segment))
                .collect::<Vec<_>>()
        };
        // Each planted spike found exactly once: one peak within 4 samples on its channel or
        // the next (the filter moves a trough by a sample or two).
        for &(c, t) in &planted {
            let near: Vec<&Peak> = reference
                .iter()
                .filter(|p| {
                    p.sample.abs_diff(t as u64) <= 4
                        && (p.channel as usize == c || p.channel as usize == (c + 1) % channels)
                })
                .collect();
            assert!(
                near.len() == 1,
                "seed {seed}: the spike planted at sample {t} of channel {c} is found as \
                 {near:?}"
            );
        }
        for window in [30_000u64, 219_000] {
            let other = run(&one, window, Some(noise.clone()));
            assert!(
                bits(&other.peaks) == bits(&reference),
                "seed {seed}: windows of {window} samples change the table"
            );
        }
        // Every third 0.1 s window alone, then the rest.
        let info = source.info().clone();
        let chain = dspk_ops::build(client, &spec, &info, &Fits::default(), 2).expect("chain");
        let halo = detection_halo(&info, chain.halo(), &DetectOptions::default().detect);
        let windows = |keep: &dyn Fn(usize) -> bool| {
            (0..info.samples)
                .step_by(3_000)
                .map(|s| s..(s + 3_000).min(info.samples))
                .enumerate()
                .filter(|(i, _)| keep(*i))
                .map(|(i, valid)| halo_window(&info, i, valid, halo.before, halo.after))
                .collect::<Vec<_>>()
        };
        let part = |keep: &dyn Fn(usize) -> bool| {
            detect_windows(
                &one,
                source.clone(),
                &spec,
                &Fits::default(),
                &DetectOptions::default().detect,
                &noise,
                windows(keep),
                DecodeRoute::Staging,
                &NoProgress,
            )
            .expect("detection runs")
        };
        let mut parts = part(&|i| i % 3 == 0);
        parts.extend(part(&|i| i % 3 != 0));
        parts.sort_unstable_by_key(Peak::key);
        assert!(
            bits(&parts) == bits(&reference),
            "seed {seed}: every third window alone changes the table"
        );
        // Two devices (a second one on the same adapter; on the cpu runtime, the one CPU
        // client twice) against one, noise fitted again.
        let second = dspk_tests::second_client(target, client);
        let two = vec![
            one[0].clone(),
            PassDevice {
                client: second,
                label: "two".into(),
            },
        ];
        let both = run(&two, 3_000, None);
        assert!(
            both.noise == noise && bits(&both.peaks) == bits(&reference),
            "seed {seed}: two devices change the noise or the table"
        );
        visible(&format!(
            "{NAME} on {target}: {} planted, {} peaks, the same bits for windows of 0.1/1/7.3 s, \
             thirds alone and two devices",
            planted.len(),
            reference.len()
        ));
    });
}
