//! The one place where dspk-kernels' decode in staging meets dspk-device's staging kernels:
//! compiling it for a device, and saying where each window's stored bytes go.

use cubecl::client::Client;
use cubecl::server::Handle;
use dspk_device::upload::{Destination, StagingKernel, StagingLaunch, compile_staging_kernel_for};
use dspk_kernels::{
    Decoder, STAGED_DECODE_BUFFERS, STAGED_DECODE_ENTRY, STAGED_DECODE_WGSL, StagedDecode,
};
use dspk_types::{DspResult, HaloWindow};

/// The label a compiled decode in staging carries in device errors.
const LABEL: &str = "dspk decode in staging";

/// dspk-kernels' decode in staging, compiled for `client`'s device (kept by dspk-device for
/// later passes); `None` where the device has no staging kernels.
pub fn compile_decode_in_staging(client: &Client) -> DspResult<Option<StagingKernel>> {
    compile_staging_kernel_for(
        client,
        LABEL,
        STAGED_DECODE_WGSL,
        STAGED_DECODE_ENTRY,
        STAGED_DECODE_BUFFERS,
    )
}

/// Where one window's stored bytes go once staged: copied into the decoder's input buffer, or
/// decoded where they are staged by a launch of the decode in staging.
pub enum Target<'k> {
    /// Copied into this device buffer (the decoder's input).
    Copy(Handle),
    /// Decoded where they are staged.
    Kernel(&'k StagingKernel, Box<StagedDecode>),
}

impl<'k> Target<'k> {
    /// Where `window` goes: decoded in staging by `kernel` where there is one and the decoder
    /// can launch it for the window, else copied to the decoder's input buffer.
    pub fn of(
        decoder: &Decoder,
        kernel: Option<&'k StagingKernel>,
        window: &HaloWindow,
    ) -> DspResult<Self> {
        if let Some(kernel) = kernel
            && let Some(launch) = decoder.staged_decode(window.read_len())?
        {
            return Ok(Target::Kernel(kernel, Box::new(launch)));
        }
        Ok(Target::Copy(decoder.stored_handle().clone()))
    }

    /// The uploader's destination for this target.
    pub fn destination(&self) -> Destination<'_> {
        match self {
            Target::Copy(handle) => Destination::Copy(handle),
            Target::Kernel(kernel, launch) => Destination::Kernel(launch_of(kernel, launch)),
        }
    }
}

/// The staging-kernel launch of a decode in staging.
pub fn launch_of<'a>(kernel: &'a StagingKernel, launch: &'a StagedDecode) -> StagingLaunch<'a> {
    StagingLaunch {
        kernel,
        buffers: &launch.buffers,
        params: &launch.params,
        workgroups: launch.workgroups,
    }
}
