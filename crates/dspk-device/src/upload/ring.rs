//! The ring of staging slots: persistent staging buffers (host memory or wgpu's mapped
//! buffers) of at most [`STAGING_CHUNK`] bytes, one filled while the device reads another,
//! each window copied out or read in place by a staging kernel; grown when a piece outgrows a
//! slot, handed to [`super::kept`] when dropped.

use std::sync::Arc;
use std::time::Duration;

use cubecl::client::Client;
use cubecl::server::Handle;
use cubecl::wgpu::{WgpuResource, wgpu};
use dspk_types::{DspError, DspResult};

use super::destination::Destination;
use super::fill::{fill_parts, fill_pool, mapped_parts};
use super::kept::{self, IdleStaging};
use super::kernel::{STAGING_KERNEL_ALIGN, StagingKernel, StagingLaunch, compile, record};
use super::memory::{Slot, SlotMemory, first_slots, make_slots};
use super::staging::{Staging, lcm};
use super::timing;
use crate::bridge;

/// Bytes per staging buffer at most (larger windows cross in chunks of this size). Measured on
/// the H200: a ring of three 8 MiB buffers made one-second windows (23 MB) slower than a buffer
/// per window (upload 27 vs 38 GB/s; 8 MiB copies ran at 34 GB/s against 41 for 23 MB), so a
/// window of up to this size crosses in one copy.
pub(super) const STAGING_CHUNK: u64 = 64 << 20;

/// Staging buffers in a ring of its own: one being filled while the copy out of the other
/// runs (a ring taking turns with other devices' has one).
pub(super) const STAGING_SLOTS: usize = 2;

/// Uploads through a ring of persistent staging buffers: filling one overlaps the device's copy
/// out of the other.
pub(super) struct Ring {
    client: Client,
    device: wgpu::Device,
    queue: wgpu::Queue,
    slots: Vec<Slot>,
    /// How many slots the ring has once the pending ones are in.
    buffers: usize,
    next: usize,
    /// Bytes one staging buffer holds.
    slot_bytes: u64,
    /// The most bytes one upload carries.
    capacity: u64,
    /// The fill threads (`None` for one thread: the caller's).
    pool: Option<Arc<rayon::ThreadPool>>,
    /// What was asked for, and what the slots are.
    wanted: Staging,
    staging: Staging,
    /// Host staging buffers past the first, being allocated on a helper thread while the first
    /// window fills; taken into `slots` once done (uploads go through the first alone until
    /// then, never waiting for the allocation).
    pending: Option<std::thread::JoinHandle<Option<Vec<Slot>>>>,
    /// Whether the slots were kept from an earlier uploader.
    reused: bool,
}

impl Ring {
    /// A ring for `client` of up to `capacity` bytes per upload through `buffers` (at least
    /// one; [`STAGING_SLOTS`] for a ring of its own) staging buffers of the `wanted` kind where
    /// the device has it (else wgpu's mapped buffers), filled by `threads` workers; `None` where
    /// `client` is not a wgpu device dspk opened.
    pub(super) fn open(
        client: &Client,
        capacity: u64,
        threads: usize,
        wanted: Staging,
        buffers: usize,
    ) -> Option<Self> {
        let handles = bridge::handles_of(client)?;
        let (device, queue) = (handles.device, handles.queue);
        // Whole 16-byte units, so that a staging kernel reads every byte as `vec4<u32>`.
        let capacity = capacity.max(4).next_multiple_of(STAGING_KERNEL_ALIGN);
        let slot_bytes = capacity.min(STAGING_CHUNK);
        let (slots, slot_bytes, staging, pending, reused) =
            match kept::take_staging(&device, slot_bytes, wanted, buffers) {
                Some(idle) => (idle.slots, idle.slot_bytes, idle.staging, None, true),
                None => {
                    let (slots, staging, pending) =
                        first_slots(&device, slot_bytes, wanted, buffers);
                    (slots, slot_bytes, staging, pending, false)
                }
            };
        Some(Self {
            client: client.clone(),
            device,
            queue,
            slots,
            buffers,
            next: 0,
            slot_bytes,
            capacity,
            pool: fill_pool(threads),
            wanted,
            staging,
            pending,
            reused,
        })
    }

    /// Bytes one upload can carry.
    pub(super) fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The memory the slots are.
    pub(super) fn staging(&self) -> Staging {
        self.staging
    }

    /// Whether the slots were kept from an earlier uploader.
    pub(super) fn reused(&self) -> bool {
        self.reused
    }

    /// The most bytes one window read in place by a staging kernel carries: one slot's worth.
    pub(super) fn kernel_capacity(&self) -> u64 {
        self.slot_bytes.min(self.capacity)
    }

    /// Compiles a staging kernel for this ring's device.
    pub(super) fn compile_kernel(
        &self,
        label: &str,
        wgsl: &str,
        entry: &str,
        buffers: usize,
    ) -> DspResult<StagingKernel> {
        compile(&self.device, label, wgsl, entry, buffers)
    }

    /// Takes the staging buffers allocated on the helper thread into the ring: when they are
    /// ready, or (with `wait`) after waiting for them. If their allocation failed, the ring
    /// keeps the buffers it has.
    fn adopt_pending(&mut self, wait: bool) {
        let Some(handle) = self.pending.take() else {
            return;
        };
        if !wait && !handle.is_finished() {
            self.pending = Some(handle);
            return;
        }
        match handle.join() {
            Ok(Some(more)) => self.slots.extend(more),
            Ok(None) => {}
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// Makes every staging buffer hold at least `bytes` (for pieces larger than a chunk).
    fn grow_slots(&mut self, bytes: u64) -> DspResult<()> {
        self.adopt_pending(true);
        self.wait_idle()?;
        let bytes = bytes.next_multiple_of(STAGING_KERNEL_ALIGN);
        let (slots, staging) = make_slots(&self.device, bytes, self.wanted, self.buffers);
        self.slots = slots;
        self.staging = staging;
        self.slot_bytes = bytes;
        self.next = 0;
        Ok(())
    }

    /// Fills `len` bytes chunk by chunk through the ring and puts them at `to` (see
    /// [`Uploader::upload`](super::Uploader::upload), which has checked `len` and the
    /// destination and skipped empty uploads).
    ///
    /// `fill(offset, piece)` is called for consecutive pieces that together cover `0..len`, each
    /// a multiple of `align` bytes long (except where `len` itself is not), from several threads
    /// at once. What is submitted is ordered after every kernel launched on the client so far,
    /// and before any launched after.
    pub(super) fn upload<F, D>(
        &mut self,
        to: Destination<'_>,
        len: usize,
        align: usize,
        fill: F,
        during: D,
    ) -> DspResult<()>
    where
        F: Fn(usize, &mut [u8]) -> DspResult<()> + Sync,
        D: FnOnce() -> DspResult<()>,
    {
        let padded = (len as u64).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        self.adopt_pending(false);
        // Chunks are whole pieces and start where mapping and copying allow.
        let unit = lcm(align.max(1), wgpu::MAP_ALIGNMENT as usize);
        if unit as u64 > self.slot_bytes && (len as u64) > self.slot_bytes {
            self.grow_slots((unit as u64).min(padded))?;
        }
        let chunk = match to {
            // A kernel reads the window in one staging buffer (`Uploader::upload` checked that
            // it fits; host buffers are never mapped piecewise).
            Destination::Kernel(_) => self.slot_bytes as usize,
            Destination::Copy(_) => ((self.slot_bytes as usize / unit) * unit).max(unit),
        };
        let client = self.client.clone();
        // The kernels launched so far (the previous window's decode) start on the device now,
        // while the host fills. A staging kernel is not one of them (it is submitted here, not
        // through the client), and the flush would wait for whatever the device's thread is
        // still doing (at a pass's start, compiling and allocating) before the fill can begin.
        // (The destination's buffers are resolved after a flush either way: `resolve`.)
        if let Destination::Copy(_) = to {
            bridge::flush(&client)?;
        }
        let mut during = Some(during);
        let mut resolved: Option<(Vec<WgpuResource>, Vec<_>)> = None;
        let mut done = 0usize;
        while done < len {
            let n = chunk.min(len - done);
            let i = self.next;
            self.next = (self.next + 1) % self.slots.len();
            self.slots[i].wait_ready(&self.device)?;
            let pool = self.pool.as_deref();
            let threads = pool.map_or(1, |p| p.current_num_threads());
            let at = done;
            let shifted = |offset: usize, piece: &mut [u8]| fill(at + offset, piece);
            let first = during.take();
            let slot = &mut self.slots[i];
            let (buffer, memory) = (&slot.buffer, &mut slot.memory);
            let (device, queue) = (&self.device, &self.queue);
            let resolved = &mut resolved;
            let mut recorded = None;
            // On this thread while the pool fills: the caller's work, then (after the kernels
            // it launched, which may still read the device buffers) the device buffers are
            // resolved, once per upload, and the copy or kernel recorded, so that only the
            // submission is left once the staging buffer is full.
            let during = || -> DspResult<()> {
                first.map_or(Ok(()), |f| f())?;
                let (targets, _) = match resolved {
                    Some(r) => &*r,
                    None => resolved.insert(resolve(&to, &client, padded)?),
                };
                recorded = Some(record_into(&to, device, queue, buffer, n, done, targets)?);
                Ok(())
            };
            match memory {
                SlotMemory::Mapped(_) => {
                    let parts = mapped_parts(buffer, n, align, threads)?;
                    fill_parts(pool, parts, align, true, &shifted, during)?;
                    buffer.unmap();
                }
                #[cfg(vulkan_host)]
                SlotMemory::Host(host) => {
                    let scratch = !host.cached;
                    let parts =
                        super::fill::slice_parts(&mut host.bytes_mut()[..n], align, threads);
                    fill_parts(pool, parts, align, scratch, &shifted, during)?;
                }
            }
            let encoder = recorded.expect("`fill_parts` returns `Ok` only after `during` recorded");
            let submission = self.queue.submit([encoder.finish()]);
            slot.after_copy(submission);
            done += n;
        }
        Ok(())
    }

    /// The time of the copies of a `len`-byte window out of the filled ring into `dst` (chunk
    /// by chunk, as [`upload`](Self::upload) queues them), submitted together; see
    /// [`Uploader::time`](super::Uploader::time).
    pub(super) fn time_copy(
        &mut self,
        dst: &Handle,
        len: usize,
        iters: usize,
    ) -> DspResult<Duration> {
        self.adopt_pending(true);
        self.wait_idle()?;
        let client = self.client.clone();
        let (mut targets, _bound) = bridge::flushed_targets(&client, std::slice::from_ref(dst))?;
        let target = targets.remove(0);
        let len = (len as u64)
            .min(self.capacity)
            .min(target.size)
            .next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT)
            .min(target.size);
        for slot in &mut self.slots {
            if let SlotMemory::Mapped(_) = slot.memory {
                slot.buffer.unmap();
            }
        }
        let (time, last) = timing::time_copies(
            &self.device,
            &self.queue,
            &self.slots,
            self.slot_bytes,
            &target,
            len,
            iters,
        )?;
        for slot in &mut self.slots {
            slot.after_copy(last.clone());
        }
        Ok(time)
    }

    /// The time of `launch` over the first `len` bytes of staging buffer 0; see
    /// [`Uploader::time`](super::Uploader::time).
    pub(super) fn time_through(
        &mut self,
        launch: StagingLaunch<'_>,
        len: usize,
        iters: usize,
    ) -> DspResult<Duration> {
        self.adopt_pending(true);
        self.wait_idle()?;
        let client = self.client.clone();
        let (targets, _bound) = bridge::flushed_targets(&client, launch.buffers)?;
        let slot = &self.slots[0];
        let bytes = (len as u64)
            .next_multiple_of(STAGING_KERNEL_ALIGN)
            .min(slot.buffer.size());
        let (device, queue) = (&self.device, &self.queue);
        let (time, last) = timing::time_submissions(device, queue, iters, |encoder| {
            record(
                device,
                queue,
                encoder,
                &launch,
                &slot.buffer,
                bytes,
                &targets,
            )
        })?;
        self.slots[0].after_copy(last);
        Ok(time)
    }

    /// Waits until every upload queued so far has left the staging buffers.
    pub(super) fn wait_idle(&mut self) -> DspResult<()> {
        for slot in &mut self.slots {
            slot.wait_ready(&self.device)?;
        }
        Ok(())
    }
}

/// Host staging buffers are kept ([`kept`]) for a later uploader of the device, once idle.
impl Drop for Ring {
    fn drop(&mut self) {
        if !self.staging.is_host() {
            return;
        }
        self.adopt_pending(true);
        if self.wait_idle().is_err() || self.slots.len() < self.buffers {
            return;
        }
        kept::keep_staging(IdleStaging {
            device: self.device.clone(),
            slot_bytes: self.slot_bytes,
            staging: self.staging,
            slots: std::mem::take(&mut self.slots),
        });
    }
}

/// Flushes the kernels already launched on `client` (they may still use the device buffers
/// `to` writes), then resolves those buffers ([`bridge::flushed_targets`]); a copy's target
/// must hold `padded` bytes.
fn resolve(
    to: &Destination<'_>,
    client: &Client,
    padded: u64,
) -> DspResult<(Vec<WgpuResource>, Vec<impl Sized + use<>>)> {
    let handles = match to {
        Destination::Copy(dst) => std::slice::from_ref(*dst),
        Destination::Kernel(launch) => launch.buffers,
    };
    let (targets, bound) = bridge::flushed_targets(client, handles)?;
    if let Destination::Copy(_) = to
        && targets[0].size < padded
    {
        return Err(DspError::BufferOverrun {
            what: "device input buffer".into(),
            capacity: targets[0].size as usize,
            needed: padded as usize,
        });
    }
    Ok((targets, bound))
}

/// A fresh encoder with what `to` does with the first `n` bytes of `staging`: their copy to
/// byte `done` of the target, or the kernel over them (`targets` from [`resolve`]).
fn record_into(
    to: &Destination<'_>,
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    staging: &wgpu::Buffer,
    n: usize,
    done: usize,
    targets: &[WgpuResource],
) -> DspResult<wgpu::CommandEncoder> {
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("dspk upload"),
    });
    match to {
        Destination::Copy(_) => {
            let bytes = (n as u64).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
            let target = &targets[0];
            encoder.copy_buffer_to_buffer(
                staging,
                0,
                &target.buffer,
                target.offset + done as u64,
                bytes,
            );
        }
        Destination::Kernel(launch) => {
            // `Uploader::upload` checked that the window fits one staging buffer.
            let bytes = (n as u64)
                .next_multiple_of(STAGING_KERNEL_ALIGN)
                .min(staging.size());
            record(device, queue, &mut encoder, launch, staging, bytes, targets)?;
        }
    }
    Ok(encoder)
}
