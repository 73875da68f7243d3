//! The numbers a report draws, from a window's values: robust ranges (numpy's percentiles),
//! medians and MADs, and windows reduced to the columns of a picture.

/// MAD × this estimates the standard deviation of normally distributed values (as
/// SpikeInterface's noise levels and dspk's classification use it).
pub const MAD_TO_STD: f64 = 1.482_602_218_505_602;

/// The `q`-th percentile (0–100) of `values` as numpy's `percentile` computes it by default
/// (linear interpolation between the two nearest ranks), NaN for no values. NaNs in `values`
/// sort last, as numpy sorts them.
pub fn percentile(values: &[f32], q: f64) -> f64 {
    let mut v = values.to_vec();
    percentile_in_place(&mut v, q)
}

/// [`percentile`] reordering `values` instead of copying them.
pub fn percentile_in_place(values: &mut [f32], q: f64) -> f64 {
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    let rank = (q.clamp(0.0, 100.0) / 100.0) * (n - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    let (_, &mut a, above) = values.select_nth_unstable_by(lo, f32::total_cmp);
    let a = f64::from(a);
    if hi == lo {
        return a;
    }
    // The next rank is the smallest value above the `lo`-th.
    let b = above
        .iter()
        .copied()
        .min_by(f32::total_cmp)
        .map_or(a, f64::from);
    let t = rank - lo as f64;
    a + (b - a) * t
}

/// The median of `values` (numpy's: the mean of the two middle values for an even count), NaN
/// for none.
pub fn median(values: &[f32]) -> f64 {
    percentile(values, 50.0)
}

/// The median absolute deviation from the median of `values`, NaN for none.
pub fn mad(values: &[f32]) -> f64 {
    let m = median(values);
    let deviations: Vec<f32> = values
        .iter()
        .map(|&v| (f64::from(v) - m).abs() as f32)
        .collect();
    median(&deviations)
}

/// A window reduced to `columns` columns per channel: column `j` of a channel covers its samples
/// `j·n/columns .. (j+1)·n/columns` and holds the one among them farthest from the channel's
/// median (so a spike of a few samples stays in the picture at its own amplitude, where a mean
/// would thin it out). `values` is channel-major, `channels × samples`. With fewer samples than
/// columns, one column per sample.
pub fn extreme_columns(values: &[f32], channels: usize, columns: usize) -> (Vec<f32>, usize) {
    let samples = values.len().checked_div(channels).unwrap_or(0);
    let columns = columns.min(samples).max(1);
    let mut out = Vec::with_capacity(channels * columns);
    for c in 0..channels {
        let row = &values[c * samples..(c + 1) * samples];
        let centre = median(row);
        for j in 0..columns {
            let part = &row[j * samples / columns
                ..((j + 1) * samples / columns)
                    .max(j * samples / columns + 1)
                    .min(samples)];
            let pick = part
                .iter()
                .copied()
                .max_by(|a, b| {
                    (f64::from(*a) - centre)
                        .abs()
                        .total_cmp(&(f64::from(*b) - centre).abs())
                })
                .unwrap_or(f32::NAN);
            out.push(pick);
        }
    }
    (out, columns)
}

/// One channel's trace reduced to `columns` (minimum, maximum) pairs, column `j` covering the
/// samples `j·n/columns .. (j+1)·n/columns`: the envelope a line through every sample draws at
/// that width.
pub fn envelope(row: &[f32], columns: usize) -> Vec<(f32, f32)> {
    let n = row.len();
    let columns = columns.min(n).max(1);
    (0..columns)
        .map(|j| {
            let start = j * n / columns;
            let end = ((j + 1) * n / columns).max(start + 1).min(n);
            row[start..end]
                .iter()
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| {
                    (lo.min(v), hi.max(v))
                })
        })
        .collect()
}

/// The largest of 1, 2 and 5 times a power of ten that is at most `limit` (a scale bar's
/// length), 1 for a limit that is not a positive number.
pub fn nice_below(limit: f64) -> f64 {
    if !(limit.is_finite() && limit > 0.0) {
        return 1.0;
    }
    let power = 10f64.powf(limit.log10().floor());
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&v| v <= limit)
        .unwrap_or(power)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// numpy's `percentile(a, q)` by its definition: sort, then interpolate linearly between
    /// ranks `floor(q/100·(n−1))` and the next.
    fn by_sorting(values: &[f32], q: f64) -> f64 {
        let mut v: Vec<f64> = values.iter().map(|&x| f64::from(x)).collect();
        v.sort_by(f64::total_cmp);
        let rank = q / 100.0 * (v.len() - 1) as f64;
        let lo = rank.floor() as usize;
        let hi = rank.ceil() as usize;
        v[lo] + (v[hi] - v[lo]) * (rank - lo as f64)
    }

    fn noise(seed: u64, n: usize) -> Vec<f32> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ((x >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 200.0
            })
            .collect()
    }

    #[test]
    fn percentiles_match_the_sorted_definition() {
        for (seed, n) in [(1, 1), (2, 2), (3, 17), (4, 1000), (5, 4097)] {
            let v = noise(seed, n);
            for q in [0.0, 0.5, 1.0, 25.0, 50.0, 73.3, 99.5, 100.0] {
                let got = percentile(&v, q);
                let want = by_sorting(&v, q);
                assert!(
                    (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                    "n {n} q {q}: {got} vs {want}"
                );
            }
        }
        assert!(percentile(&[], 50.0).is_nan());
        assert_eq!(median(&[3.0, 1.0, 2.0, 10.0]), 2.5);
    }

    #[test]
    fn mad_of_known_values() {
        // median 3; deviations 2 1 0 1 97 -> median 1.
        assert_eq!(mad(&[1.0, 2.0, 3.0, 4.0, 100.0]), 1.0);
    }

    #[test]
    fn extreme_columns_keep_a_spike_at_its_amplitude() {
        let mut row = vec![0.5f32; 1000];
        row[503] = -120.0;
        row[10] = 2.0;
        let (cols, n) = extreme_columns(&row, 1, 10);
        assert_eq!(n, 10);
        assert_eq!(cols[5], -120.0);
        assert_eq!(cols[0], 2.0);
        assert_eq!(cols[9], 0.5);
        // Two channels, fewer samples than columns: one column per sample.
        let (cols, n) = extreme_columns(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2, 100);
        assert_eq!((n, cols), (3, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    }

    #[test]
    fn envelopes_bound_every_sample() {
        let v = noise(9, 30_000);
        let env = envelope(&v, 240);
        assert_eq!(env.len(), 240);
        for (j, (lo, hi)) in env.iter().enumerate() {
            let part = &v[j * 30_000 / 240..(j + 1) * 30_000 / 240];
            assert_eq!(*lo, part.iter().copied().fold(f32::INFINITY, f32::min));
            assert_eq!(*hi, part.iter().copied().fold(f32::NEG_INFINITY, f32::max));
        }
    }

    #[test]
    fn scale_bars_are_round() {
        assert_eq!(nice_below(73.0), 50.0);
        assert_eq!(nice_below(19.9), 10.0);
        assert_eq!(nice_below(0.3), 0.2);
        assert_eq!(nice_below(f64::NAN), 1.0);
    }
}
