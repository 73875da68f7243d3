//! Device synchronisation and timing.

use std::time::{Duration, Instant};

use cubecl::prelude::*;
use dspk_types::{DspError, DspResult};

/// A device failure as a [`DspError`] (the device is I/O from the host's point of view).
pub(crate) fn device_error(what: &str, err: impl std::fmt::Display) -> DspError {
    DspError::Io {
        message: format!("device error while {what}: {err}"),
        path: None,
    }
}

/// Waits until every task submitted to the client's device has finished; returns the first
/// device error it reports.
pub fn sync(client: &Client) -> DspResult<()> {
    cubecl::future::block_on(client.sync()).map_err(|e| device_error("synchronising", e))
}

/// The median wall time of `iters` synchronised runs of `f` (after one warm-up run, which also
/// compiles the kernels `f` launches). Each run is `sync`, clock, `f`, `sync`, clock, so a run
/// counts everything `f` submits and nothing before it. `iters` 0 counts as 1.
pub fn time_device<F>(client: &Client, iters: usize, mut f: F) -> DspResult<Duration>
where
    F: FnMut() -> DspResult<()>,
{
    sync(client)?;
    f()?;
    sync(client)?;
    let mut times = Vec::with_capacity(iters.max(1));
    for _ in 0..iters.max(1) {
        sync(client)?;
        let start = Instant::now();
        f()?;
        sync(client)?;
        times.push(start.elapsed());
    }
    times.sort_unstable();
    Ok(times[times.len() / 2])
}
