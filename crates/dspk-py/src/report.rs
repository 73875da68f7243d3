//! Reports a person opens in a browser, from Python: `Recording.report` (the program's
//! `dspk report`), `ScanResult.report` (`dspk scan --report`) and `dspk.preprocess(...,
//! report=)` (`dspk preprocess --report`). dspk-report makes and draws them; this module turns
//! keyword arguments into its request.

use std::path::Path;

use pyo3::prelude::*;
use pyo3::types::PyString;

use dspk_io::OpenedRecording;
use dspk_report::{ColourBy, Report, WindowRequest};
use dspk_stream::{DecodeRoute, ScanReport};
use dspk_types::{DspResult, RecordingInfo, TimeSpec};

use crate::args;
use crate::device::{pass_device, subject_of, target_of};
use crate::errors::{OrRaise, invalid};
use crate::preprocess::pipeline_of;
use crate::progress::PySink;
use crate::recording::Recording;
use crate::results::json_loads;

/// The windows `at` asks for (a sequence of times: seconds as `int`, `float` or `Fraction`,
/// or the program's notation as `str`: `"12.5"`, `"1:02:03.5"`, `"375000smp"`), checked
/// against `info`.
pub(crate) fn request_of(
    at: Option<&Bound<'_, PyAny>>,
    info: &RecordingInfo,
) -> PyResult<WindowRequest> {
    let mut starts = Vec::new();
    if let Some(at) = at.filter(|a| !a.is_none()) {
        if at.is_instance_of::<PyString>() {
            return Err(invalid(
                "at must be a sequence of times (e.g. [12.5, \"1:00\"]), not one str",
            ));
        }
        for item in at.try_iter().map_err(|_| {
            invalid(format!(
                "at must be a sequence of times, not {}",
                args::type_name(at)
            ))
        })? {
            let item = item?;
            let sample = if let Ok(text) = item.extract::<String>() {
                TimeSpec::parse(&text)
                    .and_then(|t| t.to_sample_index(info.sample_rate))
                    .map_err(|e| invalid(format!("at {text:?}: {e}")))?
            } else {
                args::seconds(&item, "at")?
                    .to_sample_index(info.sample_rate)
                    .map_err(|e| invalid(format!("at: {e}")))?
            };
            starts.push(sample);
        }
    }
    let request = WindowRequest {
        at: starts,
        ..WindowRequest::default()
    };
    dspk_report::window_starts(info, &request).map_err(|e| invalid(format!("at: {e}")))?;
    Ok(request)
}

/// Refuses a report path that would overwrite one of `recording`'s files or is a folder.
pub(crate) fn check_path(recording: &OpenedRecording, out: &Path) -> PyResult<()> {
    dspk_io::check_output(&recording.files().or_raise()?, "out", out).or_raise()?;
    if out.is_dir() {
        return Err(invalid(format!(
            "out {}: is a directory: the report is one HTML file",
            out.display()
        )));
    }
    Ok(())
}

/// What `colour_by` names (`class`, `std`, `mad`, `mean`).
pub(crate) fn colour_of(colour_by: &str) -> PyResult<ColourBy> {
    ColourBy::parse(colour_by).map_err(|e| invalid(format!("colour_by: {e}")))
}

/// Writes `report` to `out`; returns `{"output", "bytes", "render_s", "report"}` (the report's
/// data, as `dspk report --json` prints it).
pub(crate) fn written<'py>(
    py: Python<'py>,
    report: &Report,
    out: &Path,
) -> PyResult<Bound<'py, PyAny>> {
    let file = py
        .detach(|| dspk_report::write_report(report, out))
        .or_raise()?;
    let value = serde_json::json!({
        "output": file.path,
        "bytes": file.bytes,
        "render_s": file.render_s,
        "report": report,
    });
    json_loads(py, &value.to_string())
}

/// `Recording.report`: scans `recording`, fits `pipeline` where it must be fitted, reads the
/// windows `at` asks for raw and after each stage, and writes the page to `out`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn recording_report<'py>(
    py: Python<'py>,
    recording: &Recording,
    out: &Path,
    pipeline: Option<&str>,
    at: Option<&Bound<'_, PyAny>>,
    runtime: Option<&str>,
    device: Option<usize>,
    progress: Option<Py<PyAny>>,
    colour_by: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let colour_by = colour_of(colour_by)?;
    let target = target_of(runtime)?;
    let spec = pipeline.map(pipeline_of).transpose()?;
    let signals = dspk_types::signal_source(recording.source.clone()).or_raise()?;
    if let Some(spec) = &spec {
        spec.check(signals.info())
            .map_err(|e| invalid(format!("pipeline: {e}")))?;
    }
    let request = request_of(at, signals.info())?;
    check_path(recording, out)?;
    let sink = PySink::new(progress.filter(|p| !p.is_none(py)));
    let subject = subject_of(recording);
    let opened: &OpenedRecording = recording;
    let outcome = py.detach(|| -> DspResult<_> {
        let devices = [pass_device(target, device)?];
        dspk_report::report_recording(
            &devices,
            opened,
            subject,
            target,
            spec.as_ref(),
            &request,
            DecodeRoute::Staging,
            &sink,
        )
    });
    sink.finish()?;
    let (_, mut report) = outcome.or_raise()?;
    report.colour_by = colour_by;
    written(py, &report, out)
}

/// `ScanResult.report`: the page of `scan` (a scan of `recording`), its windows read on the
/// device `runtime` and `device` name.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scan_report<'py>(
    py: Python<'py>,
    recording: &OpenedRecording,
    scan: &ScanReport,
    out: &Path,
    at: Option<&Bound<'_, PyAny>>,
    runtime: Option<&str>,
    device: Option<usize>,
    colour_by: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let colour_by = colour_of(colour_by)?;
    let target = target_of(runtime)?;
    let request = request_of(at, recording.info())?;
    check_path(recording, out)?;
    let mut report = py
        .detach(|| -> DspResult<_> {
            let devices = [pass_device(target, device)?];
            dspk_report::scan_report(&devices, recording, scan, &request, DecodeRoute::Staging)
        })
        .or_raise()?;
    report.colour_by = colour_by;
    written(py, &report, out)
}
