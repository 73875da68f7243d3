//! `dspk devices`: the runtimes compiled in, which found a device, and each device.

use std::fmt::Write as _;

use dspk_device::{DeviceInfo, TargetExt, describe, list_devices, open_device};
use dspk_types::ComputeTarget;
use serde::Serialize;

use crate::Ctx;
use crate::error::CliResult;

/// One runtime as `dspk devices` reports it.
#[derive(Debug, Serialize)]
struct RuntimeReport {
    runtime: ComputeTarget,
    compiled_in: bool,
    /// Whether its default device opened.
    usable: bool,
    /// Why it is not usable.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    devices: Vec<DeviceReport>,
}

/// One device of a runtime.
#[derive(Debug, Serialize)]
struct DeviceReport {
    /// Whether it is the runtime's default device (the one `scan` and `convert` use).
    default: bool,
    #[serde(flatten)]
    info: DeviceInfo,
}

/// Runs `dspk devices`: every runtime (or only `--runtime`'s), its default device and every
/// other device it enumerates, each opened and described.
pub(crate) fn run(ctx: &Ctx) -> CliResult<String> {
    let targets = match ctx.runtime_flag() {
        Some(_) => vec![ctx.target()?],
        None => ComputeTarget::ALL.to_vec(),
    };
    let reports: Vec<RuntimeReport> = targets.into_iter().map(report).collect();
    if ctx.json {
        return Ok(
            serde_json::to_string_pretty(&reports).expect("device reports serialise") + "\n",
        );
    }
    let mut out = String::new();
    for r in &reports {
        if !r.compiled_in {
            let _ = writeln!(
                out,
                "{}: not compiled in (build with --features {})",
                r.runtime, r.runtime
            );
            continue;
        }
        match &r.error {
            Some(e) if r.devices.is_empty() => {
                let _ = writeln!(out, "{}: compiled in, no usable device: {e}", r.runtime);
            }
            _ => {
                let n = r.devices.len();
                let plural = if n == 1 { "" } else { "s" };
                let _ = writeln!(out, "{}: compiled in, {n} device{plural}", r.runtime);
                for d in &r.devices {
                    let mark = if d.default { "* " } else { "  " };
                    for (i, line) in d.info.to_string().lines().enumerate() {
                        let lead = if i == 0 { mark } else { "  " };
                        let _ = writeln!(out, "  {lead}{line}");
                    }
                }
                if let Some(e) = &r.error {
                    let _ = writeln!(out, "  (the default device did not open: {e})");
                }
            }
        }
    }
    if reports.iter().any(|r| r.devices.iter().any(|d| d.default)) {
        out.push_str("* the runtime's default device, which scan and convert use\n");
    }
    Ok(out)
}

/// What one runtime has.
fn report(target: ComputeTarget) -> RuntimeReport {
    let mut r = RuntimeReport {
        runtime: target,
        compiled_in: target.is_available(),
        usable: false,
        error: None,
        devices: Vec::new(),
    };
    if !r.compiled_in {
        return r;
    }
    let default = match target.client() {
        Ok(client) => {
            r.usable = true;
            Some(describe(&client))
        }
        Err(e) => {
            r.error = Some(e.to_string());
            None
        }
    };
    let mut default_listed = false;
    if let Ok(devices) = list_devices(target) {
        for device in devices {
            let Ok(client) = open_device(device) else {
                continue;
            };
            let info = describe(&client);
            // The first enumerated device that looks like the default one is it (identical GPUs
            // of one machine enumerate in the order the default picks from).
            let is_default = !default_listed && default.as_ref() == Some(&info);
            default_listed |= is_default;
            r.devices.push(DeviceReport {
                default: is_default,
                info,
            });
        }
    }
    if let (Some(info), false) = (default, default_listed) {
        r.devices.insert(
            0,
            DeviceReport {
                default: true,
                info,
            },
        );
    }
    r
}
