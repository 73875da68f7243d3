//! Host→device uploads of windows, as fast as the runtime allows: [`Uploader::upload`] fills a
//! window's bytes in place, on several threads, and puts them where a [`Destination`] says (a
//! copy into a device buffer, or a staging kernel that reads them where they are staged),
//! ordered after the kernels already launched on the client. Nothing is allocated per window.
//!
//! The staging memory ([`Staging`]):
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
//! A [`Destination::Kernel`] runs a [`StagingKernel`] (WGSL, compiled once per device and
//! kept) that reads the filled host staging buffer in place, across the bus: dspk-kernels'
//! decode in staging, so that a window is pulled onto the device by the kernel that decodes
//! it, with no device input buffer and no copy taking turns with the decode on the device's
//! one queue.
//!
//! The parts, each in a file of its own (wgpu-only ones gated once, here): `staging` (the
//! kinds of staging memory), `destination`, `kernel` (staging kernels), `host` (Vulkan host
//! memory), `memory` (staging buffers), `fill` (the fill threads), `ring` (the ring of
//! staging slots), `kept` (what is kept between passes: idle host staging buffers, compiled
//! staging kernels, fill pools; released by [`crate::shutdown_devices`] and the exit
//! teardown), `timing`, and `write` (the `Client::write` path).
//!
//! `DSPK_UPLOAD` ([`UPLOAD_ENV`]) picks a path by name, for measurements.

mod destination;
mod kernel;
mod staging;
mod write;

#[cfg(feature = "wgpu")]
mod fill;
#[cfg(vulkan_host)]
mod host;
#[cfg(feature = "wgpu")]
mod kept;
#[cfg(feature = "wgpu")]
mod memory;
#[cfg(feature = "wgpu")]
mod ring;
#[cfg(feature = "wgpu")]
mod timing;

use std::time::Duration;

use cubecl::client::Client;
use dspk_types::{DspError, DspResult};

pub use destination::Destination;
pub use kernel::{
    STAGING_KERNEL_PARAMS, StagingKernel, StagingLaunch, compile_staging_kernel_for,
    staging_kernel_kept,
};
pub use staging::{Staging, UPLOAD_ENV};

#[cfg(feature = "wgpu")]
pub(crate) use kept::release as release_kept;

/// Host staging buffers (pinned host memory) of `client`'s device held by uploaders right
/// now: 0 whenever no pass runs on the device, whatever way the last one ended (the idle
/// buffers of a finished uploader are kept for the next one, or freed, and are not counted).
/// Always 0 where staging is not in host memory.
pub fn staging_in_use(client: &Client) -> usize {
    #[cfg(vulkan_host)]
    {
        match crate::bridge::handles_of(client) {
            Some(h) => host::live_buffers(&h.device).saturating_sub(kept::kept_buffers(&h.device)),
            None => 0,
        }
    }
    #[cfg(not(vulkan_host))]
    {
        let _ = client;
        0
    }
}
use kernel::{check_fits, check_launch};
use ring::Ring;
use staging::COPY_ALIGN;

/// Uploads windows of at most a fixed size (see the module docs).
pub struct Uploader {
    client: Client,
    capacity: u64,
    /// dspk's own staging buffers, where the device has them (else `Client::write`).
    ring: Option<Ring>,
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
        Self::with_buffers(client, capacity, threads, wanted, ring::STAGING_SLOTS)
    }

    /// As [`Uploader::new`], staging through one buffer where it would have two: for a device
    /// whose uploads take turns with other devices' (a pass over several devices), so that
    /// another device's buffer fills while this one's is read, and N devices pin N buffers,
    /// not 2N. Pinning is what a second device costs a fresh process (on the H200 ~6.5 ms per
    /// 23 MB buffer, one allocation at a time in the process, each holding up the other
    /// device's uploads while it runs).
    pub fn new_taking_turns(client: &Client, capacity: u64, threads: usize) -> DspResult<Self> {
        let wanted = Staging::from_env()?.unwrap_or(Staging::HostCached);
        Ok(Self::with_buffers(client, capacity, threads, wanted, 1))
    }

    /// As [`Uploader::with_staging`], through `buffers` staging buffers (at least one; two
    /// where it is made by `new`, one by [`Uploader::new_taking_turns`]).
    pub fn with_buffers(
        client: &Client,
        capacity: u64,
        threads: usize,
        wanted: Staging,
        buffers: usize,
    ) -> Self {
        let ring = match wanted {
            Staging::Write => None,
            _ => Ring::open(client, capacity, threads.max(1), wanted, buffers.max(1)),
        };
        Self {
            client: client.clone(),
            capacity: ring
                .as_ref()
                .map_or(capacity.next_multiple_of(COPY_ALIGN), Ring::capacity),
            ring,
        }
    }

    /// The path uploads take.
    pub fn staging(&self) -> Staging {
        self.ring.as_ref().map_or(Staging::Write, Ring::staging)
    }

    /// Whether this uploader took its staging buffers from one dropped earlier on the same
    /// device (host staging buffers are kept for the next uploader: pinning them costs
    /// milliseconds), rather than allocating its own.
    pub fn reused_staging(&self) -> bool {
        self.ring.as_ref().is_some_and(Ring::reused)
    }

    /// Whether uploads go through dspk's own staging buffers (else `Client::write`).
    pub fn is_staged(&self) -> bool {
        self.staging() != Staging::Write
    }

    /// The most bytes one upload carries.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Whether a [`Destination::Kernel`] can be used here: the staging buffers are dspk's own
    /// host memory (Vulkan), which a kernel can read in place.
    pub fn runs_staging_kernels(&self) -> bool {
        self.staging().is_host()
    }

    /// The most bytes one upload to a [`Destination::Kernel`] carries (one staging buffer's
    /// worth; 0 where staging kernels cannot run).
    pub fn staging_kernel_capacity(&self) -> u64 {
        match &self.ring {
            Some(ring) if self.runs_staging_kernels() => ring.kernel_capacity(),
            _ => 0,
        }
    }

    /// Compiles `wgsl`'s compute entry point `entry` (see [`StagingKernel`] for its bindings;
    /// `buffers` device buffers follow the staging buffer) for a [`Destination::Kernel`];
    /// `None` where staging kernels cannot run
    /// ([`runs_staging_kernels`](Self::runs_staging_kernels)). A shader the device refuses is
    /// an error that names `label` and gives the device's message.
    pub fn staging_kernel(
        &self,
        label: &str,
        wgsl: &str,
        entry: &str,
        buffers: usize,
    ) -> DspResult<Option<StagingKernel>> {
        match &self.ring {
            Some(ring) if self.runs_staging_kernels() => {
                ring.compile_kernel(label, wgsl, entry, buffers).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// Fills `len` bytes through `fill(offset, piece)` and puts them at `to`, ordered after
    /// every kernel launched on the client so far and before any launched after; `during` runs
    /// on the calling thread while the fill threads work (the host's share of the previous
    /// window, say; `|| Ok(())` for none), and kernels it launches are ordered before what the
    /// upload submits.
    ///
    /// `fill` is called for consecutive pieces covering `0..len`, each a multiple of `align`
    /// bytes long (but the last), possibly from several threads at once. The first error of
    /// `fill` or `during` is the result; `during` runs once (also when `len` is 0, or `fill`
    /// fails), unless the upload is refused before the fill begins:
    /// - a [`Destination::Copy`] for more than [`capacity`](Self::capacity) bytes, or into a
    ///   device buffer shorter than `len` rounded up to 4 bytes;
    /// - a [`Destination::Kernel`] where staging kernels cannot run, for a launch of a kernel
    ///   with another number of buffers or too many parameters, or for `len` above
    ///   [`staging_kernel_capacity`](Self::staging_kernel_capacity).
    pub fn upload<F, D>(
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
        match &to {
            Destination::Copy(_) => {
                if (len as u64).next_multiple_of(COPY_ALIGN) > self.capacity {
                    return Err(DspError::BufferOverrun {
                        what: "upload staging".into(),
                        capacity: self.capacity as usize,
                        needed: len,
                    });
                }
            }
            Destination::Kernel(launch) => {
                if !self.runs_staging_kernels() {
                    return Err(not_in_place(launch.kernel, self.staging()));
                }
                check_launch(launch)?;
                check_fits(launch, len, self.staging_kernel_capacity())?;
            }
        }
        if len == 0 {
            return during();
        }
        match (&mut self.ring, to) {
            (Some(ring), to) => ring.upload(to, len, align, fill, during),
            (None, Destination::Copy(dst)) => {
                write::upload(&self.client, dst, len, align, fill, during)
            }
            (None, Destination::Kernel(launch)) => Err(not_in_place(launch.kernel, Staging::Write)),
        }
    }

    /// The time to move `len` bytes already in the staging buffers to `to`, submitted and
    /// waited for, the median of `iters`: for a [`Destination::Copy`], the copies as an upload
    /// queues them (one per staging buffer's worth; the host→device bandwidth this path
    /// reaches for one window alone); for a [`Destination::Kernel`], the kernel over the
    /// window in the first staging buffer (the bandwidth at which it pulls one window across
    /// the bus). `None` where there is nothing of dspk's to time: no staging buffers of its own
    /// (`Client::write`), staging kernels that cannot run here, or an empty window for a kernel.
    pub fn time(
        &mut self,
        to: Destination<'_>,
        len: usize,
        iters: usize,
    ) -> DspResult<Option<Duration>> {
        if let Destination::Kernel(launch) = &to {
            if !self.runs_staging_kernels() || len == 0 {
                return Ok(None);
            }
            check_launch(launch)?;
            check_fits(launch, len, self.staging_kernel_capacity())?;
        }
        let Some(ring) = &mut self.ring else {
            return Ok(None);
        };
        match to {
            Destination::Copy(dst) => ring.time_copy(dst, len, iters).map(Some),
            Destination::Kernel(launch) => ring.time_through(launch, len, iters).map(Some),
        }
    }

    /// Waits until every upload queued so far has left the staging buffers.
    pub fn wait_idle(&mut self) -> DspResult<()> {
        match &mut self.ring {
            Some(ring) => ring.wait_idle(),
            None => Ok(()),
        }
    }
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

/// Nothing is kept between passes without wgpu.
#[cfg(not(feature = "wgpu"))]
pub(crate) fn release_kept() {}

/// Without wgpu there is no ring of staging slots: every upload is a `Client::write`. The type
/// has no values; its methods mirror the wgpu ring's.
#[cfg(not(feature = "wgpu"))]
mod ring {
    use std::time::Duration;

    use cubecl::client::Client;
    use cubecl::server::Handle;
    use dspk_types::DspResult;

    use super::{Destination, Staging, StagingKernel, StagingLaunch};

    /// As the wgpu ring's: what [`super::Uploader::with_staging`] asks for.
    pub(super) const STAGING_SLOTS: usize = 2;

    /// No value.
    pub(super) enum Ring {}

    impl Ring {
        pub(super) fn open(
            client: &Client,
            _: u64,
            _: usize,
            _: Staging,
            _: usize,
        ) -> Option<Self> {
            crate::registry::wgpu_handles_of(client).map(|handles| match handles {})
        }
        pub(super) fn capacity(&self) -> u64 {
            match *self {}
        }
        pub(super) fn staging(&self) -> Staging {
            match *self {}
        }
        pub(super) fn reused(&self) -> bool {
            match *self {}
        }
        pub(super) fn kernel_capacity(&self) -> u64 {
            match *self {}
        }
        pub(super) fn compile_kernel(
            &self,
            _: &str,
            _: &str,
            _: &str,
            _: usize,
        ) -> DspResult<StagingKernel> {
            match *self {}
        }
        pub(super) fn upload<F, D>(
            &mut self,
            _: Destination<'_>,
            _: usize,
            _: usize,
            _: F,
            _: D,
        ) -> DspResult<()> {
            match *self {}
        }
        pub(super) fn time_copy(&mut self, _: &Handle, _: usize, _: usize) -> DspResult<Duration> {
            match *self {}
        }
        pub(super) fn time_through(
            &mut self,
            _: StagingLaunch<'_>,
            _: usize,
            _: usize,
        ) -> DspResult<Duration> {
            match *self {}
        }
        pub(super) fn wait_idle(&mut self) -> DspResult<()> {
            match *self {}
        }
    }
}
