//! The design against values computed independently of it: the Butterworth magnitude formula
//! through the bilinear pre-warp, steady states from the sections' own recursions, impulse
//! responses, and a few designs printed by scipy 1.17.1.

use super::{Sos, butter};
use crate::filter::host::sosfilt;
use dspk_types::{DspError, FilterBand, MAX_FILTER_ORDER};
use std::f64::consts::PI;

const BANDS: [FilterBand; 4] = [
    FilterBand::Highpass,
    FilterBand::Lowpass,
    FilterBand::Bandpass,
    FilterBand::Bandstop,
];

/// Cut-offs of each band used across the tests, for a rate.
fn cutoffs(band: FilterBand, rate_hz: f64) -> Vec<Vec<f64>> {
    let nyq = rate_hz / 2.0;
    match band.cutoffs() {
        1 => vec![
            vec![0.01 * nyq],
            vec![0.02 * nyq],
            vec![0.3 * nyq],
            vec![0.93 * nyq],
        ],
        _ => vec![
            vec![0.02 * nyq, 0.4 * nyq],
            vec![0.2 * nyq, 0.22 * nyq],
            vec![0.001 * nyq, 0.9 * nyq],
            vec![0.6 * nyq, 0.61 * nyq],
        ],
    }
}

/// `|H(f)|²` of a digital Butterworth filter from its definition: the analog magnitude
/// `1 / (1 + v^{2N})` at the pre-warped frequency `Ω = tan(π f / fs)`, `v` the band's
/// frequency variable (`Ω/Ωc` low-pass, `Ωc/Ω` high-pass, `(Ω² − Ω1Ω2)/(Ω(Ω2 − Ω1))` band-pass,
/// its inverse band-stop).
fn expected_power(order: u32, cut: &[f64], band: FilterBand, rate: f64, f: f64) -> f64 {
    let warp = |x: f64| (PI * x / rate).tan();
    let w = warp(f);
    let v = match band {
        FilterBand::Lowpass => w / warp(cut[0]),
        FilterBand::Highpass => warp(cut[0]) / w,
        FilterBand::Bandpass | FilterBand::Bandstop => {
            let (w1, w2) = (warp(cut[0]), warp(cut[1]));
            let bp = (w * w - w1 * w2) / (w * (w2 - w1));
            if band == FilterBand::Bandpass {
                bp
            } else {
                1.0 / bp
            }
        }
    };
    1.0 / (1.0 + v.powi(2 * order as i32))
}

#[test]
fn magnitude_follows_the_butterworth_formula_and_is_half_power_at_each_cut_off() {
    let mut worst: f64 = 0.0;
    for rate in [2500.0, 30_000.0, 30_000.123_456] {
        for band in BANDS {
            for cut in cutoffs(band, rate) {
                for order in 1..=8 {
                    let sos = butter(order, &cut, band, rate).expect("a valid design");
                    assert_eq!(
                        sos.sections.len(),
                        (order as usize * band.cutoffs()).div_ceil(2)
                    );
                    for &c in &cut {
                        let g = sos.gain_at(c, rate);
                        let err = (g - std::f64::consts::FRAC_1_SQRT_2).abs();
                        assert!(err < 1e-9, "{band:?} {cut:?} order {order} at {c} Hz: {g}");
                    }
                    for i in 1..50 {
                        let f = rate / 2.0 * f64::from(i) / 50.0;
                        let got = sos.gain_at(f, rate).powi(2);
                        let want = expected_power(order, &cut, band, rate, f);
                        let err = (got - want).abs();
                        worst = worst.max(err);
                        assert!(
                            err < 1e-9,
                            "{band:?} {cut:?} order {order} at {f} Hz: {got} vs {want}"
                        );
                    }
                }
            }
        }
    }
    println!("largest |H|² error against the formula: {worst:e}");
}

#[test]
fn dc_and_nyquist_gains_are_those_of_the_band() {
    let rate = 30_000.0;
    for order in 1..=MAX_FILTER_ORDER {
        for (band, cut, dc, nyq) in [
            (FilterBand::Highpass, vec![300.0], 0.0, 1.0),
            (FilterBand::Lowpass, vec![6000.0], 1.0, 0.0),
            (FilterBand::Bandpass, vec![300.0, 6000.0], 0.0, 0.0),
            (FilterBand::Bandstop, vec![55.0, 65.0], 1.0, 1.0),
        ] {
            let sos = butter(order, &cut, band, rate).expect("a valid design");
            let at_dc = sos.gain_at(0.0, rate);
            let at_nyq = sos.gain_at(rate / 2.0, rate);
            assert!(
                (at_dc - dc).abs() < 1e-9,
                "{band:?} order {order}: DC gain {at_dc}"
            );
            assert!(
                (at_nyq - nyq).abs() < 1e-9,
                "{band:?} order {order}: Nyquist {at_nyq}"
            );
        }
    }
}

/// Max |a − b| over the coefficients, relative to the largest coefficient of `want`.
fn relative_difference(got: &Sos, want: &[[f64; 6]]) -> f64 {
    assert_eq!(got.sections.len(), want.len(), "{got:?}");
    let scale = want.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    got.sections
        .iter()
        .flatten()
        .zip(want.iter().flatten())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
        / scale
}

/// A design's arguments (order, cut-offs, band) and the sections scipy printed for it.
type ScipyCase = (u32, &'static [f64], FilterBand, &'static [[f64; 6]]);

#[test]
fn equals_designs_printed_by_scipy() {
    // `scipy.signal.butter(*args, fs=30000, output="sos").tolist()`, scipy 1.17.1.
    let cases: [ScipyCase; 4] = [
        (
            3,
            &[300.0],
            FilterBand::Highpass,
            &[
                [
                    0.9390916523119581,
                    -0.9390916523119581,
                    0.0,
                    1.0,
                    -0.9390625058174923,
                    0.0,
                ],
                [1.0, -2.0, 1.0, 1.0, -1.9352943868599919, 0.939120798806424],
            ],
        ),
        (
            5,
            &[300.0, 6000.0],
            FilterBand::Bandpass,
            &[
                [
                    0.0179052290775511,
                    0.0358104581551022,
                    0.0179052290775511,
                    1.0,
                    -0.41488281136493704,
                    0.1568801776748323,
                ],
                [1.0, 2.0, 1.0, 1.0, -0.4964688276665688, 0.5739584248473685],
                [
                    1.0,
                    0.0,
                    -1.0,
                    1.0,
                    -1.1375979216362906,
                    0.19076020221856674,
                ],
                [1.0, -2.0, 1.0, 1.0, -1.8972507975260808, 0.9014457490171331],
                [1.0, -2.0, 1.0, 1.0, -1.9606312289011083, 0.9645632488794053],
            ],
        ),
        (
            2,
            &[1000.0],
            FilterBand::Lowpass,
            &[[
                0.009525762376195453,
                0.019051524752390907,
                0.009525762376195453,
                1.0,
                -1.7055521455440839,
                0.7436551950488657,
            ]],
        ),
        (
            1,
            &[50.0, 70.0],
            FilterBand::Bandstop,
            &[[
                0.997909979171042,
                -1.9956667537736057,
                0.9979099791710417,
                1.0,
                -1.9956667537736048,
                0.9958199583420828,
            ]],
        ),
    ];
    for (order, cut, band, want) in cases {
        let sos = butter(order, cut, band, 30_000.0).expect("a valid design");
        let diff = relative_difference(&sos, want);
        assert!(
            diff < 1e-12,
            "{band:?} {cut:?} order {order}: {diff:e}\n{sos:?}"
        );
    }
}

#[test]
fn padlen_is_scipy_s_default() {
    let hp = |order| butter(order, &[300.0], FilterBand::Highpass, 30_000.0).expect("valid");
    assert_eq!(hp(3).padlen(), 12);
    assert_eq!(hp(5).padlen(), 18);
    let bp = butter(5, &[300.0, 6000.0], FilterBand::Bandpass, 30_000.0).expect("valid");
    assert_eq!(bp.padlen(), 33);
    // No section with b2 = 0 in an even-order low-pass: 3·(2·2 + 1).
    let lp = butter(4, &[6000.0], FilterBand::Lowpass, 30_000.0).expect("valid");
    assert_eq!(lp.padlen(), 15);
}

#[test]
fn zi_is_each_section_s_steady_state_under_a_constant_input() {
    for band in BANDS {
        for order in [1, 2, 5, 8] {
            let cut = &cutoffs(band, 30_000.0)[0];
            let sos = butter(order, cut, band, 30_000.0).expect("a valid design");
            let zi = sos.zi();
            assert_eq!(zi.len(), sos.sections.len());
            // Feed each section its steady-state input (the DC gain of the sections before it)
            // for one step: a steady state does not move.
            let mut input = 1.0;
            for (s, z) in sos.sections.iter().zip(&zi) {
                let out = s[0] * input + z[0];
                let z0 = s[1] * input - s[4] * out + z[1];
                let z1 = s[2] * input - s[5] * out;
                let tol = 1e-12 * (1.0 + z[0].abs() + z[1].abs());
                assert!(
                    (z0 - z[0]).abs() < tol && (z1 - z[1]).abs() < tol,
                    "{band:?} {order}"
                );
                input = out;
            }
            // And the whole cascade: a constant in, the constant times the DC gain out.
            let c = -3.25;
            let start: Vec<[f64; 2]> = zi.iter().map(|z| [z[0] * c, z[1] * c]).collect();
            let dc = sos.gain_at(0.0, 30_000.0);
            for y in sosfilt(&sos, &[c; 64], Some(&start)) {
                assert!(
                    (y - c * dc).abs() < 1e-10,
                    "{band:?} {order}: {y} vs {}",
                    c * dc
                );
            }
        }
    }
}

#[test]
fn default_context_covers_the_impulse_response_to_1e_9() {
    let rate = 30_000.0;
    let mut report = Vec::new();
    for band in BANDS {
        for cut in cutoffs(band, rate) {
            for order in [1, 2, 3, 5, 8, MAX_FILTER_ORDER] {
                let sos = butter(order, &cut, band, rate).expect("a valid design");
                let context = sos.default_context();
                let n = usize::try_from(context).expect("a small context") + 200;
                let mut impulse = vec![0.0; n];
                impulse[0] = 1.0;
                let h = sosfilt(&sos, &impulse, None);
                let peak = h.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                let tail = h[context as usize..]
                    .iter()
                    .fold(0.0f64, |m, v| m.max(v.abs()));
                report.push((band, order, context, tail / peak));
                assert!(
                    tail < 1e-9 * peak,
                    "{band:?} {cut:?} order {order}: |h| after {context} samples is {:e} of its peak",
                    tail / peak
                );
            }
        }
    }
    let worst = report.iter().map(|r| r.3).fold(0.0, f64::max);
    println!("largest tail after the default context: {worst:e} of the peak");
}

#[test]
fn default_context_of_the_common_designs() {
    let hp3 = butter(3, &[300.0], FilterBand::Highpass, 30_000.0).expect("valid");
    // Analog poles at 300 Hz·e^{±i2π/3}, -300 Hz: the pair decays at 2π·300·sin(π/6) per second.
    let r_analog = (-2.0 * PI * 300.0 * 0.5 / 30_000.0).exp();
    assert!(
        (hp3.slowest_pole_radius() - r_analog).abs() < 1e-4,
        "{}",
        hp3.slowest_pole_radius()
    );
    let n0 = (1e-9f64.ln() / hp3.slowest_pole_radius().ln()).ceil();
    assert_eq!(hp3.default_context(), (1.25 * n0).ceil() as u64);
    assert!(
        (800..=850).contains(&hp3.default_context()),
        "{}",
        hp3.default_context()
    );
}

#[test]
fn bad_designs_are_typed_errors() {
    let rate = 30_000.0;
    let bad: [(u32, &[f64], FilterBand, f64); 10] = [
        (0, &[300.0], FilterBand::Highpass, rate),
        (MAX_FILTER_ORDER + 1, &[300.0], FilterBand::Highpass, rate),
        (3, &[300.0, 6000.0], FilterBand::Highpass, rate),
        (3, &[300.0], FilterBand::Bandpass, rate),
        (3, &[], FilterBand::Lowpass, rate),
        (3, &[15_000.0], FilterBand::Lowpass, rate),
        (3, &[0.0], FilterBand::Highpass, rate),
        (3, &[f64::NAN], FilterBand::Highpass, rate),
        (3, &[6000.0, 300.0], FilterBand::Bandpass, rate),
        (3, &[300.0], FilterBand::Highpass, f64::NAN),
    ];
    for (order, cut, band, rate) in bad {
        let err = butter(order, cut, band, rate).expect_err("refused");
        let text = err.to_string();
        assert!(!text.ends_with('.') && !text.contains('\n'), "{text}");
    }
    let err = butter(3, &[15_000.0], FilterBand::Lowpass, rate).expect_err("refused");
    assert!(matches!(err, DspError::InvalidConfig(_)));
    assert_eq!(
        err.to_string(),
        "invalid configuration: cut-off 15000 Hz is outside (0, 15000) Hz: a digital filter's cut-offs lie above 0 and below Nyquist, half the sample rate of 30000 Hz"
    );
    let err = butter(5, &[300.0], FilterBand::Bandpass, rate).expect_err("refused");
    assert_eq!(
        err.to_string(),
        "invalid configuration: a bandpass filter takes 2 cut-off frequencies, not 1 ([300.0] Hz)"
    );
}
