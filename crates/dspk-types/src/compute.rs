//! Names of the compute runtimes, and which of them this build has (no GPU code).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The environment variable that picks the runtime of a program (`wgpu`, `cuda`, `hip`, `cpu`).
pub const RUNTIME_ENV: &str = "DSPK_RUNTIME";

/// The environment variable that limits device tests to some runtimes, comma-separated. A
/// runtime named there that cannot run is a test failure, not a skip.
pub const TEST_RUNTIMES_ENV: &str = "DSPK_TEST_RUNTIMES";

/// A CubeCL compute runtime. All four variants exist in every build; whether one is compiled in
/// is [`ComputeTarget::is_available`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ComputeTarget {
    /// wgpu: Vulkan, Metal, DirectX 12 (and Mesa's lavapipe as a software Vulkan device).
    Wgpu,
    /// CUDA on NVIDIA GPUs.
    Cuda,
    /// HIP on AMD GPUs.
    Hip,
    /// The CPU runtime (MLIR/LLVM).
    Cpu,
}

/// Why a runtime could not be chosen or used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ComputeError {
    /// A runtime name that is none of the four.
    #[error("unknown compute runtime '{name}': valid names are wgpu, cuda, hip, cpu")]
    UnknownName {
        /// The name as given.
        name: String,
    },
    /// A runtime that this build does not contain.
    #[error(
        "compute runtime '{target}' is not compiled in: rebuild with the cargo feature '{target}' (e.g. --features {target})"
    )]
    NotCompiled {
        /// The runtime asked for.
        target: ComputeTarget,
    },
    /// A build with no runtime at all.
    #[error("no compute runtime is compiled in: enable one of the features wgpu, cuda, hip, cpu")]
    NothingCompiled,
    /// A compiled-in runtime that found no usable device.
    #[error("compute runtime '{target}' found no usable device: {reason}")]
    NoDevice {
        /// The runtime.
        target: ComputeTarget,
        /// What the runtime reported.
        reason: String,
    },
    /// A device that failed while opening or running.
    #[error("compute runtime '{target}' failed: {reason}")]
    DeviceFailure {
        /// The runtime.
        target: ComputeTarget,
        /// What failed.
        reason: String,
    },
}

impl ComputeTarget {
    /// Every runtime, in preference order.
    pub const ALL: [ComputeTarget; 4] = [
        ComputeTarget::Wgpu,
        ComputeTarget::Cuda,
        ComputeTarget::Hip,
        ComputeTarget::Cpu,
    ];

    /// The lowercase name (`wgpu`, `cuda`, `hip`, `cpu`), which is also the cargo feature.
    pub fn name(&self) -> &'static str {
        match self {
            ComputeTarget::Wgpu => "wgpu",
            ComputeTarget::Cuda => "cuda",
            ComputeTarget::Hip => "hip",
            ComputeTarget::Cpu => "cpu",
        }
    }

    /// Parses a name, case-insensitively and ignoring surrounding whitespace.
    pub fn parse(name: &str) -> Result<Self, ComputeError> {
        let wanted = name.trim().to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|t| t.name() == wanted)
            .ok_or_else(|| ComputeError::UnknownName {
                name: name.to_string(),
            })
    }

    /// Whether this build contains the runtime.
    pub fn is_available(&self) -> bool {
        match self {
            ComputeTarget::Wgpu => cfg!(feature = "wgpu"),
            ComputeTarget::Cuda => cfg!(feature = "cuda"),
            ComputeTarget::Hip => cfg!(feature = "hip"),
            ComputeTarget::Cpu => cfg!(feature = "cpu"),
        }
    }

    /// The runtimes this build contains, in preference order (wgpu, cuda, hip, cpu).
    pub fn available() -> Vec<ComputeTarget> {
        Self::ALL.into_iter().filter(|t| t.is_available()).collect()
    }

    /// `self`, or [`ComputeError::NotCompiled`] when this build lacks it.
    pub fn checked(self) -> Result<Self, ComputeError> {
        if self.is_available() {
            Ok(self)
        } else {
            Err(ComputeError::NotCompiled { target: self })
        }
    }

    /// The runtime named by `DSPK_RUNTIME`, else the first one compiled in.
    pub fn from_env() -> Result<Self, ComputeError> {
        Self::from_env_value(std::env::var(RUNTIME_ENV).ok().as_deref())
    }

    /// [`ComputeTarget::from_env`] with the variable's value given (`None`: unset).
    pub fn from_env_value(value: Option<&str>) -> Result<Self, ComputeError> {
        match value.map(str::trim).filter(|v| !v.is_empty()) {
            Some(name) => Self::parse(name)?.checked(),
            None => Self::available()
                .first()
                .copied()
                .ok_or(ComputeError::NothingCompiled),
        }
    }

    /// The runtimes device tests run on: [`ComputeTarget::available`], limited by
    /// `DSPK_TEST_RUNTIMES` when it is set.
    ///
    /// # Panics
    /// When `DSPK_TEST_RUNTIMES` names an unknown runtime or one not compiled in, or names none:
    /// a test matrix must never silently test nothing.
    pub fn for_tests() -> Vec<ComputeTarget> {
        Self::for_tests_from(std::env::var(TEST_RUNTIMES_ENV).ok().as_deref())
    }

    /// [`ComputeTarget::for_tests`] with the variable's value given (`None`: unset).
    ///
    /// # Panics
    /// As [`ComputeTarget::for_tests`].
    pub fn for_tests_from(value: Option<&str>) -> Vec<ComputeTarget> {
        let Some(list) = value.filter(|v| !v.trim().is_empty()) else {
            return Self::available();
        };
        let mut out = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let target = match Self::parse(name).and_then(Self::checked) {
                Ok(t) => t,
                Err(e) => panic!("{TEST_RUNTIMES_ENV}={list}: {e}"),
            };
            if !out.contains(&target) {
                out.push(target);
            }
        }
        assert!(
            !out.is_empty(),
            "{TEST_RUNTIMES_ENV}={list:?} names no runtime"
        );
        out
    }

    /// Whether `DSPK_TEST_RUNTIMES` names this runtime explicitly (then a missing device is a
    /// failure rather than a skip).
    pub fn required_by_tests(&self) -> bool {
        std::env::var(TEST_RUNTIMES_ENV).is_ok_and(|list| {
            list.split(',')
                .any(|n| Self::parse(n).is_ok_and(|t| t == *self))
        })
    }
}

impl fmt::Display for ComputeTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ComputeTarget {
    type Err = ComputeError;

    fn from_str(s: &str) -> Result<Self, ComputeError> {
        Self::parse(s)
    }
}

#[cfg(test)]
#[path = "tests/compute.rs"]
mod tests;
