//! The spatial part on the host in `f64`: each shank's channels padded with their mirror image
//! and high-passed across channels by `sosfiltfilt` (IBL's `kfilt` with `ntr_tap = 0`), and
//! the same linear map as a matrix for the device.

use dspk_types::{DspError, DspResult, FilterBand, RecordingInfo, SpatialHighpassSpec};

use crate::filter::design::{Sos, butter};
use crate::filter::host::sosfiltfilt;

/// The spatial high-pass of one recording's channels: which channels form each shank and the
/// filter run across them.
#[derive(Debug, Clone, PartialEq)]
pub struct SpatialOperator {
    channels: usize,
    shanks: Vec<Vec<usize>>,
    sos: Sos,
    pad: usize,
}

impl SpatialOperator {
    /// The operator `spec` asks for on the channels of `info`: one shank per probe shank (its
    /// channels in channel order), all channels on one shank without a probe.
    ///
    /// # Errors
    /// A channel without a contact on a recording with a probe; a shank too short for
    /// `sosfiltfilt` once padded (its length must exceed the filter's `padlen`).
    pub fn new(spec: &SpatialHighpassSpec, info: &RecordingInfo) -> DspResult<Self> {
        let channels = info.channel_count();
        let shanks = match &info.probe {
            None => vec![(0..channels).collect::<Vec<_>>()],
            Some(probe) => {
                let mut by_shank: std::collections::BTreeMap<u32, Vec<usize>> =
                    std::collections::BTreeMap::new();
                for c in 0..channels {
                    let contact = probe.contact(c).map_err(|_| {
                        DspError::config(format!(
                            "a spatial high-pass groups channels by shank, and channel {c} has \
                             no contact on the probe (select the signal channels)"
                        ))
                    })?;
                    by_shank.entry(contact.shank).or_default().push(c);
                }
                by_shank.into_values().collect()
            }
        };
        // The cut-off is a fraction of Nyquist: a "rate" of 2 makes Nyquist 1.
        let sos = butter(spec.order, &[spec.cutoff], FilterBand::Highpass, 2.0)?;
        let pad = spec.pad_channels as usize;
        for shank in &shanks {
            let n = shank.len();
            let padded = n + 2 * pad.min(n);
            if padded <= sos.padlen() {
                return Err(DspError::config(format!(
                    "a spatial high-pass of order {} needs more than {} channels per shank once \
                     padded, and the shank of channels {:?} has {n} ({padded} padded)",
                    spec.order,
                    sos.padlen(),
                    shank
                )));
            }
        }
        Ok(Self {
            channels,
            shanks,
            sos,
            pad,
        })
    }

    /// The channels of each shank, in channel order.
    pub fn shanks(&self) -> &[Vec<usize>] {
        &self.shanks
    }

    /// The high-pass across channels of one sample's values (`values[c]` for every channel):
    /// per shank, `values` of its channels padded with `min(pad, n)` mirrored channels on each
    /// side (`x[p−1], …, x[0], x…, x[n−1], …, x[n−p]`), `sosfiltfilt`, the padding cut off.
    pub fn apply(&self, values: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; values.len()];
        for shank in &self.shanks {
            let x: Vec<f64> = shank.iter().map(|&c| values[c]).collect();
            let p = self.pad.min(x.len());
            let padded: Vec<f64> = x[..p]
                .iter()
                .rev()
                .chain(&x)
                .chain(x[x.len() - p..].iter().rev())
                .copied()
                .collect();
            let y = sosfiltfilt(&self.sos, &padded)
                .expect("each shank was checked longer than padlen when the operator was built");
            for (k, &c) in shank.iter().enumerate() {
                out[c] = y[p + k];
            }
        }
        out
    }

    /// The same map as a matrix, one sparse row per channel: `(column, weight)` over the
    /// channels of its shank in channel order (`y[c] = Σ weight·x[column]`), each column the
    /// image of a unit vector under [`apply`](Self::apply).
    pub fn rows(&self) -> Vec<Vec<(u32, f64)>> {
        let mut rows: Vec<Vec<(u32, f64)>> = vec![Vec::new(); self.channels];
        let mut unit = vec![0.0; self.channels];
        for shank in &self.shanks {
            for &k in shank {
                unit[k] = 1.0;
                let image = self.apply(&unit);
                unit[k] = 0.0;
                for &c in shank {
                    rows[c].push((k as u32, image[c]));
                }
            }
        }
        rows
    }
}
