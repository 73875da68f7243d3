//! `dspk.preprocess`: a recording through a pipeline (a preset's name, a spec file, or spec
//! text) on the device, written as a raw binary + sidecar with the probe and the provenance —
//! `dspk_stream::preprocess` with the GIL released, as `dspk preprocess` runs it.

use std::path::PathBuf;

use pyo3::prelude::*;

use dspk_device::describe;
use dspk_io::{BinarySink, output_format};
use dspk_stream::{Fits, InputFile, PassDevice, PreprocessOptions, preprocess_plan};
use dspk_types::{DspResult, OutputType, PipelineSpec, signal_source};

use crate::args;
use crate::device::{client_of, route_of, target_of};
use crate::errors::{OrRaise, from_dsp};
use crate::progress::PySink;
use crate::recording::{Recording, order_from};

/// The pipeline `pipeline` names: a preset's name or a spec file's path, else spec text (JSON
/// when it starts with `{`, else TOML).
pub(crate) fn pipeline_of(pipeline: &str) -> PyResult<PipelineSpec> {
    let text = pipeline.trim_start();
    let spec = if text.starts_with('{') {
        PipelineSpec::from_json(text)
    } else if text.contains('\n') || text.contains('=') {
        PipelineSpec::from_toml(text)
    } else {
        PipelineSpec::choose(pipeline)
    };
    spec.map_err(|e| from_dsp(e.into()))
}

/// Preprocesses `recording` (its signal channels: a sync or digital channel is left out) with
/// `pipeline` into `out` and its sidecar; returns the run's report as JSON text (with
/// `dry_run`, the plan only, and nothing is read or written).
#[pyfunction]
#[pyo3(signature = (recording, out, *, pipeline="kilosort4", format=None, gain=None, fits=None,
                    order="time-major", runtime=None, progress=None, window_samples=None,
                    decode=None, device=None, dry_run=false, report=None, at=None,
                    colour_by="class"))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn preprocess(
    py: Python<'_>,
    recording: &Recording,
    out: Option<PathBuf>,
    pipeline: &str,
    format: Option<&str>,
    gain: Option<f64>,
    fits: Option<PathBuf>,
    order: &str,
    runtime: Option<&str>,
    progress: Option<Py<PyAny>>,
    window_samples: Option<&Bound<'_, PyAny>>,
    decode: Option<&str>,
    device: Option<usize>,
    dry_run: bool,
    report: Option<PathBuf>,
    at: Option<&Bound<'_, PyAny>>,
    colour_by: &str,
) -> PyResult<String> {
    let order = order_from(order)?;
    let target = target_of(runtime)?;
    let route = route_of(decode)?;
    let format = format
        .map(OutputType::parse)
        .transpose()
        .map_err(|e| from_dsp(e.into()))?;
    let spec = pipeline_of(pipeline)?
        .with_output(format, gain)
        .map_err(|e| from_dsp(e.into()))?;
    let source = signal_source(recording.source.clone()).map_err(from_dsp)?;
    let info = source.info().clone();
    spec.check(&info).map_err(|e| from_dsp(e.into()))?;
    let given = match &fits {
        Some(path) => dspk_stream::fits_of_sidecar(path).or_raise()?,
        None => Fits::default(),
    };
    let files = recording.input_files()?;
    let page = match &report {
        Some(path) => {
            if dry_run {
                return Err(crate::errors::invalid(
                    "report draws the windows of a preprocessing that writes its output: not \
                     with dry_run",
                ));
            }
            crate::report::check_path(recording, path)?;
            if out.as_deref() == Some(path.as_path()) {
                return Err(crate::errors::invalid(
                    "report and out name the same file: the report is a page of its own",
                ));
            }
            Some((
                path.clone(),
                crate::report::request_of(at, &info)?,
                crate::report::colour_of(colour_by)?,
            ))
        }
        None => None,
    };
    if let Some(out) = &out {
        let mut guarded = files.clone();
        guarded.extend(spec.files_read(pipeline, fits.as_deref()));
        dspk_io::check_output(&guarded, "out", out).or_raise()?;
    }
    let inputs = files
        .iter()
        .map(|(path, role)| InputFile::of(path, role))
        .collect::<DspResult<Vec<_>>>()
        .or_raise()?;
    let options = PreprocessOptions {
        window_samples: args::opt_index(window_samples, "window_samples")?,
        route,
        inputs,
    };
    let open = || -> DspResult<Vec<PassDevice>> {
        let client = client_of(target, device)?;
        let label = describe(&client).adapter_name;
        Ok(vec![PassDevice { client, label }])
    };
    if dry_run {
        let plan = py
            .detach(|| preprocess_plan(&open()?, &info, &spec, &given, &options))
            .or_raise()?;
        return Ok(serde_json::to_string(&plan).expect("a plan is plain data"));
    }
    let out = out.ok_or_else(|| {
        crate::errors::invalid("out: give the output file (only a dry run needs none)")
    })?;
    let progress = PySink::new(progress.filter(|p| !p.is_none(py)));
    let mut sink =
        BinarySink::new(&out, order, recording.label()).format(output_format(&spec.output()));
    let opened: &dspk_io::OpenedRecording = recording;
    let outcome = py.detach(|| -> DspResult<_> {
        let devices = open()?;
        let done = dspk_stream::preprocess(
            &devices,
            source.clone(),
            &spec,
            given,
            &options,
            &progress,
            &mut sink,
        )?;
        let page = match &page {
            Some((path, request, colour_by)) => {
                let mut report = dspk_report::preprocess_report(
                    &devices,
                    opened,
                    &source,
                    &done,
                    request,
                    options.route,
                )?;
                report.colour_by = *colour_by;
                Some(dspk_report::write_report(&report, path)?)
            }
            None => None,
        };
        Ok((done, page))
    });
    progress.finish()?;
    let (done, page) = outcome.or_raise()?;
    let mut value = serde_json::to_value(&done.report).expect("a report is plain data");
    if let (Some(file), Some(map)) = (page, value.as_object_mut()) {
        map.insert(
            "report_file".to_string(),
            serde_json::to_value(file).expect("a report file is plain data"),
        );
    }
    Ok(value.to_string())
}
