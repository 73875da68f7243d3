//! `dspk bench`: the throughput table dspk-bench measures, each figure with its baseline from
//! the same run, printed as a table or `--json`.

pub(crate) use dspk_bench::BenchOptions;

use crate::Ctx;
use crate::error::{CliError, CliResult};

/// Runs `dspk bench`.
pub(crate) fn run(ctx: &Ctx, opts: &BenchOptions) -> CliResult<String> {
    if opts.window_samples == Some(0) {
        return Err(CliError::new("--window-samples must be at least 1"));
    }
    if opts.stream.is_some() && opts.recording.is_none() {
        return Err(CliError::new(
            "--stream names a stream of REC: give the Open Ephys recording to read",
        ));
    }
    let (_, client) = ctx.client()?;
    let devices = ctx.chosen_devices()?;
    let table = dspk_bench::measure(&client, devices.as_deref(), opts)?;
    for w in &table.warnings {
        crate::output::stderr_line("warning", w);
    }
    if ctx.json {
        return Ok(serde_json::to_string_pretty(&table).expect("the bench table serialises"));
    }
    let mut text = format!("{}\n", table.machine);
    text += &format!(
        "{:<3} {:<70} {:>12} {:<12} {:<48} {:>12} {:>8} {:>7} {:>7}\n",
        "id",
        "figure",
        "value",
        "unit",
        "baseline (same run)",
        "baseline",
        "ratio",
        "target",
        "devices"
    );
    for r in &table.rows {
        text += &format!(
            "{:<3} {:<70} {:>12.3} {:<12} {:<48} {:>12.3} {:>8.3} {:>7} {:>7}\n",
            r.id,
            r.figure,
            r.value,
            r.unit,
            r.baseline,
            r.baseline_value,
            r.ratio,
            if r.target.is_nan() {
                "—".to_string()
            } else {
                r.target.to_string()
            },
            r.devices
        );
    }
    Ok(text.trim_end().to_string())
}
