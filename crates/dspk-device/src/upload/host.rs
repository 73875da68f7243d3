//! Staging buffers in host memory on Vulkan: allocated by dspk, mapped once, copied by DMA.
//!
//! wgpu places every `MAP_WRITE` buffer in memory that is both device-local and host-visible
//! when the device has any (gpu-allocator's `CpuToGpu`; with resizable BAR that is all of a
//! discrete GPU's memory), so the CPU's stores cross the bus one by one, write-combined. Here
//! the staging buffer is allocated in system memory instead (a host-visible, host-coherent
//! memory type that is not device-local, cached where the driver offers one): the CPU fills it
//! at memory speed and the device's copy engine pulls it across the bus in bulk, like a pinned
//! host buffer in CUDA, or a staging kernel reads it in place. The buffer is handed to wgpu as
//! a `COPY_SRC | STORAGE` buffer it owns (it frees the buffer and its memory when the last
//! reference is gone); dspk keeps the mapping.

use std::ptr::NonNull;

use ash::vk;
use cubecl::wgpu::wgpu;
use wgpu::hal::api::Vulkan;

/// Which host memory a staging buffer asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HostMemoryKind {
    /// Host-cached system memory where the driver has it (CPU writes at cache speed).
    Cached,
    /// Uncached (write-combined) system memory.
    Uncached,
}

/// Host staging buffers alive (in uploaders or kept for the next one), per device.
static LIVE: parking_lot::Mutex<Vec<(wgpu::Device, usize)>> = parking_lot::Mutex::new(Vec::new());

/// How many host staging buffers of `device` are alive.
pub(super) fn live_buffers(device: &wgpu::Device) -> usize {
    LIVE.lock()
        .iter()
        .find(|(d, _)| d == device)
        .map_or(0, |(_, n)| *n)
}

/// Counts one more live buffer of `device`, or one fewer.
fn count(device: &wgpu::Device, more: bool) {
    let mut live = LIVE.lock();
    match live.iter().position(|(d, _)| d == device) {
        Some(i) if more => live[i].1 += 1,
        Some(i) => {
            live[i].1 = live[i].1.saturating_sub(1);
            if live[i].1 == 0 {
                live.swap_remove(i);
            }
        }
        None if more => live.push((device.clone(), 1)),
        None => {}
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        count(&self.device, false);
    }
}

/// A staging buffer in host memory, mapped for its whole life.
pub(super) struct HostBuffer {
    /// The wgpu buffer (`COPY_SRC`) over the memory; it owns the Vulkan buffer and memory.
    pub(super) buffer: wgpu::Buffer,
    ptr: NonNull<u8>,
    len: usize,
    /// Whether the memory is host-cached.
    pub(super) cached: bool,
    /// The device it stages for (counted in [`LIVE`]).
    device: wgpu::Device,
}

#[expect(
    unsafe_code,
    reason = "the mapping is plain memory owned by this value; it moves between threads with it"
)]
// SAFETY: the pointer is to a host mapping that lives as long as `buffer` (wgpu frees the
// memory only after the last reference to the buffer is gone), and it is only dereferenced
// through `&mut self`, so moving the value to another thread moves the exclusive access with it.
unsafe impl Send for HostBuffer {}

impl HostBuffer {
    /// A `len`-byte staging buffer in host memory of `device`, or `None` when the device is not
    /// a Vulkan device or has no host-visible, host-coherent memory type for it (the caller then
    /// uses wgpu's own mapped buffers).
    #[expect(
        unsafe_code,
        reason = "Vulkan calls on wgpu's raw device: creating, binding and mapping a buffer"
    )]
    pub(super) fn new(
        device: &wgpu::Device,
        len: u64,
        kind: HostMemoryKind,
        label: &str,
    ) -> Option<Self> {
        let len_usize = usize::try_from(len).ok()?;
        // SAFETY: the raw device is only used to create, bind and map objects this function
        // owns, and the guard is dropped before the buffer is handed to wgpu.
        let (raw_buffer, memory, size, cached, ptr) = unsafe {
            let hal = device.as_hal::<Vulkan>()?;
            let raw = hal.raw_device();
            let instance = hal.shared_instance().raw_instance();
            let properties =
                instance.get_physical_device_memory_properties(hal.raw_physical_device());
            let info = vk::BufferCreateInfo::default()
                .size(len)
                .usage(vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::STORAGE_BUFFER)
                .sharing_mode(vk::SharingMode::EXCLUSIVE);
            let buffer = raw.create_buffer(&info, None).ok()?;
            let requirements = raw.get_buffer_memory_requirements(buffer);
            let Some((type_index, flags)) =
                pick_memory_type(&properties, requirements.memory_type_bits, kind)
            else {
                raw.destroy_buffer(buffer, None);
                return None;
            };
            let alloc = vk::MemoryAllocateInfo::default()
                .allocation_size(requirements.size)
                .memory_type_index(type_index);
            let memory = match raw.allocate_memory(&alloc, None) {
                Ok(m) => m,
                Err(_) => {
                    raw.destroy_buffer(buffer, None);
                    return None;
                }
            };
            let mapped = raw.bind_buffer_memory(buffer, memory, 0).and_then(|()| {
                raw.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
            });
            let ptr = match mapped.ok().and_then(|p| NonNull::new(p.cast::<u8>())) {
                Some(p) => p,
                None => {
                    raw.destroy_buffer(buffer, None);
                    raw.free_memory(memory, None);
                    return None;
                }
            };
            let cached = flags.contains(vk::MemoryPropertyFlags::HOST_CACHED);
            (buffer, memory, requirements.size, cached, ptr)
        };
        // SAFETY: `raw_buffer` was created on this device with TRANSFER_SRC and STORAGE_BUFFER
        // usage (the descriptor's COPY_SRC and STORAGE), is bound to `memory` at offset 0 for
        // `size` bytes, and is not zero-sized (`len` ≥ 4, checked by the caller); wgpu-hal takes
        // ownership of both and frees them when the buffer is destroyed. wgpu never maps it
        // (no MAP_* usage); dspk writes through its own mapping only while no copy or kernel reads
        // it.
        let buffer = unsafe {
            let hal_buffer =
                wgpu::hal::vulkan::Buffer::from_raw_managed(raw_buffer, memory, 0, size);
            device.create_buffer_from_hal::<Vulkan>(
                hal_buffer,
                &wgpu::BufferDescriptor {
                    label: Some(label),
                    size: len,
                    usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::STORAGE,
                    mapped_at_creation: false,
                },
            )
        };
        count(device, true);
        Some(Self {
            buffer,
            ptr,
            len: len_usize,
            cached,
            device: device.clone(),
        })
    }

    /// The mapped bytes. The caller makes sure no device copy out of the buffer is in flight.
    #[expect(
        unsafe_code,
        reason = "a slice over the buffer's host mapping, exclusive through &mut self"
    )]
    pub(super) fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` maps `len` bytes of host-coherent memory that stays mapped as long as
        // `self.buffer` lives; `&mut self` makes this the only view of it on the host.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

/// The memory type for a host staging buffer: host-visible and host-coherent, preferring one
/// that is not device-local, then (for [`HostMemoryKind::Cached`]) host-cached, or (for
/// [`HostMemoryKind::Uncached`]) not host-cached.
fn pick_memory_type(
    properties: &vk::PhysicalDeviceMemoryProperties,
    type_bits: u32,
    kind: HostMemoryKind,
) -> Option<(u32, vk::MemoryPropertyFlags)> {
    let required = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
    let count = (properties.memory_type_count as usize).min(properties.memory_types.len());
    properties.memory_types[..count]
        .iter()
        .enumerate()
        .filter(|&(i, t)| type_bits & (1 << i) != 0 && t.property_flags.contains(required))
        .map(|(i, t)| {
            let flags = t.property_flags;
            let off_device = !flags.contains(vk::MemoryPropertyFlags::DEVICE_LOCAL);
            let cached = flags.contains(vk::MemoryPropertyFlags::HOST_CACHED);
            let cache_match = cached == (kind == HostMemoryKind::Cached);
            (
                u8::from(off_device) * 2 + u8::from(cache_match),
                i as u32,
                flags,
            )
        })
        // The best score; the lowest index among equals (Vulkan orders types by preference).
        .max_by_key(|&(score, i, _)| (score, std::cmp::Reverse(i)))
        .map(|(_, i, flags)| (i, flags))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(types: &[vk::MemoryPropertyFlags]) -> vk::PhysicalDeviceMemoryProperties {
        let mut p = vk::PhysicalDeviceMemoryProperties {
            memory_type_count: types.len() as u32,
            ..Default::default()
        };
        for (slot, &flags) in p.memory_types.iter_mut().zip(types) {
            slot.property_flags = flags;
        }
        p
    }

    #[test]
    fn picks_system_memory_over_bar_memory() {
        use vk::MemoryPropertyFlags as F;
        let hv = F::HOST_VISIBLE | F::HOST_COHERENT;
        // The shape of an NVIDIA discrete GPU with resizable BAR.
        let p = props(&[
            F::DEVICE_LOCAL,
            hv,
            hv | F::HOST_CACHED,
            F::DEVICE_LOCAL | hv,
        ]);
        assert_eq!(
            pick_memory_type(&p, !0, HostMemoryKind::Cached).map(|t| t.0),
            Some(2)
        );
        assert_eq!(
            pick_memory_type(&p, !0, HostMemoryKind::Uncached).map(|t| t.0),
            Some(1)
        );
        // Types the buffer cannot use are skipped.
        assert_eq!(
            pick_memory_type(&p, 0b1010, HostMemoryKind::Cached).map(|t| t.0),
            Some(1)
        );
        assert_eq!(
            pick_memory_type(&p, 0b1000, HostMemoryKind::Cached).map(|t| t.0),
            Some(3)
        );
        assert_eq!(pick_memory_type(&p, 0b0001, HostMemoryKind::Cached), None);
    }

    #[test]
    fn takes_unified_memory_when_that_is_all() {
        use vk::MemoryPropertyFlags as F;
        // The shape of lavapipe: one heap, every type device-local and host-visible.
        let all = F::DEVICE_LOCAL | F::HOST_VISIBLE | F::HOST_COHERENT;
        let p = props(&[all, all | F::HOST_CACHED]);
        assert_eq!(
            pick_memory_type(&p, !0, HostMemoryKind::Cached).map(|t| t.0),
            Some(1)
        );
        assert_eq!(
            pick_memory_type(&p, !0, HostMemoryKind::Uncached).map(|t| t.0),
            Some(0)
        );
    }
}
