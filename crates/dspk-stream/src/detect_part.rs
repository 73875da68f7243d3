//! One part of a chunked detection run (a cluster job): what is fitted once per recording
//! ([`fit_detection`]: the pipeline's fitted stages and the noise levels) and the peaks of one
//! sample range found with it ([`detect_part`]), so that the parts' tables laid end to end are
//! the whole run's table.

use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use dspk_ops::Halo;
use dspk_ops::detect::{DetectSpec, Peak};
use dspk_types::{
    ChunkSchedule, DspError, DspResult, PipelineSpec, ProgressSink, RecordingInfo, RecordingSource,
};
use serde::{Deserialize, Serialize};

use crate::detect::{detect_windows, detection_halo, fit_noise};
use crate::fit::fit;
use crate::preprocess_part::check_complete;
use crate::preprocess_plan::{PreprocessPlan, plan};
use crate::{DecodeRoute, Fits, PassDevice};

/// What detection fits once per recording: every part applies the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DetectionFit {
    /// The pipeline's fitted stages' parameters.
    pub fits: Fits,
    /// Each channel's noise level (µV) on the pipeline's output: the thresholds are
    /// `threshold ×` these.
    pub noise: Vec<f64>,
}

/// Fits what [`detect`](crate::detect) fits before it detects, on the same windows and so to
/// the same bits: `spec`'s fitted stages on the whole of `source`, then each channel's noise
/// level on the pipeline's output over [`noise_windows`](dspk_ops::detect::noise_windows).
///
/// # Errors
/// A spec that cannot run on the recording, no devices, and what the passes refuse.
pub fn fit_detection(
    devices: &[PassDevice],
    source: Arc<dyn RecordingSource>,
    spec: &PipelineSpec,
    route: DecodeRoute,
    progress: &dyn ProgressSink,
) -> DspResult<DetectionFit> {
    let info = source.info().clone();
    let planned = plan_on(devices, &info, spec, &Fits::default(), None)?;
    let fits = fit(devices, &source, spec, Fits::default(), route)?;
    let noise = fit_noise(
        devices,
        source,
        spec,
        &fits,
        chain_halo(&planned),
        route,
        progress,
    )?;
    Ok(DetectionFit { fits, noise })
}

/// What one part's detection found and took.
#[derive(Debug, Clone, PartialEq)]
pub struct DetectedPart {
    /// The peaks of the part's samples, sorted by sample then channel.
    pub peaks: Vec<Peak>,
    /// Windows detected in.
    pub windows: usize,
    /// Samples each window owned.
    pub window_samples: u64,
    /// Seconds of the detection pass.
    pub detect_s: f64,
}

/// The peaks of samples `range` of `source` after `spec`, detected with `detect` and the
/// parameters and noise levels `fitted` holds (fitted once for the whole recording by
/// [`fit_detection`]), on `devices`.
///
/// Windows own samples of `range` only and read the chain's and the detector's context around
/// them from the whole recording, clamped at its segments' ends as the whole run's are; each
/// peak is kept by the window that owns its sample. The part's peaks are therefore exactly the
/// whole run's peaks whose sample lies in `range`, whatever the window size or device count.
///
/// # Errors
/// A range that is empty or past the recording's end, `fitted` lacking a fitted stage's
/// parameters or holding noise levels of another channel count, and what
/// [`detect`](crate::detect) refuses.
#[allow(clippy::too_many_arguments)]
pub fn detect_part(
    devices: &[PassDevice],
    source: Arc<dyn RecordingSource>,
    spec: &PipelineSpec,
    fitted: &DetectionFit,
    detect: &DetectSpec,
    window_samples: Option<u64>,
    route: DecodeRoute,
    range: Range<u64>,
    progress: &dyn ProgressSink,
) -> DspResult<DetectedPart> {
    let info = source.info().clone();
    check_range(&info, &range)?;
    detect.check()?;
    check_complete(spec, &fitted.fits)?;
    if fitted.noise.len() != info.channel_count() {
        return Err(DspError::shape(
            "noise levels fitted for detection",
            info.channel_count(),
            fitted.noise.len(),
        ));
    }
    let planned = plan_on(devices, &info, spec, &fitted.fits, window_samples)?;
    let halo = detection_halo(&info, chain_halo(&planned), detect);
    let owned = planned.window_samples.max(1);
    let windows =
        ChunkSchedule::for_recording(&info, range, owned, halo.before, halo.after)?.into_windows();
    let count = windows.len();
    let start = Instant::now();
    let peaks = detect_windows(
        devices,
        source,
        spec,
        &fitted.fits,
        detect,
        &fitted.noise,
        windows,
        route,
        progress,
    )?;
    Ok(DetectedPart {
        peaks,
        windows: count,
        window_samples: owned,
        detect_s: start.elapsed().as_secs_f64(),
    })
}

/// Refuses a range that is empty or reaches past the recording's end.
fn check_range(info: &RecordingInfo, range: &Range<u64>) -> DspResult<()> {
    if range.start >= range.end || range.end > info.samples {
        return Err(DspError::config(format!(
            "samples {}..{} are not a part of {}, which holds samples 0..{}",
            range.start, range.end, info.name, info.samples
        )));
    }
    Ok(())
}

/// The whole recording's apply plan on the first of `devices` (its halos and window size are
/// what [`detect`](crate::detect) uses).
fn plan_on(
    devices: &[PassDevice],
    info: &RecordingInfo,
    spec: &PipelineSpec,
    fits: &Fits,
    window_samples: Option<u64>,
) -> DspResult<PreprocessPlan> {
    let first = devices
        .first()
        .ok_or_else(|| DspError::config("detection needs at least one device"))?;
    let labels = devices.iter().map(|d| d.label.clone()).collect();
    plan(&first.client, labels, info, spec, fits, window_samples)
}

/// The chain's halo in a plan.
fn chain_halo(planned: &PreprocessPlan) -> Halo {
    Halo {
        before: planned.halo_before,
        after: planned.halo_after,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dspk_types::{MemoryOrder, SampleFormat, SampleRate};

    #[test]
    fn a_part_outside_the_recording_is_refused_with_its_range() {
        let info = RecordingInfo::new(
            "rec",
            4,
            1000,
            SampleRate::new(30_000.0).unwrap(),
            SampleFormat::I16,
            MemoryOrder::TimeMajor,
        );
        for range in [5..5, 990..1001] {
            let err = check_range(&info, &range).unwrap_err().to_string();
            assert!(
                err.contains(&format!(
                    "samples {}..{} are not a part",
                    range.start, range.end
                )) && err.contains("0..1000"),
                "{err}"
            );
        }
        assert!(check_range(&info, &(0..1000)).is_ok());
    }
}
