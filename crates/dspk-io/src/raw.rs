//! Reads of raw sample data from a mapped file: the body shared by every on-disk format.

use std::ops::Range;
use std::path::Path;

use dspk_types::{
    DspError, DspResult, MemoryOrder, RecordingInfo, check_native_range, check_read,
    check_read_stored,
};

use crate::decode;
use crate::mapped::MappedFile;

/// The most channels a file may describe: a bound that keeps a corrupt or hostile description
/// (a channel count of 10¹⁵) an error instead of an attempt to allocate that many channels.
pub const MAX_CHANNELS: usize = 1 << 20;

/// The most threads a read uses by default (memory bandwidth, not cores, is what runs out).
pub const DEFAULT_MAX_READ_THREADS: usize = 4;
/// Values (channels × samples) a read must hold per thread before it is split: below this the
/// cost of starting a thread is not repaid.
const VALUES_PER_THREAD: usize = 1 << 19;
/// Channel splits are multiples of this, so that threads do not share the source's cache lines
/// (32 int16 values are 64 bytes) and each gets whole transpose tiles.
const CHANNEL_ALIGN: usize = 32;

/// The default read threads: the available parallelism, at most
/// [`DEFAULT_MAX_READ_THREADS`].
pub(crate) fn default_read_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(DEFAULT_MAX_READ_THREADS)
}

/// Raw samples in a mapped file: `info.samples` frames (time-major) or channel runs
/// (channel-major) of `info.format`, starting `data_offset` bytes into the file.
///
/// Built only through [`RawData::new`], which checks that the data lies inside the mapping, so
/// every read below indexes within it.
#[derive(Debug)]
pub(crate) struct RawData {
    map: MappedFile,
    data_offset: usize,
    info: RecordingInfo,
    gains: Vec<f32>,
    offsets: Vec<f32>,
    threads: usize,
}

impl RawData {
    /// Wraps a mapping whose bytes `data_offset..` hold `info.samples` samples of every channel.
    pub(crate) fn new(map: MappedFile, data_offset: u64, info: RecordingInfo) -> DspResult<Self> {
        let path = map.path().to_path_buf();
        let overflow = || DspError::Overflow(format!("size of the data in {}", path.display()));
        let frame = u64::try_from(info.frame_bytes()).map_err(|_| overflow())?;
        let needed = info
            .samples
            .checked_mul(frame)
            .and_then(|b| b.checked_add(data_offset))
            .ok_or_else(overflow)?;
        let have = map.bytes().len() as u64;
        if needed > have {
            return Err(file_error(
                &path,
                format!("file holds {have} bytes, but its description needs {needed}"),
            ));
        }
        let data_offset = usize::try_from(data_offset).map_err(|_| overflow())?;
        let gains = info.channels.iter().map(|c| c.gain).collect();
        let offsets = info.channels.iter().map(|c| c.offset).collect();
        Ok(Self {
            map,
            data_offset,
            info,
            gains,
            offsets,
            threads: default_read_threads(),
        })
    }

    pub(crate) fn info(&self) -> &RecordingInfo {
        &self.info
    }

    pub(crate) fn path(&self) -> &Path {
        self.map.path()
    }

    /// The most threads one large read is split across.
    pub(crate) fn read_threads(&self) -> usize {
        self.threads
    }

    /// Sets the most threads one large read is split across (0 counts as 1).
    pub(crate) fn set_read_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// Threads for a read of `values` values.
    fn threads_for(&self, values: usize) -> usize {
        self.threads.min(values / VALUES_PER_THREAD).max(1)
    }

    fn data(&self) -> &[u8] {
        &self.map.bytes()[self.data_offset..]
    }

    /// The bytes of frames `samples` (time-major only).
    fn frames(&self, samples: &Range<u64>) -> &[u8] {
        let frame = self.info.frame_bytes();
        // In range: `new` checked that every frame lies inside the mapping, `check_read*`
        // that `samples` lies inside the recording.
        &self.data()[samples.start as usize * frame..samples.end as usize * frame]
    }

    /// The bytes of `channel` over `samples` (channel-major only).
    fn run(&self, channel: usize, samples: &Range<u64>) -> &[u8] {
        let b = self.info.format.bytes();
        let base = channel * self.info.samples as usize;
        &self.data()[(base + samples.start as usize) * b..(base + samples.end as usize) * b]
    }

    pub(crate) fn read(
        &self,
        channels: &[usize],
        samples: Range<u64>,
        out: &mut [f32],
    ) -> DspResult<()> {
        let n = check_read(&self.info, channels, &samples, out.len())?;
        if n == 0 || channels.is_empty() {
            return Ok(());
        }
        let threads = self.threads_for(out.len());
        match self.info.order {
            MemoryOrder::TimeMajor => {
                let src = self.frames(&samples);
                split_channels(threads, channels, n, out, |chs, dst| {
                    decode::decode_transpose(
                        self.info.format,
                        src,
                        self.info.channel_count(),
                        chs,
                        &self.gains,
                        &self.offsets,
                        n,
                        dst,
                    );
                });
            }
            MemoryOrder::ChannelMajor => split_channels(threads, channels, n, out, |chs, dst| {
                for (d, &c) in dst.chunks_exact_mut(n).zip(chs) {
                    decode::decode_run(
                        self.info.format,
                        self.run(c, &samples),
                        self.gains[c],
                        self.offsets[c],
                        d,
                    );
                }
            }),
        }
        Ok(())
    }

    pub(crate) fn read_stored(
        &self,
        channels: &[usize],
        samples: Range<u64>,
        out: &mut [u8],
    ) -> DspResult<()> {
        let n = check_read_stored(&self.info, channels, &samples, out.len())?;
        if n == 0 || channels.is_empty() {
            return Ok(());
        }
        let b = self.info.format.bytes();
        let threads = self.threads_for(channels.len() * n);
        match self.info.order {
            MemoryOrder::TimeMajor => {
                let src = self.frames(&samples);
                split_channels(threads, channels, n * b, out, |chs, dst| {
                    decode::transpose_bytes(b, src, n, self.info.channel_count(), chs, dst);
                });
            }
            MemoryOrder::ChannelMajor => {
                split_channels(threads, channels, n * b, out, |chs, dst| {
                    for (d, &c) in dst.chunks_exact_mut(n * b).zip(chs) {
                        d.copy_from_slice(self.run(c, &samples));
                    }
                })
            }
        }
        Ok(())
    }

    /// Every channel's stored bytes over `samples`, as they lie in the file: one copy out of the
    /// mapping (a time-major range is one run of frames).
    pub(crate) fn read_stored_native(
        &self,
        samples: Range<u64>,
        out: &mut [u8],
    ) -> DspResult<MemoryOrder> {
        let c = self.info.channel_count();
        let all: Vec<usize> = (0..c).collect();
        let n = check_read_stored(&self.info, &all, &samples, out.len())?;
        if n == 0 {
            return Ok(self.info.order);
        }
        match self.info.order {
            MemoryOrder::TimeMajor => out.copy_from_slice(self.frames(&samples)),
            MemoryOrder::ChannelMajor => {
                let b = self.info.format.bytes();
                for (d, ch) in out.chunks_exact_mut(n * b).zip(0..c) {
                    d.copy_from_slice(self.run(ch, &samples));
                }
            }
        }
        Ok(self.info.order)
    }

    pub(crate) fn read_native(
        &self,
        samples: Range<u64>,
        out: &mut [f32],
    ) -> DspResult<MemoryOrder> {
        let c = self.info.channel_count();
        let n = check_native_range(&self.info, &samples)?;
        let expected = n
            .checked_mul(c)
            .ok_or_else(|| DspError::Overflow(format!("read of {c} channels × {n} samples")))?;
        if out.len() != expected {
            return Err(DspError::shape(
                format!("output of a native read of {c} channels × {n} samples"),
                expected,
                out.len(),
            ));
        }
        if n == 0 {
            return Ok(self.info.order);
        }
        let threads = self.threads_for(out.len());
        let format = self.info.format;
        match self.info.order {
            MemoryOrder::TimeMajor => {
                // Split by frames: each thread decodes a contiguous run of them.
                let src = self.frames(&samples);
                let per = n.div_ceil(threads);
                let parts = out
                    .chunks_mut(per * c)
                    .zip(src.chunks(per * self.info.frame_bytes()));
                run_parts(threads, parts, |(dst, s)| {
                    decode::decode_frames(format, s, &self.gains, &self.offsets, dst);
                });
            }
            MemoryOrder::ChannelMajor => {
                // Split by channels: each thread decodes whole channel runs.
                let per = c.div_ceil(threads);
                run_parts(threads, out.chunks_mut(per * n).enumerate(), |(i, dst)| {
                    for (k, d) in dst.chunks_exact_mut(n).enumerate() {
                        let ch = i * per + k;
                        decode::decode_run(
                            format,
                            self.run(ch, &samples),
                            self.gains[ch],
                            self.offsets[ch],
                            d,
                        );
                    }
                });
            }
        }
        Ok(self.info.order)
    }
}

/// Splits `channels` (and `out`, `row` elements per channel) into up to `threads` parts of
/// whole [`CHANNEL_ALIGN`] blocks and runs `f` on each (see [`run_parts`]).
fn split_channels<T: Send>(
    threads: usize,
    channels: &[usize],
    row: usize,
    out: &mut [T],
    f: impl Fn(&[usize], &mut [T]) + Sync,
) {
    let per = channels
        .len()
        .div_ceil(threads)
        .next_multiple_of(CHANNEL_ALIGN);
    if threads <= 1 || per >= channels.len() {
        f(channels, out);
        return;
    }
    run_parts(
        threads,
        channels.chunks(per).zip(out.chunks_mut(per * row)),
        |(chs, dst)| f(chs, dst),
    );
}

/// Runs `f` on every part: all on this thread when `threads` is 1, else the first here and the
/// others on scoped threads (joined before returning; a panic in one resumes here).
fn run_parts<P: Send>(threads: usize, parts: impl Iterator<Item = P>, f: impl Fn(P) + Sync) {
    if threads <= 1 {
        parts.for_each(f);
        return;
    }
    let f = &f;
    std::thread::scope(|scope| {
        let mut parts = parts;
        let first = parts.next();
        for part in parts {
            scope.spawn(move || f(part));
        }
        if let Some(part) = first {
            f(part);
        }
    });
}

/// An error about the content of `path` (a bad or inconsistent file).
pub(crate) fn file_error(path: &Path, message: impl Into<String>) -> DspError {
    DspError::Io {
        message: message.into(),
        path: Some(path.to_path_buf()),
    }
}
