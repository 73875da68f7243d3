//! Detected peaks scored against a ground truth ([`TruthScore`]): which planted spikes a peak
//! found, recall and precision — what `dspk detect` reports on the synthetic recording.

use dspk_ops::detect::Peak;
use dspk_types::{DspError, DspResult, PlantedSpike, RecordingSource, SyntheticRecording};
use serde::{Deserialize, Serialize};

use crate::detect::Detected;

/// How far from a planted spike's trough a peak may lie and still find it, in ms (as
/// SpikeInterface's comparisons and dspk's SpikeInterface tests take it).
pub const TRUTH_TOLERANCE_MS: f64 = 0.4;

/// Peaks against planted spikes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TruthScore {
    /// Spikes planted (with their trough in the recording).
    pub planted: u64,
    /// Planted spikes a peak found.
    pub found: u64,
    /// Peaks in all.
    pub peaks: u64,
    /// Peaks that found no planted spike.
    pub false_positives: u64,
    /// `found / planted` (`None` when nothing was planted).
    pub recall: Option<f64>,
    /// `found / peaks` (`None` when there are no peaks).
    pub precision: Option<f64>,
    /// The tolerance in ms.
    pub tolerance_ms: f64,
    /// The tolerance in samples.
    pub tolerance_samples: u64,
}

/// `peaks` scored against `truth`: a planted spike is found when a peak on its channel lies
/// within ±`tolerance_samples` of its trough; each peak finds at most one spike and each spike
/// is found at most once, pairing as many as can be paired. `tolerance_ms` is only reported.
pub fn score_peaks(
    peaks: &[Peak],
    truth: &[PlantedSpike],
    tolerance_samples: u64,
    tolerance_ms: f64,
) -> TruthScore {
    let channels = truth
        .iter()
        .map(|s| s.channel + 1)
        .chain(peaks.iter().map(|p| p.channel as usize + 1))
        .max()
        .unwrap_or(0);
    let mut troughs: Vec<Vec<u64>> = vec![Vec::new(); channels];
    for s in truth {
        troughs[s.channel].push(s.trough);
    }
    let mut at: Vec<Vec<u64>> = vec![Vec::new(); channels];
    for p in peaks {
        at[p.channel as usize].push(p.sample);
    }
    let found: u64 = troughs
        .iter_mut()
        .zip(&mut at)
        .map(|(t, p)| pair(t, p, tolerance_samples))
        .sum();
    let ratio = |n: u64, d: u64| (d > 0).then(|| n as f64 / d as f64);
    TruthScore {
        planted: truth.len() as u64,
        found,
        peaks: peaks.len() as u64,
        false_positives: peaks.len() as u64 - found,
        recall: ratio(found, truth.len() as u64),
        precision: ratio(found, peaks.len() as u64),
        tolerance_ms,
        tolerance_samples,
    }
}

/// The most troughs of one channel that can each take a distinct peak within `tol`: in trough
/// order, each takes the earliest free peak not before `trough - tol`, if it is not after
/// `trough + tol` (intervals of one width, so this greedy pairing is a largest one).
fn pair(troughs: &mut [u64], peaks: &mut [u64], tol: u64) -> u64 {
    troughs.sort_unstable();
    peaks.sort_unstable();
    let mut next = 0;
    let mut found = 0;
    for &t in troughs.iter() {
        while next < peaks.len() && peaks[next] < t.saturating_sub(tol) {
            next += 1;
        }
        if next < peaks.len() && peaks[next] <= t.saturating_add(tol) {
            found += 1;
            next += 1;
        }
    }
    found
}

impl Detected {
    /// Scores these peaks against the spikes `truth` planted (those with their trough in the
    /// recording) within [`TRUTH_TOLERANCE_MS`], and puts the score in the report
    /// ([`crate::DetectReport::truth`]).
    ///
    /// # Errors
    /// A recording of another channel count or length than the one detected in.
    pub fn score_against(&mut self, truth: &SyntheticRecording) -> DspResult<&TruthScore> {
        let info = truth.info();
        if info.channel_count() != self.report.channels || info.samples != self.report.samples {
            return Err(DspError::config(format!(
                "ground truth of {} channels × {} samples cannot score peaks of {} channels × \
                 {} samples",
                info.channel_count(),
                info.samples,
                self.report.channels,
                self.report.samples
            )));
        }
        let mut planted = truth.planted_spikes(0..info.samples)?;
        planted.retain(|s| s.trough < info.samples);
        let tolerance = (TRUTH_TOLERANCE_MS * 1e-3 * info.sample_rate.rate_hz()).round() as u64;
        Ok(self.report.truth.insert(score_peaks(
            &self.peaks,
            &planted,
            tolerance,
            TRUTH_TOLERANCE_MS,
        )))
    }
}

#[cfg(test)]
mod tests;
