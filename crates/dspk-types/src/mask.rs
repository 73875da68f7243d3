//! Channel masks: one flag per channel, enabled meaning good.

use serde::{Deserialize, Serialize};

use crate::{DspError, DspResult};

/// Which channels of a recording are good: one flag per channel, `true` = enabled.
///
/// Indices past the end are never silently ignored where they could hide a mistake: building a
/// mask from them or setting them is an [`DspError::InvalidChannel`] error; asking whether one is
/// enabled answers `false`.
///
/// Serialised in a human-readable form that lists only the exceptions:
/// `{"total_channels": 384, "disabled": [3, 17]}` (indices ascending). Reading refuses unknown
/// fields and indices at or past `total_channels`.
///
/// ```
/// use dspk_types::ChannelMask;
/// let mask = ChannelMask::from_disabled_indices(4, &[1, 3]).unwrap();
/// assert_eq!(mask.enabled_indices(), vec![0, 2]);
/// assert_eq!(
///     serde_json::to_string(&mask).unwrap(),
///     r#"{"total_channels":4,"disabled":[1,3]}"#
/// );
/// assert!(ChannelMask::from_disabled_indices(4, &[4]).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(into = "MaskFile", try_from = "MaskFile")]
pub struct ChannelMask {
    enabled: Vec<bool>,
}

impl ChannelMask {
    /// `channels` channels, every one enabled.
    pub fn all_enabled(channels: usize) -> Self {
        Self {
            enabled: vec![true; channels],
        }
    }

    /// One channel per flag, `true` = enabled.
    pub fn from_bools(enabled: Vec<bool>) -> Self {
        Self { enabled }
    }

    /// `channels` channels, enabled except those in `disabled` (repeats are harmless).
    ///
    /// An index at or past `channels` is a [`DspError::InvalidChannel`] error naming it; a
    /// channel count too large to allocate is an error, not an abort.
    pub fn from_disabled_indices(channels: usize, disabled: &[usize]) -> DspResult<Self> {
        // A mask file is user input: its channel count must not be able to abort the process.
        let mut enabled = Vec::new();
        enabled
            .try_reserve_exact(channels)
            .map_err(|e| DspError::BufferOverrun {
                what: format!("channel mask of {channels} channels ({e})"),
                capacity: enabled.capacity(),
                needed: channels,
            })?;
        enabled.resize(channels, true);
        let mut mask = Self { enabled };
        for &index in disabled {
            mask.set_enabled(index, false)?;
        }
        Ok(mask)
    }

    /// Whether channel `index` is enabled; `false` for an index past the end.
    pub fn is_enabled(&self, index: usize) -> bool {
        self.enabled.get(index).copied().unwrap_or(false)
    }

    /// Enables or disables channel `index`; an index past the end is an error.
    pub fn set_enabled(&mut self, index: usize, enabled: bool) -> DspResult<()> {
        let count = self.enabled.len();
        let flag = self
            .enabled
            .get_mut(index)
            .ok_or(DspError::InvalidChannel { index, count })?;
        *flag = enabled;
        Ok(())
    }

    /// The number of channels the mask covers.
    pub fn total_channels(&self) -> usize {
        self.enabled.len()
    }

    /// The number of enabled channels.
    pub fn enabled_count(&self) -> usize {
        self.enabled.iter().filter(|&&e| e).count()
    }

    /// The number of disabled channels.
    pub fn disabled_count(&self) -> usize {
        self.total_channels() - self.enabled_count()
    }

    /// The enabled channels, ascending.
    pub fn enabled_indices(&self) -> Vec<usize> {
        self.indices_where(true)
    }

    /// The disabled channels, ascending.
    pub fn disabled_indices(&self) -> Vec<usize> {
        self.indices_where(false)
    }

    /// The flags, one per channel, `true` = enabled.
    pub fn as_bools(&self) -> &[bool] {
        &self.enabled
    }

    /// Enabled where both masks are (a channel must be good in both); masks of different
    /// lengths are a [`DspError::ShapeMismatch`].
    pub fn and(&self, other: &ChannelMask) -> DspResult<ChannelMask> {
        self.combine(other, |a, b| a && b)
    }

    /// Enabled where either mask is; masks of different lengths are a
    /// [`DspError::ShapeMismatch`].
    pub fn or(&self, other: &ChannelMask) -> DspResult<ChannelMask> {
        self.combine(other, |a, b| a || b)
    }

    fn combine(&self, other: &ChannelMask, op: impl Fn(bool, bool) -> bool) -> DspResult<Self> {
        if self.enabled.len() != other.enabled.len() {
            return Err(DspError::shape(
                "channel mask",
                self.enabled.len(),
                other.enabled.len(),
            ));
        }
        let enabled = self
            .enabled
            .iter()
            .zip(&other.enabled)
            .map(|(&a, &b)| op(a, b))
            .collect();
        Ok(Self { enabled })
    }

    fn indices_where(&self, wanted: bool) -> Vec<usize> {
        self.enabled
            .iter()
            .enumerate()
            .filter_map(|(i, &e)| (e == wanted).then_some(i))
            .collect()
    }
}

/// The on-disk form of a [`ChannelMask`]: the channel count and the exceptions.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct MaskFile {
    total_channels: usize,
    disabled: Vec<usize>,
}

impl From<ChannelMask> for MaskFile {
    fn from(mask: ChannelMask) -> Self {
        Self {
            total_channels: mask.total_channels(),
            disabled: mask.disabled_indices(),
        }
    }
}

impl TryFrom<MaskFile> for ChannelMask {
    type Error = DspError;

    fn try_from(file: MaskFile) -> DspResult<Self> {
        ChannelMask::from_disabled_indices(file.total_channels, &file.disabled)
    }
}

#[cfg(test)]
#[path = "tests/mask.rs"]
mod tests;
