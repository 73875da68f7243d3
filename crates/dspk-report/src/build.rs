//! A [`Report`] of each kind, from what its pass returned and the windows read for it: the
//! one place the program and the Python package make reports.

use std::sync::Arc;
use std::time::Instant;

use dspk_device::describe;
use dspk_io::OpenedRecording;
use dspk_stream::{
    DEAD_STD, DecodeRoute, Fits, Flag, PassDevice, Preprocessed, ScanOptions, ScanReport,
    ScanSubject, classify, fit, scan_on,
};
use dspk_types::{
    ComputeTarget, ContactShape, DspResult, PipelineSpec, ProgressSink, RecordingSource,
};

use crate::collect::{Collected, WindowRequest, collect};
use crate::draw::probe;
use crate::model::{ChannelRow, ColourBy, MatrixView, Report, ReportKind, RunFacts};

/// A contact's size where the probe states no shape (µm): Neuropixels' 12 µm squares.
pub const DEFAULT_CONTACT_UM: f64 = 12.0;

/// Without geometry, channels are drawn this far apart (µm), in their order.
pub const UNSTATED_PITCH_UM: f64 = 20.0;

/// Whitening matrices are drawn for at most this many channels (a larger one would be a
/// picture of more pixels than a screen has).
const MAX_MATRIX_CHANNELS: usize = 2048;

/// The report of `scan`, a scan of `recording` on `devices`: its statistics and classes, the
/// raw windows `request` asks for, read on `devices`.
///
/// # Errors
/// As [`collect`].
pub fn scan_report(
    devices: &[PassDevice],
    recording: &OpenedRecording,
    scan: &ScanReport,
    request: &WindowRequest,
    route: DecodeRoute,
) -> DspResult<Report> {
    report_of_scan(
        ReportKind::Scan,
        devices,
        recording,
        scan,
        None,
        request,
        route,
    )
}

/// `dspk report`'s report: `scan` (a scan of `recording`), and the windows `request` asks for
/// raw and after each stage of `pipeline` (with its fitted parameters), read on `devices`.
///
/// # Errors
/// As [`collect`].
pub fn recording_report(
    devices: &[PassDevice],
    recording: &OpenedRecording,
    scan: &ScanReport,
    pipeline: Option<(&PipelineSpec, &Fits)>,
    request: &WindowRequest,
    route: DecodeRoute,
) -> DspResult<Report> {
    report_of_scan(
        ReportKind::Report,
        devices,
        recording,
        scan,
        pipeline,
        request,
        route,
    )
}

/// `dspk report` and Python's `Recording.report`: scans all of `recording` on `devices`
/// (`subject` says what the scan's report says of it, `runtime` what the devices run on),
/// fits `pipeline` where it must be fitted, and returns the scan's report with the page's.
///
/// # Errors
/// As the scan, the fit and [`collect`].
#[allow(clippy::too_many_arguments)]
pub fn report_recording(
    devices: &[PassDevice],
    recording: &OpenedRecording,
    subject: ScanSubject,
    runtime: ComputeTarget,
    pipeline: Option<&PipelineSpec>,
    request: &WindowRequest,
    route: DecodeRoute,
    progress: &dyn ProgressSink,
) -> DspResult<(ScanReport, Report)> {
    let source = recording.source.clone();
    let signals = dspk_types::signal_source(source.clone())?;
    if let Some(spec) = pipeline {
        spec.check(signals.info())?;
    }
    crate::collect::window_starts(signals.info(), request)?;
    let started = Instant::now();
    let result = scan_on(
        devices,
        source.clone(),
        &ScanOptions {
            range: None,
            window_samples: None,
            route,
            progress,
            fill_threads: None,
        },
    )?;
    let scan = ScanReport::new(subject, source.info(), &result, runtime, devices)?;
    let scan_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let fits = match pipeline {
        Some(spec) => fit(devices, &signals, spec, Fits::default(), route)?,
        None => Fits::default(),
    };
    let fit_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let mut report = recording_report(
        devices,
        recording,
        &scan,
        pipeline.map(|s| (s, &fits)),
        request,
        route,
    )?;
    let windows_s = started.elapsed().as_secs_f64();
    report.run.steps_s = vec![
        ("scan".to_string(), scan_s),
        ("fit".to_string(), fit_s),
        ("windows".to_string(), windows_s),
    ];
    report.run.figures.push(format!(
        "this report: scanned in {scan_s:.2} s, fitted in {fit_s:.2} s, windows read in \
         {windows_s:.2} s"
    ));
    Ok((scan, report))
}

fn report_of_scan(
    kind: ReportKind,
    devices: &[PassDevice],
    recording: &OpenedRecording,
    scan: &ScanReport,
    pipeline: Option<(&PipelineSpec, &Fits)>,
    request: &WindowRequest,
    route: DecodeRoute,
) -> DspResult<Report> {
    let source = &recording.source;
    // A pipeline runs on the signal channels; the scan's statistics are of every channel.
    let windows_source = if pipeline.is_some() {
        dspk_types::signal_source(source.clone())?
    } else {
        source.clone()
    };
    let collected = collect(
        devices,
        &windows_source,
        pipeline,
        request,
        route,
        recording.as_synthetic(),
    )?;
    let info = source.info();
    let mut rows = rows_of(source.as_ref(), |i| {
        scan.channels
            .get(i)
            .map_or((String::from("good"), f64::NAN, f64::NAN), |c| {
                (
                    c.flag.clone().unwrap_or_else(|| "good".to_string()),
                    c.std,
                    c.mean,
                )
            })
    });
    // The MAD of the windows, by channel name where the windows are of the signal channels.
    let window_names: Vec<&str> = windows_source
        .info()
        .channels
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    for row in &mut rows {
        row.mad_std = window_names
            .iter()
            .position(|&n| n == row.name)
            .and_then(|i| collected.mad_std.get(i).copied())
            .unwrap_or(f64::NAN);
    }
    let mut figures = vec![format!(
        "scanned {:.3} s in {:.3} s: {:.1} MB/s, {:.1}× real time, {} windows of {} samples",
        scan.duration_s,
        scan.wall_s,
        scan.throughput_mb_s,
        scan.realtime_factor,
        scan.windows,
        scan.window_samples
    )];
    if let Some((spec, _)) = pipeline {
        figures.push(format!(
            "pipeline of {} stages drawn on {} windows",
            spec.stages.len(),
            collected.windows.len()
        ));
    }
    let facts = facts(
        recording,
        info,
        (scan.runtime.to_string(), scan.device.clone()),
        figures,
        pipeline,
        scan.warnings.clone(),
    )?;
    let statistics_from = format!(
        "std and mean: the scan of {:.3} s; MAD σ: {}",
        scan.duration_s,
        windows_text(&collected)
    );
    finish(
        kind,
        source.as_ref(),
        rows,
        facts,
        statistics_from,
        scan.median_std,
        scan.noisy_threshold,
        collected,
        pipeline.map(|(_, f)| f),
    )
}

/// `dspk preprocess`'s report: the windows `request` asks for from `source` (the recording
/// as it was preprocessed: `recording`'s signal channels), raw and after each stage of the
/// run `done`, read on `devices`; the channels classified from the raw windows.
///
/// # Errors
/// As [`collect`].
pub fn preprocess_report(
    devices: &[PassDevice],
    recording: &OpenedRecording,
    source: &Arc<dyn RecordingSource>,
    done: &Preprocessed,
    request: &WindowRequest,
    route: DecodeRoute,
) -> DspResult<Report> {
    let spec = &done.report.pipeline;
    let collected = collect(
        devices,
        source,
        Some((spec, &done.fits)),
        request,
        route,
        recording.as_synthetic(),
    )?;
    let classes = classify(&collected.stats);
    let rows = rows_of(source.as_ref(), |i| {
        let class = match classes.flags.get(i).copied().flatten() {
            Some(f) => f.name().to_string(),
            None => "good".to_string(),
        };
        let s = &collected.stats[i];
        (class, s.std(), s.mean())
    });
    let rows = rows
        .into_iter()
        .map(|mut r| {
            r.mad_std = collected.mad_std[r.index];
            r
        })
        .collect();
    let r = &done.report;
    let mut figures = vec![format!(
        "fitted in {:.3} s; applied in {:.3} s: {:.1}× real time, {} bytes read",
        r.fit_s, r.apply_s, r.realtime_factor, r.read_bytes
    )];
    figures.extend(r.stage_times.iter().map(|t| {
        format!(
            "stage {} ({}): {:.3} ms per window of the timing run, {:.1}× real time",
            t.index + 1,
            t.kind,
            t.window_ms,
            t.realtime
        )
    }));
    if let Some(c) = &r.clipped {
        figures.push(format!(
            "clipped to the output type: {} samples",
            serde_json::to_value(c)
                .ok()
                .and_then(|v| v.get("samples").cloned())
                .unwrap_or_default()
        ));
    }
    let described = devices.first().map(|d| describe(&d.client));
    let info = source.info();
    let device = described.map_or_else(Default::default, |d| {
        (d.runtime.to_string(), d.adapter_name)
    });
    let facts = facts(
        recording,
        info,
        device,
        figures,
        Some((spec, &done.fits)),
        recording.warnings.clone(),
    )?;
    let statistics_from = format!(
        "std, mean, MAD σ and the classes: {}",
        windows_text(&collected)
    );
    finish(
        ReportKind::Preprocess,
        source.as_ref(),
        rows,
        facts,
        statistics_from,
        classes.median_std,
        classes.noisy_threshold,
        collected,
        Some(&done.fits),
    )
}

#[allow(clippy::too_many_arguments)]
fn finish(
    kind: ReportKind,
    source: &dyn RecordingSource,
    rows: Vec<ChannelRow>,
    run: RunFacts,
    statistics_from: String,
    median_std: f64,
    noisy_threshold: f64,
    collected: Collected,
    fits: Option<&Fits>,
) -> DspResult<Report> {
    let info = source.info();
    let contact_um = match info.probe.as_ref().and_then(|p| p.parts().contact_shape) {
        Some(ContactShape::Square { width_um }) => (width_um, width_um),
        Some(ContactShape::Circle { radius_um }) => (2.0 * radius_um, 2.0 * radius_um),
        Some(ContactShape::Rect {
            width_um,
            height_um,
        }) => (width_um, height_um),
        None => (DEFAULT_CONTACT_UM, DEFAULT_CONTACT_UM),
    };
    let drawn: Vec<ChannelRow> = rows.iter().filter(|r| r.on_probe).cloned().collect();
    let (probe_view, _, _) = probe::layout(
        &drawn,
        contact_um,
        info.probe.is_some(),
        info.probe
            .as_ref()
            .and_then(|p| p.model().map(str::to_string)),
    );
    let whitening = fits
        .map(|f| {
            f.whitening
                .iter()
                .filter(|(_, m)| m.channels() <= MAX_MATRIX_CHANNELS)
                .map(|(&stage, m)| {
                    let n = m.channels();
                    let mut weights = vec![0f32; n * n];
                    let mut limit = 0f64;
                    let mut largest = 0f64;
                    for (r, row) in m.rows().iter().enumerate() {
                        for (&c, &w) in row.columns.iter().zip(&row.weights) {
                            weights[r * n + c as usize] = w as f32;
                            largest = largest.max(w.abs());
                            if c as usize != r {
                                limit = limit.max(w.abs());
                            }
                        }
                    }
                    MatrixView {
                        stage,
                        channels: n,
                        limit: if limit > 0.0 {
                            limit
                        } else {
                            largest.max(1e-12)
                        },
                        weights,
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Report {
        kind,
        run,
        statistics_from,
        channels: rows,
        median_std,
        noisy_threshold,
        dead_threshold: DEAD_STD,
        probe: probe_view,
        windows: collected.windows,
        whitening,
        colour_by: ColourBy::default(),
    })
}

/// Every channel of `source` with its place on the probe (or in one column without geometry)
/// and, from `figures(index)`, its class, std and mean.
fn rows_of(
    source: &dyn RecordingSource,
    figures: impl Fn(usize) -> (String, f64, f64),
) -> Vec<ChannelRow> {
    let info = source.info();
    info.channels
        .iter()
        .enumerate()
        .map(|(i, ch)| {
            let contact = info
                .probe
                .as_ref()
                .and_then(|p| p.channels().get(i).cloned().flatten());
            let (class, std, mean) = figures(i);
            let (x_um, y_um, shank, id, on_probe) = match (&info.probe, contact) {
                (Some(_), Some(c)) => (c.x_um, c.y_um, c.shank, Some(c.id.clone()), true),
                (Some(_), None) => (0.0, 0.0, 0, None, false),
                (None, _) => (0.0, UNSTATED_PITCH_UM * i as f64, 0, None, true),
            };
            ChannelRow {
                index: i,
                name: ch.name.clone(),
                contact: id,
                x_um,
                y_um,
                shank,
                on_probe,
                class,
                std,
                mad_std: f64::NAN,
                mean,
            }
        })
        .collect()
}

/// The run's facts: `recording` (described by `info`) on `device` (runtime, name), with
/// `figures`, `pipeline` and its fits, and `warnings`.
fn facts(
    recording: &OpenedRecording,
    info: &dspk_types::RecordingInfo,
    device: (String, String),
    figures: Vec<String>,
    pipeline: Option<(&PipelineSpec, &Fits)>,
    warnings: Vec<String>,
) -> DspResult<RunFacts> {
    Ok(RunFacts {
        recording: recording.label(),
        format: recording.kind(),
        sample_rate: info.sample_rate.to_string(),
        sample_rate_hz: info.sample_rate.rate_hz(),
        channel_count: info.channel_count(),
        duration_s: info.duration()?.as_seconds_f64(),
        runtime: device.0,
        device: device.1,
        figures,
        pipeline: pipeline.map(|(s, _)| s.to_toml()),
        fitted: pipeline.map(|(_, f)| fitted_lines(f)).unwrap_or_default(),
        warnings,
        steps_s: Vec::new(),
    })
}

/// `the report's 3 raw windows (90000 samples per channel)`.
fn windows_text(collected: &Collected) -> String {
    let n = collected.windows.len();
    format!(
        "the report's {n} raw window{} ({} samples per channel)",
        if n == 1 { "" } else { "s" },
        collected.samples
    )
}

/// The fitted parameters, one line each.
fn fitted_lines(fits: &Fits) -> Vec<String> {
    let mut out = Vec::new();
    for (stage, m) in &fits.whitening {
        out.push(format!(
            "stage {}: whitening matrix of {} channels fitted on {} samples",
            stage + 1,
            m.channels(),
            m.samples()
        ));
    }
    for (stage, means) in &fits.centers {
        let finite: Vec<f64> = means.iter().copied().filter(|v| v.is_finite()).collect();
        let (lo, hi) = finite
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        out.push(format!(
            "stage {}: channel means from {lo:.2} µV to {hi:.2} µV",
            stage + 1
        ));
    }
    for (stage, bad) in &fits.bad_channels {
        out.push(format!(
            "stage {}: bad channels interpolated: {}",
            stage + 1,
            if bad.is_empty() {
                "none".to_string()
            } else {
                bad.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
    }
    out
}

/// The classes of channels, counted (dead, noisy, good).
pub fn counts(rows: &[ChannelRow]) -> (usize, usize, usize) {
    let n = |c: &str| rows.iter().filter(|r| r.class == c).count();
    (n(Flag::Dead.name()), n(Flag::Noisy.name()), n("good"))
}
