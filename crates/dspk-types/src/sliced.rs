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
    /// time-major file stays one run of frames per range: the fast path to a device); a channel
    /// subset of a time-major parent reads the parent's frames in pieces and keeps the view's
    /// channels of each (still time-major, so a subset such as a probe's
    /// signal channels without its sync word keeps the fast path); otherwise a channel-major
    /// read of every channel.
    fn read_stored_native(&self, samples: Range<u64>, out: &mut [u8]) -> DspResult<MemoryOrder> {
        match &self.channels {
            None => {
                check_native_range(&self.info, &samples)?;
                self.parent
                    .read_stored_native(self.parent_range(&samples), out)
            }
            Some(list) if self.parent.native_stored_order() == MemoryOrder::TimeMajor => {
                let n = check_native_range(&self.info, &samples)?;
                let needed = n * self.info.frame_bytes();
                let available = out.len();
                let out = out
                    .get_mut(..needed)
                    .ok_or_else(|| DspError::BufferUnderrun {
                        what: format!("frames of {}", self.info.name),
                        needed,
                        available,
                    })?;
                compact_frames(&*self.parent, list, self.parent_range(&samples), out)?;
                Ok(MemoryOrder::TimeMajor)
            }
            Some(_) => {
                let all: Vec<usize> = (0..self.info.channel_count()).collect();
                self.read_stored(&all, samples, out)?;
                Ok(MemoryOrder::ChannelMajor)
            }
        }
    }

    /// The parent's order where it is time-major or the view has all its channels in order,
    /// else channel-major.
    fn native_stored_order(&self) -> MemoryOrder {
        match (&self.channels, self.parent.native_stored_order()) {
            (None, order) | (Some(_), order @ MemoryOrder::TimeMajor) => order,
            (Some(_), MemoryOrder::ChannelMajor) => MemoryOrder::ChannelMajor,
        }
    }

    /// The parent's chunk length, where this view's sample 0 is aligned to it.
    fn chunk_samples(&self) -> Option<u64> {
        self.parent
            .chunk_samples()
            .filter(|&c| c > 0 && self.offset.is_multiple_of(c))
    }
}

/// Parent bytes one piece of [`compact_frames`] reads at most (whole frames, at least one).
const COMPACT_PIECE_BYTES: usize = 1 << 19;

/// Fills `out` with the time-major frames of `parent`'s `samples` (a time-major parent),
/// keeping only `channels` (parent indices, in this order) of each frame: the parent's frames
/// are read in pieces of about [`COMPACT_PIECE_BYTES`] (small enough to stay in a core's
/// cache), then each frame's kept samples are copied out, as one run where the channels are
/// consecutive parent channels.
fn compact_frames(
    parent: &dyn RecordingSource,
    channels: &[usize],
    samples: Range<u64>,
    out: &mut [u8],
) -> DspResult<()> {
    let pinfo = parent.info();
    let width = pinfo.format.bytes();
    let parent_frame = pinfo.frame_bytes();
    let frame = channels.len() * width;
    let run = channels.windows(2).all(|p| p[1] == p[0] + 1);
    let frames_per_piece = (COMPACT_PIECE_BYTES / parent_frame.max(1)).max(1);
    let total = (samples.end - samples.start) as usize;
    let mut piece = vec![0u8; frames_per_piece.min(total) * parent_frame];
    let mut start = samples.start;
    let mut done = 0usize;
    while start < samples.end {
        let count = (samples.end - start).min(frames_per_piece as u64) as usize;
        let read = &mut piece[..count * parent_frame];
        let order = parent.read_stored_native(start..start + count as u64, read)?;
        if order != MemoryOrder::TimeMajor {
            return Err(DspError::config(format!(
                "{} states time-major as its stored order but read {order}",
                pinfo.name
            )));
        }
        let dst = &mut out[done * frame..(done + count) * frame];
        for (src, dst) in read
            .chunks_exact(parent_frame)
            .zip(dst.chunks_exact_mut(frame))
        {
            if run {
                let first = channels[0] * width;
                dst.copy_from_slice(&src[first..first + frame]);
            } else {
                for (&c, d) in channels.iter().zip(dst.chunks_exact_mut(width)) {
                    d.copy_from_slice(&src[c * width..(c + 1) * width]);
                }
            }
        }
        start += count as u64;
        done += count;
    }
    Ok(())
}

#[cfg(test)]
#[path = "tests/sliced.rs"]
mod tests;
