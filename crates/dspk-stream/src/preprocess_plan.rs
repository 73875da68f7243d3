//! What a preprocessing run will do and what it did, as data: [`PreprocessPlan`] (the stages,
//! their halos, the windows and the device memory a window takes — `dspk preprocess
//! --dry-run`), and [`PreprocessReport`] (the plan with the figures of the run: fit and apply
//! time, each stage's device time, bytes moved, what was fitted, clipped samples), which the
//! program prints with `--json` and writes, with the fitted parameters themselves, into the
//! output's sidecar as its provenance.

use std::ops::Range;

use cubecl::client::Client;
use dspk_ops::whiten::fit_windows;
use dspk_ops::{Fits, build};
use dspk_types::{
    ChunkSchedule, DspError, DspResult, HaloWindow, OutputType, PipelineSpec, RecordingInfo,
    StageSpec,
};
use serde::{Deserialize, Serialize};

use crate::preprocess_window_samples;

/// One stage as planned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedStage {
    /// Its position in the spec, from 0.
    pub index: usize,
    /// Its kind, as written in specs.
    pub kind: String,
    /// Samples of context it reads before what it produces.
    pub halo_before: u64,
    /// Samples of context it reads after what it produces.
    pub halo_after: u64,
    /// Whether it runs on this recording (an optional phase shift is left out of a recording
    /// whose probe states no ADC shifts: there is nothing to delay).
    pub applied: bool,
    /// Whether it is fitted to the recording before the pass (pointwise in time).
    pub fitted: bool,
    /// Windows its fitting pass reads (0 where it is not fitted or its parameters are given).
    pub fit_windows: usize,
    /// Samples per channel its fitting pass reads.
    pub fit_samples: u64,
}

/// What a preprocessing run will do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreprocessPlan {
    /// The recording's name.
    pub recording: String,
    /// Channels in and out.
    pub channels: usize,
    /// Samples per channel in and out.
    pub samples: u64,
    /// The stages, first to last.
    pub stages: Vec<PlannedStage>,
    /// Samples of context the whole chain reads before each window (clamped at segment ends).
    pub halo_before: u64,
    /// Samples of context the whole chain reads after each window.
    pub halo_after: u64,
    /// Samples each window owns (the last of a segment may own fewer).
    pub window_samples: u64,
    /// Windows of the apply pass.
    pub windows: usize,
    /// The most samples per channel one window reads (owned and context).
    pub read_samples: u64,
    /// Device memory one window of one device takes, bytes: the decoded window and the chain's
    /// two buffers (`3 × channels × read_samples × 4`); stages' own parameters and working
    /// buffers (the filter's scratch, at most one binding of the device) come on top.
    pub device_bytes_per_window: u64,
    /// Stored bytes the apply pass reads (context included).
    pub read_bytes: u64,
    /// The output's sample type (`float32`, `int16`).
    pub output: String,
    /// The gain of the output's scaling (1 without one).
    pub gain: f64,
    /// Bytes of output.
    pub output_bytes: u64,
    /// The devices, by label.
    pub devices: Vec<String>,
}

impl PreprocessPlan {
    /// The apply pass's windows (the plan's schedule).
    pub(crate) fn windows(&self, info: &RecordingInfo) -> DspResult<Vec<HaloWindow>> {
        self.windows_in(info, 0..info.samples)
    }

    /// The windows that own `range` of the recording: the whole run's windows there would be
    /// others, but every window carries the chain's halo from outside its own samples (from
    /// outside `range` too), so the output is the same bits.
    pub(crate) fn windows_in(
        &self,
        info: &RecordingInfo,
        range: Range<u64>,
    ) -> DspResult<Vec<HaloWindow>> {
        Ok(schedule(
            info,
            range,
            self.window_samples,
            self.halo_before,
            self.halo_after,
        )?
        .into_windows())
    }

    /// This plan (of the whole recording `info`) for its samples `range` only: the samples,
    /// windows, reads and output of that part.
    ///
    /// # Errors
    /// A range that is empty or past the recording's end.
    pub fn part(&self, info: &RecordingInfo, range: Range<u64>) -> DspResult<PreprocessPlan> {
        if range.start >= range.end || range.end > info.samples {
            return Err(DspError::config(format!(
                "samples {}..{} are not a part of {}, which holds samples 0..{}",
                range.start, range.end, info.name, info.samples
            )));
        }
        let windows = self.windows_in(info, range.clone())?;
        let read_samples = windows
            .iter()
            .map(|w| w.read_len() as u64)
            .max()
            .unwrap_or(0);
        let read_total: u64 = windows.iter().map(|w| w.read_len() as u64).sum();
        let samples = range.end - range.start;
        let bytes_per_sample = if self.output == OutputType::Int16.name() {
            2
        } else {
            4
        };
        Ok(PreprocessPlan {
            samples,
            windows: windows.len(),
            read_samples,
            device_bytes_per_window: checked(&[3, self.channels as u64, read_samples, 4])?,
            read_bytes: checked(&[read_total, info.frame_bytes() as u64])?,
            output_bytes: checked(&[self.channels as u64, samples, bytes_per_sample])?,
            ..self.clone()
        })
    }
}

fn schedule(
    info: &RecordingInfo,
    range: Range<u64>,
    window: u64,
    before: u64,
    after: u64,
) -> DspResult<ChunkSchedule> {
    ChunkSchedule::for_recording(info, range, window.max(1), before, after)
}

/// The plan of preprocessing `info` with `spec` on `devices` (labels) with `client` (the
/// first device: halos and window sizes come from its stages and buffers), windows owning
/// `asked` samples (default: [`crate::PREPROCESS_WINDOW_SECONDS`], within one device buffer with
/// the halos); `fits` holds the parameters already given (those
/// stages fit nothing).
///
/// # Errors
/// A spec that cannot run on the recording, and sizes past what a device buffer holds.
pub fn plan(
    client: &Client,
    devices: Vec<String>,
    info: &RecordingInfo,
    spec: &PipelineSpec,
    fits: &Fits,
    asked: Option<u64>,
) -> DspResult<PreprocessPlan> {
    spec.check(info)?;
    check_given(spec, info, fits)?;
    // Fitted stages are pointwise (no halo): the chain without them has the whole chain's
    // halos, and builds before anything is fitted.
    let unfitted = PipelineSpec {
        stages: spec
            .stages
            .iter()
            .enumerate()
            .filter(|(i, _)| !spec.is_fitted(*i))
            .map(|(_, s)| s.clone())
            .collect(),
        ..spec.clone()
    };
    let chain = build(
        client,
        &unfitted,
        info,
        &Fits::default(),
        unfitted.stages.len(),
    )?;
    let mut halos = chain.stages().iter().map(|s| s.halo());
    let mut stages = Vec::with_capacity(spec.stages.len());
    for (index, stage) in spec.stages.iter().enumerate() {
        let fitted = spec.is_fitted(index);
        let applied = applies(stage, info);
        let halo = if fitted || !applied {
            dspk_ops::Halo::NONE
        } else {
            halos.next().unwrap_or_default()
        };
        let (fit_windows, fit_samples) = match stage {
            StageSpec::Whiten(w) if w.matrix.is_none() && !fits.whitening.contains_key(&index) => {
                let ranges = fit_windows(info, &w.fit);
                (ranges.len(), ranges.iter().map(|r| r.end - r.start).sum())
            }
            StageSpec::Center(c) if !fits.centers.contains_key(&index) => {
                let ranges = fit_windows(info, &c.fit);
                (ranges.len(), ranges.iter().map(|r| r.end - r.start).sum())
            }
            // dspk's bad-channel detection scans the whole recording (in the scan's windows).
            StageSpec::InterpolateBad(i) if i.detect && !fits.bad_channels.contains_key(&index) => {
                (1, info.samples)
            }
            _ => (0, 0),
        };
        stages.push(PlannedStage {
            index,
            kind: stage.kind().to_string(),
            halo_before: halo.before,
            halo_after: halo.after,
            applied,
            fitted,
            fit_windows,
            fit_samples,
        });
    }
    let halo = chain.halo();
    drop(chain);
    let window = preprocess_window_samples(client, info, asked, halo.before + halo.after)?
        .min(info.samples)
        .max(1);
    let schedule = schedule(info, 0..info.samples, window, halo.before, halo.after)?;
    let read_samples = schedule
        .windows()
        .iter()
        .map(|w| w.read_len() as u64)
        .max()
        .unwrap_or(0);
    let read_total: u64 = schedule.windows().iter().map(|w| w.read_len() as u64).sum();
    let channels = info.channel_count();
    let device_bytes_per_window = checked(&[3, channels as u64, read_samples, 4])?;
    dspk_kernels::device_elements("a preprocessing window", &[channels, read_samples as usize])?;
    let output = spec.output();
    let output_bytes = checked(&[
        channels as u64,
        info.samples,
        match output.output {
            OutputType::Float32 => 4,
            OutputType::Int16 => 2,
        },
    ])?;
    Ok(PreprocessPlan {
        recording: info.name.clone(),
        channels,
        samples: info.samples,
        stages,
        halo_before: halo.before,
        halo_after: halo.after,
        window_samples: window,
        windows: schedule.len(),
        read_samples,
        device_bytes_per_window,
        read_bytes: checked(&[read_total, info.frame_bytes() as u64])?,
        output: output.output.name().to_string(),
        gain: output.gain,
        output_bytes,
        devices,
    })
}

/// Whether `stage` runs on `info` (as `dspk_ops::build` decides: an optional phase shift that
/// does not apply is left out).
pub(crate) fn applies(stage: &StageSpec, info: &RecordingInfo) -> bool {
    !matches!(stage, StageSpec::PhaseShift(p) if !p.applies_to(info))
}

/// Refuses fitted parameters given for a stage the pipeline does not have there (another
/// pipeline's), or for another number of channels.
fn check_given(spec: &PipelineSpec, info: &RecordingInfo, fits: &Fits) -> DspResult<()> {
    let channels = info.channel_count();
    let given = fits
        .whitening
        .iter()
        .map(|(i, m)| (*i, "whiten", m.channels()))
        .chain(fits.centers.iter().map(|(i, m)| (*i, "center", m.len())))
        .chain(
            fits.bad_channels
                .keys()
                .map(|i| (*i, "interpolate_bad", channels)),
        );
    for (index, kind, count) in given {
        let here = spec.stages.get(index).map(StageSpec::kind);
        if here != Some(kind) {
            return Err(DspError::config(format!(
                "the fitted parameters given are for a {kind} stage at position {index}, and                  the pipeline has {} there: they were fitted for another pipeline",
                here.map_or("no stage".to_string(), |k| format!("a {k} stage"))
            )));
        }
        if count != channels {
            return Err(DspError::config(format!(
                "the fitted parameters of stage {index} ({kind}) are for {count} channels, and                  {} has {channels}",
                info.name
            )));
        }
    }
    for (index, bad) in &fits.bad_channels {
        if let Some(&c) = bad.iter().find(|&&c| c >= channels) {
            return Err(DspError::config(format!(
                "the bad channels given for stage {index} (interpolate_bad) name channel {c}, \
                 and {} has {channels} channels",
                info.name
            )));
        }
    }
    Ok(())
}

/// The product of `factors`, or an error where it overflows `u64`.
fn checked(factors: &[u64]) -> DspResult<u64> {
    factors.iter().try_fold(1u64, |total, &f| {
        total
            .checked_mul(f)
            .ok_or_else(|| DspError::Overflow(format!("the product of {factors:?} bytes")))
    })
}

/// One fitted stage's parameters, summarised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitSummary {
    /// The stage's position in the spec.
    pub index: usize,
    /// Its kind.
    pub kind: String,
    /// Where its parameters came from: `fitted` (this run's fitting pass), `file` (the spec's
    /// matrix file) or `given` (fits handed in, e.g. by a cluster plan).
    pub source: String,
    /// Samples per channel it was fitted on (0: not from data).
    pub samples: u64,
    /// Input channels each output channel mixes, on average.
    pub mean_columns: f64,
    /// A detecting interpolation's bad channels (ascending; empty for other stages and where
    /// none were found).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<usize>,
}

/// The samples a scaling stage clipped to its output type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClipSummary {
    /// Clipped samples, all channels.
    pub total: u64,
    /// Channels with at least one clipped sample.
    pub channels: usize,
    /// Per channel.
    pub per_channel: Vec<u64>,
}

impl ClipSummary {
    /// The summary of per-channel counts.
    pub fn of(per_channel: Vec<u64>) -> Self {
        Self {
            total: per_channel.iter().sum(),
            channels: per_channel.iter().filter(|&&n| n > 0).count(),
            per_channel,
        }
    }
}

/// One stage's device time on one window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageTime {
    /// The stage's position in the spec.
    pub index: usize,
    /// Its kind.
    pub kind: String,
    /// Median device time of the stage on the run's first window, synchronised around it,
    /// milliseconds.
    pub window_ms: f64,
    /// Seconds of recording per second of that device time.
    pub realtime: f64,
}

/// What a preprocessing run did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreprocessReport {
    /// The version of dspk that ran it.
    pub dspk_version: String,
    /// The pipeline it ran (with the output flags applied).
    pub pipeline: PipelineSpec,
    /// The plan it followed.
    pub plan: PreprocessPlan,
    /// How windows reached the devices.
    pub decode: String,
    /// Wall time of the fitting passes, seconds.
    pub fit_s: f64,
    /// Wall time of the apply pass (first read to last window handed over), seconds.
    pub apply_s: f64,
    /// Recording seconds per wall second of the apply pass.
    pub realtime_factor: f64,
    /// Of `apply_s`, the time spent writing windows to the output (on the writing thread,
    /// while the devices went on), seconds.
    #[serde(default)]
    pub write_s: f64,
    /// Of `apply_s`, the time the writing thread waited for the devices' next window, seconds:
    /// where it is near `apply_s` the devices bound the run, where `write_s` is, the output.
    #[serde(default)]
    pub wait_s: f64,
    /// Stored bytes the apply pass read.
    pub read_bytes: u64,
    /// Each stage's device time on one window.
    pub stage_times: Vec<StageTime>,
    /// The fitted stages' parameters, summarised (the parameters themselves are in
    /// [`Provenance::fits`]).
    pub fitted: Vec<FitSummary>,
    /// The samples the output's scaling clipped (none without an int16 output).
    pub clipped: Option<ClipSummary>,
}

impl PreprocessReport {
    /// This report (of a part of a chunked run, or of several parts already merged) with the
    /// next `part`'s figures added: samples, windows, bytes and apply time summed, the largest
    /// window kept, clipped samples added per channel, devices listed once each. The fit time
    /// and the realtime factor are left to the caller (the fit ran once, elsewhere).
    pub fn merge(&mut self, part: &PreprocessReport) {
        let p = &mut self.plan;
        p.samples += part.plan.samples;
        p.windows += part.plan.windows;
        p.read_samples = p.read_samples.max(part.plan.read_samples);
        p.device_bytes_per_window = p
            .device_bytes_per_window
            .max(part.plan.device_bytes_per_window);
        p.read_bytes += part.plan.read_bytes;
        p.output_bytes += part.plan.output_bytes;
        for d in &part.plan.devices {
            if !p.devices.contains(d) {
                p.devices.push(d.clone());
            }
        }
        self.apply_s += part.apply_s;
        self.write_s += part.write_s;
        self.wait_s += part.wait_s;
        self.read_bytes += part.read_bytes;
        self.clipped = match (self.clipped.take(), &part.clipped) {
            (Some(a), Some(b)) => Some(ClipSummary::of(
                a.per_channel
                    .iter()
                    .zip(&b.per_channel)
                    .map(|(x, y)| x + y)
                    .collect(),
            )),
            (a, b) => a.or_else(|| b.clone()),
        };
    }
}

/// What a preprocessed file's sidecar records of how it was made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The run.
    pub report: PreprocessReport,
    /// The input files, as they were when the run began.
    pub inputs: Vec<InputFile>,
    /// The fitted parameters, complete: another run given them applies the same.
    pub fits: Fits,
}

/// An input file's identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputFile {
    /// Its path as given.
    pub path: String,
    /// What it is to the recording (data, metadata...).
    pub role: String,
    /// Its size, bytes.
    pub bytes: u64,
    /// Its modification time, seconds since the Unix epoch (where the filesystem keeps one).
    pub modified_unix_s: Option<u64>,
}

impl InputFile {
    /// The identity of `path` (what it is to the recording: `role`), as it is now.
    ///
    /// # Errors
    /// A file whose metadata cannot be read (naming it).
    pub fn of(path: &std::path::Path, role: &str) -> DspResult<Self> {
        let meta = std::fs::metadata(path)
            .map_err(|e| DspError::io(path, "reading an input file's size and time", &e))?;
        let modified_unix_s = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_secs());
        Ok(Self {
            path: path.display().to_string(),
            role: role.to_string(),
            bytes: meta.len(),
            modified_unix_s,
        })
    }
}

/// The fitted parameters the preprocessed file's sidecar at `path` records in its provenance
/// (or a cluster run's fit file holds: `dspk plan --preprocess`'s `preprocess/rec-K.json`,
/// `dspk.distributed.preprocess`'s): what a later run (a cluster job, `dspk preprocess
/// --fits`) applies to make the same output.
///
/// # Errors
/// A file that cannot be read, is not JSON, or is not the sidecar of a preprocessed file
/// (each naming the file).
pub fn fits_of_sidecar(path: &std::path::Path) -> DspResult<Fits> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| DspError::io(path, "reading the fitted parameters", &e))?;
    fits_of_sidecar_text(&text).map_err(|e| DspError::config(format!("{}: {e}", path.display())))
}

/// [`fits_of_sidecar`] of a sidecar's JSON text (or a cluster run's fit file, whose `fits`
/// are at the top).
fn fits_of_sidecar_text(text: &str) -> DspResult<Fits> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| DspError::config(format!("not a JSON sidecar: {e}")))?;
    let fits = value
        .get("provenance")
        .and_then(|p| p.get("fits"))
        .or_else(|| value.get("fits"))
        .ok_or_else(|| {
            DspError::config(
                "the sidecar has no provenance.fits: it is not the sidecar of a dspk \
                 preprocess output",
            )
        })?;
    serde_json::from_value(fits.clone())
        .map_err(|e| DspError::config(format!("the sidecar's provenance.fits: {e}")))
}
