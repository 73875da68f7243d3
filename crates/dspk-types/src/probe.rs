//! Probe geometry: where each channel's contact sits, which ADC samples it, and the spatial
//! lookups preprocessing needs.
//!
//! Parts: `contact` ([`Contact`], [`AdcSlot`], [`AdcCycle`], [`ContactShape`]), `error`
//! ([`ProbeError`]), `lookup` (neighbourhoods, nearest contacts, row pitch). A [`Probe`]
//! describes every channel of one recording, in the recording's channel order; a channel with
//! no contact (a sync word) is `None`. It travels in [`RecordingInfo::probe`](crate::RecordingInfo)
//! and follows the recording's channel maps, subsets and slices ([`Probe::select`]).

mod contact;
mod error;
mod lookup;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

pub use contact::*;
pub use error::*;

/// The fields of a [`Probe`], unchecked: what its serde form holds and what
/// [`Probe::new`] checks.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeParts {
    /// The model or part number (`NP1000`, `NP2014`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The manufacturer (`imec`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manufacturer: Option<String>,
    /// A description (the catalogue's, for a Neuropixels probe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The distance between neighbouring shanks, in µm (multi-shank probes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shank_pitch_um: Option<f64>,
    /// The shape of every contact, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact_shape: Option<ContactShape>,
    /// How the ADCs multiplex the channels, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adc_cycle: Option<AdcCycle>,
    /// One entry per recording channel: its contact, or `None` (`null`) for a channel with
    /// none.
    pub channels: Vec<Option<Contact>>,
}

/// Where every channel of a recording sits on its probe, checked.
///
/// Built by [`Probe::new`] from [`ProbeParts`] (also its serde form, so a sidecar's probe is
/// checked as it is read): at least one channel and one contact, finite positions, non-empty
/// and unique contact ids, ADC slots inside the probe's [`AdcCycle`].
///
/// ```
/// use dspk_types::{Contact, Probe, ProbeParts};
///
/// let channels = vec![
///     Some(Contact::new(0.0, 0.0, 0, "e0")),
///     Some(Contact::new(32.0, 0.0, 0, "e1")),
///     Some(Contact::new(16.0, 20.0, 0, "e2")),
///     None, // the sync channel
/// ];
/// let probe = Probe::new(ProbeParts { channels, ..ProbeParts::default() }).unwrap();
/// assert_eq!(probe.within(2, 30.0).unwrap(), vec![0, 1]);
/// assert_eq!(probe.nearest(0, 2).unwrap(), vec![0, 2]);
/// assert_eq!(probe.row_pitch_um(), Some(20.0));
/// assert!(probe.within(3, 30.0).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ProbeParts", into = "ProbeParts")]
pub struct Probe {
    parts: ProbeParts,
}

impl TryFrom<ProbeParts> for Probe {
    type Error = ProbeError;

    fn try_from(parts: ProbeParts) -> Result<Self, ProbeError> {
        Probe::new(parts)
    }
}

impl From<Probe> for ProbeParts {
    fn from(probe: Probe) -> Self {
        probe.parts
    }
}

fn check_length(what: &'static str, value: Option<f64>) -> Result<(), ProbeError> {
    match value {
        Some(v) if !(v.is_finite() && v >= 0.0) => Err(ProbeError::BadLength { what, value: v }),
        _ => Ok(()),
    }
}

impl Probe {
    /// Checks `parts` (see [`Probe`]) and builds the probe.
    pub fn new(parts: ProbeParts) -> Result<Self, ProbeError> {
        if parts.channels.is_empty() {
            return Err(ProbeError::NoChannels);
        }
        check_length("shank pitch", parts.shank_pitch_um)?;
        match parts.contact_shape {
            Some(ContactShape::Square { width_um }) => {
                check_length("contact width", Some(width_um))?
            }
            Some(ContactShape::Circle { radius_um }) => {
                check_length("contact radius", Some(radius_um))?;
            }
            Some(ContactShape::Rect {
                width_um,
                height_um,
            }) => {
                check_length("contact width", Some(width_um))?;
                check_length("contact height", Some(height_um))?;
            }
            None => {}
        }
        if let Some(c) = parts.adc_cycle
            && (c.adcs == 0 || c.channels_per_adc == 0 || c.cycle_samples < c.channels_per_adc)
        {
            return Err(ProbeError::BadAdcCycle {
                adcs: c.adcs,
                channels_per_adc: c.channels_per_adc,
                cycle_samples: c.cycle_samples,
            });
        }
        let mut ids: HashMap<&str, usize> = HashMap::with_capacity(parts.channels.len());
        for (channel, contact) in parts.channels.iter().enumerate() {
            let Some(c) = contact else { continue };
            if !(c.x_um.is_finite() && c.y_um.is_finite()) {
                return Err(ProbeError::NonFinitePosition {
                    channel,
                    x_um: c.x_um,
                    y_um: c.y_um,
                });
            }
            if c.id.is_empty() {
                return Err(ProbeError::EmptyContactId { channel });
            }
            if let Some(first) = ids.insert(&c.id, channel) {
                return Err(ProbeError::DuplicateContactId {
                    id: c.id.clone(),
                    first,
                    second: channel,
                });
            }
            if let Some(slot) = c.adc {
                let cycle = parts
                    .adc_cycle
                    .ok_or(ProbeError::AdcWithoutCycle { channel })?;
                if slot.adc >= cycle.adcs || slot.order >= cycle.cycle_samples {
                    return Err(ProbeError::AdcSlotOutOfCycle {
                        channel,
                        adc: slot.adc,
                        order: slot.order,
                        adcs: cycle.adcs,
                        cycle_samples: cycle.cycle_samples,
                    });
                }
            }
        }
        if ids.is_empty() {
            return Err(ProbeError::NoContacts {
                channels: parts.channels.len(),
            });
        }
        Ok(Self { parts })
    }

    /// The probe's fields.
    pub fn parts(&self) -> &ProbeParts {
        &self.parts
    }

    /// The model or part number, where known.
    pub fn model(&self) -> Option<&str> {
        self.parts.model.as_deref()
    }

    /// The distance between neighbouring shanks in µm, where known.
    pub fn shank_pitch_um(&self) -> Option<f64> {
        self.parts.shank_pitch_um
    }

    /// How the ADCs multiplex the channels, where known.
    pub fn adc_cycle(&self) -> Option<AdcCycle> {
        self.parts.adc_cycle
    }

    /// The number of channels described (the recording's channel count).
    pub fn channel_count(&self) -> usize {
        self.parts.channels.len()
    }

    /// Every channel's contact, in channel order (`None`: no contact).
    pub fn channels(&self) -> &[Option<Contact>] {
        &self.parts.channels
    }

    /// The channels with a contact and their contacts, in channel order.
    pub fn contacts(&self) -> impl Iterator<Item = (usize, &Contact)> {
        self.parts
            .channels
            .iter()
            .enumerate()
            .filter_map(|(ch, c)| c.as_ref().map(|c| (ch, c)))
    }

    /// The number of channels with a contact.
    pub fn contact_count(&self) -> usize {
        self.contacts().count()
    }

    /// The channels with a contact, in order.
    pub fn contact_channels(&self) -> Vec<usize> {
        self.contacts().map(|(ch, _)| ch).collect()
    }

    /// The shanks the contacts are on, ascending.
    pub fn shanks(&self) -> Vec<u32> {
        let mut s: Vec<u32> = self
            .parts
            .channels
            .iter()
            .flatten()
            .map(|c| c.shank)
            .collect();
        s.sort_unstable();
        s.dedup();
        s
    }

    /// The contact of `channel`: refused past the last channel and for a channel with none.
    pub fn contact(&self, channel: usize) -> Result<&Contact, ProbeError> {
        self.parts
            .channels
            .get(channel)
            .ok_or(ProbeError::ChannelOutOfRange {
                channel,
                count: self.channel_count(),
            })?
            .as_ref()
            .ok_or(ProbeError::NoContact { channel })
    }

    /// The lag of `channel`'s sample behind the cycle's first, in samples
    /// (`order / cycle_samples`); `None` where the ADC slot is not known or the channel has no
    /// contact.
    pub fn sample_shift(&self, channel: usize) -> Option<f64> {
        let cycle = self.parts.adc_cycle?;
        let slot = self.parts.channels.get(channel)?.as_ref()?.adc?;
        Some(f64::from(slot.order) / f64::from(cycle.cycle_samples))
    }

    /// Checks that the probe describes `channels` channels (the recording it is attached to).
    pub fn check_channel_count(&self, channels: usize) -> Result<(), ProbeError> {
        if self.channel_count() != channels {
            return Err(ProbeError::ChannelCountMismatch {
                probe: self.channel_count(),
                recording: channels,
            });
        }
        Ok(())
    }

    /// The probe of a recording whose channel `i` is this one's `channels[i]` (a channel map,
    /// a subset, a reordering). Refused: a channel past the last, no channels, a contact listed
    /// twice (a repeated channel), a selection of channels without contacts only.
    pub fn select(&self, channels: &[usize]) -> Result<Self, ProbeError> {
        let picked = channels
            .iter()
            .map(|&c| {
                self.parts
                    .channels
                    .get(c)
                    .cloned()
                    .ok_or(ProbeError::ChannelOutOfRange {
                        channel: c,
                        count: self.channel_count(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Probe::new(ProbeParts {
            channels: picked,
            ..self.parts.clone()
        })
    }
}

#[cfg(test)]
mod tests;
