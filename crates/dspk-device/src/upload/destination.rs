//! Where a filled window goes ([`Destination`]): copied into a device buffer, or read in place
//! by a staging kernel.

use cubecl::server::Handle;

use super::kernel::StagingLaunch;

/// Where [`Uploader::upload`](super::Uploader::upload) puts a window once it is filled.
#[derive(Debug, Clone, Copy)]
pub enum Destination<'a> {
    /// Copied to the start of this device buffer, which holds at least the window's length
    /// rounded up to 4 bytes (the bytes past the window up to that are unspecified).
    Copy(&'a Handle),
    /// Read in place by this launch of a staging kernel, from the one staging buffer the window
    /// was filled into (host staging only; see
    /// [`Uploader::runs_staging_kernels`](super::Uploader::runs_staging_kernels)). No device
    /// input buffer is written: the kernel pulls the window across the bus.
    Kernel(StagingLaunch<'a>),
}
