//! `scan`: per-channel statistics of a recording on the device, its dead and noisy channels,
//! and the mask that leaves them out.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cubecl::client::Client;
use dspk_device::describe;
use dspk_kernels::{ChannelStats, ChannelStatsKernel, DecodedWindow, WindowStats};
use dspk_types::{
    ChannelMask, ChunkSchedule, DspError, DspResult, HaloWindow, NoProgress, ProgressSink,
    RecordingSource, Scaling,
};

use crate::classify::{Classification, Flag, classify};
use crate::multi::{MultiPass, PassDevice, WindowWorker};
use crate::ordered::OrderedStats;
use crate::pass::{Flow, PassReport};
use crate::route::DecodeRoute;
use crate::window::window_samples;

/// How [`scan`] runs.
#[derive(Clone)]
pub struct ScanOptions<'a> {
    /// The samples to scan (default: all of them).
    pub range: Option<Range<u64>>,
    /// Samples per window (default: one second, within one device buffer).
    pub window_samples: Option<u64>,
    /// Where to decode (default: [`DecodeRoute::Staging`] where possible).
    pub route: DecodeRoute,
    /// Where progress goes ([`crate::PASS_STAGE`], stored bytes).
    pub progress: &'a dyn ProgressSink,
    /// Threads that fill staging buffers (default: one per core, at most 16).
    pub fill_threads: Option<usize>,
}

impl Default for ScanOptions<'_> {
    fn default() -> Self {
        Self {
            range: None,
            window_samples: None,
            route: DecodeRoute::Staging,
            progress: &NoProgress,
            fill_threads: None,
        }
    }
}

impl std::fmt::Debug for ScanOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScanOptions")
            .field("range", &self.range)
            .field("window_samples", &self.window_samples)
            .field("route", &self.route)
            .field("fill_threads", &self.fill_threads)
            .finish_non_exhaustive()
    }
}

/// What [`scan`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanResult {
    /// Per-channel statistics of the scanned samples, in the scaled unit.
    pub stats: Vec<ChannelStats>,
    /// Dead and noisy channels and the figures behind them.
    pub classification: Classification,
    /// Every channel enabled but the dead and noisy ones.
    pub mask: ChannelMask,
    /// The scaling the statistics are in (µV for voltages).
    pub scaling: Scaling,
    /// The samples scanned.
    pub range: Range<u64>,
    /// Samples per window.
    pub window_samples: u64,
    /// What the device pass did, all devices together.
    pub report: PassReport,
    /// What each device did, in the order they were given.
    pub devices: Vec<DeviceReport>,
}

/// One device's part of a scan.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceReport {
    /// The device's label.
    pub label: String,
    /// Its windows, bytes and times.
    pub report: PassReport,
    /// How long after the scan's pass began this device started.
    pub started_after: Duration,
}

impl ScanResult {
    /// Channels flagged dead, ascending.
    pub fn dead(&self) -> Vec<usize> {
        self.classification.indices(Flag::Dead)
    }

    /// Channels flagged noisy, ascending.
    pub fn noisy(&self) -> Vec<usize> {
        self.classification.indices(Flag::Noisy)
    }
}

/// Scans `options.range` of `source` on `client`'s device: every window decoded there to µV,
/// per-channel min, max, mean and RMS merged across windows in `f64`, in window order,
/// channels flagged dead or noisy ([`classify`]), and the [`ChannelMask`] without them.
///
/// Refused before anything is allocated: an empty or out-of-range `range`, a window of 0
/// samples, a window larger than one device buffer.
pub fn scan(
    client: &Client,
    source: Arc<dyn RecordingSource>,
    options: &ScanOptions<'_>,
) -> DspResult<ScanResult> {
    let device = PassDevice {
        client: client.clone(),
        label: describe(client).adapter_name,
    };
    scan_on(&[device], source, options)
}

/// [`scan`] over several devices at once ([`MultiPass`]): the windows are dealt to whichever
/// device is ready, and each window's statistics are merged in window order, so the result is
/// the one-device result bit for bit. The windows are sized for the device that holds the
/// least. Errors name the device they happened on.
pub fn scan_on(
    devices: &[PassDevice],
    source: Arc<dyn RecordingSource>,
    options: &ScanOptions<'_>,
) -> DspResult<ScanResult> {
    let Some(first) = devices.first() else {
        return Err(DspError::config("a scan needs at least one device"));
    };
    let info = source.info().clone();
    let range = options.range.clone().unwrap_or(0..info.samples);
    if range.start >= range.end || range.end > info.samples {
        return Err(DspError::SampleRange {
            start: range.start,
            end: range.end,
            total: info.samples,
        });
    }
    let len = range.end - range.start;
    let mut window = window_samples(&first.client, &info, options.window_samples)?.min(len);
    for d in &devices[1..] {
        window = window.min(window_samples(&d.client, &info, options.window_samples)?);
    }
    let schedule = ChunkSchedule::for_recording(&info, range.clone(), window, 0, 0)?;
    let windows = schedule.len() as u64;
    let scaling = Scaling::microvolts(&info);
    let merged = Mutex::new(OrderedStats::new(info.channel_count()));
    let mut pass = MultiPass::new(devices.to_vec(), source, schedule.into_windows())
        .scaling(scaling.clone())
        .route(options.route)
        .progress(options.progress);
    if let Some(threads) = options.fill_threads {
        pass = pass.fill_threads(threads);
    }
    let channels = info.channel_count();
    let outcome = pass.run(|_, client| {
        Ok(StatsWorker {
            kernel: ChannelStatsKernel::new(client, channels, window as usize)?,
            merged: &merged,
        })
    })?;
    let stats = merged
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .finish(windows)?;
    let classification = classify(&stats);
    let mut flagged: Vec<usize> = classification
        .flags
        .iter()
        .enumerate()
        .filter_map(|(i, f)| f.map(|_| i))
        .collect();
    flagged.sort_unstable();
    let mask = ChannelMask::from_disabled_indices(info.channel_count(), &flagged)?;
    Ok(ScanResult {
        stats,
        classification,
        mask,
        scaling,
        range,
        window_samples: window,
        report: outcome.total,
        devices: outcome
            .devices
            .into_iter()
            .map(|d| DeviceReport {
                label: d.label,
                report: d.report,
                started_after: d.started_after,
            })
            .collect(),
    })
}

/// One recording of [`scan_each`] and how to scan it.
#[derive(Clone)]
pub struct ScanJob<'a> {
    /// The recording.
    pub source: Arc<dyn RecordingSource>,
    /// Its range, window and progress.
    pub options: ScanOptions<'a>,
}

/// Several recordings over several devices at once: each device scans one recording at a
/// time ([`scan_on`] with that device alone), taking the next recording not yet taken when it
/// is done, until none is left. One result per job, in the order given; a recording that
/// fails does not stop the others (its error names the device).
pub fn scan_each(devices: &[PassDevice], jobs: &[ScanJob<'_>]) -> Vec<DspResult<ScanResult>> {
    if devices.is_empty() {
        return jobs
            .iter()
            .map(|_| Err(DspError::config("a scan needs at least one device")))
            .collect();
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<DspResult<ScanResult>>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for (d, device) in devices.iter().enumerate() {
            let (next, results) = (&next, &results);
            let work = move || {
                loop {
                    let i = next.fetch_add(1, Ordering::AcqRel);
                    let Some(job) = jobs.get(i) else {
                        break;
                    };
                    let result = scan_on(
                        std::slice::from_ref(device),
                        job.source.clone(),
                        &job.options,
                    )
                    .map_err(|e| DspError::on_device(device.label.clone(), e));
                    results.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(result);
                }
            };
            // A device without a thread leaves its recordings to the others.
            let _ = std::thread::Builder::new()
                .name(format!("dspk-scan-{d}"))
                .spawn_scoped(scope, work);
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|| Err(DspError::config("no thread could be started for a device")))
        })
        .collect()
}

/// One device's part of a scan: its kernel computes each window's statistics, which are
/// merged in window order with every other device's.
struct StatsWorker<'m> {
    kernel: ChannelStatsKernel,
    merged: &'m Mutex<OrderedStats>,
}

impl StatsWorker<'_> {
    fn merge(&self, windows: Vec<WindowStats>) -> DspResult<()> {
        if windows.is_empty() {
            return Ok(());
        }
        let mut merged = self.merged.lock().unwrap_or_else(|p| p.into_inner());
        windows.into_iter().try_for_each(|w| merged.push(w))
    }
}

impl WindowWorker for StatsWorker<'_> {
    type Output = ();

    fn window(
        &mut self,
        position: usize,
        window: &HaloWindow,
        decoded: &DecodedWindow<'_>,
    ) -> DspResult<Flow> {
        // Only the owned part counts: every sample once. Read back every few windows, so the
        // host is not held up by the device at each one.
        self.kernel
            .window_stats_deferred(decoded, window.valid_local.clone(), position as u64)?;
        let done = self.kernel.take_window_stats();
        self.merge(done)?;
        Ok(Flow::Continue)
    }

    fn finish(mut self) -> DspResult<()> {
        let rest = self.kernel.finish_window_stats()?;
        self.merge(rest)
    }
}
