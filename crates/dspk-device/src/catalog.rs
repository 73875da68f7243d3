//! Every device of every runtime, numbered once for the process, and the choice of devices a
//! run uses (`--devices all`, `--devices 0,2`, `DSPK_DEVICES`).

use std::fmt;
use std::str::FromStr;

use cubecl::Device;
use cubecl::client::Client;
use dspk_types::{ComputeError, ComputeTarget, DspError, DspResult};
use serde::Serialize;

use crate::adapter::DeviceKind;
use crate::info::{DeviceInfo, describe};
use crate::open::{TargetExt, list_devices, open_device, open_second};

/// The variable that chooses devices where no `--devices` is given (`all`, or numbers as
/// `dspk devices` prints them: `0,2`).
pub const DEVICES_ENV: &str = "DSPK_DEVICES";

/// One runtime in the [`Catalog`].
#[derive(Debug, Clone, Serialize)]
pub struct RuntimeEntry {
    /// The runtime.
    pub runtime: ComputeTarget,
    /// Whether this build has it.
    pub compiled_in: bool,
    /// Whether its default device opened.
    pub usable: bool,
    /// Why it is not usable (or why its default device did not open).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Its devices, numbered.
    pub devices: Vec<ListedDevice>,
}

/// One device in the [`Catalog`].
#[derive(Debug, Clone, Serialize)]
pub struct ListedDevice {
    /// Its number: the position among every device of every runtime, in the order of
    /// [`ComputeTarget::ALL`], then the runtime's own order.
    pub index: usize,
    /// Whether it is its runtime's default device (the one a run without `--devices` uses).
    pub default: bool,
    /// What it is.
    #[serde(flatten)]
    pub info: DeviceInfo,
    /// The device, to open it again.
    #[serde(skip)]
    pub device: Device,
}

/// Every device of every runtime this build has, each opened once to describe it, numbered
/// (`dspk devices`, `dspk.devices()`).
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub struct Catalog {
    /// One entry per runtime, in the order of [`ComputeTarget::ALL`].
    pub runtimes: Vec<RuntimeEntry>,
}

impl Catalog {
    /// Lists and describes every device (opening each: this takes as long as opening them).
    pub fn list() -> Self {
        let mut next = 0;
        let runtimes = ComputeTarget::ALL
            .into_iter()
            .map(|target| entry(target, &mut next))
            .collect();
        Self { runtimes }
    }

    /// Every device, in number order.
    pub fn devices(&self) -> impl Iterator<Item = &ListedDevice> {
        self.runtimes.iter().flat_map(|r| r.devices.iter())
    }

    /// The device numbered `index`.
    pub fn get(&self, index: usize) -> Option<&ListedDevice> {
        self.devices().find(|d| d.index == index)
    }

    /// The devices `choice` names, in its order: `all` is every device that is not a
    /// software rasterizer (every device when there is nothing else), of `runtime` only where
    /// one is given. A number given twice opens a second device on the same adapter (a queue
    /// and memory of its own; the way several devices are tested on one GPU).
    ///
    /// # Errors
    /// A number no device has (the message lists the numbers there are), a device of another
    /// runtime than `runtime`, no device at all, and a device that does not open.
    pub fn open(
        &self,
        choice: &DeviceChoice,
        runtime: Option<ComputeTarget>,
    ) -> DspResult<Vec<ChosenDevice>> {
        self.open_each(choice, runtime, |_| {})
    }

    /// As [`open`](Self::open), handing each device to `opened` as soon as it is open, before
    /// the next one opens (to start work on it meanwhile: compiling its kernels, say).
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_each(
        &self,
        choice: &DeviceChoice,
        runtime: Option<ComputeTarget>,
        mut opened: impl FnMut(&ChosenDevice),
    ) -> DspResult<Vec<ChosenDevice>> {
        let of_runtime = |d: &&ListedDevice| runtime.is_none_or(|t| d.info.runtime == t);
        let indices: Vec<usize> = match choice {
            DeviceChoice::All => {
                let listed: Vec<&ListedDevice> = self.devices().filter(of_runtime).collect();
                let hardware: Vec<usize> = listed
                    .iter()
                    .filter(|d| d.info.kind != DeviceKind::Software)
                    .map(|d| d.index)
                    .collect();
                if hardware.is_empty() {
                    listed.iter().map(|d| d.index).collect()
                } else {
                    hardware
                }
            }
            DeviceChoice::Listed(list) => list.clone(),
        };
        if indices.is_empty() {
            return Err(ComputeError::NoDevice {
                target: runtime.unwrap_or(ComputeTarget::Wgpu),
                reason: "`dspk devices` lists none that can be chosen".to_string(),
            }
            .into());
        }
        let mut chosen: Vec<ChosenDevice> = Vec::with_capacity(indices.len());
        for index in indices {
            let Some(listed) = self.get(index) else {
                let there: Vec<String> = self.devices().map(|d| d.index.to_string()).collect();
                return Err(DspError::config(format!(
                    "device {index} does not exist: `dspk devices` numbers {}",
                    if there.is_empty() {
                        "none".to_string()
                    } else {
                        there.join(", ")
                    }
                )));
            };
            if let Some(t) = runtime
                && listed.info.runtime != t
            {
                return Err(DspError::config(format!(
                    "device {index} is a {} device, not {t}",
                    listed.info.runtime
                )));
            }
            let again = chosen.iter().filter(|c| c.index == index).count();
            let (client, label) = match again {
                0 => (
                    open_device(listed.device.clone())?,
                    format!("{index} ({})", listed.info.adapter_name),
                ),
                1 => (
                    open_second(&listed.device)?.1,
                    format!("{index}b ({}, a second device)", listed.info.adapter_name),
                ),
                _ => {
                    return Err(DspError::config(format!(
                        "device {index} is chosen {} times: an adapter takes two devices at most",
                        again + 1
                    )));
                }
            };
            let device = ChosenDevice {
                index,
                label,
                client,
            };
            opened(&device);
            chosen.push(device);
        }
        Ok(chosen)
    }
}

/// A device a run uses.
#[derive(Clone)]
pub struct ChosenDevice {
    /// Its number in the [`Catalog`].
    pub index: usize,
    /// How reports and errors name it: `0 (NVIDIA H200)`, `0b (…)` for a second device on
    /// the same adapter.
    pub label: String,
    /// Its client.
    pub client: Client,
}

impl fmt::Debug for ChosenDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChosenDevice")
            .field("index", &self.index)
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

/// Which devices a run uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceChoice {
    /// Every GPU (see [`Catalog::open`]).
    All,
    /// These numbers, in this order (a number twice: two devices on one adapter).
    Listed(Vec<usize>),
}

impl DeviceChoice {
    /// [`DEVICES_ENV`]'s choice, `None` where it is unset or empty.
    ///
    /// # Errors
    /// A value that does not parse, naming the variable.
    pub fn from_env() -> DspResult<Option<Self>> {
        match std::env::var(DEVICES_ENV) {
            Ok(v) if !v.trim().is_empty() => v
                .parse()
                .map(Some)
                .map_err(|e: DspError| DspError::config(format!("{DEVICES_ENV}: {e}"))),
            _ => Ok(None),
        }
    }
}

impl FromStr for DeviceChoice {
    type Err = DspError;

    fn from_str(text: &str) -> DspResult<Self> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("all") {
            return Ok(DeviceChoice::All);
        }
        let list = text
            .split(',')
            .map(|part| {
                let part = part.trim();
                part.parse::<usize>().map_err(|_| {
                    DspError::config(format!(
                        "`{part}` is not a device number: give `all` or numbers as `dspk \
                         devices` prints them, separated by commas (`0,2`)"
                    ))
                })
            })
            .collect::<DspResult<Vec<usize>>>()?;
        Ok(DeviceChoice::Listed(list))
    }
}

impl fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceChoice::All => f.write_str("all"),
            DeviceChoice::Listed(list) => {
                let parts: Vec<String> = list.iter().map(ToString::to_string).collect();
                f.write_str(&parts.join(","))
            }
        }
    }
}

/// One runtime's entry, numbering its devices from `next`.
fn entry(target: ComputeTarget, next: &mut usize) -> RuntimeEntry {
    let mut r = RuntimeEntry {
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
    let mut found: Vec<(bool, DeviceInfo, Device)> = Vec::new();
    let mut default_listed = false;
    if let Ok(devices) = list_devices(target) {
        for device in devices {
            let Ok(client) = open_device(device.clone()) else {
                continue;
            };
            let info = describe(&client);
            // The first enumerated device that looks like the default one is it (identical GPUs
            // of one machine enumerate in the order the default picks from).
            let is_default = !default_listed && default.as_ref() == Some(&info);
            default_listed |= is_default;
            found.push((is_default, info, device));
        }
    }
    if let (Some(info), false) = (default, default_listed)
        && let Ok(device) = target.device()
    {
        found.insert(0, (true, info, device));
    }
    for (default, info, device) in found {
        r.devices.push(ListedDevice {
            index: *next,
            default,
            info,
            device,
        });
        *next += 1;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_parse_and_print() {
        assert_eq!("all".parse::<DeviceChoice>().unwrap(), DeviceChoice::All);
        assert_eq!(" ALL ".parse::<DeviceChoice>().unwrap(), DeviceChoice::All);
        assert_eq!(
            "0, 2".parse::<DeviceChoice>().unwrap(),
            DeviceChoice::Listed(vec![0, 2])
        );
        assert_eq!(
            "1,1".parse::<DeviceChoice>().unwrap().to_string(),
            "1,1".to_string()
        );
        for bad in ["", "0,", "x", "-1", "0;2", "1.5"] {
            let err = bad.parse::<DeviceChoice>().unwrap_err().to_string();
            assert!(err.contains("is not a device number"), "{bad}: {err}");
        }
    }
}
