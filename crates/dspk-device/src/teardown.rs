//! The release of the devices dspk opened: early ([`shutdown_devices`]) or at exit, within
//! [`TEARDOWN_LIMIT`], through an exit handler (re)armed after each newly opened device.

use std::time::Duration;

use cubecl::device::DeviceId;
use cubecl::device_handle::DeviceHandle;

use crate::registry::{self, Entry};

/// How long the teardown at exit may take before the process ends anyway, with its status.
pub const TEARDOWN_LIMIT: Duration = Duration::from_secs(10);

/// The environment variable that makes the exit teardown report what it did on stderr (`1`).
pub const TRACE_ENV: &str = "DSPK_DEVICE_TRACE";

/// (Re)registers the exit handler, so that it runs before the exit handlers of whatever driver
/// layers opening a device loaded. Called after each newly opened device.
pub(crate) fn arm() {
    dspk_exit::register_exit_handler(exit_handler);
}

/// Releases every wgpu device dspk opened: its runner threads are stopped (after the work
/// already queued has run) and the device is destroyed. Returns how many were released. A
/// later [`crate::TargetExt::client`] or [`crate::open_device`] opens the device again.
///
/// Clients still held keep a device's runner alive: drop them first. CubeCL waits up to 30 s
/// for the runner of a device whose clients are still held, then leaves the thread running;
/// the device is destroyed anyway, so such a client fails from then on. (At exit the wait is
/// 2 s per device, within the 10 s [`TEARDOWN_LIMIT`]: drop clients before
/// `std::process::exit`, or end with `dspk_exit::exit_now`.)
///
/// Devices of the other runtimes (CUDA, HIP, CPU) stay open until the process ends: ending
/// their runner threads early drops CubeCL's kernel-cache connection in a thread-local
/// destructor, which can abort the process. A wgpu device whose runtime id collides with an
/// open device of another runtime (CubeCL's shutdown is by id, across runtimes) stays open too.
pub fn shutdown_devices() -> usize {
    let released = take_devices();
    let count = released.len();
    for entry in released {
        release(entry);
    }
    count
}

/// What is kept between passes goes first (its devices are about to go), then the wgpu devices
/// that can be shut down are taken out of the registry.
fn take_devices() -> Vec<Entry> {
    crate::upload::release_kept();
    registry::take_wgpu_entries()
}

/// Stops a device's runner threads (blocking until they have ended), then destroys the wgpu
/// device.
fn release(entry: Entry) {
    let stopped = stop_runner(entry.runner_id);
    if stopped {
        destroy(entry);
    }
}

/// Stops the runner threads of `runner`, blocking; `false` when CubeCL panicked instead.
fn stop_runner(runner: DeviceId) -> bool {
    // CubeCL's shutdown asserts rather than deadlock when called from the device's own runner
    // thread; a panic here must not escape (this also runs inside an exit handler).
    std::panic::catch_unwind(move || <DeviceHandle<()>>::shutdown(runner)).is_ok()
}

/// Destroys the wgpu device of an entry, where dspk holds it.
fn destroy(entry: Entry) {
    if let Some(handles) = entry.wgpu {
        handles.destroy();
    }
}

/// How long the exit teardown waits for one device's runner threads to stop. They stop only
/// once every client of the device is dropped, and a client still alive at exit (held by a
/// static, or by `main` calling `std::process::exit`) never will be.
const EXIT_RUNNER_WAIT: Duration = Duration::from_secs(2);

/// At exit: stops the runner threads of `entry` (waiting at most [`EXIT_RUNNER_WAIT`]) and
/// destroys the wgpu device either way. Returns whether the runner stopped.
fn release_at_exit(entry: Entry) -> bool {
    let runner = entry.runner_id;
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("dspk-device-release".to_string())
        .spawn(move || {
            let _ = done_tx.send(stop_runner(runner));
        });
    let stopped = match spawned {
        Ok(_detached) => done_rx.recv_timeout(EXIT_RUNNER_WAIT).unwrap_or(false),
        Err(_) => stop_runner(runner),
    };
    // A runner that did not stop is idle, parked until its last client is dropped; destroying
    // the device under it leaves no driver work running into the process's end.
    destroy(entry);
    stopped
}

/// Reads `DSPK_DEVICE_TRACE` (the one place that does).
fn trace_from_env() -> bool {
    std::env::var(TRACE_ENV).is_ok_and(|v| v.trim() == "1")
}

/// The exit handler: releases the wgpu devices within [`TEARDOWN_LIMIT`], after which the
/// process ends with `status` whatever the teardown is doing.
fn exit_handler(status: i32) {
    let trace = trace_from_env();
    dspk_exit::teardown_within(TEARDOWN_LIMIT, status, move || {
        let start = std::time::Instant::now();
        let entries = take_devices();
        let released = entries.len();
        let in_use = entries
            .into_iter()
            .map(release_at_exit)
            .filter(|stopped| !stopped)
            .count();
        if trace {
            eprintln!(
                "dspk-device: exit teardown released {released} wgpu device(s) in {:.1} ms \
                 ({in_use} still in use by a live client, destroyed without stopping its \
                 runner) (status {status})",
                start.elapsed().as_secs_f64() * 1e3
            );
        }
    });
}
