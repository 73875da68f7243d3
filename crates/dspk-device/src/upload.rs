//! Fast host→device uploads of windows: persistent mapped staging buffers, filled in place by
//! several threads, copied into reusable device buffers on the device's own queue.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use cubecl::client::Client;
use cubecl::server::Handle;
use cubecl::wgpu::wgpu;
use cubecl::wgpu::{AutoCompiler, WgpuServer};
use dspk_types::{DspError, DspResult};

const PENDING: u8 = 0;
const MAPPED: u8 = 1;
const FAILED: u8 = 2;

/// Bytes a worker moves per step: small enough to stay in its core's cache between the read from
/// the source and the write into mapped (often write-combined) memory.
const PIECE_BYTES: usize = 1 << 20;

struct Slot {
    buffer: wgpu::Buffer,
    state: Arc<AtomicU8>,
    submission: Option<wgpu::SubmissionIndex>,
}

impl Slot {
    fn remap(&mut self) {
        self.state.store(PENDING, Ordering::Release);
        let state = self.state.clone();
        self.buffer.map_async(wgpu::MapMode::Write, .., move |r| {
            state.store(if r.is_ok() { MAPPED } else { FAILED }, Ordering::Release);
        });
    }
}

fn device_error(what: &str, e: impl std::fmt::Display) -> DspError {
    DspError::config(format!("{what}: {e}"))
}

/// Uploads through persistent `MAP_WRITE | COPY_SRC` staging buffers that are re-mapped as soon
/// as their copy is queued, so filling one overlaps the device's copy out of the other.
pub struct StagedUploader {
    client: Client,
    device: wgpu::Device,
    queue: wgpu::Queue,
    slots: Vec<Slot>,
    next: usize,
    capacity: u64,
    threads: usize,
}

impl StagedUploader {
    /// `slots` staging buffers of `capacity` bytes each; `threads` workers fill them.
    pub fn new(
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
    pub fn capacity(&self) -> u64 {
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
    pub fn upload<F>(&mut self, dst: &Handle, len: usize, align: usize, fill: F) -> DspResult<()>
    where
        F: Fn(usize, &mut [u8]) -> DspResult<()> + Sync,
    {
        let padded = (len as u64).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        if padded > self.capacity {
            return Err(DspError::BufferOverrun {
                what: "staging buffer".into(),
                capacity: self.capacity as usize,
                needed: len,
            });
        }
        if len == 0 {
            return Ok(());
        }
        let i = self.next;
        self.next = (self.next + 1) % self.slots.len();
        self.wait_mapped(i)?;
        {
            let slot = &self.slots[i];
            let mut view = slot
                .buffer
                .get_mapped_range_mut(0..padded)
                .map_err(|e| device_error("mapping a staging buffer failed", e))?;
            let whole = view.slice(..len);
            fill_parallel(whole, len, align, self.threads, &fill)?;
        }
        // Kernels already launched may still read `dst`: queue them before the copy.
        self.client
            .flush()
            .map_err(|e| device_error("submitting queued kernels failed", e))?;
        let resource = self
            .client
            .get_resource::<WgpuServer<AutoCompiler>>(dst.clone())
            .map_err(|e| device_error("resolving a device buffer failed", e))?;
        let target = resource.resource();
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

    /// Waits until every queued upload has finished.
    pub fn wait_idle(&mut self) -> DspResult<()> {
        for i in 0..self.slots.len() {
            self.wait_mapped(i)?;
        }
        Ok(())
    }
}

/// Runs `fill` over `0..len` in pieces on `threads` scoped threads, each moving its piece from a
/// cache-sized scratch buffer into its part of the mapped range.
fn fill_parallel<F>(
    whole: wgpu::WriteOnly<'_, [u8]>,
    len: usize,
    align: usize,
    threads: usize,
    fill: &F,
) -> DspResult<()>
where
    F: Fn(usize, &mut [u8]) -> DspResult<()> + Sync,
{
    let align = align.max(1);
    let piece = (PIECE_BYTES / align).max(1) * align;
    let units = len.div_ceil(align);
    let per_thread = units.div_ceil(threads) * align;
    let mut parts = Vec::with_capacity(threads);
    let mut rest = whole;
    let mut offset = 0;
    while offset < len {
        let n = per_thread.min(len - offset);
        let (head, tail) = rest.split_at(n);
        parts.push((offset, head));
        rest = tail;
        offset += n;
    }
    let work = |(start, mut part): (usize, wgpu::WriteOnly<'_, [u8]>)| -> DspResult<()> {
        let mut scratch = vec![0u8; piece.min(part.len())];
        let mut done = 0;
        while done < part.len() {
            let n = piece.min(part.len() - done);
            fill(start + done, &mut scratch[..n])?;
            part.slice(done..done + n).copy_from_slice(&scratch[..n]);
            done += n;
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
