//! The CubeCL-to-wgpu bridge: the wgpu device and queue behind a CubeCL client, the wgpu
//! buffer behind a CubeCL handle, and the flush of CubeCL's queued work that must come before
//! each of dspk's own submissions on the same queue.
//!
//! CubeCL batches the kernels a client launches and submits them to the device's one wgpu
//! queue later; dspk's uploads (copies, staging kernels) go to that queue directly. Submissions
//! run in queue order, so a copy into a buffer an earlier kernel still reads, or a staging
//! kernel whose output an earlier kernel still reads, is ordered after that kernel only when
//! CubeCL's work was flushed first: every path here that resolves a CubeCL buffer for dspk's
//! own use flushes before it (ARCHITECTURE.md keeps this as an invariant).

use cubecl::client::Client;
use cubecl::server::Handle;
use cubecl::wgpu::{AutoCompiler, WgpuResource, WgpuServer};
use dspk_types::{ComputeTarget, DspResult};

use crate::adapter::WgpuHandles;
use crate::failure::failed;
use crate::registry;

/// The wgpu device and queue behind `client`, where dspk created them (a device registered by
/// an embedding application has none that dspk knows of).
pub(crate) fn handles_of(client: &Client) -> Option<WgpuHandles> {
    registry::wgpu_handles_of(client)
}

/// Submits the kernels already launched on `client` to the device's queue, so that what dspk
/// submits next is ordered after them.
pub(crate) fn flush(client: &Client) -> DspResult<()> {
    client
        .flush()
        .map_err(|e| failed(ComputeTarget::Wgpu, "submitting queued kernels failed", e))
}

/// Flushes `client` ([`flush`]: the kernels launched so far may still use these buffers, so
/// they go before whatever dspk records over them), then resolves each handle to its wgpu
/// buffer range. The second value keeps the allocations bound in place while held.
pub(crate) fn flushed_targets(
    client: &Client,
    handles: &[Handle],
) -> DspResult<(Vec<WgpuResource>, Vec<impl Sized + use<>>)> {
    flush(client)?;
    let mut targets = Vec::with_capacity(handles.len());
    let mut bound = Vec::with_capacity(handles.len());
    for handle in handles {
        let b = client
            .get_resource::<WgpuServer<AutoCompiler>>(handle.clone())
            .map_err(|e| failed(ComputeTarget::Wgpu, "resolving a device buffer failed", e))?;
        targets.push(b.resource().clone());
        bound.push(b);
    }
    Ok((targets, bound))
}
