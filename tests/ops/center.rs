//! Centring on every runtime: the channel means fitted on the device over several windows
//! against their `f64` host reference, the stage's `x − mean` against the host's, and a chain
//! with a centring stage refused until its means are fitted.

use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_ops::center::{self, CenterStage, MeanKernel};
use dspk_ops::{Fits, Span, Stage as _, build};
use dspk_tests::{for_each_runtime, test_rng, visible};
use dspk_types::{MemoryOrder, PipelineSpec, RecordingInfo, SampleFormat, SampleRate, StageSpec};
use rand::Rng as _;

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

/// Marks output samples nobody wrote.
const UNTOUCHED: f32 = 12345.5;

#[test]
fn means_and_centring_equal_the_f64_host() {
    const NAME: &str = "center_means_and_centring_equal_the_f64_host";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        let (channels, stride) = (5, 10_000);
        // Each channel a DC offset of its own (up to ±2000 µV) plus noise of ±150 µV.
        let offsets: Vec<f32> = (0..channels)
            .map(|_| rng.random_range(-2000.0f32..2000.0))
            .collect();
        let rows: Vec<f32> = (0..channels * stride)
            .map(|i| offsets[i / stride] + rng.random_range(-150.0f32..150.0))
            .collect();
        let input = upload(client, &rows);
        let span = |produce: std::ops::Range<usize>| Span {
            channels,
            stride,
            origin: 1000,
            segment: 0..1 << 40,
            produce,
        };
        // Two windows of lengths that are not multiples of the kernel's chunk.
        let windows = [37..4100, 5000..9999];
        let mut kernel = MeanKernel::new(client, channels).unwrap();
        for w in &windows {
            kernel.accumulate(&input, &span(w.clone())).unwrap();
        }
        let got = kernel.finish().unwrap();
        let want = center::host_means(&rows, channels, stride, &windows).unwrap();
        let mean_err = got
            .iter()
            .zip(&want)
            .map(|(g, w)| (g - w).abs())
            .fold(0.0, f64::max);
        // f32 partials of 256 samples of |x| <= 2150: each rounds by at most 256 ulps of the
        // partial's size; the mean of their errors is far below that.
        let mean_tol = 256.0 * 2150.0 * f64::from(f32::EPSILON);
        visible(&format!(
            "{NAME} on {target}: means within {mean_err:.2e} µV of the f64 host (tolerance \
             {mean_tol:.1e})"
        ));
        assert!(mean_err <= mean_tol, "seed {seed}: {got:?} vs {want:?}");

        let mut stage = CenterStage::new(client, &got).unwrap();
        assert_eq!(stage.halo(), dspk_ops::Halo::NONE);
        let output = upload(client, &vec![UNTOUCHED; rows.len()]);
        let produce = 3..stride - 5;
        stage
            .launch(&input, &output, &span(produce.clone()))
            .unwrap();
        let out = download(client, &output, rows.len());
        let mut worst = 0.0f64;
        for c in 0..channels {
            let row = &rows[c * stride..(c + 1) * stride];
            let host = center::host(&row[produce.clone()], got[c]);
            for (i, h) in host.iter().enumerate() {
                let t = produce.start + i;
                let d = f64::from(out[c * stride + t]);
                // One rounding of the mean to f32 and one of the difference.
                let tol = f64::from(f32::EPSILON) * (got[c].abs() + h.abs());
                worst = worst.max((d - h).abs());
                assert!(
                    (d - h).abs() <= tol,
                    "seed {seed}: channel {c} sample {t}: {d} on the device, {h} on the host"
                );
            }
            for t in (0..produce.start).chain(produce.end..stride) {
                assert_eq!(
                    out[c * stride + t],
                    UNTOUCHED,
                    "channel {c} sample {t} written"
                );
            }
        }
        visible(&format!(
            "{NAME} on {target}: centred samples within {worst:.2e} µV of the f64 host"
        ));

        // In a chain: refused without fitted means, built with them.
        let info = RecordingInfo::new(
            "rec",
            channels,
            stride as u64,
            SampleRate::new(30_000.0).unwrap(),
            SampleFormat::F32,
            MemoryOrder::ChannelMajor,
        );
        let spec = PipelineSpec {
            stages: vec![StageSpec::Center(Default::default())],
            ..PipelineSpec::default()
        };
        let e = build(client, &spec, &info, &Fits::default(), 1).unwrap_err();
        assert!(e.to_string().contains("no fitted channel means"), "{e}");
        let mut fits = Fits::default();
        fits.centers.insert(0, got.clone());
        let chain = build(client, &spec, &info, &fits, 1).unwrap();
        assert_eq!(chain.stages().len(), 1);
        assert_eq!(chain.stages()[0].kind(), "center");
        let e = CenterStage::new(client, &[1.0, f64::NAN]).unwrap_err();
        assert!(e.to_string().contains("channel 1's mean NaN"), "{e}");
    });
}
