//! The spatial high-pass (IBL's `kfilt`) on every runtime: the device equals the `f64` host
//! reference (computed per sample with `sosfiltfilt` across channels, not through the device's
//! matrix) to `f32` rounding, per shank; a sample's bits do not depend on the window; a signal
//! shared by a shank's channels is removed; a dead channel comes out 0.

use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_ops::kfilt::{self, SpatialHighpassStage, SpatialOperator};
use dspk_ops::{Span, Stage as _};
use dspk_tests::{for_each_runtime, test_rng, visible};
use dspk_types::{
    Contact, MemoryOrder, Probe, ProbeParts, RecordingInfo, SampleFormat, SampleRate,
    SpatialHighpassSpec,
};
use rand::Rng as _;
use rand::rngs::StdRng;

fn upload(client: &Client, values: &[f32]) -> Handle {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    client.create_from_slice(&bytes)
}

fn download(client: &Client, handle: &Handle, len: usize) -> Vec<f32> {
    let bytes = client.read_one(handle.clone()).expect("read back");
    bytes[..4 * len]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

fn run(client: &Client, stage: &mut SpatialHighpassStage, rows: &[f32], span: &Span) -> Vec<f32> {
    let input = upload(client, rows);
    let output = upload(client, &vec![f32::NAN; rows.len()]);
    stage.launch(&input, &output, span).expect("launch");
    download(client, &output, rows.len())
}

/// `channels` on two shanks taken in turn (channel `c` on shank `c % 2`), 20 µm apart on each.
fn info(channels: usize, samples: u64, shanks: u32) -> RecordingInfo {
    let rate = SampleRate::new(30_000.0).unwrap();
    let mut info = RecordingInfo::new(
        "kfilt",
        channels,
        samples,
        rate,
        SampleFormat::F32,
        MemoryOrder::TimeMajor,
    );
    let contacts = (0..channels)
        .map(|c| {
            let shank = c as u32 % shanks;
            Some(Contact::new(
                0.0,
                20.0 * c as f64,
                shank,
                format!("s{shank}e{c}"),
            ))
        })
        .collect();
    info.probe = Some(
        Probe::new(ProbeParts {
            channels: contacts,
            ..ProbeParts::default()
        })
        .unwrap(),
    );
    info
}

/// Rows like a high-passed recording: per-channel noise of its own size (5–40 µV), a stripe
/// shared by every channel (60 µV bursts), a slowly varying amplitude so that the gain moves,
/// and channel `dead` flat at 0.
fn rows(rng: &mut StdRng, channels: usize, samples: usize, dead: usize) -> Vec<f32> {
    let stripe: Vec<f64> = (0..samples)
        .map(|t| {
            let burst = if (t / 700) % 3 == 0 { 60.0 } else { 5.0 };
            burst * rng.random_range(-1.0..1.0)
        })
        .collect();
    let mut out = Vec::with_capacity(channels * samples);
    for c in 0..channels {
        let size = rng.random_range(5.0..40.0);
        for (t, s) in stripe.iter().enumerate() {
            let swell = 1.0 + 0.5 * (t as f64 / 2500.0 + c as f64).sin();
            let v = if c == dead {
                0.0
            } else {
                s + swell * size * rng.random_range(-1.0..1.0)
            };
            out.push(v as f32);
        }
    }
    out
}

fn whole(channels: usize, samples: usize) -> Span {
    Span {
        channels,
        stride: samples,
        origin: 0,
        segment: 0..samples as u64,
        produce: 0..samples,
    }
}

#[test]
fn the_device_equals_the_host_reference_per_shank() {
    const NAME: &str = "spatial_highpass_device_equals_the_host_reference";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        let (channels, samples) = (16, 6000);
        let info = info(channels, samples as u64, 2);
        let spec = SpatialHighpassSpec::default();
        let data = rows(&mut rng, channels, samples, 5);
        let mut stage = SpatialHighpassStage::new(client, &spec, &info).unwrap();
        assert_eq!(stage.halo(), dspk_ops::Halo::both(1499));
        let got = run(client, &mut stage, &data, &whole(channels, samples));
        let input: Vec<f64> = data.iter().map(|&v| f64::from(v)).collect();
        let want = kfilt::host(&spec, &info, &input).unwrap();
        let worst = got
            .iter()
            .zip(&want)
            .map(|(&g, &w)| (f64::from(g) - w).abs())
            .fold(0.0, f64::max);
        let rms = (want.iter().map(|v| v * v).sum::<f64>() / want.len() as f64).sqrt();
        visible(&format!(
            "{NAME} on {target}: max |device − host| {worst:.3e} µV (output RMS {rms:.1} µV)"
        ));
        // f32 rounding: the gain's sums (≲ 170 terms: its block sums and the taps at either
        // end, ≲ 1e-6 relative), the mix of 8 weights (Σ|w| ≈ 2) over normalised values up to
        // ~5 in the stripe's bursts, times gains up to ~60 µV: ≲ 60 × 10 × 1e-6 = 6e-4.
        // Seen: 6.1e-5 to 1.3e-4 µV over seeds (lavapipe).
        assert!(worst < 2e-3, "seed {seed}: {worst}");
        // The dead channel is 0; the shanks are separate (the stripe is gone from each).
        assert!(got[5 * samples..6 * samples].iter().all(|&v| v == 0.0));
        assert!(rms > 1.0, "{rms}");
    });
}

#[test]
fn a_samples_bits_do_not_depend_on_the_window() {
    const NAME: &str = "spatial_highpass_bits_do_not_depend_on_the_window";
    for_each_runtime(NAME, |_, client| {
        let (seed, mut rng) = test_rng(NAME);
        let (channels, samples) = (12, 7000);
        let info = info(channels, samples as u64, 1);
        let spec = SpatialHighpassSpec {
            agc_window_samples: 1000,
            ..SpatialHighpassSpec::default()
        };
        let data = rows(&mut rng, channels, samples, usize::MAX);
        let mut stage = SpatialHighpassStage::new(client, &spec, &info).unwrap();
        let halo: usize = 499;
        assert_eq!(stage.halo(), dspk_ops::Halo::both(halo as u64));
        let reference = run(client, &mut stage, &data, &whole(channels, samples));
        // Windows: from the segment's start, inside, and to its end; each holds its halo.
        for (first, last) in [(0usize, 1300usize), (2100, 3400), (5200, samples)] {
            let origin = first.saturating_sub(halo + 17);
            let end = (last + halo + 5).min(samples);
            let stride = end - origin;
            let window: Vec<f32> = (0..channels)
                .flat_map(|c| {
                    data[c * samples + origin..c * samples + end]
                        .iter()
                        .copied()
                })
                .collect();
            let span = Span {
                channels,
                stride,
                origin: origin as u64,
                segment: 0..samples as u64,
                produce: first - origin..last - origin,
            };
            let got = run(client, &mut stage, &window, &span);
            for c in 0..channels {
                for t in first..last {
                    let (a, b) = (got[c * stride + t - origin], reference[c * samples + t]);
                    assert_eq!(
                        a.to_bits(),
                        b.to_bits(),
                        "seed {seed}: channel {c} sample {t}: {a} in window {first}..{last}, {b} whole"
                    );
                }
            }
        }
    });
}

#[test]
fn a_signal_every_channel_of_a_shank_shares_is_removed() {
    // Host only: across channels a constant is the high-pass's zero frequency. Two shanks, each
    // with its own constant.
    let info = info(20, 10, 2);
    let op = SpatialOperator::new(&SpatialHighpassSpec::default(), &info).unwrap();
    assert_eq!(op.shanks().len(), 2);
    let values: Vec<f64> = (0..20)
        .map(|c| if c % 2 == 0 { 7.0 } else { -3.0 })
        .collect();
    let out = op.apply(&values);
    let worst = out.iter().map(|v| v.abs()).fold(0.0, f64::max);
    assert!(worst < 1e-9, "{out:?}");
    // A spike on one channel stays (mostly) where it was.
    let mut spike = vec![0.0; 20];
    spike[8] = 100.0;
    let out = op.apply(&spike);
    assert!(
        out[8] > 50.0 && out.iter().all(|v| v.abs() <= out[8]),
        "{out:?}"
    );
    assert!(
        out.iter().skip(1).step_by(2).all(|&v| v == 0.0),
        "other shank: {out:?}"
    );
}

#[test]
fn a_shank_too_short_for_the_filter_is_refused() {
    // Order 3: sosfiltfilt's padlen is 12; 4 channels padded by 4 on each side are 12.
    let info = info(4, 10, 1);
    let err = SpatialOperator::new(&SpatialHighpassSpec::default(), &info).unwrap_err();
    assert!(
        err.to_string()
            .contains("needs more than 12 channels per shank once padded, and the shank of channels [0, 1, 2, 3] has 4 (12 padded)"),
        "{err}"
    );
    assert!(SpatialOperator::new(&SpatialHighpassSpec::default(), &info_of(5)).is_ok());
}

fn info_of(channels: usize) -> RecordingInfo {
    info(channels, 10, 1)
}
