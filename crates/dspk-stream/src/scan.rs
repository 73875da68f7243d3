//! `scan`: per-channel statistics of a recording on the device, its dead and noisy channels,
//! and the mask that leaves them out.

use std::ops::Range;
use std::sync::Arc;

use cubecl::client::Client;
use dspk_kernels::{ChannelStats, ChannelStatsKernel};
use dspk_types::{
    ChannelMask, ChunkSchedule, DspError, DspResult, NoProgress, ProgressSink, RecordingSource,
    Scaling,
};

use crate::classify::{Classification, Flag, classify};
use crate::pass::{DevicePass, Flow, PassReport};
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
    /// What the device pass did.
    pub report: PassReport,
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
/// per-channel min, max, mean and RMS merged across windows in `f64`, channels flagged dead
/// or noisy ([`classify`]), and the [`ChannelMask`] without them.
///
/// Refused before anything is allocated: an empty or out-of-range `range`, a window of 0
/// samples, a window larger than one device buffer.
pub fn scan(
    client: &Client,
    source: Arc<dyn RecordingSource>,
    options: &ScanOptions<'_>,
) -> DspResult<ScanResult> {
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
    let window = window_samples(client, &info, options.window_samples)?.min(len);
    let schedule = ChunkSchedule::new(range.clone(), window, 0, 0, info.samples)?;
    let scaling = Scaling::microvolts(&info);
    let mut kernel = ChannelStatsKernel::new(client, info.channel_count(), window as usize)?;
    let mut pass = DevicePass::new(client, source, schedule.into_windows())
        .scaling(scaling.clone())
        .route(options.route)
        .progress(options.progress);
    if let Some(threads) = options.fill_threads {
        pass = pass.fill_threads(threads);
    }
    let report = pass.run(|w, decoded| {
        // Only the owned part counts: every sample once. Read back every few windows, so the
        // host is not held up by the device at each one.
        kernel.accumulate_deferred(decoded, w.valid_local.clone())?;
        Ok(Flow::Continue)
    })?;
    let stats = kernel.finish_deferred()?;
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
        report,
    })
}
