//! The phase shift on the host in `f64`: the reference the device stage is held to.

use super::design::taps;

/// One channel's whole segment, `samples`, delayed by `shift` samples with the `2·half_taps`
/// taps of [`taps`], the samples past either end made up by odd extension about the end
/// sample (`x[−d] = 2·x[0] − x[d]`, `x[n−1+d] = 2·x[n−1] − x[n−1−d]`, the mirrored index held
/// inside the segment when it is shorter than the filter) — what the device stage does at a
/// segment's ends, in `f64`.
pub fn host(samples: &[f64], shift: f64, half_taps: u32) -> Vec<f64> {
    let taps = taps(shift, half_taps);
    let h = i64::from(half_taps.max(1));
    (0..samples.len() as i64)
        .map(|n| {
            taps.iter()
                .enumerate()
                .map(|(i, &t)| t * extended(samples, n + h - 1 - i as i64))
                .sum()
        })
        .collect()
}

/// Sample `j` of `x` (any integer), odd-extended past both ends.
fn extended(x: &[f64], j: i64) -> f64 {
    let last = x.len() as i64 - 1;
    if j < 0 {
        2.0 * x[0] - x[(-j).min(last) as usize]
    } else if j > last {
        2.0 * x[last as usize] - x[(2 * last - j).max(0) as usize]
    } else {
        x[j as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_stays_a_line_through_the_ends() {
        // Odd extension continues a straight line exactly, so the shift of a line is the line
        // moved by the shift, up to the ends.
        let x: Vec<f64> = (0..200).map(|n| 3.0 + 0.25 * f64::from(n)).collect();
        let y = host(&x, 0.4, 16);
        for (n, v) in y.iter().enumerate() {
            let want = 3.0 + 0.25 * (n as f64 - 0.4);
            assert!((v - want).abs() < 1e-7, "sample {n}: {v} vs {want}");
        }
    }

    #[test]
    fn a_segment_shorter_than_the_filter_is_shifted_too() {
        let y = host(&[1.0, -2.0, 0.5], 0.3, 32);
        assert_eq!(y.len(), 3);
        assert!(y.iter().all(|v| v.is_finite()));
        assert!((host(&[7.0], 0.5, 8)[0] - 7.0).abs() < 1e-12);
    }
}
