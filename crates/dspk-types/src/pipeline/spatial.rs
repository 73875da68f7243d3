//! [`SpatialHighpassSpec`]: IBL's "k-filter" (`ibldsp.voltage.kfilt`), a Butterworth high-pass
//! across the channels of each shank between an automatic gain control and its undoing.

use serde::{Deserialize, Serialize};

use super::MAX_FILTER_ORDER;
use crate::RecordingInfo;

/// Most channels of mirrored padding a spatial high-pass may ask for on each side.
pub const MAX_PAD_CHANNELS: u32 = 4096;

/// Longest automatic-gain-control window a spatial high-pass may ask for, in samples.
pub const MAX_AGC_WINDOW_SAMPLES: u32 = 1 << 16;

/// A spatial high-pass after an automatic gain control, per shank (IBL's `kfilt`).
///
/// At each sample `t`, each channel `c` is divided by its gain `g_c(t) = Σ_j w_j·|x_c(t + j)|`
/// (a normalised Hann window over `agc_window_samples`, zero past the segment's ends; at
/// least `agc_floor_uv`), the channels of each shank (in channel order) are padded with their
/// own mirror image by `pad_channels` on each side and high-passed across channels
/// (Butterworth `order`, `cutoff` as a fraction of the spatial Nyquist, forward and backward as
/// `scipy.signal.sosfiltfilt`), and the result is multiplied by `g_c(t)` again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpatialHighpassSpec {
    /// IBL's `lagc`: the gain's Hann window has `2·round(agc_window_samples / 2) + 1` points
    /// (`np.hanning`, halves rounded to even). Default 3000 (0.1 s at 30 kHz).
    #[serde(default = "default_agc_window")]
    pub agc_window_samples: u32,
    /// The smallest gain divided by, in µV (IBL's `epsilon`), so that a flat stretch is not
    /// divided by 0. Default 0.01 µV.
    #[serde(default = "default_agc_floor")]
    pub agc_floor_uv: f64,
    /// The Butterworth order (1 to [`MAX_FILTER_ORDER`]; default 3).
    #[serde(default = "default_order")]
    pub order: u32,
    /// The cut-off as a fraction of the spatial Nyquist (half a cycle per channel), strictly
    /// between 0 and 1 (`scipy.signal.butter`'s `Wn`; default 0.01).
    #[serde(default = "default_cutoff")]
    pub cutoff: f64,
    /// Channels of mirrored padding on each side of a shank (IBL's `ntr_pad`; default 60; a
    /// shank of fewer channels is padded by its channel count).
    #[serde(default = "default_pad")]
    pub pad_channels: u32,
}

fn default_agc_window() -> u32 {
    3000
}

fn default_agc_floor() -> f64 {
    0.01
}

fn default_order() -> u32 {
    3
}

fn default_cutoff() -> f64 {
    0.01
}

fn default_pad() -> u32 {
    60
}

impl Default for SpatialHighpassSpec {
    fn default() -> Self {
        Self {
            agc_window_samples: default_agc_window(),
            agc_floor_uv: default_agc_floor(),
            order: default_order(),
            cutoff: default_cutoff(),
            pad_channels: default_pad(),
        }
    }
}

impl SpatialHighpassSpec {
    /// Points of the gain's Hann window: `2·round(agc_window_samples / 2) + 1`, NumPy's
    /// `round` (halves to even), as `ibldsp.voltage.agc` computes `ns_win`.
    pub fn agc_points(&self) -> u32 {
        let half = self.agc_window_samples / 2;
        // An odd count has a half of .5: rounded to the even one of `half` and `half + 1`.
        let half = if !self.agc_window_samples.is_multiple_of(2) && !half.is_multiple_of(2) {
            half + 1
        } else {
            half
        };
        2 * half + 1
    }

    /// `scipy.signal.sosfiltfilt`'s default pad length for this Butterworth high-pass:
    /// `3·(2·sections + 1 − z)` with `⌈order/2⌉` sections, `z = 1` for an odd order (its
    /// first-order section has `b2 = a2 = 0`), else 0. A shank's padded channels must exceed it.
    pub fn padlen(&self) -> usize {
        let sections = self.order.div_ceil(2) as usize;
        3 * (2 * sections + 1 - (self.order % 2) as usize)
    }

    /// Checks the numbers, and that each shank of `info` (one without a probe; every channel
    /// needs a contact with one) is long enough once padded for `sosfiltfilt`.
    pub(super) fn check(&self, info: &RecordingInfo) -> Result<(), String> {
        self.check_numbers()?;
        let channels = info.channel_count();
        let mut shanks: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
        for c in 0..channels {
            let shank = match &info.probe {
                None => 0,
                Some(probe) => probe.contact(c).map(|k| k.shank).map_err(|_| {
                    format!(
                        "a spatial high-pass groups channels by shank, and channel {c} ({}) has \
                         no contact on the probe (select the signal channels)",
                        info.channels[c].name
                    )
                })?,
            };
            shanks.entry(shank).or_default().push(c);
        }
        let pad = self.pad_channels as usize;
        for (shank, members) in &shanks {
            let n = members.len();
            let padded = n + 2 * pad.min(n);
            if padded <= self.padlen() {
                return Err(format!(
                    "a spatial high-pass of order {} needs more than {} channels per shank once \
                     padded, and shank {shank} has {n} ({padded} padded)",
                    self.order,
                    self.padlen()
                ));
            }
        }
        Ok(())
    }

    fn check_numbers(&self) -> Result<(), String> {
        if !(1..=MAX_AGC_WINDOW_SAMPLES).contains(&self.agc_window_samples) {
            return Err(format!(
                "agc_window_samples {} is not within 1..={MAX_AGC_WINDOW_SAMPLES}",
                self.agc_window_samples
            ));
        }
        if !(self.agc_floor_uv.is_finite() && self.agc_floor_uv > 0.0) {
            return Err(format!(
                "agc_floor_uv {} is not a finite number > 0",
                self.agc_floor_uv
            ));
        }
        if !(1..=MAX_FILTER_ORDER).contains(&self.order) {
            return Err(format!(
                "order {} is not within 1..={MAX_FILTER_ORDER}",
                self.order
            ));
        }
        if !(self.cutoff.is_finite() && self.cutoff > 0.0 && self.cutoff < 1.0) {
            return Err(format!(
                "cutoff {} is not strictly between 0 and 1 (a fraction of the spatial Nyquist)",
                self.cutoff
            ));
        }
        if self.pad_channels > MAX_PAD_CHANNELS {
            return Err(format!(
                "pad_channels {} is more than {MAX_PAD_CHANNELS}",
                self.pad_channels
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hann_length_rounds_halves_to_even_as_numpy() {
        // np.round(n / 2) * 2 + 1 for n = 1, 2, 3, 5, 3000, 3001.
        let points = |n| {
            SpatialHighpassSpec {
                agc_window_samples: n,
                ..SpatialHighpassSpec::default()
            }
            .agc_points()
        };
        assert_eq!(points(1), 1);
        assert_eq!(points(2), 3);
        assert_eq!(points(3), 5);
        assert_eq!(points(5), 5);
        assert_eq!(points(3000), 3001);
        assert_eq!(points(3001), 3001);
        assert_eq!(points(3003), 3005);
    }

    #[test]
    fn bad_numbers_are_refused_with_their_values() {
        let bad = |s: SpatialHighpassSpec| s.check_numbers().unwrap_err();
        let d = SpatialHighpassSpec::default();
        assert!(d.check_numbers().is_ok());
        assert_eq!(d.padlen(), 12);
        assert_eq!(
            SpatialHighpassSpec {
                order: 4,
                ..d.clone()
            }
            .padlen(),
            15
        );
        assert!(
            bad(SpatialHighpassSpec {
                cutoff: 1.0,
                ..d.clone()
            })
            .contains("cutoff 1 ")
        );
        assert!(
            bad(SpatialHighpassSpec {
                order: 0,
                ..d.clone()
            })
            .contains("order 0")
        );
        assert!(
            bad(SpatialHighpassSpec {
                agc_floor_uv: 0.0,
                ..d.clone()
            })
            .contains("agc_floor_uv 0")
        );
        assert!(
            bad(SpatialHighpassSpec {
                agc_window_samples: 0,
                ..d.clone()
            })
            .contains("agc_window_samples 0")
        );
        assert!(
            bad(SpatialHighpassSpec {
                pad_channels: 5000,
                ..d
            })
            .contains("pad_channels 5000")
        );
    }
}
