//! The temporal filters on the device against one `sosfiltfilt` of the whole segment in `f64`
//! (dspk-ops' host reference, itself checked against scipy in `python/tests`), on NP-like data
//! with DC offsets, LFP and spikes, and the same bits for any windows.

use std::ops::Range;

use cubecl::client::Client;
use dspk_kernels::read_f32;
use dspk_ops::filter::{FilterStage, host};
use dspk_ops::{Span, Stage};
use dspk_tests::{for_each_runtime, test_rng};
use dspk_types::{
    FilterBand, FilterDirection, FilterSpec, MemoryOrder, RecordingInfo, SampleFormat, SampleRate,
};
use rand::Rng as _;
use rand::rngs::StdRng;

/// The float32 level the issue sets against a float64 `sosfiltfilt` (µV).
const TOLERANCE_UV: f64 = 2e-3;

/// NP-like channels at 30 kHz: a DC offset of up to ±5 mV, LFP (1–12 Hz, ~200 µV), 10 µV of
/// white noise and a few 100 µV spikes; channel-major.
fn np_like(rng: &mut StdRng, channels: usize, samples: usize) -> Vec<f32> {
    let rate = 30_000.0;
    let mut out = Vec::with_capacity(channels * samples);
    for _ in 0..channels {
        let dc = rng.random_range(-5000.0..5000.0);
        let lfp: Vec<(f64, f64, f64)> = (0..4)
            .map(|_| {
                (
                    rng.random_range(1.0..12.0),
                    rng.random_range(20.0..80.0),
                    rng.random_range(0.0..6.3),
                )
            })
            .collect();
        let spikes: Vec<usize> = (0..samples / 3000)
            .map(|_| rng.random_range(0..samples))
            .collect();
        for t in 0..samples {
            let time = t as f64 / rate;
            let mut v = dc + rng.random_range(-17.0..17.0);
            for (f, a, p) in &lfp {
                v += a * (std::f64::consts::TAU * f * time + p).sin();
            }
            for &s in &spikes {
                let d = t as f64 - s as f64;
                if d.abs() < 40.0 {
                    v -= 100.0 * (-(d / 8.0).powi(2)).exp();
                }
            }
            out.push(v as f32);
        }
    }
    out
}

fn info(channels: usize, samples: u64) -> RecordingInfo {
    RecordingInfo::new(
        "np-like",
        channels,
        samples,
        SampleRate::new(30_000.0).unwrap(),
        SampleFormat::F32,
        MemoryOrder::ChannelMajor,
    )
}

fn spec(band: FilterBand, cutoff_hz: &[f64], order: u32, direction: FilterDirection) -> FilterSpec {
    FilterSpec {
        band,
        cutoff_hz: cutoff_hz.to_vec(),
        order,
        direction,
        context_samples: None,
    }
}

/// The stage's output on `valid` of `data` (channel-major, `samples` per channel) when the
/// window holds `valid` widened by the stage's halo, clipped to the segment `0..samples`.
fn run_window(
    client: &Client,
    stage: &mut FilterStage,
    data: &[f32],
    samples: usize,
    valid: Range<usize>,
) -> Vec<f32> {
    let channels = data.len() / samples;
    let halo = stage.halo();
    let read = valid.start.saturating_sub(halo.before as usize)
        ..(valid.end + halo.after as usize).min(samples);
    let stride = read.len();
    let mut window = Vec::with_capacity(channels * stride);
    for c in 0..channels {
        window.extend_from_slice(&data[c * samples + read.start..c * samples + read.end]);
    }
    let input = client.create_from_slice(&bytes(&window));
    let output = client.create_from_slice(&bytes(&vec![f32::NAN; window.len()]));
    let span = Span {
        channels,
        stride,
        origin: read.start as u64,
        segment: 0..samples as u64,
        produce: valid.start - read.start..valid.end - read.start,
    };
    stage
        .launch(&input, &output, &span)
        .expect("the filter launches");
    let all = read_f32(client, &output, window.len()).expect("read back");
    let mut out = Vec::with_capacity(channels * valid.len());
    for c in 0..channels {
        out.extend_from_slice(&all[c * stride + span.produce.start..c * stride + span.produce.end]);
    }
    out
}

fn bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The output of the whole recording, streamed in windows of `window` samples (channel-major).
fn streamed(
    client: &Client,
    stage: &mut FilterStage,
    data: &[f32],
    samples: usize,
    window: usize,
) -> Vec<f32> {
    let channels = data.len() / samples;
    let mut rows = vec![Vec::with_capacity(samples); channels];
    let mut start = 0;
    while start < samples {
        let end = (start + window).min(samples);
        let out = run_window(client, stage, data, samples, start..end);
        for (c, row) in rows.iter_mut().enumerate() {
            row.extend_from_slice(&out[c * (end - start)..(c + 1) * (end - start)]);
        }
        start = end;
    }
    rows.concat()
}

/// Whether two outputs are the same bits, value for value.
fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// The largest difference between the device's output and the host's `f64` reference.
fn max_error(device: &[f32], reference: &[f64]) -> f64 {
    device
        .iter()
        .zip(reference)
        .map(|(&d, &r)| (f64::from(d) - r).abs())
        .fold(0.0, f64::max)
}

#[test]
fn zero_phase_filters_match_one_whole_sosfiltfilt_and_any_windows() {
    for_each_runtime("zero_phase_filters", |_, client| {
        let (_, mut rng) = test_rng("zero_phase_filters");
        let (channels, samples) = (3, 45_000);
        let data = np_like(&mut rng, channels, samples);
        let info = info(channels, samples as u64);
        for (band, cutoff, order) in [
            (FilterBand::Bandpass, &[300.0, 6000.0][..], 5),
            (FilterBand::Highpass, &[300.0][..], 3),
        ] {
            let spec = spec(band, cutoff, order, FilterDirection::ZeroPhase);
            let mut stage = FilterStage::new(client, &spec, 4096, &info).expect("stage");
            let whole = streamed(client, &mut stage, &data, samples, samples);
            let mut worst = 0.0f64;
            for c in 0..channels {
                let x: Vec<f64> = data[c * samples..(c + 1) * samples]
                    .iter()
                    .map(|&v| f64::from(v))
                    .collect();
                let reference = host::sosfiltfilt(stage.sos(), &x).expect("reference");
                worst = worst.max(max_error(
                    &whole[c * samples..(c + 1) * samples],
                    &reference,
                ));
            }
            eprintln!("{band:?} {cutoff:?} order {order}: max error {worst:.3e} µV");
            assert!(
                worst <= TOLERANCE_UV,
                "{band:?} {cutoff:?}: {worst} µV from one whole sosfiltfilt"
            );
            // Each device loads its own number of samples ahead (32 on a GPU, 8 on a CPU):
            // when loads are issued, never the arithmetic, so every choice gives the same bits.
            for ahead in [1, 8, 32] {
                let mut other = FilterStage::new(client, &spec, 4096, &info)
                    .expect("stage")
                    .with_loads_ahead(ahead);
                let again = streamed(client, &mut other, &data, samples, samples);
                assert!(
                    same_bits(&whole, &again),
                    "{band:?}: loading {ahead} samples ahead changes the output"
                );
            }
            // A window whose scratch outgrows one binding runs in several launches over one
            // scratch buffer: here at most 7 units' worth a launch (the last launch shorter),
            // the same bits; one unit's scratch past the limit is refused, saying why.
            let per_unit = 4096 + stage.context() as usize + stage.sos().padlen();
            let mut split = FilterStage::new(client, &spec, 4096, &info)
                .expect("stage")
                .with_scratch_values(7 * per_unit + per_unit / 2);
            let again = streamed(client, &mut split, &data, samples, samples);
            assert!(
                same_bits(&whole, &again),
                "{band:?}: launches of at most 7 units change the output"
            );
            let mut tight = FilterStage::new(client, &spec, 4096, &info)
                .expect("stage")
                .with_scratch_values(per_unit - 1);
            let input = client.create_from_slice(&bytes(&data));
            let output = client.create_from_slice(&bytes(&data));
            let span = Span {
                channels,
                stride: samples,
                origin: 0,
                segment: 0..samples as u64,
                produce: 0..samples,
            };
            let refused = tight
                .launch(&input, &output, &span)
                .expect_err("a block needing more scratch than a buffer holds")
                .to_string();
            assert!(
                refused.contains(&format!("needs {per_unit} values of scratch")),
                "{refused}"
            );
            // 1 s, 0.37 s and 7.3 s of windows (the recording is 1.5 s: one window), and
            // every third window of 0.37 s streamed alone: the same bits.
            for window in [30_000, 11_100, 219_000] {
                let other = streamed(client, &mut stage, &data, samples, window);
                assert!(
                    same_bits(&whole, &other),
                    "{band:?}: windows of {window} samples change the output"
                );
            }
            for start in (0..samples).step_by(3 * 11_100) {
                let valid = start..(start + 11_100).min(samples);
                let alone = run_window(client, &mut stage, &data, samples, valid.clone());
                for c in 0..channels {
                    let expected = &whole[c * samples + valid.start..c * samples + valid.end];
                    let got = &alone[c * valid.len()..(c + 1) * valid.len()];
                    assert!(
                        same_bits(expected, got),
                        "{band:?}: window {valid:?} alone differs"
                    );
                }
            }
        }
    });
}

#[test]
fn causal_filters_match_sosfilt_from_the_first_sample() {
    for_each_runtime("causal_filters", |_, client| {
        let (_, mut rng) = test_rng("causal_filters");
        let (channels, samples) = (2, 30_000);
        let data = np_like(&mut rng, channels, samples);
        let info = info(channels, samples as u64);
        let spec = spec(FilterBand::Highpass, &[300.0], 3, FilterDirection::Causal);
        let mut stage = FilterStage::new(client, &spec, 4096, &info).expect("stage");
        let whole = streamed(client, &mut stage, &data, samples, samples);
        let mut worst = 0.0f64;
        for c in 0..channels {
            let x: Vec<f64> = data[c * samples..(c + 1) * samples]
                .iter()
                .map(|&v| f64::from(v))
                .collect();
            let reference = host::sosfilt_causal(stage.sos(), &x);
            worst = worst.max(max_error(
                &whole[c * samples..(c + 1) * samples],
                &reference,
            ));
        }
        eprintln!("causal high-pass: max error {worst:.3e} µV");
        assert!(worst <= TOLERANCE_UV, "causal: {worst} µV from sosfilt");
        let other = streamed(client, &mut stage, &data, samples, 7_000);
        assert!(same_bits(&whole, &other));
        for ahead in [1, 8, 32] {
            let mut other = FilterStage::new(client, &spec, 4096, &info)
                .expect("stage")
                .with_loads_ahead(ahead);
            let again = streamed(client, &mut other, &data, samples, 7_000);
            assert!(
                same_bits(&whole, &again),
                "causal: loading {ahead} samples ahead changes the output"
            );
        }
    });
}

#[test]
fn a_pole_too_close_to_the_unit_circle_is_refused_saying_why() {
    for_each_runtime("filter_refused", |_, client| {
        let info = info(1, 30_000);
        for (band, cutoff, order) in [
            (FilterBand::Highpass, &[0.5][..], 2),
            (FilterBand::Lowpass, &[2.0][..], 2),
            (FilterBand::Bandstop, &[58.0, 62.0][..], 2),
            (FilterBand::Highpass, &[100.0][..], 4),
        ] {
            let spec = spec(band, cutoff, order, FilterDirection::ZeroPhase);
            let message = FilterStage::new(client, &spec, 4096, &info)
                .expect_err("refused")
                .to_string();
            assert!(
                message.contains("from the unit circle") && message.contains("float32"),
                "{band:?} {cutoff:?}: {message}"
            );
        }
        // Above the margin (0.016): built.
        let spec = spec(
            FilterBand::Highpass,
            &[150.0],
            3,
            FilterDirection::ZeroPhase,
        );
        if let Err(e) = FilterStage::new(client, &spec, 4096, &info) {
            panic!("150 Hz order 3 refused: {e}");
        }
    });
}

#[test]
fn each_segment_is_filtered_as_a_recording_of_its_own() {
    for_each_runtime("filter_segments", |_, client| {
        let (_, mut rng) = test_rng("filter_segments");
        let (channels, samples) = (2, 40_000);
        let data = np_like(&mut rng, channels, samples);
        let info = info(channels, samples as u64);
        let spec = spec(
            FilterBand::Bandpass,
            &[300.0, 6000.0],
            5,
            FilterDirection::ZeroPhase,
        );
        let mut stage = FilterStage::new(client, &spec, 1024, &info).expect("stage");
        // The second of two segments, 13 000..40 000: its grid starts at 13 000, and the
        // samples before it (NaN in the window) are never read.
        let segment = 13_000..samples;
        let halo = stage.halo().before as usize;
        for valid in [13_000usize..20_000, 20_000..31_111, 31_111..40_000] {
            let read = valid.start.saturating_sub(halo).max(segment.start)
                ..(valid.end + halo).min(segment.end);
            let origin = read.start - 500.min(read.start);
            let stride = read.end - origin;
            let mut window = vec![f32::NAN; channels * stride];
            for c in 0..channels {
                window[c * stride + (read.start - origin)..c * stride + stride]
                    .copy_from_slice(&data[c * samples + read.start..c * samples + read.end]);
            }
            let input = client.create_from_slice(&bytes(&window));
            let output = client.create_from_slice(&bytes(&vec![f32::NAN; window.len()]));
            let span = Span {
                channels,
                stride,
                origin: origin as u64,
                segment: segment.start as u64..segment.end as u64,
                produce: valid.start - origin..valid.end - origin,
            };
            stage
                .launch(&input, &output, &span)
                .expect("the filter launches");
            let all = read_f32(client, &output, window.len()).expect("read back");
            for c in 0..channels {
                let x: Vec<f64> = data[c * samples + segment.start..c * samples + segment.end]
                    .iter()
                    .map(|&v| f64::from(v))
                    .collect();
                let reference = host::sosfiltfilt(stage.sos(), &x).expect("reference");
                let got = &all[c * stride + span.produce.start..c * stride + span.produce.end];
                let want = &reference[valid.start - segment.start..valid.end - segment.start];
                let err = max_error(got, want);
                assert!(err <= TOLERANCE_UV, "segment window {valid:?}: {err} µV");
            }
        }
    });
}
