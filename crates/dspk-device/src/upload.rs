//! Host→device uploads of windows into reusable device buffers, as fast as the runtime allows.
//!
//! On wgpu devices dspk opened, [`Uploader`] writes through persistent `MAP_WRITE | COPY_SRC`
//! staging buffers: several threads fill a mapped buffer in place (each piece goes from the
//! source through a cache-sized scratch buffer into the mapping), the copy into the device buffer
//! is queued on the device's own queue, and the staging buffer is mapped again while the device
//! works, so filling window i+1 overlaps the copy and kernels of window i. CubeCL's own
//! `Client::write` allocates a fresh staging buffer per call (measured at 0.56 GB/s for windows
//! above 8 MiB on an H200); this path allocates nothing per window. Other runtimes, and wgpu
//! devices registered by an embedding application, fall back to `Client::write` in pieces.

#[cfg(feature = "wgpu")]
use std::sync::Arc;
#[cfg(feature = "wgpu")]
use std::sync::atomic::{AtomicU8, Ordering};

use cubecl::bytes::Bytes;
use cubecl::client::Client;
use cubecl::server::Handle;
#[cfg(feature = "wgpu")]
use cubecl::wgpu::wgpu;
#[cfg(feature = "wgpu")]
use cubecl::wgpu::{AutoCompiler, WgpuResource, WgpuServer};
use dspk_types::{DspError, DspResult};

/// Copy alignment of device buffers, in bytes.
const COPY_ALIGN: u64 = 4;

/// Bytes per `Client::write` on the fallback path (larger writes were measured to collapse).
const FALLBACK_PIECE_BYTES: usize = 8 << 20;

/// Uploads windows of at most a fixed size into device buffers (see the module docs).
pub struct Uploader {
    client: Client,
    capacity: u64,
    threads: usize,
    path: UploadPath,
}

enum UploadPath {
    #[cfg(feature = "wgpu")]
    Staged(StagedUploader),
    Write,
}

impl Uploader {
    /// An uploader for `client` carrying up to `capacity` bytes per upload, filled by `threads`
    /// threads (at least one).
    pub fn new(client: &Client, capacity: u64, threads: usize) -> Self {
        let threads = threads.max(1);
        #[cfg(feature = "wgpu")]
        if let Some((device, queue)) = crate::registry::wgpu_handles_of(client) {
            let staged = StagedUploader::new(client, device, queue, capacity, 2, threads);
            return Self {
                client: client.clone(),
                capacity: staged.capacity(),
                threads,
                path: UploadPath::Staged(staged),
            };
        }
        Self {
            client: client.clone(),
            capacity: capacity.next_multiple_of(COPY_ALIGN),
            threads,
            path: UploadPath::Write,
        }
    }

    /// Whether uploads go through dspk's own mapped staging buffers (else `Client::write`).
    pub fn is_staged(&self) -> bool {
        match self.path {
            #[cfg(feature = "wgpu")]
            UploadPath::Staged(_) => true,
            UploadPath::Write => false,
        }
    }

    /// The most bytes one upload carries.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Fills `len` bytes through `fill(offset, piece)` and copies them to the start of `dst`,
    /// ordered after every kernel launched on the client so far and before any launched after.
    ///
    /// `fill` is called for consecutive pieces covering `0..len`, each a multiple of `align`
    /// bytes long (but the last), possibly from several threads at once. The device buffer must
    /// hold `len` rounded up to 4 bytes; the bytes past `len` up to that are unspecified.
    pub fn upload<F>(&mut self, dst: &Handle, len: usize, align: usize, fill: F) -> DspResult<()>
    where
        F: Fn(usize, &mut [u8]) -> DspResult<()> + Sync,
    {
        let padded = (len as u64).next_multiple_of(COPY_ALIGN);
        if padded > self.capacity {
            return Err(DspError::BufferOverrun {
                what: "upload staging".into(),
                capacity: self.capacity as usize,
                needed: len,
            });
        }
        if len == 0 {
            return Ok(());
        }
        match &mut self.path {
            #[cfg(feature = "wgpu")]
            UploadPath::Staged(staged) => staged.upload(dst, len, align, fill),
            UploadPath::Write => {
                let total = dst.size_in_used();
                if total < padded {
                    return Err(DspError::BufferOverrun {
                        what: "device input buffer".into(),
                        capacity: total as usize,
                        needed: padded as usize,
                    });
                }
                let align = align.max(1);
                let piece_len = (FALLBACK_PIECE_BYTES / align).max(1) * align;
                let mut offset = 0usize;
                while offset < len {
                    let n = piece_len.min(len - offset);
                    let mut piece = vec![0u8; (n as u64).next_multiple_of(COPY_ALIGN) as usize];
                    fill(offset, &mut piece[..n])?;
                    let end = offset as u64 + piece.len() as u64;
                    let target = dst
                        .clone()
                        .offset_start(offset as u64)
                        .offset_end(total - end);
                    self.client.write(&target, Bytes::from_bytes_vec(piece));
                    offset += n;
                }
                let _ = self.threads;
                Ok(())
            }
        }
    }

    /// The time of one copy of `len` bytes from an already filled staging buffer into `dst`,
    /// the median of `iters` (the host→device bandwidth this path can reach at best); `None` on
    /// the `Client::write` path, which has no staging buffer of its own.
    pub fn time_copy(
        &mut self,
        dst: &Handle,
        len: usize,
        iters: usize,
    ) -> DspResult<Option<std::time::Duration>> {
        match &mut self.path {
            #[cfg(feature = "wgpu")]
            UploadPath::Staged(staged) => staged.time_copy(dst, len, iters).map(Some),
            UploadPath::Write => {
                let _ = (dst, len, iters);
                Ok(None)
            }
        }
    }

    /// Waits until every upload queued so far has left the staging buffers.
    pub fn wait_idle(&mut self) -> DspResult<()> {
        match &mut self.path {
            #[cfg(feature = "wgpu")]
            UploadPath::Staged(staged) => staged.wait_idle(),
            UploadPath::Write => Ok(()),
        }
    }
}

#[cfg(feature = "wgpu")]
const PENDING: u8 = 0;
#[cfg(feature = "wgpu")]
const MAPPED: u8 = 1;
#[cfg(feature = "wgpu")]
const FAILED: u8 = 2;

/// Bytes a worker moves per step: small enough to stay in its core's cache between the read from
/// the source and the write into mapped (often write-combined) memory.
#[cfg(feature = "wgpu")]
const PIECE_BYTES: usize = 1 << 20;

#[cfg(feature = "wgpu")]
struct Slot {
    buffer: wgpu::Buffer,
    state: Arc<AtomicU8>,
    submission: Option<wgpu::SubmissionIndex>,
}

#[cfg(feature = "wgpu")]
impl Slot {
    fn remap(&mut self) {
        self.state.store(PENDING, Ordering::Release);
        let state = self.state.clone();
        self.buffer.map_async(wgpu::MapMode::Write, .., move |r| {
            state.store(if r.is_ok() { MAPPED } else { FAILED }, Ordering::Release);
        });
    }
}

#[cfg(feature = "wgpu")]
fn device_error(what: &str, e: impl std::fmt::Display) -> DspError {
    DspError::config(format!("{what}: {e}"))
}

/// Uploads through persistent `MAP_WRITE | COPY_SRC` staging buffers that are re-mapped as soon
/// as their copy is queued, so filling one overlaps the device's copy out of the other.
#[cfg(feature = "wgpu")]
struct StagedUploader {
    client: Client,
    device: wgpu::Device,
    queue: wgpu::Queue,
    slots: Vec<Slot>,
    next: usize,
    capacity: u64,
    threads: usize,
}

#[cfg(feature = "wgpu")]
impl StagedUploader {
    /// `slots` staging buffers of `capacity` bytes each; `threads` workers fill them.
    fn new(
        client: &Client,
        device: wgpu::Device,
        queue: wgpu::Queue,
        capacity: u64,
        slots: usize,
        threads: usize,
    ) -> Self {
        let capacity = capacity
            .max(4)
            .next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        let slots = (0..slots.max(1))
            .map(|i| Slot {
                buffer: device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&format!("dspk staging {i}")),
                    size: capacity,
                    usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: true,
                }),
                state: Arc::new(AtomicU8::new(MAPPED)),
                submission: None,
            })
            .collect();
        Self {
            client: client.clone(),
            device,
            queue,
            slots,
            next: 0,
            capacity,
            threads: threads.max(1),
        }
    }

    /// Bytes one upload can carry.
    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn wait_mapped(&mut self, i: usize) -> DspResult<()> {
        loop {
            match self.slots[i].state.load(Ordering::Acquire) {
                MAPPED => return Ok(()),
                FAILED => return Err(DspError::config("a staging buffer could not be mapped")),
                _ => {
                    let submission_index = self.slots[i].submission.clone();
                    self.device
                        .poll(wgpu::PollType::Wait {
                            submission_index,
                            timeout: None,
                        })
                        .map_err(|e| device_error("waiting for the device failed", e))?;
                }
            }
        }
    }

    /// Fills `len` bytes of the next staging buffer and copies them into `dst` (from its start).
    ///
    /// `fill(offset, piece)` is called for consecutive pieces that together cover `0..len`, each
    /// at most 1 MiB and a multiple of `align` bytes long (except where `len` itself is not), from
    /// several threads at once. The copy is queued on the device after every kernel launched on
    /// `client` so far, and before any launched after.
    fn upload<F>(&mut self, dst: &Handle, len: usize, align: usize, fill: F) -> DspResult<()>
    where
        F: Fn(usize, &mut [u8]) -> DspResult<()> + Sync,
    {
        // `Uploader::upload` has checked `len` against the capacity and skipped empty uploads.
        let padded = (len as u64).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        let i = self.next;
        self.next = (self.next + 1) % self.slots.len();
        self.wait_mapped(i)?;
        fill_parallel(&self.slots[i].buffer, len, align, self.threads, &fill)?;
        let (target, _bound) = flushed_target(&self.client, dst)?;
        if target.size < padded {
            return Err(DspError::BufferOverrun {
                what: "device input buffer".into(),
                capacity: target.size as usize,
                needed: padded as usize,
            });
        }
        let slot = &mut self.slots[i];
        slot.buffer.unmap();
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("dspk upload"),
            });
        encoder.copy_buffer_to_buffer(&slot.buffer, 0, &target.buffer, target.offset, padded);
        slot.submission = Some(self.queue.submit([encoder.finish()]));
        slot.remap();
        Ok(())
    }

    /// See [`Uploader::time_copy`].
    fn time_copy(
        &mut self,
        dst: &Handle,
        len: usize,
        iters: usize,
    ) -> DspResult<std::time::Duration> {
        let padded = (len as u64)
            .next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT)
            .min(self.capacity);
        let i = self.next;
        self.wait_mapped(i)?;
        let (target, _bound) = flushed_target(&self.client, dst)?;
        let padded = padded.min(target.size);
        let slot = &mut self.slots[i];
        slot.buffer.unmap();
        let mut times = Vec::with_capacity(iters.max(1) + 1);
        for _ in 0..=iters.max(1) {
            let started = std::time::Instant::now();
            let mut encoder = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("dspk copy timing"),
                });
            encoder.copy_buffer_to_buffer(&slot.buffer, 0, &target.buffer, target.offset, padded);
            let index = self.queue.submit([encoder.finish()]);
            self.device
                .poll(wgpu::PollType::Wait {
                    submission_index: Some(index),
                    timeout: None,
                })
                .map_err(|e| device_error("waiting for the device failed", e))?;
            times.push(started.elapsed());
        }
        slot.submission = None;
        slot.remap();
        // The first copy warms up; the median of the rest.
        times.remove(0);
        times.sort();
        Ok(times[times.len() / 2])
    }

    fn wait_idle(&mut self) -> DspResult<()> {
        for i in 0..self.slots.len() {
            self.wait_mapped(i)?;
        }
        Ok(())
    }
}

/// Submits the kernels already launched on `client` (they may still read `dst`, so they go
/// before a copy into it), then resolves `dst` to its wgpu buffer range. The second value keeps
/// the allocation bound in place while held.
#[cfg(feature = "wgpu")]
fn flushed_target(client: &Client, dst: &Handle) -> DspResult<(WgpuResource, impl Sized)> {
    client
        .flush()
        .map_err(|e| device_error("submitting queued kernels failed", e))?;
    let bound = client
        .get_resource::<WgpuServer<AutoCompiler>>(dst.clone())
        .map_err(|e| device_error("resolving a device buffer failed", e))?;
    Ok((bound.resource().clone(), bound))
}

/// Runs `fill` over `0..len` in pieces on up to `threads` scoped threads. Each thread maps its
/// own part of the staging buffer (parts start at multiples of 8 bytes, as mapping requires) and
/// moves its pieces from a cache-sized scratch buffer into the mapping.
#[cfg(feature = "wgpu")]
fn fill_parallel<F>(
    buffer: &wgpu::Buffer,
    len: usize,
    align: usize,
    threads: usize,
    fill: &F,
) -> DspResult<()>
where
    F: Fn(usize, &mut [u8]) -> DspResult<()> + Sync,
{
    let align = align.max(1);
    // Part boundaries: multiples of `align` (whole frames) and of the mapping alignment.
    let unit = lcm(align, wgpu::MAP_ALIGNMENT as usize);
    let piece = (PIECE_BYTES / align).max(1) * align;
    let per_part = len.div_ceil(unit).div_ceil(threads.max(1)) * unit;
    let mut parts = Vec::new();
    let mut start = 0usize;
    while start < len {
        let end = (start + per_part).min(len);
        let map_end = (end as u64).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        let view = buffer
            .get_mapped_range_mut(start as u64..map_end)
            .map_err(|e| device_error("mapping a staging buffer failed", e))?;
        parts.push((start, end - start, view));
        start = end;
    }
    let work = |(start, n, mut view): (usize, usize, wgpu::BufferViewMut)| -> DspResult<()> {
        let mut scratch = vec![0u8; piece.min(n)];
        let mut part = view.slice(..n);
        let mut done = 0;
        while done < n {
            let k = piece.min(n - done);
            fill(start + done, &mut scratch[..k])?;
            part.slice(done..done + k).copy_from_slice(&scratch[..k]);
            done += k;
        }
        Ok(())
    };
    if parts.len() <= 1 {
        return parts.into_iter().try_for_each(work);
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = parts
            .into_iter()
            .map(|p| s.spawn(move || work(p)))
            .collect();
        handles.into_iter().try_for_each(|h| match h.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        })
    })
}

#[cfg(feature = "wgpu")]
fn lcm(a: usize, b: usize) -> usize {
    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    a / gcd(a, b) * b
}
