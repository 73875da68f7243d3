//! What a device is and what it allows: [`DeviceInfo`], from a client's own properties.

use std::fmt;

use cubecl::client::Client;
use cubecl::features::Plane;
use dspk_types::ComputeTarget;
use serde::Serialize;

use crate::adapter::{DeviceKind, runtime_of_name};
use crate::registry;

/// A device as `dspk devices` shows it, and the limits kernels are sized against.
///
/// Every figure comes from the client's own properties (`client.properties()`), so it
/// describes the device as CubeCL opened it (on wgpu: with the adapter's own limits, which
/// CubeCL requests in full).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceInfo {
    /// The runtime.
    pub runtime: ComputeTarget,
    /// The runtime as CubeCL names it on this device, with its compiler (`wgpu<spirv>`,
    /// `wgpu<wgsl>`, `cuda`, …).
    pub runtime_name: String,
    /// The device's name (`llvmpipe (LLVM 15.0.6, 256 bits)`, `NVIDIA H200`).
    pub adapter_name: String,
    /// Discrete, integrated, virtual, software or unknown.
    pub kind: DeviceKind,
    /// The graphics API under wgpu (`vulkan`, `metal`, `dx12`, `gl`), `None` for the other
    /// runtimes or a device dspk did not open.
    pub backend: Option<String>,
    /// The smallest plane (warp, subgroup) size the device may run with
    /// (`properties().hardware.plane_size_min`).
    pub plane_size_min: u32,
    /// The largest plane size (`properties().hardware.plane_size_max`).
    pub plane_size_max: u32,
    /// Whether kernels may use plane (subgroup) operations
    /// (`properties().features.plane` contains `Plane::Ops`).
    pub plane_ops: bool,
    /// The largest buffer one kernel binding may address, in bytes
    /// (`properties().memory.max_page_size`; on wgpu the smaller of the device's
    /// `max_storage_buffer_binding_size` and `max_buffer_size`).
    pub max_storage_binding_bytes: u64,
    /// How much memory the device offers a workload, in bytes, where the runtime says
    /// (`properties().memory.max_memory()`).
    pub memory_bytes: Option<u64>,
    /// The most cubes (workgroups) per grid dimension, x, y, z
    /// (`properties().hardware.max_cube_count`).
    pub max_cube_count: (u32, u32, u32),
    /// The largest cube (workgroup) per dimension, x, y, z
    /// (`properties().hardware.max_cube_dim`).
    pub max_cube_dim: (u32, u32, u32),
    /// The most units (invocations) in one cube (`properties().hardware.max_units_per_cube`).
    pub max_units_per_cube: u32,
    /// Shared (workgroup) memory per cube, in bytes
    /// (`properties().hardware.max_shared_memory_size`).
    pub max_shared_memory_bytes: u64,
    /// The most buffers one kernel may bind (`properties().hardware.max_bindings`).
    pub max_bindings: u32,
}

/// Describes the device behind `client`.
///
/// The kind and the graphics API come from what dspk recorded when it opened the device; a
/// client opened elsewhere gets them inferred from its name (`Unknown` where nothing tells).
pub fn describe(client: &Client) -> DeviceInfo {
    let props = client.properties();
    let hw = &props.hardware;
    let runtime_name = client.name().to_string();
    let runtime = runtime_of_name(&runtime_name);
    let adapter_name = props.identity.name.clone();
    let recorded = registry::adapter_of(client);
    let kind = match &recorded {
        Some(adapter) => adapter.kind,
        None => infer_kind(runtime, &adapter_name),
    };
    DeviceInfo {
        runtime,
        runtime_name,
        adapter_name,
        kind,
        backend: recorded.and_then(|a| a.backend),
        plane_size_min: hw.plane_size_min,
        plane_size_max: hw.plane_size_max,
        plane_ops: props.features.plane.contains(Plane::Ops),
        max_storage_binding_bytes: props.memory.max_page_size,
        memory_bytes: props.memory.max_memory(),
        max_cube_count: hw.max_cube_count,
        max_cube_dim: hw.max_cube_dim,
        max_units_per_cube: hw.max_units_per_cube,
        max_shared_memory_bytes: hw.max_shared_memory_size as u64,
        max_bindings: hw.max_bindings,
    }
}

/// A device kind guessed from the runtime and the device's name.
fn infer_kind(runtime: ComputeTarget, adapter_name: &str) -> DeviceKind {
    let lower = adapter_name.to_ascii_lowercase();
    let software = ["llvmpipe", "lavapipe", "swiftshader", "warp", "softpipe"];
    if runtime == ComputeTarget::Cpu || software.iter().any(|s| lower.contains(s)) {
        DeviceKind::Software
    } else {
        DeviceKind::Unknown
    }
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
        writeln!(
            f,
            "{} ({}, {}{})",
            self.adapter_name,
            self.kind,
            self.runtime_name,
            self.backend
                .as_deref()
                .map(|b| format!(" on {b}"))
                .unwrap_or_default()
        )?;
        writeln!(
            f,
            "  plane size {}..{}{}",
            self.plane_size_min,
            self.plane_size_max,
            if self.plane_ops {
                ""
            } else {
                " (no plane operations)"
            }
        )?;
        writeln!(
            f,
            "  largest storage binding {:.0} MiB ({} bytes)",
            mib(self.max_storage_binding_bytes),
            self.max_storage_binding_bytes
        )?;
        if let Some(memory) = self.memory_bytes {
            writeln!(f, "  memory {:.0} MiB", mib(memory))?;
        }
        let (x, y, z) = self.max_cube_count;
        let (dx, dy, dz) = self.max_cube_dim;
        write!(
            f,
            "  grid up to {x} x {y} x {z} cubes, cubes up to {dx} x {dy} x {dz} ({} units), \
             {} KiB shared memory, {} bindings",
            self.max_units_per_cube,
            self.max_shared_memory_bytes / 1024,
            self.max_bindings
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_inferred_from_names() {
        assert_eq!(
            infer_kind(ComputeTarget::Wgpu, "llvmpipe (LLVM 15.0.6, 256 bits)"),
            DeviceKind::Software
        );
        assert_eq!(
            infer_kind(ComputeTarget::Wgpu, "NVIDIA H200"),
            DeviceKind::Unknown
        );
        assert_eq!(infer_kind(ComputeTarget::Cpu, "x86"), DeviceKind::Software);
    }
}
