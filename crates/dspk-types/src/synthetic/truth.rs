//! The synthetic recording's ground truth: where it planted its spikes, and how deep.

use std::ops::Range;

use super::{GOLDEN, SyntheticRecording, below, mix64};
use crate::{DspError, DspResult};

/// One spike the synthetic recording planted (see [`SyntheticRecording::planted_spikes`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlantedSpike {
    /// The channel it was planted on.
    pub channel: usize,
    /// The waveform's first sample.
    pub start: u64,
    /// The sample of its trough: the waveform's minimum, where it adds `-depth_counts`.
    pub trough: u64,
    /// The trough's depth in stored counts (a whole number: the waveform's minimum is exactly
    /// -1, scaled by it).
    pub depth_counts: u32,
    /// The trough's depth in µV (`depth_counts` × the gain).
    pub depth_uv: f64,
}

impl SyntheticRecording {
    /// The index of the spike waveform's trough (its first minimum), or `None` where the
    /// recording plants no spikes.
    pub fn spike_trough_offset(&self) -> Option<usize> {
        let first_min =
            self.waveform
                .iter()
                .enumerate()
                .fold(None, |best: Option<(usize, f32)>, (i, &v)| match best {
                    Some((_, m)) if m <= v => best,
                    _ => Some((i, v)),
                });
        first_min.map(|(i, _)| i)
    }

    /// The spike waveform's length in samples (0 where the recording plants no spikes).
    pub fn spike_samples(&self) -> usize {
        self.waveform.len()
    }

    /// The spikes planted on any channel whose waveform overlaps `samples`, sorted by trough,
    /// then channel: exactly those the stored values hold there. Dead channels have none. A
    /// pure function of the configuration, like every value: the spikes listed for any range
    /// are those of the whole recording that overlap it. A spike planted near the end may
    /// overlap the recording with its trough past the last sample.
    ///
    /// # Errors
    /// A range that is reversed or ends past the recording ([`DspError::SampleRange`]).
    pub fn planted_spikes(&self, samples: Range<u64>) -> DspResult<Vec<PlantedSpike>> {
        let total = self.info.samples;
        if samples.start > samples.end || samples.end > total {
            return Err(DspError::SampleRange {
                start: samples.start,
                end: samples.end,
                total,
            });
        }
        let bin_len = self.spike_bin;
        let Some(trough) = self.spike_trough_offset().filter(|_| !samples.is_empty()) else {
            return Ok(Vec::new());
        };
        let wlen = self.waveform.len() as u64;
        let gain = f64::from(self.info.channels[0].gain);
        // Each spike lies wholly inside its bin, so only the bins the range touches hold one.
        let bins = samples.start / bin_len..=(samples.end - 1) / bin_len;
        let mut out = Vec::new();
        for (c, g) in self.gens.iter().enumerate().filter(|(_, g)| !g.dead) {
            for bin in bins.clone() {
                let h = mix64(g.spike_key.wrapping_add(bin.wrapping_mul(GOLDEN)));
                let start = bin * bin_len + below(h, bin_len - wlen);
                if start >= samples.end || start.saturating_add(wlen) <= samples.start {
                    continue;
                }
                let depth = self.spike_min + below(h >> 32, self.spike_span) as i64;
                let depth_counts =
                    u32::try_from(depth).expect("spike depths are validated below 2^20 counts");
                out.push(PlantedSpike {
                    channel: c,
                    start,
                    trough: start + trough as u64,
                    depth_counts,
                    depth_uv: f64::from(depth_counts) * gain,
                });
            }
        }
        out.sort_by_key(|s| (s.trough, s.channel));
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
