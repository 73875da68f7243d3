//! The read contract every recording implements, and the checks every implementation shares.

use std::ops::Range;

use crate::{DspError, DspResult, MemoryOrder, RecordingInfo, SampleFormat};

/// A recording that can be read in pieces: a file, memory, a view of another recording, or
/// computed data. Object safe; used as `&dyn RecordingSource` and `Arc<dyn RecordingSource>`.
///
/// Every method reads into the caller's buffer: no allocation per call on the fast paths, so a
/// loop over windows reuses its buffers. Implementations call [`check_read`] /
/// [`check_read_stored`] first, so bad input is refused the same way everywhere and nothing is
/// written beyond `out`.
pub trait RecordingSource: Send + Sync {
    /// The recording's description.
    fn info(&self) -> &RecordingInfo;

    /// Scaled values (`stored * gain + offset`) of `channels` over `samples`, **channel-major**:
    /// `out[i * n..(i + 1) * n]` holds `channels[i]`, where `n = samples.end - samples.start`.
    /// Any subset of channels, in any order, repeats allowed.
    fn read(&self, channels: &[usize], samples: Range<u64>, out: &mut [f32]) -> DspResult<()>;

    /// The raw stored values of `channels` over `samples`, channel-major, little-endian, before
    /// gain and offset: `info().format.bytes()` bytes per value.
    ///
    /// The default serves `float32` sources whose selected channels have gain 1 and offset 0
    /// (their stored values are their scaled values) and refuses any other clearly.
    fn read_stored(
        &self,
        channels: &[usize],
        samples: Range<u64>,
        out: &mut [u8],
    ) -> DspResult<()> {
        let n = check_read_stored(self.info(), channels, &samples, out.len())?;
        let info = self.info();
        let identity = channels
            .iter()
            .all(|&c| info.channels[c].gain == 1.0 && info.channels[c].offset == 0.0);
        if info.format != SampleFormat::F32 || !identity {
            return Err(DspError::UnsupportedFormat(format!(
                "{} cannot serve its stored values: it holds scaled {} data",
                info.name, info.format
            )));
        }
        let mut values = vec![0f32; channels.len() * n];
        self.read(channels, samples, &mut values)?;
        for (dst, v) in out.chunks_exact_mut(4).zip(&values) {
            dst.copy_from_slice(&v.to_le_bytes());
        }
        Ok(())
    }

    /// Scaled values of every channel over `samples`, in the source's own order (the fast path
    /// for whole-recording passes); returns that order. The default reads channel-major.
    fn read_native(&self, samples: Range<u64>, out: &mut [f32]) -> DspResult<MemoryOrder> {
        let all: Vec<usize> = (0..self.info().channel_count()).collect();
        self.read(&all, samples, out)?;
        Ok(MemoryOrder::ChannelMajor)
    }

    /// The raw stored values of every channel over `samples`, little-endian, in the source's
    /// own order ([`RecordingSource::native_stored_order`]): the fast path for moving a whole
    /// recording to a device, where the decode kernel transposes. A time-major source serves any
    /// sample range as one contiguous run of frames, so a range can be split among threads.
    /// The default reads channel-major through [`RecordingSource::read_stored`].
    fn read_stored_native(&self, samples: Range<u64>, out: &mut [u8]) -> DspResult<MemoryOrder> {
        let all: Vec<usize> = (0..self.info().channel_count()).collect();
        self.read_stored(&all, samples, out)?;
        Ok(MemoryOrder::ChannelMajor)
    }

    /// The order [`RecordingSource::read_stored_native`] writes in.
    fn native_stored_order(&self) -> MemoryOrder {
        MemoryOrder::ChannelMajor
    }

    /// The length of the source's storage chunks in samples, where the format has them (reads
    /// aligned to it are cheapest).
    fn chunk_samples(&self) -> Option<u64> {
        None
    }
}

/// Checks a [`RecordingSource::read`]: every channel exists, `samples` is inside the recording,
/// not reversed and inside one segment, and `out_len` is exactly `channels.len()` × the sample
/// count. Returns the sample count.
pub fn check_read(
    info: &RecordingInfo,
    channels: &[usize],
    samples: &Range<u64>,
    out_len: usize,
) -> DspResult<usize> {
    let n = check_range_and_channels(info, channels, samples)?;
    let expected = n.checked_mul(channels.len()).ok_or_else(|| {
        DspError::Overflow(format!("read of {} channels × {n} samples", channels.len()))
    })?;
    if out_len != expected {
        return Err(DspError::shape(
            format!(
                "output of a read of {} channels × {n} samples",
                channels.len()
            ),
            expected,
            out_len,
        ));
    }
    Ok(n)
}

/// Checks a [`RecordingSource::read_stored`] like [`check_read`], with `out_len` in bytes.
/// Returns the sample count.
pub fn check_read_stored(
    info: &RecordingInfo,
    channels: &[usize],
    samples: &Range<u64>,
    out_len: usize,
) -> DspResult<usize> {
    let n = check_range_and_channels(info, channels, samples)?;
    let expected = n
        .checked_mul(channels.len())
        .and_then(|v| v.checked_mul(info.format.bytes()))
        .ok_or_else(|| {
            DspError::Overflow(format!("read of {} channels × {n} samples", channels.len()))
        })?;
    if out_len != expected {
        return Err(DspError::shape(
            format!(
                "byte output of a read of {} channels × {n} {} samples",
                channels.len(),
                info.format
            ),
            expected,
            out_len,
        ));
    }
    Ok(n)
}

/// Checks a sample range alone: not reversed, inside `0..total`. Returns its length.
pub fn check_sample_range(samples: &Range<u64>, total: u64) -> DspResult<usize> {
    if samples.start > samples.end || samples.end > total {
        return Err(DspError::SampleRange {
            start: samples.start,
            end: samples.end,
            total,
        });
    }
    usize::try_from(samples.end - samples.start).map_err(|_| {
        DspError::Overflow(format!(
            "range {}..{} on this platform",
            samples.start, samples.end
        ))
    })
}

/// Checks a sample range of a whole-recording read (`read_native`, `read_stored_native`): not
/// reversed, inside the recording and inside one segment. Returns its length.
pub fn check_native_range(info: &RecordingInfo, samples: &Range<u64>) -> DspResult<usize> {
    let n = check_sample_range(samples, info.samples)?;
    if let Some(segments) = &info.segments {
        segments.check_within(samples)?;
    }
    Ok(n)
}

fn check_range_and_channels(
    info: &RecordingInfo,
    channels: &[usize],
    samples: &Range<u64>,
) -> DspResult<usize> {
    let count = info.channel_count();
    if let Some(&bad) = channels.iter().find(|&&c| c >= count) {
        return Err(DspError::InvalidChannel { index: bad, count });
    }
    check_native_range(info, samples)
}
