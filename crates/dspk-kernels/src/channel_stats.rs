//! The statistics of one channel, in `f64`, in a form that any number of parts merge into
//! exactly: a count, the extremes, the mean and the sum of squared deviations from it.
//!
//! Sums and sums of squares (`E[x²] − mean²`) lose every digit of the variance once the mean
//! is large next to the spread: a channel at a 56 mV offset with 10 µV of noise has
//! `E[x²] ≈ 3.1·10⁹ µV²` against a variance of 100 µV², below `f32`'s resolution. The mean
//! and the sum of squared deviations have no such cancellation, and two parts merge with Chan,
//! Golub and LeVeque's pairwise formula:
//!
//! ```text
//! n = nₐ + n_b    δ = mean_b − meanₐ    mean = meanₐ + δ·n_b/n    M₂ = M₂ₐ + M₂_b + δ²·nₐ·n_b/n
//! ```
//!
//! Merging is deterministic but not associative in floating point: callers that must give the
//! same bits whatever the split (several devices) merge in one fixed order (window order).

/// Statistics of one channel over any number of samples, in `f64`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChannelStats {
    /// Samples counted.
    pub count: u64,
    /// Smallest value (`+∞` when empty).
    pub min: f64,
    /// Largest value (`−∞` when empty).
    pub max: f64,
    /// The mean of the values (0 when empty; [`mean`](Self::mean) says NaN then).
    pub mean: f64,
    /// The sum of the squared deviations from [`mean`](Self::mean) (`M₂`; 0 when empty).
    pub m2: f64,
}

impl Default for ChannelStats {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl ChannelStats {
    /// No samples.
    pub const EMPTY: ChannelStats = ChannelStats {
        count: 0,
        min: f64::INFINITY,
        max: f64::NEG_INFINITY,
        mean: 0.0,
        m2: 0.0,
    };

    /// The statistics of `values`, computed on the host in `f64` with two passes (the mean,
    /// then the squared deviations from it, corrected by the deviations' own sum): the
    /// reference the device's statistics are tested against.
    pub fn from_values(values: &[f32]) -> Self {
        Self::from_f64(values.iter().map(|&v| f64::from(v)))
    }

    /// [`from_values`](Self::from_values) of values given as `f64`.
    pub fn from_f64(values: impl Iterator<Item = f64> + Clone) -> Self {
        let mut s = Self::EMPTY;
        let mut sum = 0.0;
        for v in values.clone() {
            s.count += 1;
            s.min = s.min.min(v);
            s.max = s.max.max(v);
            sum += v;
        }
        if s.count == 0 {
            return s;
        }
        let n = s.count as f64;
        let mean = sum / n;
        let (mut dev, mut dev_sq) = (0.0, 0.0);
        for v in values {
            let d = v - mean;
            dev += d;
            dev_sq += d * d;
        }
        s.mean = mean + dev / n;
        s.m2 = (dev_sq - dev * dev / n).max(0.0);
        s
    }

    /// The statistics of a part whose values were taken relative to `shift`: `mean_from_shift`
    /// is the mean of `value − shift`, `m2` the sum of squared deviations (what the device's
    /// partials hold: the shift keeps the fine part of the mean in the partial's digits).
    pub fn from_shifted(
        count: u64,
        min: f64,
        max: f64,
        shift: f64,
        mean_from_shift: f64,
        m2: f64,
    ) -> Self {
        if count == 0 {
            return Self::EMPTY;
        }
        Self {
            count,
            min,
            max,
            mean: shift + mean_from_shift,
            m2: m2.max(0.0),
        }
    }

    /// Adds `other`'s samples to these (Chan et al.'s pairwise update).
    pub fn merge(&mut self, other: &ChannelStats) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *other;
            return;
        }
        let (na, nb) = (self.count as f64, other.count as f64);
        let count = self.count + other.count;
        let n = count as f64;
        let delta = other.mean - self.mean;
        self.mean += delta * (nb / n);
        self.m2 += other.m2 + delta * delta * (na * (nb / n));
        self.count = count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// The mean (NaN when empty).
    pub fn mean(&self) -> f64 {
        if self.count == 0 { f64::NAN } else { self.mean }
    }

    /// The population variance, `M₂ / n` (NaN when empty).
    pub fn variance(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.m2 / self.count as f64
        }
    }

    /// The population standard deviation (NaN when empty).
    pub fn std(&self) -> f64 {
        self.variance().sqrt()
    }

    /// The root mean square, `√(mean² + variance)` (NaN when empty).
    pub fn rms(&self) -> f64 {
        let mean = self.mean();
        (mean * mean + self.variance()).sqrt()
    }

    /// Whether `other` holds the same count and the same bits in every value (NaNs of equal
    /// bits compare equal, `-0.0` and `0.0` do not): what "the same result on any number of
    /// devices" means.
    pub fn same_bits(&self, other: &ChannelStats) -> bool {
        self.count == other.count
            && self.min.to_bits() == other.min.to_bits()
            && self.max.to_bits() == other.max.to_bits()
            && self.mean.to_bits() == other.mean.to_bits()
            && self.m2.to_bits() == other.m2.to_bits()
    }

    /// The sum of the values, `mean × count` (0 when empty).
    pub fn sum(&self) -> f64 {
        self.mean * self.count as f64
    }
}

#[cfg(test)]
#[path = "tests/channel_stats.rs"]
mod tests;
