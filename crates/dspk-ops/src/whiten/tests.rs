//! Whitening on the host: the eigen-solver against reconstruction and orthogonality, the ZCA
//! laws (`W·C·Wᵀ = I`, `W² = C⁻¹`), local rows, the JSON form, and the fit windows.

use dspk_types::{
    Contact, FitSpec, MemoryOrder, Probe, ProbeParts, RationalTime, RecordingInfo, SampleFormat,
    SampleRate, Segments, WhitenScope, WhitenSpec,
};
use proptest::prelude::*;

use super::*;

/// SplitMix64 values in `[-1, 1)` from `seed`.
fn uniform(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed;
    move || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// A random symmetric positive definite `n × n` matrix: `B·Bᵀ/m + δ·I` of a random `n × m`
/// `B`, scaled like a covariance in µV² (`scale`).
fn random_spd(n: usize, seed: u64, scale: f64) -> Vec<f64> {
    let mut r = uniform(seed);
    let m = n + 3;
    let b: Vec<f64> = (0..n * m).map(|_| r()).collect();
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            let s: f64 = (0..m).map(|k| b[i * m + k] * b[j * m + k]).sum();
            a[i * n + j] = scale * (s / m as f64 + if i == j { 0.05 } else { 0.0 });
        }
    }
    a
}

fn matmul(a: &[f64], b: &[f64], n: usize) -> Vec<f64> {
    let mut out = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            out[i * n + j] = (0..n).map(|k| a[i * n + k] * b[k * n + j]).sum();
        }
    }
    out
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

fn identity(n: usize) -> Vec<f64> {
    let mut out = vec![0.0; n * n];
    for i in 0..n {
        out[i * n + i] = 1.0;
    }
    out
}

fn global(epsilon: f64) -> WhitenSpec {
    WhitenSpec {
        epsilon,
        ..WhitenSpec::default()
    }
}

/// A two-column probe with rows 20 µm apart, columns 32 µm apart (NP-like).
fn grid_probe(n: usize) -> Probe {
    let channels = (0..n)
        .map(|c| {
            Some(Contact::new(
                if c % 2 == 0 { 0.0 } else { 32.0 },
                (c / 2) as f64 * 20.0,
                0,
                format!("e{c}"),
            ))
        })
        .collect();
    Probe::new(ProbeParts {
        channels,
        ..ProbeParts::default()
    })
    .unwrap()
}

proptest! {
    #[test]
    fn eigen_reconstructs_and_is_orthonormal(n in 1usize..24, seed in any::<u64>(), scale in 1e-3f64..1e4) {
        let a = random_spd(n, seed, scale);
        let e = SymmetricEigen::of(&a, n).unwrap();
        let norm = a.iter().map(|v| v * v).sum::<f64>().sqrt();
        let back = e.apply(|l| l);
        prop_assert!(max_abs_diff(&back, &a) <= 1e-13 * norm, "E·D·Eᵀ ≠ A by {}", max_abs_diff(&back, &a));
        let mut ete = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                ete[i * n + j] = (0..n).map(|k| e.vectors[k * n + i] * e.vectors[k * n + j]).sum();
            }
        }
        prop_assert!(max_abs_diff(&ete, &identity(n)) <= 1e-13);
        prop_assert!(e.values.windows(2).all(|w| w[0] >= w[1]));
        // Each column is an eigenvector: A·e_k = λ_k·e_k.
        for k in 0..n {
            for i in 0..n {
                let av: f64 = (0..n).map(|j| a[i * n + j] * e.vectors[j * n + k]).sum();
                prop_assert!((av - e.values[k] * e.vectors[i * n + k]).abs() <= 1e-13 * norm);
            }
        }
    }

    #[test]
    fn global_zca_whitens_the_covariance(n in 1usize..20, seed in any::<u64>(), scale in 1e-2f64..1e3) {
        let c = random_spd(n, seed, scale);
        let cov = Covariance::from_matrix(n, &c, 1000).unwrap();
        let w = WhiteningMatrix::fit(&cov, &global(0.0), None).unwrap();
        prop_assert!(w.is_dense());
        let wd = w.to_dense();
        let mut wt = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                wt[i * n + j] = wd[j * n + i];
            }
        }
        // ZCA is symmetric, whitens (W·C·Wᵀ = I) and squares to the inverse (W²·C = I).
        prop_assert!(max_abs_diff(&wd, &wt) <= 1e-9 * wd.iter().fold(0.0f64, |m, v| m.max(v.abs())));
        let wcw = matmul(&matmul(&wd, &c, n), &wt, n);
        prop_assert!(max_abs_diff(&wcw, &identity(n)) <= 1e-8, "W·C·Wᵀ − I = {}", max_abs_diff(&wcw, &identity(n)));
        let wwc = matmul(&matmul(&wd, &wd, n), &c, n);
        prop_assert!(max_abs_diff(&wwc, &identity(n)) <= 1e-8);
    }

    #[test]
    fn local_rows_are_the_centre_rows_of_their_neighbourhoods(n in 2usize..24, k in 1u32..12, seed in any::<u64>()) {
        let c = random_spd(n, seed, 50.0);
        let cov = Covariance::from_matrix(n, &c, 1).unwrap();
        let probe = grid_probe(n);
        let spec = WhitenSpec { scope: WhitenScope::Local, neighbours: Some(k), ..global(1e-6) };
        let w = WhiteningMatrix::fit(&cov, &spec, Some(&probe)).unwrap();
        for centre in 0..n {
            let hood = probe.nearest(centre, k as usize).unwrap();
            let mut sorted = hood.clone();
            sorted.sort_unstable();
            let row = &w.rows()[centre];
            prop_assert_eq!(row.columns.iter().map(|&c| c as usize).collect::<Vec<_>>(), sorted.clone());
            // The global ZCA of the sub-covariance (in ascending order), its centre row.
            let m = sorted.len();
            let sub: Vec<f64> = sorted.iter().flat_map(|&i| sorted.iter().map(move |&j| (i, j))).map(|(i, j)| c[i * n + j]).collect();
            let sub_w = WhiteningMatrix::fit(&Covariance::from_matrix(m, &sub, 1).unwrap(), &global(1e-6), None).unwrap();
            let at = sorted.iter().position(|&i| i == centre).unwrap();
            let want = &sub_w.rows()[at].weights;
            prop_assert!(max_abs_diff(&row.weights, want) <= 1e-12 * want.iter().fold(0.0f64, |a, v| a.max(v.abs())));
        }
    }
}

#[test]
fn local_with_every_channel_is_global() {
    let n = 10;
    let c = random_spd(n, 7, 30.0);
    let cov = Covariance::from_matrix(n, &c, 1).unwrap();
    let g = WhiteningMatrix::fit(&cov, &global(1e-8), None).unwrap();
    let spec = WhitenSpec {
        scope: WhitenScope::Local,
        neighbours: Some(64),
        ..global(1e-8)
    };
    let l = WhiteningMatrix::fit(&cov, &spec, Some(&grid_probe(n))).unwrap();
    assert!(l.is_dense());
    assert!(max_abs_diff(&g.to_dense(), &l.to_dense()) < 1e-12);
}

#[test]
fn radius_takes_the_channel_and_the_contacts_within() {
    let n = 12;
    let c = random_spd(n, 3, 30.0);
    let cov = Covariance::from_matrix(n, &c, 1).unwrap();
    let spec = WhitenSpec {
        scope: WhitenScope::Local,
        radius_um: Some(25.0),
        ..global(1e-8)
    };
    let w = WhiteningMatrix::fit(&cov, &spec, Some(&grid_probe(n))).unwrap();
    // Within 25 µm of channel 4 (0, 40): channel 2 (0, 20) and 6 (0, 60); 32 µm across is out.
    assert_eq!(w.rows()[4].columns, vec![2, 4, 6]);
    // Channel 0 (0, 0): only channel 2 above it.
    assert_eq!(w.rows()[0].columns, vec![0, 2]);
    assert!(!w.is_dense());
}

#[test]
fn fit_refuses_what_it_cannot_fit() {
    let cov = Covariance::from_matrix(2, &[1.0, 0.0, 0.0, 1.0], 1).unwrap();
    let local = WhitenSpec {
        scope: WhitenScope::Local,
        neighbours: Some(2),
        ..global(1e-8)
    };
    let e = WhiteningMatrix::fit(&cov, &local, None).unwrap_err();
    assert!(e.to_string().contains("needs the probe"), "{e}");
    let e = WhiteningMatrix::fit(&cov, &local, Some(&grid_probe(3))).unwrap_err();
    assert!(e.to_string().contains('3'), "{e}");
    let e = WhiteningMatrix::fit(&Covariance::empty(2), &global(1e-8), None).unwrap_err();
    assert!(e.to_string().contains("no samples"), "{e}");
}

#[test]
fn json_round_trips_bit_for_bit_and_is_checked() {
    let n = 6;
    let cov = Covariance::from_matrix(n, &random_spd(n, 11, 40.0), 15_000).unwrap();
    let spec = WhitenSpec {
        scope: WhitenScope::Local,
        neighbours: Some(3),
        ..global(1e-8)
    };
    let w = WhiteningMatrix::fit(&cov, &spec, Some(&grid_probe(n))).unwrap();
    let back = WhiteningMatrix::from_json(&w.to_json()).unwrap();
    assert_eq!(back, w);
    for (a, b) in back.rows().iter().zip(w.rows()) {
        for (x, y) in a.weights.iter().zip(&b.weights) {
            assert_eq!(x.to_bits(), y.to_bits());
        }
    }
    let mut parts = w.parts().clone();
    parts.rows[2].columns[0] = 9;
    let e = WhiteningMatrix::from_parts(parts).unwrap_err();
    assert!(e.to_string().contains("mixes channel 9"), "{e}");
    let mut parts = w.parts().clone();
    parts.rows[1].columns.reverse();
    assert!(WhiteningMatrix::from_parts(parts).is_err());
    let mut parts = w.parts().clone();
    parts.rows.pop();
    assert!(WhiteningMatrix::from_parts(parts).is_err());
    assert!(WhiteningMatrix::from_json("{\"version\": 1}").is_err());
}

#[test]
fn apply_host_is_the_matrix_product() {
    let (n, stride) = (3, 5);
    let parts = WhiteningParts {
        version: MATRIX_FORMAT_VERSION,
        channels: n,
        scope: WhitenScope::Local,
        epsilon: 0.0,
        samples: 0,
        rows: vec![
            WhiteningRow {
                columns: vec![0, 2],
                weights: vec![2.0, -1.0],
            },
            WhiteningRow {
                columns: vec![1],
                weights: vec![0.5],
            },
            WhiteningRow {
                columns: vec![],
                weights: vec![],
            },
        ],
    };
    let w = WhiteningMatrix::from_parts(parts).unwrap();
    let x: Vec<f32> = (0..n * stride).map(|v| v as f32).collect();
    let y = w.apply_host(&x, stride, 1..4).unwrap();
    assert_eq!(&y[0..5], &[0.0, 2.0 - 11.0, 4.0 - 12.0, 6.0 - 13.0, 0.0]);
    assert_eq!(&y[5..10], &[0.0, 3.0, 3.5, 4.0, 0.0]);
    assert_eq!(&y[10..15], &[0.0; 5]);
}

#[test]
fn host_covariance_sums_products_and_merges() {
    let (n, stride) = (3, 7);
    let mut r = uniform(5);
    let x: Vec<f32> = (0..n * stride).map(|_| (r() * 100.0) as f32).collect();
    let all = Covariance::from_host(&x, n, stride, 1..7).unwrap();
    let mut parts = Covariance::from_host(&x, n, stride, 1..3).unwrap();
    parts
        .merge(&Covariance::from_host(&x, n, stride, 3..7).unwrap())
        .unwrap();
    assert_eq!(all.samples, 6);
    assert_eq!(parts.samples, 6);
    for i in 0..n {
        for j in 0..n {
            let want: f64 = (1..7)
                .map(|t| f64::from(x[i * stride + t]) * f64::from(x[j * stride + t]))
                .sum();
            assert!((all.sums[i * n + j] - want).abs() <= 1e-12 * want.abs().max(1.0));
            assert!((parts.sums[i * n + j] - want).abs() <= 1e-12 * want.abs().max(1.0));
        }
    }
}

fn info(segments: &[u64]) -> RecordingInfo {
    let total = segments.iter().sum();
    let mut info = RecordingInfo::new(
        "fit",
        4,
        total,
        SampleRate::new(30_000.0).unwrap(),
        SampleFormat::I16,
        MemoryOrder::TimeMajor,
    );
    info.segments = Some(
        Segments::new(
            segments
                .iter()
                .map(|&s| (s, 0, RationalTime::ZERO))
                .collect::<Vec<_>>(),
        )
        .unwrap(),
    );
    info
}

proptest! {
    #[test]
    fn fit_windows_are_seeded_disjoint_and_inside_segments(
        segments in prop::collection::vec(1u64..200_000, 1..5),
        windows in 1u32..30,
        size in 1u64..40_000,
        seed in any::<u64>(),
    ) {
        let info = info(&segments);
        let fit = FitSpec { windows, window_samples: size, seed, every: None };
        let got = fit_windows(&info, &fit);
        prop_assert_eq!(&got, &fit_windows(&info, &fit));
        let ranges: Vec<_> = info.segments().ranges().collect();
        let slots: u64 = segments.iter().map(|s| s / size).sum();
        if slots > 0 {
            prop_assert_eq!(got.len() as u64, slots.min(u64::from(windows)));
            prop_assert!(got.iter().all(|r| r.end - r.start == size));
        } else {
            prop_assert_eq!(got.len(), segments.len().min(windows as usize));
        }
        for r in &got {
            prop_assert!(ranges.iter().any(|s| s.start <= r.start && r.end <= s.end), "{:?} crosses a segment", r);
        }
        prop_assert!(got.windows(2).all(|w| w[0].end <= w[1].start));
    }
}

#[test]
fn fit_windows_change_with_the_seed() {
    let info = info(&[30_000 * 600]);
    let a = fit_windows(&info, &FitSpec::default());
    let b = fit_windows(
        &info,
        &FitSpec {
            seed: 1,
            ..FitSpec::default()
        },
    );
    assert_eq!(a.len(), 20);
    assert_ne!(a, b);
}

#[test]
fn every_nth_window_is_kilosorts_choice_of_batches() {
    let every = |segments: &[u64], windows: u32| {
        fit_windows(
            &info(segments),
            &FitSpec {
                windows,
                window_samples: 60_000,
                seed: 9,
                every: Some(25),
            },
        )
    };
    // Kilosort4 on 300 s: 150 batches, `range(0, 149, 25)`.
    let batches = |js: &[u64], at: u64| -> Vec<std::ops::Range<u64>> {
        js.iter()
            .map(|j| at + j * 60_000..at + (j + 1) * 60_000)
            .collect()
    };
    let kilosort = batches(&[0, 25, 50, 75, 100, 125], 0);
    assert_eq!(every(&[9_000_000], 64), kilosort);
    // A partial last batch is the one left out: 151 batches, `range(0, 150, 25)`.
    assert_eq!(every(&[9_000_001], 64), kilosort);
    // 151 whole batches: `range(0, 150, 25)` still ends at 125; 152 reach 150.
    assert_eq!(every(&[9_060_000], 64), kilosort);
    assert_eq!(
        every(&[9_120_000], 64),
        batches(&[0, 25, 50, 75, 100, 125, 150], 0)
    );
    // `windows` caps the count; each segment counts its batches from its own start (26 whole
    // batches and one sample: `range(0, 26, 25)`).
    assert_eq!(every(&[9_000_000], 2), batches(&[0, 25], 0));
    assert_eq!(
        every(&[1_560_001, 200_000], 64),
        [batches(&[0, 25], 0), batches(&[0], 1_560_001)].concat()
    );
    // One batch or less: the whole recording, as the seeded choice falls back.
    assert_eq!(every(&[60_000], 64), vec![0..60_000]);
    assert_eq!(every(&[1_000], 64), vec![0..1_000]);
}
