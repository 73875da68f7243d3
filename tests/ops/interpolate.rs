//! Bad-channel interpolation on the device against its `f64` host reference, and its weights
//! against SpikeInterface's rules computed independently here.

use dspk_ops::interpolate::{InterpolateStage, InterpolationWeights, host, recommended_sigma_um};
use dspk_tests::{for_each_runtime, test_rng};
use dspk_types::{Contact, InterpolateSpec, Probe, ProbeParts};
use rand::Rng as _;

use crate::reference::{compare, np_info, random_values, run_stage};

/// Samples per row of the reference module's windows.
const STRIDE: usize = 2000;

fn spec(channels: Vec<usize>, sigma_um: Option<f64>) -> InterpolateSpec {
    InterpolateSpec {
        channels,
        detect: false,
        sigma_um,
        p: 1.3,
        weight_floor: 0.005,
    }
}

#[test]
fn interpolation_equals_the_host() {
    const NAME: &str = "interpolation_equals_the_host";
    for_each_runtime(NAME, |target, client| {
        let (seed, mut rng) = test_rng(NAME);
        for (case, channels) in [32usize, 33, 48].into_iter().enumerate() {
            let info = np_info(channels, 1 + case % 2);
            // A few bad channels, one at each end among them, neighbours of each other too.
            let mut bad = vec![0, channels - 1, 5, 6];
            bad.push(rng.random_range(7..channels - 1));
            let sigma = [None, Some(20.0), Some(35.5)][case];
            let spec = spec(bad, sigma);
            let values = random_values(&mut rng, channels, false);
            let produce = if case == 1 { 211..1999 } else { 0..STRIDE };
            let mut stage = InterpolateStage::new(client, &spec, &info).expect("a stage");
            let got = run_stage(client, &mut stage, &values, channels, produce.clone());
            let wide: Vec<f64> = values.iter().map(|&v| f64::from(v)).collect();
            let want = host(&wide, channels, STRIDE, stage.weights()).expect("the host reference");
            // Weights rounded to f32, a sum of n products in f32: about (n + 2) roundings of
            // max |x| (the weights sum to at most 1).
            let largest = stage
                .weights()
                .rows()
                .iter()
                .map(Vec::len)
                .max()
                .unwrap_or(0);
            let max_abs = wide.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let tol = (largest as f64 + 2.0) * f64::from(f32::EPSILON) * max_abs;
            let what = format!(
                "{target} {channels} channels, bad {:?}, sigma {:?} (used {}), produce \
                 {produce:?} (seed {seed})",
                spec.channels,
                spec.sigma_um,
                stage.weights().sigma_um()
            );
            let worst = compare(&got, &want, &produce, &what);
            eprintln!("{what}: max |device - host| {worst:.3e} (tolerance {tol:.3e})");
            assert!(worst <= tol, "{what}: {worst:e} > {tol:e}");
            // Good channels are copied bit for bit.
            for c in (0..channels).filter(|c| !spec.channels.contains(c)) {
                let row = c * STRIDE;
                for s in produce.clone() {
                    assert_eq!(got[row + s], values[row + s], "{what}: good channel {c}");
                }
            }
        }
    });
}

#[test]
fn weights_follow_spikeinterface() {
    // NP1 layout (rows 20 µm apart): σ defaults to 20 µm.
    let info = np_info(24, 1);
    let probe = info.probe.as_ref().expect("a probe");
    assert_eq!(recommended_sigma_um(probe), Some(20.0));
    let weights = InterpolationWeights::of(&spec(vec![9, 3, 9], None), &info).expect("weights");
    assert_eq!(weights.bad(), &[3, 9]);
    assert_eq!(weights.sigma_um(), 20.0);
    for (&b, row) in weights.bad().iter().zip(weights.rows()) {
        // Independently: the kernel over the good channels, floored, normalised, floored.
        let good: Vec<usize> = (0..24).filter(|&c| c != 3 && c != 9).collect();
        let raw: Vec<f64> = good
            .iter()
            .map(|&g| {
                let d = probe.distance_um(b, g).expect("contacts");
                let w = (-(d / 20.0f64).powf(1.3)).exp();
                if w < 0.005 { 0.0 } else { w }
            })
            .collect();
        let sum: f64 = raw.iter().sum();
        let want: Vec<(usize, f64)> = good
            .iter()
            .zip(&raw)
            .map(|(&g, &w)| (g, w / sum))
            .filter(|&(_, w)| w >= 0.005)
            .collect();
        assert_eq!(row, &want, "bad channel {b}");
        assert!(!row.is_empty());
        assert!(row.iter().map(|&(_, w)| w).sum::<f64>() <= 1.0 + 1e-12);
    }

    // The most common height step, not the smallest: heights 0, 10, 30, 50, 70 step by 20
    // three times and by 10 once.
    let parts = ProbeParts {
        channels: [0.0, 10.0, 30.0, 50.0, 70.0]
            .iter()
            .enumerate()
            .map(|(i, &y)| Some(Contact::new(0.0, y, 0, format!("e{i}"))))
            .collect(),
        ..ProbeParts::default()
    };
    let probe = Probe::new(parts).expect("a probe");
    assert_eq!(recommended_sigma_um(&probe), Some(20.0));

    // A bad channel far from every good one gets no weights (SpikeInterface's NaN → 0): it is
    // written as 0.
    let mut far = np_info(4, 1);
    far.probe = Some(
        Probe::new(ProbeParts {
            channels: [0.0, 20.0, 40.0, 5000.0]
                .iter()
                .enumerate()
                .map(|(i, &y)| Some(Contact::new(0.0, y, 0, format!("e{i}"))))
                .collect(),
            ..ProbeParts::default()
        })
        .expect("a probe"),
    );
    let weights = InterpolationWeights::of(&spec(vec![3], None), &far).expect("weights");
    assert_eq!(weights.rows(), &[Vec::new()]);
}
