//! `dspk gather DIR`: every job's record read back as a typed value and merged
//! (`gathered.json`, and JSON or a table on stdout), with the jobs that failed or never ran,
//! each with its error; for a preprocess plan, each recording's output assembled from its
//! jobs' parts once they are all done; for a detect plan, each recording's table concatenated
//! from its jobs' parts.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::detect::{self, AssembledTable};
use super::plan_file::{Job, JobCommand, PLAN_FILE, Plan, failure_path, result_path};
use super::preprocess::{Assembled, assemble};
use super::record::{JobRecord, read_record, splice};
use crate::Ctx;
use crate::error::{CliError, CliResult};
use crate::report::index_list;

/// The merged results in a plan's folder.
pub(crate) const GATHERED_FILE: &str = "gathered.json";

/// Where one job stands.
enum Standing {
    /// Its result record.
    Done(Box<JobRecord>),
    /// Its failure record.
    Failed(Box<JobRecord>),
    /// No record (never ran, still running, or killed); why, where there is a reason.
    Missing(Option<String>),
}

/// `gathered.json` but its `results` (every finished job's record, in job order, spliced in
/// first as records are): the jobs that did not finish. Fields in alphabetical order, as the
/// file has always had them.
#[derive(Debug, Serialize)]
struct Gathered<'a> {
    /// What every job ran.
    command: JobCommand,
    /// Jobs finished.
    done: usize,
    /// Jobs that failed, each with its error.
    failed: Vec<Unfinished<'a>>,
    /// Jobs in the plan.
    jobs: usize,
    /// Jobs with no record.
    missing: Vec<Unfinished<'a>>,
    /// Preprocess plans: the outputs assembled from their parts (those whose jobs are all
    /// done).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    outputs: Vec<Assembled>,
    /// The plan's file.
    plan: String,
    /// Detect plans: the tables concatenated from their parts (those whose jobs are all
    /// done).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tables: Vec<AssembledTable>,
}

/// A job with no result (fields in alphabetical order, as the file has always had them).
#[derive(Debug, Serialize)]
struct Unfinished<'a> {
    /// Why.
    error: Option<String>,
    /// Where it failed (failed jobs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    host: Option<&'a str>,
    /// Its number.
    job: usize,
    /// Its part of the recording.
    part: usize,
    /// Its failure record (failed jobs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    record: Option<String>,
    /// Its recording.
    recording: &'a Option<String>,
    /// Its stream.
    stream: &'a Option<String>,
}

/// Runs `dspk gather`.
pub(crate) fn run(ctx: &Ctx, dir: &Path) -> CliResult<String> {
    let plan = Plan::load(dir)?;
    let standings: Vec<(&Job, Standing)> = plan
        .jobs
        .iter()
        .map(|job| (job, standing(dir, job.job)))
        .collect();
    let mut results = Vec::new();
    let mut failed = Vec::new();
    let mut missing = Vec::new();
    for (job, s) in &standings {
        let unfinished = |error: Option<String>| Unfinished {
            error,
            host: None,
            job: job.job,
            part: job.part,
            record: None,
            recording: &job.recording,
            stream: &job.stream,
        };
        match s {
            Standing::Done(record) => results.push(record.as_ref()),
            Standing::Failed(record) => failed.push(Unfinished {
                host: Some(&record.provenance.host),
                record: Some(failure_path(dir, job.job).display().to_string()),
                ..unfinished(record.error.clone())
            }),
            Standing::Missing(why) => missing
                .push(unfinished(Some(why.clone().unwrap_or_else(|| {
                    "never ran (or still running)".to_string()
                })))),
        }
    }
    let (failures, absent) = (failed.len(), missing.len());
    let done: BTreeMap<usize, &JobRecord> = results.iter().map(|r| (r.job.job, *r)).collect();
    let outputs = if plan.command == JobCommand::Preprocess {
        assemble(dir, &plan, &done)?
    } else {
        Vec::new()
    };
    let tables = if plan.command == JobCommand::Detect {
        detect::assemble(dir, &plan, &done)?
    } else {
        Vec::new()
    };
    let merged = Gathered {
        done: results.len(),
        command: plan.command,
        failed,
        jobs: plan.jobs.len(),
        missing,
        outputs,
        plan: dir.join(PLAN_FILE).display().to_string(),
        tables,
    };
    let records: Vec<String> = results.iter().map(|r| r.to_text()).collect();
    let text = splice(
        &serde_json::to_string_pretty(&merged).expect("json values serialise"),
        "results",
        &format!(
            "[{}]",
            records
                .iter()
                .map(|r| r.trim_end())
                .collect::<Vec<_>>()
                .join(",\n")
        ),
    ) + "\n";
    dspk_io::durable::write_file(dir.join(GATHERED_FILE), text.as_bytes())?;
    let out = if ctx.json {
        text
    } else {
        let mut out = table(&plan, &standings, &dir.join(GATHERED_FILE));
        for a in &merged.outputs {
            let _ = writeln!(
                out,
                "assembled {} ({} parts, {:.2} MB) from {}",
                dir.join(&a.output).display(),
                a.parts,
                a.bytes as f64 / 1e6,
                a.recording
            );
        }
        for t in &merged.tables {
            let _ = writeln!(
                out,
                "concatenated {} ({} parts, {} peaks, detection {:.3} s) from {}",
                dir.join(&t.output).display(),
                t.parts,
                t.peaks,
                t.detect_s,
                t.recording
            );
        }
        out
    };
    let incomplete = failures + absent;
    if incomplete == 0 {
        return Ok(out);
    }
    // The results that are there are printed (by `main`, before the error line); the status
    // says some are not.
    let first = standings
        .iter()
        .find_map(|(job, s)| match s {
            Standing::Failed(r) => Some(format!(
                "job {} failed: {}",
                job.job,
                r.error.as_deref().unwrap_or("no error recorded")
            )),
            Standing::Missing(_) => Some(format!("job {} has no result", job.job)),
            Standing::Done(..) => None,
        })
        .unwrap_or_default();
    Err(CliError::new(format!(
        "{incomplete} of {} jobs have no result ({failures} failed, {absent} never ran): {first}",
        plan.jobs.len(),
    ))
    .with_output(out))
}

/// A job's records: a result beats a failure record (a failure that a later run fixed).
fn standing(dir: &Path, job: usize) -> Standing {
    match read_record(&result_path(dir, job)) {
        Ok(Some(r)) if r.result.is_some() => return Standing::Done(Box::new(r)),
        Ok(_) => {}
        Err(e) => return Standing::Missing(Some(e.to_string())),
    }
    match read_record(&failure_path(dir, job)) {
        Ok(Some(r)) => Standing::Failed(Box::new(r)),
        Ok(None) => Standing::Missing(None),
        Err(e) => Standing::Missing(Some(e.to_string())),
    }
}

/// The table for a terminal: one row per job, then what failed and what never ran.
fn table(plan: &Plan, standings: &[(&Job, Standing)], gathered: &Path) -> String {
    let mut out = String::new();
    let done = standings
        .iter()
        .filter(|(_, s)| matches!(s, Standing::Done(..)))
        .count();
    let _ = writeln!(
        out,
        "{done} of {} {} jobs done ({})",
        plan.jobs.len(),
        plan.command.name(),
        gathered.display()
    );
    let width = standings
        .iter()
        .map(|(j, _)| j.label().chars().count())
        .max()
        .unwrap_or(9)
        .max(9);
    let _ = writeln!(
        out,
        "{:>4}  {:<width$}  {:>21}  {:<16}  {:<16}  {:>8}  device",
        "job", "recording", "samples", "dead", "noisy", "wall s"
    );
    for (job, s) in standings {
        let samples = format!("{}..{}", job.start_sample, job.end_sample);
        match s {
            Standing::Done(r) => {
                let (dead, noisy) = match r.result.as_ref().and_then(|r| r.flagged()) {
                    Some((dead, noisy)) => (index_list(dead), index_list(noisy)),
                    None => ("-".to_string(), "-".to_string()),
                };
                let _ = writeln!(
                    out,
                    "{:>4}  {:<width$}  {samples:>21}  {dead:<16}  {noisy:<16}  {:>8.3}  {}",
                    job.job,
                    job.label(),
                    r.provenance.wall_s,
                    r.provenance.device.as_deref().unwrap_or("-"),
                );
            }
            Standing::Failed(_) => {
                let _ = writeln!(
                    out,
                    "{:>4}  {:<width$}  {samples:>21}  FAILED",
                    job.job,
                    job.label()
                );
            }
            Standing::Missing(_) => {
                let _ = writeln!(
                    out,
                    "{:>4}  {:<width$}  {samples:>21}  NO RESULT",
                    job.job,
                    job.label()
                );
            }
        }
    }
    for (job, s) in standings {
        match s {
            Standing::Failed(r) => {
                let _ = writeln!(
                    out,
                    "failed: job {} ({}) on {}: {}",
                    job.job,
                    job.label(),
                    r.provenance.host,
                    r.error.as_deref().unwrap_or("no error recorded")
                );
            }
            Standing::Missing(why) => {
                let _ = writeln!(
                    out,
                    "never ran: job {} ({}){}",
                    job.job,
                    job.label(),
                    why.as_ref().map(|w| format!(": {w}")).unwrap_or_default()
                );
            }
            Standing::Done(..) => {}
        }
    }
    out
}
