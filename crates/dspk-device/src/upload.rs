//! Host→device uploads of windows into reusable device buffers, as fast as the runtime allows.
//!
//! [`Uploader`] owns two persistent staging buffers: several threads fill one in place while
//! the device copies out of the other, and the copy into the device buffer is queued on the
//! device's own queue, ordered after the kernels already launched. Nothing is allocated per
//! window. The staging memory ([`Staging`]):
//! - on Vulkan devices dspk opened, system memory that dspk allocates itself and maps once
//!   ([`Staging::HostCached`]): the CPU writes it at memory speed, the device's copy pulls it
//!   across the bus in bulk (what a pinned buffer is to CUDA). wgpu's own mapped buffers sit in
//!   the device's BAR memory when it has any, where each CPU store crosses the bus;
//! - on other wgpu devices dspk opened, wgpu's `MAP_WRITE | COPY_SRC` buffers, re-mapped as soon
//!   as their copy is queued ([`Staging::Mapped`]);
//! - elsewhere (other runtimes, devices registered by an embedding application), CubeCL's
//!   `Client::write` in pieces ([`Staging::Write`]); it allocates a staging buffer per call
//!   (measured at 0.56 GB/s for windows above 8 MiB on an H200).
//!
//! Host staging buffers (pinned memory) outlive their uploader: the next uploader of the same
//! device and a similar size takes them instead of pinning its own (up to 256 MiB are kept;
//! [`crate::shutdown_devices`] and the exit teardown release them). Filling runs on a pool of
//! fill threads kept for the process (released with them); [`Uploader::upload_while`] runs the
//! caller's own work meanwhile.
//!
//! Instead of a copy, [`Uploader::upload_through`] runs a [`StagingKernel`] (WGSL, compiled
//! once per device and kept) that reads the filled host staging buffer in place, across the
//! bus: dspk-kernels' decode in staging, so that a window is pulled onto the device by the
//! kernel that decodes it, with no device input buffer and no copy taking turns with the
//! decode on the device's one queue.
//!
//! `DSPK_UPLOAD` ([`UPLOAD_ENV`]) picks a path by name, for measurements.

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

#[cfg(vulkan_host)]
mod host;

/// Copy alignment of device buffers, in bytes.
const COPY_ALIGN: u64 = 4;

/// Bytes per `Client::write` on the fallback path (larger writes were measured to collapse).
const FALLBACK_PIECE_BYTES: usize = 8 << 20;

/// The environment variable that picks the upload path (for measurements):
/// `host`, `host-uncached`, `mapped` or `write` (see [`Staging`]). Unset: the fastest available.
pub const UPLOAD_ENV: &str = "DSPK_UPLOAD";

/// Where an [`Uploader`]'s bytes wait before the device copies them in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Staging {
    /// A buffer in host-cached system memory that dspk allocated on the Vulkan device, mapped
    /// once; the device's copy pulls it across the bus (like a pinned host buffer). The default
    /// on Vulkan.
    HostCached,
    /// The same in uncached (write-combined) system memory.
    HostUncached,
    /// wgpu's own `MAP_WRITE` buffers, re-mapped after every copy. wgpu puts them in
    /// device-local, host-visible memory where the device has it (a discrete GPU's BAR), so
    /// the CPU's stores are what cross the bus. The default on wgpu devices that are not Vulkan.
    Mapped,
    /// CubeCL's `Client::write` in pieces: other runtimes, and devices dspk did not open.
    Write,
}

impl Staging {
    /// The name `DSPK_UPLOAD` takes for this path.
    pub fn name(self) -> &'static str {
        match self {
            Staging::HostCached => "host",
            Staging::HostUncached => "host-uncached",
            Staging::Mapped => "mapped",
            Staging::Write => "write",
        }
    }

    /// The path `name` names (as in [`Staging::name`]).
    pub fn from_name(name: &str) -> DspResult<Self> {
        [
            Staging::HostCached,
            Staging::HostUncached,
            Staging::Mapped,
            Staging::Write,
        ]
        .into_iter()
        .find(|s| s.name() == name)
        .ok_or_else(|| {
            DspError::config(format!(
                "{UPLOAD_ENV}={name:?} is not an upload path (host, host-uncached, mapped, write)"
            ))
        })
    }

    /// The path asked for by `DSPK_UPLOAD`, if set.
    pub fn from_env() -> DspResult<Option<Self>> {
        match std::env::var(UPLOAD_ENV) {
            Ok(v) if !v.trim().is_empty() => Self::from_name(v.trim()).map(Some),
            _ => Ok(None),
        }
    }
}

/// Uploads windows of at most a fixed size into device buffers (see the module docs).
pub struct Uploader {
    client: Client,
    capacity: u64,
    path: UploadPath,
}

enum UploadPath {
    #[cfg(feature = "wgpu")]
    Staged(StagedUploader),
    Write,
}

impl Uploader {
    /// An uploader for `client` carrying up to `capacity` bytes per upload, filled by `threads`
    /// threads (at least one), through the path `DSPK_UPLOAD` names, else the fastest this
    /// device has ([`Staging::HostCached`] on Vulkan, then [`Staging::Mapped`], then
    /// [`Staging::Write`]).
    pub fn new(client: &Client, capacity: u64, threads: usize) -> DspResult<Self> {
        let wanted = Staging::from_env()?.unwrap_or(Staging::HostCached);
        Ok(Self::with_staging(client, capacity, threads, wanted))
    }

    /// As [`Uploader::new`], asking for `wanted`; a path the device does not offer falls back
    /// to the next one in the order host, mapped, write ([`Uploader::staging`] says which).
    pub fn with_staging(client: &Client, capacity: u64, threads: usize, wanted: Staging) -> Self {
        let threads = threads.max(1);
        #[cfg(feature = "wgpu")]
        if wanted != Staging::Write
            && let Some((device, queue)) = crate::registry::wgpu_handles_of(client)
        {
            let staged = StagedUploader::new(client, device, queue, capacity, threads, wanted);
            return Self {
                client: client.clone(),
                capacity: staged.capacity(),
                path: UploadPath::Staged(staged),
            };
        }
        let _ = (wanted, threads);
        Self {
            client: client.clone(),
            capacity: capacity.next_multiple_of(COPY_ALIGN),
            path: UploadPath::Write,
        }
    }

    /// The path uploads take.
    pub fn staging(&self) -> Staging {
        match &self.path {
            #[cfg(feature = "wgpu")]
            UploadPath::Staged(s) => s.staging,
            UploadPath::Write => Staging::Write,
        }
    }

    /// Whether this uploader took its staging buffers from one dropped earlier on the same
    /// device (host staging buffers are kept for the next uploader: pinning them costs
    /// milliseconds), rather than allocating its own.
    pub fn reused_staging(&self) -> bool {
        match &self.path {
            #[cfg(feature = "wgpu")]
            UploadPath::Staged(s) => s.reused,
            UploadPath::Write => false,
        }
    }

    /// Whether uploads go through dspk's own staging buffers (else `Client::write`).
    pub fn is_staged(&self) -> bool {
        self.staging() != Staging::Write
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
        self.upload_while(dst, len, align, fill, || Ok(()))
    }

    /// [`upload`](Self::upload), running `during` on the calling thread while the fill threads
    /// work (the host's share of the previous window, say). Kernels `during` launches are
    /// ordered before the copy. The first error of `fill` or `during` is the result; `during`
    /// runs once (also when `len` is 0, or `fill` fails), unless the upload fails before the
    /// fill begins.
    pub fn upload_while<F, D>(
        &mut self,
        dst: &Handle,
        len: usize,
        align: usize,
        fill: F,
        during: D,
    ) -> DspResult<()>
    where
        F: Fn(usize, &mut [u8]) -> DspResult<()> + Sync,
        D: FnOnce() -> DspResult<()>,
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
            return during();
        }
        match &mut self.path {
            #[cfg(feature = "wgpu")]
            UploadPath::Staged(staged) => staged.upload(Sink::Copy(dst), len, align, fill, during),
            UploadPath::Write => {
                during()?;
                let total = dst.size_in_used();
                if total < padded {
                    return Err(DspError::BufferOverrun {
                        what: "device input buffer".into(),
                        capacity: total as usize,
                        needed: padded as usize,
                    });
                }
                // Pieces of whole `align` units that also start at 4-byte offsets (writes must).
                let unit = lcm(align.max(1), COPY_ALIGN as usize);
                let piece_len = (FALLBACK_PIECE_BYTES / unit).max(1) * unit;
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
                Ok(())
            }
        }
    }

    /// The time to copy `len` bytes out of the already filled staging buffers into `dst` (as an
    /// upload queues them: one copy per staging buffer's worth), submitted and waited for, the
    /// median of `iters` (the host→device bandwidth this path reaches for one window alone);
    /// `None` on the `Client::write` path, which has no staging buffer of its own.
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

    /// Whether [`upload_through`](Self::upload_through) can run here: the staging buffers are
    /// dspk's own host memory (Vulkan), which a kernel can read in place.
    pub fn runs_staging_kernels(&self) -> bool {
        matches!(self.staging(), Staging::HostCached | Staging::HostUncached)
    }

    /// The most bytes one [`upload_through`](Self::upload_through) carries (one staging
    /// buffer's worth; 0 where staging kernels cannot run).
    pub fn staging_kernel_capacity(&self) -> u64 {
        match &self.path {
            #[cfg(feature = "wgpu")]
            UploadPath::Staged(s) if self.runs_staging_kernels() => s.slot_bytes.min(s.capacity),
            _ => 0,
        }
    }

    /// Compiles `wgsl`'s compute entry point `entry` (see [`StagingKernel`] for its bindings;
    /// `buffers` device buffers follow the staging buffer) for
    /// [`upload_through`](Self::upload_through); `None` where staging kernels cannot run
    /// ([`runs_staging_kernels`](Self::runs_staging_kernels)). A shader the device refuses is
    /// an error that names `label` and gives the device's message.
    pub fn staging_kernel(
        &self,
        label: &str,
        wgsl: &str,
        entry: &str,
        buffers: usize,
    ) -> DspResult<Option<StagingKernel>> {
        match &self.path {
            #[cfg(feature = "wgpu")]
            UploadPath::Staged(s) if self.runs_staging_kernels() => {
                compile_staging_kernel(&s.device, label, wgsl, entry, buffers).map(Some)
            }
            _ => {
                let _ = (label, wgsl, entry, buffers);
                Ok(None)
            }
        }
    }

    /// Fills `len` bytes through `fill(offset, piece)` (as [`upload_while`](Self::upload_while)
    /// does, running `during` meanwhile) into one staging buffer, then runs `launch`'s kernel
    /// over it in place, ordered after every kernel launched on the client so far and before
    /// any launched after. No device input buffer is written: the kernel reads the window
    /// across the bus.
    ///
    /// Refused where staging kernels cannot run, for a launch of a kernel with another number
    /// of buffers or too many parameters, and for `len` above
    /// [`staging_kernel_capacity`](Self::staging_kernel_capacity).
    pub fn upload_through<F, D>(
        &mut self,
        launch: StagingLaunch<'_>,
        len: usize,
        align: usize,
        fill: F,
        during: D,
    ) -> DspResult<()>
    where
        F: Fn(usize, &mut [u8]) -> DspResult<()> + Sync,
        D: FnOnce() -> DspResult<()>,
    {
        if !self.runs_staging_kernels() {
            return Err(not_in_place(launch.kernel, self.staging()));
        }
        check_launch(&launch)?;
        check_fits(&launch, len, self.staging_kernel_capacity())?;
        if len == 0 {
            return during();
        }
        match &mut self.path {
            #[cfg(feature = "wgpu")]
            UploadPath::Staged(staged) => {
                staged.upload(Sink::Kernel(launch), len, align, fill, during)
            }
            _ => {
                let _ = (align, fill);
                Err(not_in_place(launch.kernel, Staging::Write))
            }
        }
    }

    /// The time `launch`'s kernel takes over a `len`-byte window already in a staging buffer
    /// (the one [`upload_through`](Self::upload_through) filled last, or any), submitted and
    /// waited for, the median of `iters` (the bandwidth at which a staging kernel pulls one
    /// window across the bus); `None` where staging kernels cannot run, or for an empty window.
    pub fn time_through(
        &mut self,
        launch: StagingLaunch<'_>,
        len: usize,
        iters: usize,
    ) -> DspResult<Option<std::time::Duration>> {
        if !self.runs_staging_kernels() || len == 0 {
            return Ok(None);
        }
        check_launch(&launch)?;
        check_fits(&launch, len, self.staging_kernel_capacity())?;
        match &mut self.path {
            #[cfg(feature = "wgpu")]
            UploadPath::Staged(staged) => staged.time_through(launch, len, iters).map(Some),
            _ => {
                let _ = iters;
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

/// A compute kernel that reads a filled staging buffer in place: the window crosses the bus
/// once, pulled by the kernel itself, with no copy into a device input buffer first (see
/// [`Uploader::upload_through`]). Made by [`Uploader::staging_kernel`] or
/// [`compile_staging_kernel_for`]; its pipeline is compiled once per device and source and kept.
///
/// Its WGSL declares, in bind group 0: binding 0, `var<storage, read>` `array<u32>` of launch
/// parameters; binding 1, `var<storage, read>` over the staging bytes (the window, zero to 15
/// stale bytes after it up to a multiple of 16); bindings 2 and on, the device buffers of the
/// launch, in order.
pub struct StagingKernel {
    #[cfg(feature = "wgpu")]
    pipeline: wgpu::ComputePipeline,
    #[cfg(feature = "wgpu")]
    layout: wgpu::BindGroupLayout,
    #[cfg(feature = "wgpu")]
    params: wgpu::Buffer,
    buffers: usize,
    label: String,
}

impl std::fmt::Debug for StagingKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StagingKernel")
            .field("label", &self.label)
            .field("buffers", &self.buffers)
            .finish_non_exhaustive()
    }
}

/// The launch parameters a [`StagingKernel`] takes at most (`u32` words).
pub const STAGING_KERNEL_PARAMS: usize = 16;

/// One launch of a [`StagingKernel`] over a filled staging buffer.
#[derive(Debug, Clone, Copy)]
pub struct StagingLaunch<'a> {
    /// The kernel.
    pub kernel: &'a StagingKernel,
    /// The device buffers bound after the staging buffer (bindings 2, 3, ...).
    pub buffers: &'a [Handle],
    /// The launch parameters (binding 0), at most [`STAGING_KERNEL_PARAMS`].
    pub params: &'a [u32],
    /// Workgroups along x.
    pub workgroups: u32,
}

/// What an upload does with a filled staging buffer.
#[cfg(feature = "wgpu")]
enum Sink<'a> {
    /// Copies it into the device buffer (from its start).
    Copy(&'a Handle),
    /// Runs a kernel that reads it in place.
    Kernel(StagingLaunch<'a>),
}

#[cfg(feature = "wgpu")]
impl Sink<'_> {
    /// Submits the kernels already launched on `client` (they may still use the device buffers
    /// this sink writes), then resolves those buffers (see [`flushed_targets`]); a copy's
    /// target must hold `padded` bytes.
    fn resolve(
        &self,
        client: &Client,
        padded: u64,
    ) -> DspResult<(Vec<WgpuResource>, Vec<impl Sized + use<>>)> {
        let handles = match self {
            Sink::Copy(dst) => std::slice::from_ref(*dst),
            Sink::Kernel(launch) => launch.buffers,
        };
        let (targets, bound) = flushed_targets(client, handles)?;
        if let Sink::Copy(_) = self
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

    /// A fresh encoder with what this sink does with the first `n` bytes of `staging`: their
    /// copy to byte `done` of the target, or the kernel over them (`targets` from
    /// [`resolve`](Self::resolve)).
    fn record(
        &self,
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
        match self {
            Sink::Copy(_) => {
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
            Sink::Kernel(launch) => {
                // `upload_through` checked that the window fits one staging buffer.
                let bytes = (n as u64)
                    .next_multiple_of(STAGING_KERNEL_ALIGN)
                    .min(staging.size());
                record_staging_kernel(
                    device,
                    queue,
                    &mut encoder,
                    launch,
                    staging,
                    bytes,
                    targets,
                )?;
            }
        }
        Ok(encoder)
    }
}

/// Compiles a [`StagingKernel`] for `client`'s device (see [`Uploader::staging_kernel`]) without
/// an uploader, e.g. on a helper thread while an uploader pins its staging memory; `None` where
/// the client is not a wgpu device dspk opened. Whether uploads can run it is the uploader's
/// [`Uploader::runs_staging_kernels`].
pub fn compile_staging_kernel_for(
    client: &Client,
    label: &str,
    wgsl: &str,
    entry: &str,
    buffers: usize,
) -> DspResult<Option<StagingKernel>> {
    #[cfg(feature = "wgpu")]
    if let Some((device, _)) = crate::registry::wgpu_handles_of(client) {
        return compile_staging_kernel(&device, label, wgsl, entry, buffers).map(Some);
    }
    let _ = (client, label, wgsl, entry, buffers);
    Ok(None)
}

/// Refuses a launch whose buffers do not match its kernel's, or with too many parameters.
fn check_launch(launch: &StagingLaunch<'_>) -> DspResult<()> {
    if launch.buffers.len() != launch.kernel.buffers {
        return Err(DspError::shape(
            "device buffers of a staging kernel launch",
            launch.kernel.buffers,
            launch.buffers.len(),
        ));
    }
    if launch.params.len() > STAGING_KERNEL_PARAMS {
        return Err(DspError::BufferOverrun {
            what: format!("launch parameters of the kernel {}", launch.kernel.label),
            capacity: STAGING_KERNEL_PARAMS,
            needed: launch.params.len(),
        });
    }
    Ok(())
}

/// Refuses a `len`-byte window for a staging buffer of `capacity` bytes.
fn check_fits(launch: &StagingLaunch<'_>, len: usize, capacity: u64) -> DspResult<()> {
    if len as u64 > capacity {
        return Err(DspError::BufferOverrun {
            what: format!(
                "staging buffer read in place by the kernel {}",
                launch.kernel.label
            ),
            capacity: capacity as usize,
            needed: len,
        });
    }
    Ok(())
}

/// The refusal of a staging kernel where uploads go through `staging`.
fn not_in_place(kernel: &StagingKernel, staging: Staging) -> DspError {
    DspError::config(format!(
        "the kernel {} reads host staging buffers in place, and uploads here go through {} \
         staging",
        kernel.label,
        staging.name()
    ))
}

/// Compiles a [`StagingKernel`] on `device`; the device's validation message is the error.
#[cfg(feature = "wgpu")]
fn compile_staging_kernel(
    device: &wgpu::Device,
    label: &str,
    wgsl: &str,
    entry: &str,
    buffers: usize,
) -> DspResult<StagingKernel> {
    let cached = KERNEL_CACHE
        .lock()
        .iter()
        .find(|k| k.device == *device && k.wgsl == wgsl && k.entry == entry)
        .map(|k| (k.pipeline.clone(), k.layout.clone()));
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let (pipeline, layout) = match cached {
        Some(found) => found,
        None => {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(label),
                source: wgpu::ShaderSource::Wgsl(wgsl.into()),
            });
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(label),
                layout: None,
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            });
            let layout = pipeline.get_bind_group_layout(0);
            (pipeline, layout)
        }
    };
    // Each kernel has parameters of its own: two passes may launch the same pipeline at once.
    let params = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: (STAGING_KERNEL_PARAMS * 4) as u64,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    if let Some(error) = resolve_now(device, scope.pop()) {
        return Err(DspError::config(format!(
            "the device refused the kernel {label}: {error}"
        )));
    }
    let mut cache = KERNEL_CACHE.lock();
    if !cache
        .iter()
        .any(|k| k.device == *device && k.wgsl == wgsl && k.entry == entry)
    {
        if cache.len() >= KERNEL_CACHE_LIMIT {
            cache.remove(0);
        }
        cache.push(CachedKernel {
            device: device.clone(),
            wgsl: wgsl.to_string(),
            entry: entry.to_string(),
            pipeline: pipeline.clone(),
            layout: layout.clone(),
        });
    }
    drop(cache);
    Ok(StagingKernel {
        pipeline,
        layout,
        params,
        buffers,
        label: label.to_string(),
    })
}

/// The value of a wgpu future that native wgpu resolves at once (polling the device while it
/// is not ready, for good measure).
#[cfg(feature = "wgpu")]
fn resolve_now<T>(device: &wgpu::Device, future: impl std::future::Future<Output = T>) -> T {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
        let _ = device.poll(wgpu::PollType::Poll);
        std::thread::yield_now();
    }
}

#[cfg(feature = "wgpu")]
const PENDING: u8 = 0;
#[cfg(feature = "wgpu")]
const MAPPED: u8 = 1;
#[cfg(feature = "wgpu")]
const FAILED: u8 = 2;

/// Bytes a worker moves per step through its scratch buffer when the staging memory is not
/// host-cached: small enough to stay in its core's cache between the read from the source and
/// the write into write-combined memory.
#[cfg(feature = "wgpu")]
const PIECE_BYTES: usize = 1 << 20;

/// The memory behind one staging buffer.
#[cfg(feature = "wgpu")]
enum SlotMemory {
    /// wgpu's mapped buffer; the state of its latest `map_async`.
    Mapped(Arc<AtomicU8>),
    /// dspk's host buffer, mapped for good.
    #[cfg(vulkan_host)]
    Host(host::HostBuffer),
}

#[cfg(feature = "wgpu")]
struct Slot {
    buffer: wgpu::Buffer,
    memory: SlotMemory,
    /// The submission of the latest copy out of this buffer, until it is known to be done.
    submission: Option<wgpu::SubmissionIndex>,
}

#[cfg(feature = "wgpu")]
impl Slot {
    /// After a copy out of the buffer was queued: make it writable again once the copy is done
    /// (wgpu's buffers are re-mapped; host buffers need nothing but the wait).
    fn after_copy(&mut self, submission: wgpu::SubmissionIndex) {
        self.submission = Some(submission);
        if let SlotMemory::Mapped(state) = &self.memory {
            state.store(PENDING, Ordering::Release);
            let state = state.clone();
            self.buffer.map_async(wgpu::MapMode::Write, .., move |r| {
                state.store(if r.is_ok() { MAPPED } else { FAILED }, Ordering::Release);
            });
        }
    }
}

#[cfg(feature = "wgpu")]
fn device_error(what: &str, e: impl std::fmt::Display) -> DspError {
    DspError::config(format!("{what}: {e}"))
}

/// Bytes per staging buffer at most (larger windows cross in chunks of this size). Measured on
/// the H200: a ring of three 8 MiB buffers made one-second windows (23 MB) slower than a buffer
/// per window (upload 27 vs 38 GB/s; 8 MiB copies ran at 34 GB/s against 41 for 23 MB), so a
/// window of up to this size crosses in one copy.
#[cfg(feature = "wgpu")]
const STAGING_CHUNK: u64 = 64 << 20;

/// Staging buffers in the ring: one being filled while the copy out of the other runs.
#[cfg(feature = "wgpu")]
const STAGING_SLOTS: usize = 2;

/// Host staging buffers of dropped uploaders, kept for the next uploader of the same device
/// (pinning them cost 6-14 ms per pass on the H200, where a 60 s recording streams in ~35 ms;
/// PyTorch keeps its pinned memory the same way), up to [`STAGING_CACHE_LIMIT`] bytes, newest
/// last. Released by [`crate::shutdown_devices`] and at exit.
#[cfg(feature = "wgpu")]
static STAGING_CACHE: parking_lot::Mutex<Vec<CachedStaging>> = parking_lot::Mutex::new(Vec::new());

/// Bytes of pinned staging memory [`STAGING_CACHE`] keeps at most (but for the newest set).
#[cfg(feature = "wgpu")]
const STAGING_CACHE_LIMIT: u64 = 256 << 20;

/// A dropped uploader's host staging buffers, idle.
#[cfg(feature = "wgpu")]
struct CachedStaging {
    device: wgpu::Device,
    slot_bytes: u64,
    staging: Staging,
    slots: Vec<Slot>,
}

/// Staging kernels compiled so far, per device and source: the next pass on the device takes
/// the pipeline instead of compiling it again (~0.6 ms of a pass's setup on the H200). Released
/// with [`STAGING_CACHE`].
#[cfg(feature = "wgpu")]
static KERNEL_CACHE: parking_lot::Mutex<Vec<CachedKernel>> = parking_lot::Mutex::new(Vec::new());

/// Kernels [`KERNEL_CACHE`] keeps at most (the oldest go first).
#[cfg(feature = "wgpu")]
const KERNEL_CACHE_LIMIT: usize = 16;

/// A compiled staging kernel's pipeline, shared by every [`StagingKernel`] of its source.
#[cfg(feature = "wgpu")]
struct CachedKernel {
    device: wgpu::Device,
    wgsl: String,
    entry: String,
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

/// Drops every cached staging buffer, kernel and fill pool (before the devices are shut down).
pub(crate) fn release_cached_staging() {
    #[cfg(feature = "wgpu")]
    {
        drop(std::mem::take(&mut *STAGING_CACHE.lock()));
        drop(std::mem::take(&mut *KERNEL_CACHE.lock()));
        drop(std::mem::take(&mut *FILL_POOLS.lock()));
    }
}

/// Cached host staging buffers of `device` of the `wanted` kind holding at least `bytes` each
/// (and at most twice that, so a small uploader does not sit on a large set).
#[cfg(feature = "wgpu")]
fn take_cached(device: &wgpu::Device, bytes: u64, wanted: Staging) -> Option<CachedStaging> {
    let mut cache = STAGING_CACHE.lock();
    let i = cache.iter().rposition(|c| {
        c.device == *device
            && c.staging == wanted
            && c.slot_bytes >= bytes
            && c.slot_bytes <= bytes.saturating_mul(2)
    })?;
    Some(cache.remove(i))
}

/// Uploads through a ring of persistent staging buffers (host memory or wgpu's mapped buffers)
/// of at most [`STAGING_CHUNK`] bytes: filling one overlaps the device's copy out of the other.
#[cfg(feature = "wgpu")]
struct StagedUploader {
    client: Client,
    device: wgpu::Device,
    queue: wgpu::Queue,
    slots: Vec<Slot>,
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
    /// Whether the slots came from [`STAGING_CACHE`].
    reused: bool,
}

#[cfg(feature = "wgpu")]
impl StagedUploader {
    /// An uploader of up to `capacity` bytes per upload through [`STAGING_SLOTS`] staging
    /// buffers of the `wanted` kind where the device has it (else wgpu's mapped buffers);
    /// `threads` workers fill them.
    fn new(
        client: &Client,
        device: wgpu::Device,
        queue: wgpu::Queue,
        capacity: u64,
        threads: usize,
        wanted: Staging,
    ) -> Self {
        // Whole 16-byte units, so that a staging kernel reads every byte as `vec4<u32>`.
        let capacity = capacity.max(4).next_multiple_of(STAGING_KERNEL_ALIGN);
        let slot_bytes = capacity.min(STAGING_CHUNK);
        if let Some(cached) = take_cached(&device, slot_bytes, wanted) {
            return Self {
                client: client.clone(),
                device,
                queue,
                slots: cached.slots,
                next: 0,
                slot_bytes: cached.slot_bytes,
                capacity,
                pool: fill_pool(threads),
                wanted,
                staging: cached.staging,
                pending: None,
                reused: true,
            };
        }
        // One host buffer now, the rest on a helper thread: the first window does not wait for
        // the second buffer's memory to be pinned.
        let (slots, staging, pending) = match host_slots(&device, slot_bytes, wanted, 0..1) {
            Some((first, staging)) => {
                let rest = 1..STAGING_SLOTS;
                match spawn_host_slots(&device, slot_bytes, wanted, rest.clone()) {
                    Some(handle) => (first, staging, Some(handle)),
                    None => {
                        let mut slots = first;
                        if let Some((more, _)) = host_slots(&device, slot_bytes, wanted, rest) {
                            slots.extend(more);
                        }
                        (slots, staging, None)
                    }
                }
            }
            None => (mapped_slots(&device, slot_bytes), Staging::Mapped, None),
        };
        Self {
            client: client.clone(),
            device,
            queue,
            slots,
            next: 0,
            slot_bytes,
            capacity,
            pool: fill_pool(threads),
            wanted,
            staging,
            pending,
            reused: false,
        }
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

    /// Bytes one upload can carry.
    fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Makes every staging buffer hold at least `bytes` (for pieces larger than a chunk).
    fn grow_slots(&mut self, bytes: u64) -> DspResult<()> {
        self.adopt_pending(true);
        self.wait_idle()?;
        let bytes = bytes.next_multiple_of(STAGING_KERNEL_ALIGN);
        let (slots, staging) = make_slots(&self.device, bytes, self.wanted);
        self.slots = slots;
        self.staging = staging;
        self.slot_bytes = bytes;
        self.next = 0;
        Ok(())
    }

    /// Waits until slot `i` can be written: its latest copy is done (and, for wgpu's buffers,
    /// the buffer is mapped again).
    fn wait_ready(&mut self, i: usize) -> DspResult<()> {
        let slot = &mut self.slots[i];
        loop {
            let ready = match &slot.memory {
                SlotMemory::Mapped(state) => match state.load(Ordering::Acquire) {
                    MAPPED => true,
                    FAILED => {
                        return Err(DspError::config("a staging buffer could not be mapped"));
                    }
                    _ => false,
                },
                #[cfg(vulkan_host)]
                SlotMemory::Host(_) => slot.submission.is_none(),
            };
            if ready {
                return Ok(());
            }
            let submission_index = slot.submission.clone();
            self.device
                .poll(wgpu::PollType::Wait {
                    submission_index,
                    timeout: None,
                })
                .map_err(|e| device_error("waiting for the device failed", e))?;
            #[cfg(vulkan_host)]
            if let SlotMemory::Host(_) = slot.memory {
                // The wait above returned after that submission completed.
                slot.submission = None;
            }
        }
    }

    /// Fills `len` bytes chunk by chunk through the staging ring and copies them into `dst`
    /// (from its start).
    ///
    /// `fill(offset, piece)` is called for consecutive pieces that together cover `0..len`, each
    /// a multiple of `align` bytes long (except where `len` itself is not), from several threads
    /// at once. The copies are queued on the device after every kernel launched on `client` so
    /// far, and before any launched after.
    fn upload<F, D>(
        &mut self,
        sink: Sink<'_>,
        len: usize,
        align: usize,
        fill: F,
        during: D,
    ) -> DspResult<()>
    where
        F: Fn(usize, &mut [u8]) -> DspResult<()> + Sync,
        D: FnOnce() -> DspResult<()>,
    {
        // `Uploader::upload` has checked `len` against the capacity and skipped empty uploads.
        let padded = (len as u64).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        self.adopt_pending(false);
        // Chunks are whole pieces and start where mapping and copying allow.
        let unit = lcm(align.max(1), wgpu::MAP_ALIGNMENT as usize);
        if unit as u64 > self.slot_bytes && (len as u64) > self.slot_bytes {
            self.grow_slots((unit as u64).min(padded))?;
        }
        let chunk = match sink {
            // A kernel reads the window in one staging buffer (`upload_through` checked that
            // it fits; host buffers are never mapped piecewise).
            Sink::Kernel(_) => self.slot_bytes as usize,
            Sink::Copy(_) => ((self.slot_bytes as usize / unit) * unit).max(unit),
        };
        let client = self.client.clone();
        // The kernels launched so far (the previous window's decode) start on the device now,
        // while the host fills. A staging kernel is not one of them (it is submitted here, not
        // through the client), and the flush would wait for whatever the device's thread is
        // still doing (at a pass's start, compiling and allocating) before the fill can begin.
        if let Sink::Copy(_) = sink {
            client
                .flush()
                .map_err(|e| device_error("submitting queued kernels failed", e))?;
        }
        let mut during = Some(during);
        let mut resolved: Option<(Vec<WgpuResource>, Vec<_>)> = None;
        let mut done = 0usize;
        while done < len {
            let n = chunk.min(len - done);
            let i = self.next;
            self.next = (self.next + 1) % self.slots.len();
            self.wait_ready(i)?;
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
                    None => resolved.insert(sink.resolve(&client, padded)?),
                };
                recorded = Some(sink.record(device, queue, buffer, n, done, targets)?);
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
                    let parts = slice_parts(&mut host.bytes_mut()[..n], align, threads);
                    fill_parts(pool, parts, align, scratch, &shifted, during)?;
                }
            }
            // `fill_parts` returns `Ok` only after `during` did.
            let encoder = recorded.ok_or_else(|| {
                DspError::config("a staging buffer was filled but its commands were not recorded")
            })?;
            let submission = self.queue.submit([encoder.finish()]);
            slot.after_copy(submission);
            done += n;
        }
        Ok(())
    }

    /// See [`Uploader::time_copy`]: the copies of a `len`-byte window out of the filled staging
    /// ring (chunk by chunk, as [`upload`](Self::upload) queues them), submitted together.
    fn time_copy(
        &mut self,
        dst: &Handle,
        len: usize,
        iters: usize,
    ) -> DspResult<std::time::Duration> {
        self.adopt_pending(true);
        self.wait_idle()?;
        let client = self.client.clone();
        let (target, _bound) = flushed_target(&client, dst)?;
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
        let slots = &self.slots;
        let slot_bytes = self.slot_bytes;
        let (time, last) = time_submissions(&self.device, &self.queue, iters, |encoder| {
            let mut done = 0u64;
            let mut k = 0;
            while done < len {
                let n = slot_bytes.min(len - done);
                let slot = &slots[k % slots.len()];
                encoder.copy_buffer_to_buffer(
                    &slot.buffer,
                    0,
                    &target.buffer,
                    target.offset + done,
                    n,
                );
                done += n;
                k += 1;
            }
            Ok(())
        })?;
        for slot in &mut self.slots {
            slot.after_copy(last.clone());
        }
        Ok(time)
    }

    /// See [`Uploader::time_through`]: `launch` over the first `len` bytes of staging buffer 0.
    fn time_through(
        &mut self,
        launch: StagingLaunch<'_>,
        len: usize,
        iters: usize,
    ) -> DspResult<std::time::Duration> {
        self.adopt_pending(true);
        self.wait_idle()?;
        let client = self.client.clone();
        let (targets, _bound) = flushed_targets(&client, launch.buffers)?;
        let slot = &self.slots[0];
        let bytes = (len as u64)
            .next_multiple_of(STAGING_KERNEL_ALIGN)
            .min(slot.buffer.size());
        let (device, queue) = (&self.device, &self.queue);
        let (time, last) = time_submissions(device, queue, iters, |encoder| {
            record_staging_kernel(
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

    fn wait_idle(&mut self) -> DspResult<()> {
        for i in 0..self.slots.len() {
            self.wait_ready(i)?;
        }
        Ok(())
    }
}

/// Host staging buffers go to [`STAGING_CACHE`] for a later uploader of the device, once idle.
#[cfg(feature = "wgpu")]
impl Drop for StagedUploader {
    fn drop(&mut self) {
        if !matches!(self.staging, Staging::HostCached | Staging::HostUncached) {
            return;
        }
        self.adopt_pending(true);
        if self.wait_idle().is_err() || self.slots.len() < STAGING_SLOTS {
            return;
        }
        let cached = CachedStaging {
            device: self.device.clone(),
            slot_bytes: self.slot_bytes,
            staging: self.staging,
            slots: std::mem::take(&mut self.slots),
        };
        let mut cache = STAGING_CACHE.lock();
        cache.push(cached);
        // The oldest sets go first beyond the limit (the newest is kept whatever its size).
        let held = |cache: &[CachedStaging]| -> u64 {
            cache
                .iter()
                .map(|c| c.slot_bytes * c.slots.len() as u64)
                .sum()
        };
        while cache.len() > 1 && held(&cache) > STAGING_CACHE_LIMIT {
            cache.remove(0);
        }
    }
}

/// [`STAGING_SLOTS`] staging buffers of `bytes` bytes: host memory where `wanted` asks for it
/// and the device can give it, else wgpu's mapped buffers (created mapped); and which they are.
#[cfg(feature = "wgpu")]
fn make_slots(device: &wgpu::Device, bytes: u64, wanted: Staging) -> (Vec<Slot>, Staging) {
    if let Some(found) = host_slots(device, bytes, wanted, 0..STAGING_SLOTS) {
        return found;
    }
    (mapped_slots(device, bytes), Staging::Mapped)
}

/// Host-memory staging buffers numbered `indices`, allocated on a thread of their own (pinning
/// memory takes milliseconds); `None` when no thread can be started.
#[cfg(feature = "wgpu")]
fn spawn_host_slots(
    device: &wgpu::Device,
    bytes: u64,
    wanted: Staging,
    indices: std::ops::Range<usize>,
) -> Option<std::thread::JoinHandle<Option<Vec<Slot>>>> {
    let device = device.clone();
    std::thread::Builder::new()
        .name("dspk-staging".into())
        .spawn(move || host_slots(&device, bytes, wanted, indices).map(|(slots, _)| slots))
        .ok()
}

/// [`STAGING_SLOTS`] of wgpu's mapped staging buffers, created mapped.
#[cfg(feature = "wgpu")]
fn mapped_slots(device: &wgpu::Device, bytes: u64) -> Vec<Slot> {
    (0..STAGING_SLOTS)
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
#[cfg(feature = "wgpu")]
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

/// Submits the kernels already launched on `client` (they may still use `dst`, so they go
/// before a copy into it), then resolves `dst` to its wgpu buffer range. The second value keeps
/// the allocation bound in place while held.
#[cfg(feature = "wgpu")]
fn flushed_target(client: &Client, dst: &Handle) -> DspResult<(WgpuResource, impl Sized)> {
    let (mut targets, bound) = flushed_targets(client, std::slice::from_ref(dst))?;
    Ok((targets.remove(0), bound))
}

/// [`flushed_target`] for several device buffers.
#[cfg(feature = "wgpu")]
fn flushed_targets(
    client: &Client,
    handles: &[Handle],
) -> DspResult<(Vec<WgpuResource>, Vec<impl Sized + use<>>)> {
    client
        .flush()
        .map_err(|e| device_error("submitting queued kernels failed", e))?;
    let mut targets = Vec::with_capacity(handles.len());
    let mut bound = Vec::with_capacity(handles.len());
    for handle in handles {
        let b = client
            .get_resource::<WgpuServer<AutoCompiler>>(handle.clone())
            .map_err(|e| device_error("resolving a device buffer failed", e))?;
        targets.push(b.resource().clone());
        bound.push(b);
    }
    Ok((targets, bound))
}

/// Records `record` into a fresh command encoder, submits it and waits for the device,
/// `iters` + 1 times (at least twice): the median time of all but the first (a warm-up), and
/// the last submission.
#[cfg(feature = "wgpu")]
fn time_submissions(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    iters: usize,
    mut record: impl FnMut(&mut wgpu::CommandEncoder) -> DspResult<()>,
) -> DspResult<(std::time::Duration, wgpu::SubmissionIndex)> {
    let mut times = Vec::with_capacity(iters.max(1) + 1);
    let mut last = None;
    for _ in 0..=iters.max(1) {
        let started = std::time::Instant::now();
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("dspk timing"),
        });
        record(&mut encoder)?;
        let index = queue.submit([encoder.finish()]);
        device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index.clone()),
                timeout: None,
            })
            .map_err(|e| device_error("waiting for the device failed", e))?;
        times.push(started.elapsed());
        last = Some(index);
    }
    times.remove(0);
    times.sort();
    let last = last.ok_or_else(|| DspError::config("no submission was timed"))?;
    Ok((times[times.len() / 2], last))
}

/// Alignment of the staging bytes a [`StagingKernel`] sees (its WGSL may read them as
/// `vec4<u32>`).
#[cfg(feature = "wgpu")]
const STAGING_KERNEL_ALIGN: u64 = 16;

/// Records `launch` over the first `bytes` of `staging` into `encoder`, its parameters written
/// ahead of the submission.
#[cfg(feature = "wgpu")]
fn record_staging_kernel(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    encoder: &mut wgpu::CommandEncoder,
    launch: &StagingLaunch<'_>,
    staging: &wgpu::Buffer,
    bytes: u64,
    targets: &[WgpuResource],
) -> DspResult<()> {
    let kernel = launch.kernel;
    let mut params = [0u8; STAGING_KERNEL_PARAMS * 4];
    for (word, value) in params.chunks_exact_mut(4).zip(launch.params) {
        word.copy_from_slice(&value.to_le_bytes());
    }
    // Ordered before this submission, after the earlier ones that read the parameters.
    queue.write_buffer(&kernel.params, 0, &params);
    let size = |n: u64| {
        std::num::NonZeroU64::new(n).ok_or_else(|| {
            DspError::config(format!(
                "an empty buffer bound to the kernel {}",
                kernel.label
            ))
        })
    };
    let mut entries = vec![
        wgpu::BindGroupEntry {
            binding: 0,
            resource: kernel.params.as_entire_binding(),
        },
        wgpu::BindGroupEntry {
            binding: 1,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: staging,
                offset: 0,
                size: Some(size(bytes)?),
            }),
        },
    ];
    for (k, t) in targets.iter().enumerate() {
        entries.push(wgpu::BindGroupEntry {
            binding: 2 + k as u32,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &t.buffer,
                offset: t.offset,
                size: Some(size(t.size)?),
            }),
        });
    }
    // A kernel whose WGSL binds other buffers than its launch gives is an error, not a panic.
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(&kernel.label),
        layout: &kernel.layout,
        entries: &entries,
    });
    if let Some(error) = resolve_now(device, scope.pop()) {
        return Err(DspError::config(format!(
            "the buffers of a launch of the kernel {} do not match its bindings: {error}",
            kernel.label
        )));
    }
    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some(&kernel.label),
        timestamp_writes: None,
    });
    pass.set_pipeline(&kernel.pipeline);
    pass.set_bind_group(0, &group, &[]);
    pass.dispatch_workgroups(launch.workgroups, 1, 1);
    Ok(())
}

/// The byte length of each part of `len` bytes handed to the fill threads: a multiple of
/// `align` (whole frames) and of wgpu's mapping alignment, so that parts can be mapped one by
/// one; [`PARTS_PER_THREAD`] parts per thread, none shorter than [`MIN_PART_BYTES`] but where
/// `len` is.
#[cfg(feature = "wgpu")]
fn part_len(len: usize, align: usize, threads: usize) -> usize {
    let unit = lcm(align.max(1), wgpu::MAP_ALIGNMENT as usize);
    let parts = (threads.max(1) * PARTS_PER_THREAD).min(len.div_ceil(MIN_PART_BYTES).max(1));
    len.div_ceil(unit).div_ceil(parts) * unit
}

/// Parts per fill thread: more parts than threads let a thread that is done early take over
/// work from a slow one (cores of a shared host do not run at one speed).
#[cfg(feature = "wgpu")]
const PARTS_PER_THREAD: usize = 4;

/// Bytes per part at least (smaller ones cost more to hand out than to fill).
#[cfg(feature = "wgpu")]
const MIN_PART_BYTES: usize = 256 << 10;

/// The parts of a mapped wgpu buffer's first `len` bytes, each mapped on its own.
#[cfg(feature = "wgpu")]
fn mapped_parts(
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
            .map_err(|e| device_error("mapping a staging buffer failed", e))?;
        parts.push((start, end - start, view));
        start = end;
    }
    Ok(parts)
}

/// The parts of `bytes`.
#[cfg(vulkan_host)]
fn slice_parts(bytes: &mut [u8], align: usize, threads: usize) -> Vec<(usize, usize, &mut [u8])> {
    let per_part = part_len(bytes.len(), align, threads);
    bytes
        .chunks_mut(per_part)
        .enumerate()
        .map(|(k, part)| (k * per_part, part.len(), part))
        .collect()
}

#[cfg(feature = "wgpu")]
thread_local! {
    /// A fill thread's scratch buffer for staging memory that is written through a copy
    /// (write-combined or wgpu-mapped), reused across uploads instead of allocated per part.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Memory a fill thread writes: a mapped wgpu view (written through copies only) or plain bytes.
#[cfg(feature = "wgpu")]
trait PartMemory: Send {
    /// Copies `src` to `at`.
    fn write(&mut self, at: usize, src: &[u8]);
    /// The memory as a slice, where it can be written in place.
    fn bytes(&mut self) -> Option<&mut [u8]>;
}

#[cfg(feature = "wgpu")]
impl PartMemory for wgpu::BufferViewMut {
    fn write(&mut self, at: usize, src: &[u8]) {
        self.slice(at..at + src.len()).copy_from_slice(src);
    }
    fn bytes(&mut self) -> Option<&mut [u8]> {
        None
    }
}

#[cfg(feature = "wgpu")]
impl PartMemory for &mut [u8] {
    fn write(&mut self, at: usize, src: &[u8]) {
        self[at..at + src.len()].copy_from_slice(src);
    }
    fn bytes(&mut self) -> Option<&mut [u8]> {
        Some(self)
    }
}

/// Pools of fill threads made so far, shared by every uploader that asks for as many threads
/// (a later pass does not start its threads again). Released with [`STAGING_CACHE`].
#[cfg(feature = "wgpu")]
static FILL_POOLS: parking_lot::Mutex<Vec<Arc<rayon::ThreadPool>>> =
    parking_lot::Mutex::new(Vec::new());

/// The pool of `threads` fill threads, kept for the process (rather than 16 thread spawns
/// and joins per window, where a 23 MB window takes ~1.3 ms); `None` for one thread, or if
/// threads cannot be started (then the caller's thread fills).
#[cfg(feature = "wgpu")]
fn fill_pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
    if threads <= 1 {
        return None;
    }
    let mut pools = FILL_POOLS.lock();
    if let Some(pool) = pools.iter().find(|p| p.current_num_threads() == threads) {
        return Some(pool.clone());
    }
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("dspk-fill-{i}"))
            .build()
            .ok()?,
    );
    pools.push(pool.clone());
    Some(pool)
}

/// Runs `fill` over every part (`(offset, length, memory)`) on the pool's threads while
/// `during` runs on the calling thread (the first error of either is the result), in
/// pieces that are multiples of `align` bytes: straight into the memory where it is plain,
/// host-cached memory (`!scratch`), else through a cache-sized scratch buffer (write-combined
/// memory wants each line written once, whole).
#[cfg(feature = "wgpu")]
fn fill_parts<P, F, D>(
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

fn lcm(a: usize, b: usize) -> usize {
    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    a / gcd(a, b) * b
}
