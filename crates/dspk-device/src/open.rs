//! Opening devices: a [`ComputeTarget`] becomes a device and a client ([`TargetExt`]), a
//! specific device is opened ([`open_device`]) and recorded, and the exit teardown is armed.

use std::panic::{AssertUnwindSafe, catch_unwind};

use cubecl::Device;
use cubecl::client::Client;
use cubecl::device::{DeviceUnavailable, RuntimeId, WgpuDeviceKind};
use dspk_types::{ComputeError, ComputeTarget};

use crate::config::configure_runtime;
use crate::failure::device_failure;
use crate::registry::{self, Opened};
use crate::teardown;

/// Work to run with a client: [`TargetExt::run`] opens the target's device and hands the task
/// its client.
///
/// Closures taking `&Client` are tasks already.
pub trait ComputeTask {
    /// What the task produces.
    type Output;

    /// Runs the task on `client`.
    fn run(self, client: &Client) -> Self::Output;
}

impl<F, R> ComputeTask for F
where
    F: FnOnce(&Client) -> R,
{
    type Output = R;

    fn run(self, client: &Client) -> R {
        self(client)
    }
}

/// Devices and clients of a [`ComputeTarget`].
pub trait TargetExt {
    /// The runtime's default device: for wgpu the adapter wgpu prefers (a GPU before a
    /// software rasterizer; `CUBECL_WGPU_DEFAULT_DEVICE` overrides), for CUDA and HIP the
    /// first GPU, for the CPU runtime the CPU. Checks that the machine has it, without opening
    /// it.
    ///
    /// # Errors
    /// [`ComputeError::NotCompiled`] for a runtime this build lacks, [`ComputeError::NoDevice`]
    /// when the machine has no device for it.
    fn device(&self) -> Result<Device, ComputeError>;

    /// The client of the runtime's default device, opening it on first use (see
    /// [`open_device`]). Later calls return a client of the same device.
    ///
    /// # Errors
    /// As [`TargetExt::device`] and [`open_device`].
    fn client(&self) -> Result<Client, ComputeError>;

    /// Runs `task` with the client of the runtime's default device.
    ///
    /// # Errors
    /// As [`TargetExt::client`]; the task's own result is its output.
    fn run<T: ComputeTask>(&self, task: T) -> Result<T::Output, ComputeError>;
}

impl TargetExt for ComputeTarget {
    fn device(&self) -> Result<Device, ComputeError> {
        let target = self.checked()?;
        // Before anything of CubeCL's runs: asking a runtime for its devices may read CubeCL's
        // configuration, which then could no longer be set.
        prepare(target);
        let named = match target {
            ComputeTarget::Wgpu => Device::wgpu(WgpuDeviceKind::DefaultDevice),
            ComputeTarget::Cuda => Device::cuda(0),
            ComputeTarget::Hip => Device::rocm(0),
            ComputeTarget::Cpu => Device::cpu(),
        };
        named.map_err(|e| unavailable(target, e))
    }

    fn client(&self) -> Result<Client, ComputeError> {
        let target = self.checked()?;
        if let Some(device) = registry::default_device(target) {
            return Ok(device.client());
        }
        let device = target.device()?;
        let client = open_device(device.clone())?;
        registry::mark_default(&device);
        Ok(client)
    }

    fn run<T: ComputeTask>(&self, task: T) -> Result<T::Output, ComputeError> {
        let client = self.client()?;
        Ok(task.run(&client))
    }
}

/// The devices of `target` this machine has, without opening them (for `dspk devices`).
///
/// # Errors
/// [`ComputeError::NotCompiled`] for a runtime this build lacks.
pub fn list_devices(target: ComputeTarget) -> Result<Vec<Device>, ComputeError> {
    let target = target.checked()?;
    prepare(target);
    Ok(Device::enumerate_all()
        .into_iter()
        .filter(|d| target_of(d).is_ok_and(|t| t == target))
        .collect())
}

/// The client of a specific device (one GPU of several), opening it on first use.
///
/// Configures CubeCL first ([`configure_runtime`]). A newly opened device is recorded, and the
/// exit handler that shuts wgpu devices down is (re)registered. On wgpu, dspk creates the
/// device itself (CubeCL's fallible setup, with the adapter's own limits), which is how a
/// missing adapter becomes an error rather than a panic; a device registered earlier by the
/// embedding application is used as it is.
///
/// # Errors
/// [`ComputeError::NotCompiled`] for a runtime this build lacks (a native Metal device is
/// [`ComputeError::UnknownName`]: dspk has no such runtime), [`ComputeError::NoDevice`] when
/// the machine lacks the device, [`ComputeError::DeviceFailure`] when opening it failed.
pub fn open_device(device: Device) -> Result<Client, ComputeError> {
    let target = target_of(&device)?.checked()?;
    prepare(target);
    if let Some(client) = registry::client_if_open(&device) {
        return Ok(client);
    }
    let _opening = registry::OPENING.lock();
    if let Some(client) = registry::client_if_open(&device) {
        return Ok(client);
    }
    let mut opened = open_new(&device, target)?;
    registry::record(device, target, &mut opened);
    teardown::arm();
    Ok(opened.client)
}

/// A second device on the adapter of `device`, with a queue and memory of its own: how
/// several devices are used, and tested, on one GPU. Opens `device` first where it is not
/// open. On wgpu it is the same adapter reached through its graphics API named explicitly
/// (CubeCL keeps that as a device of its own); an adapter takes one such second device.
///
/// # Errors
/// As [`open_device`]; [`ComputeError::DeviceFailure`] for a device of another runtime than
/// wgpu, or one whose graphics API is named already.
pub fn open_second(device: &Device) -> Result<(Device, Client), ComputeError> {
    let target = target_of(device)?.checked()?;
    let first = open_device(device.clone())?;
    let refuse = |why: &str| device_failure(target, format!("no second device on it: {why}"));
    let Device::Wgpu(wgpu_device) = device else {
        if target == ComputeTarget::Cpu {
            return Err(refuse(
                "the cpu runtime has one device, all of the host's cores, and CubeCL opens it \
                 once; two passes on it share that one client",
            ));
        }
        return Err(refuse("only wgpu devices can be opened twice"));
    };
    if wgpu_device.backend != cubecl::device::WgpuBackend::Auto {
        return Err(refuse("its graphics API is named already"));
    }
    let backend = match registry::adapter_of(&first)
        .and_then(|a| a.backend)
        .as_deref()
    {
        Some("vulkan") => cubecl::device::WgpuBackend::Vulkan,
        Some("metal") => cubecl::device::WgpuBackend::Metal,
        Some("dx12") => cubecl::device::WgpuBackend::Dx12,
        Some("gl") => cubecl::device::WgpuBackend::Gl,
        Some(other) => return Err(refuse(&format!("graphics API {other}"))),
        None => return Err(refuse("dspk did not open it")),
    };
    let mut second = wgpu_device.clone();
    second.backend = backend;
    let second = Device::Wgpu(second);
    let client = open_device(second.clone())?;
    Ok((second, client))
}

/// What runs before CubeCL is asked anything about `target`'s devices: its configuration
/// ([`configure_runtime`]) and, for wgpu, the Vulkan loader and drivers kept loaded
/// (`driver::hold`).
#[cfg_attr(
    not(feature = "wgpu"),
    expect(unused_variables, reason = "only wgpu holds a driver")
)]
fn prepare(target: ComputeTarget) {
    configure_runtime();
    #[cfg(feature = "wgpu")]
    if target == ComputeTarget::Wgpu {
        crate::driver::hold();
    }
}

/// The dspk runtime of a CubeCL device.
fn target_of(device: &Device) -> Result<ComputeTarget, ComputeError> {
    match device.runtime() {
        RuntimeId::Wgpu => Ok(ComputeTarget::Wgpu),
        RuntimeId::Cuda => Ok(ComputeTarget::Cuda),
        RuntimeId::Hip => Ok(ComputeTarget::Hip),
        RuntimeId::Cpu => Ok(ComputeTarget::Cpu),
        RuntimeId::Metal => Err(ComputeError::UnknownName {
            name: "metal".to_string(),
        }),
    }
}

/// A CubeCL "no such device" as dspk's error.
fn unavailable(target: ComputeTarget, e: DeviceUnavailable) -> ComputeError {
    match e {
        DeviceUnavailable::NotLinked(_) => ComputeError::NotCompiled { target },
        DeviceUnavailable::NoSuchDevice { available, .. } => ComputeError::NoDevice {
            target,
            reason: match target {
                ComputeTarget::Wgpu if available == 0 => {
                    "no graphics adapter found (on Linux, Vulkan needs a driver: \
                     mesa-vulkan-drivers provides the lavapipe software device)"
                        .to_string()
                }
                _ => format!("{e}"),
            },
        },
    }
}

/// Opens a device that is not open yet.
fn open_new(device: &Device, target: ComputeTarget) -> Result<Opened, ComputeError> {
    match device {
        #[cfg(feature = "wgpu")]
        Device::Wgpu(wgpu_device) => wgpu::open(wgpu_device),
        _ => {
            let client =
                client_or_panic_reason(device).map_err(|reason| device_failure(target, reason))?;
            Ok(Opened {
                client,
                adapter: None,
                wgpu: None,
            })
        }
    }
}

/// `device.client()`, with a panic while creating it turned into its message.
fn client_or_panic_reason(device: &Device) -> Result<Client, String> {
    catch_unwind(AssertUnwindSafe(|| device.client())).map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the runtime panicked while opening the device".to_string())
    })
}

/// Opening a wgpu device through CubeCL's fallible setup, keeping its device and queue.
#[cfg(feature = "wgpu")]
mod wgpu {
    use std::panic::{AssertUnwindSafe, catch_unwind};

    use cubecl::Device;
    use cubecl::device::WgpuDeviceKind;
    use dspk_types::{ComputeError, ComputeTarget};

    use super::client_or_panic_reason;
    use crate::adapter::{AdapterRecord, DeviceKind, WgpuHandles};
    use crate::failure::device_failure;
    use crate::registry::Opened;

    /// Opens a wgpu device through CubeCL's fallible setup, which registers the client under the
    /// device's id: the adapter's own limits are requested (CubeCL asks for `adapter.limits()`, so
    /// the largest storage binding is the adapter's, not wgpu's 128 MiB default).
    pub(super) fn open(device: &cubecl::device::WgpuDevice) -> Result<Opened, ComputeError> {
        use cubecl::wgpu::{AutoGraphicsApi, RuntimeOptions, WgpuInitError, try_init_setup};

        let target = ComputeTarget::Wgpu;
        let failure = |reason: String| device_failure(target, reason);
        let whole = Device::Wgpu(device.clone());
        if matches!(device.kind, WgpuDeviceKind::Existing(_)) {
            // Registered by the embedding application: nothing to set up.
            let client = client_or_panic_reason(&whole).map_err(failure)?;
            return Ok(Opened {
                client,
                adapter: None,
                wgpu: None,
            });
        }
        let options = RuntimeOptions::try_default().map_err(|e| failure(e.to_string()))?;
        let setup = catch_unwind(AssertUnwindSafe(|| {
            try_init_setup::<AutoGraphicsApi>(device, options)
        }))
        .map_err(|_| failure("the wgpu runtime panicked while opening the device".to_string()))?;
        match setup {
            Ok(setup) => {
                let info = setup.adapter.get_info();
                let adapter = AdapterRecord {
                    kind: kind_of(info.device_type),
                    backend: Some(format!("{:?}", info.backend).to_ascii_lowercase()),
                };
                let handles = WgpuHandles {
                    device: setup.device.clone(),
                    queue: setup.queue.clone(),
                };
                drop(setup);
                let client = client_or_panic_reason(&whole).map_err(failure)?;
                Ok(Opened {
                    client,
                    adapter: Some(adapter),
                    wgpu: Some(handles),
                })
            }
            // Already registered, by the embedding application or an earlier lazy client.
            Err(WgpuInitError::Registration { .. }) => {
                let client = client_or_panic_reason(&whole).map_err(failure)?;
                Ok(Opened {
                    client,
                    adapter: None,
                    wgpu: None,
                })
            }
            Err(
                e @ (WgpuInitError::AdapterUnavailable { .. }
                | WgpuInitError::UnsupportedGraphicsApi { .. }),
            ) => Err(ComputeError::NoDevice {
                target,
                reason: e.to_string(),
            }),
            Err(e) => Err(failure(e.to_string())),
        }
    }

    /// A wgpu adapter type as a [`DeviceKind`].
    fn kind_of(device_type: cubecl::wgpu::wgpu::DeviceType) -> DeviceKind {
        use cubecl::wgpu::wgpu::DeviceType;
        match device_type {
            DeviceType::DiscreteGpu => DeviceKind::Discrete,
            DeviceType::IntegratedGpu => DeviceKind::Integrated,
            DeviceType::VirtualGpu => DeviceKind::Virtual,
            DeviceType::Cpu => DeviceKind::Software,
            DeviceType::Other => DeviceKind::Unknown,
        }
    }
}
