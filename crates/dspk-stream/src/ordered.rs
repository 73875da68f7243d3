//! Per-window statistics merged in window order, whichever device computed them and whenever
//! they arrived: the totals of a scan do not depend on how many devices ran it.

use std::collections::BTreeMap;

use dspk_kernels::{ChannelStats, WindowStats};
use dspk_types::{DspError, DspResult};

/// Totals of per-window statistics, merged strictly in tag order (0, 1, 2, …): a window that
/// arrives early waits until every window before it has been merged. `f64` addition is not
/// associative, so this order is what makes a scan on several devices give the statistics of
/// a scan on one, bit for bit.
#[derive(Debug, Clone)]
pub struct OrderedStats {
    next: u64,
    waiting: BTreeMap<u64, Vec<ChannelStats>>,
    totals: Vec<ChannelStats>,
}

impl OrderedStats {
    /// Totals over `channels` channels, no windows yet.
    pub fn new(channels: usize) -> Self {
        Self {
            next: 0,
            waiting: BTreeMap::new(),
            totals: vec![ChannelStats::EMPTY; channels],
        }
    }

    /// Adds one window's statistics: merged now if it is the next one, else kept until it is.
    ///
    /// # Errors
    /// A tag merged or given already, or statistics of the wrong number of channels.
    pub fn push(&mut self, window: WindowStats) -> DspResult<()> {
        if window.stats.len() != self.totals.len() {
            return Err(DspError::shape(
                "statistics of a window",
                self.totals.len(),
                window.stats.len(),
            ));
        }
        if window.tag < self.next || self.waiting.contains_key(&window.tag) {
            return Err(DspError::config(format!(
                "the statistics of window {} were given twice",
                window.tag
            )));
        }
        self.waiting.insert(window.tag, window.stats);
        while let Some(stats) = self.waiting.remove(&self.next) {
            for (total, s) in self.totals.iter_mut().zip(&stats) {
                total.merge(s);
            }
            self.next += 1;
        }
        Ok(())
    }

    /// Windows merged so far (every tag below this one).
    pub fn merged(&self) -> u64 {
        self.next
    }

    /// The totals of windows `0..windows`.
    ///
    /// # Errors
    /// A window before `windows` that never came, or one at or after it that did.
    pub fn finish(self, windows: u64) -> DspResult<Vec<ChannelStats>> {
        if self.next != windows || !self.waiting.is_empty() {
            let missing = self.next;
            return Err(DspError::config(format!(
                "statistics of {windows} windows expected, but window {missing} never came \
                 ({} came after it)",
                self.waiting.len()
            )));
        }
        Ok(self.totals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(tag: u64, values: &[f32]) -> WindowStats {
        WindowStats {
            tag,
            stats: vec![ChannelStats::from_values(values)],
        }
    }

    #[test]
    fn any_arrival_order_gives_the_in_order_totals() {
        // Values whose f64 merges depend on the order of merging.
        let windows: Vec<Vec<f32>> = (0..12)
            .map(|i| vec![1.0e7 * (i as f32 + 1.0), 0.1 + i as f32 * 1.0e-3, -3.3e6])
            .collect();
        let mut in_order = ChannelStats::EMPTY;
        for w in &windows {
            in_order.merge(&ChannelStats::from_values(w));
        }
        for seed in 0..20u64 {
            let mut order: Vec<u64> = (0..12).collect();
            // A small deterministic shuffle per seed.
            let mut x = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            for i in (1..order.len()).rev() {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                order.swap(i, (x >> 33) as usize % (i + 1));
            }
            let mut merged = OrderedStats::new(1);
            for &t in &order {
                merged.push(window(t, &windows[t as usize])).unwrap();
            }
            let totals = merged.finish(12).unwrap();
            assert!(totals[0].same_bits(&in_order), "order {order:?}");
        }
    }

    #[test]
    fn gaps_twice_and_wrong_shapes_are_errors() {
        let mut m = OrderedStats::new(1);
        m.push(window(0, &[1.0])).unwrap();
        m.push(window(2, &[1.0])).unwrap();
        assert_eq!(m.merged(), 1);
        assert!(m.clone().push(window(0, &[1.0])).is_err());
        assert!(m.clone().push(window(2, &[1.0])).is_err());
        let err = m.clone().finish(3).unwrap_err();
        assert!(err.to_string().contains("window 1 never came"), "{err}");
        let wrong = WindowStats {
            tag: 1,
            stats: vec![ChannelStats::EMPTY; 2],
        };
        assert!(m.clone().push(wrong).is_err());
        m.push(window(1, &[1.0])).unwrap();
        assert_eq!(m.finish(3).unwrap()[0].count, 3);
    }
}
