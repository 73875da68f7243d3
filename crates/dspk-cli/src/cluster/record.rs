//! A job's record (`results/job-N.json`, or `job-N.failed.json`): the job, what it computed as a
//! typed value, and its provenance.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::UNIX_EPOCH;

use dspk_stream::ScanReport;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::detect::DetectPartResult;
use super::plan_file::{Job, JobCommand, JobOptions};
use super::preprocess::PartResult;
use crate::error::{CliError, CliResult};

/// The `format` of a result record.
pub(crate) const RESULT_FORMAT: &str = "dspk-result/1";

/// What a job computed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum JobResult {
    /// A scan's report, as `dspk scan --json` prints it.
    Scan(Box<ScanReport>),
    /// What `dspk convert --json` printed (convert has no report type of its own yet).
    Convert(Value),
    /// A preprocess job's part: its report, and where it ran.
    Preprocess(Box<PartResult>),
    /// A detect job's part of the table: its peaks, and where it ran.
    Detect(Box<DetectPartResult>),
}

impl JobResult {
    /// The runtime and device the job ran on, as its result names them.
    pub(crate) fn runtime_and_device(&self) -> (Option<String>, Option<String>) {
        match self {
            JobResult::Scan(r) => (Some(r.runtime.name().to_string()), Some(r.device.clone())),
            JobResult::Convert(v) => (
                v["runtime"].as_str().map(str::to_string),
                v["device"].as_str().map(str::to_string),
            ),
            JobResult::Preprocess(p) => (Some(p.runtime.clone()), Some(p.device.clone())),
            JobResult::Detect(p) => (Some(p.runtime.clone()), Some(p.device.clone())),
        }
    }

    /// The channels flagged dead and noisy, where the job found them (a scan).
    pub(crate) fn flagged(&self) -> Option<(&[usize], &[usize])> {
        match self {
            JobResult::Scan(r) => Some((&r.dead, &r.noisy)),
            JobResult::Convert(_) | JobResult::Preprocess(_) | JobResult::Detect(_) => None,
        }
    }
}

/// A job's result record or failure record.
///
/// Its text ([`to_text`](Self::to_text)) has `result` first, as records have always had it; a
/// failure record has none.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct JobRecord {
    /// What the job computed; none on failure.
    #[serde(skip)]
    pub(crate) result: Option<JobResult>,
    /// [`RESULT_FORMAT`].
    pub(crate) format: String,
    /// The job as the plan has it.
    pub(crate) job: Job,
    /// What it ran.
    pub(crate) command: JobCommand,
    /// With which options.
    pub(crate) options: JobOptions,
    /// Why it failed; none on success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    /// Where, when, on what and from which inputs.
    pub(crate) provenance: Provenance,
}

/// A record as read, before its result is read as what its command computes.
#[derive(Deserialize)]
struct RawRecord {
    #[serde(default)]
    result: Option<Value>,
    format: String,
    job: Job,
    command: JobCommand,
    options: JobOptions,
    #[serde(default)]
    error: Option<String>,
    provenance: Provenance,
}

impl TryFrom<RawRecord> for JobRecord {
    type Error = serde_json::Error;

    fn try_from(raw: RawRecord) -> Result<Self, Self::Error> {
        let result = match (raw.command, raw.result) {
            (_, None) => None,
            (JobCommand::Scan, Some(v)) => Some(JobResult::Scan(serde_json::from_value(v)?)),
            (JobCommand::Convert, Some(v)) => Some(JobResult::Convert(v)),
            (JobCommand::Preprocess, Some(v)) => {
                Some(JobResult::Preprocess(serde_json::from_value(v)?))
            }
            (JobCommand::Detect, Some(v)) => Some(JobResult::Detect(serde_json::from_value(v)?)),
        };
        Ok(Self {
            result,
            format: raw.format,
            job: raw.job,
            command: raw.command,
            options: raw.options,
            error: raw.error,
            provenance: raw.provenance,
        })
    }
}

impl JobRecord {
    /// The record's text, as written to its file and printed by `dspk run --json`: the
    /// record's fields, with the result's own JSON text as the first (laid out as records have
    /// always been, when the program spliced the command's printed JSON in).
    pub(crate) fn to_text(&self) -> String {
        let fields = serde_json::to_string_pretty(self).expect("a record serialises");
        match &self.result {
            Some(result) => {
                let result = serde_json::to_string_pretty(result).expect("a result serialises");
                splice(&fields, "result", &result) + "\n"
            }
            None => fields + "\n",
        }
    }
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
    /// The Slurm variables set (see [`SLURM_ENV`](super::run::SLURM_ENV)).
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

/// The files of the recording at `path`, each with size and modification time.
pub(crate) fn input_files(path: &Path, base: &Path) -> CliResult<Vec<InputFile>> {
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

/// Reads a result or failure record, `None` when there is none; a record that does not parse
/// is an error naming it (the writes are atomic, so it was not written by a job).
pub(crate) fn read_record(path: &Path) -> CliResult<Option<JobRecord>> {
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
    let not_a_record = |e: serde_json::Error| {
        CliError::new(format!("{}: not a dspk result record: {e}", path.display()))
    };
    let raw: RawRecord = serde_json::from_str(&text).map_err(not_a_record)?;
    if raw.format != RESULT_FORMAT {
        return Err(CliError::new(format!(
            "{}: a record of format '{}', this dspk reads '{RESULT_FORMAT}'",
            path.display(),
            raw.format
        )));
    }
    JobRecord::try_from(raw).map(Some).map_err(not_a_record)
}

/// `object` (a JSON object's text) with `"key": member` as its first member, `member`'s text
/// as it is: the layout of the records and `gathered.json` since their first version.
pub(crate) fn splice(object: &str, key: &str, member: &str) -> String {
    let rest = object.strip_prefix('{').unwrap_or(object).trim_start();
    let sep = if rest.starts_with('}') { "" } else { "," };
    format!("{{\n  \"{key}\": {}{sep}\n  {rest}", member.trim_end())
}

#[cfg(test)]
mod tests;
