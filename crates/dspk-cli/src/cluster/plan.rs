//! `dspk plan`: the job list of a cluster run (one job per recording, stream and segment),
//! written as JSON with paths relative to a base folder, and a ready `sbatch --array` script;
//! for a preprocess plan, the pipeline fitted here once per recording; for a detect plan, the
//! pipeline and the noise levels.

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use dspk_stream::DetectSpec;
use dspk_types::{MemoryOrder, OutputType, PipelineSpec, TimeSpec};
use serde_json::json;

use super::detect::{DETECT_DIR, PlannedDetect, PlannedTable};
use super::plan_file::{
    Job, JobCommand, JobOptions, PLAN_FILE, PLAN_FORMAT, Plan, RESULTS_DIR, SBATCH_FILE, Written,
    result_files,
};
use super::preprocess::{PREPROCESS_DIR, PlannedOutput, PlannedPipeline};
use crate::Ctx;
use crate::error::{CliError, CliResult, Context as _};
use crate::input::{Input, RATE_FLAG, window_option};

/// The options of `dspk plan` after parsing.
#[derive(Debug, Clone)]
pub(crate) struct PlanOptions {
    /// The recordings.
    pub(crate) recordings: Vec<PathBuf>,
    /// The plan's folder.
    pub(crate) out: PathBuf,
    /// The folder paths are relative to (default: the current directory).
    pub(crate) base: Option<PathBuf>,
    /// The length of each chunk (default: a whole segment of the recording).
    pub(crate) chunk: Option<TimeSpec>,
    /// The built-in synthetic recording of this length is planned too.
    pub(crate) synthetic: Option<TimeSpec>,
    /// The Open Ephys stream to plan (`--stream`; default: every stream of each recording).
    pub(crate) stream: Option<String>,
    /// What the jobs run.
    pub(crate) command: JobCommand,
    /// Samples per window (`--window-samples`).
    pub(crate) window_samples: Option<u64>,
    /// The rate to read recordings at (`--rate`), as written.
    pub(crate) rate: Option<String>,
    /// Convert only: the channels to keep (`--channels`), as written.
    pub(crate) channels: Option<String>,
    /// Convert only: `time-major` or `channel-major`.
    pub(crate) order: Option<String>,
    /// A probeinterface JSON to attach to every recording (`--probe`).
    pub(crate) probe: Option<PathBuf>,
    /// Preprocess: the pipeline (`--preprocess`, a preset's name or a spec file); detect: the
    /// pipeline run first (`--pipeline`; `none` or absent: the recording as it is).
    pub(crate) pipeline: Option<String>,
    /// Detect only: the detector's parameters.
    pub(crate) detect: Option<DetectSpec>,
    /// Preprocess only: the output's sample type (`--format`).
    pub(crate) format: Option<OutputType>,
    /// Preprocess only: the output's gain (`--gain`).
    pub(crate) gain: Option<f64>,
}

/// Runs `dspk plan`: opens every recording (a bad one is reported before anything is
/// written), cuts each into segments, writes `plan.json`, `results/` and `array.sbatch`.
pub(crate) fn run(ctx: &Ctx, opts: &PlanOptions) -> CliResult<String> {
    if opts.recordings.is_empty() && opts.synthetic.is_none() {
        return Err(CliError::new(
            "nothing to plan: give recordings (REC…) or --synthetic-duration T for the built-in \
             one",
        ));
    }
    if opts.stream.is_some() && opts.synthetic.is_some() {
        return Err(CliError::new(
            "--stream chooses Open Ephys streams; the built-in synthetic recording has none",
        ));
    }
    window_option(opts.window_samples)?;
    let preprocess = opts.command == JobCommand::Preprocess;
    let detect = opts.command == JobCommand::Detect;
    if opts.order.is_some() && !matches!(opts.command, JobCommand::Convert | JobCommand::Preprocess)
    {
        return Err(CliError::new(
            "--order is the layout of output files: it applies to --convert and --preprocess \
             plans",
        ));
    }
    let pipeline = match (&opts.pipeline, preprocess) {
        (Some(choice), true) => Some(PlannedPipeline(
            PipelineSpec::choose(choice)
                .context("--preprocess")?
                .with_output(opts.format, opts.gain)
                .context("--format/--gain")?,
        )),
        (None, true) => return Err(CliError::new("a preprocess plan needs --preprocess SPEC")),
        (Some(choice), false) if detect && choice != "none" => Some(PlannedPipeline(
            PipelineSpec::choose(choice).context("--pipeline")?,
        )),
        (_, false) if detect => Some(PlannedPipeline(PipelineSpec::default())),
        (_, false) => None,
    };
    let detector = match (opts.detect, detect) {
        (Some(spec), true) => Some(PlannedDetect::try_from(spec)?),
        (None, true) => Some(PlannedDetect::try_from(DetectSpec::default())?),
        (_, false) => None,
    };
    let channels = opts
        .channels
        .as_deref()
        .map(Written::parse)
        .transpose()
        .context("--channels")?;
    let rate = opts
        .rate
        .as_deref()
        .map(Written::parse)
        .transpose()
        .context(RATE_FLAG)?;
    let cwd = std::env::current_dir()
        .map_err(|e| CliError::new(format!("cannot read the current directory: {e}")))?;
    let base = absolute(&cwd, opts.base.as_deref().unwrap_or(Path::new(".")));
    let base = std::fs::canonicalize(&base)
        .map_err(|e| CliError::new(format!("--base {}: {e}", base.display())))?;
    // The probe file as the jobs find it: relative to the base where it is inside it (so
    // that `dspk run --base` moves it with the recordings), else absolute.
    let probe = opts.probe.as_deref().map(|p| {
        let full = absolute(&cwd, p);
        relative_to(&base, &full).unwrap_or_else(|_| full.display().to_string())
    });
    let options = JobOptions {
        window_samples: opts.window_samples,
        rate,
        channels,
        order: opts.order.as_deref().map(|o| match o {
            "channel-major" => MemoryOrder::ChannelMajor,
            _ => MemoryOrder::TimeMajor,
        }),
        probe,
        pipeline,
        detect: detector,
    };
    let rate = options.rate.as_ref().map(|r| *r.value());
    let order = options.order.unwrap_or(MemoryOrder::TimeMajor);
    // The fit runs here, once per recording, on this machine's devices: every job applies it.
    let fit_devices = if preprocess || detect {
        Some(ctx.pass_devices()?)
    } else {
        None
    };
    let mut planned: Vec<PlannedOutput> = Vec::new();
    let mut tables: Vec<PlannedTable> = Vec::new();
    let mut jobs = Vec::new();
    let mut add = |recording: Option<String>,
                   stream: Option<String>,
                   synthetic: Option<u64>,
                   input: &Input| {
        let info = input.info();
        let segment = opts
            .chunk
            .map(|t| t.to_sample_index(info.sample_rate))
            .transpose()
            .context("--chunk")?;
        // Every segment of the recording its own job or jobs: a job never spans a gap.
        let mut ranges = Vec::new();
        for seg in info.segments().ranges().filter(|r| !r.is_empty()) {
            for r in segments(seg.end - seg.start, segment).map_err(|e| e.context(input.label()))? {
                ranges.push(seg.start + r.start..seg.start + r.end);
            }
        }
        if ranges.is_empty() {
            return Err(CliError::new(format!(
                "{}: the recording has no samples",
                input.label()
            )));
        }
        let count = ranges.len();
        let output = (preprocess || detect).then_some(planned.len() + tables.len());
        let first = jobs.len();
        for (i, r) in ranges.into_iter().enumerate() {
            jobs.push(Job {
                job: jobs.len(),
                recording: recording.clone(),
                stream: stream.clone(),
                synthetic_samples: synthetic,
                part: i,
                parts: count,
                stored_bytes: (r.end - r.start).saturating_mul(info.frame_bytes() as u64),
                start_sample: r.start,
                end_sample: r.end,
                output,
            });
        }
        if let (Some(output), Some((_, devices, _)), Some(spec)) =
            (output, &fit_devices, &options.pipeline)
        {
            let numbers = (first..jobs.len()).collect();
            if detect {
                tables.push(PlannedTable::fit(devices, input, &spec.0, output, numbers)?);
            } else {
                planned.push(PlannedOutput::fit(
                    devices, input, &spec.0, order, output, numbers,
                )?);
            }
        }
        Ok::<(), CliError>(())
    };
    for path in &opts.recordings {
        let rel = relative_to(&base, &absolute(&cwd, path)).map_err(|e| {
            e.context(format!(
                "{} is not inside --base {}",
                path.display(),
                base.display()
            ))
        })?;
        // An Open Ephys recording of several streams: a job (or jobs) per stream, unless
        // --stream chose one.
        let streams = match &opts.stream {
            Some(name) => vec![Some(name.clone())],
            None => match dspk_io::openephys_streams(path)? {
                names if names.len() > 1 => names.into_iter().map(Some).collect(),
                _ => vec![None],
            },
        };
        for stream in streams {
            let input = Input::open(Some(path), None, stream.as_deref())?
                .with_probe(opts.probe.as_deref())?
                .with_rate(rate)?;
            add(Some(rel.clone()), stream, None, &input)?;
        }
    }
    if let Some(length) = opts.synthetic {
        let input = Input::synthetic(Some(length))?
            .with_probe(opts.probe.as_deref())?
            .with_rate(rate)?;
        let samples = input.info().samples;
        add(None, None, Some(samples), &input)?;
    }
    let plan = Plan {
        format: PLAN_FORMAT.to_string(),
        dspk_version: env!("CARGO_PKG_VERSION").to_string(),
        base,
        command: opts.command,
        options,
        jobs,
    };
    write_plan(&opts.out, &plan)?;
    for (k, p) in planned.iter().enumerate() {
        p.write(&opts.out, k)?;
    }
    for (k, t) in tables.iter().enumerate() {
        t.write(&opts.out, k)?;
    }
    let script = opts.out.join(SBATCH_FILE);
    let last = plan.jobs.len() - 1;
    if ctx.json {
        let mut value = json!({
            "plan": opts.out.join(PLAN_FILE).display().to_string(),
            "sbatch": script.display().to_string(),
            "jobs": plan.jobs.len(),
            "array": format!("0-{last}"),
            "base": plan.base.display().to_string(),
            "command": plan.command,
        });
        if preprocess || detect {
            // Outputs fitted (`preprocess/rec-K.json`, `detect/rec-K.json`); other plans print
            // what they always did.
            value["fitted"] = json!(planned.len() + tables.len());
        }
        return Ok(serde_json::to_string_pretty(&value).expect("json values serialise") + "\n");
    }
    let mut out = String::new();
    let recordings = opts.recordings.len() + usize::from(opts.synthetic.is_some());
    let _ = writeln!(
        out,
        "planned {} {} jobs over {recordings} recordings in {}",
        plan.jobs.len(),
        plan.command.name(),
        opts.out.join(PLAN_FILE).display()
    );
    for job in &plan.jobs {
        let _ = writeln!(
            out,
            "  job {:>3}: {} samples {}..{}",
            job.job,
            job.label(),
            job.start_sample,
            job.end_sample
        );
    }
    if !planned.is_empty() {
        let _ = writeln!(
            out,
            "fitted the pipeline once per recording ({} outputs, parameters in {}/rec-K.json): \
             each job applies them to its part, `dspk gather {}` assembles outputs/rec-K.bin",
            planned.len(),
            opts.out.join(PREPROCESS_DIR).display(),
            opts.out.display()
        );
    }
    if !tables.is_empty() {
        let _ = writeln!(
            out,
            "fitted the pipeline and the noise levels once per recording ({} tables, in \
             {}/rec-K.json): each job detects in its part, `dspk gather {}` concatenates \
             outputs/rec-K.npy",
            tables.len(),
            opts.out.join(DETECT_DIR).display(),
            opts.out.display()
        );
    }
    let _ = writeln!(
        out,
        "submit: sbatch --array=0-{last} {} (or run each: dspk run {} --job N)",
        script.display(),
        opts.out.display()
    );
    Ok(out)
}

/// `0..total` cut into pieces of `length` samples (the last shorter); one piece without a
/// length.
pub(crate) fn segments(total: u64, length: Option<u64>) -> CliResult<Vec<std::ops::Range<u64>>> {
    if total == 0 {
        return Err(CliError::new("the recording has no samples"));
    }
    let length = match length {
        None => return Ok(std::iter::once(0..total).collect()),
        Some(0) => {
            return Err(CliError::new(
                "--chunk is shorter than one sample: a job would be empty",
            ));
        }
        Some(n) => n,
    };
    let mut out = Vec::new();
    let mut start = 0;
    while start < total {
        let end = start.saturating_add(length).min(total);
        out.push(start..end);
        start = end;
    }
    Ok(out)
}

/// Writes the plan, its results folder and its job array script; an existing plan with
/// results is replaced only by the same plan, so that results never describe another plan.
fn write_plan(dir: &Path, plan: &Plan) -> CliResult<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(CliError::new(format!(
            "--out {}: is a file; the plan is a folder",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir.join(RESULTS_DIR))
        .map_err(|e| CliError::new(format!("--out {}: cannot create: {e}", dir.display())))?;
    if let Ok(old) = Plan::load(dir)
        && (old.jobs != plan.jobs || old.command != plan.command || old.options != plan.options)
    {
        let results = result_files(dir);
        if results > 0 {
            return Err(CliError::new(format!(
                "--out {}: holds another plan with {results} results: choose another folder \
                 (or remove it)",
                dir.display()
            )));
        }
    }
    let text = serde_json::to_string_pretty(plan).expect("a plan serialises") + "\n";
    dspk_io::durable::write_file(dir.join(PLAN_FILE), text.as_bytes())?;
    let script = sbatch_script(dir, plan)?;
    Ok(dspk_io::durable::write_file(
        dir.join(SBATCH_FILE),
        script.as_bytes(),
    )?)
}

/// The job array script: one array task per job, each `dspk run DIR --job
/// $SLURM_ARRAY_TASK_ID` with this very program.
fn sbatch_script(dir: &Path, plan: &Plan) -> CliResult<String> {
    let exe = std::env::current_exe()
        .map_err(|e| CliError::new(format!("cannot find this program's path: {e}")))?;
    let cwd = std::env::current_dir()
        .map_err(|e| CliError::new(format!("cannot read the current directory: {e}")))?;
    let dir = absolute(&cwd, dir);
    let last = plan.jobs.len() - 1;
    Ok(format!(
        "#!/bin/bash\n\
         # Written by `dspk plan`: one array task per job of {plan}.\n\
         # Submit: sbatch {script}   (a part: sbatch --array=3,5 {script})\n\
         #SBATCH --job-name=dspk-{command}\n\
         #SBATCH --array=0-{last}\n\
         #SBATCH --ntasks=1\n\
         #SBATCH --cpus-per-task=1\n\
         #SBATCH --output={logs}/job-%a.log\n\
         # On GPU nodes add: #SBATCH --gres=gpu:1 (dspk picks the GPU Slurm allocates).\n\
         exec {exe} run {dir} --job \"$SLURM_ARRAY_TASK_ID\"\n",
        plan = shell_word(&dir.join(PLAN_FILE)),
        script = shell_word(&dir.join(SBATCH_FILE)),
        command = plan.command.name(),
        logs = dir.join(RESULTS_DIR).display(),
        exe = shell_word(&exe),
        dir = shell_word(&dir),
    ))
}

/// `path` quoted for a shell where it needs it.
fn shell_word(path: &Path) -> String {
    let text = path.display().to_string();
    if text
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+:=@".contains(&b))
    {
        text
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// `path` made absolute against `cwd`, `.` and `..` resolved by name.
pub(crate) fn absolute(cwd: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` relative to `base` with `/` separators; the path's folder is resolved through
/// symbolic links (as the base is), the file name kept as given.
pub(crate) fn relative_to(base: &Path, path: &Path) -> CliResult<String> {
    let (folder, name) = match (path.parent(), path.file_name()) {
        (Some(folder), Some(name)) => (folder, name),
        _ => return Err(CliError::new("the path has no file name")),
    };
    let folder = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
    let rel = folder
        .join(name)
        .strip_prefix(base)
        .map(Path::to_path_buf)
        .map_err(|_| CliError::new("paths in a plan are relative to the base"))?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests;
