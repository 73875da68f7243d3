//! `dspk info`: a recording's description.

use std::fmt::Write as _;
use std::path::Path;

use dspk_types::{
    Probe, RateDrift, RecordingInfo, STATED_RATE_KEY, SampleRate, rate_difference_ppm,
};
use serde_json::json;

use crate::Ctx;
use crate::error::{CliError, CliResult};
use dspk_io::Origin;

use crate::input::Input;
use crate::report::{exact_seconds, gain_groups, gain_lines, hms, index_list};

/// Metadata entries shown in full before the list is cut short.
const METADATA_SHOWN: usize = 20;

/// The longest metadata value shown in full (SpikeGLX's `~imroTbl` runs to kilobytes).
const VALUE_SHOWN: usize = 100;

/// `value`, cut to [`VALUE_SHOWN`] characters with a note of the rest.
fn shorten(value: &str) -> String {
    let n = value.chars().count();
    if n <= VALUE_SHOWN {
        return value.to_string();
    }
    let head: String = value.chars().take(VALUE_SHOWN).collect();
    format!("{head}… ({n} characters)")
}

/// Runs `dspk info` on an open recording; with `probe_out`, first writes its probe there as
/// probeinterface JSON.
pub(crate) fn run(ctx: &Ctx, input: &Input, probe_out: Option<&Path>) -> CliResult<String> {
    input.report_warnings();
    let info = input.info();
    if let Some(path) = probe_out {
        let probe = info.probe.as_ref().ok_or_else(|| {
            CliError::new(format!(
                "{}: no probe geometry to write to {} (the format gives none)",
                input.label(),
                path.display()
            ))
        })?;
        dspk_io::write_probeinterface(path, probe)
            .map_err(|e| CliError::from(e).context("--probe-out"))?;
    }
    let duration = info.duration()?;
    let stored_bytes = u128::from(info.samples) * info.frame_bytes() as u128;
    let groups = gain_groups(info);
    let kind = input.kind();
    let path = input.path().map(|p| p.display().to_string());
    let segments = info.segments();
    let segment_rows: Vec<_> = segments
        .list()
        .iter()
        .map(|g| {
            let d = info.sample_rate.duration_for_samples(g.samples);
            json!({
                "start": g.start,
                "samples": g.samples,
                "first_sample": g.first_sample,
                "start_time": exact_seconds(g.start_time),
                "start_time_s": g.start_time.as_seconds_f64(),
                "duration_s": d.map(|d| d.as_seconds_f64()).ok(),
            })
        })
        .collect();
    let gap_rows: Vec<_> = segments
        .gaps()
        .iter()
        .map(|g| {
            json!({
                "after_segment": g.after,
                // A number: exact for any gap from -2^63 to 2^64 samples (every real one),
                // nearest double beyond.
                "samples": serde_json::Number::from_i128(g.samples)
                    .map_or_else(|| json!(g.samples as f64), serde_json::Value::Number),
                "seconds": g.seconds(info.sample_rate),
            })
        })
        .collect();
    let measured = info
        .measured_rate
        .map(|m| RateDrift::between(m, info.nominal()));
    if ctx.json {
        let planted = match &input.origin {
            Origin::Synthetic { dead, noisy } => json!({ "dead": dead, "noisy": noisy }),
            _ => serde_json::Value::Null,
        };
        let files = match &input.origin {
            Origin::Joined { paths, .. } => paths.iter().map(|p| p.display().to_string()).collect(),
            _ => Vec::new(),
        };
        let value = json!({
            "path": path,
            "kind": kind,
            "name": info.name,
            "channel_count": info.channel_count(),
            "sample_rate": info.sample_rate,
            "sample_rate_hz": info.sample_rate.rate_hz(),
            "stated_sample_rate": stated_rate(info),
            "rate_difference_ppm": stated_rate(info).map(|s| rate_difference_ppm(info.sample_rate, s)),
            "nominal_sample_rate": info.nominal(),
            "measured_sample_rate": info.measured_rate,
            "measured_difference_ppm": measured.map(|d| d.ppm),
            "measured_ms_per_hour": measured.map(|d| d.ms_per_hour),
            "segments": segment_rows,
            "gaps": gap_rows,
            "files": files,
            "samples": info.samples,
            "duration": exact_seconds(duration),
            "duration_s": duration.as_seconds_f64(),
            "duration_hms": hms(duration),
            "format": info.format.name(),
            "order": info.order.name(),
            "frame_bytes": info.frame_bytes(),
            "stored_bytes": stored_bytes.to_string(),
            "start_time": exact_seconds(info.start_time),
            "gains": groups,
            "channels": info.channels,
            "probe": info.probe.as_ref().map(|p| json!({
                "summary": probe_summary(p),
                "model": p.model(),
                "shanks": p.shanks(),
                "contact_count": p.contact_count(),
                "shank_pitch_um": p.shank_pitch_um(),
                "row_pitch_um": p.row_pitch_um(),
                "adc_cycle": p.adc_cycle(),
                "contacts": p.parts(),
            })),
            "metadata": info.metadata,
            "warnings": input.warnings,
            "planted": planted,
        });
        return Ok(serde_json::to_string_pretty(&value).expect("json values serialise") + "\n");
    }

    let mut out = String::new();
    let mut line = |key: &str, value: String| {
        let _ = writeln!(out, "{key:<12}{value}");
    };
    line("recording", input.label());
    line("name", info.name.clone());
    line(
        "format",
        format!("{kind}: {}, {}", info.format.name(), info.order.name()),
    );
    line("channels", info.channel_count().to_string());
    line("rate", rate_text(info));
    if info.nominal_rate.is_some() || stated_rate(info).is_some() {
        line("nominal", info.nominal().to_string());
    }
    if let (Some(m), Some(d)) = (info.measured_rate, measured) {
        let way = if d.ms_per_hour >= 0.0 {
            "longer"
        } else {
            "shorter"
        };
        line(
            "measured",
            format!(
                "{m} ({:+.3} ppm from the nominal rate: an hour of samples lasts {:.1} ms {way} \
                 at it; --rate measured times the recording by it)",
                d.ppm,
                d.ms_per_hour.abs()
            ),
        );
    }
    line("samples", info.samples.to_string());
    line("duration", format!("{duration} ({})", hms(duration)));
    line(
        "size",
        format!("{:.2} MB stored", stored_bytes as f64 / 1e6),
    );
    line("start time", info.start_time.to_string());
    if let Origin::Joined { paths, .. } = &input.origin {
        for (i, p) in paths.iter().enumerate() {
            line(if i == 0 { "files" } else { "" }, p.display().to_string());
        }
    }
    if segments.len() > 1 {
        line("segments", segments.len().to_string());
        let gaps = segments.gaps();
        for (k, g) in segments.list().iter().enumerate() {
            let secs = info
                .sample_rate
                .duration_for_samples(g.samples)
                .map_or(0.0, |d| d.as_seconds_f64());
            line(
                "",
                format!(
                    "{k}: samples {}..{} ({} samples, {secs:.3} s), clock sample {}, starts at {:.6} s",
                    g.start,
                    g.start + g.samples,
                    g.samples,
                    g.first_sample,
                    g.start_time.as_seconds_f64()
                ),
            );
            if let Some(gap) = gaps.get(k) {
                let what = if gap.samples >= 0 {
                    "gap"
                } else {
                    "clock restarts"
                };
                line(
                    "",
                    format!(
                        "   {what}: {} samples ({:.6} s)",
                        gap.samples,
                        gap.seconds(info.sample_rate)
                    ),
                );
            }
        }
    }
    for (i, g) in gain_lines(&groups).into_iter().enumerate() {
        line(if i == 0 { "gains" } else { "" }, g);
    }
    line(
        "probe",
        info.probe.as_ref().map_or_else(
            || "none (the format gives no geometry)".to_string(),
            probe_summary,
        ),
    );
    if let Origin::Synthetic { dead, noisy } = &input.origin {
        line(
            "planted",
            format!("dead {}; noisy {}", index_list(dead), index_list(noisy)),
        );
    }
    let metadata = &info.metadata;
    line("metadata", format!("{} entries", metadata.len()));
    for (k, v) in metadata.iter().take(METADATA_SHOWN) {
        line("", format!("{k} = {}", shorten(v)));
    }
    if metadata.len() > METADATA_SHOWN {
        line(
            "",
            format!(
                "… {} more (--json lists all)",
                metadata.len() - METADATA_SHOWN
            ),
        );
    }
    Ok(out)
}

/// One line on a probe: model, shanks, contacts, pitches, ADC cycle.
fn probe_summary(p: &Probe) -> String {
    let shanks = p.shanks().len();
    let mut text = format!(
        "{}: {} contacts on {shanks} shank{}",
        p.model().unwrap_or("unnamed"),
        p.contact_count(),
        if shanks == 1 { "" } else { "s" }
    );
    if let Some(pitch) = p.shank_pitch_um() {
        let _ = write!(text, " {pitch} µm apart");
    }
    if let Some(row) = p.row_pitch_um() {
        let _ = write!(text, ", rows {row} µm");
    }
    if let Some(c) = p.adc_cycle() {
        let _ = write!(
            text,
            ", {} ADCs × {} channels, {}-slot cycle",
            c.adcs, c.channels_per_adc, c.cycle_samples
        );
    }
    text
}

/// The rate the file states, where `--rate` set another ([`STATED_RATE_KEY`]).
fn stated_rate(info: &RecordingInfo) -> Option<SampleRate> {
    info.metadata.get(STATED_RATE_KEY)?.parse().ok()
}

/// The rate line: the rate, and with `--rate` the one the file states, how far apart they are
/// in ppm and what that makes of an hour: an hour of samples at the file's rate lasts this many
/// milliseconds longer (or shorter) at the chosen one.
fn rate_text(info: &RecordingInfo) -> String {
    match stated_rate(info) {
        Some(stated) => {
            let drift = RateDrift::between(info.sample_rate, stated);
            let (ppm, ms) = (drift.ppm, drift.ms_per_hour);
            let way = if ms >= 0.0 { "longer" } else { "shorter" };
            format!(
                "{} (--rate; the file states {stated}: {ppm:+.3} ppm, an hour of its samples \
                 lasts {:.1} ms {way})",
                info.sample_rate,
                ms.abs()
            )
        }
        None => info.sample_rate.to_string(),
    }
}
