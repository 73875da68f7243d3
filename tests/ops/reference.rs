//! The common reference on the device against its `f64` host reference: every operator,
//! median rule and scope, even and odd set sizes, ties, a produced sub-range.

use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_kernels::read_f32;
use dspk_ops::reference::{ReferenceSets, ReferenceStage, host};
use dspk_ops::{Span, Stage};
use dspk_tests::{for_each_runtime, test_rng};
use dspk_types::{
    Contact, MedianRule, MemoryOrder, Probe, ProbeParts, RecordingInfo, ReferenceOperator,
    ReferenceScope, ReferenceSpec, SampleFormat, SampleRate,
};
use rand::Rng as _;
use rand::rngs::StdRng;

/// Samples per row of the test windows.
const STRIDE: usize = 2000;
/// What the output holds before a launch: a stage must leave it outside `produce`.
const UNTOUCHED: f32 = -7777.0;

/// `channels` channels on a Neuropixels 1.0-like layout (four columns at x 16, 48, 0, 32 µm,
/// two contacts per 20 µm row) over `shanks` shanks 250 µm apart, channels split in order.
pub(crate) fn np_info(channels: usize, shanks: usize) -> RecordingInfo {
    let per_shank = channels.div_ceil(shanks);
    let contacts = (0..channels)
        .map(|c| {
            let shank = c / per_shank;
            let i = c % per_shank;
            let x = [16.0, 48.0, 0.0, 32.0][i % 4] + 250.0 * shank as f64;
            let y = 20.0 * (i / 2) as f64;
            Some(Contact::new(x, y, shank as u32, format!("e{c}")))
        })
        .collect();
    let rate = SampleRate::new(30_000.0).expect("a valid rate");
    let mut info = RecordingInfo::new(
        "np",
        channels,
        STRIDE as u64,
        rate,
        SampleFormat::F32,
        MemoryOrder::ChannelMajor,
    );
    info.probe = Some(
        Probe::new(ProbeParts {
            channels: contacts,
            ..ProbeParts::default()
        })
        .expect("a valid probe"),
    );
    info
}

/// A device buffer of `values`.
pub(crate) fn upload(client: &Client, values: &[f32]) -> Handle {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    client.create_from_slice(&bytes)
}

/// Random `f32` samples: uniform µV around a per-channel DC offset, or small integers (many
/// ties) when `ties`.
pub(crate) fn random_values(rng: &mut StdRng, channels: usize, ties: bool) -> Vec<f32> {
    (0..channels)
        .flat_map(|_| {
            let dc: f32 = rng.random_range(-200.0..200.0);
            (0..STRIDE)
                .map(|_| {
                    if ties {
                        rng.random_range(-3i32..=3) as f32
                    } else {
                        dc + rng.random_range(-100.0f32..100.0)
                    }
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Runs `stage` over `values` producing `produce`, and returns the output rows.
pub(crate) fn run_stage(
    client: &Client,
    stage: &mut dyn Stage,
    values: &[f32],
    channels: usize,
    produce: std::ops::Range<usize>,
) -> Vec<f32> {
    let input = upload(client, values);
    let output = upload(client, &vec![UNTOUCHED; values.len()]);
    let span = Span {
        channels,
        stride: STRIDE,
        origin: 0,
        segment: 0..STRIDE as u64,
        produce,
    };
    stage
        .launch(&input, &output, &span)
        .expect("the stage launches");
    read_f32(client, &output, values.len()).expect("read back")
}

/// The largest difference of `got` from `want` on `produce` of each row, over `scale`; and
/// checks every value outside `produce` is untouched.
pub(crate) fn compare(
    got: &[f32],
    want: &[f64],
    produce: &std::ops::Range<usize>,
    what: &str,
) -> f64 {
    let mut worst = 0.0f64;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        if produce.contains(&(i % STRIDE)) {
            worst = worst.max((f64::from(g) - w).abs());
        } else {
            assert_eq!(
                g, UNTOUCHED,
                "{what}: value {i} outside produce was written"
            );
        }
    }
    worst
}

#[test]
fn reference_equals_the_host_for_every_mode() {
    const NAME: &str = "reference_equals_the_host_for_every_mode";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        let modes = [
            (ReferenceOperator::Median, MedianRule::Numpy),
            (ReferenceOperator::Median, MedianRule::Lower),
            (ReferenceOperator::Mean, MedianRule::Numpy),
        ];
        let scopes = [
            ReferenceScope::Global,
            ReferenceScope::Shank,
            ReferenceScope::Local,
        ];
        let mut case = 0;
        for channels in [32, 33] {
            for scope in scopes {
                for (operator, median) in modes {
                    case += 1;
                    let ties = case % 4 == 0;
                    // Two shanks of 16 and 16 or 17 and 16 channels: both parities per shank.
                    let info = np_info(channels, 2);
                    let spec = ReferenceSpec {
                        operator,
                        scope,
                        median,
                        ..ReferenceSpec::default()
                    };
                    let values = random_values(&mut rng, channels, ties);
                    let produce = if case % 3 == 0 { 137..1871 } else { 0..STRIDE };
                    let mut stage =
                        ReferenceStage::new(client, &spec, &info).expect("a reference stage");
                    let got = run_stage(client, &mut stage, &values, channels, produce.clone());
                    let wide: Vec<f64> = values.iter().map(|&v| f64::from(v)).collect();
                    let want = host(&wide, channels, STRIDE, stage.sets(), operator, median)
                        .expect("the host reference");
                    let largest = stage.sets().sets().iter().map(Vec::len).max().unwrap_or(0);
                    let max_abs = wide.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                    // Median: the average's and the subtraction's roundings; mean: a sum of
                    // `n` in `f32` besides.
                    let roundings = match operator {
                        ReferenceOperator::Median => 4.0,
                        ReferenceOperator::Mean => largest as f64 + 3.0,
                    };
                    let tol = roundings * f64::from(f32::EPSILON) * max_abs;
                    let what = format!(
                        "{target} {channels} channels {scope:?} {operator:?} {median:?} ties \
                         {ties} produce {produce:?} (seed {seed})"
                    );
                    let worst = compare(&got, &want, &produce, &what);
                    eprintln!("{what}: max |device - host| {worst:.3e} (tolerance {tol:.3e})");
                    assert!(worst <= tol, "{what}: {worst:e} > {tol:e}");
                }
            }
        }
    });
}

#[test]
fn local_sets_follow_spikeinterface() {
    // NP1 layout, one shank: the annulus (30, 55] µm holds the same-row contact (32 µm), the
    // far one a row away (52 µm) and four two rows away (40 and 51.2 µm), fewer at the ends,
    // where the 5 nearest beyond 30 µm stand in.
    let info = np_info(24, 1);
    let sets = ReferenceSets::of(
        &ReferenceSpec {
            scope: ReferenceScope::Local,
            ..ReferenceSpec::default()
        },
        &info,
    )
    .expect("local sets");
    let probe = info.probe.as_ref().expect("a probe");
    for c in 0..24 {
        let set = &sets.sets()[sets.set_of(c).expect("referenced")];
        let annulus: Vec<usize> = (0..24)
            .filter(|&o| {
                let d = probe.distance_um(c, o).expect("contacts");
                d > 30.0 && d <= 55.0
            })
            .collect();
        if annulus.len() >= 5 {
            assert_eq!(set, &annulus, "channel {c}");
        } else {
            assert_eq!(set.len(), 5, "channel {c}: {set:?}");
            assert!(annulus.iter().all(|o| set.contains(o)), "channel {c}");
            assert!(!set.contains(&c), "channel {c}");
        }
    }
    assert_eq!(sets.set_of(10).map(|k| sets.sets()[k].len()), Some(7));

    // Three contacts within 10 µm: nothing beyond 30 µm, every channel left as it is.
    let mut close = np_info(3, 1);
    close.probe = Some(
        Probe::new(ProbeParts {
            channels: (0..3)
                .map(|c| Some(Contact::new(0.0, 5.0 * c as f64, 0, format!("e{c}"))))
                .collect(),
            ..ProbeParts::default()
        })
        .expect("a probe"),
    );
    let spec = ReferenceSpec {
        scope: ReferenceScope::Local,
        ..ReferenceSpec::default()
    };
    let sets = ReferenceSets::of(&spec, &close).expect("local sets");
    assert_eq!(sets.unreferenced(), vec![0, 1, 2]);
    for_each_runtime(
        "local_reference_leaves_isolated_channels",
        |target, client| {
            let (seed, mut rng) = test_rng("local_reference_leaves_isolated_channels");
            let values = random_values(&mut rng, 3, false);
            let mut stage = ReferenceStage::new(client, &spec, &close).expect("a stage");
            let got = run_stage(client, &mut stage, &values, 3, 0..STRIDE);
            assert_eq!(got, values, "{target} (seed {seed})");
        },
    );
}

/// The median references in `f32` as the device must give them bit for bit: per set and
/// sample, the values of ranks `(n − 1) / 2` and `n / 2` (a zero's sign by the rule below);
/// averaged as
/// `(lo + hi) · 0.5` in `f32` by the NumPy rule for an even count; subtracted in `f32`.
fn exact_median(values: &[f32], sets: &ReferenceSets, median: MedianRule) -> Vec<f32> {
    let mut out = values.to_vec();
    for s in 0..STRIDE {
        let references: Vec<f32> = sets
            .sets()
            .iter()
            .map(|set| {
                let column: Vec<f32> = set.iter().map(|&c| values[c * STRIDE + s]).collect();
                let mut sorted = column.clone();
                sorted.sort_by(f32::total_cmp);
                let n = sorted.len();
                // A scan in member order stopping where both ranks' values have appeared,
                // each taken from the last member equal to it by then (a zero's sign).
                let first_equal = |v: f32| {
                    column
                        .iter()
                        .position(|&x| x == v)
                        .expect("a sorted value is a member's")
                };
                let (v_lo, v_hi) = (sorted[(n - 1) / 2], sorted[n / 2]);
                let stop = first_equal(v_lo).max(first_equal(v_hi));
                let last_equal = |v: f32| {
                    *column[..=stop]
                        .iter()
                        .rev()
                        .find(|&&x| x == v)
                        .expect("seen by the stop")
                };
                let (lo, hi) = (last_equal(v_lo), last_equal(v_hi));
                match median {
                    MedianRule::Numpy if n.is_multiple_of(2) => (lo + hi) * 0.5,
                    _ => lo,
                }
            })
            .collect();
        for c in 0..sets.channel_count() {
            if let Some(k) = sets.set_of(c) {
                out[c * STRIDE + s] = values[c * STRIDE + s] - references[k];
            }
        }
    }
    out
}

#[test]
fn median_is_an_exact_selection() {
    const NAME: &str = "median_is_an_exact_selection";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        for channels in [32, 33, 97, 384] {
            // A third of the samples of floats of both signs around a shared offset (a spike
            // on a few channels now and then), a third of small integers with zeros of both
            // signs (ties across the middle ranks, and zero medians), a third of wild values
            // (a few huge or infinite among them), against guessed thresholds.
            let values: Vec<f32> = (0..channels * STRIDE)
                .map(|i| match (i % STRIDE) % 3 {
                    0 => {
                        let spike = if rng.random_bool(0.02) { -300.0 } else { 0.0 };
                        ((i % STRIDE) as f32 * 0.37).sin() * 50.0
                            + rng.random_range(-100.0f32..100.0)
                            + spike
                    }
                    1 => {
                        let v = rng.random_range(-2i32..=2) as f32;
                        if v == 0.0 && rng.random_bool(0.5) {
                            -0.0
                        } else {
                            v
                        }
                    }
                    _ => match rng.random_range(0..40) {
                        0 => f32::INFINITY,
                        1 => f32::NEG_INFINITY,
                        2 => 3.0e38,
                        3 => -1.0e30,
                        _ => rng.random_range(-1.0f32..1.0) * 10f32.powi(rng.random_range(-3..6)),
                    },
                })
                .collect();
            for scope in [
                ReferenceScope::Global,
                ReferenceScope::Shank,
                ReferenceScope::Local,
            ] {
                for median in [MedianRule::Numpy, MedianRule::Lower] {
                    let info = np_info(channels, 2);
                    let spec = ReferenceSpec {
                        scope,
                        median,
                        ..ReferenceSpec::default()
                    };
                    let mut stage =
                        ReferenceStage::new(client, &spec, &info).expect("a reference stage");
                    let got = run_stage(client, &mut stage, &values, channels, 0..STRIDE);
                    let want = exact_median(&values, stage.sets(), median);
                    // The same bits, but any NaN for a NaN (an infinity less an infinite
                    // median): devices write NaNs of their own sign and payload.
                    let differ = got.iter().zip(&want).position(|(g, w)| {
                        g.to_bits() != w.to_bits() && !(g.is_nan() && w.is_nan())
                    });
                    assert!(
                        differ.is_none(),
                        "{target} {channels} channels {scope:?} {median:?} (seed {seed}): value \
                         {differ:?} is {:?}, not {:?}",
                        differ.map(|i| got[i]),
                        differ.map(|i| want[i]),
                    );
                }
            }
        }
    });
}
