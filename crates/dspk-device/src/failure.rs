//! How dspk-device says that a device failed: always [`ComputeError::DeviceFailure`], made
//! here, and inside a [`DspError::Compute`] where a [`DspResult`](dspk_types::DspResult) is
//! returned. A caller's mistake (a launch that does not fit its kernel, WGSL the device
//! refuses, a window too large) stays the [`DspError`] that names it.

use std::fmt::Display;

use dspk_types::{ComputeError, ComputeTarget, DspError};

/// `target`'s device failed: `reason` says what failed.
pub(crate) fn device_failure(target: ComputeTarget, reason: impl Into<String>) -> ComputeError {
    ComputeError::DeviceFailure {
        target,
        reason: reason.into(),
    }
}

/// `target`'s device failed doing `what`, with the runtime's own error `e`, as a [`DspError`].
#[cfg_attr(
    not(any(feature = "wgpu", test)),
    expect(
        dead_code,
        reason = "only the wgpu modules report failures in a DspResult"
    )
)]
pub(crate) fn failed(target: ComputeTarget, what: &str, e: impl Display) -> DspError {
    DspError::Compute(device_failure(target, format!("{what}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_device_is_one_error_with_the_runtime_and_the_reason() {
        let e = failed(ComputeTarget::Wgpu, "waiting for the device failed", "lost");
        assert_eq!(
            e.to_string(),
            "compute runtime 'wgpu' failed: waiting for the device failed: lost"
        );
        assert_eq!(
            e,
            DspError::Compute(ComputeError::DeviceFailure {
                target: ComputeTarget::Wgpu,
                reason: "waiting for the device failed: lost".into(),
            })
        );
        let e = device_failure(ComputeTarget::Cuda, "check kernel failed");
        assert_eq!(
            e.to_string(),
            "compute runtime 'cuda' failed: check kernel failed"
        );
        // `?` carries it into a `DspResult` unchanged.
        let carried: DspError = e.clone().into();
        assert_eq!(carried, DspError::Compute(e));
    }
}
