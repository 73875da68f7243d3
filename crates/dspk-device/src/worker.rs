//! Which GPU a scheduler's worker takes: one pure function of what the worker's environment
//! says and the GPUs it sees, for `dspk run` (a Slurm array task) and `dspk.distributed` (a
//! Dask worker).

use std::fmt;

use dspk_types::ComputeTarget;

/// The Slurm variables a task's GPU is chosen from, read by [`SlurmPlace::from_env`] only.
pub const SLURM_DEVICE_ENV: [&str; 4] = [
    "SLURM_LOCALID",
    "SLURM_STEP_GPUS",
    "SLURM_JOB_GPUS",
    "GPU_DEVICE_ORDINAL",
];

/// A Slurm task's place, as far as its GPU is concerned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SlurmPlace {
    /// `SLURM_LOCALID`: the task's number on its node.
    pub local_id: Option<usize>,
    /// `SLURM_STEP_GPUS`, else `SLURM_JOB_GPUS`: the node's GPU numbers Slurm allocated.
    pub gpus: Option<Vec<usize>>,
    /// `GPU_DEVICE_ORDINAL`: the allocated GPUs' numbers among those the job can see.
    pub ordinals: Option<Vec<usize>>,
}

impl SlurmPlace {
    /// Read from the process environment (the one place these variables are read).
    ///
    /// # Errors
    /// A variable that does not hold what Slurm writes, naming it.
    pub fn from_env() -> Result<Self, WorkerDeviceError> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// Read from `var` (a variable's value by name; `None` where it is unset).
    ///
    /// # Errors
    /// As [`from_env`](Self::from_env).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self, WorkerDeviceError> {
        let list = |name: &'static str| -> Result<Option<Vec<usize>>, WorkerDeviceError> {
            match var(name) {
                Some(text) if !text.trim().is_empty() => gpu_list(name, &text).map(Some),
                _ => Ok(None),
            }
        };
        let local_id = match var("SLURM_LOCALID") {
            Some(text) => Some(
                text.trim()
                    .parse()
                    .map_err(|_| WorkerDeviceError::NotATaskNumber { text })?,
            ),
            None => None,
        };
        Ok(Self {
            local_id,
            gpus: match list("SLURM_STEP_GPUS")? {
                Some(g) => Some(g),
                None => list("SLURM_JOB_GPUS")?,
            },
            ordinals: list("GPU_DEVICE_ORDINAL")?,
        })
    }

    /// Whether none of the variables is set (not a Slurm task).
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// A worker whose device is to be chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Worker {
    /// A Slurm task.
    Slurm(SlurmPlace),
    /// Worker number `index` of a pool given `devices` (numbers as [`Catalog`](crate::Catalog)
    /// gives them): it takes `devices[index % devices.len()]`.
    Listed {
        /// The worker's number in its pool.
        index: usize,
        /// The devices the pool shares.
        devices: Vec<usize>,
    },
}

/// The device a worker takes, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerDevice {
    /// The device's number as [`Catalog`](crate::Catalog) gives it; `None` is the runtime's
    /// default device.
    pub index: Option<usize>,
    /// Why, in words, for a job's provenance.
    pub reason: String,
}

/// The device `worker` takes on `runtime`, whose GPUs (not software rasterizers) are `gpus`,
/// in [`Catalog`](crate::Catalog) numbers and its order.
///
/// A Slurm task takes
/// - one of Slurm's GPU numbers (`SLURM_STEP_GPUS`/`SLURM_JOB_GPUS`) when it sees more GPUs
///   than it was given (no device cgroup: every GPU of the node is visible, in the node's
///   order): entry `SLURM_LOCALID` of the list (modulo its length);
/// - else one by its position among what it sees: entry `SLURM_LOCALID` of
///   `GPU_DEVICE_ORDINAL`, else `SLURM_LOCALID` itself, modulo the GPUs seen (a cgroup that
///   hides the other GPUs leaves the task's own as 0, 1…);
/// - the runtime's default device without GPUs or without any of these variables.
///
/// A listed worker takes its entry of the list (the default device where the list is empty).
///
/// # Errors
/// A Slurm number of a GPU the task does not see.
pub fn worker_device(
    worker: &Worker,
    runtime: ComputeTarget,
    gpus: &[usize],
) -> Result<WorkerDevice, WorkerDeviceError> {
    let place = match worker {
        Worker::Listed { devices, .. } if devices.is_empty() => {
            return Ok(WorkerDevice {
                index: None,
                reason: "the runtime's default device (no devices given)".to_string(),
            });
        }
        Worker::Listed { index, devices } => {
            let device = devices[index % devices.len()];
            return Ok(WorkerDevice {
                index: Some(device),
                reason: format!("worker {index} of the devices {devices:?}: dspk device {device}"),
            });
        }
        Worker::Slurm(place) => place,
    };
    if place.is_empty() {
        return Ok(WorkerDevice {
            index: None,
            reason: "the runtime's default device (not a Slurm job)".to_string(),
        });
    }
    let visible = gpus.len();
    if visible == 0 {
        return Ok(WorkerDevice {
            index: None,
            reason: format!(
                "the runtime's default device ({runtime} lists no GPU on this machine)"
            ),
        });
    }
    let local = place.local_id.unwrap_or(0);
    let pick = |list: &[usize],
                variable: &'static str|
     -> Result<(usize, String), WorkerDeviceError> {
        let at = local % list.len();
        let gpu = list[at];
        if gpu >= visible {
            return Err(WorkerDeviceError::Unseen {
                variable,
                gpu,
                visible,
            });
        }
        Ok((
            gpu,
            format!(
                "entry {at} (SLURM_LOCALID {local}) of {variable} {list:?}: GPU {gpu} of {visible}"
            ),
        ))
    };
    let (at, why) = match (&place.gpus, &place.ordinals) {
        (Some(slurm), _) if visible > slurm.len() => pick(slurm, "SLURM_STEP_GPUS/SLURM_JOB_GPUS")?,
        (_, Some(ordinals)) => pick(ordinals, "GPU_DEVICE_ORDINAL")?,
        _ => {
            let gpu = local % visible;
            (
                gpu,
                format!("SLURM_LOCALID {local} modulo the {visible} GPUs this job sees: GPU {gpu}"),
            )
        }
    };
    Ok(WorkerDevice {
        index: Some(gpus[at]),
        reason: format!("{why}: dspk device {}", gpus[at]),
    })
}

/// Why a worker's device cannot be chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkerDeviceError {
    /// An entry of a GPU list is not a number.
    NotAGpuNumber {
        /// The variable.
        variable: &'static str,
        /// Its value.
        text: String,
        /// The entry.
        part: String,
    },
    /// `SLURM_LOCALID` is not a number.
    NotATaskNumber {
        /// Its value.
        text: String,
    },
    /// A GPU number the task does not see.
    Unseen {
        /// The variable that names it.
        variable: &'static str,
        /// The number.
        gpu: usize,
        /// How many GPUs the task sees.
        visible: usize,
    },
}

impl fmt::Display for WorkerDeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAGpuNumber {
                variable,
                text,
                part,
            } => write!(
                f,
                "{variable}={text:?}: '{part}' is not a GPU number (Slurm writes 0,1,2…)"
            ),
            Self::NotATaskNumber { text } => {
                write!(f, "SLURM_LOCALID={text:?} is not a task number")
            }
            Self::Unseen {
                variable,
                gpu,
                visible,
            } => write!(
                f,
                "{variable} names GPU {gpu}, but this job sees {visible} GPUs (0 to {}): set \
                 --devices or DSPK_DEVICES",
                visible - 1
            ),
        }
    }
}

impl std::error::Error for WorkerDeviceError {}

/// `0,2,3` as numbers.
fn gpu_list(variable: &'static str, text: &str) -> Result<Vec<usize>, WorkerDeviceError> {
    text.split(',')
        .map(|part| {
            part.trim()
                .parse()
                .map_err(|_| WorkerDeviceError::NotAGpuNumber {
                    variable,
                    text: text.to_string(),
                    part: part.to_string(),
                })
        })
        .collect()
}

#[cfg(test)]
mod tests;
