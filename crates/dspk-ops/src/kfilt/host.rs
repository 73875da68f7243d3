//! The `f64` host reference of the spatial high-pass on one whole segment, computed as IBL's
//! `kfilt` computes it (per sample: gain-normalise, pad, `sosfiltfilt` across channels,
//! multiply by the gain), not through the device's matrix.

use dspk_types::{DspError, DspResult, RecordingInfo, SpatialHighpassSpec};

use super::agc::{hann_taps, host_gain};
use super::spatial::SpatialOperator;

/// The spatial high-pass of `rows` (channel-major, `info.channel_count()` rows of equal
/// length, one whole segment) in `f64`.
///
/// # Errors
/// Rows that do not split into the channels, and what [`SpatialOperator::new`] refuses.
pub fn host(spec: &SpatialHighpassSpec, info: &RecordingInfo, rows: &[f64]) -> DspResult<Vec<f64>> {
    let channels = info.channel_count();
    if channels == 0 || !rows.len().is_multiple_of(channels) {
        return Err(DspError::shape(
            "values of a spatial high-pass's rows (a multiple of the channels)",
            channels,
            rows.len(),
        ));
    }
    let samples = rows.len() / channels;
    let op = SpatialOperator::new(spec, info)?;
    let taps = hann_taps(spec.agc_points());
    let gains: Vec<Vec<f64>> = rows
        .chunks_exact(samples.max(1))
        .map(|row| host_gain(row, &taps))
        .collect();
    let mut out = vec![0.0; rows.len()];
    let mut column = vec![0.0; channels];
    for t in 0..samples {
        for c in 0..channels {
            column[c] = rows[c * samples + t] / gains[c][t].max(spec.agc_floor_uv);
        }
        let y = op.apply(&column);
        for c in 0..channels {
            out[c * samples + t] = y[c] * gains[c][t];
        }
    }
    Ok(out)
}
