//! The `f64` host reference of bad-channel interpolation, the one the device tests hold the
//! stage to.

use dspk_types::{DspError, DspResult};

use super::InterpolationWeights;

/// `values` (channel-major, `channels` rows of `samples`) with each bad channel replaced by
/// the weighted sum of its good channels, in `f64` (SpikeInterface's
/// `traces[:, good] @ weights`); good channels copied.
///
/// # Errors
/// `values` not `channels × samples` long, or weights describing another channel count.
pub fn host(
    values: &[f64],
    channels: usize,
    samples: usize,
    weights: &InterpolationWeights,
) -> DspResult<Vec<f64>> {
    if values.len() != channels * samples {
        return Err(DspError::shape(
            "values of an interpolated window",
            channels * samples,
            values.len(),
        ));
    }
    if weights.channel_count() != channels {
        return Err(DspError::shape(
            "channels of the interpolation weights",
            channels,
            weights.channel_count(),
        ));
    }
    let mut out = values.to_vec();
    for (&b, row) in weights.bad().iter().zip(weights.rows()) {
        for s in 0..samples {
            out[b * samples + s] = row.iter().map(|&(g, w)| w * values[g * samples + s]).sum();
        }
    }
    Ok(out)
}
