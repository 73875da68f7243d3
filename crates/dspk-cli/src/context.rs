//! What every command shares: `--json`, and the runtime and devices a command runs on
//! (`--runtime`, `--devices` and their environment variables), opened through dspk-device.

use cubecl::client::Client;
use dspk_device::{Catalog, DEVICES_ENV, DeviceChoice, TargetExt, describe};
use dspk_stream::{PassDevice, Prepared, open_pass_devices, prepare};
use dspk_types::{ComputeTarget, RUNTIME_ENV};

use crate::error::{CliError, CliResult, Context as _};

/// What every command shares: the global options.
#[derive(Debug)]
pub(crate) struct Ctx {
    /// `--json`.
    pub(crate) json: bool,
    /// `--runtime` as given.
    pub(crate) runtime: Option<String>,
    /// `--devices` as given.
    pub(crate) devices: Option<String>,
}

impl Ctx {
    /// The context of `--json`, `--runtime` and `--devices` as given.
    pub(crate) fn new(json: bool, runtime: Option<String>, devices: Option<String>) -> Self {
        Self {
            json,
            runtime,
            devices,
        }
    }
}

impl Ctx {
    /// `--runtime` as given.
    pub(crate) fn runtime_flag(&self) -> Option<&str> {
        self.runtime.as_deref()
    }

    /// The runtime: `--runtime`, else `DSPK_RUNTIME`, else the first compiled in.
    pub(crate) fn target(&self) -> CliResult<ComputeTarget> {
        match &self.runtime {
            Some(name) => ComputeTarget::parse(name)
                .and_then(ComputeTarget::checked)
                .context("--runtime"),
            None => {
                let set = std::env::var_os(RUNTIME_ENV).is_some();
                ComputeTarget::from_env().map_err(|e| {
                    let e = CliError::from(e);
                    if set { e.context(RUNTIME_ENV) } else { e }
                })
            }
        }
    }

    /// The runtime and the client of its default device.
    pub(crate) fn client(&self) -> CliResult<(ComputeTarget, Client)> {
        let target = self.target()?;
        Ok((target, target.client()?))
    }

    /// The devices chosen by `--devices`, else `DSPK_DEVICES`; `None` when neither is given
    /// (the runtime's default device). With `--runtime` or `DSPK_RUNTIME`, only that
    /// runtime's devices can be chosen.
    pub(crate) fn chosen_devices(&self) -> CliResult<Option<Vec<PassDevice>>> {
        Ok(self.chosen_prepared()?.map(|(devices, _)| devices))
    }

    /// [`chosen_devices`](Self::chosen_devices), each device's pass kernels compiling from
    /// the moment it opened (while the next one opens).
    fn chosen_prepared(&self) -> CliResult<Option<(Vec<PassDevice>, Vec<Prepared>)>> {
        let choice = match &self.devices {
            Some(text) => text.parse::<DeviceChoice>().context("--devices")?,
            None => match DeviceChoice::from_env()? {
                Some(choice) => choice,
                None => return Ok(None),
            },
        };
        let flag = if self.devices.is_some() {
            "--devices".to_string()
        } else {
            DEVICES_ENV.to_string()
        };
        let runtime = (self.runtime.is_some() || std::env::var_os(RUNTIME_ENV).is_some())
            .then(|| self.target())
            .transpose()?;
        let (devices, prepared) =
            open_pass_devices(&Catalog::list(), &choice, runtime).context(flag)?;
        Ok(Some((devices, prepared)))
    }

    /// The devices a pass runs on: [`chosen_devices`](Self::chosen_devices), else the
    /// runtime's default device; with the runtime, and each device's kernels compiling (the
    /// pass waits for them; keep the [`Prepared`] until it is done).
    pub(crate) fn pass_devices(
        &self,
    ) -> CliResult<(ComputeTarget, Vec<PassDevice>, Vec<Prepared>)> {
        if let Some((devices, prepared)) = self.chosen_prepared()? {
            let target = describe(&devices[0].client).runtime;
            return Ok((target, devices, prepared));
        }
        let (target, client) = self.client()?;
        let prepared = vec![prepare(&client)];
        let label = describe(&client).adapter_name;
        Ok((target, vec![PassDevice { client, label }], prepared))
    }
}
