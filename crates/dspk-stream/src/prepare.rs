//! Compiling a device's pass kernels ahead of its first pass, while the program does other
//! work (opening its next device, say).

use std::thread::JoinHandle;

use cubecl::client::Client;
use dspk_device::upload::staging_kernel_kept;
use dspk_device::{Catalog, DeviceChoice};
use dspk_kernels::{STAGED_DECODE_ENTRY, STAGED_DECODE_WGSL};
use dspk_types::{ComputeTarget, DspError, DspResult};

use crate::multi::PassDevice;
use crate::staged::compile_decode_in_staging;

/// Starts compiling, on a thread of its own, the kernel a pass on `client`'s device compiles
/// in its setup (the decode in staging); a pass started later finds it compiled, or waits for
/// the compile in flight, rather than compiling it again. Kernels compile one at a time in a
/// process, so preparing each device as it opens keeps a second device on the same adapter
/// from compiling alongside the first (which made both slow). Nothing to do where the device
/// has no staging kernels.
///
/// The [`Prepared`] waits for the compile when dropped; [`Prepared::wait`] says how it went.
/// A failed compile is not kept: the pass compiles again and returns that error.
pub fn prepare(client: &Client) -> Prepared {
    let client = client.clone();
    let thread = std::thread::Builder::new()
        .name("dspk-prepare".into())
        .spawn(move || compile_decode_in_staging(&client).map(|_| ()));
    match thread {
        Ok(thread) => Prepared {
            thread: Some(thread),
            unstarted: None,
        },
        // No thread to be had: the pass compiles in its setup, as without preparing.
        Err(e) => Prepared {
            thread: None,
            unstarted: Some(e.to_string()),
        },
    }
}

/// Whether a pass on `client`'s device would find its kernels compiled (after [`prepare`] or
/// an earlier pass); always `false` where the device has no staging kernels.
pub fn is_prepared(client: &Client) -> bool {
    staging_kernel_kept(client, STAGED_DECODE_WGSL, STAGED_DECODE_ENTRY)
}

/// A device's kernels compiling ([`prepare`]); waits for them when dropped.
#[derive(Debug)]
#[must_use = "dropping it waits for the compile at once"]
pub struct Prepared {
    thread: Option<JoinHandle<DspResult<()>>>,
    /// Why no thread could compile, when none could.
    unstarted: Option<String>,
}

impl Prepared {
    /// Waits for the compile.
    ///
    /// # Errors
    /// What the device said of the kernel; no thread to compile on.
    pub fn wait(mut self) -> DspResult<()> {
        if let Some(why) = self.unstarted.take() {
            return Err(DspError::config(format!(
                "no thread to prepare the device on: {why}"
            )));
        }
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(outcome)) => outcome,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => Ok(()),
        }
    }
}

impl Drop for Prepared {
    fn drop(&mut self) {
        // The pass that follows reports a failed compile itself.
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Opens the devices `choice` names in `catalog` (only `runtime`'s where given), as
/// [`PassDevice`]s, each device's pass kernels compiling from the moment it opens (while the
/// next one opens): what the program's `--devices` and a scheduler job's device both open.
/// Keep the [`Prepared`] until the pass is done.
///
/// # Errors
/// What [`Catalog::open_each`] returns: a choice naming no device, or one that fails to open.
pub fn open_pass_devices(
    catalog: &Catalog,
    choice: &DeviceChoice,
    runtime: Option<ComputeTarget>,
) -> DspResult<(Vec<PassDevice>, Vec<Prepared>)> {
    let mut prepared = Vec::new();
    let devices = catalog
        .open_each(choice, runtime, |d| prepared.push(prepare(&d.client)))?
        .into_iter()
        .map(|c| PassDevice {
            client: c.client,
            label: c.label,
        })
        .collect();
    Ok((devices, prepared))
}
