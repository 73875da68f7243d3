//! One contact of a probe, the ADC slot that samples it and the ADC cycle of the probe.

use serde::{Deserialize, Serialize};

/// Where one channel's contact sits and which ADC samples it.
///
/// Positions are in micrometres in the probe's plane: x across the shanks (a multi-shank
/// probe's x includes its shank's offset, so distances across shanks are real distances), y
/// along the shank from the lowest row. A contact is checked when its [`Probe`](crate::Probe)
/// is built.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contact {
    /// x in µm.
    pub x_um: f64,
    /// y in µm.
    pub y_um: f64,
    /// The shank (0 on a single-shank probe).
    #[serde(default)]
    pub shank: u32,
    /// The contact's id, unique on the probe (Neuropixels: `e{electrode}` on one shank,
    /// `s{shank}e{electrode}` on several, as probeinterface names them).
    pub id: String,
    /// The ADC and slot that sample it, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adc: Option<AdcSlot>,
}

impl Contact {
    /// A contact at (`x_um`, `y_um`) on `shank`, with no ADC slot.
    pub fn new(x_um: f64, y_um: f64, shank: u32, id: impl Into<String>) -> Self {
        Self {
            x_um,
            y_um,
            shank,
            id: id.into(),
            adc: None,
        }
    }

    /// The distance to `other` in µm.
    pub fn distance_um(&self, other: &Contact) -> f64 {
        (self.x_um - other.x_um).hypot(self.y_um - other.y_um)
    }
}

/// Which ADC samples a channel and when within the ADC's cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdcSlot {
    /// The ADC (0-based).
    pub adc: u32,
    /// The slot within the cycle at which the ADC samples this channel (0 first).
    pub order: u32,
}

/// How a probe's ADCs multiplex its channels: `adcs` ADCs each sample `channels_per_adc`
/// channels in turn, in a cycle of `cycle_samples` slots per sample period.
///
/// A channel sampled at slot `order` lags slot 0 by `order / cycle_samples` of a sample (what
/// SpikeInterface's `phase_shift` corrects). Neuropixels 1.0: 32 ADCs of 12 channels in 13
/// slots (the 13th samples the LF band); 2.0: 24 ADCs of 16 channels in 16 slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdcCycle {
    /// ADCs on the probe.
    pub adcs: u32,
    /// Channels each ADC samples in one cycle.
    pub channels_per_adc: u32,
    /// Slots in one cycle (one sample period).
    pub cycle_samples: u32,
}

/// The shape of every contact of a probe, for probeinterface's `contact_shapes`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum ContactShape {
    /// A square `width_um` wide.
    Square {
        /// Side length in µm.
        width_um: f64,
    },
    /// A circle of `radius_um`.
    Circle {
        /// Radius in µm.
        radius_um: f64,
    },
    /// A rectangle.
    Rect {
        /// Width in µm.
        width_um: f64,
        /// Height in µm.
        height_um: f64,
    },
}
