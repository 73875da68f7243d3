//! Preprocessing: a recording decoded on the device and run through a pipeline's stages
//! (`dspk-ops`) there, window by window, the output handed over in recording order — the pass
//! behind `dspk preprocess` and `dspk.apply_pipeline`. `convert` is this pass with no stages.
//!
//! The windows carry the chain's halo (clamped at segment ends, where the stages make up what
//! they need themselves), each device runs its own chain between the decode and the read
//! back, and the output of every window is a pure function of the recording: the same bits for
//! any window size, any list of windows and any number of devices.

use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dspk_kernels::DecodedWindow;
use dspk_ops::{Fits, Rows, build};
use dspk_types::{
    DspError, DspResult, HaloWindow, PipelineSpec, ProgressSink, RecordingInfo, RecordingSource,
    Scaling, StageSpec, WindowSink,
};

use crate::fit::{fit, halo_window};
use crate::preprocess_plan::{
    ClipSummary, FitSummary, InputFile, PreprocessPlan, PreprocessReport, Provenance, StageTime,
    applies, plan,
};
use crate::way_back::{Back, Returned, chain_pass, write_windows};
use crate::{DecodeRoute, DevicePass, Flow, PassDevice, PassReport};

/// How to preprocess.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreprocessOptions {
    /// Samples each window owns (`None`: [`crate::PREPROCESS_WINDOW_SECONDS`], within one
    /// device buffer).
    pub window_samples: Option<u64>,
    /// How windows reach the device.
    pub route: DecodeRoute,
    /// The input files, for the output's provenance (none for an in-memory recording).
    pub inputs: Vec<InputFile>,
}

impl Default for PreprocessOptions {
    fn default() -> Self {
        Self {
            window_samples: None,
            route: DecodeRoute::Staging,
            inputs: Vec::new(),
        }
    }
}

/// What a preprocessing pass did.
#[derive(Debug, Clone)]
pub struct Preprocessed {
    /// The apply pass's figures (all devices together).
    pub pass: PassReport,
    /// The recording preprocessed.
    pub info: RecordingInfo,
    /// What the fitted stages were fitted to (applied unchanged to every window).
    pub fits: Fits,
    /// The run as data (what `--json` prints; with the inputs and fits, the provenance).
    pub report: PreprocessReport,
    /// Seconds the sink took after the apply pass to make the output whole and durable (the
    /// provenance written, the data flushed to the disk, the files moved into place): with
    /// `report.apply_s`, the time to an output file as durable as `dd conv=fsync` leaves one.
    pub finish_s: f64,
}

/// What [`run_windows`] did.
#[derive(Debug, Clone)]
pub struct ChainPass {
    /// The pass's figures (all devices together); its `wall` runs from the first device's
    /// start to the last window handed over.
    pub report: PassReport,
    /// Per channel, the samples a scaling stage clipped (all devices together; `None`: no
    /// stage clips).
    pub clipped: Option<Vec<u64>>,
    /// Time the caller's handler took with the windows handed over (a sink: writing them),
    /// on the calling thread, while the devices went on.
    pub handing: Duration,
    /// Time the calling thread waited for the devices' next window, from the devices' start
    /// (their set-up not counted): the part of the pass the devices bound, where `handing` is
    /// the part its handler bound.
    pub waiting: Duration,
}

/// Samples per channel of the window the stages are timed on at most (a third of a second at
/// 30 kHz: long enough to fill a device, short enough to cost little on a CPU runtime).
const TIMED_WINDOW_SAMPLES: u64 = 10_000;

/// Synchronised runs per stage when timing the stages (after one warm-up run).
const TIMED_RUNS: usize = 1;

/// Preprocesses all of `source` with `spec` on `devices`: fits what must be fitted (unless
/// `fits` has it), times each stage on one window of the first device, then writes the output
/// of every window, in recording order, to `sink`, hands it the run's [`Provenance`] and
/// finishes it (not on an error).
///
/// # Errors
/// A spec that cannot run on the recording, no devices, and what the pass, the stages or the
/// sink refuse.
pub fn preprocess(
    devices: &[PassDevice],
    source: Arc<dyn RecordingSource>,
    spec: &PipelineSpec,
    given: Fits,
    options: &PreprocessOptions,
    progress: &dyn ProgressSink,
    sink: &mut dyn WindowSink,
) -> DspResult<Preprocessed> {
    let info = source.info().clone();
    spec.check(&info)?;
    let first = devices
        .first()
        .ok_or_else(|| DspError::config("preprocessing needs at least one device"))?;
    let labels = devices.iter().map(|d| d.label.clone()).collect();
    let plan = plan(
        &first.client,
        labels,
        &info,
        spec,
        &given,
        options.window_samples,
    )?;
    let fit_start = Instant::now();
    let fits = fit(devices, &source, spec, given.clone(), options.route)?;
    let fit_s = fit_start.elapsed().as_secs_f64();
    let fitted = summarise(spec, &plan, &given, &fits);
    let stage_times = time_stages(first, &source, spec, &fits, &plan, options.route)?;
    let scaling = Scaling::microvolts(&info);
    sink.begin(&info, &scaling.units)?;
    let pass = write_windows(
        devices,
        source,
        spec,
        &fits,
        plan.windows(&info)?,
        options.route,
        progress,
        sink,
    )?;
    let apply_s = pass.report.wall.as_secs_f64();
    let seconds = info.duration()?.as_seconds_f64();
    let report = PreprocessReport {
        dspk_version: env!("CARGO_PKG_VERSION").to_string(),
        pipeline: spec.clone(),
        decode: pass.report.route.name().to_string(),
        fit_s,
        apply_s,
        realtime_factor: if apply_s > 0.0 {
            seconds / apply_s
        } else {
            0.0
        },
        write_s: pass.handing.as_secs_f64(),
        wait_s: pass.waiting.as_secs_f64(),
        read_bytes: pass.report.stored_bytes,
        stage_times,
        fitted,
        clipped: pass.clipped.map(ClipSummary::of),
        plan,
    };
    let provenance = Provenance {
        report: report.clone(),
        inputs: options.inputs.clone(),
        fits: fits.clone(),
    };
    let value = serde_json::to_value(&provenance)
        .map_err(|e| DspError::config(format!("the provenance does not encode: {e}")))?;
    let finishing = Instant::now();
    sink.provenance(&value)?;
    sink.finish()?;
    let finish_s = finishing.elapsed().as_secs_f64();
    Ok(Preprocessed {
        finish_s,
        pass: pass.report,
        info,
        fits,
        report,
    })
}

/// Only the plan of preprocessing the recording `info` describes with `spec` on `devices`
/// (nothing is read):
/// `dspk preprocess --dry-run`.
///
/// # Errors
/// A spec that cannot run on the recording, fits given for another pipeline or channel count,
/// and windows past what a device buffer holds.
pub fn preprocess_plan(
    devices: &[PassDevice],
    info: &RecordingInfo,
    spec: &PipelineSpec,
    given: &Fits,
    options: &PreprocessOptions,
) -> DspResult<PreprocessPlan> {
    let first = devices
        .first()
        .ok_or_else(|| DspError::config("preprocessing needs at least one device"))?;
    let labels = devices.iter().map(|d| d.label.clone()).collect();
    plan(
        &first.client,
        labels,
        info,
        spec,
        given,
        options.window_samples,
    )
}

/// Each fitted stage of `spec`: where its parameters came from and what they are.
pub(crate) fn summarise(
    spec: &PipelineSpec,
    plan: &PreprocessPlan,
    given: &Fits,
    fits: &Fits,
) -> Vec<FitSummary> {
    let mut out = Vec::new();
    for (index, stage) in spec.stages.iter().enumerate() {
        let fitted_samples = plan.stages.get(index).map_or(0, |s| s.fit_samples);
        let mut channels = Vec::new();
        let (source, samples, mean_columns) = match stage {
            StageSpec::Whiten(w) => {
                let Some(matrix) = fits.whitening.get(&index) else {
                    continue;
                };
                let source = if given.whitening.contains_key(&index) {
                    "given"
                } else if w.matrix.is_some() {
                    "file"
                } else {
                    "fitted"
                };
                let rows = matrix.rows();
                let columns = rows.iter().map(|r| r.columns.len()).sum::<usize>();
                (
                    source,
                    matrix.samples(),
                    columns as f64 / rows.len().max(1) as f64,
                )
            }
            StageSpec::Center(_) if fits.centers.contains_key(&index) => {
                if given.centers.contains_key(&index) {
                    ("given", 0, 1.0)
                } else {
                    ("fitted", fitted_samples, 1.0)
                }
            }
            StageSpec::InterpolateBad(i) if i.detect => {
                let Some(found) = fits.bad_channels.get(&index) else {
                    continue;
                };
                channels.clone_from(found);
                if given.bad_channels.contains_key(&index) {
                    ("given", 0, 1.0)
                } else {
                    ("fitted", fitted_samples, 1.0)
                }
            }
            _ => continue,
        };
        out.push(FitSummary {
            index,
            kind: stage.kind().to_string(),
            source: source.to_string(),
            samples,
            mean_columns,
            channels,
        });
    }
    out
}

/// Each stage's device time on the first window of the plan (at most
/// [`TIMED_WINDOW_SAMPLES`] owned), on the first device.
fn time_stages(
    device: &PassDevice,
    source: &Arc<dyn RecordingSource>,
    spec: &PipelineSpec,
    fits: &Fits,
    plan: &PreprocessPlan,
    route: DecodeRoute,
) -> DspResult<Vec<StageTime>> {
    let info = source.info().clone();
    if info.samples == 0 || spec.stages.is_empty() {
        return Ok(Vec::new());
    }
    let owned = plan
        .window_samples
        .min(TIMED_WINDOW_SAMPLES)
        .min(info.samples);
    let window = halo_window(&info, 0, 0..owned, plan.halo_before, plan.halo_after);
    let mut chain = build(&device.client, spec, &info, fits, spec.stages.len())?;
    let mut times = Vec::new();
    DevicePass::new(&device.client, source.clone(), vec![window])
        .route(route)
        .run(|window, decoded| {
            let rows = rows_of(&info, window, decoded);
            times = chain.time_stages(
                decoded.handle(),
                &rows,
                window.valid_local.clone(),
                TIMED_RUNS,
            )?;
            Ok(Flow::Continue)
        })?;
    let seconds = info
        .sample_rate
        .duration_for_samples(owned)?
        .as_seconds_f64();
    // The chain holds the stages that apply, in spec order.
    let applied = spec
        .stages
        .iter()
        .enumerate()
        .filter(|(_, stage)| applies(stage, &info));
    Ok(applied
        .zip(times)
        .map(|((index, stage), time)| StageTime {
            index,
            kind: stage.kind().to_string(),
            window_ms: time.as_secs_f64() * 1e3,
            realtime: if time.as_secs_f64() > 0.0 {
                seconds / time.as_secs_f64()
            } else {
                0.0
            },
        })
        .collect())
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
    chain_pass(
        devices,
        source,
        spec,
        fits,
        windows,
        route,
        progress,
        Back::Values,
        |window, returned| match returned {
            Returned::Values(values) => on_window(window, &values),
            _ => Err(DspError::config(
                "the preprocessing pass handed back no values for a window",
            )),
        },
    )
}

/// Runs the chain of `spec` once on each of `windows` and hands `on_window` the window's
/// values at each of the pipeline `cuts` (a cut is how many of the spec's stages have run:
/// 0 is the decoded window, `spec.stages.len()` the chain's output), each channel-major
/// (`channels × valid_len`), in the order of `cuts`; windows in the order of `windows`. Each
/// cut's values are the same bits [`run_windows`] gives with the spec cut there, read back
/// from the one chain as it runs: what a report draws after every stage, for one pass.
///
/// # Errors
/// As [`run_windows`], and a cut past the spec's stages.
#[allow(clippy::too_many_arguments)]
pub fn run_window_cuts(
    devices: &[PassDevice],
    source: Arc<dyn RecordingSource>,
    spec: &PipelineSpec,
    fits: &Fits,
    windows: Vec<HaloWindow>,
    cuts: &[usize],
    route: DecodeRoute,
    progress: &dyn ProgressSink,
    mut on_window: impl FnMut(&HaloWindow, &[&[f32]]) -> DspResult<()>,
) -> DspResult<ChainPass> {
    if let Some(&cut) = cuts.iter().find(|&&c| c > spec.stages.len()) {
        return Err(DspError::config(format!(
            "a pipeline cut after {cut} stages is past the pipeline's {} stages",
            spec.stages.len()
        )));
    }
    chain_pass(
        devices,
        source,
        spec,
        fits,
        windows,
        route,
        progress,
        Back::Cuts(cuts.into()),
        |window, returned| match returned {
            Returned::Cuts(values) => {
                let slices: Vec<&[f32]> = values.iter().map(|v| &v[..]).collect();
                on_window(window, &slices)
            }
            _ => Err(DspError::config(
                "the preprocessing pass handed back no cuts for a window",
            )),
        },
    )
}

/// The rows of `decoded` (the decoded `window` of `info`) as a chain sees them.
pub(crate) fn rows_of(
    info: &RecordingInfo,
    window: &HaloWindow,
    decoded: &DecodedWindow<'_>,
) -> Rows {
    Rows {
        channels: decoded.channels(),
        stride: decoded.samples(),
        origin: window.read_global.start,
        segment: segment_of(info, &window.valid_global),
    }
}

/// The segment of `info` that holds `range`.
pub(crate) fn segment_of(info: &RecordingInfo, range: &Range<u64>) -> Range<u64> {
    let segments = info.segments();
    let i = segments.containing(range.start);
    segments.get(i).map_or(0..info.samples, |s| s.range())
}
