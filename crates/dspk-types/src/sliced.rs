//! A lazy view of a sample range and a channel subset of another recording.

use std::ops::Range;
use std::sync::Arc;

use crate::{
    DspError, DspResult, MemoryOrder, RationalTime, RecordingInfo, RecordingSource,
    check_native_range, check_read, check_read_stored, check_sample_range,
    memory::check_read_native,
};

/// A lazy view of a sample range and/or a channel subset of any recording.
///
/// Construction reads nothing: reads go to the parent, shifted by the range's start and with
/// channels mapped through the subset. Its sample 0 is the parent's sample `samples.start`, and
/// its start time is the parent's start time plus that offset, exactly. Its description keeps
/// the parent's name, format, order and metadata, and the selected channels' names, gains,
/// offsets and units, in the subset's order, with their probe contacts (no probe where the
/// subset repeats a channel). A slice of a slice reads through both.
///
/// ```
/// use std::sync::Arc;
/// use dspk_types::{MemoryRecording, RecordingSource, SampleRate, SlicedRecording};
///
/// let rate = SampleRate::new(1000.0).unwrap();
/// let rec = MemoryRecording::from_channels("r", rate, vec![vec![0.0, 1.0, 2.0, 3.0], vec![10.0, 11.0, 12.0, 13.0]]).unwrap();
/// let slice = SlicedRecording::new(Arc::new(rec), 1..3, Some(vec![1])).unwrap();
/// let mut out = [0f32; 2];
/// slice.read(&[0], 0..2, &mut out).unwrap();
/// assert_eq!(out, [11.0, 12.0]);
/// assert_eq!(slice.info().start_time.as_seconds_f64(), 0.001);
/// ```
#[derive(Clone)]
pub struct SlicedRecording {
    parent: Arc<dyn RecordingSource>,
    offset: u64,
    /// Parent channel of each of the slice's channels; `None` when it is every parent channel in
    /// order (reads pass channel lists through unchanged, and the native order is the parent's).
    channels: Option<Vec<usize>>,
    info: RecordingInfo,
}

impl std::fmt::Debug for SlicedRecording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlicedRecording")
            .field("parent", &self.parent.info().name)
            .field("offset", &self.offset)
            .field("channels", &self.channels)
            .field("info", &self.info)
            .finish()
    }
}

impl SlicedRecording {
    /// A view of `parent`'s samples `samples` and `channels` (parent indices, in the order and
    /// with the repeats wanted; `None`: all, in order).
    ///
    /// Refused: a reversed range or one past the parent's end ([`DspError::SampleRange`] with
    /// the parent's total), a channel past the parent's last ([`DspError::InvalidChannel`]),
    /// an empty channel list ([`DspError::InvalidConfig`]), a start time that overflows.
    pub fn new(
        parent: Arc<dyn RecordingSource>,
        samples: Range<u64>,
        channels: Option<Vec<usize>>,
    ) -> DspResult<Self> {
        let pinfo = parent.info();
        check_sample_range(&samples, pinfo.samples)?;
        let count = pinfo.channel_count();
        let channels = match channels {
            None => None,
            Some(list) => {
                if list.is_empty() {
                    return Err(DspError::config(format!(
                        "a slice of {} needs at least one channel",
                        pinfo.name
                    )));
                }
                if let Some(&bad) = list.iter().find(|&&c| c >= count) {
                    return Err(DspError::InvalidChannel { index: bad, count });
                }
                let identity = list.len() == count && list.iter().enumerate().all(|(i, &c)| i == c);
                (!identity).then_some(list)
            }
        };
        let shift = RationalTime::from_samples(samples.start, pinfo.sample_rate)?;
        let mut info = pinfo.clone();
        info.start_time = pinfo.start_time.checked_add(shift)?;
        info.samples = samples.end - samples.start;
        if let Some(segs) = &pinfo.segments {
            // The start time is that of the segment the slice starts in, not sample 0's.
            let cut = segs.slice(&samples, pinfo.sample_rate)?;
            info.start_time = cut.list()[0].start_time;
            info.segments = (cut.len() > 1).then_some(cut);
        }
        if let Some(list) = &channels {
            info.channels = list.iter().map(|&c| pinfo.channels[c].clone()).collect();
            // A repeated channel would put one contact on two channels: no probe then.
            info.probe = pinfo.probe.as_ref().and_then(|p| p.select(list).ok());
        }
        Ok(Self {
            parent,
            offset: samples.start,
            channels,
            info,
        })
    }

    /// The recording this is a view of.
    pub fn parent(&self) -> &Arc<dyn RecordingSource> {
        &self.parent
    }

    /// The parent's sample that is this view's sample 0.
    pub fn sample_offset(&self) -> u64 {
        self.offset
    }

    /// The parent channel behind each of this view's channels.
    pub fn parent_channels(&self) -> Vec<usize> {
        match &self.channels {
            Some(list) => list.clone(),
            None => (0..self.info.channel_count()).collect(),
        }
    }

    /// The parent's range for this view's `samples` (already checked against this view).
    fn parent_range(&self, samples: &Range<u64>) -> Range<u64> {
        self.offset + samples.start..self.offset + samples.end
    }

    /// `channels` as parent channels (already checked against this view).
    fn map_channels(&self, channels: &[usize]) -> Option<Vec<usize>> {
        self.channels
            .as_ref()
            .map(|list| channels.iter().map(|&c| list[c]).collect())
    }
}

impl RecordingSource for SlicedRecording {
    fn info(&self) -> &RecordingInfo {
        &self.info
    }

    fn read(&self, channels: &[usize], samples: Range<u64>, out: &mut [f32]) -> DspResult<()> {
        check_read(&self.info, channels, &samples, out.len())?;
        let range = self.parent_range(&samples);
        match self.map_channels(channels) {
            Some(mapped) => self.parent.read(&mapped, range, out),
            None => self.parent.read(channels, range, out),
        }
    }

    fn read_stored(
        &self,
        channels: &[usize],
        samples: Range<u64>,
        out: &mut [u8],
    ) -> DspResult<()> {
        check_read_stored(&self.info, channels, &samples, out.len())?;
        let range = self.parent_range(&samples);
        match self.map_channels(channels) {
            Some(mapped) => self.parent.read_stored(&mapped, range, out),
            None => self.parent.read_stored(channels, range, out),
        }
    }

    /// The parent's native read when the view has all its channels in order; otherwise a
    /// channel-major read of every channel.
    fn read_native(&self, samples: Range<u64>, out: &mut [f32]) -> DspResult<MemoryOrder> {
        check_read_native(&self.info, &samples, out.len())?;
        let range = self.parent_range(&samples);
        match &self.channels {
            None => self.parent.read_native(range, out),
            Some(list) => {
                self.parent.read(list, range, out)?;
                Ok(MemoryOrder::ChannelMajor)
            }
        }
    }

    /// The parent's stored native read when the view has all its channels in order (a
    /// time-major file stays one run of frames per range: the fast path to a device); otherwise
    /// a channel-major read of every channel.
    fn read_stored_native(&self, samples: Range<u64>, out: &mut [u8]) -> DspResult<MemoryOrder> {
        match &self.channels {
            None => {
                check_native_range(&self.info, &samples)?;
                self.parent
                    .read_stored_native(self.parent_range(&samples), out)
            }
            Some(_) => {
                let all: Vec<usize> = (0..self.info.channel_count()).collect();
                self.read_stored(&all, samples, out)?;
                Ok(MemoryOrder::ChannelMajor)
            }
        }
    }

    /// The parent's order with all channels in order, else channel-major.
    fn native_stored_order(&self) -> MemoryOrder {
        match &self.channels {
            None => self.parent.native_stored_order(),
            Some(_) => MemoryOrder::ChannelMajor,
        }
    }

    /// The parent's chunk length, where this view's sample 0 is aligned to it.
    fn chunk_samples(&self) -> Option<u64> {
        self.parent
            .chunk_samples()
            .filter(|&c| c > 0 && self.offset.is_multiple_of(c))
    }
}

#[cfg(test)]
#[path = "tests/sliced.rs"]
mod tests;
