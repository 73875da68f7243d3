//! `dspk plan`: the job list of a cluster run (one job per recording, stream and segment),
//! written as JSON with paths relative to a base folder, and a ready `sbatch --array` script.

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::Ctx;
use crate::error::{CliError, CliResult, Context as _};
use crate::input::{Input, RATE_FLAG, window_option};
use dspk_types::{ChannelList, RateChoice, TimeSpec};

/// The `format` of a plan file; a plan of another format is refused by name.
pub(crate) const PLAN_FORMAT: &str = "dspk-plan/1";

/// The plan's file in its folder.
pub(crate) const PLAN_FILE: &str = "plan.json";

/// The folder of result records in a plan's folder.
pub(crate) const RESULTS_DIR: &str = "results";

/// The folder of converted files in a plan's folder.
pub(crate) const OUTPUTS_DIR: &str = "outputs";

/// The job array script `dspk plan` writes beside the plan.
pub(crate) const SBATCH_FILE: &str = "array.sbatch";

/// What every job of a plan runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum JobCommand {
    /// `dspk scan`: statistics, dead and noisy channels.
    Scan,
    /// `dspk convert`: float32 µV raw binary + sidecar, into the plan's `outputs/`.
    Convert,
}

impl JobCommand {
    /// `scan` or `convert`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            JobCommand::Scan => "scan",
            JobCommand::Convert => "convert",
        }
    }
}

/// The options every job of a plan shares, as written on `dspk plan`'s command line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct JobOptions {
    /// Samples per window (`--window-samples`).
    pub(crate) window_samples: Option<u64>,
    /// The rate to read recordings at (`--rate`), as written.
    pub(crate) rate: Option<String>,
    /// Convert only: the channels to keep (`--channels`), as written.
    pub(crate) channels: Option<String>,
    /// Convert only: `time-major` or `channel-major`.
    pub(crate) order: Option<String>,
}

/// One job: a part of one recording (a segment, or a piece of one cut by `--chunk`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Job {
    /// Its number, `0..jobs`: the `--job` of `dspk run` and the array index.
    pub(crate) job: usize,
    /// The recording's path relative to the plan's base, with `/` separators; `None` for the
    /// built-in synthetic recording.
    pub(crate) recording: Option<String>,
    /// The Open Ephys stream read (by folder name), where the recording has several: a job
    /// per stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) stream: Option<String>,
    /// The built-in synthetic recording's length in samples, when that is the recording.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) synthetic_samples: Option<u64>,
    /// Which part of the recording (of its stream) this is, from 0: its segments in order,
    /// each cut into pieces by `--chunk` (plans before the field was renamed call it
    /// `segment`).
    #[serde(alias = "segment")]
    pub(crate) part: usize,
    /// How many parts the recording (its stream) is cut into.
    #[serde(alias = "segments")]
    pub(crate) parts: usize,
    /// First sample of the part.
    pub(crate) start_sample: u64,
    /// One past its last sample.
    pub(crate) end_sample: u64,
    /// The bytes the job reads.
    pub(crate) stored_bytes: u64,
}

impl Job {
    /// `a/run.ap.bin [2/4]`, `oe/experiment1 stream ProbeA-AP [1/2]` or `built-in synthetic
    /// recording [1/1]`.
    pub(crate) fn label(&self) -> String {
        format!(
            "{}{} [{}/{}]",
            self.recording
                .as_deref()
                .unwrap_or("built-in synthetic recording"),
            self.stream
                .as_deref()
                .map_or_else(String::new, |s| format!(" stream {s}")),
            self.part + 1,
            self.parts
        )
    }
}

/// A plan: every job of a cluster run, and where its recordings are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Plan {
    /// [`PLAN_FORMAT`].
    pub(crate) format: String,
    /// The dspk that wrote it.
    pub(crate) dspk_version: String,
    /// The folder the recordings' paths are relative to (`dspk run --base` replaces it where
    /// the data is mounted elsewhere).
    pub(crate) base: PathBuf,
    /// What every job runs.
    pub(crate) command: JobCommand,
    /// The options every job shares.
    pub(crate) options: JobOptions,
    /// The jobs, numbered from 0.
    pub(crate) jobs: Vec<Job>,
}

impl Plan {
    /// Reads `dir/plan.json`.
    pub(crate) fn load(dir: &Path) -> CliResult<Self> {
        let path = dir.join(PLAN_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            CliError::new(format!(
                "{}: cannot read the plan ({e}): `dspk plan REC… --out {}` writes it",
                path.display(),
                dir.display()
            ))
        })?;
        let plan: Plan = serde_json::from_str(&text)
            .map_err(|e| CliError::new(format!("{}: not a dspk plan: {e}", path.display())))?;
        if plan.format != PLAN_FORMAT {
            return Err(CliError::new(format!(
                "{}: a plan of format '{}', this dspk reads '{PLAN_FORMAT}'",
                path.display(),
                plan.format
            )));
        }
        for (i, job) in plan.jobs.iter().enumerate() {
            if job.job != i {
                return Err(CliError::new(format!(
                    "{}: job {i} is numbered {}: jobs are numbered 0, 1, 2… in order",
                    path.display(),
                    job.job
                )));
            }
        }
        Ok(plan)
    }

    /// The job numbered `n`.
    pub(crate) fn job(&self, n: usize) -> CliResult<&Job> {
        self.jobs.get(n).ok_or_else(|| {
            CliError::new(format!(
                "job {n} is not in the plan: it has {} jobs, 0 to {}",
                self.jobs.len(),
                self.jobs.len().saturating_sub(1)
            ))
        })
    }

    /// A recording's path on this machine: `base` (or the plan's base) joined with its
    /// relative path.
    pub(crate) fn recording_path(&self, job: &Job, base: Option<&Path>) -> Option<PathBuf> {
        let base = base.unwrap_or(&self.base);
        job.recording.as_ref().map(|rel| base.join(rel))
    }
}

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
    /// Their shared options.
    pub(crate) options: JobOptions,
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
    window_option(opts.options.window_samples)?;
    if let Some(channels) = &opts.options.channels {
        ChannelList::parse(channels).context("--channels")?;
    }
    let rate = opts
        .options
        .rate
        .as_ref()
        .map(|t| RateChoice::parse(t).context(RATE_FLAG))
        .transpose()?;
    let cwd = std::env::current_dir()
        .map_err(|e| CliError::new(format!("cannot read the current directory: {e}")))?;
    let base = absolute(&cwd, opts.base.as_deref().unwrap_or(Path::new(".")));
    let base = std::fs::canonicalize(&base)
        .map_err(|e| CliError::new(format!("--base {}: {e}", base.display())))?;
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
            });
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
            let input = Input::open(Some(path), None, stream.as_deref())?.with_rate(rate)?;
            add(Some(rel.clone()), stream, None, &input)?;
        }
    }
    if let Some(length) = opts.synthetic {
        let input = Input::synthetic(Some(length))?.with_rate(rate)?;
        let samples = input.info().samples;
        add(None, None, Some(samples), &input)?;
    }
    let plan = Plan {
        format: PLAN_FORMAT.to_string(),
        dspk_version: env!("CARGO_PKG_VERSION").to_string(),
        base,
        command: opts.command,
        options: opts.options.clone(),
        jobs,
    };
    write_plan(&opts.out, &plan)?;
    let script = opts.out.join(SBATCH_FILE);
    let last = plan.jobs.len() - 1;
    if ctx.json {
        let value = json!({
            "plan": opts.out.join(PLAN_FILE).display().to_string(),
            "sbatch": script.display().to_string(),
            "jobs": plan.jobs.len(),
            "array": format!("0-{last}"),
            "base": plan.base.display().to_string(),
            "command": plan.command,
        });
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
        let results = crate::run::result_files(dir);
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
