//! `worker_device`: which device a pool's worker takes (dspk-device's choice, the one
//! `dspk run` makes for a Slurm task).

use dspk_device::{Worker, worker_device as choose};
use dspk_types::ComputeTarget;
use pyo3::prelude::*;

/// The device worker number `worker` of a pool given `devices` takes (numbers as
/// `dspk.devices()` gives them), and why: `(devices[worker % len(devices)], reason)`, or
/// `(None, reason)` (the runtime's default device) where `devices` is empty.
#[pyfunction]
pub(crate) fn worker_device(worker: usize, devices: Vec<usize>) -> (Option<usize>, String) {
    let listed = Worker::Listed {
        index: worker,
        devices,
    };
    // A listed worker's choice needs neither the runtime nor the GPUs seen, and cannot fail.
    match choose(&listed, ComputeTarget::Wgpu, &[]) {
        Ok(chosen) => (chosen.index, chosen.reason),
        Err(e) => (None, e.to_string()),
    }
}
