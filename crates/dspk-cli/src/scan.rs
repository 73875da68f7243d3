//! `dspk scan`, the main job: per-channel statistics on the device, dead and noisy channels
//! flagged, a channel mask on request, throughput. The pass's outcome is dspk-stream's
//! [`ScanReport`]; this module prints it.

use std::fmt::Write as _;
use std::ops::Range;

use dspk_device::describe;
use dspk_io::Origin;
use dspk_stream::{
    ChannelFigures, DecodeRoute, PassDevice, Planted, ScanJob, ScanOptions as StreamScan,
    ScanReport, ScanSubject, scan_each, scan_on,
};
use dspk_types::ComputeTarget;
use serde::Serialize;

use crate::Ctx;
use crate::error::{CliError, CliResult, Context as _};
use crate::input::{Input, TIME_FLAGS, TimeOptions, window_option};
use crate::progress::{Progress, Summed};
use crate::report::{exact_seconds, index_list, seconds_text};

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
    /// `--report` and `--at`: the page a person opens.
    pub(crate) page: crate::page::PageOptions,
}

/// A scan's options checked against its recording, before any device is opened.
#[derive(Debug, Clone)]
pub(crate) struct Checked {
    range: Range<u64>,
    window_samples: Option<u64>,
    route: DecodeRoute,
}

/// Checks `opts` against `input` (the range, the mask's path, the window, `DSPK_DECODE`) and
/// prints the reader's warnings: what a scan does before it opens its devices.
pub(crate) fn check(input: &Input, opts: &ScanOptions) -> CliResult<Checked> {
    let range = opts.time.range(input.info(), &input.label(), TIME_FLAGS)?;
    if let Some(path) = &opts.mask {
        let flag = format!("--mask {}", path.display());
        dspk_io::refuse_overwrite(&input.files()?, "--mask", path)?;
        if path.is_dir() {
            return Err(CliError::new(format!(
                "{flag}: is a directory: the mask is written to a file"
            )));
        }
    }
    opts.page.check(input, "--report")?;
    if opts.page.path.is_some() {
        opts.page.request(input.info())?;
    }
    let window_samples = window_option(opts.window_samples)?;
    let route = DecodeRoute::from_env()?;
    input.report_warnings();
    Ok(Checked {
        range,
        window_samples,
        route,
    })
}

/// Scans `input` as `checked` says on `devices` of `target`, writes the mask where asked,
/// and returns the report (`dspk run`'s scan jobs call this with the job's device).
pub(crate) fn scan_checked(
    input: &Input,
    opts: &ScanOptions,
    checked: &Checked,
    target: ComputeTarget,
    devices: &[PassDevice],
) -> CliResult<ScanReport> {
    let len = checked.range.end - checked.range.start;
    let progress = Progress::bytes(
        "scan",
        len.saturating_mul(input.info().frame_bytes() as u64),
    );
    let result = scan_on(
        devices,
        input.source.clone(),
        &StreamScan {
            range: Some(checked.range.clone()),
            window_samples: checked.window_samples,
            route: checked.route,
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
    Ok(ScanReport::new(
        subject(input, opts.mask.as_deref()),
        input.info(),
        &result,
        target,
        devices,
    )?)
}

/// Runs `dspk scan` on an open recording.
pub(crate) fn run(ctx: &Ctx, input: &Input, opts: &ScanOptions) -> CliResult<String> {
    let checked = check(input, opts)?;
    let (target, devices, _prepared) = ctx.pass_devices()?;
    let report = scan_checked(input, opts, &checked, target, &devices)?;
    crate::page::of_scan(input, &devices, &report, &opts.page)?;
    if ctx.json {
        return Ok(json_text(&report));
    }
    Ok(text_of(input, opts, &devices, &report))
}

/// A value as `--json` prints it.
pub(crate) fn json_text(value: &impl Serialize) -> String {
    serde_json::to_string_pretty(value).expect("json values serialise") + "\n"
}

/// What a report says of `input` beyond its information (`mask`: where its mask went).
pub(crate) fn subject(input: &Input, mask: Option<&std::path::Path>) -> ScanSubject {
    ScanSubject {
        label: input.label(),
        warnings: input.warnings.clone(),
        planted: match &input.origin {
            Origin::Synthetic { dead, noisy } => Some(Planted {
                dead: dead.clone(),
                noisy: noisy.clone(),
            }),
            _ => None,
        },
        mask_path: mask.map(|p| p.display().to_string()),
    }
}

/// One recording's entry in the JSON of `dspk scan REC REC…`: its report, or its error.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Scanned {
    /// The scan's report.
    Report(Box<ScanReport>),
    /// Why it failed (fields in alphabetical order, as the program has always printed them).
    Failed { error: String, recording: String },
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
    if opts.page.path.is_some() {
        return Err(CliError::new(
            "--report writes the page of one recording: give one REC (or `dspk report REC` \
             for each)",
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
                let report = ScanReport::new(
                    subject(input, opts.mask.as_deref()),
                    input.info(),
                    &result,
                    target,
                    &devices,
                )?;
                if ctx.json {
                    values.push(Scanned::Report(Box::new(report)));
                } else {
                    texts.push(text_of(input, opts, &devices, &report));
                }
            }
            Err(e) => {
                let e = CliError::from(e).context(input.label());
                if ctx.json {
                    values.push(Scanned::Failed {
                        error: e.to_string(),
                        recording: input.label(),
                    });
                } else {
                    texts.push(format!("scan of {}: error: {e}\n", input.label()));
                }
                failed.push(e);
            }
        }
    }
    let out = if ctx.json {
        json_text(&values)
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

/// The text of one scan.
fn text_of(
    input: &Input,
    opts: &ScanOptions,
    devices: &[PassDevice],
    report: &ScanReport,
) -> String {
    let info = input.info();
    let channels = report.channel_count;
    let target = report.runtime;
    let window = report.window_samples;
    let (dead, noisy) = (&report.dead, &report.noisy);
    let mb = report.stored_bytes as f64 / 1e6;
    let rows = &report.channels;
    // The devices the scan ran on (with several recordings, one of the chosen devices).
    let ran: Vec<&PassDevice> = report
        .devices
        .iter()
        .filter_map(|d| devices.iter().find(|p| p.label == d.device))
        .collect();

    let mut out = String::new();
    let _ = writeln!(
        out,
        "scan of {} ({}): {channels} channels at {}, {}, samples {}..{} ({} to {})",
        report.recording,
        report.name,
        report.sample_rate,
        info.format.name(),
        report.start_sample,
        report.end_sample,
        seconds_text(report.start),
        seconds_text(report.end),
    );
    if let [one] = ran[..] {
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
            report.devices.len()
        );
        for d in &report.devices {
            let _ = writeln!(
                out,
                "  device {}: {} windows, {:.1} MB/s",
                d.device, d.windows, d.throughput_mb_s
            );
        }
    }
    let common = rows
        .first()
        .map(|r| r.unit.as_str())
        .filter(|u| rows.iter().all(|r| r.unit == *u));
    if opts.table {
        table(&mut out, rows, common);
    }
    let unit = common.map(|u| format!(" {u}")).unwrap_or_default();
    let _ = writeln!(out, "dead:  {} ({} flat)", index_list(dead), dead.len());
    let _ = writeln!(
        out,
        "noisy: {} ({} with std above {:.3}{unit}; median std {:.3}{unit})",
        index_list(noisy),
        noisy.len(),
        report.noisy_threshold,
        report.median_std,
    );
    if !opts.table {
        flagged_rows(&mut out, rows, report.median_std);
    }
    if let Some(path) = &opts.mask {
        let _ = writeln!(
            out,
            "mask:  {} ({} of {channels} channels enabled)",
            path.display(),
            report.mask.enabled_count()
        );
    }
    let scanned = report
        .sample_rate
        .duration_for_samples(report.end_sample - report.start_sample)
        .map_or_else(|_| format!("{}", report.duration_s), exact_seconds);
    let _ = writeln!(
        out,
        "throughput: {mb:.2} MB ({scanned} s of recording) in {:.3} s: {:.1} MB/s, {:.1}× real \
         time",
        report.wall_s, report.throughput_mb_s, report.realtime_factor,
    );
    out
}

/// At most this many flagged channels are listed with their figures when the full table is not
/// asked for, so that the default output fits one screen.
const FLAGGED_SHOWN: usize = 24;

/// The flagged channels, each with why (its std against the threshold), and a pointer to the
/// full table.
fn flagged_rows(out: &mut String, rows: &[ChannelFigures], median_std: f64) {
    let flagged: Vec<&ChannelFigures> = rows.iter().filter(|r| r.flag.is_some()).collect();
    for r in flagged.iter().take(FLAGGED_SHOWN) {
        let why = match r.flag.as_deref() {
            Some("dead") => format!(
                "dead:  std {:.3} {} (flat: min {:.3}, max {:.3})",
                r.std, r.unit, r.min, r.max
            ),
            _ => format!(
                "noisy: std {:.3} {} ({:.1}× the median)",
                r.std,
                r.unit,
                r.std / median_std
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
fn table(out: &mut String, rows: &[ChannelFigures], common_unit: Option<&str>) {
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
        if let Some(flag) = &r.flag {
            let _ = write!(out, "  << {}", flag.to_uppercase());
        }
        out.push('\n');
    }
}
