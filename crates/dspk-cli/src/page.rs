//! Reports a person opens in a browser: `dspk report`, and the `--report`/`--at` flags of
//! `dspk scan` and `dspk preprocess`. dspk-report makes and draws them; this module turns the
//! flags into its request, checks the output's path and prints where the page went.

use std::path::{Path, PathBuf};
use std::time::Instant;

use dspk_report::{ColourBy, ReportFile, WindowRequest};
use dspk_stream::{DecodeRoute, PassDevice};
use dspk_types::{PipelineSpec, RecordingInfo, TimeSpec};
use serde_json::json;

use crate::Ctx;
use crate::error::{CliError, CliResult, Context as _};
use crate::input::Input;
use crate::preprocess::signal_source;
use crate::progress::Progress;

/// `--report FILE` and `--at T…` after parsing.
#[derive(Debug, Clone, Default)]
pub(crate) struct PageOptions {
    /// Where the page goes (`None`: no report).
    pub(crate) path: Option<PathBuf>,
    /// Where its windows start, as written.
    pub(crate) at: Vec<TimeSpec>,
    /// What the probe's contacts are coloured by.
    pub(crate) colour_by: ColourBy,
}

impl PageOptions {
    /// The flags as written: `--at` times parsed.
    pub(crate) fn parse(path: Option<PathBuf>, at: &[String], colour_by: &str) -> CliResult<Self> {
        let at = at
            .iter()
            .map(|t| TimeSpec::parse(t).context(format!("--at {t}")))
            .collect::<CliResult<Vec<_>>>()?;
        let colour_by = ColourBy::parse(colour_by).context("--colour-by")?;
        Ok(Self {
            path,
            at,
            colour_by,
        })
    }

    /// Checks the page's path against `input`'s files (never written over) and a folder,
    /// under the name `flag`.
    pub(crate) fn check(&self, input: &Input, flag: &str) -> CliResult<()> {
        if let Some(path) = &self.path {
            dspk_io::check_output(&input.files()?, flag, path)?;
            if path.is_dir() {
                return Err(CliError::new(format!(
                    "{flag} {}: is a directory: the report is one HTML file",
                    path.display()
                )));
            }
        }
        Ok(())
    }

    /// The library's request: the `--at` times as samples of `info`.
    pub(crate) fn request(&self, info: &RecordingInfo) -> CliResult<WindowRequest> {
        let at = self
            .at
            .iter()
            .map(|t| {
                t.to_sample_index(info.sample_rate)
                    .context(format!("--at {t}"))
            })
            .collect::<CliResult<Vec<u64>>>()?;
        let request = WindowRequest {
            at,
            ..WindowRequest::default()
        };
        dspk_report::window_starts(info, &request).context("--at")?;
        Ok(request)
    }
}

/// Writes `report` (coloured as `page` says) to `path` and prints where it went on stderr
/// (the command's own output stays on stdout): `report: scan.html (1.8 MB; windows read in
/// 0.41 s, drawn and written in 0.22 s)`, `read` saying what came before the drawing.
pub(crate) fn write(
    report: &mut dspk_report::Report,
    page: &PageOptions,
    path: &Path,
    read: &str,
) -> CliResult<ReportFile> {
    report.colour_by = page.colour_by;
    let file = dspk_report::write_report(report, path)?;
    crate::output::stderr_line(
        "report",
        &format!(
            "{} ({:.2} MB; {read}, drawn and written in {:.2} s)",
            file.path,
            file.bytes as f64 / 1e6,
            file.render_s
        ),
    );
    Ok(file)
}

/// `dspk report`: a scan of `input`, the pipeline `pipeline` (a preset, a file or `none`)
/// fitted where it must be, and the page of both at `output`.
pub(crate) fn run(
    ctx: &Ctx,
    input: Input,
    output: &Path,
    pipeline: &str,
    at: &[String],
    colour_by: &str,
) -> CliResult<String> {
    ctx.target()?;
    let spec = if pipeline == "none" {
        None
    } else {
        Some(PipelineSpec::choose(pipeline).context("--pipeline")?)
    };
    let page = PageOptions::parse(Some(output.to_path_buf()), at, colour_by)?;
    let signals = signal_source(&input)?;
    if let Some(spec) = &spec {
        spec.check(signals.info()).context("--pipeline")?;
    }
    let mut guarded = input.files()?;
    if let Some(spec) = &spec {
        guarded.extend(spec.files_read(pipeline, None));
    }
    dspk_io::check_output(&guarded, "-o", output)?;
    page.check(&input, "-o")?;
    let request = page.request(signals.info())?;
    input.report_warnings();
    let (target, devices, _prepared) = ctx.pass_devices()?;
    let info = input.info();
    let progress = Progress::bytes(
        "report",
        info.samples.saturating_mul(info.frame_bytes() as u64),
    );
    let start = Instant::now();
    let (_, mut report) = dspk_report::report_recording(
        &devices,
        &input,
        crate::scan::subject(&input, None),
        target,
        spec.as_ref(),
        &request,
        DecodeRoute::from_env()?,
        &progress,
    )?;
    progress.finish();
    let steps = report
        .run
        .steps_s
        .iter()
        .map(|(step, s)| format!("{step} {s:.2} s"))
        .collect::<Vec<_>>()
        .join(", ");
    let file = write(
        &mut report,
        &page,
        output,
        &format!(
            "scan, fit and windows in {:.2} s: {}",
            start.elapsed().as_secs_f64(),
            steps
        ),
    )?;
    Ok(text_or_json(ctx, &report, &file))
}

/// The scan's page: `scan` of `input`, its windows read on `devices`.
pub(crate) fn of_scan(
    input: &Input,
    devices: &[PassDevice],
    scan: &dspk_stream::ScanReport,
    page: &PageOptions,
) -> CliResult<Option<ReportFile>> {
    let Some(path) = &page.path else {
        return Ok(None);
    };
    let start = Instant::now();
    let request = page.request(input.info())?;
    let mut report =
        dspk_report::scan_report(devices, input, scan, &request, DecodeRoute::from_env()?)?;
    let read = format!("windows read in {:.2} s", start.elapsed().as_secs_f64());
    Ok(Some(write(&mut report, page, path, &read)?))
}

/// What `dspk report` prints: where the page went, with the report's data under `--json`.
fn text_or_json(ctx: &Ctx, report: &dspk_report::Report, file: &ReportFile) -> String {
    if ctx.json {
        let value = json!({
            "output": file.path,
            "bytes": file.bytes,
            "render_s": file.render_s,
            "report": report,
        });
        return serde_json::to_string_pretty(&value).expect("json values serialise") + "\n";
    }
    format!(
        "report of {}: {} ({:.2} MB)\n{}\n{} windows, {} panels each\n",
        report.run.recording,
        file.path,
        file.bytes as f64 / 1e6,
        report.answer(),
        report.windows.len(),
        report.windows.first().map_or(0, |w| w.panels.len()),
    )
}
