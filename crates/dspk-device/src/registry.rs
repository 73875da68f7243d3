//! The devices dspk opened: recorded when opened, looked up by device or by client, and taken
//! out for their release ([`crate::teardown`]).
//!
//! The one piece of global state in dspk: a private list reached only through these functions.

use cubecl::Device;
use cubecl::client::Client;
use cubecl::device::{DeviceId, RuntimeId};
use dspk_types::ComputeTarget;
use parking_lot::Mutex;

use crate::adapter::{AdapterRecord, WgpuHandles, runtime_of_client};

/// One opened device.
pub(crate) struct Entry {
    /// The device as it was asked for.
    device: Device,
    /// Its runtime.
    target: ComputeTarget,
    /// The device id the runtime keys its runner on (the runtime's own id, no runtime tag).
    pub(crate) runner_id: DeviceId,
    /// Whether this is the target's default device ([`crate::TargetExt::client`]).
    is_default: bool,
    /// What the adapter said about itself, where dspk opened it.
    adapter: Option<AdapterRecord>,
    /// The wgpu device and queue, where dspk created them: for dspk's own transfers
    /// ([`crate::bridge`]) and to destroy the device once its runner has stopped.
    pub(crate) wgpu: Option<WgpuHandles>,
}

/// What opening a device ([`crate::open_device`]) hands over to be recorded.
pub(crate) struct Opened {
    /// The client.
    pub client: Client,
    /// What the adapter said about itself, if dspk asked.
    pub adapter: Option<AdapterRecord>,
    /// The wgpu device and its queue, if dspk created them.
    pub wgpu: Option<WgpuHandles>,
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

/// Records a newly opened device (its client stays with the caller).
pub(crate) fn record(device: Device, target: ComputeTarget, opened: &mut Opened) {
    let entry = Entry {
        runner_id: runner_id_of(&device),
        device,
        target,
        is_default: false,
        adapter: opened.adapter.clone(),
        wgpu: opened.wgpu.take(),
    };
    REGISTRY.lock().push(entry);
}

/// `get` applied to the registry entry of the device behind `client`, if dspk opened it.
fn with_entry_of<T>(client: &Client, get: impl FnOnce(&Entry) -> Option<T>) -> Option<T> {
    let runner = client.service_id().device;
    let runtime = runtime_of_client(client);
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
pub(crate) fn wgpu_handles_of(client: &Client) -> Option<WgpuHandles> {
    with_entry_of(client, |e| e.wgpu.clone())
}

/// The devices dspk has open, in the order they were opened.
pub fn open_devices() -> Vec<Device> {
    REGISTRY.lock().iter().map(|e| e.device.clone()).collect()
}

/// Removes the wgpu devices that can be shut down from the registry and hands them over: all
/// but those whose runtime id collides with an open device of another runtime (CubeCL's
/// shutdown is by id, across runtimes).
pub(crate) fn take_wgpu_entries() -> Vec<Entry> {
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
