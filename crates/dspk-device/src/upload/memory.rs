//! Staging memory: the staging buffers an upload fills ([`Slot`]), either dspk's own host
//! memory on Vulkan ([`super::host`]) or wgpu's mapped buffers, how they are allocated, and
//! when one can be written again.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use cubecl::wgpu::wgpu;
use dspk_types::{ComputeTarget, DspResult};

#[cfg(vulkan_host)]
use super::host;
use super::staging::Staging;
use crate::failure::{device_failure, failed};

/// A wgpu mapped buffer's `map_async` has not finished.
const PENDING: u8 = 0;
/// It is mapped: it can be written.
const MAPPED: u8 = 1;
/// Mapping it failed.
const FAILED: u8 = 2;

/// The memory behind one staging buffer.
pub(super) enum SlotMemory {
    /// wgpu's mapped buffer; the state of its latest `map_async`.
    Mapped(Arc<AtomicU8>),
    /// dspk's host buffer, mapped for good.
    #[cfg(vulkan_host)]
    Host(host::HostBuffer),
}

/// One staging buffer.
pub(super) struct Slot {
    /// The buffer copies and staging kernels read.
    pub buffer: wgpu::Buffer,
    /// The memory the host writes.
    pub memory: SlotMemory,
    /// The submission of the latest copy out of this buffer, until it is known to be done.
    submission: Option<wgpu::SubmissionIndex>,
}

impl Slot {
    /// After a copy (or a kernel) reading the buffer was submitted: make it writable again once
    /// that is done (wgpu's buffers are re-mapped; host buffers need nothing but the wait).
    pub(super) fn after_copy(&mut self, submission: wgpu::SubmissionIndex) {
        self.submission = Some(submission);
        if let SlotMemory::Mapped(state) = &self.memory {
            state.store(PENDING, Ordering::Release);
            let state = state.clone();
            self.buffer.map_async(wgpu::MapMode::Write, .., move |r| {
                state.store(if r.is_ok() { MAPPED } else { FAILED }, Ordering::Release);
            });
        }
    }

    /// Waits until the buffer can be written: its latest copy is done (and, for wgpu's buffers,
    /// the buffer is mapped again).
    pub(super) fn wait_ready(&mut self, device: &wgpu::Device) -> DspResult<()> {
        loop {
            let ready = match &self.memory {
                SlotMemory::Mapped(state) => match state.load(Ordering::Acquire) {
                    MAPPED => true,
                    FAILED => {
                        return Err(device_failure(
                            ComputeTarget::Wgpu,
                            "a staging buffer could not be mapped",
                        )
                        .into());
                    }
                    _ => false,
                },
                #[cfg(vulkan_host)]
                SlotMemory::Host(_) => self.submission.is_none(),
            };
            if ready {
                return Ok(());
            }
            let submission_index = self.submission.clone();
            device
                .poll(wgpu::PollType::Wait {
                    submission_index,
                    timeout: None,
                })
                .map_err(|e| failed(ComputeTarget::Wgpu, "waiting for the device failed", e))?;
            #[cfg(vulkan_host)]
            if let SlotMemory::Host(_) = self.memory {
                // The wait above returned after that submission completed.
                self.submission = None;
            }
        }
    }
}

/// `count` staging buffers of `bytes` bytes: host memory where `wanted` asks for it and the
/// device can give it, else wgpu's mapped buffers (created mapped); and which they are.
pub(super) fn make_slots(
    device: &wgpu::Device,
    bytes: u64,
    wanted: Staging,
    count: usize,
) -> (Vec<Slot>, Staging) {
    if let Some(found) = host_slots(device, bytes, wanted, 0..count) {
        return found;
    }
    (mapped_slots(device, bytes, count), Staging::Mapped)
}

/// Buffers being allocated on a helper thread.
pub(super) type Pending = std::thread::JoinHandle<Option<Vec<Slot>>>;

/// `count` staging buffers as [`make_slots`] makes them, but for host memory only the first
/// now and the rest on a helper thread (`Pending`, when one can be started): the first window
/// does not wait for the other buffers' memory to be pinned.
pub(super) fn first_slots(
    device: &wgpu::Device,
    bytes: u64,
    wanted: Staging,
    count: usize,
) -> (Vec<Slot>, Staging, Option<Pending>) {
    let Some((mut first, staging)) = host_slots(device, bytes, wanted, 0..1) else {
        return (mapped_slots(device, bytes, count), Staging::Mapped, None);
    };
    let rest = 1..count;
    if rest.is_empty() {
        return (first, staging, None);
    }
    if let Some(handle) = spawn_host_slots(device, bytes, wanted, rest.clone()) {
        return (first, staging, Some(handle));
    }
    if let Some((more, _)) = host_slots(device, bytes, wanted, rest) {
        first.extend(more);
    }
    (first, staging, None)
}

/// Host-memory staging buffers numbered `indices`, allocated on a thread of their own (pinning
/// memory takes milliseconds); `None` when no thread can be started.
fn spawn_host_slots(
    device: &wgpu::Device,
    bytes: u64,
    wanted: Staging,
    indices: std::ops::Range<usize>,
) -> Option<Pending> {
    let device = device.clone();
    std::thread::Builder::new()
        .name("dspk-staging".into())
        .spawn(move || host_slots(&device, bytes, wanted, indices).map(|(slots, _)| slots))
        .ok()
}

/// `count` of wgpu's mapped staging buffers, created mapped.
fn mapped_slots(device: &wgpu::Device, bytes: u64, count: usize) -> Vec<Slot> {
    (0..count)
        .map(|i| Slot {
            buffer: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(&format!("dspk staging {i}")),
                size: bytes,
                usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: true,
            }),
            memory: SlotMemory::Mapped(Arc::new(AtomicU8::new(MAPPED))),
            submission: None,
        })
        .collect()
}

/// Host-memory staging buffers (numbered `indices`), when `wanted` asks for them and the
/// device can give them.
#[cfg_attr(not(vulkan_host), expect(unused_variables, reason = "no Vulkan here"))]
fn host_slots(
    device: &wgpu::Device,
    bytes: u64,
    wanted: Staging,
    indices: std::ops::Range<usize>,
) -> Option<(Vec<Slot>, Staging)> {
    #[cfg(vulkan_host)]
    {
        let kind = match wanted {
            Staging::HostCached => host::HostMemoryKind::Cached,
            Staging::HostUncached => host::HostMemoryKind::Uncached,
            Staging::Mapped | Staging::Write => return None,
        };
        let mut made = Vec::with_capacity(indices.len());
        for i in indices {
            let label = format!("dspk host staging {i}");
            made.push(host::HostBuffer::new(device, bytes, kind, &label)?);
        }
        let staging = if made.iter().all(|h| h.cached) {
            Staging::HostCached
        } else {
            Staging::HostUncached
        };
        let slots = made
            .into_iter()
            .map(|h| Slot {
                buffer: h.buffer.clone(),
                memory: SlotMemory::Host(h),
                submission: None,
            })
            .collect();
        Some((slots, staging))
    }
    #[cfg(not(vulkan_host))]
    None
}
