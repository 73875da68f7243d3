//! A detect plan (`dspk plan --detect`): the fit, once per recording in the plan step
//! (`detect/rec-K.json`: the pipeline's fitted stages and the noise levels), a job's part of the
//! table (`dspk run`: `outputs/job-N.npy`, the peaks of its samples) and the one table
//! concatenated from the parts (`dspk gather`: `outputs/rec-K.npy`), equal byte for byte to one
//! `dspk detect`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use dspk_stream::{
    DecodeRoute, DetectSpec, DetectionFit, PassDevice, Peak, TableFormat, decode_npy_peaks,
    detect_part, encode_peaks, fit_detection, segment_starts,
};
use dspk_types::{ComputeTarget, DspError, NoProgress, PipelineSpec};
use serde::{Deserialize, Serialize};

use super::plan_file::{Job, OUTPUTS_DIR, Plan};
use super::record::{JobRecord, JobResult};
use crate::error::{CliError, CliResult};
use crate::input::Input;
use crate::preprocess::signal_source;

/// The folder of a detect plan's fitted parameters and noise levels, one file per table.
pub(crate) const DETECT_DIR: &str = "detect";

/// The `format` of a `detect/rec-K.json`.
const TABLE_FORMAT: &str = "dspk-detect-table/1";

/// A plan's detector parameters, checked when the plan is written and when it is read.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "DetectSpec", into = "DetectSpec")]
pub(crate) struct PlannedDetect(DetectSpec);

// A checked spec's threshold, radius and sweep are finite numbers: equality is total.
impl Eq for PlannedDetect {}

impl TryFrom<DetectSpec> for PlannedDetect {
    type Error = DspError;

    fn try_from(spec: DetectSpec) -> Result<Self, DspError> {
        spec.check()?;
        Ok(Self(spec))
    }
}

impl From<PlannedDetect> for DetectSpec {
    fn from(p: PlannedDetect) -> Self {
        p.0
    }
}

/// The detector's parameters `dspk plan --detect`'s flags name, `dspk detect`'s defaults for
/// those not given.
pub(crate) fn spec_of_flags(
    threshold: Option<f64>,
    sign: Option<&str>,
    radius_um: Option<f64>,
    exclude_sweep_ms: Option<f64>,
) -> CliResult<DetectSpec> {
    let d = DetectSpec::default();
    Ok(DetectSpec {
        threshold: threshold.unwrap_or(d.threshold),
        sign: sign.map(str::parse).transpose()?.unwrap_or(d.sign),
        radius_um: radius_um.unwrap_or(d.radius_um),
        exclude_sweep_ms: exclude_sweep_ms.unwrap_or(d.exclude_sweep_ms),
    })
}

impl PlannedDetect {
    /// The parameters.
    pub(crate) fn spec(&self) -> &DetectSpec {
        &self.0
    }
}

/// One table of a detect plan, as the plan step fitted it (`detect/rec-K.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct PlannedTable {
    /// [`TABLE_FORMAT`].
    format: String,
    /// The recording, as the plan step named it.
    recording: String,
    /// The table, relative to the plan's folder.
    output: String,
    /// The jobs whose parts make it, in sample order.
    jobs: Vec<usize>,
    /// The fitting passes' wall time, seconds.
    fit_s: f64,
    /// The devices they ran on.
    fit_devices: Vec<String>,
    /// The pipeline's fitted parameters and the noise levels every part applies.
    fitted: DetectionFit,
    /// Each segment's first sample in the recording: the tables count a peak's
    /// `sample_index` from its segment's start, as SpikeInterface does.
    segment_starts: Vec<u64>,
}

/// `detect/rec-K.json`.
fn planned_path(dir: &Path, output: usize) -> PathBuf {
    dir.join(DETECT_DIR).join(format!("rec-{output}.json"))
}

/// `outputs/job-N.npy`, relative to the plan's folder.
pub(crate) fn part_name(job: usize) -> String {
    format!("{OUTPUTS_DIR}/job-{job}.npy")
}

impl PlannedTable {
    /// Fits what detection fits (`spec`'s fitted stages, the noise levels) to `input` (its
    /// signal channels) on `devices`, for table `output` made of `jobs`.
    pub(crate) fn fit(
        devices: &[PassDevice],
        input: &Input,
        spec: &PipelineSpec,
        output: usize,
        jobs: Vec<usize>,
    ) -> CliResult<Self> {
        let source = signal_source(input)?;
        spec.check(source.info())
            .map_err(|e| CliError::from(e).context(input.label()))?;
        let segment_starts = segment_starts(source.info());
        let clock = Instant::now();
        let fitted = fit_detection(devices, source, spec, DecodeRoute::from_env()?, &NoProgress)
            .map_err(|e| CliError::from(e).context(format!("fitting {}", input.label())))?;
        Ok(Self {
            format: TABLE_FORMAT.to_string(),
            recording: input.label(),
            output: format!("{OUTPUTS_DIR}/rec-{output}.npy"),
            jobs,
            fit_s: clock.elapsed().as_secs_f64(),
            fit_devices: devices.iter().map(|d| d.label.clone()).collect(),
            fitted,
            segment_starts,
        })
    }

    /// Writes it into the plan's folder `dir` as table `output`.
    pub(crate) fn write(&self, dir: &Path, output: usize) -> CliResult<()> {
        let path = planned_path(dir, output);
        std::fs::create_dir_all(dir.join(DETECT_DIR))
            .map_err(|e| CliError::new(format!("{}: cannot create: {e}", path.display())))?;
        let text = serde_json::to_string_pretty(self).expect("a planned table serialises");
        Ok(dspk_io::durable::write_file(
            &path,
            (text + "\n").as_bytes(),
        )?)
    }

    /// Reads table `output` of the plan in `dir`.
    fn load(dir: &Path, output: usize) -> CliResult<Self> {
        let path = planned_path(dir, output);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            CliError::new(format!(
                "{}: cannot read the fitted noise levels ({e}): `dspk plan --detect` writes them",
                path.display()
            ))
        })?;
        let planned: Self = serde_json::from_str(&text)
            .map_err(|e| CliError::new(format!("{}: not a planned table: {e}", path.display())))?;
        if planned.format != TABLE_FORMAT {
            return Err(CliError::new(format!(
                "{}: a planned table of format '{}', this dspk reads '{TABLE_FORMAT}'",
                path.display(),
                planned.format
            )));
        }
        Ok(planned)
    }
}

/// What a detect job computed: its part of the table, and where it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct DetectPartResult {
    /// The runtime.
    pub(crate) runtime: String,
    /// The device's name.
    pub(crate) device: String,
    /// The part's table, relative to the plan's folder.
    pub(crate) output: String,
    /// Peaks in it.
    pub(crate) peaks: u64,
    /// Windows detected in.
    pub(crate) windows: usize,
    /// Samples each window owned.
    pub(crate) window_samples: u64,
    /// Seconds of the detection pass.
    pub(crate) detect_s: f64,
}

/// The plan's pipeline and detector parameters.
fn plan_specs(plan: &Plan) -> CliResult<(&PipelineSpec, &DetectSpec)> {
    match (&plan.options.pipeline, &plan.options.detect) {
        (Some(pipeline), Some(detect)) => Ok((&pipeline.0, detect.spec())),
        _ => Err(CliError::new(
            "the detect plan has no pipeline or no detector parameters",
        )),
    }
}

/// The job's part: the peaks of samples `job.start_sample..job.end_sample` of `input` after
/// the plan's pipeline, with the plan step's fitted parameters and noise levels, into
/// `outputs/job-N.npy` (written atomically).
pub(crate) fn run_part(
    plan: &Plan,
    job: &Job,
    dir: &Path,
    input: &Input,
    target: ComputeTarget,
    devices: &[PassDevice],
) -> CliResult<DetectPartResult> {
    let (spec, detect) = plan_specs(plan)?;
    let output = job.output.ok_or_else(|| {
        CliError::new(format!("job {} of the detect plan names no table", job.job))
    })?;
    let planned = PlannedTable::load(dir, output)?;
    let source = signal_source(input)?;
    std::fs::create_dir_all(dir.join(OUTPUTS_DIR)).map_err(|e| {
        CliError::new(format!(
            "{}: cannot create: {e}",
            dir.join(OUTPUTS_DIR).display()
        ))
    })?;
    let name = part_name(job.job);
    // A part never overwrites a file of its recording (a plan folder among the data).
    dspk_io::check_output(&input.files()?, "the job's part", &dir.join(&name))?;
    let part = detect_part(
        devices,
        source,
        spec,
        &planned.fitted,
        detect,
        plan.options.window_samples,
        DecodeRoute::from_env()?,
        job.start_sample..job.end_sample,
        &NoProgress,
    )?;
    dspk_io::durable::write_file(
        dir.join(&name),
        &encode_peaks(&part.peaks, TableFormat::Npy, &planned.segment_starts),
    )?;
    let device = devices
        .first()
        .map(|d| dspk_device::describe(&d.client).adapter_name)
        .unwrap_or_default();
    Ok(DetectPartResult {
        runtime: target.name().to_string(),
        device,
        output: name,
        peaks: part.peaks.len() as u64,
        windows: part.windows,
        window_samples: part.window_samples,
        detect_s: part.detect_s,
    })
}

/// One table `dspk gather` concatenated.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct AssembledTable {
    /// The table, relative to the plan's folder.
    pub(crate) output: String,
    /// The recording.
    pub(crate) recording: String,
    /// Parts (jobs) it was made of.
    pub(crate) parts: usize,
    /// Its peaks.
    pub(crate) peaks: u64,
    /// Each channel's noise level (µV) the thresholds were taken from.
    pub(crate) noise_uv: Vec<f64>,
    /// The parts' detection passes, seconds (summed).
    pub(crate) detect_s: f64,
}

/// Concatenates the parts of every table of the plan in `dir` whose jobs are all done
/// (`done`: the result records by job) into `outputs/rec-K.npy`. Each part holds the peaks of
/// its own samples only and the parts are in sample order, so the concatenation is the sorted
/// table of the whole recording. Tables with a job not done are left out.
pub(crate) fn assemble(
    dir: &Path,
    plan: &Plan,
    done: &BTreeMap<usize, &JobRecord>,
) -> CliResult<Vec<AssembledTable>> {
    plan.done_outputs(
        |j| done.contains_key(&j),
        |output| PlannedTable::load(dir, output),
        |planned| &planned.jobs,
    )?
    .iter()
    .map(|planned| assemble_one(dir, plan, planned, done))
    .collect()
}

/// One table from its parts, each checked: there, whole, of its job's samples only, and
/// holding the peaks its job's record counted.
fn assemble_one(
    dir: &Path,
    plan: &Plan,
    planned: &PlannedTable,
    done: &BTreeMap<usize, &JobRecord>,
) -> CliResult<AssembledTable> {
    let mut peaks: Vec<Peak> = Vec::new();
    let mut detect_s = 0.0;
    let mut previous_end = None;
    for &n in &planned.jobs {
        let job = plan.job(n)?;
        let path = dir.join(part_name(n));
        let mend = format!(
            "run the job again (`dspk run {} --job {n} --force`)",
            dir.display()
        );
        if let Some(end) = previous_end
            && job.start_sample < end
        {
            return Err(CliError::new(format!(
                "job {n} starts at sample {} before its table's previous part ends ({end}): the \
                 plan's parts of {} overlap",
                job.start_sample, planned.recording
            )));
        }
        previous_end = Some(job.end_sample);
        let bytes = std::fs::read(&path).map_err(|e| {
            CliError::new(format!("{}: job {n}'s part: {e}: {mend}", path.display()))
        })?;
        let part = decode_npy_peaks(&bytes, &planned.segment_starts)
            .map_err(|e| CliError::from(e).context(format!("{}: {mend}", path.display())))?;
        let counted = match done.get(&n).and_then(|r| r.result.as_ref()) {
            Some(JobResult::Detect(r)) => {
                detect_s += r.detect_s;
                r.peaks
            }
            _ => {
                return Err(CliError::new(format!(
                    "job {n}'s record holds no detect result"
                )));
            }
        };
        if part.len() as u64 != counted {
            return Err(CliError::new(format!(
                "{}: holds {} peaks, and job {n}'s record counted {counted}: {mend}",
                path.display(),
                part.len()
            )));
        }
        if let Some(p) = part
            .iter()
            .find(|p| !(job.start_sample..job.end_sample).contains(&p.sample))
        {
            return Err(CliError::new(format!(
                "{}: holds a peak at sample {}, outside job {n}'s samples {}..{}: {mend}",
                path.display(),
                p.sample,
                job.start_sample,
                job.end_sample
            )));
        }
        peaks.extend(part);
    }
    let path = dir.join(&planned.output);
    dspk_io::durable::write_file(
        &path,
        &encode_peaks(&peaks, TableFormat::Npy, &planned.segment_starts),
    )?;
    Ok(AssembledTable {
        output: planned.output.clone(),
        recording: planned.recording.clone(),
        parts: planned.jobs.len(),
        peaks: peaks.len() as u64,
        noise_uv: planned.fitted.noise.clone(),
        detect_s,
    })
}

#[cfg(test)]
mod tests;
