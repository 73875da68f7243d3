//! A preprocess plan (`dspk plan --preprocess`): the fit, once per recording in the plan step
//! (`preprocess/rec-K.json`), a job's part of the output (`dspk run`: `outputs/job-N.bin`, the
//! fitted parameters applied to its samples) and the one output assembled from the parts
//! (`dspk gather`: `outputs/rec-K.bin` + sidecar), equal bit for bit to one `dspk preprocess`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use dspk_io::{
    BinarySidecar, BinarySink, SidecarSegment, Whole, assemble_parts, output_format, sidecar_path,
};
use dspk_stream::{
    DecodeRoute, Fits, InputFile, PassDevice, PreprocessOptions, PreprocessReport, Provenance, fit,
    preprocess_part,
};
use dspk_types::{ComputeTarget, MemoryOrder, NoProgress, PipelineSpec, RationalTime};
use serde::{Deserialize, Serialize};

use super::plan_file::{Job, OUTPUTS_DIR, Plan};
use super::record::JobRecord;
use crate::error::{CliError, CliResult, Context as _};
use crate::input::Input;
use crate::preprocess::signal_source;

/// The folder of a preprocess plan's fitted parameters, one file per output.
pub(crate) const PREPROCESS_DIR: &str = "preprocess";

/// The `format` of a `preprocess/rec-K.json`.
const OUTPUT_FORMAT: &str = "dspk-preprocess-output/1";

/// A plan's pipeline: the spec every job runs, the output flags (`--format`, `--gain`)
/// applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct PlannedPipeline(pub(crate) PipelineSpec);

// A checked spec holds no NaN (its gains and cut-offs are finite): equality is total.
impl Eq for PlannedPipeline {}

/// One output of a preprocess plan, as the plan step fitted it (`preprocess/rec-K.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct PlannedOutput {
    /// [`OUTPUT_FORMAT`].
    format: String,
    /// The recording, as the plan step named it.
    recording: String,
    /// The output's data file, relative to the plan's folder.
    output: String,
    /// The jobs whose parts make it, in sample order.
    jobs: Vec<usize>,
    /// The fitting pass's wall time, seconds.
    fit_s: f64,
    /// The devices it ran on.
    fit_devices: Vec<String>,
    /// The whole output's clock: its first sample's time (as its sidecar states it).
    start_time: Option<RationalTime>,
    /// Its segments (as its sidecar lists them).
    segments: Vec<SidecarSegment>,
    /// The fitted parameters every part applies.
    fits: Fits,
}

/// `preprocess/rec-K.json`.
fn planned_path(dir: &Path, output: usize) -> PathBuf {
    dir.join(PREPROCESS_DIR).join(format!("rec-{output}.json"))
}

/// `outputs/rec-K.bin`, relative to the plan's folder.
fn output_name(output: usize) -> String {
    format!("{OUTPUTS_DIR}/rec-{output}.bin")
}

/// `outputs/job-N.bin`, relative to the plan's folder.
pub(crate) fn part_name(job: usize) -> String {
    format!("{OUTPUTS_DIR}/job-{job}.bin")
}

impl PlannedOutput {
    /// Fits `spec` to `input` (its signal channels) on `devices`, for output `output` made of
    /// `jobs`, stored in `order`.
    pub(crate) fn fit(
        devices: &[PassDevice],
        input: &Input,
        spec: &PipelineSpec,
        order: MemoryOrder,
        output: usize,
        jobs: Vec<usize>,
    ) -> CliResult<Self> {
        let source = signal_source(input)?;
        let info = source.info().clone();
        spec.check(&info)
            .map_err(|e| CliError::from(e).context(input.label()))?;
        let clock = Instant::now();
        let fits = fit(
            devices,
            &source,
            spec,
            Fits::default(),
            DecodeRoute::from_env()?,
        )
        .map_err(|e| CliError::from(e).context(format!("fitting {}", input.label())))?;
        let whole = BinarySidecar::from_info(&info, order);
        Ok(Self {
            format: OUTPUT_FORMAT.to_string(),
            recording: input.label(),
            output: output_name(output),
            jobs,
            fit_s: clock.elapsed().as_secs_f64(),
            fit_devices: devices.iter().take(1).map(|d| d.label.clone()).collect(),
            start_time: whole.start_time,
            segments: whole.segments,
            fits,
        })
    }

    /// Writes it into the plan's folder `dir` as output `output`.
    pub(crate) fn write(&self, dir: &Path, output: usize) -> CliResult<()> {
        let path = planned_path(dir, output);
        std::fs::create_dir_all(dir.join(PREPROCESS_DIR))
            .map_err(|e| CliError::new(format!("{}: cannot create: {e}", path.display())))?;
        let text = serde_json::to_string_pretty(self).expect("a planned output serialises");
        Ok(dspk_io::durable::write_file(
            &path,
            (text + "\n").as_bytes(),
        )?)
    }

    /// Reads output `output` of the plan in `dir`.
    fn load(dir: &Path, output: usize) -> CliResult<Self> {
        let path = planned_path(dir, output);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            CliError::new(format!(
                "{}: cannot read the fitted parameters ({e}): `dspk plan --preprocess` writes \
                 them",
                path.display()
            ))
        })?;
        let planned: Self = serde_json::from_str(&text)
            .map_err(|e| CliError::new(format!("{}: not a planned output: {e}", path.display())))?;
        if planned.format != OUTPUT_FORMAT {
            return Err(CliError::new(format!(
                "{}: a planned output of format '{}', this dspk reads '{OUTPUT_FORMAT}'",
                path.display(),
                planned.format
            )));
        }
        Ok(planned)
    }
}

/// What a preprocess job computed: its part's report, and where it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PartResult {
    /// The runtime.
    pub(crate) runtime: String,
    /// The device's name.
    pub(crate) device: String,
    /// The part's data file, relative to the plan's folder (its sidecar beside it).
    pub(crate) output: String,
    /// The part's run.
    pub(crate) report: PreprocessReport,
}

/// The job's part: samples `job.start_sample..job.end_sample` of `input` through the plan's
/// pipeline with the plan step's fitted parameters, into `outputs/job-N.bin` (+ sidecar).
pub(crate) fn run_part(
    plan: &Plan,
    job: &Job,
    dir: &Path,
    input: &Input,
    target: ComputeTarget,
    devices: &[PassDevice],
) -> CliResult<PartResult> {
    let spec = &plan
        .options
        .pipeline
        .as_ref()
        .ok_or_else(|| CliError::new("the preprocess plan has no pipeline"))?
        .0;
    let output = job.output.ok_or_else(|| {
        CliError::new(format!(
            "job {} of the preprocess plan names no output",
            job.job
        ))
    })?;
    let planned = PlannedOutput::load(dir, output)?;
    let source = signal_source(input)?;
    std::fs::create_dir_all(dir.join(OUTPUTS_DIR)).map_err(|e| {
        CliError::new(format!(
            "{}: cannot create: {e}",
            dir.join(OUTPUTS_DIR).display()
        ))
    })?;
    let files = input.files()?;
    let name = part_name(job.job);
    // A part never overwrites a file of its recording (a plan folder among the data).
    dspk_io::check_output(&files, "the job's part", &dir.join(&name))?;
    let inputs = files
        .into_iter()
        .map(|(path, role)| InputFile::of(&path, &role))
        .collect::<Result<Vec<_>, _>>()?;
    let options = PreprocessOptions {
        window_samples: plan.options.window_samples,
        route: DecodeRoute::from_env()?,
        inputs,
    };
    let order = plan.options.order.unwrap_or(MemoryOrder::TimeMajor);
    let mut sink = BinarySink::new(dir.join(&name), order, input.label())
        .format(output_format(&spec.output()));
    let done = preprocess_part(
        devices,
        source,
        spec,
        planned.fits,
        &options,
        job.start_sample..job.end_sample,
        &NoProgress,
        &mut sink,
    )?;
    let device = devices
        .first()
        .map(|d| dspk_device::describe(&d.client).adapter_name)
        .unwrap_or_default();
    Ok(PartResult {
        runtime: target.name().to_string(),
        device,
        output: name,
        report: done.report,
    })
}

/// One output `dspk gather` assembled.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Assembled {
    /// Its data file, relative to the plan's folder.
    pub(crate) output: String,
    /// The recording.
    pub(crate) recording: String,
    /// Parts (jobs) it was made of.
    pub(crate) parts: usize,
    /// Its bytes.
    pub(crate) bytes: u64,
}

/// Assembles every output of the plan in `dir` whose jobs are all done (`done`: the result
/// records by job) with [`assemble_parts`]: the parts' data in sample order into
/// `outputs/rec-K.bin`, the sidecar the first part's with the whole output's clock, segments
/// and merged provenance. Outputs with a job not done are left out.
pub(crate) fn assemble(
    dir: &Path,
    plan: &Plan,
    done: &BTreeMap<usize, &JobRecord>,
) -> CliResult<Vec<Assembled>> {
    plan.done_outputs(
        |j| done.contains_key(&j),
        |output| PlannedOutput::load(dir, output),
        |planned| &planned.jobs,
    )?
    .iter()
    .map(|planned| assemble_one(dir, plan, planned, done))
    .collect()
}

/// One output from its parts.
fn assemble_one(
    dir: &Path,
    plan: &Plan,
    planned: &PlannedOutput,
    done: &BTreeMap<usize, &JobRecord>,
) -> CliResult<Assembled> {
    let mut parts = Vec::with_capacity(planned.jobs.len());
    for &n in &planned.jobs {
        let job = plan.job(n)?;
        let path = dir.join(part_name(n));
        let sidecar = BinarySidecar::read(&sidecar_path(&path))?;
        let samples = job.end_sample - job.start_sample;
        let bytes = samples
            .saturating_mul(sidecar.channel_count as u64)
            .saturating_mul(sidecar.format.bytes() as u64);
        let size = std::fs::metadata(&path)
            .map_err(|e| CliError::new(format!("{}: {e}", path.display())))?
            .len();
        if size != bytes {
            return Err(CliError::new(format!(
                "{}: holds {size} bytes, and job {n}'s {samples} samples of {} channels take \
                 {bytes}: run the job again (`dspk run {} --job {n} --force`)",
                path.display(),
                sidecar.channel_count,
                dir.display()
            )));
        }
        parts.push((n, path, sidecar));
    }
    let whole = Whole {
        start_time: planned.start_time,
        segments: planned.segments.clone(),
        // Made from the recording as the plan named it (a job names it from its base).
        from: planned.recording.clone(),
        provenance: merged_provenance(planned, &parts, done)?,
    };
    let paths: Vec<PathBuf> = parts.iter().map(|p| p.1.clone()).collect();
    let bytes = assemble_parts(&paths, &dir.join(&planned.output), whole)?;
    Ok(Assembled {
        output: planned.output.clone(),
        recording: planned.recording.clone(),
        parts: parts.len(),
        bytes,
    })
}

/// The whole output's provenance: the parts' reports merged
/// ([`PreprocessReport::merge`]), the plan step's fit time, the fitted parameters, and each
/// part's job, host, device and times.
fn merged_provenance(
    planned: &PlannedOutput,
    parts: &[(usize, PathBuf, BinarySidecar)],
    done: &BTreeMap<usize, &JobRecord>,
) -> CliResult<serde_json::Value> {
    let mut merged: Option<Provenance> = None;
    let mut jobs = Vec::new();
    for (n, path, sidecar) in parts {
        let part: Provenance = sidecar
            .provenance
            .clone()
            .ok_or_else(|| CliError::new(format!("{}: no provenance", path.display())))
            .and_then(|v| {
                serde_json::from_value(v)
                    .map_err(|e| CliError::new(format!("{}: its provenance: {e}", path.display())))
            })?;
        let record = done.get(n).expect("assembled outputs' jobs are all done");
        jobs.push(serde_json::json!({
            "job": n,
            "samples": [record.job.start_sample, record.job.end_sample],
            "host": record.provenance.host,
            "device": record.provenance.device,
            "apply_s": part.report.apply_s,
            "wall_s": record.provenance.wall_s,
        }));
        merged = Some(match merged {
            None => part,
            Some(mut m) => {
                m.report.merge(&part.report);
                m
            }
        });
    }
    let mut merged = merged.expect("an output has parts");
    merged.report.fit_s = planned.fit_s;
    let seconds = merged.report.plan.samples as f64 / sample_rate_hz(parts)?;
    merged.report.realtime_factor = if merged.report.apply_s > 0.0 {
        seconds / merged.report.apply_s
    } else {
        0.0
    };
    merged.fits = planned.fits.clone();
    let mut value = serde_json::to_value(&merged).expect("a provenance serialises");
    value["parts"] = serde_json::Value::Array(jobs);
    value["fit_devices"] = serde_json::json!(planned.fit_devices);
    Ok(value)
}

/// The parts' sample rate, Hz.
fn sample_rate_hz(parts: &[(usize, PathBuf, BinarySidecar)]) -> CliResult<f64> {
    parts
        .first()
        .map(|p| p.2.sample_rate.rate_hz())
        .ok_or_else(|| CliError::new("an output without parts"))
        .context("the merged provenance")
}
