//! The `.cbin` reader: chunks a read needs inflated in parallel on the host, kept in a cache
//! whose size the caller sets, and served in time-major or channel-major order.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use dspk_types::{
    DspError, DspResult, MemoryOrder, RecordingInfo, RecordingSource, check_native_range,
    check_read, check_read_stored,
};

use super::chunk::decode_chunk;
use super::header::CbinHeader;
use super::layout::CbinLayout;
use crate::mapped::MappedFile;
use crate::raw::file_error;

/// Decoded chunks kept by default: enough for a window that straddles chunk boundaries and a
/// read-ahead batch on a few cores.
pub const DEFAULT_CACHE_CHUNKS: usize = 8;

type Chunk = Arc<Vec<i16>>;

/// The most recently used decoded chunks, at most `capacity` (linear scan: a few dozen at most).
#[derive(Debug, Default)]
struct ChunkCache {
    capacity: usize,
    /// Least recently used first.
    entries: Vec<(usize, Chunk)>,
    /// The chunk after the last one read: a read starting there is sequential.
    next: usize,
}

impl ChunkCache {
    fn get(&mut self, i: usize) -> Option<Chunk> {
        let k = self.entries.iter().position(|(j, _)| *j == i)?;
        let e = self.entries.remove(k);
        let c = e.1.clone();
        self.entries.push(e);
        Some(c)
    }

    fn put(&mut self, i: usize, c: Chunk) {
        if self.capacity == 0 || self.entries.iter().any(|(j, _)| *j == i) {
            return;
        }
        if self.entries.len() == self.capacity {
            self.entries.remove(0);
        }
        self.entries.push((i, c));
    }
}

/// An mtscomp `.cbin` + `.ch` (with the SpikeGLX `.meta` beside it, when there is one),
/// decoded on the host.
///
/// Channels, gains, geometry and the start time come from the `.meta` as for a SpikeGLX
/// `.bin` (the `.ch` must agree with it on the channel count and size); without a `.meta`,
/// channels are `ch0…` of gain 1 at the `.ch`'s rate. A read decodes only the chunks it
/// overlaps; chunks missing from the cache are inflated in parallel on up to
/// [`CbinRecording::decode_threads`] threads, and a read that follows the previous one also
/// decodes the chunks after it (as many as threads, within the cache), so a sequential pass
/// keeps every core busy. Results do not depend on threads or cache size.
#[derive(Debug)]
pub struct CbinRecording {
    layout: CbinLayout,
    map: MappedFile,
    gains: Vec<f32>,
    offsets: Vec<f32>,
    threads: usize,
    cache: Mutex<ChunkCache>,
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
        Ok(Self {
            layout,
            map,
            gains,
            offsets,
            threads,
            cache: Mutex::new(ChunkCache {
                capacity: DEFAULT_CACHE_CHUNKS,
                ..ChunkCache::default()
            }),
        })
    }

    /// The `.cbin` file.
    pub fn path(&self) -> &Path {
        &self.layout.cbin
    }

    /// The `.ch` header.
    pub fn header(&self) -> &CbinHeader {
        &self.layout.header
    }

    /// The SpikeGLX `.meta` read, where there was one.
    pub fn meta_path(&self) -> Option<&PathBuf> {
        self.layout.meta_path.as_ref()
    }

    /// Problems that did not stop the file from opening.
    pub fn warnings(&self) -> &[String] {
        &self.layout.warnings
    }

    /// The most threads that inflate chunks at once (default: the available parallelism).
    pub fn decode_threads(&self) -> usize {
        self.threads
    }

    /// Sets the most threads that inflate chunks at once (0 counts as 1).
    pub fn set_decode_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// Decoded chunks kept between reads (default [`DEFAULT_CACHE_CHUNKS`]).
    pub fn cache_chunks(&self) -> usize {
        self.cache.lock().map_or(0, |c| c.capacity)
    }

    /// Sets the decoded chunks kept between reads (0: none; each read decodes what it needs).
    pub fn set_cache_chunks(&mut self, chunks: usize) {
        let c = self.cache.get_mut().unwrap_or_else(|p| p.into_inner());
        c.capacity = chunks;
        let drop = c.entries.len().saturating_sub(chunks);
        c.entries.drain(..drop);
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
            let got = sha1_smol::Sha1::from(self.map.bytes()).digest().to_string();
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
                for c in self.decode_many(&ids)? {
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

    /// Chunks `ids` decoded, in parallel, without the cache.
    fn decode_many(&self, ids: &[usize]) -> DspResult<Vec<Chunk>> {
        let h = &self.layout.header;
        let data = self.map.bytes();
        let path = self.path();
        let mut slots: Vec<Option<DspResult<Chunk>>> = (0..ids.len()).map(|_| None).collect();
        let threads = self.threads.min(ids.len()).max(1);
        if threads == 1 {
            for (slot, &i) in slots.iter_mut().zip(ids) {
                let mut v = Vec::new();
                *slot = Some(decode_chunk(h, path, data, i, &mut v).map(|()| Arc::new(v)));
            }
        } else {
            let next = AtomicUsize::new(0);
            let results = Mutex::new(&mut slots);
            std::thread::scope(|s| {
                for _ in 0..threads {
                    s.spawn(|| {
                        loop {
                            let k = next.fetch_add(1, Ordering::Relaxed);
                            let Some(&i) = ids.get(k) else { break };
                            let mut v = Vec::new();
                            let r = decode_chunk(h, path, data, i, &mut v).map(|()| Arc::new(v));
                            let mut g = results.lock().unwrap_or_else(|p| p.into_inner());
                            g[k] = Some(r);
                        }
                    });
                }
            });
        }
        slots
            .into_iter()
            .map(|s| s.expect("every slot is filled by a worker"))
            .collect()
    }

    /// The chunks overlapping `samples` (non-empty, inside the recording), from the cache or
    /// decoded; a sequential read also decodes the chunks after them into the cache.
    fn chunks(&self, samples: &Range<u64>) -> DspResult<Vec<(usize, Chunk)>> {
        let h = &self.layout.header;
        let first = h.chunk_of(samples.start);
        let last = h.chunk_of(samples.end - 1);
        let mut have: Vec<(usize, Option<Chunk>)> = Vec::new();
        let mut missing = Vec::new();
        let ahead;
        {
            let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            for i in first..=last {
                let c = cache.get(i);
                if c.is_none() {
                    missing.push(i);
                }
                have.push((i, c));
            }
            let sequential = first == cache.next || first + 1 == cache.next;
            cache.next = last + 1;
            // Read ahead while one batch of threads and the chunks of this read fit the cache.
            let room = cache.capacity.saturating_sub(last + 1 - first);
            ahead = if sequential && !missing.is_empty() {
                (last + 1..h.chunk_count())
                    .filter(|i| !cache.entries.iter().any(|(j, _)| j == i))
                    .take(room.min(self.threads.saturating_sub(missing.len())))
                    .collect::<Vec<_>>()
            } else {
                Vec::new()
            };
        }
        if missing.is_empty() {
            return Ok(have
                .into_iter()
                .map(|(i, c)| (i, c.expect("all cached")))
                .collect());
        }
        let mut ids = missing.clone();
        ids.extend(&ahead);
        let decoded = self.decode_many(&ids)?;
        {
            let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            for (&i, c) in ids.iter().zip(&decoded) {
                cache.put(i, c.clone());
            }
        }
        let mut fresh = missing.iter().zip(decoded);
        Ok(have
            .into_iter()
            .map(|(i, c)| match c {
                Some(c) => (i, c),
                None => {
                    let (_, d) = fresh.next().expect("one decoded chunk per missing one");
                    (i, d)
                }
            })
            .collect())
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
        for (i, c) in self.chunks(samples)? {
            let r = self.layout.header.chunk_samples(i);
            let part = samples.start.max(r.start)..samples.end.min(r.end);
            f(&c, r.start, part);
        }
        Ok(())
    }
}

impl RecordingSource for CbinRecording {
    fn info(&self) -> &RecordingInfo {
        &self.layout.info
    }

    fn read(&self, channels: &[usize], samples: Range<u64>, out: &mut [f32]) -> DspResult<()> {
        let n = check_read(self.info(), channels, &samples, out.len())?;
        let n_c = self.layout.header.n_channels;
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
        let n_c = self.layout.header.n_channels;
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
        let n_c = self.layout.header.n_channels;
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
        let n_c = self.layout.header.n_channels;
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
        let r = self.layout.header.chunk_samples(0);
        Some(r.end - r.start)
    }
}
