//! Which channels each channel's reference is taken over ([`ReferenceSets`]), from a spec and
//! the probe, as SpikeInterface's `common_reference` chooses them.

use dspk_types::{DspError, DspResult, Probe, RecordingInfo, ReferenceScope, ReferenceSpec};

/// The reference sets of a common reference: lists of channels, and for each channel the set
/// subtracted from it (or none: the channel is left as it is).
///
/// - global: one set of every channel, subtracted from every channel (itself included);
/// - shank: one set per shank (ascending shank number) of that shank's channels, subtracted
///   from each of them (itself included);
/// - local: for each channel the channels in the annulus `inner < d <= outer` µm around it
///   (never itself); with fewer than `min_local_neighbors` there, the `min_local_neighbors`
///   nearest channels beyond `inner` instead (ties by channel index); with none beyond
///   `inner`, no reference (SpikeInterface leaves the channel unreferenced and warns).
///
/// Members are listed in ascending channel order, the order the device sums a mean in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferenceSets {
    sets: Vec<Vec<usize>>,
    set_of: Vec<Option<usize>>,
}

impl ReferenceSets {
    /// The sets `spec` takes over the channels of `info`.
    ///
    /// # Errors
    /// No channels; shank or local scope without a probe giving every channel a contact, or
    /// an annulus that is not one (`PipelineSpec::check` refuses both first).
    pub fn of(spec: &ReferenceSpec, info: &RecordingInfo) -> DspResult<Self> {
        let channels = info.channel_count();
        if channels == 0 {
            return Err(DspError::config(
                "a common reference needs at least one channel, and the recording has none",
            ));
        }
        match spec.scope {
            ReferenceScope::Global => Ok(Self {
                sets: vec![(0..channels).collect()],
                set_of: vec![Some(0); channels],
            }),
            ReferenceScope::Shank => {
                let probe = probe(info, "a per-shank reference")?;
                let shanks = probe.shanks();
                let mut sets = vec![Vec::new(); shanks.len()];
                let mut set_of = Vec::with_capacity(channels);
                for c in 0..channels {
                    let shank = contact_of(probe, c)?.shank;
                    let k = shanks
                        .binary_search(&shank)
                        .expect("every contact's shank is among the probe's shanks");
                    sets[k].push(c);
                    set_of.push(Some(k));
                }
                Ok(Self { sets, set_of })
            }
            ReferenceScope::Local => {
                let probe = probe(info, "a local reference")?;
                let [inner, outer] = spec.local_radius_um;
                let min = spec.min_local_neighbors as usize;
                let mut sets = Vec::with_capacity(channels);
                let mut set_of = Vec::with_capacity(channels);
                for c in 0..channels {
                    contact_of(probe, c)?;
                    let radii = |e| {
                        DspError::config(format!(
                            "a local reference's annulus {inner}..{outer} µm is refused: {e}"
                        ))
                    };
                    let mut near = probe.annulus(c, inner, outer).map_err(radii)?;
                    if near.len() < min {
                        near = probe.annulus(c, inner, f64::MAX).map_err(radii)?;
                        near.truncate(min);
                    }
                    if near.is_empty() {
                        set_of.push(None);
                    } else {
                        near.sort_unstable();
                        set_of.push(Some(sets.len()));
                        sets.push(near);
                    }
                }
                Ok(Self { sets, set_of })
            }
        }
    }

    /// The sets, each in ascending channel order.
    pub fn sets(&self) -> &[Vec<usize>] {
        &self.sets
    }

    /// The set subtracted from `channel` (`None`: left unreferenced, or past the last channel).
    pub fn set_of(&self, channel: usize) -> Option<usize> {
        self.set_of.get(channel).copied().flatten()
    }

    /// The channels the sets describe.
    pub fn channel_count(&self) -> usize {
        self.set_of.len()
    }

    /// The channels left unreferenced (local scope, nothing beyond the inner radius).
    pub fn unreferenced(&self) -> Vec<usize> {
        (0..self.set_of.len())
            .filter(|&c| self.set_of[c].is_none())
            .collect()
    }

    /// Whether every set serves one channel only (local scope): the device then computes each
    /// channel's reference where it subtracts it, without a buffer of references between.
    pub(crate) fn one_per_channel(&self) -> bool {
        let referenced = self.set_of.iter().flatten().count();
        referenced == self.sets.len()
    }

    /// The sets as the device takes them: `starts` (one more than the sets), the members one
    /// set after another, and each channel's set plus one (0: unreferenced).
    pub(crate) fn device_lists(&self) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
        let mut starts = Vec::with_capacity(self.sets.len() + 1);
        let mut members = Vec::new();
        starts.push(0);
        for set in &self.sets {
            members.extend(set.iter().map(|&c| c as u32));
            starts.push(members.len() as u32);
        }
        let set_of = self
            .set_of
            .iter()
            .map(|k| k.map_or(0, |k| k as u32 + 1))
            .collect();
        (starts, members, set_of)
    }
}

fn probe<'a>(info: &'a RecordingInfo, what: &str) -> DspResult<&'a Probe> {
    info.probe.as_ref().ok_or_else(|| {
        DspError::config(format!(
            "{what} needs the probe's geometry, and {} has none",
            info.name
        ))
    })
}

fn contact_of(probe: &Probe, channel: usize) -> DspResult<&dspk_types::Contact> {
    probe.contact(channel).map_err(|e| {
        DspError::config(format!(
            "a common reference by geometry needs a contact for channel {channel}: {e}"
        ))
    })
}
