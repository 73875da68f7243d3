//! `dspk detect`: peaks of a recording (after an optional pipeline) found on the device and
//! written as a table (`.npy` of SpikeInterface's peak dtype, `.jsonl` or `.csv`), with a
//! summary line or the run's report (`--json`).

use std::path::PathBuf;

use dspk_stream::{
    DecodeRoute, DetectReport, DetectSpec, Fits, TableFormat, encode_peaks, segment_starts,
};
use dspk_types::PipelineSpec;
use serde_json::json;

use crate::Ctx;
use crate::error::{CliResult, Context as _};
use crate::input::{Input, window_option};
use crate::preprocess::signal_source;
use crate::progress::Progress;

/// The options of `dspk detect` after parsing.
#[derive(Debug, Clone)]
pub(crate) struct DetectOptions {
    /// `--pipeline` (`none`: the recording as it is).
    pub(crate) pipeline: String,
    /// `-o`: the table.
    pub(crate) output: PathBuf,
    /// The detector's parameters.
    pub(crate) detect: DetectSpec,
    /// Samples per window.
    pub(crate) window_samples: Option<u64>,
}

/// Runs `dspk detect`.
pub(crate) fn run(ctx: &Ctx, input: Input, opts: &DetectOptions) -> CliResult<String> {
    ctx.target()?;
    let spec = if opts.pipeline == "none" {
        PipelineSpec::default()
    } else {
        PipelineSpec::choose(&opts.pipeline).context("--pipeline")?
    };
    let format = TableFormat::of_path(&opts.output).context("-o")?;
    opts.detect.check()?;
    let source = signal_source(&input)?;
    spec.check(source.info()).context("--pipeline")?;
    let mut guarded = input.files()?;
    guarded.extend(spec.files_read(&opts.pipeline, None));
    dspk_io::check_output(&guarded, "-o", &opts.output)?;
    input.report_warnings();
    let options = dspk_stream::DetectOptions {
        detect: opts.detect,
        window_samples: window_option(opts.window_samples)?,
        route: DecodeRoute::from_env()?,
        noise: None,
    };
    let (target, devices, prepared) = ctx.pass_devices()?;
    let stored = input
        .info()
        .samples
        .saturating_mul(input.info().frame_bytes() as u64);
    let progress = Progress::bytes("detect", stored);
    let starts = segment_starts(source.info());
    let mut done = dspk_stream::detect(
        &devices,
        source,
        &spec,
        Fits::default(),
        &options,
        &progress,
    )?;
    progress.finish();
    drop(prepared);
    if let Some(truth) = input.as_synthetic() {
        done.score_against(truth)?;
    }
    dspk_io::durable::write_file(&opts.output, &encode_peaks(&done.peaks, format, &starts))?;
    if ctx.json {
        let value = json!({
            "recording": input.label(),
            "warnings": input.warnings,
            "output": opts.output.display().to_string(),
            "runtime": target,
            "report": done.report,
        });
        return Ok(serde_json::to_string_pretty(&value).expect("json values serialise") + "\n");
    }
    Ok(summary(&input.label(), &opts.output, &done.report))
}

/// The summary line(s) of a run.
fn summary(label: &str, output: &std::path::Path, r: &DetectReport) -> String {
    let mut text = format!(
        "found {} peaks in {label} ({} channels × {:.3} s): {:.2} per channel per second; \
         wrote {}\n\
         threshold {}× noise ({}; median noise {:.2} µV), radius {}, sweep {} ms ({} \
         samples); fit {:.3} s, detect {:.3} s, {:.1}× real time on {}\n",
        r.peaks,
        r.channels,
        r.duration_s,
        r.rate_per_channel_hz,
        output.display(),
        r.detect.threshold,
        r.detect.sign,
        r.median_noise_uv,
        if r.by_channel {
            "none (no probe geometry: each channel alone)".to_string()
        } else {
            format!("{} µm", r.detect.radius_um)
        },
        r.detect.exclude_sweep_ms,
        r.sweep_samples,
        r.fit_s,
        r.detect_s,
        r.realtime_factor,
        r.devices.join(", "),
    );
    if let Some(t) = &r.truth {
        let ratio = |v: Option<f64>| v.map_or("none".to_string(), |v| format!("{v:.3}"));
        text.push_str(&format!(
            "ground truth: found {} of {} planted spikes (recall {}), {} of {} peaks on no \
             planted spike (precision {}), within ±{} ms ({} samples) of a trough\n",
            t.found,
            t.planted,
            ratio(t.recall),
            t.false_positives,
            t.peaks,
            ratio(t.precision),
            t.tolerance_ms,
            t.tolerance_samples,
        ));
    }
    text
}
