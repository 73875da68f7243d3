//! The devices dspk opened, and their release: early ([`shutdown_devices`]) or at exit.

use std::time::Duration;

use cubecl::Device;
use cubecl::client::Client;
use cubecl::device::{DeviceId, RuntimeId};
use cubecl::device_handle::DeviceHandle;
use dspk_types::ComputeTarget;
use parking_lot::Mutex;

use crate::info::DeviceKind;

/// How long the teardown at exit may take before the process ends anyway, with its status.
pub const TEARDOWN_LIMIT: Duration = Duration::from_secs(10);

/// What dspk learnt about an adapter when it opened it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AdapterRecord {
    /// The kind the adapter reported.
    pub kind: DeviceKind,
    /// The graphics API, lowercase (`vulkan`).
    pub backend: Option<String>,
}

/// One opened device.
struct Entry {
    /// The device as it was asked for.
    device: Device,
    /// Its runtime.
    target: ComputeTarget,
    /// The device id the runtime keys its runner on (the runtime's own id, no runtime tag).
    runner_id: DeviceId,
    /// Whether this is the target's default device ([`crate::TargetExt::client`]).
    is_default: bool,
    /// What the adapter said about itself, where dspk opened it.
    adapter: Option<AdapterRecord>,
    /// The wgpu device, kept to destroy it explicitly once its runner has stopped.
    #[cfg(feature = "wgpu")]
    wgpu_device: Option<cubecl::wgpu::wgpu::Device>,
    /// The wgpu queue of that device, for dspk's own transfers ([`crate::upload`]).
    #[cfg(feature = "wgpu")]
    wgpu_queue: Option<cubecl::wgpu::wgpu::Queue>,
}

/// What [`crate::open`] hands over for a device it opened.
pub(crate) struct Opened {
    /// The client.
    pub client: Client,
    /// What the adapter said about itself, if dspk asked.
    pub adapter: Option<AdapterRecord>,
    /// The wgpu device, if dspk created it.
    #[cfg(feature = "wgpu")]
    pub wgpu_device: Option<cubecl::wgpu::wgpu::Device>,
    /// Its queue, if dspk created it.
    #[cfg(feature = "wgpu")]
    pub wgpu_queue: Option<cubecl::wgpu::wgpu::Queue>,
}

static REGISTRY: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// Serialises opening devices, so that one device is never opened twice at once. Separate from
/// [`REGISTRY`]: opening takes seconds, and describing a device must not wait for that.
pub(crate) static OPENING: Mutex<()> = Mutex::new(());

/// The runtime's own id of `device`, the key of its runner threads.
fn runner_id_of(device: &Device) -> DeviceId {
    RuntimeId::strip(device.to_id())
}

/// The client of `device` if dspk has it open.
pub(crate) fn client_if_open(device: &Device) -> Option<Client> {
    let open = REGISTRY.lock().iter().any(|e| e.device == *device);
    open.then(|| device.client())
}

/// The default device of `target`, if dspk has it open.
pub(crate) fn default_device(target: ComputeTarget) -> Option<Device> {
    REGISTRY
        .lock()
        .iter()
        .find(|e| e.target == target && e.is_default)
        .map(|e| e.device.clone())
}

/// Marks an open device as its target's default.
pub(crate) fn mark_default(device: &Device) {
    if let Some(entry) = REGISTRY.lock().iter_mut().find(|e| e.device == *device) {
        entry.is_default = true;
    }
}

/// Records a newly opened device and (re)registers the exit handler, so that it runs before the
/// exit handlers of whatever driver layers opening the device loaded.
pub(crate) fn record(device: Device, target: ComputeTarget, opened: &mut Opened) {
    let entry = Entry {
        runner_id: runner_id_of(&device),
        device,
        target,
        is_default: false,
        adapter: opened.adapter.clone(),
        #[cfg(feature = "wgpu")]
        wgpu_device: opened.wgpu_device.take(),
        #[cfg(feature = "wgpu")]
        wgpu_queue: opened.wgpu_queue.take(),
    };
    REGISTRY.lock().push(entry);
    dspk_exit::register_exit_handler(exit_handler);
}

/// `get` applied to the registry entry of the device behind `client`, if dspk opened it.
fn with_entry_of<T>(client: &Client, get: impl FnOnce(&Entry) -> Option<T>) -> Option<T> {
    let runner = client.service_id().device;
    let runtime = crate::info::runtime_of_client(client);
    REGISTRY
        .lock()
        .iter()
        .find(|e| e.runner_id == runner && e.target == runtime)
        .and_then(get)
}

/// What dspk recorded about the adapter behind `client`, if dspk opened it.
pub(crate) fn adapter_of(client: &Client) -> Option<AdapterRecord> {
    with_entry_of(client, |e| e.adapter.clone())
}

/// The wgpu device and queue behind `client`, where dspk created them.
#[cfg(feature = "wgpu")]
pub(crate) fn wgpu_handles_of(
    client: &Client,
) -> Option<(cubecl::wgpu::wgpu::Device, cubecl::wgpu::wgpu::Queue)> {
    with_entry_of(client, |e| {
        Some((e.wgpu_device.clone()?, e.wgpu_queue.clone()?))
    })
}

/// The devices dspk has open, in the order they were opened.
pub fn open_devices() -> Vec<Device> {
    REGISTRY.lock().iter().map(|e| e.device.clone()).collect()
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
    let released = take_wgpu_entries();
    let count = released.len();
    for entry in released {
        release(entry);
    }
    count
}

/// Removes the wgpu devices that can be shut down from the registry and hands them over.
fn take_wgpu_entries() -> Vec<Entry> {
    // Staging buffers kept for later uploads go first: their devices are about to go.
    crate::upload::release_cached_staging();
    let mut registry = REGISTRY.lock();
    let others: Vec<DeviceId> = registry
        .iter()
        .filter(|e| e.target != ComputeTarget::Wgpu)
        .map(|e| e.runner_id)
        .collect();
    let (taken, kept): (Vec<Entry>, Vec<Entry>) = std::mem::take(&mut *registry)
        .into_iter()
        .partition(|e| e.target == ComputeTarget::Wgpu && !others.contains(&e.runner_id));
    *registry = kept;
    taken
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
    #[cfg(feature = "wgpu")]
    if let Some(device) = entry.wgpu_device {
        device.destroy();
    }
    #[cfg(not(feature = "wgpu"))]
    let _ = entry;
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

/// The environment variable that makes the exit teardown report what it did on stderr (`1`).
pub const TRACE_ENV: &str = "DSPK_DEVICE_TRACE";

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
        let entries = take_wgpu_entries();
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
