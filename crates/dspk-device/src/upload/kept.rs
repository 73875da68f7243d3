//! What is kept between passes, for the process: idle host staging buffers per device,
//! compiled staging kernels per device and source, and fill-thread pools per thread count.
//! This module owns the three caches and the lock staging kernels compile under; [`release`]
//! drops the caches, once no kernel is compiling, before the devices they belong to are shut
//! down ([`crate::shutdown_devices`] and the exit teardown call it).

use std::sync::Arc;

use cubecl::wgpu::wgpu;
use parking_lot::Mutex;

use super::memory::Slot;
use super::staging::Staging;

/// Host staging buffers of dropped uploaders, kept for the next uploader of the same device
/// (pinning them cost 6-14 ms per pass on the H200, where a 60 s recording streams in ~35 ms;
/// PyTorch keeps its pinned memory the same way), up to [`STAGING_LIMIT`] bytes, newest last.
static STAGING: Mutex<Vec<IdleStaging>> = Mutex::new(Vec::new());

/// Bytes of pinned staging memory [`STAGING`] keeps at most (but for the newest set).
const STAGING_LIMIT: u64 = 256 << 20;

/// A dropped uploader's host staging buffers, idle.
pub(super) struct IdleStaging {
    /// Their device.
    pub device: wgpu::Device,
    /// Bytes each buffer holds.
    pub slot_bytes: u64,
    /// Their memory.
    pub staging: Staging,
    /// The buffers.
    pub slots: Vec<Slot>,
}

/// Staging kernels compiled so far, per device and source: the next pass on the device takes
/// the pipeline instead of compiling it again (~0.6 ms of a pass's setup on the H200).
static KERNELS: Mutex<Vec<KeptKernel>> = Mutex::new(Vec::new());

/// Kernels [`KERNELS`] keeps at most (the oldest go first).
const KERNEL_LIMIT: usize = 16;

/// A compiled staging kernel's pipeline, shared by every staging kernel of its source.
struct KeptKernel {
    device: wgpu::Device,
    wgsl: String,
    entry: String,
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

/// Held while a staging kernel compiles: kernels compile one at a time in the process. Two
/// devices of one H200 compiling the same kernel at once took 25-31 ms each (one alone 5-12 ms);
/// one after the other, the second took 1.3 ms, the driver keeping what it compiled. A compile
/// in flight for a device is waited for, and its kernel then found in [`KERNELS`].
static COMPILE: Mutex<()> = Mutex::new(());

/// The compile lock ([`COMPILE`]), held until the guard drops.
pub(super) fn compiling() -> parking_lot::MutexGuard<'static, ()> {
    COMPILE.lock()
}

/// Whether a pipeline for `wgsl`'s `entry` on `device` is kept.
pub(super) fn has_kernel(device: &wgpu::Device, wgsl: &str, entry: &str) -> bool {
    KERNELS
        .lock()
        .iter()
        .any(|k| k.device == *device && k.wgsl == wgsl && k.entry == entry)
}

/// Pools of fill threads made so far, shared by every uploader that asks for as many threads
/// (a later pass does not start its threads again).
static FILL_POOLS: Mutex<Vec<Arc<rayon::ThreadPool>>> = Mutex::new(Vec::new());

/// Drops every kept staging buffer, kernel and fill pool (before the devices are shut down).
pub(crate) fn release() {
    // A kernel compiling now (on a thread that prepares a device) finishes first.
    let _compiles = COMPILE.lock();
    drop(std::mem::take(&mut *STAGING.lock()));
    drop(std::mem::take(&mut *KERNELS.lock()));
    drop(std::mem::take(&mut *FILL_POOLS.lock()));
}

/// A kept set of at least `buffers` host staging buffers of `device` of the `wanted` kind
/// holding at least `bytes` each (and at most twice that, so a small uploader does not sit on
/// a large set).
pub(super) fn take_staging(
    device: &wgpu::Device,
    bytes: u64,
    wanted: Staging,
    buffers: usize,
) -> Option<IdleStaging> {
    let mut kept = STAGING.lock();
    let i = kept.iter().rposition(|c| {
        c.device == *device
            && c.staging == wanted
            && c.slots.len() >= buffers
            && c.slot_bytes >= bytes
            && c.slot_bytes <= bytes.saturating_mul(2)
    })?;
    Some(kept.remove(i))
}

/// How many staging buffers of `device` are kept.
pub(super) fn kept_buffers(device: &wgpu::Device) -> usize {
    STAGING
        .lock()
        .iter()
        .filter(|c| c.device == *device)
        .map(|c| c.slots.len())
        .sum()
}

/// Keeps `idle` for a later uploader; the oldest sets go first beyond [`STAGING_LIMIT`] (the
/// newest is kept whatever its size).
pub(super) fn keep_staging(idle: IdleStaging) {
    let mut kept = STAGING.lock();
    kept.push(idle);
    let held = |kept: &[IdleStaging]| -> u64 {
        kept.iter()
            .map(|c| c.slot_bytes * c.slots.len() as u64)
            .sum()
    };
    while kept.len() > 1 && held(&kept) > STAGING_LIMIT {
        kept.remove(0);
    }
}

/// The pipeline and bind group layout kept for `wgsl`'s `entry` on `device`, if compiled before.
pub(super) fn kernel(
    device: &wgpu::Device,
    wgsl: &str,
    entry: &str,
) -> Option<(wgpu::ComputePipeline, wgpu::BindGroupLayout)> {
    KERNELS
        .lock()
        .iter()
        .find(|k| k.device == *device && k.wgsl == wgsl && k.entry == entry)
        .map(|k| (k.pipeline.clone(), k.layout.clone()))
}

/// Keeps a compiled pipeline for `wgsl`'s `entry` on `device`, unless one is kept already.
pub(super) fn keep_kernel(
    device: &wgpu::Device,
    wgsl: &str,
    entry: &str,
    pipeline: &wgpu::ComputePipeline,
    layout: &wgpu::BindGroupLayout,
) {
    let mut kept = KERNELS.lock();
    if kept
        .iter()
        .any(|k| k.device == *device && k.wgsl == wgsl && k.entry == entry)
    {
        return;
    }
    if kept.len() >= KERNEL_LIMIT {
        kept.remove(0);
    }
    kept.push(KeptKernel {
        device: device.clone(),
        wgsl: wgsl.to_string(),
        entry: entry.to_string(),
        pipeline: pipeline.clone(),
        layout: layout.clone(),
    });
}

/// The kept pool of `threads` threads, else one made by `build` (and kept); `None` when
/// `build` cannot start one.
pub(super) fn fill_pool(
    threads: usize,
    build: impl FnOnce() -> Option<rayon::ThreadPool>,
) -> Option<Arc<rayon::ThreadPool>> {
    let mut pools = FILL_POOLS.lock();
    if let Some(pool) = pools.iter().find(|p| p.current_num_threads() == threads) {
        return Some(pool.clone());
    }
    let pool = Arc::new(build()?);
    pools.push(pool.clone());
    Some(pool)
}
