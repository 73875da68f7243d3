//! `dspk gather DIR`: every job's result merged (`gathered.json`, and JSON or a table on
//! stdout), with the jobs that failed or never ran, each with its error.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use crate::Ctx;
use crate::error::{CliError, CliResult};
use crate::plan::{Job, Plan};
use crate::report::index_list;
use crate::run::{JobRecord, failure_path, read_record, result_path};

/// The merged results in a plan's folder.
pub(crate) const GATHERED_FILE: &str = "gathered.json";

/// Where one job stands.
enum Standing {
    /// Its result, and the record's text.
    Done(Box<JobRecord>, String),
    /// Its failure record.
    Failed(Box<JobRecord>),
    /// No record (never ran, still running, or killed); why, where there is a reason.
    Missing(Option<String>),
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
        match s {
            Standing::Done(_, raw) => results.push(raw.trim_end()),
            Standing::Failed(record) => failed.push(json!({
                "job": job.job,
                "recording": job.recording,
                "stream": job.stream,
                "part": job.part,
                "error": record.error,
                "host": record.provenance.host,
                "record": failure_path(dir, job.job).display().to_string(),
            })),
            Standing::Missing(why) => missing.push(json!({
                "job": job.job,
                "recording": job.recording,
                "stream": job.stream,
                "part": job.part,
                "error": why.clone().unwrap_or_else(|| "never ran (or still running)".to_string()),
            })),
        }
    }
    let merged = json!({
        "plan": dir.join(crate::plan::PLAN_FILE).display().to_string(),
        "command": plan.command,
        "jobs": plan.jobs.len(),
        "done": results.len(),
        "failed": failed,
        "missing": missing,
    });
    // The records' texts as the jobs wrote them (a parse and a print of a float may differ
    // from it in the last digit).
    let text = crate::run::splice(
        &serde_json::to_string_pretty(&merged).expect("json values serialise"),
        "results",
        &format!("[{}]", results.join(",\n")),
    ) + "\n";
    dspk_io::durable::write_file(dir.join(GATHERED_FILE), text.as_bytes())?;
    let out = if ctx.json {
        text
    } else {
        table(&plan, &standings, &dir.join(GATHERED_FILE))
    };
    let incomplete = failed.len() + missing.len();
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
        "{incomplete} of {} jobs have no result ({} failed, {} never ran): {first}",
        plan.jobs.len(),
        failed.len(),
        missing.len()
    ))
    .with_output(out))
}

/// A job's records: a result beats a failure record (a failure that a later run fixed).
fn standing(dir: &Path, job: usize) -> Standing {
    match read_record(&result_path(dir, job)) {
        Ok(Some((r, raw))) if r.result.is_some() => return Standing::Done(Box::new(r), raw),
        Ok(_) => {}
        Err(e) => return Standing::Missing(Some(e.to_string())),
    }
    match read_record(&failure_path(dir, job)) {
        Ok(Some((r, _))) => Standing::Failed(Box::new(r)),
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
            Standing::Done(r, _) => {
                let result = r.result.as_ref().unwrap_or(&Value::Null);
                let list = |key: &str| {
                    result[key].as_array().map_or_else(
                        || "-".to_string(),
                        |a| {
                            index_list(
                                &a.iter()
                                    .filter_map(|v| v.as_u64().map(|x| x as usize))
                                    .collect::<Vec<_>>(),
                            )
                        },
                    )
                };
                let _ = writeln!(
                    out,
                    "{:>4}  {:<width$}  {samples:>21}  {:<16}  {:<16}  {:>8.3}  {}",
                    job.job,
                    job.label(),
                    list("dead"),
                    list("noisy"),
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
