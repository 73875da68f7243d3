//! The numbers a report draws, from a window's values: robust ranges (numpy's percentiles),
//! medians and MADs, and windows reduced to the columns of a picture.

use crate::parallel::map_parts;

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

/// Each of the `q`-th percentiles of `values` (as [`percentile`] gives them: NumPy's linear
/// rule, `f32::total_cmp`'s order), exactly, in two passes over the values spread over the
/// cores instead of a selection on a copy: a histogram of the top 16 bits of each value's
/// order key, then the few values of the buckets that hold the ranks wanted, selected there.
pub fn percentiles(values: &[f32], qs: &[f64]) -> Vec<f64> {
    let n = values.len();
    if n == 0 {
        return vec![f64::NAN; qs.len()];
    }
    // The two ranks each percentile interpolates between.
    let wanted: Vec<(usize, usize, f64)> = qs
        .iter()
        .map(|&q| {
            let rank = (q.clamp(0.0, 100.0) / 100.0) * (n - 1) as f64;
            let lo = rank.floor() as usize;
            (lo, (lo + 1).min(n - 1), rank - lo as f64)
        })
        .collect();
    let histograms = map_parts(n, n, |part| {
        let mut h = vec![0u32; 1 << 16];
        for &v in &values[part] {
            h[(order_key(v) >> 16) as usize] += 1;
        }
        h
    });
    let mut counts = vec![0u64; 1 << 16];
    for h in &histograms {
        for (c, &k) in counts.iter_mut().zip(h) {
            *c += u64::from(k);
        }
    }
    // Each rank's bucket and its rank inside it.
    let mut starts = Vec::with_capacity(counts.len());
    let mut total = 0u64;
    for &c in &counts {
        starts.push(total);
        total += c;
    }
    let locate = |rank: usize| -> (usize, usize) {
        let r = rank as u64;
        let bucket = starts.partition_point(|&s| s <= r) - 1;
        (bucket, (r - starts[bucket]) as usize)
    };
    let mut needed = vec![false; 1 << 16];
    for &(lo, hi, _) in &wanted {
        needed[locate(lo).0] = true;
        needed[locate(hi).0] = true;
    }
    let gathered = map_parts(n, n, |part| {
        values[part]
            .iter()
            .map(|&v| order_key(v))
            .filter(|&k| needed[(k >> 16) as usize])
            .collect::<Vec<u32>>()
    });
    let mut buckets: std::collections::BTreeMap<usize, Vec<u32>> = Default::default();
    for key in gathered.into_iter().flatten() {
        buckets.entry((key >> 16) as usize).or_default().push(key);
    }
    let mut at = |rank: usize| -> f64 {
        let (bucket, inside) = locate(rank);
        let keys = buckets
            .get_mut(&bucket)
            .expect("a needed bucket was gathered");
        let (_, &mut key, _) = keys.select_nth_unstable(inside);
        f64::from(from_order_key(key))
    };
    wanted
        .iter()
        .map(|&(lo, hi, t)| {
            let a = at(lo);
            if hi == lo {
                return a;
            }
            let b = at(hi);
            a + (b - a) * t
        })
        .collect()
}

/// `v`'s place in `f32::total_cmp`'s order, as an unsigned integer.
fn order_key(v: f32) -> u32 {
    let bits = v.to_bits();
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// The value of an [`order_key`].
fn from_order_key(key: u32) -> f32 {
    f32::from_bits(if key & 0x8000_0000 != 0 {
        key & 0x7FFF_FFFF
    } else {
        !key
    })
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
    let rows = map_parts(channels, values.len(), |part| {
        let mut out = Vec::with_capacity(part.len() * columns);
        for c in part {
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
        out
    });
    let out = rows.concat();
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
    fn percentiles_in_two_passes_equal_the_selection() {
        let mut quantised = noise(7, 300_000);
        for v in &mut quantised {
            *v = (*v / 8.0).round() * 0.005;
        }
        let mut with_extremes = noise(8, 200_003);
        with_extremes[5] = f32::NEG_INFINITY;
        with_extremes[9] = -0.0;
        with_extremes[11] = 0.0;
        with_extremes[12] = f32::MAX;
        let constant = vec![-3.25f32; 100_000];
        let qs = [0.0, 0.5, 1.0, 50.0, 73.3, 99.5, 100.0];
        for (name, v) in [
            ("noise", noise(6, 1_000_001)),
            ("quantised", quantised),
            ("extremes", with_extremes),
            ("constant", constant),
            ("small", noise(9, 5)),
        ] {
            let got = percentiles(&v, &qs);
            for (q, g) in qs.iter().zip(&got) {
                let want = percentile(&v, *q);
                assert!(g.to_bits() == want.to_bits(), "{name} q {q}: {g} vs {want}");
            }
        }
        assert!(percentiles(&[], &[50.0])[0].is_nan());
        for v in [
            f32::NEG_INFINITY,
            -1.5,
            -0.0,
            0.0,
            1e-40,
            2.0,
            f32::INFINITY,
        ] {
            assert_eq!(from_order_key(order_key(v)).to_bits(), v.to_bits());
        }
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
