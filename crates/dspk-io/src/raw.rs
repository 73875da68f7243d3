//! Reads of raw sample data from a mapped file: the body shared by every on-disk format.

use std::ops::Range;
use std::path::Path;

use dspk_types::{
    DspError, DspResult, MemoryOrder, RecordingInfo, check_read, check_read_stored,
    check_sample_range,
};

use crate::decode;
use crate::mapped::MappedFile;

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
        })
    }

    pub(crate) fn info(&self) -> &RecordingInfo {
        &self.info
    }

    pub(crate) fn path(&self) -> &Path {
        self.map.path()
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
        match self.info.order {
            MemoryOrder::TimeMajor => decode::decode_transpose(
                self.info.format,
                self.frames(&samples),
                self.info.channel_count(),
                channels,
                &self.gains,
                &self.offsets,
                n,
                out,
            ),
            MemoryOrder::ChannelMajor => {
                for (dst, &c) in out.chunks_exact_mut(n).zip(channels) {
                    decode::decode_run(
                        self.info.format,
                        self.run(c, &samples),
                        self.gains[c],
                        self.offsets[c],
                        dst,
                    );
                }
            }
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
        match self.info.order {
            MemoryOrder::TimeMajor => decode::transpose_bytes(
                b,
                self.frames(&samples),
                n,
                self.info.channel_count(),
                channels,
                out,
            ),
            MemoryOrder::ChannelMajor => {
                for (dst, &c) in out.chunks_exact_mut(n * b).zip(channels) {
                    dst.copy_from_slice(self.run(c, &samples));
                }
            }
        }
        Ok(())
    }

    pub(crate) fn read_native(
        &self,
        samples: Range<u64>,
        out: &mut [f32],
    ) -> DspResult<MemoryOrder> {
        let c = self.info.channel_count();
        let n = check_sample_range(&samples, self.info.samples)?;
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
        match self.info.order {
            MemoryOrder::TimeMajor => {
                if n > 0 {
                    decode::decode_frames(
                        self.info.format,
                        self.frames(&samples),
                        &self.gains,
                        &self.offsets,
                        out,
                    );
                }
                Ok(MemoryOrder::TimeMajor)
            }
            MemoryOrder::ChannelMajor => {
                if n > 0 {
                    for (ch, dst) in out.chunks_exact_mut(n).enumerate() {
                        decode::decode_run(
                            self.info.format,
                            self.run(ch, &samples),
                            self.gains[ch],
                            self.offsets[ch],
                            dst,
                        );
                    }
                }
                Ok(MemoryOrder::ChannelMajor)
            }
        }
    }
}

/// An error about the content of `path` (a bad or inconsistent file).
pub(crate) fn file_error(path: &Path, message: impl Into<String>) -> DspError {
    DspError::Io {
        message: message.into(),
        path: Some(path.to_path_buf()),
    }
}
