//! A recording held in memory: channel-major `f32` stored values with a description.

use std::ops::Range;

use crate::{
    DspError, DspResult, MemoryOrder, RecordingInfo, RecordingSource, SampleFormat, SampleRate,
    check_native_range, check_read, check_read_stored,
};

/// A recording held in memory as channel-major `f32` **stored** values.
///
/// The data are what the recording stores: [`RecordingSource::read_stored`] returns them as
/// little-endian `float32` bytes, and [`RecordingSource::read`] returns `stored * gain + offset`
/// with each channel's gain and offset, computed like [`SampleFormat::decode`] (one `f32`
/// multiply, one `f32` add), so a decoded `read_stored` equals `read` bit for bit. With the
/// default gain 1 and offset 0 the two are the same values.
///
/// ```
/// use dspk_types::{MemoryRecording, RecordingSource, SampleRate};
///
/// let rate = SampleRate::new(1000.0).unwrap();
/// let rec = MemoryRecording::from_channels("demo", rate, vec![vec![1.0, 2.0, 3.0], vec![4.0, 5.0, 6.0]]).unwrap();
/// let mut out = [0f32; 4];
/// rec.read(&[1, 0], 1..3, &mut out).unwrap();
/// assert_eq!(out, [5.0, 6.0, 2.0, 3.0]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryRecording {
    info: RecordingInfo,
    data: Vec<f32>,
    /// Samples per channel as a `usize` (checked at construction).
    len: usize,
}

impl MemoryRecording {
    /// A recording described by `info` holding `data`: channel-major stored values, channel `c`
    /// at `data[c * samples..(c + 1) * samples]`.
    ///
    /// Refused: `info.format` other than `float32` or `info.order` other than channel-major
    /// ([`DspError::UnsupportedFormat`], [`DspError::InvalidConfig`]), and `data` whose length
    /// is not `channels × samples` ([`DspError::ShapeMismatch`]).
    pub fn new(info: RecordingInfo, data: Vec<f32>) -> DspResult<Self> {
        if info.format != SampleFormat::F32 {
            return Err(DspError::UnsupportedFormat(format!(
                "a memory recording holds float32 values, not {} ({})",
                info.format, info.name
            )));
        }
        if info.order != MemoryOrder::ChannelMajor {
            return Err(DspError::config(format!(
                "a memory recording is channel-major, but the description of {} says {}",
                info.name, info.order
            )));
        }
        let len = usize::try_from(info.samples)
            .map_err(|_| DspError::Overflow(format!("{} samples in memory", info.samples)))?;
        let expected = len.checked_mul(info.channel_count()).ok_or_else(|| {
            DspError::Overflow(format!(
                "{} channels × {len} samples in memory",
                info.channel_count()
            ))
        })?;
        if data.len() != expected {
            return Err(DspError::shape(
                format!(
                    "data of {} ({} channels × {len} samples)",
                    info.name,
                    info.channel_count()
                ),
                expected,
                data.len(),
            ));
        }
        Ok(Self { info, data, len })
    }

    /// A recording of one vector per channel (all the same length), named `ch0…`, gain 1,
    /// offset 0, starting at time 0. Channels of different lengths are a
    /// [`DspError::ShapeMismatch`] naming the first that differs.
    pub fn from_channels(
        name: impl Into<String>,
        rate: SampleRate,
        channels: Vec<Vec<f32>>,
    ) -> DspResult<Self> {
        let name = name.into();
        let len = channels.first().map_or(0, Vec::len);
        if let Some((c, ch)) = channels.iter().enumerate().find(|(_, ch)| ch.len() != len) {
            return Err(DspError::shape(
                format!("channel {c} of {name} (channel 0 has {len} samples)"),
                len,
                ch.len(),
            ));
        }
        let info = RecordingInfo::new(
            name,
            channels.len(),
            len as u64,
            rate,
            SampleFormat::F32,
            MemoryOrder::ChannelMajor,
        );
        Self::new(info, channels.concat())
    }

    /// All stored values, channel-major.
    pub fn data(&self) -> &[f32] {
        &self.data
    }

    /// The stored values of one channel, or [`DspError::InvalidChannel`].
    pub fn channel(&self, channel: usize) -> DspResult<&[f32]> {
        if channel >= self.info.channel_count() {
            return Err(DspError::InvalidChannel {
                index: channel,
                count: self.info.channel_count(),
            });
        }
        Ok(&self.data[channel * self.len..(channel + 1) * self.len])
    }

    /// The description and the data back.
    pub fn into_parts(self) -> (RecordingInfo, Vec<f32>) {
        (self.info, self.data)
    }

    /// The stored values of `channel` over `samples` (both already checked).
    fn stored(&self, channel: usize, samples: &Range<u64>) -> &[f32] {
        let base = channel * self.len;
        &self.data[base + samples.start as usize..base + samples.end as usize]
    }
}

impl RecordingSource for MemoryRecording {
    fn info(&self) -> &RecordingInfo {
        &self.info
    }

    fn read(&self, channels: &[usize], samples: Range<u64>, out: &mut [f32]) -> DspResult<()> {
        let n = check_read(&self.info, channels, &samples, out.len())?;
        if n == 0 {
            return Ok(());
        }
        for (&c, dst) in channels.iter().zip(out.chunks_exact_mut(n)) {
            let ch = &self.info.channels[c];
            let (gain, offset) = (ch.gain, ch.offset);
            for (o, &s) in dst.iter_mut().zip(self.stored(c, &samples)) {
                *o = s * gain + offset;
            }
        }
        Ok(())
    }

    fn read_stored(
        &self,
        channels: &[usize],
        samples: Range<u64>,
        out: &mut [u8],
    ) -> DspResult<()> {
        let n = check_read_stored(&self.info, channels, &samples, out.len())?;
        if n == 0 {
            return Ok(());
        }
        for (&c, dst) in channels.iter().zip(out.chunks_exact_mut(4 * n)) {
            for (o, s) in dst.chunks_exact_mut(4).zip(self.stored(c, &samples)) {
                o.copy_from_slice(&s.to_le_bytes());
            }
        }
        Ok(())
    }

    fn read_native(&self, samples: Range<u64>, out: &mut [f32]) -> DspResult<MemoryOrder> {
        let n = check_read_native(&self.info, &samples, out.len())?;
        if n == 0 {
            return Ok(MemoryOrder::ChannelMajor);
        }
        for (c, dst) in out.chunks_exact_mut(n).enumerate() {
            let ch = &self.info.channels[c];
            let (gain, offset) = (ch.gain, ch.offset);
            for (o, &s) in dst.iter_mut().zip(self.stored(c, &samples)) {
                *o = s * gain + offset;
            }
        }
        Ok(MemoryOrder::ChannelMajor)
    }
}

/// Checks a [`RecordingSource::read_native`] like [`check_read`] with every channel, without
/// building the channel list. Returns the sample count.
pub(crate) fn check_read_native(
    info: &RecordingInfo,
    samples: &Range<u64>,
    out_len: usize,
) -> DspResult<usize> {
    let n = check_native_range(info, samples)?;
    let count = info.channel_count();
    let expected = n
        .checked_mul(count)
        .ok_or_else(|| DspError::Overflow(format!("read of {count} channels × {n} samples")))?;
    if out_len != expected {
        return Err(DspError::shape(
            format!("output of a read of {count} channels × {n} samples"),
            expected,
            out_len,
        ));
    }
    Ok(n)
}

#[cfg(test)]
#[path = "tests/memory.rs"]
mod tests;
