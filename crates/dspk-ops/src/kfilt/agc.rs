//! The automatic gain control's window and its `f64` host gain: `ibldsp.voltage.agc`'s
//! normalised Hann window applied to `|x|` as a centred convolution, zero past the ends.

/// `np.hanning(points)`'s sum (1 for a single point), what [`hann_taps`] divides by.
pub fn hann_sum(points: u32) -> f64 {
    hann(points).iter().sum()
}

/// `np.hanning(points)` as numpy computes it, `0.5 + 0.5·cos(π·n/(points − 1))` for
/// `n = 1 − points, 3 − points, …, points − 1`, so that the values are numpy's to the bit
/// (`[1]` for a single point).
fn hann(points: u32) -> Vec<f64> {
    if points <= 1 {
        return vec![1.0];
    }
    let m = f64::from(points - 1);
    (0..points)
        .map(|k| {
            let n = 2.0 * f64::from(k) - m;
            0.5 + 0.5 * (std::f64::consts::PI * n / m).cos()
        })
        .collect()
}

/// `np.hanning(points) / sum` without its two zero end points (for `points >= 3`; a single
/// point is `[1]`): the taps at offsets `-half..=half` of the gain, `half = (len - 1) / 2`.
pub fn hann_taps(points: u32) -> Vec<f64> {
    if points <= 1 {
        return vec![1.0];
    }
    let full = hann(points);
    let sum: f64 = full.iter().sum();
    // The end points are 0.5 + 0.5·cos(∓π): exactly 0 in f64.
    full[1..full.len() - 1].iter().map(|w| w / sum).collect()
}

/// The gain of one row in `f64`: `g[t] = Σ_i taps[i]·|x[t + i − half]|` over the indices
/// inside the row (IBL's `fourier.convolve(abs(x), w, mode="same")`, zero padded).
pub fn host_gain(row: &[f64], taps: &[f64]) -> Vec<f64> {
    let half = (taps.len() - 1) / 2;
    (0..row.len())
        .map(|t| {
            taps.iter()
                .enumerate()
                .filter_map(|(i, w)| {
                    let j = (t + i).checked_sub(half)?;
                    row.get(j).map(|x| w * x.abs())
                })
                .sum()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_taps_are_numpys_hanning_normalised() {
        // np.hanning(5) = [0, .5, 1, .5, 0], sum 2.
        assert_eq!(hann_taps(5), vec![0.25, 0.5, 0.25]);
        assert_eq!(hann_taps(1), vec![1.0]);
        // numpy 2.x: (np.hanning(7) / np.hanning(7).sum())[1:-1], to the bit.
        assert_eq!(
            hann_taps(7),
            vec![
                0.08333333333333337,
                0.25,
                0.3333333333333333,
                0.25,
                0.08333333333333337
            ]
        );
        let taps = hann_taps(3001);
        assert_eq!(taps.len(), 2999);
        assert!((taps.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert_eq!(taps[0], taps[2998]);
    }

    #[test]
    fn the_gain_is_zero_padded_at_the_ends() {
        let g = host_gain(&[4.0, -8.0, 0.0, 2.0], &[0.25, 0.5, 0.25]);
        assert_eq!(g, vec![4.0, 5.0, 2.5, 1.0]);
    }
}
