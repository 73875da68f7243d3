//! Butterworth design on the host in `f64`: second-order sections equal to
//! `scipy.signal.butter(order, cutoff_hz, band, fs=rate_hz, output="sos")`.
//!
//! Written here rather than taken from a crate: the device filter and its seam guarantees rely
//! on matching scipy's sections *as scipy orders and pairs them* (`zpk2sos`'s `'nearest'`
//! pairing, `_cplxreal`'s ordering), not merely an equivalent filter, and no maintained Rust
//! crate promises that. The steps are scipy's (analog prototype → band transform with pre-warped
//! edges → bilinear transform → sections); the Python oracle (`python/tests/test_ops_design.py`)
//! holds the result to scipy's to 1e-12 relative.

mod complex;
mod zpk;

use complex::C64;
use dspk_types::{DspError, DspResult, FilterBand, MAX_FILTER_ORDER};
use zpk::Zpk;

/// The relative level the slowest pole's envelope must fall below within
/// [`Sos::default_context`].
pub const CONTEXT_DECAY: f64 = 1e-9;

/// Second-order sections, scipy's layout: each `[b0, b1, b2, a0 (= 1), a1, a2]`, applied in order.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sos {
    /// The sections, first applied first.
    pub sections: Vec<[f64; 6]>,
}

/// A Butterworth filter as second-order sections, equal to `scipy.signal.butter(order,
/// cutoff_hz, band, fs=rate_hz, output="sos")` (same sections in the same order, to rounding).
///
/// `cutoff_hz` holds one frequency for high- and low-pass, two ascending ones for band-pass and
/// band-stop, each strictly between 0 and Nyquist (`rate_hz / 2`); `order` is 1 to
/// [`MAX_FILTER_ORDER`]. Anything else is a typed error.
pub fn butter(order: u32, cutoff_hz: &[f64], band: FilterBand, rate_hz: f64) -> DspResult<Sos> {
    check(order, cutoff_hz, band, rate_hz)?;
    // scipy: Wn = cutoff / (fs / 2), then pre-warp at fs = 2: 2·2·tan(π·Wn / 2).
    let nyquist_hz = rate_hz / 2.0;
    let warped: Vec<f64> = cutoff_hz
        .iter()
        .map(|&c| {
            let wn = c / nyquist_hz;
            2.0 * 2.0 * (std::f64::consts::PI * wn / 2.0).tan()
        })
        .collect();
    let prototype = Zpk::butterworth_prototype(order);
    let analog = match band {
        FilterBand::Lowpass => prototype.to_lowpass(warped[0]),
        FilterBand::Highpass => prototype.to_highpass(warped[0]),
        FilterBand::Bandpass | FilterBand::Bandstop => {
            let bw = warped[1] - warped[0];
            let wo = (warped[0] * warped[1]).sqrt();
            if band == FilterBand::Bandpass {
                prototype.to_bandpass(wo, bw)
            } else {
                prototype.to_bandstop(wo, bw)
            }
        }
    };
    let digital = analog.bilinear(2.0);
    let sections = zpk::to_sections(&digital).map_err(|e| {
        DspError::config(format!(
            "the order-{order} {} Butterworth at {cutoff_hz:?} Hz (rate {rate_hz} Hz) could not be split into second-order sections: {}",
            band_name(band),
            e.0
        ))
    })?;
    Ok(Sos { sections })
}

/// The band as scipy's `btype` spells it.
fn band_name(band: FilterBand) -> &'static str {
    match band {
        FilterBand::Highpass => "highpass",
        FilterBand::Lowpass => "lowpass",
        FilterBand::Bandpass => "bandpass",
        FilterBand::Bandstop => "bandstop",
    }
}

/// The design's preconditions, each failure one sentence with the offending values.
fn check(order: u32, cutoff_hz: &[f64], band: FilterBand, rate_hz: f64) -> DspResult<()> {
    if !(rate_hz.is_finite() && rate_hz > 0.0) {
        return Err(DspError::InvalidSampleRate {
            value: rate_hz.to_string(),
        });
    }
    if order == 0 || order > MAX_FILTER_ORDER {
        return Err(DspError::config(format!(
            "a Butterworth filter's order must be 1 to {MAX_FILTER_ORDER}, not {order}"
        )));
    }
    let name = band_name(band);
    if cutoff_hz.len() != band.cutoffs() {
        return Err(DspError::config(format!(
            "a {name} filter takes {} cut-off frequencies, not {} ({cutoff_hz:?} Hz)",
            band.cutoffs(),
            cutoff_hz.len()
        )));
    }
    let nyquist_hz = rate_hz / 2.0;
    for &c in cutoff_hz {
        if !(c > 0.0 && c < nyquist_hz) {
            return Err(DspError::config(format!(
                "cut-off {c} Hz is outside (0, {nyquist_hz}) Hz: a digital filter's cut-offs lie above 0 and below Nyquist, half the sample rate of {rate_hz} Hz"
            )));
        }
    }
    if let [low, high] = cutoff_hz
        && low >= high
    {
        return Err(DspError::config(format!(
            "the {name} filter's cut-offs {low} Hz and {high} Hz are not ascending: the lower edge comes first"
        )));
    }
    Ok(())
}

impl Sos {
    /// `scipy.signal.sosfilt_zi`: for each section the state `[z0, z1]` that a unit step has
    /// reached at steady state, already scaled by the gain of the sections before it, so that
    /// `zi · x[0]` starts the cascade as if `x[0]` had always been there.
    ///
    /// Each section's `(b, a)` is scipy's `lfilter_zi`: with `y∞ = Σb / Σa`, `d = b − y∞·a`,
    /// the state is `[d1 + d2, d2]`. A section with `Σa = 0` (a pole at z = 1, never a
    /// Butterworth design) gives non-finite values.
    pub fn zi(&self) -> Vec<[f64; 2]> {
        let mut scale = 1.0;
        self.sections
            .iter()
            .map(|s| {
                let (b, a) = (&s[..3], &s[3..]);
                let (sum_b, sum_a) = (b[0] + b[1] + b[2], a[0] + a[1] + a[2]);
                let y_inf = sum_b / sum_a;
                let d1 = b[1] - y_inf * a[1];
                let d2 = b[2] - y_inf * a[2];
                let zi = [scale * (d2 + d1), scale * d2];
                scale *= sum_b / sum_a;
                zi
            })
            .collect()
    }

    /// `sosfiltfilt`'s default pad length: `3·(2·n_sections + 1 − min(#(b2 = 0), #(a2 = 0)))`
    /// (12 for an order-3 high-pass, 18 for order-5 high-pass, 33 for an order-5 band-pass).
    pub fn padlen(&self) -> usize {
        let b2_zero = self.sections.iter().filter(|s| s[2] == 0.0).count();
        let a2_zero = self.sections.iter().filter(|s| s[5] == 0.0).count();
        3 * (2 * self.sections.len() + 1 - b2_zero.min(a2_zero))
    }

    /// The largest pole modulus over all sections (below 1 for a stable filter): how slowly the
    /// filter forgets its start.
    pub fn slowest_pole_radius(&self) -> f64 {
        self.sections
            .iter()
            .map(|s| {
                // Roots of z² + a1·z + a2 (a0 = 1).
                let (a1, a2) = (s[4] / s[3], s[5] / s[3]);
                let disc = a1 * a1 - 4.0 * a2;
                if disc < 0.0 {
                    // A conjugate pair: |p|² = p·p̄ = a2.
                    a2.sqrt()
                } else {
                    let root = disc.sqrt();
                    ((-a1 + root) / 2.0).abs().max(((-a1 - root) / 2.0).abs())
                }
            })
            .fold(0.0, f64::max)
    }

    /// Samples of real signal a block needs on each side so that the filter's start has faded
    /// below [`CONTEXT_DECAY`] (1e-9) of its size: `n0 = ⌈ln(1e-9) / ln(r)⌉` for the slowest pole
    /// radius `r`, plus a quarter of it (`⌈1.25·n0⌉`). The margin covers what the pure envelope
    /// `r^n` leaves out: the polynomial growth `n^(m−1)` of `m` nearly coincident slow poles
    /// (higher orders, narrow bands) and the sections' gain above 1. The unit tests check the
    /// rule against the design's own impulse response: past `default_context` samples it stays
    /// below 1e-9 of its peak for every order and band tried.
    ///
    /// About 825 samples for an order-3 300 Hz high-pass at 30 kHz; scaling as `1/f_low`
    /// (≈ 0.5 M samples at 0.5 Hz). 0 when every pole is at the origin.
    pub fn default_context(&self) -> u64 {
        let r = self.slowest_pole_radius();
        if r <= 0.0 {
            return 0;
        }
        if r >= 1.0 {
            return u64::MAX;
        }
        let n0 = (CONTEXT_DECAY.ln() / r.ln()).ceil();
        // `as` saturates; a radius this close to 1 is refused by the caller's own size checks.
        (1.25 * n0).ceil() as u64
    }

    /// `|H(e^{iω})|` at `freq_hz` for a filter run at `rate_hz`: the product of every section's
    /// `B(z)/A(z)` evaluated on the unit circle.
    pub fn gain_at(&self, freq_hz: f64, rate_hz: f64) -> f64 {
        let omega = 2.0 * std::f64::consts::PI * freq_hz / rate_hz;
        let z1 = C64::cis(-omega);
        let z2 = z1 * z1;
        self.sections
            .iter()
            .map(|s| {
                let num = C64::real(s[0]) + z1.scale(s[1]) + z2.scale(s[2]);
                let den = C64::real(s[3]) + z1.scale(s[4]) + z2.scale(s[5]);
                (num / den).abs()
            })
            .product()
    }
}

#[cfg(test)]
mod tests;
