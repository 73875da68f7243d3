//! What dspk learnt about an adapter when it opened it, and which runtime a client belongs to:
//! a leaf module that the registry, the device description and the wgpu bridge all read.

use std::fmt;

use cubecl::client::Client;
use dspk_types::ComputeTarget;
use serde::Serialize;

/// What kind of device a client runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceKind {
    /// A GPU of its own (an NVIDIA H200, an AMD Radeon card).
    Discrete,
    /// A GPU sharing the host's memory (a laptop's or an Apple Silicon GPU).
    Integrated,
    /// A virtual GPU (in a virtual machine).
    Virtual,
    /// Software: a software rasterizer (Mesa's lavapipe/llvmpipe, SwiftShader, WARP) or the
    /// CPU runtime. Correct, but slow.
    Software,
    /// The runtime does not say (CUDA and HIP do not report it through CubeCL).
    Unknown,
}

impl DeviceKind {
    /// The lowercase name (`discrete`, `integrated`, `virtual`, `software`, `unknown`).
    pub fn name(&self) -> &'static str {
        match self {
            DeviceKind::Discrete => "discrete",
            DeviceKind::Integrated => "integrated",
            DeviceKind::Virtual => "virtual",
            DeviceKind::Software => "software",
            DeviceKind::Unknown => "unknown",
        }
    }
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What dspk learnt about an adapter when it opened it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AdapterRecord {
    /// The kind the adapter reported.
    pub kind: DeviceKind,
    /// The graphics API, lowercase (`vulkan`).
    pub backend: Option<String>,
}

pub(crate) use handles::WgpuHandles;

/// The wgpu device and queue dspk created for a device it opened.
#[cfg(feature = "wgpu")]
mod handles {
    use cubecl::wgpu::wgpu;

    /// The wgpu device and its queue, for dspk's own transfers and kernels (the bridge) and
    /// to destroy the device at teardown.
    #[derive(Clone)]
    pub(crate) struct WgpuHandles {
        /// The device.
        pub device: wgpu::Device,
        /// Its queue, the one CubeCL submits to as well.
        pub queue: wgpu::Queue,
    }

    impl WgpuHandles {
        /// Destroys the device (after its runner has stopped, or at exit).
        pub(crate) fn destroy(&self) {
            self.device.destroy();
        }
    }
}

/// Without wgpu there are no wgpu handles: the type has no values.
#[cfg(not(feature = "wgpu"))]
mod handles {
    /// No value: dspk creates wgpu devices only with the `wgpu` feature.
    #[derive(Clone)]
    pub(crate) enum WgpuHandles {}

    impl WgpuHandles {
        /// Never called: there is no value.
        pub(crate) fn destroy(&self) {
            match *self {}
        }
    }
}

/// The runtime `client` belongs to.
pub(crate) fn runtime_of_client(client: &Client) -> ComputeTarget {
    runtime_of_name(client.name())
}

/// The runtime a client belongs to, from the name CubeCL gives it (`wgpu<…>`, `cuda`, `hip`,
/// `cpu`).
pub(crate) fn runtime_of_name(name: &str) -> ComputeTarget {
    let lower = name.to_ascii_lowercase();
    if lower.starts_with("cuda") {
        ComputeTarget::Cuda
    } else if lower.starts_with("hip") || lower.starts_with("rocm") {
        ComputeTarget::Hip
    } else if lower.starts_with("cpu") {
        ComputeTarget::Cpu
    } else {
        ComputeTarget::Wgpu
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_names() {
        assert_eq!(runtime_of_name("wgpu<spirv>"), ComputeTarget::Wgpu);
        assert_eq!(runtime_of_name("wgpu<wgsl>"), ComputeTarget::Wgpu);
        assert_eq!(runtime_of_name("cuda"), ComputeTarget::Cuda);
        assert_eq!(runtime_of_name("hip"), ComputeTarget::Hip);
        assert_eq!(runtime_of_name("cpu"), ComputeTarget::Cpu);
    }
}
