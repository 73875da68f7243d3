//! `dspk scan`, the main job: per-channel statistics on the device, dead and noisy channels
//! flagged, a channel mask on request, throughput.

use std::fmt::Write as _;

use dspk_device::describe;
use dspk_stream::{Classification, DecodeRoute, Flag, ScanOptions as StreamScan, scan};
use serde::Serialize;
use serde_json::json;

use crate::error::{CliError, CliResult, Context as _};
use crate::input::{Input, Origin, TimeOptions};
use crate::parse::window_option;
use crate::progress::Progress;
use crate::report::{exact_seconds, index_list, seconds_text, unit_name};
use crate::{Ctx, write_atomically};

/// The options of `dspk scan` after parsing.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScanOptions {
    /// The part of the recording to scan.
    pub(crate) time: TimeOptions,
    /// Samples per window (default: one second, capped by the device).
    pub(crate) window_samples: Option<u64>,
    /// Where to write the channel mask.
    pub(crate) mask: Option<std::path::PathBuf>,
    /// Print every channel's statistics, not only the flagged channels.
    pub(crate) table: bool,
}

/// One channel's row of the table and the JSON.
#[derive(Debug, Serialize)]
struct ChannelRow<'a> {
    index: usize,
    name: &'a str,
    unit: String,
    count: u64,
    min: f64,
    max: f64,
    mean: f64,
    rms: f64,
    std: f64,
    flag: Option<&'static str>,
}

/// Runs `dspk scan` on an open recording.
pub(crate) fn run(ctx: &Ctx, input: &Input, opts: &ScanOptions) -> CliResult<String> {
    let info = input.info().clone();
    let range = opts.time.range(&info, &input.label())?;
    if let Some(path) = &opts.mask {
        let flag = format!("--mask {}", path.display());
        dspk_io::refuse_overwrite(&input.files()?, &flag, path)?;
        if path.is_dir() {
            return Err(CliError::new(format!(
                "{flag}: is a directory: the mask is written to a file"
            )));
        }
    }
    let window_samples = window_option(opts.window_samples)?;
    let route = DecodeRoute::from_env()?;
    input.report_warnings();
    let (target, client) = ctx.client()?;
    let device = describe(&client);
    let channels = info.channel_count();
    let len = range.end - range.start;
    let progress = Progress::bytes("scan", len.saturating_mul(info.frame_bytes() as u64));
    let result = scan(
        &client,
        input.source.clone(),
        &StreamScan {
            range: Some(range.clone()),
            window_samples,
            route,
            progress: &progress,
            fill_threads: None,
        },
    )?;
    progress.finish();
    let (report, class, mask, scaling, totals) = (
        &result.report,
        &result.classification,
        &result.mask,
        &result.scaling,
        &result.stats,
    );
    let window = result.window_samples;
    let (dead, noisy) = (result.dead(), result.noisy());
    if let Some(path) = &opts.mask {
        let text = serde_json::to_string_pretty(mask).expect("a channel mask serialises") + "\n";
        write_atomically(path, text.as_bytes()).context(format!("--mask {}", path.display()))?;
    }

    let wall_s = report.wall.as_secs_f64();
    let scanned = info.sample_rate.duration_for_samples(len)?;
    let mb = report.stored_bytes as f64 / 1e6;
    let throughput_mb_s = mb / wall_s;
    let realtime_factor = scanned.as_seconds_f64() / wall_s;
    let start_time = info.sample_rate.duration_for_samples(range.start)?;
    let end_time = info.sample_rate.duration_for_samples(range.end)?;

    let rows: Vec<ChannelRow<'_>> = totals
        .iter()
        .enumerate()
        .map(|(i, s)| ChannelRow {
            index: i,
            name: &info.channels[i].name,
            unit: unit_name(&scaling.units[i]),
            count: s.count,
            min: s.min,
            max: s.max,
            mean: s.mean(),
            rms: s.rms(),
            std: s.std(),
            flag: class.flags[i].map(Flag::name),
        })
        .collect();

    if ctx.json {
        let planted = match &input.origin {
            Origin::Synthetic { dead, noisy } => json!({ "dead": dead, "noisy": noisy }),
            Origin::File { .. } => serde_json::Value::Null,
        };
        let value = json!({
            "recording": input.label(),
            "warnings": input.warnings,
            "name": info.name,
            "runtime": target,
            "device": device.adapter_name,
            "channel_count": channels,
            "sample_rate": info.sample_rate,
            "start_sample": range.start,
            "end_sample": range.end,
            "start": exact_seconds(start_time),
            "end": exact_seconds(end_time),
            "duration_s": scanned.as_seconds_f64(),
            "window_samples": window,
            "decode": report.route.name(),
            "windows": report.windows,
            "channels": rows,
            "dead": dead,
            "noisy": noisy,
            "median_std": class.median_std,
            "noisy_threshold": class.noisy_threshold,
            "mask": mask,
            "mask_path": opts.mask.as_deref().map(|p| p.display().to_string()),
            "planted": planted,
            "stored_bytes": report.stored_bytes,
            "wall_s": wall_s,
            "throughput_mb_s": throughput_mb_s,
            "realtime_factor": realtime_factor,
        });
        return Ok(serde_json::to_string_pretty(&value).expect("json values serialise") + "\n");
    }

    let mut out = String::new();
    let _ = writeln!(
        out,
        "scan of {} ({}): {channels} channels at {}, {}, samples {}..{} ({} to {})",
        input.label(),
        info.name,
        info.sample_rate,
        info.format.name(),
        range.start,
        range.end,
        seconds_text(start_time),
        seconds_text(end_time),
    );
    let _ = writeln!(
        out,
        "on {target}: {} ({}), windows of {window} samples",
        device.adapter_name, device.kind
    );
    let common = scaling.common_unit().map(unit_name);
    if opts.table {
        table(&mut out, &rows, common.as_deref());
    }
    let unit = common
        .as_deref()
        .map(|u| format!(" {u}"))
        .unwrap_or_default();
    let _ = writeln!(out, "dead:  {} ({} flat)", index_list(&dead), dead.len());
    let _ = writeln!(
        out,
        "noisy: {} ({} with std above {:.3}{unit}; median std {:.3}{unit})",
        index_list(&noisy),
        noisy.len(),
        class.noisy_threshold,
        class.median_std,
    );
    if !opts.table {
        flagged_rows(&mut out, &rows, class);
    }
    if let Some(path) = &opts.mask {
        let _ = writeln!(
            out,
            "mask:  {} ({} of {channels} channels enabled)",
            path.display(),
            mask.enabled_count()
        );
    }
    let _ = writeln!(
        out,
        "throughput: {mb:.2} MB ({} s of recording) in {wall_s:.3} s: {throughput_mb_s:.1} MB/s, \
         {realtime_factor:.1}× real time",
        exact_seconds(scanned),
    );
    Ok(out)
}

/// At most this many flagged channels are listed with their figures when the full table is not
/// asked for, so that the default output fits one screen.
const FLAGGED_SHOWN: usize = 24;

/// The flagged channels, each with why (its std against the threshold), and a pointer to the
/// full table.
fn flagged_rows(out: &mut String, rows: &[ChannelRow<'_>], class: &Classification) {
    let flagged: Vec<&ChannelRow<'_>> = rows.iter().filter(|r| r.flag.is_some()).collect();
    for r in flagged.iter().take(FLAGGED_SHOWN) {
        let why = match r.flag {
            Some("dead") => format!(
                "dead:  std {:.3} {} (flat: min {:.3}, max {:.3})",
                r.std, r.unit, r.min, r.max
            ),
            _ => format!(
                "noisy: std {:.3} {} ({:.1}× the median)",
                r.std,
                r.unit,
                r.std / class.median_std
            ),
        };
        let _ = writeln!(out, "  ch {:>4} {:<10} {why}", r.index, r.name);
    }
    if flagged.len() > FLAGGED_SHOWN {
        let _ = writeln!(out, "  … {} more flagged", flagged.len() - FLAGGED_SHOWN);
    }
    let _ = writeln!(
        out,
        "every channel's min, max, mean, rms and std: --table (or --json)"
    );
}

/// The per-channel table; flagged rows end in `<< DEAD` / `<< NOISY`.
fn table(out: &mut String, rows: &[ChannelRow<'_>], common_unit: Option<&str>) {
    let name_width = rows
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    match common_unit {
        Some(u) => {
            let _ = writeln!(out, "per-channel statistics in {u}:");
        }
        None => {
            let _ = writeln!(out, "per-channel statistics, each in its channel's unit:");
        }
    }
    let _ = write!(
        out,
        "{:>5}  {:<name_width$}  {:>11}  {:>11}  {:>11}  {:>11}  {:>11}",
        "ch", "name", "min", "max", "mean", "rms", "std"
    );
    if common_unit.is_none() {
        let _ = write!(out, "  unit");
    }
    let _ = writeln!(out, "  flag");
    for r in rows {
        let _ = write!(
            out,
            "{:>5}  {:<name_width$}  {:>11.3}  {:>11.3}  {:>11.3}  {:>11.3}  {:>11.3}",
            r.index, r.name, r.min, r.max, r.mean, r.rms, r.std
        );
        if common_unit.is_none() {
            let _ = write!(out, "  {}", r.unit);
        }
        if let Some(flag) = r.flag {
            let _ = write!(out, "  << {}", flag.to_uppercase());
        }
        out.push('\n');
    }
}
