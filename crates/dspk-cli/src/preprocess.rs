//! `dspk preprocess`: a recording through a pipeline (a preset or a spec file) on the device,
//! written as a raw binary + sidecar with the probe and the provenance; `--dry-run` prints the
//! plan, `--print-pipeline` a pipeline as TOML.

use std::path::PathBuf;
use std::sync::Arc;

use dspk_device::describe;
use dspk_io::{BinarySink, output_format};
use dspk_stream::{
    DecodeRoute, Fits, InputFile, OnDevice, PreprocessPlan, PreprocessReport, preprocess,
    preprocess_on_device, preprocess_plan,
};
use dspk_types::{MemoryOrder, OutputType, PipelineSpec, RecordingSource};
use serde_json::json;

use crate::Ctx;
use crate::error::{CliResult, Context as _};
use crate::input::{Input, window_option};
use crate::progress::Progress;

/// The options of `dspk preprocess` after parsing.
#[derive(Debug, Clone)]
pub(crate) struct PreprocessOptions {
    /// The pipeline as chosen (`--pipeline`).
    pub(crate) pipeline: String,
    /// `--format`.
    pub(crate) format: Option<OutputType>,
    /// `--gain`.
    pub(crate) gain: Option<f64>,
    /// `--fits`: a sidecar whose provenance holds the fitted parameters to apply.
    pub(crate) fits: Option<PathBuf>,
    /// `-o` (absent only with `--dry-run`).
    pub(crate) output: Option<PathBuf>,
    /// The output layout.
    pub(crate) order: MemoryOrder,
    /// Samples per window.
    pub(crate) window_samples: Option<u64>,
    /// `--dry-run`.
    pub(crate) dry_run: bool,
    /// `--on-device`: keep the windows on the device, write nothing.
    pub(crate) on_device: bool,
    /// `--report` and `--at`: the page a person opens.
    pub(crate) page: crate::page::PageOptions,
}

/// `dspk preprocess --print-pipeline CHOICE`: the pipeline as TOML (JSON with `--json`).
pub(crate) fn print_pipeline(ctx: &Ctx, choice: &str) -> CliResult<String> {
    let spec = PipelineSpec::choose(choice).context("--print-pipeline")?;
    Ok(if ctx.json {
        spec.to_json() + "\n"
    } else {
        spec.to_toml()
    })
}

/// Runs `dspk preprocess` (or, with `--dry-run`, plans it).
pub(crate) fn run(ctx: &Ctx, input: Input, opts: &PreprocessOptions) -> CliResult<String> {
    ctx.target()?;
    let spec = PipelineSpec::choose(&opts.pipeline)
        .context("--pipeline")?
        .with_output(opts.format, opts.gain)
        .context("--format/--gain")?;
    let source = signal_source(&input)?;
    let info = source.info().clone();
    spec.check(&info).context("--pipeline")?;
    let fits = match &opts.fits {
        Some(path) => dspk_stream::fits_of_sidecar(path).context("--fits")?,
        None => Fits::default(),
    };
    let mut files = input.files()?;
    if opts.page.path.is_some() {
        if opts.dry_run || opts.on_device {
            return Err(crate::error::CliError::new(
                "--report draws the windows of a preprocessing that writes its output: not with \
                 --dry-run or --on-device",
            ));
        }
        opts.page.check(&input, "--report")?;
        opts.page.request(&info)?;
        if opts.page.path == opts.output {
            return Err(crate::error::CliError::new(
                "--report and -o name the same file: the report is a page of its own",
            ));
        }
    }
    if let Some(output) = &opts.output {
        let mut guarded = files.clone();
        guarded.extend(spec.files_read(&opts.pipeline, opts.fits.as_deref()));
        dspk_io::check_output(&guarded, "-o", output)?;
    }
    input.report_warnings();
    let options = PreprocessOptions::library(opts, &mut files)?;
    let (target, devices, prepared) = ctx.pass_devices()?;
    if opts.dry_run {
        drop(prepared);
        let plan = preprocess_plan(&devices, &info, &spec, &fits, &options)?;
        return Ok(plan_text(ctx, &input.label(), &plan));
    }
    if opts.on_device {
        let info = input.info();
        let stored = info.samples.saturating_mul(info.frame_bytes() as u64);
        let progress = Progress::bytes("preprocess", stored);
        let kept = preprocess_on_device(&devices, source, &spec, fits, &options, &progress)?;
        progress.finish();
        drop(prepared);
        return Ok(on_device_text(ctx, &input.label(), &kept));
    }
    let output = opts.output.clone().unwrap_or_default();
    let device = describe(&devices[0].client);
    let out = spec.output();
    let mut sink = BinarySink::new(&output, opts.order, input.label()).format(output_format(&out));
    let stored = input
        .info()
        .samples
        .saturating_mul(input.info().frame_bytes() as u64);
    let progress = Progress::bytes("preprocess", stored);
    let done = preprocess(
        &devices,
        source.clone(),
        &spec,
        fits,
        &options,
        &progress,
        &mut sink,
    )?;
    progress.finish();
    if let Some(path) = &opts.page.path {
        let start = std::time::Instant::now();
        let request = opts.page.request(&info)?;
        let mut report = dspk_report::preprocess_report(
            &devices,
            &input,
            &source,
            &done,
            &request,
            options.route,
        )?;
        let read = format!("windows read in {:.2} s", start.elapsed().as_secs_f64());
        crate::page::write(&mut report, &opts.page, path, &read)?;
    }
    drop(prepared);
    let sidecar = dspk_io::sidecar_path(&output);
    if ctx.json {
        let value = json!({
            "recording": input.label(),
            "warnings": input.warnings,
            "output": output.display().to_string(),
            "sidecar": sidecar.display().to_string(),
            "runtime": target,
            "device": device.adapter_name,
            "order": opts.order.name(),
            "channels_left_out": input.info().channel_count() - info.channel_count(),
            "report": done.report,
            "finish_s": done.finish_s,
        });
        return Ok(serde_json::to_string_pretty(&value).expect("json values serialise") + "\n");
    }
    let mut text = report_text(&input.label(), &output, &sidecar, &done.report);
    text += &format!(
        "  then {:.3} s to make the output durable (flushed to the disk, moved into place)\n",
        done.finish_s
    );
    let left_out = input.info().channel_count() - info.channel_count();
    if left_out > 0 {
        text += &format!(
            "left out {left_out} channel(s) that are not signals (a sync word, digital lines)\n"
        );
    }
    Ok(text)
}

/// What `--on-device` prints: the pass's figures (JSON with `--json`).
fn on_device_text(ctx: &Ctx, label: &str, kept: &OnDevice) -> String {
    let clipped: u64 = kept.pass.clipped.iter().flatten().sum();
    if ctx.json {
        let value = json!({
            "recording": label,
            "on_device": true,
            "fit_s": kept.fit_s,
            "apply_s": kept.apply_s,
            "pass_wall_s": kept.pass.report.wall.as_secs_f64(),
            "pass_setup_s": kept.pass.report.setup.as_secs_f64(),
            "realtime_factor": kept.realtime_factor,
            "windows": kept.pass.report.windows,
            "read_bytes": kept.pass.report.stored_bytes,
            "clipped": clipped,
            "plan": kept.plan,
        });
        return serde_json::to_string_pretty(&value).expect("json values serialise") + "\n";
    }
    format!(
        "{label}: preprocessed on the device and kept there: fit {:.2} s, apply {:.2} s \
         ({:.1}x real time), {} windows, {} bytes read, {clipped} samples clipped\n",
        kept.fit_s,
        kept.apply_s,
        kept.realtime_factor,
        kept.pass.report.windows,
        kept.pass.report.stored_bytes
    )
}

/// The recording as preprocessing reads it: its signal channels (a sync word or digital lines
/// are neither preprocessed nor written), as `dspk preprocess` and a cluster plan's jobs read
/// it.
pub(crate) fn signal_source(input: &Input) -> CliResult<Arc<dyn RecordingSource>> {
    Ok(dspk_types::signal_source(input.source.clone())?)
}

impl PreprocessOptions {
    /// The library's options: the window, the decode route and the input files' identities.
    fn library(
        opts: &PreprocessOptions,
        files: &mut Vec<(PathBuf, String)>,
    ) -> CliResult<dspk_stream::PreprocessOptions> {
        let inputs = files
            .drain(..)
            .map(|(path, role)| InputFile::of(&path, &role))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(dspk_stream::PreprocessOptions {
            window_samples: window_option(opts.window_samples)?,
            route: DecodeRoute::from_env()?,
            inputs,
        })
    }
}

/// The plan, as text or JSON.
fn plan_text(ctx: &Ctx, label: &str, plan: &PreprocessPlan) -> String {
    if ctx.json {
        let value = json!({ "recording": label, "plan": plan });
        return serde_json::to_string_pretty(&value).expect("json values serialise") + "\n";
    }
    let mut text = format!(
        "plan for {label}: {} channels × {} samples on {}\n",
        plan.channels,
        plan.samples,
        plan.devices.join(", ")
    );
    for s in &plan.stages {
        let fit = if s.fit_windows > 0 {
            format!(
                ", fitted on {} windows ({} samples)",
                s.fit_windows, s.fit_samples
            )
        } else if s.fitted {
            ", parameters given".to_string()
        } else {
            String::new()
        };
        text += &format!(
            "  stage {} {:<18} context {} before, {} after{fit}\n",
            s.index, s.kind, s.halo_before, s.halo_after
        );
    }
    text += &format!(
        "  windows: {} owning {} samples each, reading up to {} with {} + {} of context\n\
         \x20 device memory per window: {:.1} MB; read {:.1} MB; write {:.1} MB of {} (gain {})\n",
        plan.windows,
        plan.window_samples,
        plan.read_samples,
        plan.halo_before,
        plan.halo_after,
        plan.device_bytes_per_window as f64 / 1e6,
        plan.read_bytes as f64 / 1e6,
        plan.output_bytes as f64 / 1e6,
        plan.output,
        plan.gain,
    );
    text
}

/// What a run did, as text.
fn report_text(
    label: &str,
    output: &std::path::Path,
    sidecar: &std::path::Path,
    report: &PreprocessReport,
) -> String {
    let plan = &report.plan;
    let mut text = format!(
        "wrote {} ({} channels × {} samples, {} ×{}, {:.2} MB) and {}\n\
         from {label} on {}: fit {:.3} s, apply {:.3} s, {:.1}× real time ({:.1} MB read)\n\
         \x20 of the apply: writing {:.3} s, waiting for the devices {:.3} s\n",
        output.display(),
        plan.channels,
        plan.samples,
        plan.output,
        plan.gain,
        plan.output_bytes as f64 / 1e6,
        sidecar.display(),
        plan.devices.join(", "),
        report.fit_s,
        report.apply_s,
        report.realtime_factor,
        report.read_bytes as f64 / 1e6,
        report.write_s,
        report.wait_s,
    );
    for t in &report.stage_times {
        text += &format!(
            "  stage {} {:<18} {:.3} ms a window ({:.0}× real time)\n",
            t.index, t.kind, t.window_ms, t.realtime
        );
    }
    for f in report.fitted.iter().filter(|f| f.kind == "interpolate_bad") {
        let list = if f.channels.is_empty() {
            "none".to_string()
        } else {
            let names: Vec<String> = f.channels.iter().map(usize::to_string).collect();
            names.join(", ")
        };
        text += &format!(
            "  stage {} interpolate_bad: bad channels ({}): {list}\n",
            f.index, f.source
        );
    }
    if let Some(c) = &report.clipped {
        text += &format!(
            "clipped to {}: {} samples on {} channels\n",
            plan.output, c.total, c.channels
        );
    }
    text
}
