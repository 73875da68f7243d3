use super::*;

/// A small deterministic generator (SplitMix64): fresh values without a dependency.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// A fresh seed, or `DSPK_TEST_SEED` to replay one a failure printed.
fn seed() -> u64 {
    if let Some(seed) = std::env::var("DSPK_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        return seed;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(f64::MIN_POSITIVE)
}

#[test]
fn hand_computed_values() {
    // 1, 2, 3, 4: mean 5/2, squared deviations 9/4 + 1/4 + 1/4 + 9/4 = 5.
    let s = ChannelStats::from_values(&[1.0, 2.0, 3.0, 4.0]);
    assert_eq!(s.count, 4);
    assert_eq!((s.min, s.max), (1.0, 4.0));
    assert_eq!(s.mean(), 2.5);
    assert_eq!(s.m2, 5.0);
    assert_eq!(s.variance(), 1.25);
    assert_eq!(s.std(), 1.25f64.sqrt());
    // (1 + 4 + 9 + 16) / 4 = 7.5.
    assert_eq!(s.rms(), 7.5f64.sqrt());
    assert_eq!(s.sum(), 10.0);
    // A constant channel: no spread at all, whatever its level.
    let flat = ChannelStats::from_values(&[-76_800.0; 1000]);
    assert_eq!(
        (flat.mean(), flat.std(), flat.rms()),
        (-76_800.0, 0.0, 76_800.0)
    );
}

#[test]
fn empty_statistics_say_nan_and_merge_as_identity() {
    let e = ChannelStats::EMPTY;
    assert_eq!(ChannelStats::from_values(&[]), e);
    assert!(e.mean().is_nan() && e.std().is_nan() && e.rms().is_nan());
    assert_eq!(e.sum(), 0.0);
    let s = ChannelStats::from_values(&[3.0, -1.0]);
    let mut left = e;
    left.merge(&s);
    assert_eq!(left, s);
    let mut right = s;
    right.merge(&e);
    assert_eq!(right, s);
    assert_eq!(ChannelStats::from_shifted(0, 1.0, 2.0, 3.0, 4.0, 5.0), e);
}

#[test]
fn a_large_offset_keeps_the_spread() {
    // 56 250 µV (24 000 counts of 2.34375 µV) ± one count, alternating: mean 56 250, variance
    // exactly 2.34375² (every value is one count away), at any offset in int16's range.
    for offset in [0.0, 4_687.5, 56_250.0, -76_800.0, 76_797.656_25] {
        let values: Vec<f32> = (0..100_000)
            .map(|i| offset as f32 + if i % 2 == 0 { 2.343_75 } else { -2.343_75 })
            .collect();
        let s = ChannelStats::from_values(&values);
        assert_eq!(s.mean(), offset, "offset {offset}");
        assert_eq!(s.std(), 2.343_75, "offset {offset}");
        assert!(close(
            s.rms(),
            (offset * offset + 2.343_75f64.powi(2)).sqrt(),
            1e-15
        ));
    }
}

#[test]
fn merging_parts_equals_the_whole() {
    let seed = seed();
    let mut mix = Mix(seed);
    for round in 0..50 {
        let n = 1 + (mix.next() % 5_000) as usize;
        let offset = 70_000.0 * mix.unit();
        let spread = 10f64.powf(3.0 * mix.unit());
        let values: Vec<f32> = (0..n)
            .map(|_| (offset + spread * mix.unit()) as f32)
            .collect();
        let whole = ChannelStats::from_values(&values);
        let mut merged = ChannelStats::EMPTY;
        let mut at = 0;
        while at < n {
            let len = 1 + (mix.next() % 700) as usize;
            let end = (at + len).min(n);
            merged.merge(&ChannelStats::from_values(&values[at..end]));
            at = end;
        }
        let context = format!("seed {seed}, round {round}: {n} values at {offset} ± {spread}");
        assert_eq!(merged.count, whole.count, "{context}");
        assert_eq!(
            (merged.min, merged.max),
            (whole.min, whole.max),
            "{context}"
        );
        assert!(
            // A few ulps of the mean's level, and 1e-12 of the spread.
            (merged.mean() - whole.mean()).abs()
                <= 8.0 * f64::EPSILON * whole.mean().abs() + 1e-12 * whole.std(),
            "{context}: mean {} vs {}",
            merged.mean(),
            whole.mean()
        );
        // 1e-10 of the spread, and an ulp of the mean's level: the merge weighs differences
        // of partial means, each known to an ulp of its level (where the spread is below
        // float32's resolution at that level, the values take a few distinct values and the
        // relative error of a tiny std grows as level / std).
        assert!(
            (merged.std() - whole.std()).abs()
                <= 1e-10 * whole.std() + f64::EPSILON * whole.mean().abs(),
            "{context}: std {} vs {}",
            merged.std(),
            whole.std()
        );
        assert!(close(merged.rms(), whole.rms(), 1e-12), "{context}: rms");
    }
}

#[test]
fn the_reference_matches_a_direct_two_pass_sum() {
    let seed = seed();
    let mut mix = Mix(seed);
    let values: Vec<f32> = (0..10_000)
        .map(|_| (30_000.0 + 15.0 * mix.unit()) as f32)
        .collect();
    let n = values.len() as f64;
    let mean = values.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
    let var = values
        .iter()
        .map(|&v| (f64::from(v) - mean).powi(2))
        .sum::<f64>()
        / n;
    let s = ChannelStats::from_values(&values);
    assert!(close(s.mean(), mean, 1e-15), "seed {seed}");
    assert!(close(s.variance(), var, 1e-12), "seed {seed}");
}
