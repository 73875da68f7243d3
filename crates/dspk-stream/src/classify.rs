//! Dead and noisy channels, from per-channel statistics.

use dspk_kernels::ChannelStats;

/// A channel is dead (flat) when its standard deviation is below this, in its unit (µV for
/// voltages): far below any amplifier's noise, above `f32` rounding of a constant.
pub const DEAD_STD: f64 = 1e-3;

/// A channel is noisy when its standard deviation is more than this many robust standard
/// deviations (1.4826 × MAD) above the median of the live channels' …
pub const NOISY_MADS: f64 = 8.0;

/// … and more than this many times the median.
pub const NOISY_RATIO: f64 = 3.0;

/// MAD × this estimates the standard deviation of normally distributed values.
const MAD_TO_STD: f64 = 1.4826;

/// Why a channel is flagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flag {
    /// Flat: no variation.
    Dead,
    /// Far noisier than the other channels.
    Noisy,
}

impl Flag {
    /// `dead` or `noisy`.
    pub fn name(self) -> &'static str {
        match self {
            Flag::Dead => "dead",
            Flag::Noisy => "noisy",
        }
    }
}

/// The flags of every channel and the figures behind them.
#[derive(Debug, Clone, PartialEq)]
pub struct Classification {
    /// One per channel.
    pub flags: Vec<Option<Flag>>,
    /// The median standard deviation of the channels that are not dead (NaN when none).
    pub median_std: f64,
    /// The standard deviation above which a channel is noisy.
    pub noisy_threshold: f64,
}

impl Classification {
    /// Channels flagged `flag`, ascending.
    pub fn indices(&self, flag: Flag) -> Vec<usize> {
        self.flags
            .iter()
            .enumerate()
            .filter_map(|(i, f)| (*f == Some(flag)).then_some(i))
            .collect()
    }
}

/// Flags dead channels (flat: `max == min` or std below [`DEAD_STD`]) and noisy ones (std
/// above both median + [`NOISY_MADS`] × 1.4826 × MAD and [`NOISY_RATIO`] × median, the median
/// and MAD taken over the channels that are not dead).
pub fn classify(stats: &[ChannelStats]) -> Classification {
    let stds: Vec<f64> = stats.iter().map(ChannelStats::std).collect();
    let dead: Vec<bool> = stats
        .iter()
        .zip(&stds)
        .map(|(s, &std)| s.count > 0 && (s.max == s.min || std < DEAD_STD))
        .collect();
    let live: Vec<f64> = stds
        .iter()
        .zip(&dead)
        .filter(|&(s, &d)| !d && s.is_finite())
        .map(|(&s, _)| s)
        .collect();
    let median_std = median(&live);
    let deviations: Vec<f64> = live.iter().map(|s| (s - median_std).abs()).collect();
    let mad = median(&deviations);
    let noisy_threshold =
        (median_std + NOISY_MADS * MAD_TO_STD * mad).max(NOISY_RATIO * median_std);
    let flags = stds
        .iter()
        .zip(&dead)
        .map(|(&std, &d)| {
            if d {
                Some(Flag::Dead)
            } else if std > noisy_threshold {
                Some(Flag::Noisy)
            } else {
                None
            }
        })
        .collect();
    Classification {
        flags,
        median_std,
        noisy_threshold,
    }
}

/// The median (NaN for no values).
fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A channel with `n` normal-ish values of standard deviation about `std` around `mean`.
    fn channel(seed: u64, n: usize, mean: f32, std: f32) -> ChannelStats {
        let mut x = seed | 1;
        let values: Vec<f32> = (0..n)
            .map(|_| {
                // Sum of 4 uniforms in [-0.5, 0.5): variance 4/12.
                let mut s = 0.0f32;
                for _ in 0..4 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    s += (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
                }
                mean + s * std / (4.0f32 / 12.0).sqrt()
            })
            .collect();
        ChannelStats::from_values(&values)
    }

    #[test]
    fn planted_channels_are_found() {
        let seed = 0x5ca1_ab1e_u64;
        let mut stats: Vec<ChannelStats> = (0..64)
            .map(|c| channel(seed + c, 5000, 2.0, 9.0 + (c % 5) as f32 * 0.5))
            .collect();
        stats[5] = ChannelStats::from_values(&[-3.25; 5000]);
        stats[40] = channel(seed + 999, 5000, 0.0, 75.0);
        stats[41] = channel(seed + 998, 5000, -4.0, 45.0);
        let c = classify(&stats);
        assert_eq!(c.indices(Flag::Dead), vec![5], "seed {seed}");
        assert_eq!(c.indices(Flag::Noisy), vec![40, 41], "seed {seed}");
        assert!((c.median_std - 10.0).abs() < 1.0, "median {}", c.median_std);
    }

    #[test]
    fn a_uniform_probe_flags_nothing() {
        let seed = 0xfeed_u64;
        let stats: Vec<ChannelStats> = (0..384)
            .map(|c| channel(seed + c, 3000, 0.0, 10.0))
            .collect();
        let c = classify(&stats);
        assert!(
            c.flags.iter().all(Option::is_none),
            "seed {seed}: {:?}",
            c.flags
        );
    }

    #[test]
    fn tiny_noise_is_dead_and_medians_are_right() {
        let mut stats = vec![channel(1, 1000, 0.0, 10.0); 3];
        stats.push(channel(7, 1000, 100.0, 1e-5));
        let c = classify(&stats);
        assert_eq!(c.indices(Flag::Dead), vec![3]);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
        // Every channel dead: nothing noisy, no panic.
        let flat = vec![ChannelStats::from_values(&[0.0; 10]); 4];
        let c = classify(&flat);
        assert_eq!(c.indices(Flag::Dead), vec![0, 1, 2, 3]);
        assert!(c.indices(Flag::Noisy).is_empty());
    }

    /// A channel whose standard deviation is exactly `std` (one sample's worth of `M₂`:
    /// `√(std²)` is `std` in round-to-nearest), not flat.
    fn with_std(std: f64) -> ChannelStats {
        let s = ChannelStats {
            count: 1,
            min: -1.0,
            max: 1.0,
            mean: 0.0,
            m2: std * std,
        };
        assert_eq!(s.std(), std, "the test's channel of std {std}");
        s
    }

    /// Live channels of standard deviations 4, 7, 10, 13 and 16 (four each) and `test` last:
    /// median 10, MAD 3 whatever `test` is (it is the largest or the smallest), so the noisy
    /// threshold is 10 + 8 × 1.4826 × 3 = 45.58…, above 3 × 10.
    fn probe_with(test: ChannelStats) -> Vec<ChannelStats> {
        let mut stats: Vec<ChannelStats> = (0..20)
            .map(|c| with_std([4.0, 7.0, 10.0, 13.0, 16.0][c % 5]))
            .collect();
        stats.push(test);
        stats
    }

    #[test]
    fn the_noisy_threshold_is_pinned_at_its_edge() {
        let threshold = 10.0 + NOISY_MADS * MAD_TO_STD * 3.0;
        assert!(threshold > NOISY_RATIO * 10.0);
        for (std, noisy) in [
            (threshold, false),
            (threshold.next_down(), false),
            (threshold.next_up(), true),
            (2.0 * threshold, true),
        ] {
            let c = classify(&probe_with(with_std(std)));
            assert_eq!((c.median_std, c.noisy_threshold), (10.0, threshold));
            assert_eq!(c.flags[20] == Some(Flag::Noisy), noisy, "std {std}");
            assert!(c.flags[..20].iter().all(Option::is_none), "std {std}");
        }
        // Where the MAD is small, the ratio decides: median 10, MAD 0, threshold 30.
        let mut stats = vec![with_std(10.0); 20];
        stats.push(with_std(30.0));
        assert_eq!(classify(&stats).noisy_threshold, NOISY_RATIO * 10.0);
        assert_eq!(classify(&stats).flags[20], None);
        stats[20] = with_std(30f64.next_up());
        assert_eq!(classify(&stats).flags[20], Some(Flag::Noisy));
    }

    #[test]
    fn the_dead_threshold_is_pinned_at_its_edge() {
        for (test, dead) in [
            // Exactly flat: min == max, whatever its level.
            (ChannelStats::from_values(&[56_250.0; 300]), true),
            // Nearly flat: a spread just under the threshold, then at it and above.
            (with_std(DEAD_STD.next_down()), true),
            (with_std(DEAD_STD), false),
            (with_std(DEAD_STD.next_up()), false),
            // One count of 2.34 µV in a million samples at 70 mV: tiny, but not flat.
            (
                {
                    let mut v = vec![70_000.0f32; 1_000_000];
                    v[500_000] += 2.343_75;
                    ChannelStats::from_values(&v)
                },
                false,
            ),
        ] {
            let c = classify(&probe_with(test));
            assert_eq!(c.flags[20] == Some(Flag::Dead), dead, "{test:?}");
        }
    }
}
