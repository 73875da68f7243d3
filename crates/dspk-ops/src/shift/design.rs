//! The fractional-delay filter of the phase shift: a Kaiser-windowed sinc, designed in `f64`.

use std::f64::consts::PI;

/// Highest stop-band attenuation the design aims for (dB): past it the filter's error (below
/// 2e-9 of a sinusoid's amplitude) is far under `f32` rounding, and a wider window would only
/// give up pass band.
const MAX_ATTENUATION_DB: f64 = 180.0;

/// Highest frequency the design is accurate to, as a fraction of Nyquist (10 kHz at 30 kHz:
/// the band Neuropixels' anti-alias filters pass).
pub const ACCURATE_FRACTION_OF_NYQUIST: f64 = 2.0 / 3.0;

/// The `2·half_taps` taps that delay a signal by `shift` samples: `y[n] = Σ_i taps[i] ·
/// x[n + half_taps − 1 − i]`, i.e. tap `i` weighs the sample `k = i − (half_taps − 1)` samples
/// before `n`, and `y[n] ≈ x(n − shift)` (SpikeInterface's sign: a positive shift delays).
///
/// Tap `k` is `sinc(k − shift) · w(k − shift)`, `w` the Kaiser window of half-width
/// `half_taps` (it reaches 0 only past the outermost tap), then all taps are scaled so they
/// sum to 1 (a DC offset passes exactly). β follows Kaiser's formula for the attenuation the
/// length allows with a transition band from [`ACCURATE_FRACTION_OF_NYQUIST`] of Nyquist to
/// as far past it, `A = 8 + 2.285·(2π/3)·(2·half_taps − 1)` dB, capped at 180 dB. The
/// response's largest error against `e^{−iω·shift}` for `ω ≤ 2π/3` (measured over shifts in
/// `[0, 1)`): 2.3e-2 at 4 half-taps, 2.5e-4 at 8, 3.4e-6 at 12, 6.1e-8 at 16, 1.8e-9 at 32
/// (the default), 7.6e-10 at 64.
///
/// Meant for `shift` in `[0, 1)` (the stage refuses others), where the taps straddle the
/// delayed instant evenly; any finite value gives some taps.
pub fn taps(shift: f64, half_taps: u32) -> Vec<f64> {
    let h = f64::from(half_taps.max(1));
    let beta = kaiser_beta(attenuation_db(half_taps.max(1)));
    let i0_beta = bessel_i0(beta);
    let mut taps: Vec<f64> = (0..2 * half_taps.max(1))
        .map(|i| {
            let t = f64::from(i) - (h - 1.0) - shift;
            let r = (t / h).clamp(-1.0, 1.0);
            sinc(t) * bessel_i0(beta * (1.0 - r * r).sqrt()) / i0_beta
        })
        .collect();
    let sum: f64 = taps.iter().sum();
    if sum != 0.0 && sum.is_finite() {
        taps.iter_mut().for_each(|t| *t /= sum);
    }
    taps
}

/// The stop-band attenuation (dB) a design of `half_taps` aims for.
fn attenuation_db(half_taps: u32) -> f64 {
    let transition = 2.0 * PI * (1.0 - ACCURATE_FRACTION_OF_NYQUIST);
    let length = 2.0 * f64::from(half_taps) - 1.0;
    (8.0 + 2.285 * transition * length).min(MAX_ATTENUATION_DB)
}

/// Kaiser's β for an attenuation of `a` dB.
fn kaiser_beta(a: f64) -> f64 {
    if a > 50.0 {
        0.1102 * (a - 8.7)
    } else if a >= 21.0 {
        0.5842 * (a - 21.0).powf(0.4) + 0.07886 * (a - 21.0)
    } else {
        0.0
    }
}

/// `sin(πt)/(πt)`, 1 at 0.
fn sinc(t: f64) -> f64 {
    if t == 0.0 {
        1.0
    } else {
        (PI * t).sin() / (PI * t)
    }
}

/// The modified Bessel function of the first kind, order 0, by its power series (every term
/// positive; converges to `f64` precision well within 200 terms for `x ≤ 40`).
fn bessel_i0(x: f64) -> f64 {
    let q = x * x / 4.0;
    let mut term = 1.0;
    let mut sum = 1.0;
    for k in 1..500 {
        term *= q / f64::from(k * k);
        sum += term;
        if term < sum * 1e-17 {
            break;
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bessel_i0_matches_known_values() {
        // Abramowitz & Stegun table 9.8: I0(1) = 1.2660658777520082, I0(5) = 27.239871823604442.
        assert!((bessel_i0(0.0) - 1.0).abs() < 1e-15);
        assert!((bessel_i0(1.0) - 1.266_065_877_752_008_2).abs() < 1e-14);
        assert!((bessel_i0(5.0) / 27.239_871_823_604_442 - 1.0).abs() < 1e-14);
    }

    #[test]
    fn a_zero_shift_is_the_identity() {
        let t = taps(0.0, 8);
        assert_eq!(t.len(), 16);
        for (i, &v) in t.iter().enumerate() {
            let want = if i == 7 { 1.0 } else { 0.0 };
            assert!((v - want).abs() < 1e-15, "tap {i} = {v}");
        }
    }

    /// The response `Σ taps[i]·e^{−iω·k_i}` against `e^{−iω·shift}` over `ω ≤ 2π/3`.
    fn response_error(shift: f64, half_taps: u32) -> f64 {
        let t = taps(shift, half_taps);
        let h = f64::from(half_taps);
        (0..=400)
            .map(|j| {
                let w = f64::from(j) / 400.0 * 2.0 * PI / 3.0;
                let (re, im) = t.iter().enumerate().fold((0.0, 0.0), |(re, im), (i, &v)| {
                    let k = i as f64 - (h - 1.0);
                    (re + v * (w * k).cos(), im - v * (w * k).sin())
                });
                ((re - (w * shift).cos()).powi(2) + (im + (w * shift).sin()).powi(2)).sqrt()
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn the_response_is_the_delay_within_the_stated_error() {
        for (half_taps, bound) in [(4, 2.5e-2), (8, 3e-4), (16, 7e-8), (32, 2e-9)] {
            for s in 0..13 {
                let shift = f64::from(s) / 13.0;
                let e = response_error(shift, half_taps);
                assert!(e < bound, "half_taps {half_taps} shift {shift}: error {e}");
            }
        }
    }

    #[test]
    fn taps_sum_to_one() {
        for half_taps in [1, 3, 8, 32, 200] {
            let sum: f64 = taps(0.37, half_taps).iter().sum();
            assert!((sum - 1.0).abs() < 1e-13, "{half_taps}: {sum}");
        }
    }
}
