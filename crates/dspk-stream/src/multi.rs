//! The device pass over several devices: one recording's windows dealt to whichever device is
//! ready next, each window read from the source once and decoded once.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cubecl::client::Client;
use dspk_kernels::DecodedWindow;
use dspk_types::{
    DspError, DspResult, HaloWindow, NoProgress, ProgressEvent, ProgressSink, RecordingSource,
    Scaling,
};

use crate::pass::{Flow, PASS_STAGE, PassReport, Plan, Settings, drive};
use crate::route::DecodeRoute;
use crate::window::fill_threads;

/// One device of a multi-device pass: its client and the name errors and reports give it
/// (`dspk devices`' number and adapter, say `1 (NVIDIA H200)`).
#[derive(Clone)]
pub struct PassDevice {
    /// The device's client.
    pub client: Client,
    /// How the device is named in errors and reports.
    pub label: String,
}

impl std::fmt::Debug for PassDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PassDevice")
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

/// The work one device does with the windows it decodes, in a [`MultiPass`]: made on the
/// device's own thread, handed that device's windows there (in increasing position, each
/// with its position in the pass's list), then finished.
pub trait WindowWorker {
    /// What the worker gives back when the pass is over.
    type Output: Send;

    /// One decoded window (channel-major, `channels × window.padded_len()` values), at
    /// `position` in the pass's list of windows; valid until this returns.
    ///
    /// # Errors
    /// Any error stops every device; the pass returns it, naming this device.
    fn window(
        &mut self,
        position: usize,
        window: &HaloWindow,
        decoded: &DecodedWindow<'_>,
    ) -> DspResult<Flow>;

    /// After the device's last window.
    ///
    /// # Errors
    /// As [`window`](Self::window).
    fn finish(self) -> DspResult<Self::Output>;
}

/// What one device did in a [`MultiPass`].
#[derive(Debug, Clone)]
pub struct DeviceShare<T> {
    /// The device's label.
    pub label: String,
    /// Its windows, samples, bytes and times (its `wall` ends when it finished its last
    /// window).
    pub report: PassReport,
    /// How long after the pass began (the first device starting) this device started.
    pub started_after: Duration,
    /// Its worker's output.
    pub output: T,
}

/// What a [`MultiPass`] did: every device's share and the totals.
#[derive(Debug, Clone)]
pub struct MultiReport<T> {
    /// Windows, samples and bytes of all devices; `wall` from the first device starting its
    /// pass (once its worker is made) to the last device finishing its last window, `setup`
    /// the longest device's.
    pub total: PassReport,
    /// Each device, in the order they were given.
    pub devices: Vec<DeviceShare<T>>,
    /// When the first device started its pass (`None` when none did).
    pub started: Option<Instant>,
}

/// A pass of a recording's windows over several devices: each device has its own decoder,
/// uploader and staging (as [`crate::DevicePass`] on one, but with one staging buffer where
/// that has two when the pass is short, under ~1 GB per device: the devices' buffers take
/// turns; the fill threads are one pool that all of them use), and takes the next window not
/// yet taken whenever it is ready for one, so a slower device takes fewer; each window is read
/// from the source once, by the device that took it. The first error on any device stops
/// every device (each finishes the window it is on) and is returned naming the device.
///
/// The windows a device gets come to its [`WindowWorker`] on that device's thread; results
/// that must not depend on how many devices ran are merged by position (as [`crate::scan`]
/// does with [`crate::OrderedStats`]).
pub struct MultiPass<'a> {
    devices: Vec<PassDevice>,
    source: Arc<dyn RecordingSource>,
    windows: Vec<HaloWindow>,
    channels: Option<Vec<usize>>,
    scaling: Option<Scaling>,
    progress: &'a dyn ProgressSink,
    route: DecodeRoute,
    threads: usize,
}

impl<'a> MultiPass<'a> {
    /// A pass of `windows` of `source` over `devices` (every channel, µV, the fastest route,
    /// one pool of fill threads that every device's uploader fills with).
    pub fn new(
        devices: Vec<PassDevice>,
        source: Arc<dyn RecordingSource>,
        windows: Vec<HaloWindow>,
    ) -> Self {
        Self {
            devices,
            source,
            windows,
            channels: None,
            scaling: None,
            progress: &NoProgress,
            route: DecodeRoute::Staging,
            threads: fill_threads(),
        }
    }

    /// Only these channels of the source, in this order.
    pub fn channels(mut self, channels: Vec<usize>) -> Self {
        self.channels = Some(channels);
        self
    }

    /// Scales each channel with `scaling` (one entry per channel of the source) instead of µV.
    pub fn scaling(mut self, scaling: Scaling) -> Self {
        self.scaling = Some(scaling);
        self
    }

    /// Reports progress of all devices together to `sink` ([`PASS_STAGE`], stored bytes).
    pub fn progress(mut self, sink: &'a dyn ProgressSink) -> Self {
        self.progress = sink;
        self
    }

    /// Where to decode when there is a choice (see [`crate::DevicePass::route`]).
    pub fn route(mut self, route: DecodeRoute) -> Self {
        self.route = route;
        self
    }

    /// Fill threads in all: one pool of this many, shared by every device's uploader.
    pub fn fill_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// Runs the pass: on each device's own thread, `make` builds that device's worker
    /// (given the device's position in the list and its client), which gets every window
    /// the device decodes, then is finished.
    ///
    /// # Errors
    /// No devices; what [`crate::DevicePass::run`] refuses; and the first error of any device,
    /// its worker or the source, as [`DspError::OnDevice`] naming the device.
    pub fn run<W, M>(self, make: M) -> DspResult<MultiReport<W::Output>>
    where
        W: WindowWorker,
        M: Fn(usize, &Client) -> DspResult<W> + Sync,
    {
        if self.devices.is_empty() {
            return Err(DspError::config(
                "a multi-device pass needs at least one device",
            ));
        }
        let plan = Plan::new(
            &self.source,
            self.channels.as_deref(),
            self.scaling.as_ref(),
            &self.windows,
        )?;
        let total_bytes = plan.as_ref().map_or(0, |p| p.total_bytes);
        // Every device fills with the same pool of `threads` threads (dspk-device keeps one
        // pool per thread count), so several devices have the fill capacity of one: dividing
        // the threads among the devices would shrink that pool.
        let threads = self.threads;
        let take_turns = takes_turns(self.devices.len(), total_bytes);
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let done = Mutex::new(0u64);
        let progress = self.progress;
        progress.report(&ProgressEvent::new(PASS_STAGE, 0, total_bytes, "bytes"));
        let windows = &self.windows;
        let outcomes: Vec<DspResult<Share<W::Output>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .devices
                .iter()
                .enumerate()
                .map(|(d, device)| {
                    let (plan, make, next, stop, done) = (&plan, &make, &next, &stop, &done);
                    let run = move || -> DspResult<Share<W::Output>> {
                        let mut worker = make(d, &device.client)?;
                        // The device's pass starts once its worker is made (as a one-device
                        // pass starts when its caller has made what it needs).
                        let started = Instant::now();
                        let report = match plan {
                            Some(plan) => drive(
                                &device.client,
                                plan,
                                windows,
                                Settings {
                                    route: self.route,
                                    threads,
                                    started,
                                    take_turns,
                                },
                                || {
                                    if stop.load(Ordering::Acquire) {
                                        return None;
                                    }
                                    let i = next.fetch_add(1, Ordering::AcqRel);
                                    (i < windows.len()).then_some(i)
                                },
                                |i, w, decoded| worker.window(i, w, decoded),
                                |bytes| {
                                    let mut done = done.lock().unwrap_or_else(|p| p.into_inner());
                                    *done += bytes;
                                    progress.report(&ProgressEvent::new(
                                        PASS_STAGE,
                                        *done,
                                        total_bytes,
                                        "bytes",
                                    ));
                                },
                            )?,
                            None => PassReport::empty(started),
                        };
                        if report.stopped_early {
                            stop.store(true, Ordering::Release);
                        }
                        Ok(Share {
                            started,
                            report,
                            output: worker.finish()?,
                        })
                    };
                    let label = device.label.clone();
                    std::thread::Builder::new()
                        .name(format!("dspk-device-{d}"))
                        .spawn_scoped(scope, move || {
                            let outcome = run();
                            if outcome.is_err() {
                                // Every other device stops at its next window.
                                stop.store(true, Ordering::Release);
                            }
                            outcome.map_err(|e| DspError::on_device(label, e))
                        })
                })
                .collect();
            handles
                .into_iter()
                .zip(&self.devices)
                .map(|(handle, device)| match handle {
                    Ok(h) => match h.join() {
                        Ok(outcome) => outcome,
                        Err(panic) => std::panic::resume_unwind(panic),
                    },
                    Err(e) => {
                        stop.store(true, Ordering::Release);
                        Err(DspError::on_device(
                            device.label.clone(),
                            DspError::config(format!("no thread for the device: {e}")),
                        ))
                    }
                })
                .collect()
        });
        // The pass began when the first device started, and ended when the last finished.
        let shares = || outcomes.iter().filter_map(|o| o.as_ref().ok());
        let first = shares().map(|s| s.started).min();
        let last = shares().map(|s| s.started + s.report.wall).max();
        let mut devices = Vec::with_capacity(outcomes.len());
        let mut first_error = None;
        for (outcome, device) in outcomes.into_iter().zip(&self.devices) {
            match outcome {
                Ok(share) => devices.push(DeviceShare {
                    label: device.label.clone(),
                    report: share.report,
                    started_after: first.map_or(Duration::ZERO, |f| {
                        share.started.saturating_duration_since(f)
                    }),
                    output: share.output,
                }),
                // The first in the list where several devices failed.
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        let mut total = totals(&devices);
        if let (Some(start), Some(end)) = (first, last) {
            total.wall = end.saturating_duration_since(start);
        }
        Ok(MultiReport {
            total,
            devices,
            started: first,
        })
    }
}

/// Stored bytes per device below which the devices of a pass stage through one buffer each,
/// taking turns (one device's buffer fills while another's is read), rather than two: a
/// second device then pins one more buffer, not two. Measured on the H200 (two devices on the
/// one GPU, fresh processes, 23 MB windows): a buffer costs ~6.5 ms to pin, one at a time in
/// the process, holding up the other device's uploads meanwhile; a second buffer per device
/// streams ~10 % faster (10 minutes: 899 against 813 × real time), repaying its pinning after
/// ~65 ms of streaming, about 1 GB per device.
pub(crate) const TURNS_BYTES: u64 = 1 << 30;

/// Whether the `devices` of a pass of `total_bytes` take turns through one staging buffer each.
pub(crate) fn takes_turns(devices: usize, total_bytes: u64) -> bool {
    devices > 1 && total_bytes / (devices as u64) < TURNS_BYTES
}

/// One device's outcome: when its pass started, its report, its worker's output.
struct Share<T> {
    started: Instant,
    report: PassReport,
    output: T,
}

/// The totals of every device's report (`wall` set by the caller).
fn totals<T>(devices: &[DeviceShare<T>]) -> PassReport {
    let mut total = PassReport::empty(Instant::now());
    total.setup = Duration::ZERO;
    for d in devices {
        total.windows += d.report.windows;
        total.samples += d.report.samples;
        total.stored_bytes += d.report.stored_bytes;
        total.setup = total.setup.max(d.report.setup);
        total.stopped_early |= d.report.stopped_early;
    }
    // Staging when every device that decoded a window did it there.
    total.route = if devices
        .iter()
        .filter(|d| d.report.windows > 0)
        .all(|d| d.report.route == DecodeRoute::Staging)
        && devices.iter().any(|d| d.report.windows > 0)
    {
        DecodeRoute::Staging
    } else {
        DecodeRoute::Copy
    };
    total
}

#[cfg(test)]
mod tests {
    use super::{TURNS_BYTES, takes_turns};

    #[test]
    fn only_several_devices_of_a_short_pass_take_turns() {
        assert!(!takes_turns(1, 0));
        assert!(!takes_turns(1, TURNS_BYTES / 2));
        assert!(takes_turns(2, 0));
        assert!(takes_turns(2, 2 * TURNS_BYTES - 1));
        assert!(!takes_turns(2, 2 * TURNS_BYTES));
        // The 60 s synthetic default (1.38 GB) over two devices takes turns; 10 minutes do not.
        let minute = 60 * 30_000 * 384 * 2;
        assert!(takes_turns(2, minute));
        assert!(!takes_turns(2, 10 * minute));
        assert!(!takes_turns(0, 0));
    }
}
