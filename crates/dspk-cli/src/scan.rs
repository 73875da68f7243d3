//! `dspk scan`, the main job: per-channel statistics on the device, dead and noisy channels
//! flagged, a channel mask on request, throughput.

use std::fmt::Write as _;

use dspk_device::describe;
use dspk_stream::{
    Classification, DecodeRoute, Flag, PassDevice, ScanJob, ScanOptions as StreamScan, ScanResult,
    scan_each, scan_on,
};
use dspk_types::ComputeTarget;
use serde::Serialize;
use serde_json::json;

use crate::Ctx;
use crate::error::{CliError, CliResult, Context as _};
use dspk_io::Origin;

use crate::input::{Input, TIME_FLAGS, TimeOptions, window_option};
use crate::progress::{Progress, Summed};
use crate::report::{exact_seconds, index_list, seconds_text, unit_name};

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
    let range = opts.time.range(&info, &input.label(), TIME_FLAGS)?;
    if let Some(path) = &opts.mask {
        let flag = format!("--mask {}", path.display());
        dspk_io::refuse_overwrite(&input.files()?, "--mask", path)?;
        if path.is_dir() {
            return Err(CliError::new(format!(
                "{flag}: is a directory: the mask is written to a file"
            )));
        }
    }
    let window_samples = window_option(opts.window_samples)?;
    let route = DecodeRoute::from_env()?;
    input.report_warnings();
    let (target, devices, _prepared) = ctx.pass_devices()?;
    let len = range.end - range.start;
    let progress = Progress::bytes("scan", len.saturating_mul(info.frame_bytes() as u64));
    let result = scan_on(
        &devices,
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
    if let Some(path) = &opts.mask {
        let text =
            serde_json::to_string_pretty(&result.mask).expect("a channel mask serialises") + "\n";
        dspk_io::durable::write_file(path, text.as_bytes())
            .context(format!("--mask {}", path.display()))?;
    }
    let placed = Placed {
        target,
        devices: &devices,
    };
    if ctx.json {
        let value = json_of(input, opts, &placed, &result)?;
        return Ok(serde_json::to_string_pretty(&value).expect("json values serialise") + "\n");
    }
    text_of(input, opts, &placed, &result)
}

/// `dspk scan REC REC…`: every recording opened first (a bad one is reported before any
/// scan), then scanned one per device at a time; each result as one scan prints it, the JSON
/// an array in the order given. A recording whose scan fails is reported with its error and
/// the others still run; the exit status is then 1.
pub(crate) fn run_each(ctx: &Ctx, inputs: &[Input], opts: &ScanOptions) -> CliResult<String> {
    if opts.mask.is_some() {
        return Err(CliError::new(
            "--mask writes one file: give one REC to write a mask, or scan with --json to get \
             every recording's mask",
        ));
    }
    let window_samples = window_option(opts.window_samples)?;
    let route = DecodeRoute::from_env()?;
    let mut jobs = Vec::with_capacity(inputs.len());
    let mut total = 0u64;
    for input in inputs {
        let range = opts.time.range(input.info(), &input.label(), TIME_FLAGS)?;
        total = total.saturating_add(
            (range.end - range.start).saturating_mul(input.info().frame_bytes() as u64),
        );
        jobs.push((input, range));
    }
    for input in inputs {
        input.report_warnings();
    }
    let (target, devices, _prepared) = ctx.pass_devices()?;
    let progress = Progress::bytes("scan", total);
    let summed = Summed::new(&progress, jobs.len());
    let parts = summed.parts();
    let scans: Vec<ScanJob<'_>> = jobs
        .iter()
        .enumerate()
        .map(|(i, (input, range))| ScanJob {
            source: input.source.clone(),
            options: StreamScan {
                range: Some(range.clone()),
                window_samples,
                route,
                progress: &parts[i],
                fill_threads: None,
            },
        })
        .collect();
    let results = scan_each(&devices, &scans);
    progress.finish();
    let mut failed = Vec::new();
    let mut texts = Vec::new();
    let mut values = Vec::new();
    for ((input, _), result) in jobs.iter().zip(results) {
        match result {
            Ok(result) => {
                let placed = Placed {
                    target,
                    devices: &devices,
                };
                if ctx.json {
                    values.push(json_of(input, opts, &placed, &result)?);
                } else {
                    texts.push(text_of(input, opts, &placed, &result)?);
                }
            }
            Err(e) => {
                let e = CliError::from(e).context(input.label());
                if ctx.json {
                    values.push(json!({ "recording": input.label(), "error": e.to_string() }));
                } else {
                    texts.push(format!("scan of {}: error: {e}\n", input.label()));
                }
                failed.push(e);
            }
        }
    }
    let out = if ctx.json {
        serde_json::to_string_pretty(&values).expect("json values serialise") + "\n"
    } else {
        texts.join("\n")
    };
    match failed.len() {
        0 => Ok(out),
        // The results that did come are printed (by `main`, before the error line); the status
        // says some did not.
        n => Err(CliError::new(format!(
            "{n} of {} recordings could not be scanned: {}",
            jobs.len(),
            failed[0]
        ))
        .with_output(out)),
    }
}

/// Where a scan could run: the runtime and the devices chosen.
struct Placed<'a> {
    target: ComputeTarget,
    devices: &'a [PassDevice],
}

impl Placed<'_> {
    /// The devices `result` ran on (with several recordings, one of the chosen devices).
    fn ran<'r>(&'r self, result: &ScanResult) -> Vec<&'r PassDevice> {
        result
            .devices
            .iter()
            .filter_map(|d| self.devices.iter().find(|p| p.label == d.label))
            .collect()
    }
}

/// The JSON of one scan.
fn json_of(
    input: &Input,
    opts: &ScanOptions,
    placed: &Placed<'_>,
    result: &ScanResult,
) -> CliResult<serde_json::Value> {
    let figures = Figures::of(input, result)?;
    let planted = match &input.origin {
        Origin::Synthetic { dead, noisy } => json!({ "dead": dead, "noisy": noisy }),
        _ => serde_json::Value::Null,
    };
    let info = input.info();
    let (report, class, mask) = (&result.report, &result.classification, &result.mask);
    let ran = placed.ran(result);
    let device = describe(&ran.first().unwrap_or(&&placed.devices[0]).client);
    let per_device: Vec<serde_json::Value> = result
        .devices
        .iter()
        .map(|d| {
            let wall = d.report.wall.as_secs_f64();
            json!({
                "device": d.label,
                "windows": d.report.windows,
                "stored_bytes": d.report.stored_bytes,
                "wall_s": wall,
                "setup_s": d.report.setup.as_secs_f64(),
                "start_s": d.started_after.as_secs_f64(),
                "throughput_mb_s": if wall > 0.0 { d.report.stored_bytes as f64 / 1e6 / wall } else { 0.0 },
            })
        })
        .collect();
    Ok(json!({
        "recording": input.label(),
        "warnings": input.warnings,
        "name": info.name,
        "runtime": placed.target,
        "device": device.adapter_name,
        "devices": per_device,
        "channel_count": info.channel_count(),
        "sample_rate": info.sample_rate,
        "start_sample": result.range.start,
        "end_sample": result.range.end,
        "start": exact_seconds(figures.start_time),
        "end": exact_seconds(figures.end_time),
        "duration_s": figures.scanned.as_seconds_f64(),
        "window_samples": result.window_samples,
        "decode": report.route.name(),
        "windows": report.windows,
        "channels": rows_of(input, result),
        "dead": result.dead(),
        "noisy": result.noisy(),
        "median_std": class.median_std,
        "noisy_threshold": class.noisy_threshold,
        "mask": mask,
        "mask_path": opts.mask.as_deref().map(|p| p.display().to_string()),
        "planted": planted,
        "stored_bytes": report.stored_bytes,
        "wall_s": figures.wall_s,
        "throughput_mb_s": figures.throughput_mb_s,
        "realtime_factor": figures.realtime_factor,
    }))
}

/// The times and throughput of one scan.
struct Figures {
    wall_s: f64,
    scanned: dspk_types::RationalTime,
    throughput_mb_s: f64,
    realtime_factor: f64,
    start_time: dspk_types::RationalTime,
    end_time: dspk_types::RationalTime,
}

impl Figures {
    fn of(input: &Input, result: &ScanResult) -> CliResult<Self> {
        let info = input.info();
        let range = &result.range;
        let wall_s = result.report.wall.as_secs_f64();
        let scanned = info
            .sample_rate
            .duration_for_samples(range.end - range.start)?;
        Ok(Self {
            wall_s,
            scanned,
            throughput_mb_s: result.report.stored_bytes as f64 / 1e6 / wall_s,
            realtime_factor: scanned.as_seconds_f64() / wall_s,
            start_time: info.sample_rate.duration_for_samples(range.start)?,
            end_time: info.sample_rate.duration_for_samples(range.end)?,
        })
    }
}

/// Every channel's row.
fn rows_of<'a>(input: &'a Input, result: &ScanResult) -> Vec<ChannelRow<'a>> {
    let info = input.info();
    result
        .stats
        .iter()
        .enumerate()
        .map(|(i, s)| ChannelRow {
            index: i,
            name: &info.channels[i].name,
            unit: unit_name(&result.scaling.units[i]),
            count: s.count,
            min: s.min,
            max: s.max,
            mean: s.mean(),
            rms: s.rms(),
            std: s.std(),
            flag: result.classification.flags[i].map(Flag::name),
        })
        .collect()
}

/// The text of one scan.
fn text_of(
    input: &Input,
    opts: &ScanOptions,
    placed: &Placed<'_>,
    result: &ScanResult,
) -> CliResult<String> {
    let info = input.info();
    let channels = info.channel_count();
    let range = result.range.clone();
    let target = placed.target;
    let (report, class, mask, scaling) = (
        &result.report,
        &result.classification,
        &result.mask,
        &result.scaling,
    );
    let window = result.window_samples;
    let (dead, noisy) = (result.dead(), result.noisy());
    let Figures {
        wall_s,
        scanned,
        throughput_mb_s,
        realtime_factor,
        start_time,
        end_time,
    } = Figures::of(input, result)?;
    let mb = report.stored_bytes as f64 / 1e6;
    let rows = rows_of(input, result);

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
    if let [one] = placed.ran(result)[..] {
        let device = describe(&one.client);
        let _ = writeln!(
            out,
            "on {target}: {} ({}), windows of {window} samples",
            device.adapter_name, device.kind
        );
    } else {
        let _ = writeln!(
            out,
            "on {} {target} devices, windows of {window} samples:",
            result.devices.len()
        );
        for d in &result.devices {
            let wall = d.report.wall.as_secs_f64();
            let _ = writeln!(
                out,
                "  device {}: {} windows, {:.1} MB/s",
                d.label,
                d.report.windows,
                if wall > 0.0 {
                    d.report.stored_bytes as f64 / 1e6 / wall
                } else {
                    0.0
                }
            );
        }
    }
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
