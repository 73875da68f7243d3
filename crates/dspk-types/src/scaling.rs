//! How stored values become the values a pass works on: per channel `stored × gain + offset`,
//! voltages in µV.

use crate::{RecordingInfo, SignalUnit};

/// Per-channel `stored × gain + offset`, in `units`: what a device pass (or a host read) turns
/// a channel's stored values into.
#[derive(Debug, Clone, PartialEq)]
pub struct Scaling {
    /// Per-channel gain.
    pub gains: Vec<f32>,
    /// Per-channel offset.
    pub offsets: Vec<f32>,
    /// Per-channel unit of the scaled values.
    pub units: Vec<SignalUnit>,
}

impl Scaling {
    /// The scaling of `info`'s channels to µV: volt and millivolt channels are converted (gain
    /// and offset multiplied in `f64`, then rounded once to `f32`); every other unit is left as
    /// the recording states it.
    pub fn microvolts(info: &RecordingInfo) -> Self {
        let mut s = Scaling {
            gains: Vec::with_capacity(info.channel_count()),
            offsets: Vec::with_capacity(info.channel_count()),
            units: Vec::with_capacity(info.channel_count()),
        };
        for ch in &info.channels {
            let (factor, unit) = match ch.unit.microvolts_per_unit() {
                Some(factor) => (factor, SignalUnit::Microvolt),
                None => (1.0, ch.unit.clone()),
            };
            s.gains.push((f64::from(ch.gain) * factor) as f32);
            s.offsets.push((f64::from(ch.offset) * factor) as f32);
            s.units.push(unit);
        }
        s
    }

    /// The recording's own scaling: its channels' gains, offsets and units as stated.
    pub fn as_stated(info: &RecordingInfo) -> Self {
        Scaling {
            gains: info.channels.iter().map(|c| c.gain).collect(),
            offsets: info.channels.iter().map(|c| c.offset).collect(),
            units: info.channels.iter().map(|c| c.unit.clone()).collect(),
        }
    }

    /// Channels scaled.
    pub fn channel_count(&self) -> usize {
        self.gains.len()
    }

    /// The scaling of `channels` (indices into this one), in that order; `None` when an index
    /// is out of range.
    pub fn select(&self, channels: &[usize]) -> Option<Self> {
        let n = self.channel_count();
        if channels.iter().any(|&c| c >= n) {
            return None;
        }
        Some(Scaling {
            gains: channels.iter().map(|&c| self.gains[c]).collect(),
            offsets: channels.iter().map(|&c| self.offsets[c]).collect(),
            units: channels.iter().map(|&c| self.units[c].clone()).collect(),
        })
    }

    /// The unit every channel shares, if they all share one.
    pub fn common_unit(&self) -> Option<&SignalUnit> {
        let first = self.units.first()?;
        self.units.iter().all(|u| u == first).then_some(first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ChannelInfo, MemoryOrder, SampleFormat, SampleRate};

    #[test]
    fn voltages_become_microvolts() {
        let rate = SampleRate::from_ratio(1000, 1).unwrap();
        let mut info =
            RecordingInfo::new("r", 4, 10, rate, SampleFormat::I16, MemoryOrder::TimeMajor);
        let unit = |u| ChannelInfo {
            name: "c".into(),
            gain: 0.5,
            offset: -0.25,
            unit: u,
            kind: crate::ChannelKind::Signal,
        };
        info.channels = vec![
            unit(SignalUnit::Volt),
            unit(SignalUnit::Millivolt),
            unit(SignalUnit::Microvolt),
            unit(SignalUnit::Dimensionless),
        ];
        let s = Scaling::microvolts(&info);
        assert_eq!(s.gains, vec![5e5, 500.0, 0.5, 0.5]);
        assert_eq!(s.offsets, vec![-2.5e5, -250.0, -0.25, -0.25]);
        assert_eq!(s.units[0], SignalUnit::Microvolt);
        assert_eq!(s.units[1], SignalUnit::Microvolt);
        assert_eq!(s.units[3], SignalUnit::Dimensionless);
        assert_eq!(s.common_unit(), None);
        let picked = s.select(&[3, 0]).unwrap();
        assert_eq!(picked.gains, vec![0.5, 5e5]);
        assert_eq!(picked.units[0], SignalUnit::Dimensionless);
        assert!(s.select(&[4]).is_none());
        assert_eq!(Scaling::as_stated(&info).gains, vec![0.5; 4]);
        info.channels.truncate(3);
        assert_eq!(
            Scaling::microvolts(&info).common_unit(),
            Some(&SignalUnit::Microvolt)
        );
    }
}
