//! The `f64` host reference of the temporal filters: scipy's `sosfilt` (transposed direct form
//! II, section by section per sample, in scipy's arithmetic order) and `sosfiltfilt` (odd
//! extension by `padlen`, forward from `zi·x[0]`, backward from `zi·y[-1]`).

use super::design::Sos;
use dspk_types::{DspError, DspResult};

/// `scipy.signal.sosfilt(sos, x, zi=zi)`: filter `x` through the sections in order. `zi` is the
/// start state per section, already scaled (scipy's semantics; `None`: at rest).
///
/// # Panics
/// When `zi` does not hold one state per section (a caller's bug).
pub fn sosfilt(sos: &Sos, x: &[f64], zi: Option<&[[f64; 2]]>) -> Vec<f64> {
    let mut state = match zi {
        Some(zi) => {
            assert_eq!(
                zi.len(),
                sos.sections.len(),
                "sosfilt: one start state per section"
            );
            zi.to_vec()
        }
        None => vec![[0.0; 2]; sos.sections.len()],
    };
    x.iter()
        .map(|&sample| {
            let mut cur = sample;
            for (s, z) in sos.sections.iter().zip(state.iter_mut()) {
                let new = s[0] * cur + z[0];
                z[0] = s[1] * cur - s[4] * new + z[1];
                z[1] = s[2] * cur - s[5] * new;
                cur = new;
            }
            cur
        })
        .collect()
}

/// The steady-state start for a signal whose first sample is `x0`: `zi · x0`.
fn start_state(sos: &Sos, x0: f64) -> Vec<[f64; 2]> {
    sos.zi().iter().map(|z| [z[0] * x0, z[1] * x0]).collect()
}

/// `scipy.signal.sosfilt(sos, x, zi=sosfilt_zi(sos) * x[0])`: forward only, starting as if `x[0]`
/// had always been the input (the causal mode's reference). Empty in, empty out.
pub fn sosfilt_causal(sos: &Sos, x: &[f64]) -> Vec<f64> {
    match x.first() {
        Some(&x0) => sosfilt(sos, x, Some(&start_state(sos, x0))),
        None => Vec::new(),
    }
}

/// `scipy.signal.sosfiltfilt(sos, x)` with its defaults (`padtype="odd"`, `padlen =`
/// [`Sos::padlen`]): zero-phase, the input extended at each end by its odd reflection, filtered
/// forward from `zi·ext[0]`, backward from `zi·y[-1]`, and the extension cut off again.
///
/// An input of `padlen` samples or fewer is an error, as in scipy.
pub fn sosfiltfilt(sos: &Sos, x: &[f64]) -> DspResult<Vec<f64>> {
    let edge = sos.padlen();
    if x.len() <= edge {
        return Err(DspError::BufferUnderrun {
            what: format!("sosfiltfilt's input (longer than its padlen of {edge})"),
            needed: edge + 1,
            available: x.len(),
        });
    }
    let ext = odd_ext(x, edge);
    let forward = sosfilt(sos, &ext, Some(&start_state(sos, ext[0])));
    let mut reversed: Vec<f64> = forward.into_iter().rev().collect();
    let y0 = reversed[0];
    reversed = sosfilt(sos, &reversed, Some(&start_state(sos, y0)));
    reversed.reverse();
    Ok(reversed[edge..reversed.len() - edge].to_vec())
}

/// scipy's `odd_ext(x, n)`: `x` with `n` samples on each side reflected through its end
/// sample, `2·x[0] − x[n..=1]` before and `2·x[-1] − x[-2..=-(n+1)]` after. Needs `n < x.len()`.
fn odd_ext(x: &[f64], n: usize) -> Vec<f64> {
    let (first, last) = (x[0], x[x.len() - 1]);
    let len = x.len();
    let before = (1..=n).rev().map(|i| 2.0 * first - x[i]);
    let after = (1..=n).map(|i| 2.0 * last - x[len - 1 - i]);
    before.chain(x.iter().copied()).chain(after).collect()
}

#[cfg(test)]
mod tests {
    use super::{odd_ext, sosfilt, sosfilt_causal, sosfiltfilt};
    use crate::filter::design::{Sos, butter};
    use dspk_types::FilterBand;

    /// A small deterministic pseudo-random signal (xorshift), values in [-1, 1).
    fn noise(seed: u64, n: usize) -> Vec<f64> {
        let mut s = seed.max(1);
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
            })
            .collect()
    }

    #[test]
    fn odd_extension_reflects_through_the_end_samples() {
        let x = [1.0, 4.0, 2.0, 8.0, 5.0];
        assert_eq!(
            odd_ext(&x, 2),
            vec![0.0, -2.0, 1.0, 4.0, 2.0, 8.0, 5.0, 2.0, 8.0]
        );
    }

    #[test]
    fn sosfilt_of_an_impulse_is_the_cascade_of_each_section_s_recursion() {
        // One section computed directly from its difference equation
        // y[n] = b0 x[n] + b1 x[n-1] + b2 x[n-2] - a1 y[n-1] - a2 y[n-2].
        let s = [0.2, -0.1, 0.05, 1.0, -0.5, 0.25];
        let sos = Sos { sections: vec![s] };
        let x = noise(7, 50);
        let mut y = vec![0.0; x.len()];
        for n in 0..x.len() {
            let at = |v: &[f64], k: usize| if n >= k { v[n - k] } else { 0.0 };
            y[n] = s[0] * x[n] + s[1] * at(&x, 1) + s[2] * at(&x, 2)
                - s[4] * at(&y, 1)
                - s[5] * at(&y, 2);
        }
        let got = sosfilt(&sos, &x, None);
        for (g, e) in got.iter().zip(&y) {
            assert!((g - e).abs() < 1e-14, "{g} vs {e}");
        }
    }

    #[test]
    fn causal_filter_of_a_constant_is_its_steady_state() {
        for (band, cut) in [
            (FilterBand::Lowpass, vec![1000.0]),
            (FilterBand::Bandstop, vec![50.0, 70.0]),
        ] {
            let sos = butter(4, &cut, band, 30_000.0).expect("a valid design");
            let y = sosfilt_causal(&sos, &[3.5; 400]);
            // DC gain 1 for both: the output is the input from the first sample on (to the
            // rounding of a narrow notch's poles, 1e-3 from the unit circle).
            for v in y {
                assert!((v - 3.5).abs() < 1e-9, "{band:?}: {v}");
            }
        }
        let hp = butter(3, &[300.0], FilterBand::Highpass, 30_000.0).expect("a valid design");
        for v in sosfilt_causal(&hp, &[-2.0; 400]) {
            assert!(v.abs() < 1e-12, "high-pass of a constant: {v}");
        }
        assert!(sosfilt_causal(&hp, &[]).is_empty());
    }

    #[test]
    fn zero_phase_filter_of_a_constant_is_the_constant_through_a_low_pass() {
        let sos = butter(5, &[2000.0], FilterBand::Lowpass, 30_000.0).expect("a valid design");
        let y = sosfiltfilt(&sos, &[7.25; 100]).expect("longer than padlen");
        assert_eq!(y.len(), 100);
        for v in y {
            assert!((v - 7.25).abs() < 1e-12, "{v}");
        }
    }

    #[test]
    fn zero_phase_filter_keeps_a_pass_band_sine_in_phase_and_level() {
        // 1 kHz through a 300–6000 Hz band-pass (|H|² ≈ 1 there): out = in away from the ends.
        let rate = 30_000.0;
        let sos = butter(5, &[300.0, 6000.0], FilterBand::Bandpass, rate).expect("a valid design");
        let gain = sos.gain_at(1000.0, rate).powi(2);
        let x: Vec<f64> = (0..6000)
            .map(|n| (2.0 * std::f64::consts::PI * 1000.0 * n as f64 / rate).sin())
            .collect();
        let y = sosfiltfilt(&sos, &x).expect("longer than padlen");
        for n in 2000..4000 {
            assert!(
                (y[n] - gain * x[n]).abs() < 1e-9,
                "sample {n}: {} vs {}",
                y[n],
                x[n]
            );
        }
    }

    #[test]
    fn zero_phase_filter_refuses_an_input_no_longer_than_padlen() {
        let sos = butter(3, &[300.0], FilterBand::Highpass, 30_000.0).expect("a valid design");
        assert_eq!(sos.padlen(), 12);
        let err = sosfiltfilt(&sos, &[1.0; 12]).expect_err("12 samples are not enough");
        assert_eq!(
            err.to_string(),
            "buffer underrun in sosfiltfilt's input (longer than its padlen of 12): needed 13, only 12 available"
        );
        assert_eq!(sosfiltfilt(&sos, &[1.0; 13]).expect("13 are").len(), 13);
    }
}
