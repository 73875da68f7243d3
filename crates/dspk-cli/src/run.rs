//! `dspk run DIR --job N`: one job of a plan (an array task), its result written atomically
//! with a provenance record; a finished job is skipped, a failed one leaves its error.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{CliError, CliResult, Context as _};
use crate::input::{Input, TimeOptions};
use crate::plan::{JobCommand, JobOptions, OUTPUTS_DIR, Plan, RESULTS_DIR};
use crate::{Ctx, convert, scan};
use dspk_types::{ChannelList, RateChoice, TimeSpec};

/// The `format` of a result record.
pub(crate) const RESULT_FORMAT: &str = "dspk-result/1";

/// The variable Slurm sets to an array task's index: `--job`'s default.
pub(crate) const ARRAY_TASK_ENV: &str = "SLURM_ARRAY_TASK_ID";

/// The variables of a job's environment a job's device is chosen from, and that its
/// provenance records.
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

/// One file a job read, as its provenance records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct InputFile {
    /// Relative to the plan's base where it is inside it.
    pub(crate) path: String,
    /// What it is to the recording.
    pub(crate) role: String,
    /// Its size in bytes.
    pub(crate) size: u64,
    /// Its modification time, nanoseconds since 1970.
    pub(crate) modified_ns: u128,
}

/// A job's result record (`results/job-N.json`) or failure record (`job-N.failed.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct JobRecord {
    /// [`RESULT_FORMAT`].
    pub(crate) format: String,
    /// The job as the plan has it.
    pub(crate) job: crate::plan::Job,
    /// What it ran.
    pub(crate) command: JobCommand,
    /// With which options.
    pub(crate) options: JobOptions,
    /// The command's own JSON (`dspk scan --json`, `dspk convert --json`); none on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) result: Option<Value>,
    /// Why it failed; none on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    /// Where, when, on what and from which inputs.
    pub(crate) provenance: Provenance,
}

/// Where a job ran, on what, from which inputs, and how long it took.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Provenance {
    /// The dspk that ran it.
    pub(crate) dspk_version: String,
    /// Its command line.
    pub(crate) command: Vec<String>,
    /// The machine.
    pub(crate) host: String,
    /// The runtime (`wgpu`…), where the job got as far as a device.
    pub(crate) runtime: Option<String>,
    /// The device's name.
    pub(crate) device: Option<String>,
    /// How the device was chosen.
    pub(crate) device_choice: String,
    /// The Slurm variables set (see [`SLURM_ENV`]).
    pub(crate) environment: BTreeMap<String, String>,
    /// The files the recording consists of, with size and modification time.
    pub(crate) inputs: Vec<InputFile>,
    /// Converted files written (convert jobs).
    #[serde(default)]
    pub(crate) outputs: Vec<String>,
    /// When it started, seconds since 1970.
    pub(crate) started_unix_s: f64,
    /// When it ended, seconds since 1970.
    pub(crate) finished_unix_s: f64,
    /// Opening the plan and the recording, seconds.
    pub(crate) open_s: f64,
    /// The whole job, seconds.
    pub(crate) wall_s: f64,
}

/// `results/job-N.json`.
pub(crate) fn result_path(dir: &Path, job: usize) -> PathBuf {
    dir.join(RESULTS_DIR).join(format!("job-{job}.json"))
}

/// `results/job-N.failed.json`.
pub(crate) fn failure_path(dir: &Path, job: usize) -> PathBuf {
    dir.join(RESULTS_DIR).join(format!("job-{job}.failed.json"))
}

/// How many result records `dir/results` holds.
pub(crate) fn result_files(dir: &Path) -> usize {
    std::fs::read_dir(dir.join(RESULTS_DIR)).map_or(0, |entries| {
        entries
            .flatten()
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.starts_with("job-") && name.ends_with(".json")
            })
            .count()
    })
}

/// Reads a result or failure record, `None` when there is none; a record that does not parse
/// is an error naming it (the writes are atomic, so it was not written by a job).
pub(crate) fn read_record(path: &Path) -> CliResult<Option<(JobRecord, String)>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(CliError::new(format!(
                "{}: cannot read: {e}",
                path.display()
            )));
        }
    };
    let record: JobRecord = serde_json::from_str(&text)
        .map_err(|e| CliError::new(format!("{}: not a dspk result record: {e}", path.display())))?;
    if record.format != RESULT_FORMAT {
        return Err(CliError::new(format!(
            "{}: a record of format '{}', this dspk reads '{RESULT_FORMAT}'",
            path.display(),
            record.format
        )));
    }
    Ok(Some((record, text)))
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
            return Ok(serde_json::to_string_pretty(&value).expect("json values serialise") + "\n");
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
        path.as_deref(),
        &base,
        &opts.dir,
        &mut provenance,
        clock,
    );
    provenance.finished_unix_s = unix_seconds(SystemTime::now());
    provenance.wall_s = clock.elapsed().as_secs_f64();
    let mut record = JobRecord {
        format: RESULT_FORMAT.to_string(),
        job: job.clone(),
        command: plan.command,
        options: plan.options.clone(),
        result: None,
        error: None,
        provenance,
    };
    match outcome {
        Ok(raw) => {
            let result: Value = serde_json::from_str(&raw).map_err(|e| {
                CliError::new(format!(
                    "the {} JSON did not parse: {e}",
                    plan.command.name()
                ))
            })?;
            record.provenance.runtime = result["runtime"].as_str().map(str::to_string);
            record.provenance.device = result["device"].as_str().map(str::to_string);
            let without = serde_json::to_string_pretty(&record).expect("a record serialises");
            let text = splice(&without, "result", &raw) + "\n";
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
            let text = serde_json::to_string_pretty(&record).expect("a record serialises") + "\n";
            dspk_io::durable::write_file(&failure_file, text.as_bytes())?;
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
    job: &crate::plan::Job,
    result_file: &Path,
    path: Option<&Path>,
    base: &Path,
) -> CliResult<Option<String>> {
    let record = match read_record(result_file) {
        Ok(Some((r, _))) => r,
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

/// The job's pass: the command's JSON.
#[expect(
    clippy::too_many_arguments,
    reason = "one private call site, each value distinct"
)]
fn run_job(
    ctx: &Ctx,
    plan: &Plan,
    job: &crate::plan::Job,
    path: Option<&Path>,
    base: &Path,
    dir: &Path,
    provenance: &mut Provenance,
    clock: Instant,
) -> CliResult<String> {
    if let Some(p) = path {
        provenance.inputs = input_files(p, base)?;
    }
    let (devices, why) = job_devices(ctx)?;
    provenance.device_choice = why;
    let job_ctx = Ctx {
        json: true,
        runtime: ctx.runtime.clone(),
        devices,
    };
    let rate = plan
        .options
        .rate
        .as_ref()
        .map(|t| RateChoice::parse(t).context("the plan's rate"))
        .transpose()?;
    let time = TimeOptions {
        start: Some(TimeSpec::Samples(job.start_sample)),
        end: Some(TimeSpec::Samples(job.end_sample)),
        duration: None,
    };
    let text = match plan.command {
        JobCommand::Scan => {
            let input = match path {
                Some(p) => Input::open(Some(p), None, job.stream.as_deref())?,
                None => {
                    let samples = job.synthetic_samples.ok_or_else(|| {
                        CliError::new("the plan's job has neither a recording nor a length")
                    })?;
                    Input::synthetic(Some(TimeSpec::Samples(samples)))?
                }
            }
            .with_rate(rate)?;
            provenance.open_s = clock.elapsed().as_secs_f64();
            let opts = scan::ScanOptions {
                time,
                window_samples: plan.options.window_samples,
                mask: None,
                table: false,
            };
            scan::run(&job_ctx, &input, &opts)?
        }
        JobCommand::Convert => {
            let Some(p) = path else {
                return Err(CliError::new(
                    "convert jobs need a recording file: the built-in synthetic recording is \
                     scanned only",
                ));
            };
            let outputs = dir.join(OUTPUTS_DIR);
            std::fs::create_dir_all(&outputs)
                .map_err(|e| CliError::new(format!("{}: cannot create: {e}", outputs.display())))?;
            let name = format!("job-{}.bin", job.job);
            let opts = convert::ConvertOptions {
                time,
                channels: plan
                    .options
                    .channels
                    .as_deref()
                    .map(ChannelList::parse)
                    .transpose()
                    .context("the plan's channels")?,
                map: None,
                output: outputs.join(&name),
                order: match plan.options.order.as_deref() {
                    Some("channel-major") => dspk_types::MemoryOrder::ChannelMajor,
                    _ => dspk_types::MemoryOrder::TimeMajor,
                },
                window_samples: plan.options.window_samples,
            };
            provenance.open_s = clock.elapsed().as_secs_f64();
            let input = Input::open(Some(p), None, job.stream.as_deref())?.with_rate(rate)?;
            let text = convert::run(&job_ctx, input, &opts)?;
            provenance.outputs = vec![
                format!("{OUTPUTS_DIR}/{name}"),
                format!("{OUTPUTS_DIR}/{name}.json"),
            ];
            text
        }
    };
    Ok(text)
}

/// `object` (a JSON object's text) with `"key": raw` as its first member: the command's JSON
/// goes into the record as the command printed it, since a parse and a print of a float may
/// differ from it in the last digit.
pub(crate) fn splice(object: &str, key: &str, raw: &str) -> String {
    let rest = object.strip_prefix('{').unwrap_or(object).trim_start();
    let sep = if rest.starts_with('}') { "" } else { "," };
    format!("{{\n  \"{key}\": {}{sep}\n  {rest}", raw.trim_end())
}

/// The files of the recording at `path`, each with size and modification time.
fn input_files(path: &Path, base: &Path) -> CliResult<Vec<InputFile>> {
    if !path.exists() {
        return Err(CliError::new(format!("{}: no such file", path.display())));
    }
    let files = dspk_io::recording_inputs(path)?;
    files
        .into_iter()
        .map(|(p, role)| {
            let meta = std::fs::metadata(&p)
                .map_err(|e| CliError::new(format!("{}: {e}", p.display())))?;
            let modified_ns = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            let shown = p
                .strip_prefix(base)
                .map_or_else(|_| p.display().to_string(), |r| r.display().to_string());
            Ok(InputFile {
                path: shown,
                role,
                size: meta.len(),
                modified_ns,
            })
        })
        .collect()
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

/// A job's environment as far as its device is concerned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct JobEnv {
    /// `SLURM_LOCALID`: the task's number on its node.
    pub(crate) local_id: Option<usize>,
    /// `SLURM_STEP_GPUS`, else `SLURM_JOB_GPUS`: the node's GPU numbers Slurm allocated.
    pub(crate) gpus: Option<Vec<usize>>,
    /// `GPU_DEVICE_ORDINAL`: the allocated GPUs' numbers among those the job can see.
    pub(crate) ordinals: Option<Vec<usize>>,
}

impl JobEnv {
    /// Read from the process environment (the one place these variables are read).
    fn from_env() -> CliResult<Self> {
        let list = |name: &str| -> CliResult<Option<Vec<usize>>> {
            match std::env::var(name) {
                Ok(text) if !text.trim().is_empty() => parse_list(name, &text).map(Some),
                _ => Ok(None),
            }
        };
        let local_id = match std::env::var("SLURM_LOCALID") {
            Ok(text) => Some(text.trim().parse().map_err(|_| {
                CliError::new(format!("SLURM_LOCALID={text:?} is not a task number"))
            })?),
            Err(_) => None,
        };
        Ok(Self {
            local_id,
            gpus: match list("SLURM_STEP_GPUS")? {
                Some(g) => Some(g),
                None => list("SLURM_JOB_GPUS")?,
            },
            ordinals: list("GPU_DEVICE_ORDINAL")?,
        })
    }

    /// Which of the `visible` GPUs (in dspk's order for the runtime) the job uses, and why:
    ///
    /// - Slurm's GPU numbers (`SLURM_STEP_GPUS`/`SLURM_JOB_GPUS`) when the job sees more GPUs
    ///   than it was given (no device cgroup: every GPU of the node is visible, in the
    ///   node's order); the task takes entry `SLURM_LOCALID` of the list (modulo its length);
    /// - else its position among what it sees: entry `SLURM_LOCALID` of `GPU_DEVICE_ORDINAL`,
    ///   else `SLURM_LOCALID` itself, modulo the GPUs seen (a cgroup that hides the other GPUs
    ///   leaves the job's own as 0, 1…).
    ///
    /// `None` without GPUs or without any of these variables (the runtime's default device).
    pub(crate) fn choose(&self, visible: usize) -> CliResult<Option<(usize, String)>> {
        if visible == 0
            || (self.local_id.is_none() && self.gpus.is_none() && self.ordinals.is_none())
        {
            return Ok(None);
        }
        let local = self.local_id.unwrap_or(0);
        let pick = |list: &[usize], name: &str| -> CliResult<(usize, String)> {
            let at = local % list.len();
            let gpu = list[at];
            if gpu >= visible {
                return Err(CliError::new(format!(
                    "{name} names GPU {gpu}, but this job sees {visible} GPUs (0 to {}): set \
                     --devices or DSPK_DEVICES",
                    visible - 1
                )));
            }
            Ok((
                gpu,
                format!(
                    "entry {at} (SLURM_LOCALID {local}) of {name} {list:?}: GPU {gpu} of {visible}"
                ),
            ))
        };
        if let Some(gpus) = &self.gpus
            && visible > gpus.len()
        {
            return pick(gpus.as_slice(), "SLURM_STEP_GPUS/SLURM_JOB_GPUS").map(Some);
        }
        if let Some(ordinals) = &self.ordinals {
            return pick(ordinals.as_slice(), "GPU_DEVICE_ORDINAL").map(Some);
        }
        let gpu = local % visible;
        Ok(Some((
            gpu,
            format!("SLURM_LOCALID {local} modulo the {visible} GPUs this job sees: GPU {gpu}"),
        )))
    }
}

/// `0,2,3` as numbers.
fn parse_list(name: &str, text: &str) -> CliResult<Vec<usize>> {
    text.split(',')
        .map(|part| {
            part.trim().parse().map_err(|_| {
                CliError::new(format!(
                    "{name}={text:?}: '{part}' is not a GPU number (Slurm writes 0,1,2…)"
                ))
            })
        })
        .collect()
}

/// The `--devices` value a job runs with, and why: `--devices`/`DSPK_DEVICES` where given,
/// else one GPU chosen from the job's environment (`JobEnv::choose`), as `dspk devices`
/// numbers it; `None` is the runtime's default device.
fn job_devices(ctx: &Ctx) -> CliResult<(Option<String>, String)> {
    if let Some(given) = &ctx.devices {
        return Ok((Some(given.clone()), format!("--devices {given}")));
    }
    if let Ok(given) = std::env::var(dspk_device::DEVICES_ENV) {
        return Ok((
            Some(given.clone()),
            format!("{}={given}", dspk_device::DEVICES_ENV),
        ));
    }
    let env = JobEnv::from_env()?;
    if env == JobEnv::default() {
        return Ok((
            None,
            "the runtime's default device (not a Slurm job)".to_string(),
        ));
    }
    let target = ctx.target()?;
    let catalog = dspk_device::Catalog::list();
    let gpus: Vec<usize> = catalog
        .devices()
        .filter(|d| d.info.runtime == target && d.info.kind != dspk_device::DeviceKind::Software)
        .map(|d| d.index)
        .collect();
    match env.choose(gpus.len())? {
        Some((at, why)) => Ok((
            Some(gpus[at].to_string()),
            format!("{why}: dspk device {}", gpus[at]),
        )),
        None => Ok((
            None,
            format!("the runtime's default device ({target} lists no GPU on this machine)"),
        )),
    }
}

#[cfg(test)]
mod tests;
