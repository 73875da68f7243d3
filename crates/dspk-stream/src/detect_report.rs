//! What a detection run did, as data ([`DetectReport`]: what `dspk detect --json` prints and
//! its summary line is made of).

use dspk_ops::detect::{DetectSpec, Peak, median};
use dspk_types::{DspResult, PipelineSpec, RecordingInfo};
use serde::{Deserialize, Serialize};

use crate::detect_truth::TruthScore;

/// A detection run's parameters and figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DetectReport {
    /// The dspk that detected.
    pub dspk_version: String,
    /// The recording's name.
    pub recording: String,
    /// Its channels.
    pub channels: usize,
    /// Its samples per channel (all segments).
    pub samples: u64,
    /// Its duration in seconds.
    pub duration_s: f64,
    /// The pipeline run before detection.
    pub pipeline: PipelineSpec,
    /// The detector's parameters.
    pub detect: DetectSpec,
    /// Whether each channel was its own only neighbourhood (the recording has no probe
    /// geometry: the radius did not apply).
    pub by_channel: bool,
    /// The exclusion sweep in samples.
    pub sweep_samples: usize,
    /// Each channel's noise level (µV): the thresholds are `k ×` these.
    pub noise_uv: Vec<f64>,
    /// The median over channels of the noise levels (µV).
    pub median_noise_uv: f64,
    /// Peaks found.
    pub peaks: u64,
    /// Peaks per channel per second.
    pub rate_per_channel_hz: f64,
    /// Samples each window owned.
    pub window_samples: u64,
    /// Windows detected in.
    pub windows: usize,
    /// Seconds fitting the pipeline and the noise levels.
    pub fit_s: f64,
    /// Seconds of the detection pass.
    pub detect_s: f64,
    /// Recording seconds per second of the detection pass.
    pub realtime_factor: f64,
    /// The devices, by label.
    pub devices: Vec<String>,
    /// The peaks scored against the spikes the recording planted, where it is the synthetic
    /// recording ([`crate::Detected::score_against`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truth: Option<TruthScore>,
}

impl DetectReport {
    /// The report of a run on `info` that found `peaks` with `noise` in `windows` (samples
    /// owned, count) taking `times` (fit, detection) seconds.
    ///
    /// # Errors
    /// A recording whose duration cannot be stated.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn of(
        info: &RecordingInfo,
        pipeline: &PipelineSpec,
        detect: &DetectSpec,
        noise: &[f64],
        peaks: &[Peak],
        windows: (u64, usize),
        times: (f64, f64),
        devices: Vec<String>,
    ) -> DspResult<Self> {
        let duration_s = info.duration()?.as_seconds_f64();
        let channels = info.channel_count();
        let per = duration_s * channels as f64;
        Ok(Self {
            dspk_version: env!("CARGO_PKG_VERSION").to_string(),
            recording: info.name.clone(),
            channels,
            samples: info.samples,
            duration_s,
            pipeline: pipeline.clone(),
            detect: *detect,
            by_channel: info.probe.is_none(),
            sweep_samples: detect.sweep_samples(info.sample_rate.rate_hz()),
            noise_uv: noise.to_vec(),
            median_noise_uv: median(&mut noise.to_vec()),
            peaks: peaks.len() as u64,
            rate_per_channel_hz: if per > 0.0 {
                peaks.len() as f64 / per
            } else {
                0.0
            },
            window_samples: windows.0,
            windows: windows.1,
            fit_s: times.0,
            detect_s: times.1,
            realtime_factor: if times.1 > 0.0 {
                duration_s / times.1
            } else {
                0.0
            },
            devices,
            truth: None,
        })
    }
}
