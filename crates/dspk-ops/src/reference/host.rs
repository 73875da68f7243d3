//! The `f64` host reference of the common reference, the one the device tests hold the stage
//! to.

use dspk_types::{DspError, DspResult, MedianRule, ReferenceOperator};

use super::ReferenceSets;

/// `values` (channel-major, `channels` rows of `samples`) with each channel's reference set's
/// median or mean at every sample subtracted, in `f64`: the median sorts the set's values (the
/// mean of the two middle ones for an even count by [`MedianRule::Numpy`], the lower one by
/// [`MedianRule::Lower`]), the mean sums them in channel order and divides by their count.
/// Unreferenced channels are copied.
///
/// # Errors
/// `values` not `channels × samples` long, or sets describing another channel count.
pub fn host(
    values: &[f64],
    channels: usize,
    samples: usize,
    sets: &ReferenceSets,
    operator: ReferenceOperator,
    median: MedianRule,
) -> DspResult<Vec<f64>> {
    if values.len() != channels * samples {
        return Err(DspError::shape(
            "values of a referenced window",
            channels * samples,
            values.len(),
        ));
    }
    if sets.channel_count() != channels {
        return Err(DspError::shape(
            "channels of the reference sets",
            channels,
            sets.channel_count(),
        ));
    }
    let mut out = values.to_vec();
    let mut column = Vec::new();
    for s in 0..samples {
        let references: Vec<f64> = sets
            .sets()
            .iter()
            .map(|set| {
                column.clear();
                column.extend(set.iter().map(|&c| values[c * samples + s]));
                statistic(&mut column, operator, median)
            })
            .collect();
        for (c, row) in out.chunks_exact_mut(samples).enumerate() {
            if let Some(k) = sets.set_of(c) {
                row[s] -= references[k];
            }
        }
    }
    Ok(out)
}

/// The median or mean of a non-empty set of values (reordered in place).
fn statistic(values: &mut [f64], operator: ReferenceOperator, median: MedianRule) -> f64 {
    let n = values.len();
    match operator {
        ReferenceOperator::Mean => values.iter().sum::<f64>() / n as f64,
        ReferenceOperator::Median => {
            values.sort_unstable_by(f64::total_cmp);
            let lower = values[(n - 1) / 2];
            match median {
                MedianRule::Numpy if n.is_multiple_of(2) => (lower + values[n / 2]) / 2.0,
                _ => lower,
            }
        }
    }
}
