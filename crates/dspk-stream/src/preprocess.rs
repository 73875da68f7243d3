//! Preprocessing: a recording decoded on the device and run through a pipeline's stages
//! (`dspk-ops`) there, window by window, the output handed over in recording order — the pass
//! behind `dspk preprocess` and `dspk.apply_pipeline`. `convert` is this pass with no stages.
//!
//! The windows carry the chain's halo (clamped at segment ends, where the stages make up what
//! they need themselves), each device runs its own chain between the decode and the read
//! back, and the output of every window is a pure function of the recording: the same bits for
//! any window size, any list of windows and any number of devices.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;
use std::sync::mpsc;

use cubecl::client::Client;
use dspk_kernels::{DecodedWindow, read_f32};
use dspk_ops::{Chain, Fits, Rows, build};
use dspk_types::{
    ChunkSchedule, DspError, DspResult, HaloWindow, PipelineSpec, ProgressSink, RecordingInfo,
    RecordingSource, Scaling, WindowSink,
};

use crate::fit::fit;
use crate::{DecodeRoute, Flow, MultiPass, PassDevice, PassReport, WindowWorker, window_samples};

/// How to preprocess.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreprocessOptions {
    /// Samples each window owns (`None`: about a second, within one device buffer).
    pub window_samples: Option<u64>,
    /// How windows reach the device.
    pub route: DecodeRoute,
}

impl Default for PreprocessOptions {
    fn default() -> Self {
        Self {
            window_samples: None,
            route: DecodeRoute::Staging,
        }
    }
}

/// What a preprocessing pass did.
#[derive(Debug, Clone)]
pub struct Preprocessed {
    /// The pass's figures (all devices together).
    pub report: PassReport,
    /// The recording preprocessed.
    pub info: RecordingInfo,
    /// What the fitted stages were fitted to (applied unchanged to every window).
    pub fits: Fits,
    /// Samples of context each window read on each side.
    pub halo: (u64, u64),
    /// Per channel, the samples a scaling stage clipped to its output type (`None`: no stage
    /// clips).
    pub clipped: Option<Vec<u64>>,
}

/// What [`run_windows`] did.
#[derive(Debug, Clone)]
pub struct ChainPass {
    /// The pass's figures (all devices together).
    pub report: PassReport,
    /// Per channel, the samples a scaling stage clipped (all devices together; `None`: no
    /// stage clips).
    pub clipped: Option<Vec<u64>>,
}

/// Preprocesses all of `source` with `spec` on `devices`: fits what must be fitted (unless
/// `fits` has it), then writes the output of every window, in recording order, to `sink`
/// (`sink.finish()` after the last; not on an error).
///
/// # Errors
/// A spec that cannot run on the recording, no devices, and what the pass, the stages or the
/// sink refuse.
pub fn preprocess(
    devices: &[PassDevice],
    source: Arc<dyn RecordingSource>,
    spec: &PipelineSpec,
    fits: Fits,
    options: &PreprocessOptions,
    progress: &dyn ProgressSink,
    sink: &mut dyn WindowSink,
) -> DspResult<Preprocessed> {
    let info = source.info().clone();
    spec.check(&info)?;
    let first = devices
        .first()
        .ok_or_else(|| DspError::config("preprocessing needs at least one device"))?;
    let fits = fit(devices, &source, spec, fits, options.route)?;
    let chain = build(&first.client, spec, &info, &fits, spec.stages.len())?;
    let halo = chain.halo();
    drop(chain);
    let window = window_samples(&first.client, &info, options.window_samples)?.min(info.samples);
    let schedule = ChunkSchedule::for_recording(
        &info,
        0..info.samples,
        window.max(1),
        halo.before,
        halo.after,
    )?;
    let scaling = Scaling::microvolts(&info);
    sink.begin(&info, &scaling.units)?;
    let pass = run_windows(
        devices,
        source,
        spec,
        &fits,
        schedule.into_windows(),
        options.route,
        progress,
        |_, values| sink.write_window(values),
    )?;
    sink.finish()?;
    Ok(Preprocessed {
        report: pass.report,
        info,
        fits,
        halo: (halo.before, halo.after),
        clipped: pass.clipped,
    })
}

/// Runs the whole chain of `spec` (its fitted stages taken from `fits`) on `windows` of
/// `source` over `devices`, handing each window's output (channel-major, `channels ×
/// valid_len`) to `on_window` in the order of `windows`. The windows must carry at least the
/// chain's halo (clamped at segment ends).
///
/// # Errors
/// As [`preprocess`], and windows without the context the chain needs.
#[allow(clippy::too_many_arguments)]
pub fn run_windows(
    devices: &[PassDevice],
    source: Arc<dyn RecordingSource>,
    spec: &PipelineSpec,
    fits: &Fits,
    windows: Vec<HaloWindow>,
    route: DecodeRoute,
    progress: &dyn ProgressSink,
    mut on_window: impl FnMut(&HaloWindow, &[f32]) -> DspResult<()>,
) -> DspResult<ChainPass> {
    let info = source.info().clone();
    let count = spec.stages.len();
    let (tx, rx) = mpsc::channel::<(usize, Vec<f32>)>();
    let listed = windows.clone();
    let pass = std::thread::scope(|scope| -> DspResult<ChainPass> {
        let info_ref = &info;
        let pass = scope.spawn(move || {
            MultiPass::new(devices.to_vec(), source, windows)
                .route(route)
                .progress(progress)
                .run(|_, client| {
                    Ok(ChainWorker {
                        chain: build(client, spec, info_ref, fits, count)?,
                        client: client.clone(),
                        info: info_ref,
                        tx: tx.clone(),
                    })
                })
        });
        // In order, whatever device finished a window first.
        let mut waiting = BTreeMap::new();
        let mut next = 0;
        for (position, values) in rx {
            waiting.insert(position, values);
            while let Some(values) = waiting.remove(&next) {
                on_window(&listed[next], &values)?;
                next += 1;
            }
        }
        let multi = match pass.join() {
            Ok(outcome) => outcome?,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let mut clipped: Option<Vec<u64>> = None;
        for share in &multi.devices {
            if let Some(counts) = &share.output {
                let total = clipped.get_or_insert_with(|| vec![0; counts.len()]);
                for (t, c) in total.iter_mut().zip(counts) {
                    *t += c;
                }
            }
        }
        if next != listed.len() {
            return Err(DspError::config(format!(
                "the preprocessing pass handed over {next} of {} windows",
                listed.len()
            )));
        }
        Ok(ChainPass {
            report: multi.total,
            clipped,
        })
    })?;
    Ok(pass)
}

/// One device's chain in a [`MultiPass`].
struct ChainWorker<'a> {
    chain: Chain,
    client: Client,
    info: &'a RecordingInfo,
    tx: mpsc::Sender<(usize, Vec<f32>)>,
}

impl WindowWorker for ChainWorker<'_> {
    /// The clip counts of the device's scaling stage, read back.
    type Output = Option<Vec<u64>>;

    fn window(
        &mut self,
        position: usize,
        window: &HaloWindow,
        decoded: &DecodedWindow<'_>,
    ) -> DspResult<Flow> {
        let values = run_chain(&mut self.chain, &self.client, self.info, window, decoded)?;
        // The receiver is gone only when the caller failed; its error is the one returned.
        let _ = self.tx.send((position, values));
        Ok(Flow::Continue)
    }

    fn finish(self) -> DspResult<Option<Vec<u64>>> {
        let channels = self.info.channel_count();
        self.chain
            .stages()
            .iter()
            .find_map(|stage| stage.clipped())
            .map(|counts| {
                let values = read_f32(&self.client, counts, channels)?;
                Ok(values.iter().map(|v| u64::from(v.to_bits())).collect())
            })
            .transpose()
    }
}

/// The chain's output on `window`'s owned samples, read back (channel-major).
pub(crate) fn run_chain(
    chain: &mut Chain,
    client: &Client,
    info: &RecordingInfo,
    window: &HaloWindow,
    decoded: &DecodedWindow<'_>,
) -> DspResult<Vec<f32>> {
    let channels = decoded.channels();
    let stride = decoded.samples();
    let rows = Rows {
        channels,
        stride,
        origin: window.read_global.start,
        segment: segment_of(info, &window.valid_global),
    };
    let valid = window.valid_local.clone();
    let out = chain.run(decoded.handle(), &rows, valid.clone())?;
    let all = read_f32(client, &out, channels * stride)?;
    let mut values = Vec::with_capacity(channels * valid.len());
    for c in 0..channels {
        values.extend_from_slice(&all[c * stride + valid.start..c * stride + valid.end]);
    }
    Ok(values)
}

/// The segment of `info` that holds `range`.
pub(crate) fn segment_of(info: &RecordingInfo, range: &Range<u64>) -> Range<u64> {
    let segments = info.segments();
    let i = segments.containing(range.start);
    segments.get(i).map_or(0..info.samples, |s| s.range())
}
