//! The one dspk crate that opens compute devices: runtimes, caches, the registry of opened
//! devices, and their teardown at exit.
//!
//! Everything else in dspk takes a [`cubecl::client::Client`] and never picks a device. This
//! crate is where a [`ComputeTarget`] (a runtime name) becomes a device and a client:
//!
//! ```no_run
//! use dspk_device::{TargetExt, describe};
//! use dspk_types::ComputeTarget;
//!
//! # fn main() -> Result<(), dspk_types::ComputeError> {
//! let target = ComputeTarget::from_env()?; // DSPK_RUNTIME, else the first compiled in
//! let client = target.client()?;           // NoDevice rather than a panic
//! println!("{}", describe(&client));
//! # Ok(())
//! # }
//! ```
//!
//! What it does once per process, before the first device opens:
//! - [`configure_runtime`]: CubeCL's compiled-kernel cache on, autotune decisions persisted,
//!   both in the user cache directory (`DSPK_CACHE_DIR`, `DSPK_KERNEL_CACHE` adjust it; a
//!   configuration set by the embedding application is kept).
//! - On wgpu, one Vulkan instance that is never dropped, so that the Vulkan loader and drivers
//!   load once, not again for each instance CubeCL creates and drops.
//! - Every device a client was made for is recorded; after each newly opened device an exit
//!   handler is (re)registered through `dspk-exit`, so it runs before the exit handlers of the
//!   driver layers the device loaded. At exit it shuts the wgpu devices down (runner threads
//!   stopped, devices destroyed) within [`TEARDOWN_LIMIT`]; past that the process ends with its
//!   own status. [`shutdown_devices`] does the same early.
//!
//! Features: `wgpu` (default; with CubeCL's SPIR-V compiler, whose output is what the kernel
//! cache keeps on Vulkan), `cuda`, `hip`, `cpu`, each turning on CubeCL's runtime and
//! `dspk-types`' feature of the same name. Every [`cubecl::Device`] variant exists in every
//! build; asking for a runtime that is not compiled in is [`ComputeError::NotCompiled`].
//!
//! A device that fails is [`ComputeError::DeviceFailure`], everywhere in this crate; where a
//! function returns a [`DspResult`](dspk_types::DspResult) it comes inside
//! [`DspError::Compute`](dspk_types::DspError::Compute).
//!
//! [`ComputeTarget`]: dspk_types::ComputeTarget
//! [`ComputeError::NotCompiled`]: dspk_types::ComputeError::NotCompiled
//! [`ComputeError::DeviceFailure`]: dspk_types::ComputeError::DeviceFailure

// Leaves first: each module uses only modules above it (ARCHITECTURE.md lists the graph).
mod adapter;
#[cfg(feature = "wgpu")]
mod bridge;
mod catalog;
mod check;
mod config;
#[cfg(feature = "wgpu")]
mod driver;
mod failure;
mod info;
mod open;
mod registry;
mod teardown;
pub mod upload;
mod worker;

pub use adapter::DeviceKind;
pub use catalog::{Catalog, ChosenDevice, DEVICES_ENV, DeviceChoice, ListedDevice, RuntimeEntry};
pub use check::{check_device, run_check_kernel};
pub use config::{
    CACHE_DIR_ENV, CacheSettings, ConfigOrigin, KERNEL_CACHE_ENV, cache_dir, configure_runtime,
};
pub use info::{DeviceInfo, describe};
pub use open::{ComputeTask, TargetExt, list_devices, open_device, open_second};
pub use registry::open_devices;
pub use teardown::{TEARDOWN_LIMIT, TRACE_ENV, shutdown_devices};
pub use worker::{
    SLURM_DEVICE_ENV, SlurmPlace, Worker, WorkerDevice, WorkerDeviceError, worker_device,
};
