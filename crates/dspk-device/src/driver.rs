//! The Vulkan loader and drivers, kept loaded for the life of the process.
//!
//! CubeCL's wgpu runtime creates a Vulkan instance for each thing it asks (the adapters to
//! list, the graphics API to settle on, then the instance a device opens on) and drops the
//! first two. wgpu loads the Vulkan loader for each instance and unloads it with the
//! instance, and the loader loads every installed driver for each instance and unloads them
//! with it: without [`hold`], a process that lists and opens one device loads the loader and
//! every driver three times from the disk (`strace` of `dspk devices` on lavapipe: three
//! `openat`s of `libvulkan.so.1` and of each driver). One instance dspk creates first and
//! never drops keeps them loaded, so the later ones find them in memory.

use std::sync::OnceLock;

use cubecl::wgpu::wgpu;

/// The instance that keeps the loader and drivers loaded; created once, never dropped.
static HELD: OnceLock<wgpu::Instance> = OnceLock::new();

/// Creates the Vulkan instance that keeps the loader and drivers loaded, unless it exists:
/// called before CubeCL creates any instance (listing or opening a wgpu device). It asks for
/// no adapter, so a machine without Vulkan just gets an instance with no backend.
pub(crate) fn hold() {
    HELD.get_or_init(|| {
        wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::VULKAN,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        })
    });
}
