//! Detection: a recording decoded on the device, run through a pipeline's stages and
//! `dspk-ops`' detector there, window by window, on every device — the pass behind
//! `dspk detect` and `dspk.detect`.
//!
//! The noise levels are fitted first, once per recording, on the pipeline's output over
//! `dspk_ops::detect::noise_windows`. Each detection window carries the chain's halo plus the
//! detector's (clamped at segment ends); the chain produces the owned samples widened by the
//! detector's halo, and the detector keeps the peaks of the owned samples only. Every peak is
//! therefore decided once, by the window that owns its sample, from the same values whatever
//! the windows: the sorted table is the same for any window size, any list of windows and any
//! number of devices.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use cubecl::bytes::Bytes;
use cubecl::client::Client;
use cubecl::future::reader::read_sync;
use cubecl::server::ServerError;

use dspk_kernels::DecodedWindow;
use dspk_ops::detect::{
    DetectSpec, Detector, Neighbourhoods, NoiseLevels, Peak, QueuedPeaks, noise_windows,
};
use dspk_ops::{Chain, Fits, Halo, Span, build};
use dspk_types::{
    ChunkSchedule, DspError, DspResult, HaloWindow, PipelineSpec, ProgressSink, RecordingInfo,
    RecordingSource,
};

use crate::detect_report::DetectReport;
use crate::fit::{fit, halo_window};
use crate::preprocess::{rows_of, run_windows};
use crate::preprocess_plan::plan;
use crate::{DecodeRoute, Flow, MultiPass, PassDevice, WindowWorker};

/// How to detect.
#[derive(Debug, Clone, PartialEq)]
pub struct DetectOptions {
    /// The detector's parameters.
    pub detect: DetectSpec,
    /// Samples each window owns (`None`: [`crate::PREPROCESS_WINDOW_SECONDS`], within one
    /// device buffer).
    pub window_samples: Option<u64>,
    /// How windows reach the device.
    pub route: DecodeRoute,
    /// Per-channel noise levels (µV) to use instead of fitting them.
    pub noise: Option<Vec<f64>>,
}

impl Default for DetectOptions {
    fn default() -> Self {
        Self {
            detect: DetectSpec::default(),
            window_samples: None,
            route: DecodeRoute::Staging,
            noise: None,
        }
    }
}

/// What a detection pass found and did.
#[derive(Debug, Clone)]
pub struct Detected {
    /// The peaks, sorted by sample then channel.
    pub peaks: Vec<Peak>,
    /// The per-channel noise levels (µV) the thresholds were taken from.
    pub noise: Vec<f64>,
    /// What the pipeline's fitted stages were fitted to.
    pub fits: Fits,
    /// The run as data (what `--json` prints).
    pub report: DetectReport,
}

/// Detects the peaks of all of `source` after `spec` (its fitted stages fitted unless `given`
/// has them) on `devices`: noise levels, then every window.
///
/// # Errors
/// A spec or detector parameters that cannot run on the recording (no probe geometry, noise
/// levels of another channel count), no devices, and what the pass or the stages refuse.
pub fn detect(
    devices: &[PassDevice],
    source: Arc<dyn RecordingSource>,
    spec: &PipelineSpec,
    given: Fits,
    options: &DetectOptions,
    progress: &dyn ProgressSink,
) -> DspResult<Detected> {
    let info = source.info().clone();
    options.detect.check()?;
    neighbourhoods(&info, &options.detect)?;
    if let Some(noise) = &options.noise
        && noise.len() != info.channel_count()
    {
        return Err(DspError::shape(
            "noise levels given for detection",
            info.channel_count(),
            noise.len(),
        ));
    }
    let first = devices
        .first()
        .ok_or_else(|| DspError::config("detection needs at least one device"))?;
    let labels: Vec<String> = devices.iter().map(|d| d.label.clone()).collect();
    let planned = plan(
        &first.client,
        labels.clone(),
        &info,
        spec,
        &given,
        options.window_samples,
    )?;
    let chain_halo = Halo {
        before: planned.halo_before,
        after: planned.halo_after,
    };
    let fit_start = Instant::now();
    let fits = fit(devices, &source, spec, given, options.route)?;
    let noise = match &options.noise {
        Some(given) => given.clone(),
        None => fit_noise(
            devices,
            source.clone(),
            spec,
            &fits,
            chain_halo,
            options.route,
            progress,
        )?,
    };
    let fit_s = fit_start.elapsed().as_secs_f64();
    let halo = detection_halo(&info, chain_halo, &options.detect);
    let windows = ChunkSchedule::for_recording(
        &info,
        0..info.samples,
        planned.window_samples.max(1),
        halo.before,
        halo.after,
    )?
    .into_windows();
    let window_count = windows.len();
    let start = Instant::now();
    let peaks = detect_windows(
        devices,
        source,
        spec,
        &fits,
        &options.detect,
        &noise,
        windows,
        options.route,
        progress,
    )?;
    let detect_s = start.elapsed().as_secs_f64();
    let report = DetectReport::of(
        &info,
        spec,
        &options.detect,
        &noise,
        &peaks,
        (planned.window_samples, window_count),
        (fit_s, detect_s),
        labels,
    )?;
    Ok(Detected {
        peaks,
        noise,
        fits,
        report,
    })
}

/// The context a detection window reads around what it owns: the chain's halo (`chain`) and
/// the detector's (`spec`'s sweep and one sample).
pub fn detection_halo(info: &RecordingInfo, chain: Halo, spec: &DetectSpec) -> Halo {
    chain.then(Halo::both(
        spec.sweep_samples(info.sample_rate.rate_hz()) as u64 + 1,
    ))
}

/// Each channel's noise level (µV) on the output of `spec` (fitted stages from `fits`, halo
/// `chain_halo`) over the chunks of [`noise_windows`].
///
/// # Errors
/// An empty recording, and what the pass refuses.
pub fn fit_noise(
    devices: &[PassDevice],
    source: Arc<dyn RecordingSource>,
    spec: &PipelineSpec,
    fits: &Fits,
    chain_halo: Halo,
    route: DecodeRoute,
    progress: &dyn ProgressSink,
) -> DspResult<Vec<f64>> {
    let info = source.info().clone();
    let windows = noise_windows(&info)
        .into_iter()
        .enumerate()
        .map(|(i, range)| halo_window(&info, i, range, chain_halo.before, chain_halo.after))
        .collect();
    let mut levels = NoiseLevels::new(info.channel_count());
    run_windows(
        devices,
        source,
        spec,
        fits,
        windows,
        route,
        progress,
        |_, values| levels.add(values),
    )?;
    levels.finish()
}

/// The peaks of the owned samples of `windows` of `source` after `spec` (fitted stages from
/// `fits`) with thresholds `detect.threshold × noise`, on `devices`, sorted by sample then
/// channel. The windows must carry [`detection_halo`] (clamped at segment ends); any list of
/// them gives the peaks of the samples they own, the same whichever windows own them.
///
/// # Errors
/// Noise levels of another channel count, a recording without probe geometry, and what the
/// pass or the stages refuse.
#[allow(clippy::too_many_arguments)]
pub fn detect_windows(
    devices: &[PassDevice],
    source: Arc<dyn RecordingSource>,
    spec: &PipelineSpec,
    fits: &Fits,
    detect: &DetectSpec,
    noise: &[f64],
    windows: Vec<HaloWindow>,
    route: DecodeRoute,
    progress: &dyn ProgressSink,
) -> DspResult<Vec<Peak>> {
    let info = source.info().clone();
    detect.check()?;
    if noise.len() != info.channel_count() {
        return Err(DspError::shape(
            "noise levels for detection",
            info.channel_count(),
            noise.len(),
        ));
    }
    let thresholds = detect.thresholds(noise);
    let near = neighbourhoods(&info, detect)?;
    let sweep = detect.sweep_samples(info.sample_rate.rate_hz());
    let count = spec.stages.len();
    let info_ref = &info;
    let multi = MultiPass::new(devices.to_vec(), source, windows)
        .route(route)
        .progress(progress)
        .run(|d, client| {
            Ok(DetectWorker {
                chain: build(client, spec, info_ref, fits, count)?,
                detector: Detector::new(client, &thresholds, &near, sweep, detect.sign)?,
                // The pass's own copy of the device's client: a read queued on it outlives
                // its window.
                client: &devices[d].client,
                info: info_ref,
                peaks: Vec::new(),
                pending: None,
            })
        })?;
    let mut peaks: Vec<Peak> = multi
        .devices
        .into_iter()
        .flat_map(|share| share.output)
        .collect();
    peaks.sort_unstable_by_key(Peak::key);
    Ok(peaks)
}

/// The neighbourhoods detection uses on `info`: the probe's within the radius, or each channel
/// alone where the recording has no geometry ([`DetectReport::by_channel`]).
fn neighbourhoods(info: &RecordingInfo, detect: &DetectSpec) -> DspResult<Neighbourhoods> {
    if info.probe.is_none() {
        return Ok(Neighbourhoods::alone(info.channel_count()));
    }
    Neighbourhoods::of(info, detect.radius_um)
}

/// A window's kept peaks on their way back.
type Pending<'a> = (
    QueuedPeaks,
    Pin<Box<dyn Future<Output = Result<Vec<Bytes>, ServerError>> + Send + 'a>>,
);

/// One device's chain and detector in a [`MultiPass`]: each window's peaks are read back while
/// the device runs the next window (the read of window k is queued behind its kernels and
/// awaited after window k + 1's are queued).
struct DetectWorker<'a> {
    chain: Chain,
    detector: Detector,
    client: &'a Client,
    info: &'a RecordingInfo,
    peaks: Vec<Peak>,
    pending: Option<Pending<'a>>,
}

impl DetectWorker<'_> {
    /// Waits for the pending read, if any, and keeps its peaks.
    fn complete(&mut self) -> DspResult<()> {
        let Some((queued, read)) = self.pending.take() else {
            return Ok(());
        };
        let bytes = read_sync(read).map_err(|e| DspError::Io {
            message: format!("device error while reading a window's peaks back: {e}"),
            path: None,
        })?;
        self.peaks.extend(self.detector.complete(queued, bytes)?);
        Ok(())
    }
}

impl WindowWorker for DetectWorker<'_> {
    /// The device's peaks (each window's sorted, in its windows' order).
    type Output = Vec<Peak>;

    fn window(
        &mut self,
        _position: usize,
        window: &HaloWindow,
        decoded: &DecodedWindow<'_>,
    ) -> DspResult<Flow> {
        let rows = rows_of(self.info, window, decoded);
        let span = Span {
            channels: rows.channels,
            stride: rows.stride,
            origin: rows.origin,
            segment: rows.segment.clone(),
            produce: window.valid_local.clone(),
        };
        let produce = span.input_range(self.detector.halo());
        let out = self.chain.run(decoded.handle(), &rows, produce)?;
        let segment = self.info.segments().containing(window.valid_global.start) as u32;
        let queued = self.detector.queue(&out, &span, segment)?;
        self.complete()?;
        if let Some(queued) = queued {
            let read = Box::pin(self.client.read_async(queued.reads()));
            self.pending = Some((queued, read));
        }
        Ok(Flow::Continue)
    }

    fn finish(mut self) -> DspResult<Vec<Peak>> {
        self.complete()?;
        Ok(self.peaks)
    }
}
