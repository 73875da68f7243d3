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

/// Runs `dspk bench --stages`.
pub(crate) fn stages(ctx: &Ctx) -> CliResult<String> {
    let (_, client) = ctx.client()?;
    let figures = dspk_bench::measure_stages(&client)?;
    if ctx.json {
        let rows: Vec<_> = figures
            .iter()
            .map(|f| {
                serde_json::json!({
                    "stage": f.stage,
                    "time_s": f.time.as_secs_f64(),
                    "copy_time_s": f.copy_time.as_secs_f64(),
                    "realtime": f.realtime,
                })
            })
            .collect();
        return Ok(serde_json::to_string_pretty(&rows).expect("figures serialise"));
    }
    let mut text = format!(
        "{:<56} {:>12} {:>14} {:>10} {:>12}\n",
        "stage (384 ch × 1 s on the device)",
        "time ms",
        "copy ms (same run)",
        "× copy",
        "× real time"
    );
    for f in &figures {
        text += &format!(
            "{:<56} {:>12.3} {:>14.3} {:>10.2} {:>12.0}\n",
            f.stage,
            f.time.as_secs_f64() * 1e3,
            f.copy_time.as_secs_f64() * 1e3,
            f.time.as_secs_f64() / f.copy_time.as_secs_f64(),
            f.realtime
        );
    }
    Ok(text.trim_end().to_string())
}
