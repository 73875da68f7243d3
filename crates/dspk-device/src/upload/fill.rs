//! The fill: a window's bytes written into a staging buffer by a pool of fill threads (kept
//! per thread count, [`super::kept`]), in parts, while the caller's own work runs on its
//! thread.

use std::sync::Arc;

use cubecl::wgpu::wgpu;
use dspk_types::{ComputeTarget, DspResult};

use super::kept;
use super::staging::lcm;
use crate::failure::failed;

/// Bytes a worker moves per step through its scratch buffer when the staging memory is not
/// host-cached: small enough to stay in its core's cache between the read from the source and
/// the write into write-combined memory.
const PIECE_BYTES: usize = 1 << 20;

/// Parts per fill thread: more parts than threads let a thread that is done early take over
/// work from a slow one (cores of a shared host do not run at one speed).
const PARTS_PER_THREAD: usize = 4;

/// Bytes per part at least (smaller ones cost more to hand out than to fill).
const MIN_PART_BYTES: usize = 256 << 10;

/// The pool of `threads` fill threads, kept for the process (rather than 16 thread spawns
/// and joins per window, where a 23 MB window takes ~1.3 ms); `None` for one thread, or if
/// threads cannot be started (then the caller's thread fills).
pub(super) fn fill_pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
    if threads <= 1 {
        return None;
    }
    kept::fill_pool(threads, || {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("dspk-fill-{i}"))
            .build()
            .ok()
    })
}

/// The byte length of each part of `len` bytes handed to the fill threads: a multiple of
/// `align` (whole frames) and of wgpu's mapping alignment, so that parts can be mapped one by
/// one; [`PARTS_PER_THREAD`] parts per thread, none shorter than [`MIN_PART_BYTES`] but where
/// `len` is.
fn part_len(len: usize, align: usize, threads: usize) -> usize {
    let unit = lcm(align.max(1), wgpu::MAP_ALIGNMENT as usize);
    let parts = (threads.max(1) * PARTS_PER_THREAD).min(len.div_ceil(MIN_PART_BYTES).max(1));
    len.div_ceil(unit).div_ceil(parts) * unit
}

/// The parts of a mapped wgpu buffer's first `len` bytes, each mapped on its own.
pub(super) fn mapped_parts(
    buffer: &wgpu::Buffer,
    len: usize,
    align: usize,
    threads: usize,
) -> DspResult<Vec<(usize, usize, wgpu::BufferViewMut)>> {
    let per_part = part_len(len, align, threads);
    let mut parts = Vec::new();
    let mut start = 0usize;
    while start < len {
        let end = (start + per_part).min(len);
        let map_end = (end as u64).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        let view = buffer
            .get_mapped_range_mut(start as u64..map_end)
            .map_err(|e| failed(ComputeTarget::Wgpu, "mapping a staging buffer failed", e))?;
        parts.push((start, end - start, view));
        start = end;
    }
    Ok(parts)
}

/// The parts of `bytes`.
#[cfg(vulkan_host)]
pub(super) fn slice_parts(
    bytes: &mut [u8],
    align: usize,
    threads: usize,
) -> Vec<(usize, usize, &mut [u8])> {
    let per_part = part_len(bytes.len(), align, threads);
    bytes
        .chunks_mut(per_part)
        .enumerate()
        .map(|(k, part)| (k * per_part, part.len(), part))
        .collect()
}

thread_local! {
    /// A fill thread's scratch buffer for staging memory that is written through a copy
    /// (write-combined or wgpu-mapped), reused across uploads instead of allocated per part.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Memory a fill thread writes: a mapped wgpu view (written through copies only) or plain bytes.
pub(super) trait PartMemory: Send {
    /// Copies `src` to `at`.
    fn write(&mut self, at: usize, src: &[u8]);
    /// The memory as a slice, where it can be written in place.
    fn bytes(&mut self) -> Option<&mut [u8]>;
}

impl PartMemory for wgpu::BufferViewMut {
    fn write(&mut self, at: usize, src: &[u8]) {
        self.slice(at..at + src.len()).copy_from_slice(src);
    }
    fn bytes(&mut self) -> Option<&mut [u8]> {
        None
    }
}

impl PartMemory for &mut [u8] {
    fn write(&mut self, at: usize, src: &[u8]) {
        self[at..at + src.len()].copy_from_slice(src);
    }
    fn bytes(&mut self) -> Option<&mut [u8]> {
        Some(self)
    }
}

/// Runs `fill` over every part (`(offset, length, memory)`) on the pool's threads while
/// `during` runs on the calling thread (the first error of either is the result), in
/// pieces that are multiples of `align` bytes: straight into the memory where it is plain,
/// host-cached memory (`!scratch`), else through a cache-sized scratch buffer (write-combined
/// memory wants each line written once, whole).
pub(super) fn fill_parts<P, F, D>(
    pool: Option<&rayon::ThreadPool>,
    parts: Vec<(usize, usize, P)>,
    align: usize,
    scratch: bool,
    fill: &F,
    during: D,
) -> DspResult<()>
where
    P: PartMemory,
    F: Fn(usize, &mut [u8]) -> DspResult<()> + Sync,
    D: FnOnce() -> DspResult<()>,
{
    let align = align.max(1);
    let piece = (PIECE_BYTES / align).max(1) * align;
    let work = |(start, n, mut memory): (usize, usize, P)| -> DspResult<()> {
        if !scratch && let Some(bytes) = memory.bytes() {
            return fill(start, &mut bytes[..n]);
        }
        // Each fill thread keeps its scratch buffer from one upload to the next.
        SCRATCH.with_borrow_mut(|buffer| {
            if buffer.len() < piece.min(n) {
                buffer.resize(piece.min(n), 0);
            }
            let mut done = 0;
            while done < n {
                let k = piece.min(n - done);
                fill(start + done, &mut buffer[..k])?;
                memory.write(done, &buffer[..k]);
                done += k;
            }
            Ok(())
        })
    };
    match pool {
        Some(pool) if parts.len() > 1 => {
            let failed = parking_lot::Mutex::new(None);
            let during = pool.in_place_scope(|scope| {
                for part in parts {
                    let (work, failed) = (&work, &failed);
                    scope.spawn(move |_| {
                        if let Err(e) = work(part) {
                            failed.lock().get_or_insert(e);
                        }
                    });
                }
                // The caller's own work, on this thread, while the pool fills.
                during()
            });
            match failed.into_inner() {
                Some(e) => Err(e),
                None => during,
            }
        }
        _ => {
            let filled = parts.into_iter().try_for_each(work);
            let during = during();
            filled.and(during)
        }
    }
}
