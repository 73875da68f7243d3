//! `dspk run DIR --job N`: one job of a plan (an array task), its record written atomically
//! with its provenance; a finished job is skipped, a failed one leaves its error.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use dspk_device::{Catalog, DeviceChoice, DeviceKind, SlurmPlace, Worker, worker_device};
use dspk_stream::{PassDevice, Prepared, open_pass_devices};
use dspk_types::{ComputeTarget, MemoryOrder, RateChoice, TimeSpec};
use serde_json::{Value, json};

use super::plan_file::{
    Job, JobCommand, OUTPUTS_DIR, Plan, RESULTS_DIR, failure_path, result_path,
};
use super::record::{JobRecord, JobResult, Provenance, RESULT_FORMAT, input_files, read_record};
use super::{detect, preprocess};
use crate::error::{CliError, CliResult, Context as _};
use crate::input::{Input, TimeOptions};
use crate::{Ctx, convert, scan};

/// The variable Slurm sets to an array task's index: `--job`'s default.
pub(crate) const ARRAY_TASK_ENV: &str = "SLURM_ARRAY_TASK_ID";

/// The variables of a job's environment its provenance records (those its device is chosen
/// from among them).
pub(crate) const SLURM_ENV: [&str; 11] = [
    "SLURM_JOB_ID",
    "SLURM_ARRAY_JOB_ID",
    "SLURM_ARRAY_TASK_ID",
    "SLURM_RESTART_COUNT",
    "SLURM_LOCALID",
    "SLURM_STEP_GPUS",
    "SLURM_JOB_GPUS",
    "GPU_DEVICE_ORDINAL",
    "CUDA_VISIBLE_DEVICES",
    "SLURMD_NODENAME",
    "SLURM_CLUSTER_NAME",
];

/// The options of `dspk run` after parsing.
#[derive(Debug, Clone)]
pub(crate) struct RunOptions {
    /// The plan's folder.
    pub(crate) dir: PathBuf,
    /// The job (`--job`, else `$SLURM_ARRAY_TASK_ID`).
    pub(crate) job: Option<usize>,
    /// Where the recordings are on this machine, instead of the plan's base.
    pub(crate) base: Option<PathBuf>,
    /// Run a finished job again.
    pub(crate) force: bool,
}

/// Removes what a killed run of `job` left: the temporaries of its records and outputs
/// ([`dspk_io::durable`]'s, targets `job-N.*`), whichever host wrote them, and those of any
/// writer that has ended. Another run of the same job at the same time is not supported (Slurm
/// runs an array task once at a time).
fn remove_leftovers(dir: &Path, job: usize) -> CliResult<()> {
    let prefix = format!("job-{job}.");
    for folder in [dir.join(RESULTS_DIR), dir.join(OUTPUTS_DIR)] {
        dspk_io::durable::remove_leftovers(&folder, |target| target.starts_with(&prefix))?;
    }
    Ok(())
}

/// The job number: `--job`, else `$SLURM_ARRAY_TASK_ID`.
fn job_number(given: Option<usize>) -> CliResult<usize> {
    if let Some(n) = given {
        return Ok(n);
    }
    match std::env::var(ARRAY_TASK_ENV) {
        Ok(text) => text.trim().parse().map_err(|_| {
            CliError::new(format!(
                "{ARRAY_TASK_ENV}={text:?} is not a job number (0, 1, 2…)"
            ))
        }),
        Err(_) => Err(CliError::new(format!(
            "which job? give --job N, or run as a Slurm array task ({ARRAY_TASK_ENV} is not set)"
        ))),
    }
}

/// Runs `dspk run`.
pub(crate) fn run(ctx: &Ctx, opts: &RunOptions) -> CliResult<String> {
    let started = SystemTime::now();
    let clock = Instant::now();
    let n = job_number(opts.job)?;
    let plan = Plan::load(&opts.dir)?;
    let job = plan.job(n)?.clone();
    let base = opts.base.clone().unwrap_or_else(|| plan.base.clone());
    remove_leftovers(&opts.dir, n)?;
    let result_file = result_path(&opts.dir, n);
    let failure_file = failure_path(&opts.dir, n);
    let path = plan.recording_path(&job, Some(&base));
    if !opts.force
        && let Some(why) = done_already(&plan, &job, &result_file, path.as_deref(), &base)?
    {
        if ctx.json {
            let value = json!({"job": n, "recording": job.label(), "skipped": why,
                "result": result_file.display().to_string()});
            return Ok(scan::json_text(&value));
        }
        return Ok(format!(
            "job {n} ({}): done already: {why} ({}); --force runs it again\n",
            job.label(),
            result_file.display()
        ));
    }
    let environment: BTreeMap<String, String> = SLURM_ENV
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
        .collect();
    let mut provenance = Provenance {
        dspk_version: env!("CARGO_PKG_VERSION").to_string(),
        command: std::env::args().collect(),
        host: host_name(),
        runtime: None,
        device: None,
        device_choice: String::new(),
        environment,
        inputs: Vec::new(),
        outputs: Vec::new(),
        started_unix_s: unix_seconds(started),
        finished_unix_s: 0.0,
        open_s: 0.0,
        wall_s: 0.0,
    };
    let outcome = run_job(
        ctx,
        &plan,
        &job,
        &JobPaths {
            recording: path.as_deref(),
            base: &base,
            dir: &opts.dir,
        },
        &mut provenance,
        clock,
    );
    provenance.finished_unix_s = unix_seconds(SystemTime::now());
    provenance.wall_s = clock.elapsed().as_secs_f64();
    let mut record = JobRecord {
        result: None,
        format: RESULT_FORMAT.to_string(),
        job: job.clone(),
        command: plan.command,
        options: plan.options.clone(),
        error: None,
        provenance,
    };
    match outcome {
        Ok(result) => {
            let (runtime, device) = result.runtime_and_device();
            record.provenance.runtime = runtime;
            record.provenance.device = device;
            record.result = Some(result);
            let text = record.to_text();
            dspk_io::durable::write_file(&result_file, text.as_bytes())?;
            let _ = std::fs::remove_file(&failure_file);
            if ctx.json {
                return Ok(text);
            }
            Ok(format!(
                "job {n} ({}): {} done in {:.3} s on {}: {}\n",
                job.label(),
                plan.command.name(),
                record.provenance.wall_s,
                record.provenance.device.as_deref().unwrap_or("?"),
                result_file.display()
            ))
        }
        Err(e) => {
            record.error = Some(e.to_string());
            dspk_io::durable::write_file(&failure_file, record.to_text().as_bytes())?;
            // An earlier result no longer stands: the job ran again (its inputs changed, or
            // --force) and failed.
            let _ = std::fs::remove_file(&result_file);
            Err(e.context(format!("job {n} ({})", job.label())))
        }
    }
}

/// Why `job` needs no run (its result is there, for this job, options and unchanged
/// inputs), or `None`.
fn done_already(
    plan: &Plan,
    job: &Job,
    result_file: &Path,
    path: Option<&Path>,
    base: &Path,
) -> CliResult<Option<String>> {
    let record = match read_record(result_file) {
        Ok(Some(r)) => r,
        // A record of another dspk, or none: run.
        Ok(None) | Err(_) => return Ok(None),
    };
    if record.job != *job
        || record.command != plan.command
        || record.options != plan.options
        || record.result.is_none()
    {
        return Ok(None);
    }
    let now = match path {
        Some(p) => input_files(p, base).unwrap_or_default(),
        None => Vec::new(),
    };
    if now != record.provenance.inputs {
        return Ok(None);
    }
    if record
        .provenance
        .outputs
        .iter()
        .any(|o| !plan_dir_of(result_file).join(o).is_file())
    {
        return Ok(None);
    }
    Ok(Some(format!(
        "its result is there and its {} input files are unchanged",
        now.len()
    )))
}

/// The plan folder of a result file (`DIR/results/job-N.json` → `DIR`).
fn plan_dir_of(result_file: &Path) -> PathBuf {
    result_file
        .parent()
        .and_then(Path::parent)
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Where a job's files are on this machine.
struct JobPaths<'a> {
    /// The recording (`None`: the built-in synthetic one).
    recording: Option<&'a Path>,
    /// The base its path, and the probe's, are relative to.
    base: &'a Path,
    /// The plan's folder.
    dir: &'a Path,
}

/// The job's pass: what its command computed.
fn run_job(
    ctx: &Ctx,
    plan: &Plan,
    job: &Job,
    paths: &JobPaths<'_>,
    provenance: &mut Provenance,
    clock: Instant,
) -> CliResult<JobResult> {
    if let Some(p) = paths.recording {
        provenance.inputs = input_files(p, paths.base)?;
    }
    let device = JobDevice::choose(ctx)?;
    provenance.device_choice = device.reason.clone();
    let rate = plan.options.rate.as_ref().map(|r| *r.value());
    let probe = plan.probe_path(Some(paths.base));
    let time = TimeOptions {
        start: Some(TimeSpec::Samples(job.start_sample)),
        end: Some(TimeSpec::Samples(job.end_sample)),
        duration: None,
    };
    match plan.command {
        JobCommand::Scan => {
            let input = open_input(job, paths.recording, probe.as_deref(), rate)?;
            provenance.open_s = clock.elapsed().as_secs_f64();
            let opts = scan::ScanOptions {
                time,
                window_samples: plan.options.window_samples,
                mask: None,
                table: false,
                page: Default::default(),
            };
            let checked = scan::check(&input, &opts)?;
            let (target, devices, _prepared) = device.open(ctx)?;
            let report = scan::scan_checked(&input, &opts, &checked, target, &devices)?;
            Ok(JobResult::Scan(Box::new(report)))
        }
        JobCommand::Convert => {
            let Some(p) = paths.recording else {
                return Err(CliError::new(
                    "convert jobs need a recording file: the built-in synthetic recording is \
                     scanned only",
                ));
            };
            let outputs = paths.dir.join(OUTPUTS_DIR);
            std::fs::create_dir_all(&outputs)
                .map_err(|e| CliError::new(format!("{}: cannot create: {e}", outputs.display())))?;
            let name = format!("job-{}.bin", job.job);
            let opts = convert::ConvertOptions {
                time,
                channels: plan.options.channels.as_ref().map(|c| c.value().clone()),
                map: None,
                output: outputs.join(&name),
                order: plan.options.order.unwrap_or(MemoryOrder::TimeMajor),
                window_samples: plan.options.window_samples,
            };
            provenance.open_s = clock.elapsed().as_secs_f64();
            let input = Input::open(Some(p), None, job.stream.as_deref())?
                .with_probe(probe.as_deref())?
                .with_rate(rate)?;
            let job_ctx = Ctx {
                json: true,
                runtime: ctx.runtime.clone(),
                devices: ctx.devices.clone(),
            };
            // On the job's device, as scan jobs are.
            let text = convert::run_on(&job_ctx, input, &opts, || {
                let (target, devices, _prepared) = device.open(ctx)?;
                let client = devices
                    .into_iter()
                    .next()
                    .map(|d| d.client)
                    .ok_or_else(|| CliError::new("the job's device did not open"))?;
                Ok((target, client))
            })?;
            // Convert prints its JSON; it has no report type yet.
            let value: Value = serde_json::from_str(&text).map_err(|e| {
                CliError::new(format!(
                    "the {} JSON did not parse: {e}",
                    plan.command.name()
                ))
            })?;
            provenance.outputs = vec![
                format!("{OUTPUTS_DIR}/{name}"),
                format!("{OUTPUTS_DIR}/{name}.json"),
            ];
            Ok(JobResult::Convert(value))
        }
        JobCommand::Preprocess => {
            let input = open_input(job, paths.recording, probe.as_deref(), rate)?;
            provenance.open_s = clock.elapsed().as_secs_f64();
            let (target, devices, _prepared) = device.open(ctx)?;
            let part = preprocess::run_part(plan, job, paths.dir, &input, target, &devices)?;
            provenance.outputs = vec![part.output.clone(), format!("{}.json", part.output)];
            Ok(JobResult::Preprocess(Box::new(part)))
        }
        JobCommand::Detect => {
            let input = open_input(job, paths.recording, probe.as_deref(), rate)?;
            provenance.open_s = clock.elapsed().as_secs_f64();
            let (target, devices, _prepared) = device.open(ctx)?;
            let part = detect::run_part(plan, job, paths.dir, &input, target, &devices)?;
            provenance.outputs = vec![part.output.clone()];
            Ok(JobResult::Detect(Box::new(part)))
        }
    }
}

/// The job's recording (the built-in synthetic one where it has no path), with the plan's
/// probe and rate.
fn open_input(
    job: &Job,
    recording: Option<&Path>,
    probe: Option<&Path>,
    rate: Option<RateChoice>,
) -> CliResult<Input> {
    match recording {
        Some(p) => Input::open(Some(p), None, job.stream.as_deref())?,
        None => {
            let samples = job.synthetic_samples.ok_or_else(|| {
                CliError::new("the plan's job has neither a recording nor a length")
            })?;
            Input::synthetic(Some(TimeSpec::Samples(samples)))?
        }
    }
    .with_probe(probe)?
    .with_rate(rate)
}

/// Seconds since 1970.
fn unix_seconds(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// This machine's name (Linux: the kernel's; else `$HOSTNAME`; else `unknown-host`).
pub(crate) fn host_name() -> String {
    dspk_io::durable::host_name()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".to_string())
}

/// The device a job runs on, and why.
struct JobDevice {
    /// The device chosen from the job's environment, with the catalog it was chosen from;
    /// `None`: the program's own choice (`--devices`, `DSPK_DEVICES`, the default device).
    chosen: Option<(Catalog, usize, ComputeTarget)>,
    /// Why, for the provenance.
    reason: String,
}

impl JobDevice {
    /// `--devices`/`DSPK_DEVICES` where given, else one GPU chosen from the job's Slurm
    /// environment (dspk-device's [`worker_device`]), as `dspk devices` numbers it.
    fn choose(ctx: &Ctx) -> CliResult<Self> {
        let given = |reason: String| Self {
            chosen: None,
            reason,
        };
        if let Some(given_devices) = &ctx.devices {
            return Ok(given(format!("--devices {given_devices}")));
        }
        if let Ok(text) = std::env::var(dspk_device::DEVICES_ENV) {
            return Ok(given(format!("{}={text}", dspk_device::DEVICES_ENV)));
        }
        let place = SlurmPlace::from_env().map_err(|e| CliError::new(e.to_string()))?;
        if place.is_empty() {
            return Ok(given(
                "the runtime's default device (not a Slurm job)".to_string(),
            ));
        }
        let target = ctx.target()?;
        let catalog = Catalog::list();
        let gpus: Vec<usize> = catalog
            .devices()
            .filter(|d| d.info.runtime == target && d.info.kind != DeviceKind::Software)
            .map(|d| d.index)
            .collect();
        let choice = worker_device(&Worker::Slurm(place), target, &gpus)
            .map_err(|e| CliError::new(e.to_string()))?;
        Ok(Self {
            chosen: choice.index.map(|i| (catalog, i, target)),
            reason: choice.reason,
        })
    }

    /// Opens the device (its pass kernels compiling from the moment it opens).
    fn open(self, ctx: &Ctx) -> CliResult<(ComputeTarget, Vec<PassDevice>, Vec<Prepared>)> {
        let Some((catalog, index, target)) = self.chosen else {
            return ctx.pass_devices();
        };
        let (devices, prepared) =
            open_pass_devices(&catalog, &DeviceChoice::Listed(vec![index]), Some(target))
                .context(self.reason)?;
        Ok((target, devices, prepared))
    }
}

#[cfg(test)]
mod tests;
