//! The `.cbin` reader: chunks a read needs inflated in parallel on the host, kept in a cache
//! whose size the caller sets, and served in time-major or channel-major order.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dspk_types::{
    DspError, DspResult, MemoryOrder, RecordingInfo, RecordingSource, check_native_range,
    check_read, check_read_stored,
};

use super::cache::Chunks;
use super::header::CbinHeader;
use super::layout::CbinLayout;
use crate::mapped::MappedFile;
use crate::raw::file_error;

/// Decoded chunks kept at least, by default: a window that straddles chunk boundaries and a
/// read-ahead batch on a few cores. The default is `2 × decode threads + 2` (at least this),
/// within [`DEFAULT_CACHE_BYTES`].
pub const DEFAULT_CACHE_CHUNKS: usize = 8;

/// The most bytes of decoded chunks the default cache holds (1 GiB: 46 one-second chunks of
/// 385 channels).
pub const DEFAULT_CACHE_BYTES: u64 = 1 << 30;

/// An mtscomp `.cbin` + `.ch` (with the SpikeGLX `.meta` beside it, when there is one),
/// decoded on the host.
///
/// Channels, gains, geometry and the start time come from the `.meta` as for a SpikeGLX
/// `.bin` (the `.ch` must agree with it on the channel count and size); without a `.meta`,
/// channels are `ch0…` of gain 1 at the `.ch`'s rate. A read decodes only the chunks it
/// overlaps that are not cached, in parallel on up to [`CbinRecording::decode_threads`]
/// threads; threads reading parts of one window at once inflate each chunk once. A read that
/// continues the previous one starts background decodes of the chunks after it (as many as
/// threads, within the cache), so a sequential pass keeps every core busy. Results do not
/// depend on threads or cache size.
#[derive(Debug)]
pub struct CbinRecording {
    chunks: Arc<Chunks>,
    info: RecordingInfo,
    meta_path: Option<PathBuf>,
    warnings: Vec<String>,
    gains: Vec<f32>,
    offsets: Vec<f32>,
    threads: usize,
}

impl CbinRecording {
    /// Opens `path` (the `.cbin` or its `.ch`). Errors name the file: a missing or malformed
    /// `.ch`, a `.cbin` whose size is not the last chunk offset, a `.ch` whose channel count or
    /// size disagrees with the `.meta`.
    pub fn open(path: impl AsRef<Path>) -> DspResult<Self> {
        let layout = CbinLayout::read(path.as_ref())?;
        let map = MappedFile::open(&layout.cbin)?;
        let gains = layout.info.channels.iter().map(|c| c.gain).collect();
        let offsets = layout.info.channels.iter().map(|c| c.offset).collect();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let h = &layout.header;
        let largest = (0..h.chunk_count())
            .map(|i| {
                let r = h.chunk_samples(i);
                (r.end - r.start) * h.n_channels as u64 * 2
            })
            .max()
            .unwrap_or(1)
            .max(1);
        let fits = usize::try_from(DEFAULT_CACHE_BYTES / largest).unwrap_or(usize::MAX);
        let capacity = (2 * threads + 2).min(fits).max(DEFAULT_CACHE_CHUNKS);
        Ok(Self {
            chunks: Arc::new(Chunks::new(layout.header, layout.cbin, map, capacity)),
            info: layout.info,
            meta_path: layout.meta_path,
            warnings: layout.warnings,
            gains,
            offsets,
            threads,
        })
    }

    /// The `.cbin` file.
    pub fn path(&self) -> &Path {
        &self.chunks.cbin
    }

    /// The `.ch` header.
    pub fn header(&self) -> &CbinHeader {
        &self.chunks.header
    }

    /// The SpikeGLX `.meta` read, where there was one.
    pub fn meta_path(&self) -> Option<&PathBuf> {
        self.meta_path.as_ref()
    }

    /// Problems that did not stop the file from opening.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The most threads that inflate chunks at once (default: the available parallelism).
    pub fn decode_threads(&self) -> usize {
        self.threads
    }

    /// Sets the most threads that inflate chunks at once (0 counts as 1).
    pub fn set_decode_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// Decoded chunks kept between reads (see [`DEFAULT_CACHE_CHUNKS`]).
    pub fn cache_chunks(&self) -> usize {
        self.chunks.capacity()
    }

    /// Sets the decoded chunks kept between reads (0: none, and no read-ahead; each read
    /// decodes what it needs).
    pub fn set_cache_chunks(&mut self, chunks: usize) {
        self.chunks.set_capacity(chunks);
    }

    /// Checks the `.ch`'s SHA-1s: of the whole `.cbin`, and of the decoded data (time-major
    /// int16, little-endian) by decoding every chunk. A mismatch names the file; a `.ch`
    /// without SHA-1s (as `mtschop` writes) is an error saying there is nothing to check.
    pub fn verify(&self) -> DspResult<()> {
        let h = self.header();
        if h.sha1_compressed.is_none() && h.sha1_uncompressed.is_none() {
            return Err(file_error(
                h.path(),
                "states no sha1_compressed or sha1_uncompressed: nothing to verify",
            ));
        }
        if let Some(want) = &h.sha1_compressed {
            let got = sha1_smol::Sha1::from(self.chunks.bytes())
                .digest()
                .to_string();
            if &got != want {
                return Err(file_error(
                    self.path(),
                    format!(
                        "SHA-1 of the file is {got} but {} states sha1_compressed {want}: the .cbin is corrupt",
                        h.path().display()
                    ),
                ));
            }
        }
        if let Some(want) = &h.sha1_uncompressed {
            let mut sha = sha1_smol::Sha1::new();
            let batch = self.threads.max(1);
            let mut buf = Vec::new();
            for first in (0..h.chunk_count()).step_by(batch) {
                let ids: Vec<usize> = (first..(first + batch).min(h.chunk_count())).collect();
                for c in self.chunks.decode_many(&ids, self.threads) {
                    let c = c?;
                    buf.clear();
                    buf.extend(c.iter().flat_map(|v| v.to_le_bytes()));
                    sha.update(&buf);
                }
            }
            let got = sha.digest().to_string();
            if &got != want {
                return Err(file_error(
                    self.path(),
                    format!(
                        "SHA-1 of the decoded data is {got} but {} states sha1_uncompressed {want}: a chunk decodes to other values than were compressed",
                        h.path().display()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Calls `f(chunk values, chunk's first sample, the part of samples in it)` for each chunk
    /// overlapping `samples`, in order.
    fn for_each_part(
        &self,
        samples: &Range<u64>,
        mut f: impl FnMut(&[i16], u64, Range<u64>),
    ) -> DspResult<()> {
        if samples.is_empty() {
            return Ok(());
        }
        let h = self.header();
        let first = h.chunk_of(samples.start);
        let last = h.chunk_of(samples.end - 1);
        for (i, c) in (first..=last).zip(self.chunks.get(first, last, self.threads)?) {
            let r = h.chunk_samples(i);
            let part = samples.start.max(r.start)..samples.end.min(r.end);
            f(&c, r.start, part);
        }
        Ok(())
    }
}

impl Drop for CbinRecording {
    /// Waits for the read-ahead threads, so that the file is not read once the recording is
    /// gone (a file may be rewritten once no reader has it open).
    fn drop(&mut self) {
        self.chunks.wait_idle();
    }
}

impl RecordingSource for CbinRecording {
    fn info(&self) -> &RecordingInfo {
        &self.info
    }

    fn read(&self, channels: &[usize], samples: Range<u64>, out: &mut [f32]) -> DspResult<()> {
        let n = check_read(self.info(), channels, &samples, out.len())?;
        let n_c = self.header().n_channels;
        self.for_each_part(&samples, |c, c0, part| {
            let dst0 = (part.start - samples.start) as usize;
            for (k, &ch) in channels.iter().enumerate() {
                let (g, o) = (self.gains[ch], self.offsets[ch]);
                let dst = &mut out[k * n + dst0..k * n + dst0 + (part.end - part.start) as usize];
                for (d, t) in dst.iter_mut().zip(part.clone()) {
                    *d = f32::from(c[(t - c0) as usize * n_c + ch]) * g + o;
                }
            }
        })
    }

    fn read_stored(
        &self,
        channels: &[usize],
        samples: Range<u64>,
        out: &mut [u8],
    ) -> DspResult<()> {
        let n = check_read_stored(self.info(), channels, &samples, out.len())?;
        let n_c = self.header().n_channels;
        self.for_each_part(&samples, |c, c0, part| {
            let dst0 = (part.start - samples.start) as usize;
            for (k, &ch) in channels.iter().enumerate() {
                for (j, t) in part.clone().enumerate() {
                    let at = 2 * (k * n + dst0 + j);
                    out[at..at + 2].copy_from_slice(&c[(t - c0) as usize * n_c + ch].to_le_bytes());
                }
            }
        })
    }

    fn read_native(&self, samples: Range<u64>, out: &mut [f32]) -> DspResult<MemoryOrder> {
        let n = check_native_range(self.info(), &samples)?;
        let n_c = self.header().n_channels;
        if out.len() != n * n_c {
            return Err(DspError::shape(
                "output of a native read",
                n * n_c,
                out.len(),
            ));
        }
        self.for_each_part(&samples, |c, c0, part| {
            let dst = (part.start - samples.start) as usize * n_c;
            let src = (part.start - c0) as usize * n_c;
            let len = (part.end - part.start) as usize * n_c;
            for (j, (d, &v)) in out[dst..dst + len]
                .iter_mut()
                .zip(&c[src..src + len])
                .enumerate()
            {
                let ch = j % n_c;
                *d = f32::from(v) * self.gains[ch] + self.offsets[ch];
            }
        })?;
        Ok(MemoryOrder::TimeMajor)
    }

    fn read_stored_native(&self, samples: Range<u64>, out: &mut [u8]) -> DspResult<MemoryOrder> {
        let n = check_native_range(self.info(), &samples)?;
        let n_c = self.header().n_channels;
        if out.len() != n * n_c * 2 {
            return Err(DspError::shape(
                "output bytes of a native stored read",
                n * n_c * 2,
                out.len(),
            ));
        }
        self.for_each_part(&samples, |c, c0, part| {
            let dst = (part.start - samples.start) as usize * n_c * 2;
            let src = (part.start - c0) as usize * n_c;
            let len = (part.end - part.start) as usize * n_c;
            for (d, v) in out[dst..dst + 2 * len]
                .chunks_exact_mut(2)
                .zip(&c[src..src + len])
            {
                d.copy_from_slice(&v.to_le_bytes());
            }
        })?;
        Ok(MemoryOrder::TimeMajor)
    }

    fn native_stored_order(&self) -> MemoryOrder {
        MemoryOrder::TimeMajor
    }

    fn chunk_samples(&self) -> Option<u64> {
        let r = self.header().chunk_samples(0);
        Some(r.end - r.start)
    }
}
