//! Whitening on the device: the stage (dense and sparse) against the `f64` host reference to
//! `f32` rounding, the device covariance against the host's `f64` sums, and the whole fit
//! (device covariance → host matrix → device stage) whitening its own data.

use cubecl::client::Client;
use dspk_kernels::read_f32;
use dspk_ops::whiten::{Covariance, CovarianceKernel, WhitenStage, WhiteningMatrix};
use dspk_ops::{Span, Stage};
use dspk_tests::{for_each_runtime, test_rng};
use dspk_types::{Contact, Probe, ProbeParts, WhitenScope, WhitenSpec};
use rand::Rng as _;
use rand::rngs::StdRng;

fn bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Correlated µV-like signals: `channels` rows of `stride`, each a mix of its own noise and
/// a few shared sources (neighbouring channels share more), plus a small DC offset.
fn correlated(rng: &mut StdRng, channels: usize, stride: usize) -> Vec<f32> {
    let sources = 6;
    let shared: Vec<f32> = (0..sources * stride)
        .map(|_| rng.random_range(-30.0f32..30.0))
        .collect();
    let mut out = Vec::with_capacity(channels * stride);
    for c in 0..channels {
        let mix: Vec<f32> = (0..sources)
            .map(|s| rng.random_range(0.0f32..1.0) / (1.0 + (c % sources).abs_diff(s) as f32))
            .collect();
        let dc = rng.random_range(-5.0f32..5.0);
        for t in 0..stride {
            let common: f32 = (0..sources).map(|s| mix[s] * shared[s * stride + t]).sum();
            out.push(dc + common + rng.random_range(-10.0f32..10.0));
        }
    }
    out
}

/// An NP-like two-column probe: rows 20 µm apart, columns 32 µm apart.
fn probe(channels: usize) -> Probe {
    let contacts = (0..channels)
        .map(|c| {
            let x = if c % 2 == 0 { 0.0 } else { 32.0 };
            Some(Contact::new(x, (c / 2) as f64 * 20.0, 0, format!("e{c}")))
        })
        .collect();
    Probe::new(ProbeParts {
        channels: contacts,
        ..ProbeParts::default()
    })
    .expect("a probe")
}

/// The stage over `produce` of a window at `origin`; the output buffer starts as NaN so that
/// a value written outside `produce` shows.
fn run(
    client: &Client,
    stage: &mut WhitenStage,
    input: &[f32],
    channels: usize,
    produce: std::ops::Range<usize>,
) -> Vec<f32> {
    let stride = input.len() / channels;
    let span = Span {
        channels,
        stride,
        origin: 1_000,
        segment: 0..1_000_000,
        produce,
    };
    let inp = client.create_from_slice(&bytes(input));
    let out = client.create_from_slice(&bytes(&vec![f32::NAN; input.len()]));
    stage.launch(&inp, &out, &span).expect("the stage launches");
    read_f32(client, &out, input.len()).expect("read back")
}

/// Every produced value within `f32` rounding of the `f64` reference (a bound of the row's
/// `Σ|w·x|` times the terms' count times `f32`'s epsilon), NaN left elsewhere; the largest
/// error relative to that bound.
fn check(
    matrix: &WhiteningMatrix,
    input: &[f32],
    got: &[f32],
    produce: std::ops::Range<usize>,
    seed: u64,
) -> f64 {
    let n = matrix.channels();
    let stride = input.len() / n;
    let want = matrix
        .apply_host(input, stride, produce.clone())
        .expect("the host reference");
    let mut worst = 0.0f64;
    for (c, row) in matrix.rows().iter().enumerate() {
        for t in 0..stride {
            let g = got[c * stride + t];
            if !produce.contains(&t) {
                assert!(
                    g.is_nan(),
                    "seed {seed}: ({c}, {t}) written outside produce"
                );
                continue;
            }
            let magnitude: f64 = row
                .columns
                .iter()
                .zip(&row.weights)
                .map(|(&j, &w)| (w * f64::from(input[j as usize * stride + t])).abs())
                .sum();
            let bound = (row.columns.len() as f64 + 2.0) * f64::from(f32::EPSILON) * magnitude;
            let err = (f64::from(g) - want[c * stride + t]).abs();
            assert!(
                err <= bound,
                "seed {seed}: channel {c} sample {t}: device {g}, host {}, error {err} > {bound}",
                want[c * stride + t]
            );
            worst = worst.max(err / bound.max(f64::MIN_POSITIVE));
        }
    }
    worst
}

fn fitted(data: &[f32], channels: usize, spec: &WhitenSpec) -> WhiteningMatrix {
    let stride = data.len() / channels;
    let cov = Covariance::from_host(data, channels, stride, 0..stride).expect("a covariance");
    WhiteningMatrix::fit(&cov, spec, Some(&probe(channels))).expect("a fit")
}

#[test]
fn whitening_stage_equals_the_host() {
    const NAME: &str = "whitening_stage_equals_the_host";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        let local_k = WhitenSpec {
            scope: WhitenScope::Local,
            neighbours: Some(8),
            ..WhitenSpec::default()
        };
        let local_r = WhitenSpec {
            scope: WhitenScope::Local,
            radius_um: Some(45.0),
            ..WhitenSpec::default()
        };
        let cases = [
            (48usize, WhitenSpec::default(), 0..3000usize),
            (64, local_k, 17..2999),
            (33, local_r, 1..2),
        ];
        for (channels, spec, produce) in cases {
            let data = correlated(&mut rng, channels, 3000);
            let matrix = fitted(&data, channels, &spec);
            let mut stage = WhitenStage::new(client, &matrix).expect("a stage");
            assert_eq!(stage.is_dense(), spec.scope == WhitenScope::Global);
            let got = run(client, &mut stage, &data, channels, produce.clone());
            let worst = check(&matrix, &data, &got, produce.clone(), seed);
            // A CPU device takes 8 samples per unit, a GPU 1: each output's sum is the same,
            // so every choice gives the same bits (the last run of a span cut short).
            for per_unit in [1, 3, 8, 16] {
                let mut other = WhitenStage::new(client, &matrix)
                    .expect("a stage")
                    .with_samples_per_unit(per_unit);
                let again = run(client, &mut other, &data, channels, produce.clone());
                let differ = got
                    .iter()
                    .zip(&again)
                    .position(|(a, b)| a.to_bits() != b.to_bits());
                assert!(
                    differ.is_none(),
                    "seed {seed}: {channels} channels {:?}, {per_unit} samples per unit: value \
                     {differ:?} differs",
                    spec.scope
                );
            }
            // Pointwise: two spans that split the range give the same bits as one.
            let mid = (produce.start + produce.end) / 2;
            let a = run(client, &mut stage, &data, channels, produce.start..mid);
            let b = run(client, &mut stage, &data, channels, mid..produce.end);
            let stride = 3000;
            for c in 0..channels {
                for t in produce.clone() {
                    let part = if t < mid { &a } else { &b };
                    assert_eq!(
                        part[c * stride + t].to_bits(),
                        got[c * stride + t].to_bits(),
                        "seed {seed}: ({c}, {t}) depends on the span"
                    );
                }
            }
            eprintln!(
                "{target}: {channels} channels {:?}: worst error {worst:.3} of the f32 bound",
                spec.scope
            );
        }
    });
}

#[test]
fn device_covariance_equals_the_host() {
    const NAME: &str = "device_covariance_equals_the_host";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        let channels = 32;
        let windows = [(5000usize, 0..5000usize), (3000, 123..2901), (4000, 7..8)];
        let mut kernel = CovarianceKernel::new(client, channels, 5000).expect("a kernel");
        let mut host = Covariance::empty(channels);
        for (stride, produce) in windows {
            let data = correlated(&mut rng, channels, stride);
            let span = Span {
                channels,
                stride,
                origin: 0,
                segment: 0..stride as u64,
                produce: produce.clone(),
            };
            let handle = client.create_from_slice(&bytes(&data));
            kernel.accumulate(&handle, &span).expect("accumulate");
            host.merge(&Covariance::from_host(&data, channels, stride, produce).unwrap())
                .unwrap();
        }
        let got = kernel.finish().expect("finish");
        assert_eq!(got.samples, host.samples);
        let mut worst = 0.0f64;
        for i in 0..channels {
            for j in 0..channels {
                // Relative to √(Σx_i²·Σx_j²), the scale of every term's magnitude (Cauchy–Schwarz).
                let scale = (host.sums[i * channels + i] * host.sums[j * channels + j]).sqrt();
                let err = (got.sums[i * channels + j] - host.sums[i * channels + j]).abs() / scale;
                assert!(
                    err <= 2e-5,
                    "seed {seed}: sum ({i}, {j}): device {}, host {}, relative error {err}",
                    got.sums[i * channels + j],
                    host.sums[i * channels + j]
                );
                worst = worst.max(err);
            }
        }
        eprintln!("{target}: device covariance worst relative error {worst:.2e}");
    });
}

#[test]
fn fitted_whitening_whitens_its_data() {
    const NAME: &str = "fitted_whitening_whitens_its_data";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        let (channels, stride) = (24, 12_000);
        let data = correlated(&mut rng, channels, stride);
        let span = Span {
            channels,
            stride,
            origin: 0,
            segment: 0..stride as u64,
            produce: 0..stride,
        };
        let handle = client.create_from_slice(&bytes(&data));
        let mut kernel = CovarianceKernel::new(client, channels, stride).expect("a kernel");
        kernel.accumulate(&handle, &span).expect("accumulate");
        let cov = kernel.finish().expect("finish");
        let matrix = WhiteningMatrix::fit(&cov, &WhitenSpec::default(), None).expect("a fit");
        let matrix = WhiteningMatrix::from_json(&matrix.to_json()).expect("read back");
        let mut stage = WhitenStage::new(client, &matrix).expect("a stage");
        let out = client.create_from_slice(&bytes(&vec![f32::NAN; data.len()]));
        stage.launch(&handle, &out, &span).expect("launch");
        let white = read_f32(client, &out, data.len()).expect("read back");
        let c = Covariance::from_host(&white, channels, stride, 0..stride)
            .and_then(|c| c.matrix())
            .expect("the output's covariance");
        let mut worst = 0.0f64;
        for i in 0..channels {
            for j in 0..channels {
                let want = if i == j { 1.0 } else { 0.0 };
                worst = worst.max((c[i * channels + j] - want).abs());
            }
        }
        assert!(
            worst < 1e-3,
            "seed {seed}: whitened covariance is {worst} from I"
        );
        eprintln!("{target}: whitened data's covariance within {worst:.2e} of I");
    });
}
